//! Shared helpers for the integration tests: run the tools as a user would, against a fresh
//! embedded log directory ([`Kafkit`]) or a real Kafka broker ([`broker`]), and read what they
//! print.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use kafkit::local::LogDir;

/// A tool's stdout or stderr as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The lines of `text`, sorted: for output whose line order is not fixed.
pub fn sorted(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    lines
}

/// The records of the consumer's `--output json` (one object a line), by partition and offset.
pub fn json_records(text: &[u8]) -> Vec<serde_json::Value> {
    let mut all: Vec<serde_json::Value> = String::from_utf8_lossy(text)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is a JSON object"))
        .collect();
    all.sort_by_key(|r| (r["partition"].as_i64(), r["offset"].as_i64()));
    all
}

/// A loopback port with nothing listening on it.
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Starts a child with the default disposition of every signal a test sends to stop it.
///
/// A disposition of "ignore" is inherited across exec: a suite started in the background by a
/// non-interactive shell (`cargo test &` in a script) ignores SIGINT, and so would every
/// process it starts. A JVM that starts with SIGINT ignored installs no handler for it, so
/// `kill -INT` would never reach its shutdown hook. Every test child that is stopped with a
/// signal is spawned through this, whatever the suite itself inherited.
pub trait DefaultSignals {
    fn default_signals(&mut self) -> &mut Self;
}

impl DefaultSignals for std::process::Command {
    fn default_signals(&mut self) -> &mut Self {
        use std::os::unix::process::CommandExt;
        // SAFETY: between fork and exec the closure calls only signal(2), which is
        // async-signal-safe, and allocates nothing. (std already resets the signal mask.)
        unsafe {
            self.pre_exec(|| {
                for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP] {
                    if libc::signal(sig, libc::SIG_DFL) == libc::SIG_ERR {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            })
        }
    }
}

/// How long a test waits for something that must happen: a child's line, a file, a group's
/// members, a record. Generous on purpose: on CI's loaded two-core machine an fsync can wait
/// seconds behind writeback, and a test must never fail only because the machine was slow.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Polls `done` until it holds; panics naming `what` after [`PATIENCE`].
pub fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "not within {PATIENCE:?}: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The lines of a child's stdout or stderr, read on a thread as they come, so that a test can
/// wait for one (the child says it reached a state) and still see everything at the end.
pub struct Lines {
    rx: mpsc::Receiver<String>,
}

impl Lines {
    pub fn read(stream: impl Read + Send + 'static) -> Lines {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Lines { rx }
    }

    /// The lines up to and including the first that contains `marker`; panics if the stream
    /// ends first or [`PATIENCE`] passes.
    pub fn until(&self, marker: &str) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) => {
                    let found = line.contains(marker);
                    seen.push(line);
                    if found {
                        return seen;
                    }
                }
                Err(e) => panic!("no line with {marker:?} ({e}); before it: {seen:?}"),
            }
        }
    }

    /// Every line still to come, until the stream ends (the child exited and closed it); panics
    /// if it is still open after [`PATIENCE`].
    pub fn rest(&self) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        let mut rest = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) => rest.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => return rest,
                Err(mpsc::RecvTimeoutError::Timeout) => panic!("still open: {rest:?}"),
            }
        }
    }
}

/// Whether process `pid` has a handler installed for signal `sig` (its `SigCgt` mask in
/// `/proc`). A tool installs its SIGINT/SIGTERM/SIGHUP handler a moment after it starts; a
/// test that signals it waits for this instead of sleeping, since before that the signal's
/// default action would kill it without its final lines.
pub fn catches(pid: u32, sig: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (sig - 1)) != 0)
}

/// Waits until `child` handles `sig` (see [`catches`]).
pub fn wait_for_handler(child: &std::process::Child, sig: i32) {
    wait_for(
        &format!("process {} to handle signal {sig}", child.id()),
        || catches(child.id(), sig),
    );
}

/// The bytes written into a pipe that its reader has not taken yet (FIONREAD, which Linux
/// answers on either end): 0 once a child has read everything the test wrote to its stdin.
pub fn unread_bytes(pipe: &impl std::os::fd::AsRawFd) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which is valid for that.
    let rc = unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut n) };
    assert_eq!(rc, 0, "FIONREAD: {}", std::io::Error::last_os_error());
    usize::try_from(n).unwrap_or(0)
}

/// Sends `sig` (`-INT`, `-STOP`, ...) to `child` with kill(1), which must succeed. A child
/// stopped with INT, QUIT, TERM or HUP must have been started with
/// [`DefaultSignals::default_signals`].
pub fn signal(child: &std::process::Child, sig: &str) {
    let status = std::process::Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {sig} {}", child.id());
}

/// The committed offsets of `group` in `k`'s embedded log: (topic, partition, offset).
pub fn committed(k: &Kafkit, group: &str) -> Vec<(String, u32, i64)> {
    LogDir::open(k.log_dir())
        .unwrap()
        .groups()
        .committed(group)
        .unwrap()
        .into_iter()
        .map(|((t, p), c)| (t, p as u32, c.offset))
        .collect()
}

/// The offset of the batch that [`Kafkit::damage_a_batch`] damages.
pub const DAMAGED_OFFSET: usize = 500;

/// Which segment [`Kafkit::damage_a_batch`] damages.
#[derive(Clone, Copy, Debug)]
pub enum Segment {
    /// A closed segment that a later one follows.
    Older,
    /// The last segment, which writers append to.
    Active,
}

/// A temporary log directory and a way to run the tools against it.
pub struct Kafkit {
    dir: tempfile::TempDir,
}

impl Kafkit {
    pub fn new() -> Self {
        Kafkit {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// A log dir under `parent` (a tmpfs, say, for tests that fsync a lot).
    pub fn new_in(parent: &Path) -> Self {
        Kafkit {
            dir: tempfile::tempdir_in(parent).expect("temp dir"),
        }
    }

    pub fn log_dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// A tool command with `KAFKIT_LOG_DIR` pointing at this test's log dir.
    pub fn cmd(&self, tool: &str) -> Command {
        let mut cmd = Command::cargo_bin(tool).expect("binary built");
        cmd.env("KAFKIT_LOG_DIR", self.dir.path())
            .env_remove("XDG_DATA_HOME")
            .timeout(std::time::Duration::from_secs(60));
        cmd
    }

    /// Runs a tool with arguments and optional stdin; returns its output.
    pub fn run(&self, tool: &str, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let mut cmd = self.cmd(tool);
        cmd.args(args);
        if let Some(input) = stdin {
            cmd.write_stdin(input.to_vec());
        }
        cmd.output().expect("tool runs")
    }

    /// Runs a tool that must succeed; returns stdout as text.
    pub fn ok(&self, tool: &str, args: &[&str], stdin: Option<&[u8]>) -> String {
        let out = self.run(tool, args, stdin);
        assert!(
            out.status.success(),
            "{tool} {args:?} failed with {:?}\nstdout: {}\nstderr: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs a tool that must fail with `code`; returns stderr as text.
    pub fn fails(&self, tool: &str, args: &[&str], stdin: Option<&[u8]>, code: i32) -> String {
        let out = self.run(tool, args, stdin);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{tool} {args:?}: expected exit {code}\nstdout: {}\nstderr: {stderr}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(!stderr.contains("panicked"), "{tool} panicked: {stderr}");
        stderr
    }

    /// Creates `topic`, one partition, with these `configs` (`key=value`).
    pub fn create_with(&self, topic: &str, configs: &[&str]) {
        let mut args = vec!["--create", "--topic", topic, "--partitions", "1"];
        for c in configs {
            args.extend(["--config", c]);
        }
        self.ok("kafka-topics", &args, None);
    }

    /// Creates `topic`, one partition, compacted (`cleanup.policy=compact`), with more
    /// `configs` (`key=value`).
    pub fn create_compacted(&self, topic: &str, configs: &[&str]) {
        let mut all = vec!["cleanup.policy=compact"];
        all.extend_from_slice(configs);
        self.create_with(topic, &all);
    }

    /// Sets one config (`key=value`) of `topic` with `kafka-configs --alter`, which on the
    /// embedded log also cleans a compacted topic.
    pub fn alter_topic(&self, topic: &str, config: &str) {
        self.ok(
            "kafka-configs",
            &[
                "--alter",
                "--entity-type",
                "topics",
                "--entity-name",
                topic,
                "--add-config",
                config,
            ],
            None,
        );
    }

    /// Produces `input` to `topic` with extra producer arguments.
    pub fn produce(&self, topic: &str, extra: &[&str], input: &[u8]) {
        let mut args = vec!["--topic", topic];
        args.extend_from_slice(extra);
        self.ok("kafka-console-producer", &args, Some(input));
    }

    /// Topic `topic` with 1,000 records (999 bytes each) per segment, and one byte flipped in
    /// the batch at offset [`DAMAGED_OFFSET`], so that valid batches follow it: the damage that
    /// hides only what follows it (issue 24, item 7). `Segment::Older`: three 1 MiB segments,
    /// the first damaged; `Segment::Active`: the one segment a writer appends to. The records are
    /// produced 100 per run, so a batch starts at every hundredth offset whatever the producer's
    /// batching (the damaged batch was once wherever byte 600,000 fell, which moved with timing).
    pub fn damage_a_batch(&self, topic: &str, segment: Segment) {
        let segments = match segment {
            Segment::Older => 3,
            Segment::Active => 1,
        };
        self.ok(
            "kafka-topics",
            &[
                "--create",
                "--topic",
                topic,
                "--config",
                "segment.bytes=1048576",
            ],
            None,
        );
        let line = "x".repeat(999);
        let input: String = (0..100).map(|_| format!("{line}\n")).collect();
        for _ in 0..segments * 10 {
            self.produce(topic, &[], input.as_bytes());
        }
        let dir = self.log_dir().join(format!("{topic}-0"));
        let second = dir.join("00000000000000001000.log");
        assert_eq!(
            second.exists(),
            segments > 1,
            "{segments} segment(s) expected"
        );
        let first = dir.join("00000000000000000000.log");
        let mut bytes = std::fs::read(&first).unwrap();
        // Walk the batch headers (base offset: 8 bytes, length: 4) to the damaged one.
        let mut position = 0;
        loop {
            assert!(
                position + 12 <= bytes.len(),
                "no batch starts at offset {DAMAGED_OFFSET} in {}",
                first.display()
            );
            let header = &bytes[position..position + 12];
            let base_offset = i64::from_be_bytes(header[..8].try_into().unwrap());
            let length = i32::from_be_bytes(header[8..].try_into().unwrap()) as usize;
            if base_offset == DAMAGED_OFFSET as i64 {
                // A byte of the first record's value, well past the 61-byte batch header.
                bytes[position + 100] ^= 0xff;
                break;
            }
            position += 12 + length;
        }
        std::fs::write(&first, bytes).unwrap();
    }

    /// Consumes `n` records of `topic` from the beginning; returns stdout.
    pub fn consume(&self, topic: &str, n: usize, extra: &[&str]) -> String {
        let n = n.to_string();
        let mut args = vec![
            "--topic",
            topic,
            "--from-beginning",
            "--max-messages",
            n.as_str(),
            "--timeout-ms",
            "5000",
        ];
        args.extend_from_slice(extra);
        self.ok("kafka-console-consumer", &args, None)
    }

    /// Runs a shell command line under a pseudo-terminal (util-linux `script`) with this test's
    /// log dir; it must succeed: what the terminal showed.
    pub fn under_pty(&self, command: &str) -> String {
        let out = std::process::Command::new("script")
            .arg("-qec")
            .arg(command)
            .arg("/dev/null")
            .env("KAFKIT_LOG_DIR", self.dir.path())
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A snapshot of every file in the log dir (name and bytes), to prove nothing changed.
    pub fn files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![self.dir.path().to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let bytes = std::fs::read(&path).unwrap();
                    out.push((path, bytes));
                }
            }
        }
        out.sort();
        out
    }
}

pub mod broker;
pub mod offsets;
pub mod perf;
pub mod producer;
pub mod proxy;
pub mod server;
