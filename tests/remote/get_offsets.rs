//! `kafka-get-offsets --bootstrap-server` against a real Kafka 4.3.1 broker, with Kafka's
//! `GetOffsetShell` from the same jars as the oracle, on the records of `common::offsets`: both
//! tools must print the same lines, and those must be the answers `tests/get_offsets.rs` expects
//! of the embedded log.
//!
//! The broker is shared, so every run names only this test's topics (`<prefix>-a`, ...).
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracles (see `tests/served/main.rs`).

use std::process::Output;

use crate::common::broker;
use crate::common::{offsets, text};

const TOOL: &str = "kafka-get-offsets";
const GET_OFFSET_SHELL: &str = "org.apache.kafka.tools.GetOffsetShell";

/// Creates this test's topics and produces `common::offsets`' records: the topic prefix.
fn setup() -> String {
    let prefix = broker::unique_topic("offsets");
    for (topic, partitions) in offsets::TOPICS {
        broker::ok(
            "kafka-topics",
            &[
                "--create",
                "--topic",
                &format!("{prefix}-{topic}"),
                "--partitions",
                &partitions.to_string(),
                "--config",
                offsets::TOPIC_CONFIG,
            ],
            None,
        );
    }
    let (a, b) = offsets::records();
    for (topic, records) in [("a", a), ("b", b)] {
        let topic = format!("{prefix}-{topic}");
        let args = ["--topic", topic.as_str(), "--input", "json"];
        broker::ok("kafka-console-producer", &args, Some(records.as_bytes()));
    }
    // A new topic reaches the broker's metadata cache shortly after CreateTopics answers: wait
    // until every partition is listed, so that both tools see the same topics.
    let partitions: usize = offsets::TOPICS.iter().map(|(_, n)| *n as usize).sum();
    let pattern = format!("{prefix}-.*");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while broker::ok(TOOL, &["--topic", &pattern, "--time", "latest"], None)
        .lines()
        .count()
        < partitions
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the topics of {prefix} did not all appear in the broker's metadata within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    prefix
}

fn java(args: &[&str]) -> Output {
    let bootstrap = broker::bootstrap();
    let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
    all.extend_from_slice(args);
    broker::java_tool(GET_OFFSET_SHELL, &all)
}

/// Both tools succeed with the same stdout: that stdout.
fn same(args: &[&str]) -> String {
    let ours = broker::ok(TOOL, args, None);
    let theirs = java(args);
    assert!(
        theirs.status.success(),
        "Java {args:?}: {}",
        text(&theirs.stderr)
    );
    assert_eq!(ours, text(&theirs.stdout), "{args:?}");
    ours
}

/// The first line of Java's stderr without its `Error occurred: ` prefix (a stack trace may
/// follow it), and Java's exit status.
fn java_error(args: &[&str]) -> (String, Option<i32>) {
    let out = java(args);
    let stderr = text(&out.stderr);
    let first = stderr
        .lines()
        .find(|l| l.starts_with("Error occurred: "))
        .unwrap_or_else(|| panic!("Java {args:?} printed no error: {stderr}"));
    let message = first.trim_start_matches("Error occurred: ");
    // An exception wrapped in another names its class first.
    let message = message.trim_start_matches("org.apache.kafka.tools.TerseException: ");
    (message.to_string(), out.status.code())
}

#[test]
fn times_agree_with_java() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let prefix = setup();
    let ours_only = format!("{prefix}-.*");
    let name = |topic: &str| format!("{prefix}-{topic}");
    for time in [
        "latest",
        "earliest",
        "max-timestamp",
        "1500",
        "1100",
        "4000",
        "6000",
        "earliest-local",
        "latest-tiered",
        // Needs ListOffsets v11: sent in v10's layout.
        "earliest-pending-upload",
    ] {
        let out = same(&["--topic", &ours_only, "--time", time]);
        let expect = if time == "earliest-local" {
            "earliest"
        } else {
            time
        };
        assert_eq!(out, offsets::expected(expect, name), "--time {time}");
    }
}

#[test]
fn filters_and_internal_topics_agree_with_java() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let prefix = setup();
    let (a, b) = (format!("{prefix}-a"), format!("{prefix}-b"));
    let rules = format!("{a}:1-3,{b}:-2");
    assert_eq!(
        same(&["--topic-partitions", &rules]),
        format!("{a}:1:1\n{a}:2:2\n{b}:0:1\n{b}:1:1\n")
    );
    let ours_only = format!("{prefix}-.*");
    assert_eq!(
        same(&[
            "--topic",
            &ours_only,
            "--partitions",
            "0,10",
            "--time",
            "-3"
        ]),
        format!("{a}:0:1\n{b}:0:0\n{b}:10:0\n")
    );
    // Whether or not another test made the broker create it, both tools agree on the
    // internal topic; its log start stays 0.
    let internal = ["--topic", "__consumer_offsets", "--time", "earliest"];
    let ours = broker::run(TOOL, &internal, None);
    let theirs = java(&internal);
    assert_eq!(ours.status.code(), theirs.status.code());
    assert_eq!(text(&ours.stdout), text(&theirs.stdout));
}

#[test]
fn refusals_agree_with_java() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let prefix = setup();
    let a = format!("{prefix}-a");
    let (missing, rule) = (format!("{prefix}-missing"), format!("{a}:x"));
    let internal_only = ["--topic", "__consumer_offsets", "--exclude-internal-topics"];
    let cases: [(&[&str], i32); 6] = [
        (&["--topic", &missing], 1),
        (&internal_only, 1),
        (&["--topic-partitions", &rule, "--topic", &a], 2),
        (&["--topic-partitions", &rule], 2),
        (&["--time", "soon"], 2),
        (&["--partitions", "0-2"], 2),
    ];
    for (args, code) in cases {
        let (message, java_code) = java_error(args);
        assert_eq!(java_code, Some(1), "Java {args:?}");
        let ours = broker::run(TOOL, args, None);
        assert_eq!(ours.status.code(), Some(code), "{args:?}");
        let expect = match code {
            1 => format!("Error occurred: {message}\n"),
            _ => format!("{message} (see {TOOL} --help)\n"),
        };
        assert_eq!(text(&ours.stderr), expect, "{args:?}");
        assert_eq!(text(&ours.stdout), "");
    }
}

#[test]
fn partitions_the_broker_refuses_are_skipped_as_java_skips_them() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let prefix = setup();
    let args = ["--topic", &format!("{prefix}-e"), "--time", "-7"];
    let theirs = java(&args);
    let ours = broker::run(TOOL, &args, None);
    assert_eq!(text(&ours.stdout), text(&theirs.stdout));
    // The same lines, with Java's exception class.
    let mut java_skips: Vec<String> = text(&theirs.stderr)
        .lines()
        .filter(|l| l.starts_with("Skip getting offsets"))
        .map(str::to_string)
        .collect();
    java_skips.sort();
    let stderr = text(&ours.stderr);
    let our_skips: Vec<String> = stderr
        .lines()
        .filter(|l| l.starts_with("Skip getting offsets"))
        .map(str::to_string)
        .collect();
    assert_eq!(java_skips.len(), 2, "{}", text(&theirs.stderr));
    assert_eq!(our_skips, java_skips);
    // Kafka exits 0 after skipping; kafkit exits 1 with one more line.
    assert_eq!(theirs.status.code(), Some(0));
    assert_eq!(ours.status.code(), Some(1));
    assert!(
        stderr.ends_with(
            "Error occurred: the offsets of 2 topic-partition(s) could not be read (see above)\n"
        ),
        "{stderr}"
    );
}
