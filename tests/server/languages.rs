//! Kafka clients in other languages against the server: kafka-python (PyPI), kafkajs (npm) and
//! franz-go (Go), installed or built into `target/clients` by `tests/server/clients/setup.sh` on
//! first use.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use crate::common::server::Server;
use crate::common::{Kafkit, text};

pub(crate) fn scripts() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/server/clients")
}

/// The directory the clients are installed in (installed once per test run).
pub(crate) fn clients() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = Command::new("bash")
            .arg(scripts().join("setup.sh"))
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "installing kafka-python, confluent-kafka, kafkajs and franz-go failed (python3, npm and go are needed): {}",
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

/// franz-go (`tests/server/clients/franz/main.go`): kadm creates the topic, idempotent producers
/// send in every codec, it reads back by partition, as a classic group and as a KIP-848 group
/// (the server assigns), each committing, and kadm fetches the commits; then the directory shows
/// the same records, codecs and offsets.
#[test]
fn franz_go_produces_in_every_codec_and_commits_as_classic_and_kip848_groups() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let out = Command::new(clients().join("franz"))
        .args([&server.bootstrap, "franz", "franz-group", "500"])
        .output()
        .unwrap();
    let summary = text(&out.stdout);
    assert!(
        out.status.success(),
        "{summary}\n{}\n{}",
        text(&out.stderr),
        server.stderr()
    );
    assert!(
        summary.contains(
            "produced 500 records, idempotent (none 100, gzip 100, snappy 100, lz4 100, zstd 100)"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("kadm: group franz-group-848 is Stable, assignor range, its member at epoch 1 has all 3 partitions"),
        "{summary}"
    );
    // "kadm: classic group franz-group committed 0:159 1:165 2:176, ..."
    let committed: Vec<(String, String)> = summary
        .lines()
        .find_map(|l| l.strip_prefix("kadm: classic group franz-group committed "))
        .and_then(|rest| rest.split(',').next())
        .expect(&summary)
        .split(' ')
        .map(|p| {
            p.split_once(':')
                .map(|(p, o)| (p.to_string(), o.to_string()))
                .unwrap()
        })
        .collect();
    assert_eq!(committed.len(), 3, "{summary}");

    // Every record, key, value and both headers, read from the directory while the server runs.
    let log_dir = k.log_dir().to_str().unwrap();
    let local = k.ok(
        "kafka-console-consumer",
        &[
            "--log-dir",
            log_dir,
            "--topic",
            "franz",
            "--from-beginning",
            "--max-messages",
            "500",
            "--timeout-ms",
            "5000",
            "--property",
            "print.key=true",
            "--property",
            "print.headers=true",
        ],
        None,
    );
    let codecs = ["none", "gzip", "snappy", "lz4", "zstd"];
    let mut expected: Vec<String> = (0..500)
        .map(|i| format!("h:x{i},codec:{}\tk{i}\tv{i}", codecs[i / 100]))
        .collect();
    expected.sort();
    let mut got: Vec<String> = local.lines().map(str::to_string).collect();
    got.sort();
    assert_eq!(got, expected);
    // The batches were stored as the producers compressed them.
    let dumped = k.ok(
        "kafka-dump-log",
        &[
            "--files",
            k.path("franz-0/00000000000000000000.log").to_str().unwrap(),
        ],
        None,
    );
    for codec in codecs {
        assert!(
            dumped.contains(&format!("compresscodec: {codec} ")),
            "{codec}: {dumped}"
        );
    }

    // Both groups' commits (classic, then KIP-848), as the directory shows them: what franz-go
    // read, the end, lag 0.
    for group in ["franz-group", "franz-group-848"] {
        let described = k.ok(
            "kafka-consumer-groups",
            &["--log-dir", log_dir, "--describe", "--group", group],
            None,
        );
        let rows: Vec<Vec<&str>> = described
            .lines()
            .filter(|l| l.starts_with(&format!("{group} ")))
            .map(|l| l.split_whitespace().collect())
            .collect();
        let shown: Vec<(String, String)> = rows
            .iter()
            .map(|cols| (cols[2].to_string(), cols[3].to_string()))
            .collect();
        assert_eq!(shown, committed, "{described}");
        assert!(
            rows.iter().all(|cols| cols[3] == cols[4] && cols[5] == "0"),
            "{described}"
        );
    }
}
