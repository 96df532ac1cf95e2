// One long-lived JVM that runs Kafka's command-line tools for the tests, the oracles whose
// output ours must match (kafka-broker.sh toolserver starts it; tests/common/broker.rs calls it).
//
// A test run starts hundreds of these tools (TopicCommand, ConsumerGroupCommand, DumpLogSegments,
// ...), and each fresh JVM costs about 0.6 s of CPU on two cores before the tool does anything.
// Here each run is a call of the tool's main method in a warm JVM, with what a fresh JVM would
// give it: its own stdout and stderr (captured), an empty stdin, and its exit code, which Kafka's
// tools set through org.apache.kafka.common.utils.Exit. Only short, non-interactive tools come
// here; consoles and perf tests, which read stdin, run for long or are signalled, keep their own
// JVM.
//
// Protocol, on 127.0.0.1 (the port is the first line of stdout), one call per connection:
//   request:  int count, then count strings (int length + UTF-8 bytes): the main class, its args
//   response: int exit code, then stdout and stderr (int length + bytes each)
// The server exits when its stdin reaches end of file: when the test process that started it,
// and holds the other end of the pipe, is gone.

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.utils.Exit;

public final class ToolServer {
    /** The most words (class and arguments) a request may have, and bytes a word may have. */
    private static final int MAX_WORDS_OR_BYTES = 1 << 20;

    /** Thrown in place of the JVM's exit, to unwind the tool's main method. */
    private static final class ToolExit extends Error {
        final int code;

        ToolExit(int code) {
            super(null, null, false, false);
            this.code = code;
        }
    }

    /** One tool run: where its output goes, and its exit code once it has exited. */
    private static final class Call {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        Integer exitCode;
    }

    /**
     * The run each thread works for: inherited, so that threads a tool starts (an admin
     * client's network thread, say) write to their tool's stderr.
     */
    private static final InheritableThreadLocal<Call> CURRENT = new InheritableThreadLocal<>();

    /**
     * System.out or System.err for every thread: the current run's buffer, or the server's own
     * stream for threads of no run. A run that has exited writes nothing more, as a JVM that has
     * exited prints nothing more (code after the exit call still runs here).
     */
    private static final class Routed extends OutputStream {
        private final boolean isErr;
        private final PrintStream own;

        Routed(boolean isErr, PrintStream own) {
            this.isErr = isErr;
            this.own = own;
        }

        private OutputStream target() {
            Call call = CURRENT.get();
            if (call == null) {
                return own;
            }
            synchronized (call) {
                if (call.exitCode != null) {
                    return OutputStream.nullOutputStream();
                }
            }
            return isErr ? call.err : call.out;
        }

        @Override
        public void write(int b) {
            try {
                target().write(b);
            } catch (IOException e) {
                // The buffers cannot fail; the server's own stream reports its errors itself.
            }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            try {
                target().write(b, off, len);
            } catch (IOException e) {
                // As above.
            }
        }

        @Override
        public void flush() {
            if (CURRENT.get() == null) {
                own.flush();
            }
        }
    }

    public static void main(String[] args) throws IOException {
        InputStream stdin = System.in;
        PrintStream stdout = System.out;
        PrintStream stderr = System.err;
        System.setIn(new ByteArrayInputStream(new byte[0]));
        System.setOut(new PrintStream(new Routed(false, stdout), true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(new Routed(true, stderr), true, StandardCharsets.UTF_8));
        Exit.setExitProcedure((code, message) -> exit(code));
        Exit.setHaltProcedure((code, message) -> exit(code));

        ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        stdout.println(server.getLocalPort());
        stdout.flush();

        Thread watchdog = new Thread(() -> {
            try {
                while (stdin.read() >= 0) {
                    // Nothing is sent on stdin; it only ends.
                }
            } catch (IOException e) {
                // A broken pipe is an end too.
            }
            Runtime.getRuntime().halt(0);
        }, "stdin-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();

        while (true) {
            Socket socket;
            try {
                socket = server.accept();
            } catch (IOException e) {
                // Out of file descriptors, say: the calls under way may free some. Ending here
                // would leave every later call with a refused connection and no cause.
                stderr.println("ToolServer: accept failed: " + e);
                sleepQuietly(100);
                continue;
            }
            Thread worker = new Thread(() -> serve(socket), "tool-call");
            worker.setDaemon(true);
            worker.start();
        }
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Marks the current run as exited with `code` and unwinds it. */
    private static void exit(int code) {
        Call call = CURRENT.get();
        if (call != null) {
            synchronized (call) {
                if (call.exitCode == null) {
                    call.exitCode = code;
                }
            }
        }
        throw new ToolExit(code);
    }

    private static void serve(Socket socket) {
        try (socket) {
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int count = in.readInt();
            if (count < 1 || count > MAX_WORDS_OR_BYTES) {
                return;
            }
            String[] words = new String[count];
            for (int i = 0; i < count; i++) {
                int length = in.readInt();
                if (length < 0 || length > MAX_WORDS_OR_BYTES) {
                    return;
                }
                words[i] = new String(in.readNBytes(length), StandardCharsets.UTF_8);
            }
            String[] toolArgs = new String[count - 1];
            System.arraycopy(words, 1, toolArgs, 0, toolArgs.length);

            Call call = new Call();
            CURRENT.set(call);
            int code;
            try {
                code = run(call, words[0], toolArgs);
            } finally {
                CURRENT.remove();
            }

            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(code);
            byte[] stdout;
            byte[] stderr;
            synchronized (call) {
                stdout = call.out.toByteArray();
                stderr = call.err.toByteArray();
            }
            out.writeInt(stdout.length);
            out.write(stdout);
            out.writeInt(stderr.length);
            out.write(stderr);
            out.flush();
        } catch (IOException e) {
            // The test went away mid-call: nothing to answer.
        }
    }

    /** Runs `cls`'s main method as a JVM would: its exit code. */
    private static int run(Call call, String cls, String[] args) {
        Method main;
        try {
            main = Class.forName(cls).getMethod("main", String[].class);
        } catch (ReflectiveOperationException | LinkageError e) {
            // A missing class, or one whose static initialiser failed: the JVM's words.
            System.err.println("Error: Could not find or load main class " + cls);
            System.err.println("Caused by: " + e);
            return exited(call, 1);
        }
        int code;
        try {
            main.invoke(null, (Object) args);
            code = 0;
        } catch (IllegalAccessException e) {
            System.err.println("Error: Main method not found in class " + cls);
            code = 1;
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof ToolExit) {
                code = ((ToolExit) cause).code;
            } else {
                // What the JVM's default handler prints for an exception out of main (its stack
                // trace has this server's frames below main's too).
                System.err.print("Exception in thread \"main\" ");
                cause.printStackTrace();
                code = 1;
            }
        }
        return exited(call, code);
    }

    /** Ends `call` with `code`, unless it has exited already: its exit code. */
    private static int exited(Call call, int code) {
        synchronized (call) {
            if (call.exitCode == null) {
                call.exitCode = code;
            }
            return call.exitCode;
        }
    }
}
