//! The perf-test tools against the server: ours and Kafka's Java ones, with exact counts.

use crate::common::broker::java_tool;
use crate::common::server::Server;
use crate::common::{Kafkit, text};

#[test]
fn producer_and_consumer_perf_tests_ours_and_javas() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    k.ok(
        "kafka-topics",
        &[
            "--bootstrap-server",
            b,
            "--create",
            "--topic",
            "perf",
            "--partitions",
            "2",
        ],
        None,
    );
    let ours = k.ok(
        "kafka-producer-perf-test",
        &[
            "--bootstrap-server",
            b,
            "--topic",
            "perf",
            "--num-records",
            "3000",
            "--record-size",
            "100",
            "--throughput",
            "-1",
        ],
        None,
    );
    assert!(ours.contains("3000 records sent"), "{ours}");
    let java = java_tool(
        "org.apache.kafka.tools.ProducerPerformance",
        &[
            "--bootstrap-server",
            b,
            "--topic",
            "perf",
            "--num-records",
            "2000",
            "--record-size",
            "100",
            "--throughput",
            "-1",
        ],
    );
    assert!(
        java.status.success(),
        "{}\n{}",
        text(&java.stderr),
        server.stderr()
    );
    assert!(
        text(&java.stdout).contains("2000 records sent"),
        "{}",
        text(&java.stdout)
    );
    // Every record of both, counted on the directory.
    let offsets = k.ok("kafka-get-offsets", &["--topic", "perf"], None);
    let total: i64 = offsets
        .lines()
        .filter_map(|l| l.rsplit(':').next()?.parse::<i64>().ok())
        .sum();
    assert_eq!(total, 5000, "{offsets}");
    // Ours and Java's consumer perf tests read exactly that, through the server's groups.
    let ours = k.ok(
        "kafka-consumer-perf-test",
        &[
            "--bootstrap-server",
            b,
            "--topic",
            "perf",
            "--num-records",
            "5000",
            "--timeout",
            "30000",
        ],
        None,
    );
    let java = java_tool(
        "org.apache.kafka.tools.ConsumerPerformance",
        &[
            "--bootstrap-server",
            b,
            "--topic",
            "perf",
            "--num-records",
            "5000",
            "--timeout",
            "30000",
        ],
    );
    assert!(java.status.success(), "{}", text(&java.stderr));
    for out in [ours, text(&java.stdout)] {
        // The totals line: start, end, MB, MB/sec, records, ...
        let totals = out.lines().nth(1).unwrap_or_default().to_string();
        let records = totals
            .split(", ")
            .nth(4)
            .unwrap_or_default()
            .trim()
            .to_string();
        assert_eq!(records, "5000", "{out}");
    }
}
