//! `kafka-delete-records` on the embedded log: the log start offset moves up and every reader
//! respects it (`kafka-console-consumer --from-beginning`, `kafka-get-offsets --time -2`,
//! `kafka-consumer-groups` lag and resets), segments wholly below it are deleted, it is kept on
//! disk for the next process, a producer writing meanwhile keeps working, deleting the topic
//! forgets it, and retention keeps it coherent. Then a table of bad invocations, each of which
//! changes nothing. `tests/remote/delete_records.rs` checks the output against Kafka's tool.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{Kafkit, text};

const TOOL: &str = "kafka-delete-records";

/// A value long enough that two records fill a 1000-byte segment.
fn value(i: usize) -> String {
    format!("r{i}-{}", "x".repeat(300))
}

/// Topic `topic`, one partition, segments of at most 1000 bytes (Kafka's internal override,
/// without segment.bytes' 1 MiB floor) and no retention, holding `n` records produced one at a
/// time: segments 0, 2, 4, ... of two records each.
fn small_segments(k: &Kafkit, topic: &str, n: usize) {
    k.ok(
        "kafka-topics",
        &[
            "--create",
            "--topic",
            topic,
            "--config",
            "internal.segment.bytes=1000",
            "--config",
            "retention.ms=-1",
        ],
        None,
    );
    for i in 0..n {
        k.produce(topic, &[], format!("{}\n", value(i)).as_bytes());
    }
}

/// The base offsets of the partition's segments, sorted.
fn segments(k: &Kafkit, dir: &str) -> Vec<i64> {
    let mut bases: Vec<i64> = std::fs::read_dir(k.path(dir))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".log").map(|b| b.parse().unwrap())
        })
        .collect();
    bases.sort();
    bases
}

/// Writes Kafka's offset JSON for `entries` into `dir` (not the log dir, which holds only
/// kafkit's files): its path.
fn offsets_file(dir: &Path, name: &str, entries: &[(&str, i32, i64)]) -> String {
    let partitions: Vec<String> = entries
        .iter()
        .map(|(t, p, o)| format!("{{\"topic\":\"{t}\",\"partition\":{p},\"offset\":{o}}}"))
        .collect();
    let path = dir.join(format!("{name}.json"));
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

/// Deletes the records of `topic`'s partition 0 below `offset`, which must succeed with the
/// low watermark `expect`.
fn delete(k: &Kafkit, topic: &str, offset: i64, expect: i64) {
    let dir = tempfile::tempdir().unwrap();
    let file = offsets_file(dir.path(), topic, &[(topic, 0, offset)]);
    let out = k.run(TOOL, &["--offset-json-file", &file], None);
    assert_eq!(
        text(&out.stdout),
        format!(
            "Executing records delete operation\nRecords delete operation completed:\npartition: {topic}-0\tlow_watermark: {expect}\n"
        )
    );
    assert_eq!(text(&out.stderr), "");
    assert_eq!(out.status.code(), Some(0));
}

fn from_beginning(k: &Kafkit, topic: &str) -> String {
    let args = ["--topic", topic, "--from-beginning", "--timeout-ms", "500"];
    k.ok("kafka-console-consumer", &args, None)
}

fn values(range: std::ops::Range<usize>) -> String {
    range.map(|i| value(i) + "\n").collect()
}

fn offsets(k: &Kafkit, topic: &str, time: &str) -> String {
    k.ok(
        "kafka-get-offsets",
        &["--topic", topic, "--time", time],
        None,
    )
}

#[test]
fn readers_start_at_the_new_log_start_and_segments_below_it_go() {
    let k = Kafkit::new();
    small_segments(&k, "t", 10);
    assert_eq!(segments(&k, "t-0"), vec![0, 2, 4, 6, 8]);

    delete(&k, "t", 5, 5);
    // Offset 5 lies in segment 4..6: the two segments below it go, 4 stays.
    assert_eq!(segments(&k, "t-0"), vec![4, 6, 8]);
    assert_eq!(from_beginning(&k, "t"), values(5..10));
    assert_eq!(offsets(&k, "t", "-2"), "t:0:5\n");
    assert_eq!(offsets(&k, "t", "earliest-local"), "t:0:5\n");
    assert_eq!(offsets(&k, "t", "-1"), "t:0:10\n");
    // Kept on disk, in Kafka's checkpoint text, for every later process.
    assert_eq!(
        std::fs::read_to_string(k.path("t-0/log-start-offset")).unwrap(),
        "0\n5\n"
    );
    // An explicit offset in the middle of the log is still readable from the start on.
    let args = [
        "--topic",
        "t",
        "--partition",
        "0",
        "--offset",
        "5",
        "--timeout-ms",
        "500",
    ];
    assert_eq!(k.ok("kafka-console-consumer", &args, None), values(5..10));
    let args = [
        "--topic",
        "t",
        "--partition",
        "0",
        "--offset",
        "4",
        "--timeout-ms",
        "500",
    ];
    // Below it, the offset is out of range: reset to the end as Kafka's consumer does (its
    // auto.offset.reset is latest without --from-beginning), so nothing is printed.
    assert_eq!(k.ok("kafka-console-consumer", &args, None), "");

    // Below the start: nothing moves back.
    delete(&k, "t", 2, 5);
    // The high watermark: every closed segment goes, the active one stays, nothing is read.
    delete(&k, "t", -1, 10);
    assert_eq!(segments(&k, "t-0"), vec![8]);
    assert_eq!(from_beginning(&k, "t"), "");
    assert_eq!(offsets(&k, "t", "-2"), "t:0:10\n");
    k.produce("t", &[], format!("{}\n", value(10)).as_bytes());
    assert_eq!(from_beginning(&k, "t"), values(10..11));
}

/// The row of `kafka-consumer-groups --describe`: CURRENT-OFFSET, LOG-END-OFFSET and LAG.
fn lag_row(k: &Kafkit, group: &str) -> Vec<String> {
    let out = k.ok(
        "kafka-consumer-groups",
        &["--describe", "--group", group],
        None,
    );
    let row = out
        .lines()
        .find(|l| l.starts_with(group))
        .unwrap_or_else(|| panic!("no row in {out}"));
    row.split_whitespace()
        .skip(3)
        .take(3)
        .map(str::to_string)
        .collect()
}

#[test]
fn group_lag_and_resets_respect_the_log_start() {
    let k = Kafkit::new();
    let input: String = (0..20).map(|i| format!("{}\n", value(i))).collect();
    k.produce("g", &[], input.as_bytes());
    let args = [
        "--topic",
        "g",
        "--group",
        "g1",
        "--from-beginning",
        "--max-messages",
        "5",
    ];
    k.ok("kafka-console-consumer", &args, None);
    delete(&k, "g", 12, 12);
    // As Kafka's: the lag is still counted from the committed offset to the log end.
    assert_eq!(lag_row(&k, "g1"), vec!["5", "20", "15"]);
    let reset = |extra: &[&str]| {
        let mut args = vec!["--reset-offsets", "--group", "g1", "--topic", "g"];
        args.extend_from_slice(extra);
        k.run("kafka-consumer-groups", &args, None)
    };
    let earliest = reset(&["--to-earliest"]);
    assert!(
        text(&earliest.stdout).contains("g1              g               0          12"),
        "{}",
        text(&earliest.stdout)
    );
    let below = reset(&["--to-offset", "3"]);
    assert!(
        text(&below.stdout).contains(" 12"),
        "{}",
        text(&below.stdout)
    );
    assert!(
        text(&below.stderr).contains("New offset (3) is lower than earliest offset"),
        "{}",
        text(&below.stderr)
    );
    // The committed offset 5 is gone: the group's next member starts at the log start.
    let args = [
        "--topic",
        "g",
        "--group",
        "g1",
        "--from-beginning",
        "--max-messages",
        "8",
    ];
    assert_eq!(k.ok("kafka-console-consumer", &args, None), values(12..20));
    assert_eq!(lag_row(&k, "g1"), vec!["20", "20", "0"]);
}

#[test]
fn a_producer_writing_meanwhile_keeps_working() {
    let k = Kafkit::new();
    k.produce("c", &[], b"first\n");
    let mut producer = Command::new(env!("CARGO_BIN_EXE_kafka-console-producer"))
        .args(["--topic", "c"])
        .env("KAFKIT_LOG_DIR", k.log_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = producer.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // Pauses past the producer's linger, so that it writes many times.
        for i in 1..=200 {
            writeln!(stdin, "line-{i}").unwrap();
            if i % 10 == 0 {
                std::thread::sleep(std::time::Duration::from_millis(30));
            }
        }
    });
    let files = tempfile::tempdir().unwrap();
    let file = offsets_file(files.path(), "c", &[("c", 0, -1)]);
    let mut starts = Vec::new();
    for _ in 0..8 {
        let out = k.ok(TOOL, &["--offset-json-file", &file], None);
        let start: i64 = out
            .trim_end()
            .rsplit("low_watermark: ")
            .next()
            .unwrap()
            .parse()
            .unwrap();
        starts.push(start);
        // Spreads the deletions over the writing. Whatever the interleaving on a slow machine,
        // the checks below hold: they are on order and on the end, not on timing.
        std::thread::sleep(std::time::Duration::from_millis(40));
    }
    writer.join().unwrap();
    let out = producer.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
    assert_eq!(offsets(&k, "c", "-1"), "c:0:201\n");
    let start: usize = offsets(&k, "c", "-2")
        .trim_end()
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(start as i64 >= *starts.last().unwrap());
    // Every record from the start on, in order: offset i holds line-i.
    let expected: String = (start..201).map(|i| format!("line-{i}\n")).collect();
    assert_eq!(from_beginning(&k, "c"), expected);
}

#[test]
fn a_deleted_topic_forgets_its_start_and_retention_keeps_it_coherent() {
    let k = Kafkit::new();
    small_segments(&k, "d", 10);
    delete(&k, "d", 3, 3);
    assert_eq!(segments(&k, "d-0"), vec![2, 4, 6, 8]);
    // Retention deleting segments moves the start past it: earliest is the first kept record.
    k.ok(
        "kafka-configs",
        &[
            "--alter",
            "--topic",
            "d",
            "--add-config",
            "retention.bytes=1",
        ],
        None,
    );
    assert_eq!(segments(&k, "d-0"), vec![8]);
    assert_eq!(offsets(&k, "d", "-2"), "d:0:8\n");
    delete(&k, "d", 5, 8);
    assert_eq!(from_beginning(&k, "d"), values(8..10));

    k.ok("kafka-topics", &["--delete", "--topic", "d"], None);
    k.ok("kafka-topics", &["--create", "--topic", "d"], None);
    assert!(!k.path("d-0/log-start-offset").exists());
    k.produce("d", &[], b"again\n");
    assert_eq!(offsets(&k, "d", "-2"), "d:0:0\n");
    assert_eq!(from_beginning(&k, "d"), "again\n");
}

#[test]
fn bad_invocations_change_nothing() {
    let k = Kafkit::new();
    small_segments(&k, "b", 4);
    let dir = tempfile::tempdir().unwrap();
    let good = offsets_file(dir.path(), "good", &[("b", 0, 1)]);
    let file = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let missing = dir.path().join("missing.json").display().to_string();
    let dir_path = dir.path().display().to_string();
    let broker_dir = tempfile::tempdir().unwrap();
    std::fs::write(broker_dir.path().join("meta.properties"), "version=1\n").unwrap();
    let broker_dir = broker_dir.path().display().to_string();
    let (too_high, unknown) = (
        offsets_file(dir.path(), "high", &[("b", 0, 5)]),
        offsets_file(dir.path(), "unknown", &[("b", 1, 1), ("nope", 0, 1)]),
    );
    let new_dir = k.path("x").display().to_string();
    let usage = |m: &str| format!("{m} (see kafka-delete-records --help)");
    let cases: Vec<(Vec<&str>, i32, String)> = vec![
        (
            vec!["--log-dir", &new_dir],
            2,
            usage("Missing required argument \"[offset-json-file]\""),
        ),
        (
            vec!["--offset-json-file"],
            2,
            usage("Option offset-json-file requires an argument"),
        ),
        (
            vec!["--offset-json-file", &good, "--offset-json-file", &good],
            2,
            usage(
                "Found multiple arguments for option offset-json-file, but you asked for only one",
            ),
        ),
        (
            vec!["--offset-json-file", &good, "--topic", "b"],
            2,
            usage("topic is not a recognized option"),
        ),
        (
            vec!["--offset-json-file", &good, "--bootstrap-server", "nohost"],
            2,
            usage("Please provide valid host:port like host1:9091,host2:9092"),
        ),
        (
            vec!["--offset-json-file", &missing],
            1,
            format!("Unable to read file {missing}: No such file or directory (os error 2)"),
        ),
        (
            vec!["--offset-json-file", &dir_path],
            1,
            format!("Unable to read file {dir_path}: Is a directory (os error 21)"),
        ),
        (
            vec!["--offset-json-file", &good, "--command-config", &missing],
            1,
            format!(
                "cannot read properties file {missing}: No such file or directory (os error 2)"
            ),
        ),
        (
            vec!["--offset-json-file", &good, "--log-dir", &broker_dir],
            1,
            format!(
                "{broker_dir} holds a Kafka broker's data (meta.properties); kafkit will not use it as its log directory. Choose another directory with --log-dir or KAFKIT_LOG_DIR"
            ),
        ),
    ];
    let json_cases = [
        ("", "The input string is not a valid JSON"),
        ("{\"partitions\":", "The input string is not a valid JSON"),
        ("{\"version\":1}", "Missing partitions field"),
        (
            "{\"partitions\":[],\"version\":3}",
            "Not supported version field value 3",
        ),
        (
            "{\"partitions\":[{\"topic\":\"b\",\"offset\":1}]}",
            "No such field exists: `partition`",
        ),
        (
            "{\"partitions\":[{\"topic\":\"b\",\"partition\":0,\"offset\":\"1\"}]}",
            "Expected `Long` value, received \"1\"",
        ),
        (
            "{\"partitions\":[{\"topic\":\"b\",\"partition\":0,\"offset\":1},{\"topic\":\"b\",\"partition\":0,\"offset\":2}]}",
            "Offset json file contains duplicate topic partitions: b-0",
        ),
    ];
    let json_files: Vec<(String, &str)> = json_cases
        .iter()
        .enumerate()
        .map(|(i, (json, message))| (file(&format!("{i}.json"), json), *message))
        .collect();
    let mut all: Vec<(Vec<&str>, i32, String)> = cases;
    for (path, message) in &json_files {
        all.push((vec!["--offset-json-file", path], 1, message.to_string()));
    }
    let before = (
        segments(&k, "b-0"),
        offsets(&k, "b", "-2"),
        offsets(&k, "b", "-1"),
    );
    for (args, code, message) in &all {
        let out = k.run(TOOL, args, None);
        assert_eq!(
            out.status.code(),
            Some(*code),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stderr), format!("{message}\n"), "{args:?}");
        assert_eq!(text(&out.stdout), "", "{args:?}");
    }
    // Partitions the log refuses: Kafka's lines on stdout, then one line and exit 1.
    for (path, failed) in [(&too_high, "1 of 1"), (&unknown, "2 of 2")] {
        let out = k.run(TOOL, &["--offset-json-file", path], None);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            text(&out.stderr),
            format!("the records of {failed} partition(s) could not be deleted (see above)\n")
        );
        assert!(text(&out.stdout).contains("\terror: org.apache.kafka.common.errors."));
    }
    let after = (
        segments(&k, "b-0"),
        offsets(&k, "b", "-2"),
        offsets(&k, "b", "-1"),
    );
    assert_eq!(before, after);
    assert!(!k.path("b-0/log-start-offset").exists());
    assert!(!k.path("x").exists(), "no log dir was created");
    // Without arguments: the usage, exit 2.
    let out = k.run(TOOL, &[], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--offset-json-file"));
}

/// A delete in a log directory that holds no topics yet fails for each partition and creates
/// nothing (issue 24, item 11): it made the directory a log directory.
#[test]
fn a_new_log_dir_stays_untouched() {
    let k = Kafkit::new();
    let dir = tempfile::tempdir().unwrap();
    let file = offsets_file(dir.path(), "nosuch", &[("nosuch", 0, 1)]);
    let out = k.run(TOOL, &["--offset-json-file", &file], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("partition: nosuch-0\terror: org.apache.kafka.common.errors.UnknownTopicOrPartitionException"),
        "{}",
        text(&out.stdout)
    );
    let entries: Vec<_> = std::fs::read_dir(k.log_dir())
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(entries.is_empty(), "{entries:?}");
}
