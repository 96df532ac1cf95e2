//! `kafka-server-start` for the tests: a server on a free port over a fresh (or given) log
//! directory, its stderr collected, killed when dropped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::DefaultSignals;

/// A running server.
pub struct Server {
    pub child: Child,
    /// `127.0.0.1:PORT`.
    pub bootstrap: String,
    pub log_dir: PathBuf,
    /// Every stderr line so far.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts a server over `log_dir` on a free port with extra `--override`s; waits for its
    /// ready line (panics with its stderr if it does not come within 20 s).
    pub fn start(log_dir: &Path, overrides: &[&str]) -> Server {
        Self::start_on(log_dir, "127.0.0.1:0", overrides)
    }

    /// [`Server::start`] on a given `host:port` (a restart on the same port).
    pub fn start_on(log_dir: &Path, address: &str, overrides: &[&str]) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kafka-server-start"));
        cmd.default_signals()
            .arg("--log-dir")
            .arg(log_dir)
            .args(["--override", &format!("listeners=PLAINTEXT://{address}")]);
        for o in overrides {
            cmd.args(["--override", o]);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kafka-server-start runs");
        let stderr = child.stderr.take().expect("piped");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (ready, port) = mpsc::channel();
        let lines = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                // Kept before the ready line is announced, so the caller sees it.
                let address = line
                    .split("listening on PLAINTEXT://")
                    .nth(1)
                    .map(|rest| rest.split(',').next().unwrap_or("").to_string());
                lines.lock().unwrap().push(line);
                if let Some(address) = address {
                    let _ = ready.send(address);
                }
            }
        });
        // Generous: a loaded machine may take its time to start a process.
        let deadline = Instant::now() + Duration::from_secs(60);
        let bound = loop {
            if let Ok(address) = port.recv_timeout(Duration::from_millis(50)) {
                break address;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "kafka-server-start exited with {status}: {:?}",
                    log.lock().unwrap()
                );
            }
            assert!(
                Instant::now() < deadline,
                "no ready line: {:?}",
                log.lock().unwrap()
            );
        };
        Server {
            child,
            bootstrap: bound,
            log_dir: log_dir.to_path_buf(),
            log,
        }
    }

    /// The stderr lines so far, joined.
    pub fn stderr(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Sends a signal and waits for the exit code.
    pub fn stop_with(&mut self, sig: &str) -> Option<i32> {
        super::signal(&self.child, sig);
        self.child.wait().expect("the server exits").code()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client process running in the background with its stdout in a file, killed when dropped
/// (Java consumers, kcat -G, our consumer on the directory).
pub struct Background {
    pub child: Child,
    pub out: PathBuf,
    pub err: PathBuf,
}

impl Background {
    /// Spawns `program args` with stdout and stderr into `<dir>/<name>.out` and `.err`.
    pub fn spawn(dir: &Path, name: &str, program: &str, args: &[&str]) -> Background {
        let out = dir.join(format!("{name}.out"));
        let err = dir.join(format!("{name}.err"));
        let child = Command::new(program)
            .default_signals()
            .args(args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("{program} runs: {e}"));
        Background { child, out, err }
    }

    /// A Java ConsoleConsumer in `group` from the beginning of `topic`, with a short session
    /// timeout so that the tests see expiry quickly.
    pub fn java_consumer(
        dir: &Path,
        name: &str,
        bootstrap: &str,
        topic: &str,
        group: &str,
    ) -> Background {
        let properties = ["session.timeout.ms=6000", "heartbeat.interval.ms=1000"];
        Self::java_consumer_with(dir, name, (bootstrap, topic, group), &properties)
    }

    /// A Java ConsoleConsumer in a group, `(bootstrap, topic, group)`, from the beginning, with
    /// these `--consumer-property` settings.
    pub fn java_consumer_with(
        dir: &Path,
        name: &str,
        (bootstrap, topic, group): (&str, &str, &str),
        properties: &[&str],
    ) -> Background {
        let script = super::broker::script();
        let mut args = vec![
            script.to_str().unwrap(),
            "tool",
            super::broker::CONSOLE_CONSUMER,
        ];
        args.extend_from_slice(&[
            "--bootstrap-server",
            bootstrap,
            "--topic",
            topic,
            "--group",
            group,
            "--from-beginning",
        ]);
        for p in properties {
            args.extend_from_slice(&["--consumer-property", p]);
        }
        Background::spawn(dir, name, "bash", &args)
    }

    /// What it printed so far.
    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    /// Sends a signal (the Java tools exec java, so this reaches the JVM itself).
    pub fn signal(&self, sig: &str) {
        super::signal(&self.child, sig);
    }

    /// Waits for the exit (at most `timeout`); the exit code.
    pub fn wait(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "did not exit: {}", self.stderr());
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `check` every 200 ms until it holds; panics with `what()` after `timeout`.
pub fn wait_until(timeout: Duration, mut check: impl FnMut() -> bool, what: impl Fn() -> String) {
    let deadline = Instant::now() + timeout;
    while !check() {
        assert!(Instant::now() < deadline, "timed out: {}", what());
        std::thread::sleep(Duration::from_millis(200));
    }
}
