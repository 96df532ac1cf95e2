//! Starting and stopping: the ready line, one-line refusals, and the exit codes of signals.

use std::process::Command;

use crate::common::server::Server;
use crate::common::text;

fn server_start(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kafka-server-start"))
        .args(args)
        .output()
        .expect("kafka-server-start runs")
}

#[test]
fn ready_line_then_sigterm_exits_143_and_sigint_130() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[]);
    assert!(server.stderr().contains("INFO"), "{}", server.stderr());
    assert!(server.bootstrap.starts_with("127.0.0.1:"));
    assert_eq!(server.stop_with("-TERM"), Some(143), "{}", server.stderr());
    assert!(server.stderr().contains("Shut down"), "{}", server.stderr());
    let mut server = Server::start(dir.path(), &[]);
    assert_eq!(server.stop_with("-INT"), Some(130));
}

#[test]
fn refusals_are_one_line_and_nonzero() {
    let dir = tempfile::tempdir().unwrap();
    let log_dir = dir.path().join("log");
    let server = Server::start(&log_dir, &[]);
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
