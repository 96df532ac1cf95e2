//! `kafka-delete-records --bootstrap-server` against a real Kafka 4.3.1 broker, with Kafka's
//! `DeleteRecordsCommand` from the same jars as the oracle: the two tools run on two topics
//! holding the same records and must print the same lines (up to order), and afterwards
//! `kafka-get-offsets --time -2` and a `--from-beginning` consumer see the new log starts.
//!
//! The broker is shared, so every run names only this test's topics.
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracles (see `tests/served/main.rs`).

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use crate::common::broker;
use crate::common::{sorted, text};

const TOOL: &str = "kafka-delete-records";
const DELETE_RECORDS: &str = "org.apache.kafka.tools.DeleteRecordsCommand";

/// Creates `topic` with 3 partitions holding 10, 5 and 0 records (`p<partition>-<i>`), and
/// waits until the broker's metadata lists them all.
fn create_filled(topic: &str) {
    broker::create_topic(topic, 3);
    let mut records = String::new();
    for (partition, count) in [(0, 10), (1, 5)] {
        for i in 0..count {
            records.push_str(&format!(
                "{{\"value\":\"p{partition}-{i}\",\"partition\":{partition}}}\n"
            ));
        }
    }
    let args = ["--topic", topic, "--input", "json"];
    broker::ok("kafka-console-producer", &args, Some(records.as_bytes()));
    let deadline = Instant::now() + Duration::from_secs(60);
    while broker::ok("kafka-get-offsets", &["--topic", topic], None) != latest(topic) {
        assert!(
            Instant::now() < deadline,
            "{topic} was not fully listed within 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn latest(topic: &str) -> String {
    format!("{topic}:0:10\n{topic}:1:5\n{topic}:2:0\n")
}

/// Writes Kafka's offset JSON for `entries` (topic, partition, offset) into `dir`: its path.
fn offset_file(dir: &Path, name: &str, entries: &[(&str, i32, i64)]) -> String {
    let partitions: Vec<String> = entries
        .iter()
        .map(|(t, p, o)| format!("{{\"topic\":\"{t}\",\"partition\":{p},\"offset\":{o}}}"))
        .collect();
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "{{\"partitions\":[{}],\"version\":1}}",
            partitions.join(",")
        ),
    )
    .unwrap();
    path.display().to_string()
}

fn java(args: &[&str]) -> Output {
    let bootstrap = broker::bootstrap();
    let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
    all.extend_from_slice(args);
    broker::java_tool(DELETE_RECORDS, &all)
}

#[test]
fn deletes_as_java_does_and_readers_start_at_the_new_start() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let ours = broker::unique_topic("delrec-ours");
    let theirs = broker::unique_topic("delrec-java");
    create_filled(&ours);
    create_filled(&theirs);
    let dir = tempfile::tempdir().unwrap();
    // Into the middle of partition 0, the high watermark of partition 1, and past the end of
    // the empty partition 2 (OFFSET_OUT_OF_RANGE).
    let entries = |t| [(t, 0, 4), (t, 1, -1), (t, 2, 1)];
    let java_file = offset_file(dir.path(), "java.json", &entries(theirs.as_str()));
    let our_file = offset_file(dir.path(), "ours.json", &entries(ours.as_str()));
    let java_out = java(&["--offset-json-file", &java_file]);
    let our_out = broker::run(TOOL, &["--offset-json-file", &our_file], None);

    let java_stdout = text(&java_out.stdout);
    let our_stdout = text(&our_out.stdout).replace(&ours, &theirs);
    assert_eq!(sorted(&our_stdout), sorted(&java_stdout), "{our_stdout}");
    let expected_lines = [
        "Executing records delete operation".to_string(),
        "Records delete operation completed:".to_string(),
        format!("partition: {theirs}-0\tlow_watermark: 4"),
        format!("partition: {theirs}-1\tlow_watermark: 5"),
        format!(
            "partition: {theirs}-2\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested offset is not within the range of offsets maintained by the server."
        ),
    ];
    assert_eq!(our_stdout.lines().collect::<Vec<_>>(), expected_lines);
    // Kafka exits 0 after a partition's error; kafkit exits 1 with one more line.
    assert_eq!(java_out.status.code(), Some(0));
    assert_eq!(our_out.status.code(), Some(1));
    assert_eq!(
        text(&our_out.stderr),
        "the records of 1 of 3 partition(s) could not be deleted (see above)\n"
    );

    for topic in [&ours, &theirs] {
        let earliest = broker::ok(
            "kafka-get-offsets",
            &["--topic", topic, "--time", "-2"],
            None,
        );
        assert_eq!(earliest, format!("{topic}:0:4\n{topic}:1:5\n{topic}:2:0\n"));
        let args = ["--topic", topic, "--from-beginning", "--timeout-ms", "3000"];
        let consumed = broker::ok("kafka-console-consumer", &args, None);
        assert_eq!(consumed, "p0-4\np0-5\np0-6\np0-7\np0-8\np0-9\n", "{topic}");
    }
}

#[test]
fn unknown_partitions_fail_at_once_where_java_times_out() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("delrec-unknown");
    create_filled(&topic);
    let missing = broker::unique_topic("delrec-missing");
    let dir = tempfile::tempdir().unwrap();
    let file = offset_file(
        dir.path(),
        "o.json",
        &[(&topic, 7, 1), (&missing, 0, 1), (&topic, 0, 2)],
    );
    // Java's admin client waits for the partitions to appear until its api timeout.
    let config = dir.path().join("admin.properties");
    std::fs::write(
        &config,
        "default.api.timeout.ms=3000\nrequest.timeout.ms=2000\n",
    )
    .unwrap();
    let config = config.display().to_string();
    let java_out = java(&["--offset-json-file", &file, "--command-config", &config]);
    let our_out = broker::run(TOOL, &["--offset-json-file", &file], None);
    let java_stdout = text(&java_out.stdout);
    let timeout = "\terror: org.apache.kafka.common.errors.TimeoutException: ";
    for tp in [format!("{topic}-7"), format!("{missing}-0")] {
        assert!(
            java_stdout.contains(&format!("partition: {tp}{timeout}")),
            "{java_stdout}"
        );
    }
    assert!(java_stdout.contains(&format!("partition: {topic}-0\tlow_watermark: 2\n")));
    let unknown = "error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.";
    let mut expected = vec![
        format!("partition: {missing}-0\t{unknown}"),
        format!("partition: {topic}-0\tlow_watermark: 2"),
        format!("partition: {topic}-7\t{unknown}"),
    ];
    expected.sort();
    let mut lines = vec![
        "Executing records delete operation".to_string(),
        "Records delete operation completed:".to_string(),
    ];
    lines.extend(expected);
    assert_eq!(text(&our_out.stdout), lines.join("\n") + "\n");
    assert_eq!(our_out.status.code(), Some(1));
}

#[test]
fn bad_offset_files_fail_with_javas_message() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("delrec-bad");
    create_filled(&topic);
    let dir = tempfile::tempdir().unwrap();
    let entry =
        |p: i32, o: i64| format!("{{\"topic\":\"{topic}\",\"partition\":{p},\"offset\":{o}}}");
    for (i, json) in [
        "not json".to_string(),
        "{\"version\":1}".to_string(),
        "{\"partitions\":[],\"version\":2}".to_string(),
        "{\"partitions\":{\"topic\":\"t\"}}".to_string(),
        "{\"partitions\":[{\"partition\":0,\"offset\":1}]}".to_string(),
        "{\"partitions\":[{\"topic\":\"t\",\"partition\":\"0\",\"offset\":1}]}".to_string(),
        "{\"partitions\":[{\"topic\":\"t\",\"partition\":0,\"offset\":1.5}]}".to_string(),
        format!("{{\"partitions\":[{},{}]}}", entry(0, 1), entry(0, 2)),
    ]
    .iter()
    .enumerate()
    {
        let path = dir.path().join(format!("{i}.json"));
        std::fs::write(&path, json).unwrap();
        let path = path.display().to_string();
        let theirs = java(&["--offset-json-file", &path]);
        let ours = broker::run(TOOL, &["--offset-json-file", &path], None);
        let java_stderr = text(&theirs.stderr);
        let first = java_stderr.lines().next().unwrap_or("");
        assert_eq!(text(&ours.stderr), format!("{first}\n"), "{json}");
        assert_eq!(theirs.status.code(), Some(1), "{json}");
        assert_eq!(ours.status.code(), Some(1), "{json}");
        assert_eq!(text(&ours.stdout), "", "{json}");
    }
    // Nothing was deleted by any of them.
    let earliest = broker::ok(
        "kafka-get-offsets",
        &["--topic", &topic, "--time", "-2"],
        None,
    );
    assert_eq!(earliest, format!("{topic}:0:0\n{topic}:1:0\n{topic}:2:0\n"));
}
