//! Compaction on the embedded log against Kafka 4.3.1's own cleaner: the same input (100,000
//! records over 1,000 keys, then tombstones for 100 of them, over several segments) on a topic
//! with the same configs, once both cleaners have run, reads back as the same records at the
//! same offsets; and after `delete.retention.ms` and one more round, the tombstoned keys are
//! gone from both.

use std::time::{Duration, Instant};

use crate::common::Kafkit;
use crate::common::broker;

/// The topic configs both sides get.
const CONFIGS: [&str; 5] = [
    "cleanup.policy=compact",
    "segment.bytes=1048576",
    "segment.ms=500",
    // A round-trip record in the dirty part is enough to clean again.
    "min.cleanable.dirty.ratio=0.0001",
    "delete.retention.ms=3000",
];

/// Our tool `tool` with `args`, against the broker when `bootstrap` is given, else on `k`'s
/// embedded log; its stdout.
fn run(
    k: &Kafkit,
    bootstrap: Option<&str>,
    tool: &str,
    args: &[&str],
    stdin: Option<&[u8]>,
) -> String {
    let mut all: Vec<&str> = Vec::new();
    if let Some(b) = bootstrap {
        all.extend(["--bootstrap-server", b]);
    }
    all.extend_from_slice(args);
    k.ok(tool, &all, stdin)
}

/// Every record of the topic, as `Offset:N\tkey\tvalue` lines.
fn read_all(k: &Kafkit, bootstrap: Option<&str>, topic: &str) -> String {
    run(
        k,
        bootstrap,
        "kafka-console-consumer",
        &[
            "--topic",
            topic,
            "--from-beginning",
            "--until-end",
            "--formatter-property",
            "print.offset=true",
            "--formatter-property",
            "print.key=true",
        ],
        None,
    )
}

fn produce(k: &Kafkit, bootstrap: Option<&str>, topic: &str, input: &str) {
    run(
        k,
        bootstrap,
        "kafka-console-producer",
        &[
            "--topic",
            topic,
            "--reader-property",
            "parse.key=true",
            "--reader-property",
            "null.marker=NULL",
        ],
        Some(input.as_bytes()),
    );
}

/// Asserts both read the same records at the same offsets, naming the first difference.
fn same(ours: &str, kafka: &str) {
    let first = ours.lines().zip(kafka.lines()).find(|(a, b)| a != b);
    assert!(
        first.is_none() && ours.lines().count() == kafka.lines().count(),
        "ours {} records, Kafka's {}; first difference (ours, Kafka's): {first:?}",
        ours.lines().count(),
        kafka.lines().count()
    );
}

/// Waits (up to a minute) until `read` gives `lines` records; returns them.
fn wait_for_records(what: &str, lines: usize, read: impl Fn() -> String) -> String {
    let start = Instant::now();
    loop {
        let got = read();
        if got.lines().count() == lines {
            return got;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what}: {} records, {lines} expected",
            got.lines().count()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn the_same_records_survive_as_on_kafka() {
    let Some(bootstrap) = broker::try_bootstrap() else {
        return;
    };
    let b = Some(bootstrap.as_str());
    let k = Kafkit::new();
    let topic = broker::unique_topic("compare-compact");
    let mut create = vec!["--create", "--topic", topic.as_str(), "--partitions", "1"];
    for c in CONFIGS {
        create.extend(["--config", c]);
    }
    run(&k, b, "kafka-topics", &create, None);
    run(&k, None, "kafka-topics", &create, None);

    let mut input: String = (0..100_000)
        .map(|i| format!("k{}\tv{i}\n", i % 1000))
        .collect();
    input.extend((0..100).map(|i| format!("k{i}\tNULL\n")));
    // Each side: the input, then after segment.ms one record that rolls the last segment, so
    // that all of the input can be cleaned; ours is cleaned by an alter (a producer's exit
    // cleans only for 100 ms).
    let clean_ours = || {
        run(
            &k,
            None,
            "kafka-configs",
            &[
                "--alter",
                "--entity-type",
                "topics",
                "--entity-name",
                &topic,
                "--add-config",
                "min.cleanable.dirty.ratio=0.0001",
            ],
            None,
        );
    };
    for side in [b, None] {
        produce(&k, side, &topic, &input);
    }
    std::thread::sleep(Duration::from_millis(600));
    for side in [b, None] {
        produce(&k, side, &topic, "roll\tfirst\n");
    }
    clean_ours();
    // Kept: the last record of each of the 900 keys, the 100 tombstones, the roll record.
    let kafka = wait_for_records("Kafka's cleaner", 1001, || read_all(&k, b, &topic));
    let ours = read_all(&k, None, &topic);
    assert_eq!(ours.lines().count(), 1001);
    same(&ours, &kafka);
    assert!(ours.contains("\tk0\tnull\n"), "tombstones are kept for now");

    // Past delete.retention.ms, with something new to clean: the tombstones go.
    std::thread::sleep(Duration::from_millis(3500));
    for side in [b, None] {
        produce(&k, side, &topic, "roll\tsecond\n");
    }
    std::thread::sleep(Duration::from_millis(600));
    for side in [b, None] {
        produce(&k, side, &topic, "roll\tthird\n");
    }
    clean_ours();
    let kafka = wait_for_records("Kafka's cleaner, past the horizon", 902, || {
        read_all(&k, b, &topic)
    });
    let ours = read_all(&k, None, &topic);
    same(&ours, &kafka);
    assert!(!ours.contains("\tnull\n"), "{ours}");
}
