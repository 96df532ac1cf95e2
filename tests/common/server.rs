//! `kafka-server-start` for the tests: a server on a free port over a fresh (or given) log
//! directory, its stderr collected, killed when dropped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
        cmd.arg("--log-dir")
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
        let deadline = Instant::now() + Duration::from_secs(20);
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
