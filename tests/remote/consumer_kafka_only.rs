//! `kafka-console-consumer --bootstrap-server` on what only a real Kafka broker does, so these
//! run in the `remote` binary only: Kafka's own log cleaner (the embedded log's is compared with
//! it in `compaction_vs_kafka`).

use std::time::{Duration, Instant};

use crate::common::broker::{self, java_produce};
use crate::common::text;
use crate::consumer::{java_consume, ours_ok};

#[test]
fn until_end_stops_on_a_compacted_topic() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("rc-compact");
    let out = broker::java_topics(&[
        "--create",
        "--topic",
        &topic,
        "--partitions",
        "1",
        "--config",
        "cleanup.policy=compact",
        "--config",
        "segment.ms=100",
        "--config",
        "min.cleanable.dirty.ratio=0.01",
        "--config",
        "min.compaction.lag.ms=0",
    ]);
    assert!(out.status.success(), "create: {}", text(&out.stderr));
    // Five versions of ten keys; then, after segment.ms, one more record rolls the segment so
    // that the first one can be cleaned.
    let lines: Vec<String> = (0..50)
        .map(|i| format!("k{}\tv{}-{}", i % 10, i % 10, i / 10))
        .collect();
    java_produce(&topic, &lines, &["--property", "parse.key=true"]);
    std::thread::sleep(Duration::from_millis(300));
    java_produce(
        &topic,
        &["k0\tlast".to_string()],
        &["--property", "parse.key=true"],
    );
    let args = [
        "--topic",
        topic.as_str(),
        "--from-beginning",
        "--until-end",
        "--formatter-property",
        "print.offset=true",
        "--formatter-property",
        "print.key=true",
    ];
    let start = Instant::now();
    let compacted = loop {
        let got = ours_ok(&args);
        if got.lines().count() < 51 {
            break got;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "the log cleaner never compacted {topic}"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    // Offsets have gaps now; --until-end still stopped by itself, with the latest value of
    // every key, and the same records as Java's consumer reads.
    let rows: Vec<&str> = compacted.lines().collect();
    for k in 1..10 {
        let row = format!("k{k}\tv{k}-4");
        assert!(rows.iter().any(|r| r.ends_with(&row)), "{row}: {compacted}");
    }
    assert!(rows.last().unwrap().ends_with("k0\tlast"), "{compacted}");
    let java = java_consume(&[
        "--topic",
        &topic,
        "--from-beginning",
        "--max-messages",
        &rows.len().to_string(),
        "--formatter-property",
        "print.offset=true",
        "--formatter-property",
        "print.key=true",
    ]);
    assert_eq!(compacted, java);
}
