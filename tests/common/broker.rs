//! A real Apache Kafka 4.3.1 broker for the tests, started by `tests/broker/kafka-broker.sh` from
//! Maven Central jars: one per test process (the real-broker tests are one binary,
//! `tests/remote`), started by the first test that asks for it and shared by the others (each
//! test uses its own topic and group names). A test that kills its broker or needs other
//! settings starts an [`OwnBroker`].
//!
//! The broker runs under the script's `run` watchdog, whose stdin is a pipe from this process.
//! Nothing ever writes to it: when this process exits, however it exits (end of the test run,
//! a panic, SIGKILL), the kernel closes the pipe, the watchdog reads end of file and kills the
//! broker. So no broker outlives `cargo test`, and no destructor has to run (statics never drop).
//!
//! Without Java 17 and Maven, or if the broker cannot start, the real-broker tests print a loud
//! SKIPPED line and pass, unless `KAFKIT_REQUIRE_BROKER=1` (set by `.ci/run`), which makes them
//! fail with the reason.
//!
//! The `served` test binary (`tests/served/`) includes the `tests/remote/` modules whose features
//! `kafka-server-start` serves, and there the shared "broker" is our own server instead
//! ([`served`] says which): `kafkit::server::serve` in this process over a temporary log
//! directory (`common::server::Server`), which dies with the process; the same kind of watchdog
//! (a bash loop reading a pipe from this process) removes the directory at end of file. The
//! Java tools and kcat then run against our server.
//! What only a real Kafka broker has (its secured listeners, its own data directory, a broker of
//! a test's own) panics there: the tests that need it are in modules `tests/served/` leaves out.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use super::text;

/// The Java tools' main classes, run by [`java_tool`].
pub const TOPIC_COMMAND: &str = "org.apache.kafka.tools.TopicCommand";
pub const CONSOLE_PRODUCER: &str = "org.apache.kafka.tools.ConsoleProducer";
pub const CONSOLE_CONSUMER: &str = "org.apache.kafka.tools.consumer.ConsoleConsumer";
pub const GROUP_COMMAND: &str = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand";
pub const DUMP_LOG_SEGMENTS: &str = "org.apache.kafka.tools.DumpLogSegments";

/// The scripts' exit status when Java 17+, a JDK or Maven is missing.
const MISSING_PREREQUISITE: i32 = 3;

/// The shared broker, or why there is none.
static BROKER: OnceLock<Result<Watchdog, String>> = OnceLock::new();

/// Servers started by a script's watchdog mode (`kafka-broker.sh run`, `kafka-cluster.sh run`).
pub struct Watchdog {
    /// The bootstrap address (or list) the script printed on its first line.
    pub bootstrap: String,
    /// The run directory the script printed on its second line (listeners file, certificates,
    /// the nodes' directories).
    pub dir: PathBuf,
    /// Held, never written: closing it (at process exit) stops the servers.
    _stdin: Mutex<ChildStdin>,
    _child: Mutex<Child>,
    /// The `served` binary's server, in this process.
    _served: Option<Mutex<super::server::Server>>,
}

/// The watchdog script.
pub fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/broker/kafka-broker.sh")
}

/// Whether real-broker tests must fail rather than skip (`KAFKIT_REQUIRE_BROKER=1`, as in CI).
pub fn required() -> bool {
    std::env::var("KAFKIT_REQUIRE_BROKER").is_ok_and(|v| v == "1")
}

/// Whether this test binary's shared broker is our `kafka-server-start` (the `served` binary,
/// `tests/served/`) rather than a real Kafka broker (every other binary).
pub fn served() -> bool {
    env!("CARGO_CRATE_NAME") == "served"
}

/// The shared server's watchdog: waits for end of file on stdin (this process gone, however it
/// ended, and the server with it), then removes the server's directory with its data.
const SERVED_WATCHDOG: &str = r#"while read -r _; do :; done; rm -rf "$1""#;

/// Starts our server in this process on a free port over a new temporary log directory (topics
/// are created explicitly, as on the test broker) and waits until it serves. The Java tools run
/// against it, so their jars are resolved first: without Java and Maven the tests skip (or fail
/// under `KAFKIT_REQUIRE_BROKER=1`) as they do without a broker.
fn start_served() -> Result<Watchdog, String> {
    let libs = Command::new("bash")
        .arg(script())
        .arg("libs")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script().display()))?;
    if !libs.status.success() {
        return Err(format!(
            "the Java tools' jars are missing ({} libs exited with {:?}):\n{}",
            script().display(),
            libs.status.code(),
            text(&libs.stderr)
        ));
    }
    let dir = tempfile::Builder::new()
        .prefix("kafkit-served-")
        .tempdir()
        .map_err(|e| format!("no temporary directory: {e}"))?
        .keep();
    let mut child = Command::new("bash")
        .args(["-c", SERVED_WATCHDOG, "served-watchdog"])
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run bash for the server's watchdog: {e}"))?;
    let stdin = child.stdin.take().ok_or("no stdin pipe")?;
    // As the test broker: node 1, and topics created explicitly.
    let server = super::server::Server::start(
        &dir.join("data"),
        &["node.id=1", "auto.create.topics.enable=false"],
    );
    Ok(Watchdog {
        bootstrap: server.bootstrap.clone(),
        dir,
        _stdin: Mutex::new(stdin),
        _child: Mutex::new(child),
        _served: Some(Mutex::new(server)),
    })
}

/// Panics when the shared broker is our server: for what only a real Kafka broker has.
fn kafka_only(what: &str) {
    assert!(
        !served(),
        "{what} needs a real Kafka broker: this test belongs in a module tests/served/ leaves out"
    );
}

/// Runs `script run` and waits for its two lines; why not, when it printed none.
pub fn start_watchdog(script: &Path) -> Result<Watchdog, String> {
    let mut child = Command::new("bash")
        .arg(script)
        .arg("run")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let stdin = child.stdin.take().ok_or("no stdin pipe")?;
    let stdout = child.stdout.take().ok_or("no stdout pipe")?;
    let mut stderr = child.stderr.take().ok_or("no stderr pipe")?;
    // Drained on a thread so that a chatty script can never block on a full pipe.
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut line = String::new();
    let mut stdout = BufReader::new(stdout);
    let _ = stdout.read_line(&mut line);
    let bootstrap = line.trim().to_string();
    let mut dir = String::new();
    let _ = stdout.read_line(&mut dir);
    if bootstrap.is_empty() {
        let status = child.wait().map(|s| s.code());
        let errors = errors.join().unwrap_or_default();
        let why = match status {
            Ok(Some(MISSING_PREREQUISITE)) => "Java 17+ or Maven is missing",
            _ => "the broker did not start",
        };
        return Err(format!(
            "{why} ({} run exited with {status:?}):\n{errors}",
            script.display()
        ));
    }
    Ok(Watchdog {
        bootstrap,
        dir: PathBuf::from(dir.trim()),
        _stdin: Mutex::new(stdin),
        _child: Mutex::new(child),
        _served: None,
    })
}

/// The shared broker's bootstrap address (`127.0.0.1:port`), starting it on first use; `None`
/// when real-broker tests are skipped on this machine (after saying so loudly). Panics instead
/// of skipping when `KAFKIT_REQUIRE_BROKER=1`.
pub fn try_bootstrap() -> Option<String> {
    let broker = BROKER.get_or_init(|| {
        let started = if served() {
            start_served()
        } else {
            start_watchdog(&script())
        };
        if let Err(why) = &started
            && !required()
        {
            // Straight to the stderr handle: libtest captures `eprintln!` of passing tests.
            let _ = writeln!(
                std::io::stderr(),
                "\n=====\nSKIPPED: real-broker tests need Java 17 + Maven (set KAFKIT_REQUIRE_BROKER=1 to make this a failure): {why}\n====="
            );
        }
        started
    });
    match broker {
        Ok(b) => Some(b.bootstrap.clone()),
        Err(why) if required() => {
            panic!("KAFKIT_REQUIRE_BROKER=1 but no real Kafka broker could be started: {why}")
        }
        Err(_) => {
            let name = std::thread::current().name().unwrap_or("?").to_string();
            let _ = writeln!(std::io::stderr(), "SKIPPED (no Kafka broker): {name}");
            None
        }
    }
}

/// The shared broker's bootstrap address; for tests that already know it is available.
pub fn bootstrap() -> String {
    try_bootstrap().expect("a real Kafka broker (check try_bootstrap() first)")
}

/// The shared broker's data directory (`log.dirs` of its server.properties), where its
/// partitions' segment files are (in the `served` binary: our server's log directory, in the
/// same layout); `None` when real-broker tests are skipped.
pub fn try_log_dir() -> Option<PathBuf> {
    try_bootstrap()?;
    let Some(Ok(broker)) = BROKER.get() else {
        return None;
    };
    if served() {
        return Some(broker.dir.join("data"));
    }
    let config = broker.dir.join("server.properties");
    let text = std::fs::read_to_string(&config)
        .unwrap_or_else(|e| panic!("{} (written by kafka-broker.sh): {e}", config.display()));
    let dirs = text
        .lines()
        .find_map(|l| l.strip_prefix("log.dirs="))
        .unwrap_or_else(|| panic!("no log.dirs= in {}", config.display()));
    Some(PathBuf::from(dirs.split(',').next().unwrap_or(dirs).trim()))
}

/// A topic name no other test (or earlier run against the same broker) uses.
pub fn unique_topic(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The Java tools that run in the tool server ([`java_tool`]): short runs that read no stdin and
/// are never signalled. The consoles and perf tests keep a JVM of their own.
const SERVED_TOOLS: &[&str] = &[
    TOPIC_COMMAND,
    GROUP_COMMAND,
    DUMP_LOG_SEGMENTS,
    "kafka.admin.ConfigCommand",
    "org.apache.kafka.tools.GetOffsetShell",
    "org.apache.kafka.tools.DeleteRecordsCommand",
    "org.apache.kafka.tools.TransactionsCommand",
    "org.apache.kafka.tools.BrokerApiVersionsCommand",
    "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
];

/// Runs a Java tool's main class from the broker's jars, e.g.
/// `java_tool("org.apache.kafka.tools.TopicCommand", &["--bootstrap-server", b, "--list"])`:
/// the oracle for output (its log lines go to stderr, so stdout is the tool's own), with no
/// stdin.
///
/// The tools in [`SERVED_TOOLS`] run in this process's tool server (one warm JVM,
/// `tests/broker/ToolServer.java`), each about 0.6 s of CPU cheaper than a JVM of its own, with
/// the same stdout, stderr and exit code (its output is UTF-8 whatever the locale); the others
/// in a JVM of their own.
pub fn java_tool(class: &str, args: &[&str]) -> Output {
    if SERVED_TOOLS.contains(&class)
        && let Some(server) = tool_server()
    {
        return server.run(class, args);
    }
    Command::new("bash")
        .arg(script())
        .arg("tool")
        .arg(class)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the broker script runs")
}

/// This process's tool server, started by the first tool run that needs it; `None` where it
/// cannot be compiled (a Java runtime without a JDK): the tools then run in JVMs of their own.
static TOOL_SERVER: OnceLock<Result<Option<ToolServer>, String>> = OnceLock::new();

/// One JVM that runs Java tools on request (`kafka-broker.sh toolserver`). It exits when this
/// process does (its stdin, held here, reaches end of file), as the broker's watchdog does.
struct ToolServer {
    port: u16,
    _stdin: Mutex<ChildStdin>,
    child: Mutex<Child>,
}

fn tool_server() -> Option<&'static ToolServer> {
    let started = TOOL_SERVER.get_or_init(|| {
        let mut child = Command::new("bash")
            .arg(script())
            .arg("toolserver")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("kafka-broker.sh toolserver does not start: {e}"))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .map_err(|e| format!("kafka-broker.sh toolserver: {e}"))?;
        let Ok(port) = line.trim().parse() else {
            // No port: the script or the JVM has ended (its error is above).
            let status = child.wait().map_err(|e| e.to_string())?;
            if status.code() == Some(MISSING_PREREQUISITE) {
                eprintln!(
                    "NOTE: no tool server (a JDK's javac is needed to compile it): each Java tool runs in a JVM of its own, which is slower"
                );
                return Ok(None);
            }
            return Err(format!(
                "kafka-broker.sh toolserver printed {line:?}, not its port, and ended ({status}); its error is above"
            ));
        };
        Ok(Some(ToolServer {
            port,
            _stdin: Mutex::new(stdin),
            child: Mutex::new(child),
        }))
    });
    match started {
        Ok(server) => server.as_ref(),
        Err(e) => panic!("{e}"),
    }
}

impl ToolServer {
    /// Runs `class` with `args`: what the JVM of its own would have given (ToolServer.java
    /// has the protocol).
    fn run(&self, class: &str, args: &[&str]) -> Output {
        use std::os::unix::process::ExitStatusExt;
        let call = || -> std::io::Result<Output> {
            let mut socket = std::net::TcpStream::connect(("127.0.0.1", self.port))?;
            // A tool that hangs fails its test instead of the whole run.
            socket.set_read_timeout(Some(std::time::Duration::from_secs(300)))?;
            let mut request = Vec::new();
            let words: Vec<&str> = std::iter::once(class).chain(args.iter().copied()).collect();
            request.extend_from_slice(&(words.len() as i32).to_be_bytes());
            for word in words {
                request.extend_from_slice(&(word.len() as i32).to_be_bytes());
                request.extend_from_slice(word.as_bytes());
            }
            socket.write_all(&request)?;
            let code = read_i32(&mut socket)?;
            let mut read_bytes = || -> std::io::Result<Vec<u8>> {
                let mut bytes = vec![0; read_i32(&mut socket)? as u32 as usize];
                socket.read_exact(&mut bytes)?;
                Ok(bytes)
            };
            let stdout = read_bytes()?;
            let stderr = read_bytes()?;
            Ok(Output {
                // A wait status: the exit code in the second byte.
                status: std::process::ExitStatus::from_raw((code & 0xff) << 8),
                stdout,
                stderr,
            })
        };
        call().unwrap_or_else(|e| {
            let state = match self
                .child
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .try_wait()
            {
                Ok(Some(status)) => format!("the tool server has ended ({status})"),
                Ok(None) => "the tool server runs".to_string(),
                Err(e) => format!("the tool server's state is unknown ({e})"),
            };
            panic!("Java {class} {args:?} in the tool server: {e}; {state}")
        })
    }
}

/// A big-endian `int` of the tool server's protocol.
fn read_i32(from: &mut impl Read) -> std::io::Result<i32> {
    let mut bytes = [0; 4];
    from.read_exact(&mut bytes)?;
    Ok(i32::from_be_bytes(bytes))
}

/// The Java `kafka-topics` (TopicCommand) against the shared broker.
pub fn java_topics(args: &[&str]) -> Output {
    let bootstrap = bootstrap();
    let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
    all.extend_from_slice(args);
    java_tool(TOPIC_COMMAND, &all)
}

/// A Java tool against the shared broker (`--bootstrap-server` comes first), which must
/// succeed: its stdout.
pub fn java_ok(class: &str, args: &[&str]) -> String {
    let bootstrap = bootstrap();
    let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
    all.extend_from_slice(args);
    let out = java_tool(class, &all);
    assert!(
        out.status.success(),
        "Java {class} {args:?} failed: {}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Creates `topic` on the shared broker with the Java `kafka-topics`, so that the tool under
/// test is the only one of ours involved.
pub fn java_create_topic(topic: &str, partitions: u32) {
    let out = java_topics(&[
        "--create",
        "--topic",
        topic,
        "--partitions",
        &partitions.to_string(),
    ]);
    assert!(
        out.status.success(),
        "create {topic}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Creates `topic` on the shared broker with our `kafka-topics`.
pub fn create_topic(topic: &str, partitions: u32) {
    let out = kafkit("kafka-topics")
        .args(["--create", "--topic", topic, "--partitions"])
        .arg(partitions.to_string())
        .output()
        .expect("kafka-topics runs");
    assert!(
        out.status.success(),
        "create {topic}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Produces `lines` to `topic` with the Java console producer and its `extra` arguments.
pub fn java_produce(topic: &str, lines: &[impl AsRef<str>], extra: &[&str]) {
    let bootstrap = bootstrap();
    let mut child = Command::new("bash")
        .arg(script())
        .args(["tool", CONSOLE_PRODUCER])
        .args(["--bootstrap-server", &bootstrap, "--topic", topic])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Java console producer runs");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for line in lines {
            writeln!(stdin, "{}", line.as_ref()).expect("write to the producer");
        }
    }
    let out = child.wait_with_output().expect("the Java producer ends");
    assert!(
        out.status.success(),
        "Java producer failed: {}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// One of our tools against the shared broker, with `--bootstrap-server` already given.
pub fn kafkit(tool: &str) -> assert_cmd::Command {
    kafkit_at(tool, &bootstrap())
}

/// One of our tools against `server` (say, one of the secured listeners or a broker of a
/// test's own), with no log dir or profile from the environment.
pub fn kafkit_at(tool: &str, server: &str) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin(tool).expect("binary built");
    cmd.arg("--bootstrap-server")
        .arg(server)
        .env_remove("KAFKIT_LOG_DIR")
        .env_remove("KAFKIT_PROFILE")
        .timeout(std::time::Duration::from_secs(60));
    cmd
}

/// Runs one of our tools against the shared broker, with `stdin` as its input if given.
pub fn run(tool: &str, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = kafkit(tool);
    cmd.args(args);
    if let Some(input) = stdin {
        cmd.write_stdin(input.to_vec());
    }
    cmd.output().unwrap_or_else(|e| panic!("{tool} runs: {e}"))
}

/// Runs one of our tools against the shared broker, which must succeed (without a panic on
/// stderr): its stdout.
pub fn ok(tool: &str, args: &[&str], stdin: Option<&[u8]>) -> String {
    let out = run(tool, args, stdin);
    assert!(
        out.status.success(),
        "{tool} {args:?} failed: {}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        !text(&out.stderr).contains("panicked"),
        "{}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The shared broker's secured listeners (see "Secured listeners" in kafka-broker.sh): SSL with
/// client certificates required, SASL_SSL and SASL_PLAINTEXT, one user for PLAIN and both SCRAMs,
/// and the per-run PEM files.
#[derive(Debug, Clone)]
pub struct Secured {
    /// `127.0.0.1:port` of each listener.
    pub ssl: String,
    pub sasl_ssl: String,
    pub sasl_plaintext: String,
    pub user: String,
    pub password: String,
    /// The CA that signed the broker's and the client's certificates.
    pub ca: PathBuf,
    /// A CA that signed nothing the broker has.
    pub other_ca: PathBuf,
    /// The client's unencrypted key followed by its certificate (a PEM key store).
    pub client_pem: PathBuf,
    pub client_key: PathBuf,
    pub client_cert: PathBuf,
}

/// The shared broker's secured listeners; `None` when real-broker tests are skipped (as for
/// [`try_bootstrap`]).
pub fn try_secured() -> Option<Secured> {
    kafka_only("A secured listener");
    try_bootstrap()?;
    let Some(Ok(broker)) = BROKER.get() else {
        return None;
    };
    let listeners = std::fs::read_to_string(broker.dir.join("listeners")).unwrap_or_else(|e| {
        panic!(
            "{}/listeners (written by kafka-broker.sh): {e}",
            broker.dir.display()
        )
    });
    let value = |key: &str| {
        listeners
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or_else(|| panic!("no {key}= in {}/listeners", broker.dir.display()))
            .to_string()
    };
    let tls = broker.dir.join("tls");
    Some(Secured {
        ssl: value("SSL"),
        sasl_ssl: value("SASL_SSL"),
        sasl_plaintext: value("SASL_PLAINTEXT"),
        user: value("USER"),
        password: value("PASSWORD"),
        ca: tls.join("ca.pem"),
        other_ca: tls.join("other-ca.pem"),
        client_pem: tls.join("client.pem"),
        client_key: tls.join("client.key"),
        client_cert: tls.join("client.crt"),
    })
}

/// A broker of one test alone (to kill and restart it, or with settings of its own), in a
/// directory of its own: killed on drop (a failed assertion included), and by the script's owner
/// watcher (`KAFKIT_BROKER_OWNER`) once this process is gone, however it ended.
pub struct OwnBroker {
    dir: tempfile::TempDir,
    pub bootstrap: String,
}

impl OwnBroker {
    /// Starts a broker in a new temporary directory named `prefix...`, with `extra` lines
    /// appended to its server.properties; `None` (after saying so) when this machine cannot run
    /// one and `KAFKIT_REQUIRE_BROKER=1` is not set.
    pub fn start(prefix: &str, extra: &str) -> Option<OwnBroker> {
        kafka_only("A broker of a test's own");
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .expect("temp dir");
        let out = own_script(&["start", utf8(dir.path())], extra);
        if out.status.code() == Some(MISSING_PREREQUISITE) && !required() {
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED (no Java 17 + Maven for a broker): {}",
                text(&out.stderr)
            );
            return None;
        }
        // `start` prints the bootstrap address, then the broker's directory.
        let bootstrap = text(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        let broker = OwnBroker { dir, bootstrap };
        assert!(
            out.status.success() && !broker.bootstrap.is_empty(),
            "kafka-broker.sh start failed: {}",
            text(&out.stderr)
        );
        Some(broker)
    }

    fn pid(&self) -> Option<String> {
        std::fs::read_to_string(self.dir.path().join("broker.pid"))
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// SIGKILL: no clean shutdown, the log is recovered at the next start.
    pub fn kill(&self) {
        let pid = self.pid().expect("a running broker has a pid file");
        let status = Command::new("kill").args(["-KILL", &pid]).status();
        assert!(status.is_ok_and(|s| s.success()), "kill -9 {pid}");
    }

    /// A clean shutdown (SIGTERM, waited for).
    pub fn stop(&self) {
        let out = own_script(&["stop", utf8(self.dir.path())], "");
        assert!(
            out.status.success(),
            "kafka-broker.sh stop: {}",
            text(&out.stderr)
        );
    }

    /// Stops the broker and starts it again advertising `addr` (a proxy in front of it) as
    /// its PLAINTEXT address, so that clients reach it only through there.
    pub fn advertise(&self, addr: &str) {
        let path = self.dir.path().join("server.properties");
        let properties = std::fs::read_to_string(&path).expect("server.properties");
        let port = self.bootstrap.rsplit(':').next().expect("host:port");
        let mut found = false;
        let lines: Vec<String> = properties
            .lines()
            .map(|l| match l.strip_prefix("advertised.listeners=") {
                Some(rest) => {
                    found = true;
                    let ours = format!("PLAINTEXT://127.0.0.1:{port},");
                    assert!(rest.starts_with(&ours), "advertised first: {l}");
                    format!(
                        "advertised.listeners=PLAINTEXT://{addr},{}",
                        &rest[ours.len()..]
                    )
                }
                None => l.to_string(),
            })
            .collect();
        assert!(found, "server.properties advertises its listeners");
        self.stop();
        std::fs::write(&path, lines.join("\n") + "\n").expect("server.properties written");
        self.restart();
    }

    /// Starts the broker again on the same port with the same data.
    pub fn restart(&self) {
        let out = own_script(&["restart", utf8(self.dir.path())], "");
        assert!(
            out.status.success(),
            "kafka-broker.sh restart: {}",
            text(&out.stderr)
        );
        assert_eq!(
            text(&out.stdout).trim(),
            self.bootstrap,
            "the broker came back on another address"
        );
    }
}

impl Drop for OwnBroker {
    fn drop(&mut self) {
        // Throwaway data: SIGKILL is instant. The directory goes with the TempDir.
        if let Some(pid) = self.pid() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid])
                .stderr(Stdio::null())
                .status();
        }
        // KAFKIT_KEEP_FAILED_BROKER=1: a failed test leaves its broker's data and log behind.
        if std::thread::panicking() && std::env::var_os("KAFKIT_KEEP_FAILED_BROKER").is_some() {
            let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().expect("a temp dir"));
            eprintln!("the broker's directory is kept: {}", dir.keep().display());
        }
    }
}

fn utf8(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temp path")
}

/// Runs the broker script with this process as the broker's owner and `extra` broker
/// properties (used by `start`).
fn own_script(args: &[&str], extra: &str) -> Output {
    Command::new("bash")
        .arg(script())
        .args(args)
        .env("KAFKIT_BROKER_OWNER", std::process::id().to_string())
        .env("KAFKIT_BROKER_EXTRA_PROPERTIES", extra)
        .stdin(Stdio::null())
        .output()
        .expect("the broker script runs")
}
