//! Kafka clients in other languages against the server: kafka-python (PyPI) and kafkajs (npm),
//! installed into `target/clients` by `tests/server/clients/setup.sh` on first use.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use crate::common::server::Server;
use crate::common::{Kafkit, text};

fn scripts() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/server/clients")
}

/// The directory the clients are installed in (installed once per test run).
fn clients() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = Command::new("bash")
            .arg(scripts().join("setup.sh"))
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "installing kafka-python and kafkajs failed (python3 and npm are needed): {}",
            text(&out.stderr)
        );
        PathBuf::from(text(&out.stdout).trim())
    })
}

#[test]
fn kafka_python_creates_produces_and_reads_back() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let out = Command::new(clients().join("venv/bin/python"))
        .arg(scripts().join("roundtrip.py"))
        .args([&server.bootstrap, "python", "300"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stderr),
        server.stderr()
    );
    let mut expected: Vec<String> = (0..300).map(|i| format!("k{i}=v{i} h=x{i}")).collect();
    expected.sort();
    assert_eq!(text(&out.stdout), expected.join("\n") + "\n");
    // What Python wrote, read from the directory.
    let local = k.consume("python", 300, &["--property", "print.key=true"]);
    assert_eq!(local.lines().count(), 300);
    assert_eq!(
        k.ok("kafka-topics", &["--describe", "--topic", "python"], None)
            .lines()
            .next()
            .map(|l| l.contains("PartitionCount: 3")),
        Some(true)
    );
}

#[test]
fn kafkajs_idempotent_producer_and_admin() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let out = Command::new("node")
        .arg(scripts().join("produce.js"))
        .args([&server.bootstrap, "js", "1000"])
        .env("NODE_PATH", clients().join("node_modules"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stderr),
        server.stderr()
    );
    // kafkajs's own view of the end offsets matches ours, and they add up to what it sent.
    let theirs = text(&out.stdout);
    let ours = k.ok("kafka-get-offsets", &["--topic", "js"], None);
    let ours: String = ours
        .lines()
        .map(|l| l.trim_start_matches("js:").to_string() + "\n")
        .collect();
    assert_eq!(theirs, ours);
    let total: i64 = theirs
        .lines()
        .filter_map(|l| l.split(':').nth(1)?.parse::<i64>().ok())
        .sum();
    assert_eq!(total, 1000);
    let local = k.consume(
        "js",
        1000,
        &[
            "--property",
            "print.key=true",
            "--property",
            "print.headers=true",
        ],
    );
    assert!(local.lines().all(|l| l.starts_with("h:x")), "{local}");
}

#[test]
fn kafkajs_consumer_group_commits_what_the_directory_shows() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "jsg", "--partitions", "3"],
        None,
    );
    let input: String = (0..90).map(|i| format!("k{i}:v{i}\n")).collect();
    k.ok(
        "kafka-console-producer",
        &[
            "--topic",
            "jsg",
            "--property",
            "parse.key=true",
            "--property",
            "key.separator=:",
        ],
        Some(input.as_bytes()),
    );
    let out = Command::new("node")
        .arg(scripts().join("consume.js"))
        .args([&server.bootstrap, "jsg", "js-group", "90"])
        .env("NODE_PATH", clients().join("node_modules"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stderr),
        server.stderr()
    );
    let mut expected: Vec<String> = (0..90).map(|i| format!("k{i}=v{i}")).collect();
    expected.sort();
    assert_eq!(text(&out.stdout), expected.join("\n") + "\n");
    // Its commits, read from the directory: every partition at its end, lag 0.
    let described = k.ok(
        "kafka-consumer-groups",
        &["--describe", "--group", "js-group"],
        None,
    );
    let rows: Vec<&str> = described
        .lines()
        .filter(|l| l.starts_with("js-group"))
        .collect();
    assert_eq!(rows.len(), 3, "{described}");
    for row in rows {
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols[3], cols[4], "committed = end: {described}");
        assert_eq!(cols[5], "0", "{described}");
    }
}
