//! `kafka-console-consumer --bootstrap-server` (without `--group`) against a real Kafka 4.3.1
//! broker. Test data comes from the Java console producer of the same jars, and the Java console
//! consumer is the oracle for output.
//!
//! The broker is shared by the tests of this binary, so every test uses its own topics. What
//! needs Kafka's own log cleaner is in `consumer_kafka_only`.
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracles (see `tests/served/main.rs`).

use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::broker::{self, CONSOLE_CONSUMER, java_create_topic, java_produce};
use crate::common::{PATIENCE, sorted, text};

const C: &str = "kafka-console-consumer";

/// A consumer that stops by itself does so well within this; one that does not is killed by
/// the runner at 60 s (`broker::run`), which this stays clear of.
const STOPPED_BY_ITSELF: Duration = Duration::from_secs(45);

/// How long [`tails_new_records`] gives a consumer to print a pair before producing another.
const ONE_TRY: Duration = Duration::from_secs(10);

/// The Java console consumer's stdout.
pub(crate) fn java_consume(args: &[&str]) -> String {
    broker::java_ok(CONSOLE_CONSUMER, args)
}

fn ours(args: &[&str]) -> Output {
    broker::run(C, args, None)
}

pub(crate) fn ours_ok(args: &[&str]) -> String {
    broker::ok(C, args, None)
}

pub(crate) fn values(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("value-{i}")).collect()
}

#[test]
fn from_beginning_with_keys_and_headers_matches_java() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("rc-java");
    java_create_topic(&topic, 3);
    let lines: Vec<String> = (0..30)
        .map(|i| format!("h1:a{i},h2:b\tkey-{}\tvalue-{i}", i % 7))
        .collect();
    java_produce(
        &topic,
        &lines,
        &[
            "--reader-property",
            "parse.key=true",
            "--reader-property",
            "parse.headers=true",
        ],
    );
    let props = [
        "--formatter-property",
        "print.key=true",
        "--formatter-property",
        "print.headers=true",
        "--formatter-property",
        "print.partition=true",
        "--formatter-property",
        "print.offset=true",
    ];
    let mut args = vec![
        "--topic",
        topic.as_str(),
        "--from-beginning",
        "--max-messages",
        "30",
    ];
    args.extend_from_slice(&props);
    let java = java_consume(&args);
    let out = ours(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mine = text(&out.stdout);
    assert_eq!(sorted(&mine), sorted(&java));
    assert_eq!(mine.lines().count(), 30);
    assert!(mine.contains("h1:a0,h2:b"), "{mine}");
    assert!(
        text(&out.stderr).contains("Processed a total of 30 messages"),
        "{}",
        text(&out.stderr)
    );
    // Within one partition the order is the log's; max-messages cuts short.
    let five = ours_ok(&["--topic", &topic, "--from-beginning", "--max-messages", "5"]);
    assert_eq!(five.lines().count(), 5);
}

#[test]
fn compressed_topics_decode() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    for codec in ["gzip", "lz4", "zstd", "snappy"] {
        let topic = broker::unique_topic(&format!("rc-{codec}"));
        java_create_topic(&topic, 1);
        let lines = values(200);
        java_produce(&topic, &lines, &["--compression-codec", codec]);
        let mine = ours_ok(&["--topic", &topic, "--from-beginning", "--until-end"]);
        assert_eq!(mine.lines().collect::<Vec<_>>(), lines, "{codec}");
        // From the middle of a compressed batch: records below the offset are skipped.
        let mid = ours_ok(&[
            "--topic",
            &topic,
            "--partition",
            "0",
            "--offset",
            "101",
            "--max-messages",
            "3",
            "--output",
            "json",
        ]);
        let offsets: Vec<i64> = mid
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("json");
                v["offset"].as_i64().expect("offset")
            })
            .collect();
        assert_eq!(offsets, vec![101, 102, 103], "{codec}");
        assert!(mid.contains("\"value\":\"value-101\""), "{codec}: {mid}");
    }
}

#[test]
fn partition_offset_and_until_end() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("rc-offset");
    java_create_topic(&topic, 2);
    // Distinct keys spread the records over both partitions (murmur2), about 20 each.
    let keyed: Vec<String> = values(40).iter().map(|v| format!("k{v}\t{v}")).collect();
    java_produce(&topic, &keyed, &["--reader-property", "parse.key=true"]);
    let java = java_consume(&[
        "--topic",
        &topic,
        "--partition",
        "1",
        "--offset",
        "3",
        "--max-messages",
        "4",
        "--timeout-ms",
        "20000",
        "--formatter-property",
        "print.offset=true",
    ]);
    assert_eq!(java.lines().count(), 4, "{java}");
    let mine = ours_ok(&[
        "--topic",
        &topic,
        "--partition",
        "1",
        "--offset",
        "3",
        "--max-messages",
        "4",
        "--formatter-property",
        "print.offset=true",
    ]);
    assert_eq!(mine, java);
    // --until-end stops by itself (no --timeout-ms: a consumer that did not stop would be
    // killed at the runner's 60 s), with every record of both partitions.
    let started = Instant::now();
    let all = ours_ok(&["--topic", &topic, "--from-beginning", "--until-end"]);
    assert!(
        started.elapsed() < STOPPED_BY_ITSELF,
        "{:?}",
        started.elapsed()
    );
    let mut expected = values(40);
    expected.sort();
    assert_eq!(sorted(&all), expected);
    // --offset earliest on one partition, and the latest default prints nothing.
    let p0 = ours_ok(&[
        "--topic",
        &topic,
        "--partition",
        "0",
        "--offset",
        "earliest",
        "--until-end",
    ]);
    let p1 = ours_ok(&[
        "--topic",
        &topic,
        "--partition",
        "1",
        "--from-beginning",
        "--until-end",
    ]);
    assert_eq!(p0.lines().count() + p1.lines().count(), 40);
    let none = ours_ok(&["--topic", &topic, "--timeout-ms", "500"]);
    assert_eq!(none, "");
}

#[test]
fn tails_new_records() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("rc-tail");
    java_create_topic(&topic, 1);
    java_produce(&topic, &values(3), &[]);
    let bootstrap = broker::bootstrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin(C))
        .args([
            "--bootstrap-server",
            &bootstrap,
            "--topic",
            &topic,
            "--max-messages",
            "2",
            "--timeout-ms",
            "120000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("consumer starts");
    // The consumer starts at the end: only what is produced now is printed. It gives no sign
    // of having found the end, so the pair (one batch) is produced again until it has printed
    // one: whichever pair it started before, it prints that pair, never the older records.
    let deadline = Instant::now() + PATIENCE;
    loop {
        java_produce(&topic, &["new-1".to_string(), "new-2".to_string()], &[]);
        let produced = Instant::now();
        while child.try_wait().expect("wait").is_none() && produced.elapsed() < ONE_TRY {
            std::thread::sleep(Duration::from_millis(100));
        }
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the consumer never printed new records"
        );
    }
    let out = child.wait_with_output().expect("consumer ends");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "new-1\nnew-2\n");
}

#[test]
fn missing_topic_waits_then_times_out() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("rc-missing");
    let started = Instant::now();
    let out = ours(&["--topic", &topic, "--timeout-ms", "2000"]);
    let took = started.elapsed();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(took >= Duration::from_millis(1900), "{took:?}");
    // Ended by its --timeout-ms, not waiting on for the topic.
    assert!(took < STOPPED_BY_ITSELF, "{took:?}");
    let stderr = text(&out.stderr);
    assert_eq!(stderr.matches("WARN: Topic").count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("Topic '{topic}' does not exist")),
        "{stderr}"
    );
    assert!(
        stderr.contains("Processed a total of 0 messages"),
        "{stderr}"
    );
    assert_eq!(text(&out.stdout), "");
}

/// A name no topic can have ends the consumer at once, as Kafka's consumer ends on
/// InvalidTopicException (the cluster's answer for it is no reason to wait).
#[test]
fn an_invalid_topic_name_fails_at_once() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let out = ours(&["--topic", "bad topic", "--from-beginning"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "Topic name is invalid: 'bad topic' contains one or more characters other than ASCII \
         alphanumerics, '.', '_' and '-'\nProcessed a total of 0 messages\n"
    );
    assert_eq!(text(&out.stdout), "");
}

#[test]
fn read_committed_skips_aborted_transactions() {
    let Some(bootstrap) = broker::try_bootstrap() else {
        return;
    };
    let input = broker::unique_topic("rc-txin");
    let output = broker::unique_topic("rc-txout");
    java_create_topic(&input, 1);
    java_create_topic(&output, 1);
    let lines = values(200);
    java_produce(&input, &lines, &[]);
    // Java's transactional copier, aborting some of its 10-record transactions at random and
    // copying those records again: read_committed sees each input record exactly once.
    let out = broker::java_tool(
        "org.apache.kafka.tools.TransactionalMessageCopier",
        &[
            "--broker-list",
            &bootstrap,
            "--input-topic",
            &input,
            "--input-partition",
            "0",
            "--output-topic",
            &output,
            "--transactional-id",
            &format!("{output}-tx"),
            "--consumer-group",
            &format!("{output}-cg"),
            "--transaction-size",
            "10",
            "--enable-random-aborts",
        ],
    );
    assert!(out.status.success(), "copier: {}", text(&out.stderr));
    let committed = ours_ok(&[
        "--topic",
        &output,
        "--from-beginning",
        "--until-end",
        "--isolation-level",
        "read_committed",
    ]);
    assert_eq!(committed.lines().collect::<Vec<_>>(), lines);
    let java = java_consume(&[
        "--topic",
        &output,
        "--from-beginning",
        "--max-messages",
        "200",
        "--isolation-level",
        "read_committed",
    ]);
    assert_eq!(committed, java);
    // read_uncommitted sees the aborted copies too (unless, rarely, none was aborted).
    let all = ours_ok(&["--topic", &output, "--from-beginning", "--until-end"]);
    assert!(all.lines().count() >= 200);
}
