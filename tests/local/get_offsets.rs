//! `kafka-get-offsets` and `kafka-broker-api-versions` on the embedded log: the records of
//! `common::offsets` with the answers Kafka's `GetOffsetShell` gives for them on a real broker
//! (`tests/remote/get_offsets.rs` checks them against it), and Kafka's refusals of bad
//! invocations.

use crate::common;

use common::{Kafkit, offsets, text};

const TOOL: &str = "kafka-get-offsets";

/// The records of `common::offsets` in a fresh embedded log.
fn setup() -> Kafkit {
    let k = Kafkit::new();
    for (topic, partitions) in offsets::TOPICS {
        let partitions = partitions.to_string();
        k.ok(
            "kafka-topics",
            &[
                "--create",
                "--topic",
                topic,
                "--partitions",
                &partitions,
                "--config",
                offsets::TOPIC_CONFIG,
            ],
            None,
        );
    }
    let (a, b) = offsets::records();
    k.produce("a", &["--input", "json"], a.as_bytes());
    k.produce("b", &["--input", "json"], b.as_bytes());
    k
}

fn expected(time: &str) -> String {
    offsets::expected(time, str::to_string)
}

#[test]
fn times_on_the_embedded_log_answer_as_kafka() {
    let k = setup();
    for (time, expect) in [
        (None, "latest"),
        (Some("latest"), "latest"),
        (Some("-1"), "latest"),
        (Some("earliest"), "earliest"),
        (Some("-2"), "earliest"),
        (Some("max-timestamp"), "max-timestamp"),
        (Some("-3"), "max-timestamp"),
        (Some("1500"), "1500"),
        (Some("1100"), "1100"),
        (Some("4000"), "4000"),
        (Some("6000"), "6000"),
        // Nothing is tiered: earliest-local is the log start, the tiered specs have no offset.
        (Some("earliest-local"), "earliest"),
        (Some("-4"), "earliest"),
        (Some("latest-tiered"), "latest-tiered"),
        (Some("-5"), "latest-tiered"),
        (Some("-6"), "earliest-pending-upload"),
    ] {
        // Without any argument the tool prints its usage, as Kafka's does.
        let mut args = vec!["--topic", ".*"];
        if let Some(t) = time {
            args.extend(["--time", t]);
        }
        assert_eq!(k.ok(TOOL, &args, None), expected(expect), "--time {time:?}");
    }
}

#[test]
fn topics_and_partitions_select_as_kafka() {
    let k = setup();
    let cases: [(&[&str], &str); 8] = [
        (&["--topic", "a"], "a:0:3\na:1:1\na:2:2\n"),
        (&["--topic", "a|e"], "a:0:3\na:1:1\na:2:2\ne:0:0\ne:1:0\n"),
        (
            &["--topic", "a,e", "--partitions", "1,2,"],
            "a:1:1\na:2:2\ne:1:0\n",
        ),
        (
            &["--partitions", "10,+0", "--topic", "(?!a).*"],
            "b:0:1\nb:10:1\ne:0:0\n",
        ),
        (
            &["--topic-partitions", "a:1-3,b:-2"],
            "a:1:1\na:2:2\nb:0:1\nb:1:1\n",
        ),
        (
            &["--topic-partitions", "b:11-,e:"],
            "b:11:1\ne:0:0\ne:1:0\n",
        ),
        (
            &["--topic-partitions", ":2", "--time", "earliest"],
            "a:2:0\nb:2:0\n",
        ),
        (
            &["--topic-partitions", "a:0", "--time", "max-timestamp"],
            "a:0:1\n",
        ),
    ];
    for (args, expect) in cases {
        assert_eq!(k.ok(TOOL, args, None), expect, "{args:?}");
    }
}

#[test]
fn internal_topics_are_listed_unless_excluded() {
    let k = setup();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "__consumer_offsets"],
        None,
    );
    let all = k.ok(TOOL, &["--topic", "__.*|e"], None);
    assert_eq!(all, "__consumer_offsets:0:0\ne:0:0\ne:1:0\n");
    let some = k.ok(
        TOOL,
        &["--topic", "__.*|e", "--exclude-internal-topics"],
        None,
    );
    assert_eq!(some, "e:0:0\ne:1:0\n");
}

#[test]
fn a_time_the_broker_refuses_skips_every_partition() {
    let k = setup();
    let out = k.run(TOOL, &["--topic", "e", "--time", "-7"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "Skip getting offsets for topic-partition e-0 due to error: org.apache.kafka.common.errors.UnsupportedVersionException: The version of API is not supported.\n\
         Skip getting offsets for topic-partition e-1 due to error: org.apache.kafka.common.errors.UnsupportedVersionException: The version of API is not supported.\n\
         Error occurred: the offsets of 2 topic-partition(s) could not be read (see above)\n"
    );
}

#[test]
fn bad_invocations_fail_with_one_line_and_change_nothing() {
    let k = setup();
    let before = k.files();
    let cases: [(&[&str], i32, &str); 14] = [
        (
            &["--topic-partitions", "a:0", "--topic", "a"],
            2,
            "--topic-partitions cannot be used with --topic or --partitions",
        ),
        (
            &["--topic-partitions", "a:0", "--partitions", "0"],
            2,
            "--topic-partitions cannot be used with --topic or --partitions",
        ),
        (
            &["--time", "yesterday"],
            2,
            "Malformed time argument yesterday. Please use -1 or latest / -2 or earliest / -3 or max-timestamp / -4 or earliest-local / -5 or latest-tiered / -6 or earliest-pending-upload, or a specified long format timestamp",
        ),
        (
            &["--time", "99999999999999999999"],
            2,
            "Malformed time argument 99999999999999999999. Please use -1 or latest / -2 or earliest / -3 or max-timestamp / -4 or earliest-local / -5 or latest-tiered / -6 or earliest-pending-upload, or a specified long format timestamp",
        ),
        (
            &["--partitions", "0-2"],
            2,
            "--partitions expects a comma separated list of numeric partition ids, but received: 0-2",
        ),
        (
            &["--partitions", "1,,2"],
            2,
            "--partitions expects a comma separated list of numeric partition ids, but received: 1,,2",
        ),
        (
            &["--topic-partitions", "a:x"],
            2,
            "Invalid rule specification: a:x",
        ),
        (
            &["--topic-partitions", "a:99999999999"],
            2,
            "For input string: \"99999999999\"",
        ),
        (
            &["--topic", "(", "--partitions", "x"],
            2,
            "( is an invalid regex. (",
        ),
        (
            &["--bootstrap-server", "localhost"],
            2,
            "Please provide valid host:port like host1:9091,host2:9092",
        ),
        (
            &["--time", "1", "--time", "2"],
            2,
            "Found multiple arguments for option time, but you asked for only one",
        ),
        (&["--bogus"], 2, "bogus is not a recognized option"),
        (
            &["--topic", "nope"],
            1,
            "Error occurred: Could not match any topic-partitions with the specified filters",
        ),
        (
            &["--topic-partitions", "a:5-"],
            1,
            "Error occurred: Could not match any topic-partitions with the specified filters",
        ),
    ];
    for (args, code, message) in cases {
        let out = k.run(TOOL, args, None);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert_eq!(text(&out.stdout), "", "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with(message), "{args:?}: {stderr}");
        if code == 2 {
            assert!(
                stderr.ends_with("(see kafka-get-offsets --help)\n"),
                "{stderr}"
            );
        }
    }
    let missing = k.path("missing.properties");
    let out = k.run(TOOL, &["--command-config", missing.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("Error occurred: cannot read properties file"));
    assert_eq!(k.files(), before, "a refused run changes nothing");
}

#[test]
fn no_log_dir_is_created_for_a_bad_invocation() {
    let k = Kafkit::new();
    let dir = k.path("fresh");
    let out = k.run(
        TOOL,
        &["--log-dir", dir.to_str().unwrap(), "--time", "soon"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.exists());
}

#[test]
fn broker_api_versions_says_the_embedded_log_has_no_broker() {
    let k = Kafkit::new();
    let dir = k.path("fresh");
    let config = k.path("client.properties");
    std::fs::write(&config, "client.id=x\n").unwrap();
    let dir_arg = ["--log-dir", dir.to_str().unwrap()];
    let config_arg = ["--command-config", config.to_str().unwrap()];
    for args in [&dir_arg[..], &config_arg[..]] {
        let out = k.run("kafka-broker-api-versions", args, None);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(text(&out.stdout), "");
        assert_eq!(
            stderr,
            "the embedded log has no broker to ask; give --bootstrap-server host:port to ask a cluster's brokers (see kafka-broker-api-versions --help)\n"
        );
    }
    assert!(!dir.exists(), "nothing is created");
    assert!(!k.path("kafkit-format").exists());
}

/// A query writes nothing (issue 24, item 11): asking an empty partition for its offsets, or
/// describing its topic (which applies retention), leaves its files as they were, but for the
/// lock file a reader's lock makes.
#[test]
fn queries_of_an_empty_partition_write_nothing() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "e"], None);
    let files = || {
        let mut names: Vec<String> = std::fs::read_dir(k.log_dir().join("e-0"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name != ".lock")
            .collect();
        names.sort();
        names
    };
    let before = files();
    assert_eq!(before, ["00000000000000000000.log", "partition.metadata"]);
    for time in ["-1", "-2", "-3", "0"] {
        k.ok(TOOL, &["--topic", "e", "--time", time], None);
    }
    k.ok("kafka-topics", &["--describe", "--topic", "e"], None);
    assert_eq!(files(), before);
}
