//! `kafka-server-start` for the tests: a server on a free port over a fresh (or given) log
//! directory, its log lines collected, stopped when dropped. It runs in this process
//! ([`Server::start`], `kafkit::server::serve` on its own runtime) unless the test needs a
//! process: signals, kill -9, its memory ([`Server::process`]).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kafkit::server::{Level, Logger, ServerConfig};

use super::DefaultSignals;

/// A running server.
pub struct Server {
    runner: Runner,
    /// `127.0.0.1:PORT`.
    pub bootstrap: String,
    pub log_dir: PathBuf,
    /// Every log line so far.
    pub log: Arc<Mutex<Vec<String>>>,
}

enum Runner {
    Process(Child),
    /// Serving on its own runtime in a thread, until `stop` is sent or dropped.
    InProcess {
        stop: Option<tokio::sync::oneshot::Sender<()>>,
        thread: Option<JoinHandle<()>>,
    },
}

impl Server {
    /// Starts a server in this process over `log_dir` on a free port with these properties
    /// (`key=value`, as `--override` takes them); waits until it serves.
    pub fn start(log_dir: &Path, overrides: &[&str]) -> Server {
        Self::start_on(log_dir, "127.0.0.1:0", overrides)
    }

    /// [`Server::start`] on a given `host:port` (a restart on the same port).
    pub fn start_on(log_dir: &Path, address: &str, overrides: &[&str]) -> Server {
        let mut props = BTreeMap::new();
        props.insert("listeners".to_string(), format!("PLAINTEXT://{address}"));
        for o in overrides {
            let (k, v) = o.split_once('=').expect("overrides are key=value");
            props.insert(k.trim().to_string(), v.trim().to_string());
        }
        let config = ServerConfig::from_properties(&props)
            .unwrap_or_else(|e| panic!("the test's server properties are refused: {e}"));
        let listener = std::net::TcpListener::bind(address)
            .unwrap_or_else(|e| panic!("cannot listen on {address}: {e}"));
        listener.set_nonblocking(true).unwrap();
        let bootstrap = listener.local_addr().unwrap().to_string();
        let log = Arc::new(Mutex::new(Vec::new()));
        let lines = Arc::clone(&log);
        let logger = Logger::to(Level::Info, move |line| {
            lines.lock().unwrap().push(line.to_string())
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (failed, failure) = mpsc::channel::<String>();
        let dir = log_dir.to_path_buf();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a runtime for the server");
            runtime.block_on(async {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let never = std::future::pending::<i32>();
                tokio::select! {
                    outcome = kafkit::server::serve(listener, &dir, config, logger, never) => {
                        if let Err(e) = outcome {
                            let _ = failed.send(e.to_string());
                        }
                    }
                    // Stopped (or the Server dropped): as a killed process, nothing is drained.
                    _ = stopped => {}
                }
            });
            runtime.shutdown_timeout(Duration::from_millis(100));
        });
        let server = Server {
            runner: Runner::InProcess {
                stop: Some(stop),
                thread: Some(thread),
            },
            bootstrap,
            log_dir: log_dir.to_path_buf(),
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !server.stderr().contains("Kafka Server started") {
            if let Ok(why) = failure.try_recv() {
                panic!("the server did not start: {why}");
            }
            assert!(
                Instant::now() < deadline,
                "no ready line: {}",
                server.stderr()
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        server
    }

    /// Starts `kafka-server-start` as a process over `log_dir` on a free port with extra
    /// `--override`s; waits for its ready line (panics with its stderr if it does not come).
    pub fn process(log_dir: &Path, overrides: &[&str]) -> Server {
        Self::process_on(log_dir, "127.0.0.1:0", overrides)
    }

    /// [`Server::process`] on a given `host:port` (a restart on the same port).
    pub fn process_on(log_dir: &Path, address: &str, overrides: &[&str]) -> Server {
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
            runner: Runner::Process(child),
            bootstrap: bound,
            log_dir: log_dir.to_path_buf(),
            log,
        }
    }

    /// The log lines so far, joined.
    pub fn stderr(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// The server's process (a server started with [`Server::process`]).
    pub fn child(&mut self) -> &mut Child {
        match &mut self.runner {
            Runner::Process(child) => child,
            Runner::InProcess { .. } => {
                panic!("this server runs in-process: start it with Server::process")
            }
        }
    }

    /// The server's process id (a server started with [`Server::process`]).
    pub fn pid(&self) -> u32 {
        match &self.runner {
            Runner::Process(child) => child.id(),
            Runner::InProcess { .. } => {
                panic!("this server runs in-process: start it with Server::process")
            }
        }
    }

    /// Sends a signal and waits for the exit code.
    pub fn stop_with(&mut self, sig: &str) -> Option<i32> {
        let child = self.child();
        super::signal(child, sig);
        child.wait().expect("the server exits").code()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        match &mut self.runner {
            Runner::Process(child) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            Runner::InProcess { stop, thread } => {
                drop(stop.take());
                if let Some(thread) = thread.take() {
                    let _ = thread.join();
                }
            }
        }
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
