//! Starting and stopping: the ready line, one-line refusals, and the exit codes of signals.

use std::process::Command;

use crate::common::server::Server;
use crate::common::{DefaultSignals, Kafkit, text};

fn server_start(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kafka-server-start"))
        .args(args)
        .output()
        .expect("kafka-server-start runs")
}

#[test]
fn ready_line_then_sigterm_exits_143_and_sigint_130() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::process(dir.path(), &[]);
    assert!(server.stderr().contains("INFO"), "{}", server.stderr());
    assert!(server.bootstrap.starts_with("127.0.0.1:"));
    assert_eq!(server.stop_with("-TERM"), Some(143), "{}", server.stderr());
    assert!(server.stderr().contains("Shut down"), "{}", server.stderr());
    let mut server = Server::process(dir.path(), &[]);
    assert_eq!(server.stop_with("-INT"), Some(130));
}

#[test]
fn refusals_are_one_line_and_nonzero() {
    let dir = tempfile::tempdir().unwrap();
    let log_dir = dir.path().join("log");
    let server = Server::process(&log_dir, &[]);
    let other = tempfile::tempdir().unwrap();
    let other_dir = other.path().join("log");
    let listener = format!("listeners=PLAINTEXT://{}", server.bootstrap);
    let cases: Vec<(Vec<String>, &str)> = vec![
        // The port the first server listens on.
        (
            vec![
                "--log-dir".into(),
                other_dir.display().to_string(),
                "--override".into(),
                listener,
            ],
            "cannot listen on",
        ),
        // A second server on the same log directory.
        (
            vec![
                "--log-dir".into(),
                log_dir.display().to_string(),
                "--override".into(),
                "listeners=PLAINTEXT://127.0.0.1:0".into(),
            ],
            "another kafka-server-start is serving",
        ),
        (
            vec![
                "--log-dir".into(),
                other_dir.display().to_string(),
                "--override".into(),
                "num.partitions=0".into(),
            ],
            "num.partitions",
        ),
        (
            vec![
                "--log-dir".into(),
                other_dir.display().to_string(),
                "--override".into(),
                "group.consumer.session.timeout.ms=10".into(),
            ],
            "must be less than group.consumer.session.timeout.ms",
        ),
        // Kafka's floor for segments (issue 24, item 8): once accepted and ignored.
        (
            vec![
                "--log-dir".into(),
                other_dir.display().to_string(),
                "--override".into(),
                "log.segment.bytes=65536".into(),
            ],
            "Invalid value 65536 for configuration log.segment.bytes: Value must be at least 1048576",
        ),
        // A file where the directory should be.
        (
            vec!["--log-dir".into(), "/etc/passwd".into()],
            "/etc/passwd is not a directory",
        ),
        (
            vec![
                "--log-dir".into(),
                other_dir.display().to_string(),
                "--override".into(),
                "listeners=SSL://127.0.0.1:0".into(),
            ],
            "PLAINTEXT only",
        ),
        (
            vec![
                "--log-dir".into(),
                other_dir.display().to_string(),
                "--override".into(),
                "nonsense".into(),
            ],
            "property=value",
        ),
        (
            vec![
                other
                    .path()
                    .join("missing.properties")
                    .display()
                    .to_string(),
            ],
            "missing.properties",
        ),
        (
            vec!["-daemon".into(), "server.properties".into()],
            "-daemon is not supported",
        ),
        (vec!["--frob".into()], "frob is not a recognized option"),
        (
            vec![
                "--log-dir".into(),
                other_dir.display().to_string(),
                "--override".into(),
                "listeners=PLAINTEXT://127.0.0.1:0,EXTERNAL://127.0.0.1:0".into(),
            ],
            "serves one",
        ),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = server_start(&args);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    // Nothing was made where the refused servers would have served.
    assert!(!other_dir.exists());
}

#[test]
fn kafka_quickstart_properties_work_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let props = dir.path().join("server.properties");
    let log_dir = dir.path().join("kraft-combined-logs");
    std::fs::write(
        &props,
        format!(
            "process.roles=broker,controller\nnode.id=1\ncontroller.quorum.bootstrap.servers=localhost:9093\n\
             listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://:9093\ninter.broker.listener.name=PLAINTEXT\n\
             controller.listener.names=CONTROLLER\nlistener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n\
             num.partitions=3\nlog.dirs={}\nlog.retention.hours=168\n",
            log_dir.display()
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kafka-server-start"))
        .default_signals()
        .arg(&props)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let ready = lines.next().unwrap().unwrap();
    assert!(ready.contains("node id 1"), "{ready}");
    assert!(ready.contains(&log_dir.display().to_string()), "{ready}");
    crate::common::signal(&child, "-TERM");
    assert_eq!(child.wait().unwrap().code(), Some(143));
}

/// The files under `dir` that process `pid` holds open.
fn files_held(pid: u32, dir: &std::path::Path) -> Vec<String> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).expect("Linux /proc");
    fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .map(|target| target.display().to_string())
        .filter(|t| t.starts_with(&dir.display().to_string()))
        .collect()
}

/// Those of [`files_held`] that were deleted.
fn deleted_files_held(pid: u32, dir: &std::path::Path) -> Vec<String> {
    let mut held = files_held(pid, dir);
    held.retain(|t| t.ends_with("(deleted)"));
    held
}

#[test]
fn deleted_topics_files_are_closed_whoever_deletes_them() {
    let k = Kafkit::new();
    let server = Server::process(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    for topic in ["by-server", "by-tool"] {
        let produce = ["--bootstrap-server", b, "--topic", topic];
        k.ok(
            "kafka-console-producer",
            &produce,
            Some(b"one\ntwo\n".as_slice()),
        );
    }
    let pid = server.pid();
    let held = files_held(pid, k.log_dir());
    for topic in ["by-server-0", "by-tool-0"] {
        assert!(
            held.iter().any(|f| f.contains(topic)),
            "{topic} open: {held:?}"
        );
    }
    // Deleted through the server: its files are closed before it answers.
    k.ok(
        "kafka-topics",
        &["--bootstrap-server", b, "--delete", "--topic", "by-server"],
        None,
    );
    assert_eq!(deleted_files_held(pid, k.log_dir()), Vec::<String>::new());
    // Deleted by a tool on the directory: closed at the server's next look, within 10 s.
    k.ok("kafka-topics", &["--delete", "--topic", "by-tool"], None);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !deleted_files_held(pid, k.log_dir()).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "still open: {:?}",
            deleted_files_held(pid, k.log_dir())
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn an_override_it_does_not_read_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::process(dir.path(), &["listener=PLAINTEXT://127.0.0.1:1"]);
    assert!(
        server
            .stderr()
            .contains("WARN: --override listener: kafka-server-start does not read this property"),
        "{}",
        server.stderr()
    );
}

/// DescribeConfigs of the broker lists every property the server reads, with where its value
/// comes from, as Kafka lists its own (issue 24, item 10: it listed nothing).
#[test]
fn the_brokers_own_configs_are_described_with_their_sources() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &["log.segment.bytes=2000000"]);
    let out = k.ok(
        "kafka-configs",
        &[
            "--bootstrap-server",
            &server.bootstrap,
            "--describe",
            "--entity-type",
            "brokers",
            "--entity-name",
            "0",
            "--all",
        ],
        None,
    );
    let line = |key: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key}: {out}"))
            .trim()
            .to_string()
    };
    assert_eq!(
        line("log.segment.bytes"),
        "log.segment.bytes=2000000 sensitive=false synonyms={STATIC_BROKER_CONFIG:log.segment.bytes=2000000, DEFAULT_CONFIG:log.segment.bytes=1073741824}"
    );
    assert_eq!(
        line("num.partitions"),
        "num.partitions=1 sensitive=false synonyms={DEFAULT_CONFIG:num.partitions=1}"
    );
    assert!(line("listeners").contains("STATIC_BROKER_CONFIG:listeners=PLAINTEXT://127.0.0.1:"));
    // The directory served, however it was given (here as the server's own argument).
    let dir = server.log_dir.display().to_string();
    assert_eq!(
        line("log.dirs"),
        format!("log.dirs={dir} sensitive=false synonyms={{STATIC_BROKER_CONFIG:log.dirs={dir}}}")
    );
}
