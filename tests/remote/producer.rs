//! `kafka-console-producer --bootstrap-server` against a real Kafka 4.3.1 broker: what we
//! produce is read back by the Java console consumer from the same jars (the oracle), for every
//! codec, acks setting and input format; keyed records land where Java's producer puts them.
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracles (see `tests/served/main.rs`).

use std::process::Output;
use std::time::Instant;

use crate::common::broker::{self, CONSOLE_CONSUMER, java_create_topic, java_produce};
use crate::common::{sorted, text};

const P: &str = "kafka-console-producer";

/// Runs our producer on `input`.
fn produce(topic: &str, args: &[&str], input: &str) -> Output {
    broker::kafkit(P)
        .args(["--topic", topic])
        .args(args)
        .write_stdin(input.as_bytes().to_vec())
        .output()
        .expect("kafka-console-producer runs")
}

fn produce_ok(topic: &str, args: &[&str], input: &str) {
    let out = produce(topic, args, input);
    assert!(
        out.status.success(),
        "producer {args:?} failed: {}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(text(&out.stdout), "", "a successful produce prints nothing");
    assert_eq!(text(&out.stderr), "", "a successful produce prints nothing");
}

/// The Java console consumer: the first `n` records of `topic`, one line each.
fn java_consume(topic: &str, n: usize, props: &[&str]) -> String {
    let n = n.to_string();
    let mut args = vec![
        "--topic",
        topic,
        "--from-beginning",
        "--max-messages",
        n.as_str(),
        "--timeout-ms",
        "30000",
    ];
    for p in props {
        args.extend(["--formatter-property", p]);
    }
    broker::java_ok(CONSOLE_CONSUMER, &args)
}

#[test]
fn keys_and_headers_read_back_by_java() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("rp-kh");
    java_create_topic(&topic, 1);
    let input = "h1:v1,h2:v2\tk1\tfirst value\nh3:x\tk2\tsecond\nh4:\tk3\tempty header value\n";
    produce_ok(
        &topic,
        &[
            "--reader-property",
            "parse.key=true",
            "--reader-property",
            "parse.headers=true",
        ],
        input,
    );
    let got = java_consume(&topic, 3, &["print.key=true", "print.headers=true"]);
    assert_eq!(
        got,
        "h1:v1,h2:v2\tk1\tfirst value\nh3:x\tk2\tsecond\nh4:\tk3\tempty header value\n"
    );
}

#[test]
fn every_codec_is_readable_by_java() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let lines: String = (0..200)
        .map(|i| format!("line {i} {}\n", "x".repeat(i % 50)))
        .collect();
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let topic = broker::unique_topic(&format!("rp-{codec}"));
        java_create_topic(&topic, 1);
        // A small batch size: several batches in one flush, each compressed on its own.
        produce_ok(
            &topic,
            &["--compression-codec", codec, "--batch-size", "1024"],
            &lines,
        );
        assert_eq!(java_consume(&topic, 200, &[]), lines, "codec {codec}");
    }
}

#[test]
fn keys_land_on_the_partition_java_picks() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let ours = broker::unique_topic("rp-part-ours");
    let java = broker::unique_topic("rp-part-java");
    java_create_topic(&ours, 7);
    java_create_topic(&java, 7);
    let input: String = (0..50).map(|i| format!("key-{i}\tvalue {i}\n")).collect();
    let key = ["--reader-property", "parse.key=true"];
    produce_ok(&ours, &key, &input);
    java_produce(&java, &input.lines().collect::<Vec<_>>(), &key);
    let props = ["print.key=true", "print.partition=true"];
    let (a, b) = (
        java_consume(&ours, 50, &props),
        java_consume(&java, 50, &props),
    );
    assert_eq!(sorted(&a), sorted(&b));
    // Seven partitions, fifty keys: the records really are spread out.
    assert!(a.lines().any(|l| l.starts_with("Partition:6\t")), "{a}");
}

#[test]
fn acks_0_and_1_and_sync() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    for args in [
        &["--request-required-acks", "0"][..],
        &["--request-required-acks", "1"],
        &["--command-property", "acks=1"],
        &["--request-required-acks", "all", "--sync"],
        &["--command-property", "enable.idempotence=false"],
    ] {
        let topic = broker::unique_topic("rp-acks");
        java_create_topic(&topic, 3);
        let input: String = (0..30).map(|i| format!("v{i}\n")).collect();
        produce_ok(&topic, args, &input);
        assert_eq!(
            sorted(&java_consume(&topic, 30, &[])),
            sorted(&input),
            "{args:?}"
        );
    }
}

#[test]
fn json_input_with_partition_and_timestamp() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("rp-json");
    // The timestamps are years old: retention off, or the embedded log (behind our server)
    // removes them on append, as a broker's retention thread does within minutes.
    let out = broker::java_topics(&[
        "--create",
        "--topic",
        &topic,
        "--partitions",
        "3",
        "--config",
        "retention.ms=-1",
    ]);
    assert!(out.status.success(), "create: {}", text(&out.stderr));
    let input = concat!(
        r#"{"partition":2,"timestamp":1700000000123,"key":"k","value":"v","headers":[["h","x"]]}"#,
        "\n",
        r#"{"partition":1,"timestamp":1600000000000,"value":"w"}"#,
        "\n",
    );
    produce_ok(&topic, &["--input", "json"], input);
    let got = java_consume(
        &topic,
        2,
        &[
            "print.partition=true",
            "print.timestamp=true",
            "print.key=true",
            "print.headers=true",
        ],
    );
    assert_eq!(
        sorted(&got),
        vec![
            "CreateTime:1600000000000\tPartition:1\tNO_HEADERS\tnull\tw",
            "CreateTime:1700000000123\tPartition:2\th:x\tk\tv",
        ]
    );
}

#[test]
fn many_batches_and_flushes_in_order() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("rp-many");
    java_create_topic(&topic, 1);
    let input: String = (0..20000)
        .map(|i| format!("record number {i:06}\n"))
        .collect();
    produce_ok(&topic, &["--timeout", "0"], &input);
    assert_eq!(java_consume(&topic, 20000, &[]), input);
}

#[test]
fn missing_topic_fails_at_once_with_one_line() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("rp-missing");
    let start = Instant::now();
    let out = produce(&topic, &[], "a\n");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("Topic '{topic}' does not exist")),
        "{err}"
    );
    // At once (after the console's 1.5 s request timeout at most), not after Kafka's 60 s
    // max.block.ms: half of that leaves a loaded machine plenty.
    assert!(start.elapsed().as_secs() < 30, "took {:?}", start.elapsed());
    // Without input nothing is sent, so nothing fails.
    let out = produce(&topic, &[], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn too_large_record_is_refused_by_the_broker() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("rp-large");
    let out = broker::java_topics(&[
        "--create",
        "--topic",
        &topic,
        "--config",
        "max.message.bytes=1000",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = produce(&topic, &[], &format!("{}\n", "y".repeat(5000)));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&format!("topic {topic}")), "{err}");
}

/// The shared broker's data directory holding `topic`'s partition 0.
fn partition_dir(topic: &str) -> std::path::PathBuf {
    broker::try_log_dir()
        .expect("the shared broker's data directory")
        .join(format!("{topic}-0"))
}

#[test]
fn idempotent_by_default_and_not_with_acks_1() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    for (args, idempotent) in [
        (&[][..], true),
        (&["--request-required-acks", "1"][..], false),
    ] {
        let topic = broker::unique_topic("rp-idem");
        java_create_topic(&topic, 1);
        let input: String = (0..300).map(|i| format!("{i}\n")).collect();
        // Small batches: several requests in a row for the partition, sequences continuing.
        produce_ok(&topic, &[args, &["--batch-size", "1000"]].concat(), &input);
        let log = partition_dir(&topic).join("00000000000000000000.log");
        let out = broker::java_tool(
            "org.apache.kafka.tools.DumpLogSegments",
            &["--files", log.to_str().expect("utf-8 path")],
        );
        let dump = text(&out.stdout);
        let batches: Vec<&str> = dump
            .lines()
            .filter(|l| l.starts_with("baseOffset:"))
            .collect();
        assert!(batches.len() > 1, "{dump}");
        let mut next_sequence = 0;
        for b in &batches {
            if idempotent {
                assert!(!b.contains("producerId: -1 "), "{b}");
                assert!(
                    b.contains(&format!("baseSequence: {next_sequence} ")),
                    "{b}"
                );
                let count: i32 = b
                    .split(" count: ")
                    .nth(1)
                    .and_then(|r| r.split(' ').next())
                    .and_then(|c| c.parse().ok())
                    .expect("count");
                next_sequence += count;
            } else {
                assert!(b.contains("producerId: -1 "), "{b}");
                assert!(b.contains("baseSequence: -1 "), "{b}");
            }
        }
    }
}

#[test]
fn pipelined_requests_keep_order_at_every_in_flight_limit() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    // Small batches, so that each run keeps many requests in flight (or, at 1, none overlap).
    let input: String = (0..30000)
        .map(|i| format!("pipelined record {i:06}\n"))
        .collect();
    for (in_flight, extra) in [
        ("1", &[][..]),
        ("5", &[][..]),
        // More than 5 only without idempotence, as in Kafka.
        ("20", &["--request-required-acks", "1"][..]),
    ] {
        let topic = broker::unique_topic("rp-inflight");
        java_create_topic(&topic, 2);
        let property = format!("max.in.flight.requests.per.connection={in_flight}");
        let args = [
            &["--batch-size", "2000", "--command-property", &property][..],
            extra,
        ]
        .concat();
        produce_ok(&topic, &args, &input);
        let got = java_consume(&topic, 30000, &["print.partition=true"]);
        let mut by_partition: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for l in got.lines() {
            let (partition, value) = l.split_once('\t').expect("Partition:N<TAB>value");
            by_partition.entry(partition).or_default().push(value);
        }
        // Every line once, and each partition's lines in input order.
        for (partition, values) in &by_partition {
            assert!(
                values.windows(2).all(|w| w[0] < w[1]),
                "in flight {in_flight}: {partition} out of order"
            );
        }
        let mut all: Vec<&str> = by_partition.into_values().flatten().collect();
        all.sort_unstable();
        let want: Vec<&str> = input.lines().collect();
        assert_eq!(all, want, "in flight {in_flight}: lost or duplicated lines");
    }
    // Idempotence allows at most 5 requests in flight (the broker remembers 5 batches).
    let topic = broker::unique_topic("rp-inflight");
    java_create_topic(&topic, 1);
    let out = produce(
        &topic,
        &[
            "--command-property",
            "max.in.flight.requests.per.connection=6",
            "--command-property",
            "enable.idempotence=true",
        ],
        "a\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr).trim(),
        "Must set max.in.flight.requests.per.connection to at most 5 to use the idempotent producer."
    );
}

#[test]
fn bulk_batches_stay_within_the_topics_max_message_bytes() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    // Bulk input grows batches past batch.size, but never past what the topic accepts.
    let topic = broker::unique_topic("rp-bulk-small");
    let out = broker::java_topics(&[
        "--create",
        "--topic",
        &topic,
        "--partitions",
        "1",
        "--config",
        "max.message.bytes=20000",
    ]);
    assert!(out.status.success(), "create: {}", text(&out.stderr));
    let input: String = (0..20_000).map(|i| format!("{i:0>100}\n")).collect();
    produce_ok(&topic, &[], &input);
    let got = broker::kafkit("kafka-console-consumer")
        .args(["--topic", &topic, "--from-beginning", "--until-end"])
        .output()
        .unwrap();
    assert!(got.status.success(), "{}", text(&got.stderr));
    assert_eq!(text(&got.stdout), input);
    // An explicit batch.size is kept as given, also for bulk input.
    let topic = broker::unique_topic("rp-bulk-given");
    java_create_topic(&topic, 1);
    produce_ok(&topic, &["--batch-size", "4096"], &input);
    assert_eq!(java_consume(&topic, 20_000, &[]), input);
}

/// Record counts of the batches in a partition's first segment, in order.
fn batch_record_counts(segment: &std::path::Path) -> Vec<i32> {
    let bytes = std::fs::read(segment).unwrap_or_else(|e| panic!("{}: {e}", segment.display()));
    kafkit::record::BatchIter::new(&bytes)
        .map(|batch| {
            kafkit::record::BatchHeader::parse(batch.unwrap())
                .unwrap()
                .records_count
        })
        .collect()
}

/// The producer's one accumulator cuts the same input into the same record batches on the
/// embedded log and on a cluster: the same partitions, the same boundaries.
#[test]
fn the_same_input_makes_the_same_batches_on_both_backends() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("rp-batches");
    let out = broker::java_topics(&["--create", "--topic", &topic, "--partitions", "3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Timestamps given, since a record's size depends on its distance from the batch's first
    // (recent ones, or retention would remove them).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let input: String = (0..3000)
        .map(|i| {
            format!(
                "{{\"key\":\"k{}\",\"value\":\"value-{i:04}-{}\",\"timestamp\":{}}}\n",
                i % 7,
                "v".repeat(i % 50),
                now + i as i64
            )
        })
        .collect();
    // A given batch.size and a linger longer than the run: the boundaries depend on the
    // input alone.
    let args = [
        "--topic",
        &topic,
        "--input",
        "json",
        "--batch-size",
        "4096",
        "--timeout",
        "60000",
    ];
    broker::kafkit("kafka-console-producer")
        .args(args)
        .write_stdin(input.clone())
        .assert()
        .success();
    let local = crate::common::Kafkit::new();
    local.ok(
        "kafka-topics",
        &["--create", "--topic", &topic, "--partitions", "3"],
        None,
    );
    local.ok("kafka-console-producer", &args, Some(input.as_bytes()));
    let broker_data = partition_dir(&topic).parent().unwrap().to_path_buf();
    let mut total = 0;
    for p in 0..3 {
        let segment = format!("{topic}-{p}/00000000000000000000.log");
        let remote = batch_record_counts(&broker_data.join(&segment));
        let local = batch_record_counts(&local.path(&segment));
        assert!(remote.len() > 1, "partition {p}: {remote:?}");
        assert_eq!(local, remote, "partition {p}");
        total += remote.iter().sum::<i32>();
    }
    assert_eq!(total, 3000);
}
