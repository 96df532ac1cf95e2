//! `kafka-topics` on the embedded log, as a user types it.

use crate::common;

use common::Kafkit;

const T: &str = "kafka-topics";

fn topic_id(k: &Kafkit, topic: &str) -> String {
    let out = k.ok(T, &["--describe", "--topic", topic], None);
    let line = out.lines().next().unwrap();
    line.split('\t')
        .find_map(|f| f.strip_prefix("TopicId: "))
        .unwrap()
        .to_string()
}

#[test]
fn quickstart_create_list_describe() {
    let k = Kafkit::new();
    let out = k.ok(
        T,
        &[
            "--create",
            "--if-not-exists",
            "--topic",
            "orders-demo",
            "--partitions",
            "3",
            "--replication-factor",
            "1",
        ],
        None,
    );
    assert_eq!(out, "Created topic orders-demo.\n");
    assert_eq!(k.ok(T, &["--list"], None), "orders-demo\n");
    let id = topic_id(&k, "orders-demo");
    assert_eq!(id.len(), 22);
    let expected = format!(
        "Topic: orders-demo\tTopicId: {id}\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: \n\
         \tTopic: orders-demo\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: \tLastKnownElr: \n\
         \tTopic: orders-demo\tPartition: 1\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: \tLastKnownElr: \n\
         \tTopic: orders-demo\tPartition: 2\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: \tLastKnownElr: \n"
    );
    assert_eq!(
        k.ok(T, &["--describe", "--topic", "orders-demo"], None),
        expected
    );
    // Kafka's on-disk layout.
    for p in 0..3 {
        let dir = k.path(&format!("orders-demo-{p}"));
        assert!(dir.join("00000000000000000000.log").exists());
        let meta = std::fs::read_to_string(dir.join("partition.metadata")).unwrap();
        assert_eq!(meta, format!("version: 0\ntopic_id: {id}\n"));
    }
    // --if-not-exists on an existing topic: silent success.
    assert_eq!(
        k.ok(
            T,
            &["--create", "--if-not-exists", "--topic", "orders-demo"],
            None
        ),
        ""
    );
    let err = k.fails(T, &["--create", "--topic", "orders-demo"], None, 1);
    assert!(err.contains("Topic 'orders-demo' already exists."), "{err}");
}

#[test]
fn configs_are_validated_and_shown() {
    let k = Kafkit::new();
    k.ok(
        T,
        &[
            "--create",
            "--topic",
            "a",
            "--config",
            "retention.ms=1000",
            "--config",
            "max.message.bytes = 2000",
        ],
        None,
    );
    k.ok(T, &["--create", "--topic", "b"], None);
    let out = k.ok(T, &["--describe", "--topic", "a"], None);
    assert!(out.starts_with("Topic: a\t"));
    // In the order of the HashMap Java's tool keeps them in.
    assert!(
        out.lines()
            .next()
            .unwrap()
            .ends_with("Configs: retention.ms=1000,max.message.bytes=2000"),
        "{out}"
    );
    assert_eq!(
        k.ok(T, &["--describe", "--topics-with-overrides"], None)
            .lines()
            .count(),
        1
    );
    let err = k.fails(
        T,
        &["--create", "--topic", "c", "--config", "no.such=1"],
        None,
        1,
    );
    assert!(err.contains("Unknown topic config name: no.such"), "{err}");
    let err = k.fails(
        T,
        &["--create", "--topic", "c", "--config", "segment.bytes=12"],
        None,
        1,
    );
    assert!(
        err.contains("Invalid value 12 for configuration segment.bytes"),
        "{err}"
    );
    let err = k.fails(
        T,
        &["--create", "--topic", "c", "--config", "retention.ms"],
        None,
        1,
    );
    assert!(err.contains("must be in the format \"key=val\""), "{err}");
    let err = k.fails(
        T,
        &[
            "--create",
            "--topic",
            "c",
            "--config",
            "cleanup.policy=Compact",
        ],
        None,
        1,
    );
    assert!(
        err.contains(
            "Invalid value Compact for configuration cleanup.policy: String must be one of: compact, delete"
        ),
        "{err}"
    );
    assert_eq!(k.ok(T, &["--list"], None), "a\nb\n");
}

#[test]
fn topic_is_a_regex_except_on_create() {
    let k = Kafkit::new();
    for t in ["aXb", "a.b", "other"] {
        k.ok(T, &["--create", "--topic", t], None);
    }
    assert_eq!(k.ok(T, &["--list", "--topic", "a.b"], None), "a.b\naXb\n");
    assert_eq!(
        k.ok(T, &["--list", "--topic", "a.b,other"], None),
        "a.b\naXb\nother\n"
    );
    assert_eq!(k.ok(T, &["--list", "--topic", "nothing"], None), "\n");
    let err = k.fails(T, &["--describe", "--topic", "nothing"], None, 1);
    assert!(
        err.contains("Topic 'nothing' does not exist as expected"),
        "{err}"
    );
    assert_eq!(
        k.ok(
            T,
            &["--describe", "--topic", "nothing", "--if-exists"],
            None
        ),
        ""
    );
    k.ok(T, &["--delete", "--topic", "a.*"], None);
    assert_eq!(k.ok(T, &["--list"], None), "other\n");
    assert!(!k.path("aXb-0").exists());
}

#[test]
fn alter_increases_partitions_only() {
    let k = Kafkit::new();
    k.ok(T, &["--create", "--topic", "t", "--partitions", "2"], None);
    assert_eq!(
        k.ok(T, &["--alter", "--topic", "t", "--partitions", "4"], None),
        ""
    );
    assert!(
        k.ok(T, &["--describe", "--topic", "t"], None)
            .contains("PartitionCount: 4")
    );
    let err = k.fails(
        T,
        &["--alter", "--topic", "t", "--partitions", "3"],
        None,
        1,
    );
    assert!(
        err.contains("The topic t currently has 4 partition(s); 3 would not be an increase."),
        "{err}"
    );
    let err = k.fails(
        T,
        &["--alter", "--topic", "t", "--partitions", "4"],
        None,
        1,
    );
    assert!(err.contains("Topic already has 4 partition(s)."), "{err}");
    let err = k.fails(T, &["--alter", "--topic", "t"], None, 2);
    assert!(
        err.contains("Missing required argument \"[partitions]\""),
        "{err}"
    );
    let err = k.fails(
        T,
        &["--alter", "--topic", "missing", "--partitions", "5"],
        None,
        1,
    );
    assert!(
        err.contains("Topic 'missing' does not exist as expected"),
        "{err}"
    );
    assert_eq!(
        k.ok(
            T,
            &[
                "--alter",
                "--topic",
                "missing",
                "--partitions",
                "5",
                "--if-exists"
            ],
            None
        ),
        ""
    );
}

#[test]
fn describe_filters() {
    let k = Kafkit::new();
    k.ok(T, &["--create", "--topic", "t", "--partitions", "2"], None);
    k.ok(
        T,
        &[
            "--create",
            "--topic",
            "strict",
            "--config",
            "min.insync.replicas=2",
        ],
        None,
    );
    assert_eq!(
        k.ok(T, &["--describe", "--under-replicated-partitions"], None),
        ""
    );
    assert_eq!(
        k.ok(T, &["--describe", "--unavailable-partitions"], None),
        ""
    );
    let at_min = k.ok(T, &["--describe", "--at-min-isr-partitions"], None);
    assert_eq!(at_min.lines().count(), 2, "{at_min}");
    assert!(at_min.lines().all(|l| l.starts_with("\tTopic: t\t")));
    let under = k.ok(T, &["--describe", "--under-min-isr-partitions"], None);
    assert_eq!(under.lines().count(), 1);
    assert!(under.starts_with("\tTopic: strict\tPartition: 0"));
}

#[test]
fn create_errors() {
    let k = Kafkit::new();
    let err = k.fails(
        T,
        &["--create", "--topic", "t", "--replication-factor", "3"],
        None,
        1,
    );
    assert!(
        err.contains("Unable to replicate the partition 3 time(s)"),
        "{err}"
    );
    let err = k.fails(
        T,
        &["--create", "--topic", "t", "--partitions", "0"],
        None,
        1,
    );
    assert!(
        err.contains("The partitions must be greater than 0"),
        "{err}"
    );
    let err = k.fails(T, &["--create", "--topic", "bad/name"], None, 1);
    assert!(err.contains("Topic name is invalid"), "{err}");
    let err = k.fails(
        T,
        &["--create", "--topic", "t", "--partitions", "abc"],
        None,
        2,
    );
    assert!(
        err.contains("Cannot parse argument 'abc' of option partitions"),
        "{err}"
    );
    let err = k.fails(T, &["--create", "--partitions", "1"], None, 2);
    assert!(
        err.contains("Missing required argument \"[topic]\""),
        "{err}"
    );
    let err = k.fails(T, &["--create", "--list", "--topic", "t"], None, 2);
    assert!(
        err.contains("Command must include exactly one action"),
        "{err}"
    );
    let err = k.fails(T, &["--list", "--partitions", "3"], None, 2);
    assert!(
        err.contains("Option \"[partitions]\" can't be used with option \"[list]\""),
        "{err}"
    );
    let err = k.fails(T, &["--list", "--bogus"], None, 2);
    assert!(err.contains("bogus is not a recognized option"), "{err}");
    let err = k.fails(
        T,
        &["--create", "--topic", "t", "--replica-assignment", "0:0"],
        None,
        1,
    );
    assert!(err.contains("duplicate entries"), "{err}");
    k.ok(
        T,
        &["--create", "--topic", "ra", "--replica-assignment", "0,0,0"],
        None,
    );
    assert!(
        k.ok(T, &["--describe", "--topic", "ra"], None)
            .contains("PartitionCount: 3")
    );
    // A dot or underscore warns on stderr, and colliding names are refused.
    let out = k.run(T, &["--create", "--topic", "a.b"], None);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("WARNING: Due to limitations in metric names")
    );
    let err = k.fails(T, &["--create", "--topic", "a_b"], None, 1);
    assert!(err.contains("collides with existing topic: a.b"), "{err}");
    assert_eq!(k.ok(T, &["--list"], None), "a.b\nra\n");
}

#[test]
fn version_help_and_no_args() {
    let k = Kafkit::new();
    let out = k.ok(T, &["--version"], None);
    assert!(out.starts_with("4.3.1 (kafkit "), "{out}");
    assert!(k.ok(T, &["--help"], None).contains("--bootstrap-server"));
    let err = k.fails(T, &[], None, 2);
    assert!(err.contains("--create"));
}

#[test]
fn log_dir_safety() {
    let k = Kafkit::new();
    std::fs::write(k.path("meta.properties"), "node.id=1\n").unwrap();
    let err = k.fails(T, &["--list"], None, 1);
    assert!(err.contains("meta.properties"), "{err}");
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("notes.txt"), "hello").unwrap();
    let out = k
        .cmd(T)
        .args(["--list", "--log-dir"])
        .arg(other.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a kafkit log directory"));
    assert_eq!(
        std::fs::read_dir(other.path()).unwrap().count(),
        1,
        "nothing written"
    );
    let err = k.fails(
        T,
        &["--list", "--bootstrap-server", "localhost:9092"],
        None,
        1,
    );
    assert!(
        err.contains("omit --bootstrap-server to use the embedded log"),
        "{err}"
    );
}

#[test]
fn damaged_metadata_is_a_clear_error() {
    let k = Kafkit::new();
    k.ok(T, &["--create", "--topic", "t"], None);
    std::fs::write(k.path("topics/t.properties"), "garbage\n").unwrap();
    let err = k.fails(T, &["--describe", "--topic", "t"], None, 1);
    assert!(err.contains("is damaged"), "{err}");
}

#[test]
fn admin_commands_apply_retention() {
    let k = Kafkit::new();
    k.ok(
        T,
        &[
            "--create",
            "--topic",
            "short",
            "--config",
            "retention.ms=500",
        ],
        None,
    );
    k.ok(
        "kafka-console-producer",
        &["--topic", "short"],
        Some(b"old-1\nold-2\n"),
    );
    std::thread::sleep(std::time::Duration::from_millis(800));
    k.ok(T, &["--describe", "--topic", "short"], None);
    let out = k.ok(
        "kafka-console-consumer",
        &[
            "--topic",
            "short",
            "--from-beginning",
            "--timeout-ms",
            "300",
            "--formatter-property",
            "print.offset=true",
        ],
        None,
    );
    assert_eq!(out, "", "expired records are gone");
    k.ok(
        "kafka-console-producer",
        &["--topic", "short"],
        Some(b"new\n"),
    );
    let out = k.ok(
        "kafka-console-consumer",
        &[
            "--topic",
            "short",
            "--from-beginning",
            "--max-messages",
            "1",
            "--formatter-property",
            "print.offset=true",
        ],
        None,
    );
    assert_eq!(out, "Offset:2\tnew\n", "offsets continue after retention");
}

/// A describe is a query: it does not wait for (or warn about) a writer that holds a
/// partition, which applies retention itself after its appends.
#[test]
fn describe_does_not_wait_for_a_writer() {
    use kafkit::local::lock::{FileLock, LockMode};
    let k = Kafkit::new();
    k.ok(
        T,
        &[
            "--create",
            "--topic",
            "busy",
            "--config",
            "retention.ms=500",
        ],
        None,
    );
    k.ok(
        "kafka-console-producer",
        &["--topic", "busy"],
        Some(b"a\nb\n"),
    );
    let partition = k.path("busy-0");
    let held = FileLock::acquire(&partition.join(".lock"), LockMode::Exclusive).unwrap();
    let started = std::time::Instant::now();
    let out = k.run(T, &["--describe", "--topic", "busy"], None);
    let waited = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.is_empty(),
        "no warning while a writer holds the partition: {stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Topic: busy"));
    // The lock timeout is 30 s: a describe that waited for it took at least that long.
    assert!(
        waited.as_secs() < 25,
        "the describe waited {waited:?} for the writer"
    );
    drop(held);
}

#[test]
fn output_json_and_table() {
    let k = Kafkit::new();
    k.ok(
        T,
        &[
            "--create",
            "--topic",
            "a",
            "--partitions",
            "2",
            "--config",
            "retention.ms=1000000",
        ],
        None,
    );
    k.ok(T, &["--create", "--topic", "b"], None);
    let list: serde_json::Value =
        serde_json::from_str(&k.ok(T, &["--list", "--output", "json"], None)).unwrap();
    assert_eq!(list, serde_json::json!({"topics": ["a", "b"]}));
    let desc: serde_json::Value =
        serde_json::from_str(&k.ok(T, &["--describe", "--topic", "a", "--output", "json"], None))
            .unwrap();
    let a = &desc["topics"][0];
    assert_eq!(a["name"], "a");
    assert_eq!(a["topicId"].as_str().unwrap().len(), 22);
    assert_eq!(a["partitionCount"], 2);
    assert_eq!(a["replicationFactor"], 1);
    assert_eq!(a["configs"], serde_json::json!({"retention.ms": "1000000"}));
    assert_eq!(
        a["partitions"][1],
        serde_json::json!({"partition": 1, "leader": 0, "replicas": [0], "isr": [0], "elr": [], "lastKnownElr": []})
    );
    let table = k.ok(T, &["--describe", "--output", "table"], None);
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(
        rows.len(),
        1 + 3,
        "a header and one row per partition: {table}"
    );
    assert!(
        rows[0].contains("TOPIC") && table.contains("retention.ms=1000000"),
        "{table}"
    );
    let err = k.fails(T, &["--list", "--output", "xml"], None, 2);
    assert!(err.contains("--output xml"), "{err}");
}

/// Every valid Kafka topic name works, up to Kafka's 249 characters: create, alter, produce,
/// consume, list and delete, with config overrides (issue 11, item 3).
#[test]
fn topic_names_up_to_249_characters_work() {
    let k = Kafkit::new();
    for len in [228, 229, 244, 245, 249] {
        let topic: String = "t".repeat(len - 2) + ".x";
        let create = [
            "--create",
            "--topic",
            &topic,
            "--partitions",
            "2",
            "--config",
            "retention.ms=100000",
        ];
        assert_eq!(k.ok(T, &create, None), format!("Created topic {topic}.\n"));
        k.ok(
            T,
            &["--alter", "--topic", &topic, "--partitions", "3"],
            None,
        );
        k.produce(
            &topic,
            &["--property", "parse.key=true"],
            b"a\tone\nb\ttwo\n",
        );
        let consumed = k.consume(&topic, 2, &[]);
        let mut values: Vec<&str> = consumed.lines().collect();
        values.sort();
        assert_eq!(values, ["one", "two"], "{len} characters");
        let described = k.ok(T, &["--describe", "--topic", &topic], None);
        assert!(
            described.contains("PartitionCount: 3") && described.contains("retention.ms=100000"),
            "{described}"
        );
        assert!(k.ok(T, &["--list"], None).lines().any(|l| l == topic));
        k.ok(T, &["--delete", "--topic", &topic], None);
        assert!(!k.ok(T, &["--list"], None).lines().any(|l| l == topic));
    }
    // A name longer than Kafka's limit is still refused with Kafka's message.
    let too_long = "t".repeat(250);
    let err = k.fails(T, &["--create", "--topic", &too_long], None, 1);
    assert!(
        err.contains("is longer than the max allowed length 249"),
        "{err}"
    );
}

/// A command that fails or only reads leaves no log directory behind; the temporaries of a
/// create or delete killed partway are removed by the next topic change, and live partitions
/// whose names look like old temporaries are kept (issue 11, item 7).
#[test]
fn failed_commands_and_killed_creates_leave_nothing_behind() {
    let k = Kafkit::new();
    let fresh = k.path("new-log-dir");
    let fresh_arg = fresh.to_str().unwrap();
    let attempts: [&[&str]; 4] = [
        &["--create", "--topic", "bad/name"],
        &["--create", "--topic", "ok", "--partitions", "0"],
        &["--describe", "--topic", "missing"],
        &["--list"],
    ];
    for args in attempts {
        let mut cmd = k.cmd(T);
        cmd.args(args).args(["--log-dir", fresh_arg]);
        cmd.output().unwrap();
        assert!(!fresh.exists(), "{args:?} created {}", fresh.display());
    }

    // A topic called x.tmp: its partition x.tmp-5 looks like an old temporary name.
    k.ok(
        T,
        &["--create", "--topic", "x.tmp", "--partitions", "6"],
        None,
    );
    let leftovers = [
        ".partition-0123456789abcdef.tmp",
        "gone-0.tmp-12345",
        "old-3.0123456789abcdef0123456789abcdef-delete",
    ];
    for name in leftovers {
        std::fs::create_dir(k.path(name)).unwrap();
        std::fs::write(k.path(name).join("00000000000000000000.log"), b"").unwrap();
    }
    std::fs::write(k.path("topics/.0123456789abcdef.tmp"), b"topic.id=x\n").unwrap();
    k.ok(T, &["--create", "--topic", "next"], None);
    for name in leftovers {
        assert!(!k.path(name).exists(), "{name} was left");
    }
    assert!(!k.path("topics/.0123456789abcdef.tmp").exists());
    assert!(k.path("x.tmp-5").join("00000000000000000000.log").exists());
    assert_eq!(k.ok(T, &["--list"], None), "next\nx.tmp\n");
}

/// As with Kafka's option parser, the word after an option that takes a value is its value,
/// even when it starts with `-`; a value that does not parse is named (issue 11, item 12).
#[test]
fn values_that_start_with_a_dash() {
    let k = Kafkit::new();
    assert_eq!(
        k.ok(T, &["--create", "--topic", "-dash"], None),
        "Created topic -dash.\n"
    );
    assert_eq!(k.ok(T, &["--list"], None), "-dash\n");
    let described = k.ok(T, &["--describe", "--topic", "-dash"], None);
    assert!(described.starts_with("Topic: -dash\t"), "{described}");
    let err = k.fails(T, &["--describe", "--topic", "-h"], None, 1);
    assert!(
        err.contains("Topic '-h' does not exist as expected"),
        "{err}"
    );
    let err = k.fails(
        T,
        &["--create", "--topic", "x", "--partitions", "-5x"],
        None,
        2,
    );
    assert!(
        err.contains("Cannot parse argument '-5x' of option partitions"),
        "{err}"
    );
    let err = k.fails(T, &["--create", "--topic", "x", "--partitions=-1"], None, 1);
    assert!(
        err.contains("The partitions must be greater than 0"),
        "{err}"
    );
    let err = k.fails(T, &["--describe", "--topic"], None, 2);
    assert!(err.contains("Option topic requires an argument"), "{err}");
    k.ok(
        "kafka-console-producer",
        &["--topic", "-dash"],
        Some(b"v\n"),
    );
    assert_eq!(k.consume("-dash", 1, &[]), "v\n");
}

/// Topic patterns take Java's regex syntax, as users copy them from Java: look-ahead and
/// `\Q...\E` select topics in kafka-topics and kafka-console-consumer --include; a pattern
/// that is invalid gets one line in Kafka's words (issue 11, item 11).
#[test]
fn topic_patterns_take_java_regex_syntax() {
    let k = Kafkit::new();
    for topic in ["camera", "__extra", "a.b", "axb"] {
        k.ok(T, &["--create", "--topic", topic], None);
    }
    let listed = k.ok(T, &["--list", "--topic", "(?!__).*ra"], None);
    assert_eq!(listed, "camera\n");
    let listed = k.ok(T, &["--list", "--topic", r"\Qa.b\E"], None);
    assert_eq!(listed, "a.b\n");
    k.produce("a.b", &[], b"quoted\n");
    k.produce("axb", &[], b"other\n");
    let args = [
        "--include",
        r"\Qa.b\E",
        "--from-beginning",
        "--timeout-ms",
        "500",
    ];
    assert_eq!(k.ok("kafka-console-consumer", &args, None), "quoted\n");
    for tool in [T, "kafka-console-consumer"] {
        let args: &[&str] = if tool == T {
            &["--list", "--topic", "(unclosed"]
        } else {
            &["--include", "(unclosed"]
        };
        let err = k.fails(tool, args, None, 2);
        assert!(err.contains("(unclosed is an invalid regex."), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

/// `--describe | head -1`: the reader closing the pipe ends the output quietly, exit 0 (it
/// was "Broken pipe (os error 32)", exit 1, once the output outgrew the pipe).
#[test]
fn describe_into_a_closed_pipe_exits_0() {
    use std::io::BufRead;
    let k = Kafkit::new();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "wide", "--partitions", "1500"],
        None,
    );
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("kafka-topics"))
        .args(["--describe", "--topic", "wide"])
        .env("KAFKIT_LOG_DIR", k.log_dir())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("Topic: wide"), "{first}");
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Files a user names are read with a size limit: `/dev/zero` (or a log file given by mistake)
/// is one line and exit 1, not the OOM killer (issue 24, item 11).
#[test]
fn files_past_their_limit_are_refused_in_one_line() {
    let k = Kafkit::new();
    let cases: [(&str, &[&str], &str); 4] = [
        (
            "kafka-topics",
            &["--list", "--command-config", "/dev/zero"],
            "cannot read properties file /dev/zero: it holds more than 16 MiB",
        ),
        (
            "kafka-delete-records",
            &["--offset-json-file", "/dev/zero"],
            "Unable to read file /dev/zero: it holds more than 16 MiB",
        ),
        (
            "kafka-consumer-groups",
            &[
                "--reset-offsets",
                "--group",
                "g",
                "--from-file",
                "/dev/zero",
                "--execute",
            ],
            "cannot read reset plan file /dev/zero: it holds more than 16 MiB",
        ),
        (
            "kafka-producer-perf-test",
            &[
                "--topic",
                "t",
                "--num-records",
                "1",
                "--throughput",
                "-1",
                "--payload-file",
                "/dev/zero",
            ],
            "cannot read --payload-file /dev/zero: it holds more than 256 MiB",
        ),
    ];
    for (tool, args, expected) in cases {
        let out = k.run(tool, args, None);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{tool}: {err}");
        assert_eq!(err.lines().count(), 1, "{tool}: {err}");
        assert!(err.contains(expected), "{tool}: {err}");
    }
}
