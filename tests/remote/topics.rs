//! `kafka-topics --bootstrap-server` against a real Kafka 4.3.1 broker, with the Java
//! `kafka-topics` from the same jars as the oracle (connection failures against fake servers,
//! which need no broker, are in `connection`).
//!
//! The broker is shared by the tests of this binary, so every test uses its own topic names and
//! compares only listings filtered to them.
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracles (see `tests/served/main.rs`).

use std::process::Output;
use std::time::{Duration, Instant};

use crate::common::broker::{self, TOPIC_COMMAND};
use crate::common::{closed_port, sorted, text};

const T: &str = "kafka-topics";

/// Runs our `kafka-topics` against the broker.
fn ours(args: &[&str]) -> Output {
    broker::run(T, args, None)
}

fn ours_ok(args: &[&str]) -> String {
    broker::ok(T, args, None)
}

fn java_ok(args: &[&str]) -> String {
    broker::java_ok(TOPIC_COMMAND, args)
}

/// Runs our tool until its stdout satisfies `done` (at most 60 s); returns the last stdout.
/// CreateTopics and DeleteTopics answer once the controller has committed the change, and the
/// broker's metadata cache follows shortly after: Kafka's own tests wait the same way. Until
/// then `--describe --topic` of a new topic fails (it does not exist yet), so a failure is
/// waited out too, and is an error only once the time is up.
fn ours_eventually(args: &[&str], done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = ours(args);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        if (out.status.success() && done(&stdout)) || Instant::now() > deadline {
            assert!(
                out.status.success(),
                "kafka-topics {args:?} failed: {stdout}\n{stderr}"
            );
            assert!(!stderr.contains("panicked"), "{stderr}");
            return stdout;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Our tool's one-line error, without the "Error while executing topic command : " prefix that
/// both tools print.
fn our_error(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "stdout: {}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr.trim_end().to_string()
}

#[test]
fn create_list_delete_agree_with_java() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let prefix = broker::unique_topic("agree");
    let (a, b, c) = (
        format!("{prefix}-a"),
        format!("{prefix}-b"),
        format!("{prefix}-c"),
    );
    let only_ours = format!("{prefix}-.*");
    assert_eq!(
        ours_ok(&[
            "--create",
            "--topic",
            &a,
            "--partitions",
            "3",
            "--config",
            "retention.ms=123456"
        ]),
        format!("Created topic {a}.\n")
    );
    assert_eq!(
        ours_ok(&["--create", "--topic", &b]),
        format!("Created topic {b}.\n")
    );
    // One made by the Java tool: our listing must see it too.
    assert_eq!(
        java_ok(&["--create", "--topic", &c]),
        format!("Created topic {c}.\n")
    );

    let expected = format!("{a}\n{b}\n{c}\n");
    let listed = ours_eventually(&["--list", "--topic", &only_ours], |out| out == expected);
    assert_eq!(listed, expected);
    assert_eq!(listed, java_ok(&["--list", "--topic", &only_ours]));
    assert_eq!(
        ours_ok(&["--list", "--exclude-internal", "--topic", &only_ours]),
        java_ok(&["--list", "--exclude-internal", "--topic", &only_ours])
    );

    // The broker holds what we asked for: partitions and the config override.
    let described = java_ok(&["--describe", "--topic", &a]);
    assert!(described.contains("PartitionCount: 3\t"), "{described}");
    assert!(described.contains("retention.ms=123456"), "{described}");
    assert_eq!(described.lines().count(), 4, "{described}");

    // Delete by regex (two topics), then one by name; nothing is printed, as Java prints nothing.
    assert_eq!(
        ours_ok(&["--delete", "--topic", &format!("{prefix}-[ab]")]),
        ""
    );
    assert_eq!(ours_ok(&["--delete", "--topic", &c]), "");
    // An empty listing is one empty line in both.
    let listed = ours_eventually(&["--list", "--topic", &only_ours], |out| out == "\n");
    assert_eq!(listed, "\n");
    assert_eq!(java_ok(&["--list", "--topic", &only_ours]), "\n");
}

#[test]
fn full_listing_includes_what_java_lists() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("full");
    ours_ok(&["--create", "--topic", &topic]);
    // Other tests create and delete topics meanwhile, so compare only what both runs saw.
    let ours_all = ours_eventually(&["--list"], |out| out.lines().any(|l| l == topic));
    let java_all = java_ok(&["--list"]);
    assert!(ours_all.lines().any(|l| l == topic), "{ours_all}");
    assert!(java_all.lines().any(|l| l == topic), "{java_all}");
    let mut ours_sorted: Vec<&str> = ours_all.lines().collect();
    ours_sorted.sort();
    assert_eq!(ours_all.lines().collect::<Vec<_>>(), ours_sorted, "sorted");
    ours_ok(&["--delete", "--topic", &topic]);
}

#[test]
fn existing_and_missing_topics_fail_as_java_does() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("exists");
    ours_ok(&["--create", "--topic", &topic]);

    let err = our_error(&ours(&["--create", "--topic", &topic]));
    assert_eq!(
        err,
        format!("Error while executing topic command : Topic '{topic}' already exists.")
    );
    // Java prints the same line, on stdout.
    let java = broker::java_topics(&["--create", "--topic", &topic]);
    assert_eq!(java.status.code(), Some(1));
    assert_eq!(text(&java.stdout).trim_end(), err);
    assert_eq!(
        ours_ok(&["--create", "--topic", &topic, "--if-not-exists"]),
        ""
    );

    let missing = broker::unique_topic("missing");
    let err = our_error(&ours(&["--delete", "--topic", &missing]));
    assert_eq!(
        err,
        format!(
            "Error while executing topic command : Topic '{missing}' does not exist as expected"
        )
    );
    assert_eq!(
        ours_ok(&["--delete", "--topic", &missing, "--if-exists"]),
        ""
    );

    // A broker-side refusal, printed as the broker words it.
    let other = broker::unique_topic("rf");
    let err = our_error(&ours(&[
        "--create",
        "--topic",
        &other,
        "--replication-factor",
        "3",
    ]));
    assert!(
        err.contains("The target replication factor of 3 cannot be reached because only 1 broker(s) are registered"),
        "{err}"
    );

    // kafkit's --repair is for the embedded log; a cluster refuses it with the reason (once
    // the new topic is in the broker's metadata, so that it is not refused as missing).
    let deadline = Instant::now() + Duration::from_secs(60);
    let err = loop {
        let err = our_error(&ours(&["--repair", "--topic", &topic]));
        if !err.contains("does not exist") || Instant::now() > deadline {
            break err;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        err.contains("--repair works on the embedded log only"),
        "{err}"
    );
    ours_ok(&["--delete", "--topic", &topic]);
}

#[test]
fn a_dead_first_bootstrap_server_is_skipped() {
    let Some(bootstrap) = broker::try_bootstrap() else {
        return;
    };
    let dead = closed_port();
    let list = format!("127.0.0.1:{dead},{bootstrap}");
    let out = assert_cmd::Command::cargo_bin(T)
        .unwrap()
        .args(["--list", "--bootstrap-server", &list])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
}

/// Our describe and Java's for the same arguments, as sorted line sets (Java prints topics in
/// hash order).
fn describe_both(args: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut all = vec!["--describe"];
    all.extend_from_slice(args);
    let line_set = |out: String| sorted(&out).into_iter().map(str::to_string).collect();
    (line_set(ours_ok(&all)), line_set(java_ok(&all)))
}

#[test]
fn describe_agrees_with_java_filters_included() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let prefix = broker::unique_topic("describe");
    let (a, b) = (format!("{prefix}-a"), format!("{prefix}-b"));
    let only_ours = format!("{prefix}-.*");
    // a: several overrides, and a min.insync.replicas above its ISR (under min ISR);
    // b: no overrides of its own, at min ISR (1 of 1).
    ours_ok(&[
        "--create",
        "--topic",
        &a,
        "--partitions",
        "3",
        "--config",
        "retention.ms=123456",
        "--config",
        "min.insync.replicas=2",
        "--config",
        "cleanup.policy=delete",
        "--config",
        "max.message.bytes=200000",
    ]);
    ours_ok(&["--create", "--topic", &b, "--partitions", "2"]);
    let described = ours_eventually(&["--describe", "--topic", &only_ours], |out| {
        out.lines().count() == 7 && !out.contains("Leader: none")
    });
    assert_eq!(described.lines().count(), 7, "{described}");
    let summary = described
        .lines()
        .find(|l| l.starts_with(&format!("Topic: {a}\t")))
        .expect("summary line");
    assert!(
        summary.contains("\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: "),
        "{summary}"
    );
    assert!(summary.contains("retention.ms=123456"), "{summary}");
    assert!(
        described.contains(&format!("\tTopic: {a}\tPartition: 2\tLeader: ")),
        "{described}"
    );

    let (ours_lines, java_lines) = describe_both(&["--topic", &only_ours]);
    assert_eq!(ours_lines, java_lines);
    // Pages of one partition, followed by cursor, give the same answer.
    assert_eq!(
        ours_ok(&[
            "--describe",
            "--topic",
            &only_ours,
            "--partition-size-limit-per-response",
            "1"
        ]),
        described
    );
    for filter in [
        "--under-replicated-partitions",
        "--unavailable-partitions",
        "--under-min-isr-partitions",
        "--at-min-isr-partitions",
        "--topics-with-overrides",
    ] {
        let (ours_lines, java_lines) = describe_both(&["--topic", &only_ours, filter]);
        assert_eq!(ours_lines, java_lines, "{filter}");
    }
    // The filters select what they should: a's partitions are under min ISR, b's at it.
    let under = ours_ok(&[
        "--describe",
        "--topic",
        &only_ours,
        "--under-min-isr-partitions",
    ]);
    assert_eq!(under.lines().count(), 3, "{under}");
    assert!(
        under
            .lines()
            .all(|l| l.starts_with(&format!("\tTopic: {a}\t"))),
        "{under}"
    );
    let at = ours_ok(&[
        "--describe",
        "--topic",
        &only_ours,
        "--at-min-isr-partitions",
    ]);
    assert_eq!(at.lines().count(), 2, "{at}");
    assert!(
        at.lines()
            .all(|l| l.starts_with(&format!("\tTopic: {b}\t"))),
        "{at}"
    );
    let both = ours_ok(&[
        "--describe",
        "--topic",
        &only_ours,
        "--under-min-isr-partitions",
        "--at-min-isr-partitions",
    ]);
    assert_eq!(both.lines().count(), 5, "{both}");
    assert_eq!(
        ours_ok(&[
            "--describe",
            "--topic",
            &only_ours,
            "--unavailable-partitions"
        ]),
        ""
    );
    assert_eq!(
        ours_ok(&[
            "--describe",
            "--topic",
            &only_ours,
            "--under-replicated-partitions"
        ]),
        ""
    );
    let (ours_lines, java_lines) = describe_both(&["--topic", &a, "--exclude-internal"]);
    assert_eq!(ours_lines, java_lines);
    // By topic id, as Java looks it up.
    let id = summary
        .split('\t')
        .find_map(|f| f.strip_prefix("TopicId: "))
        .expect("topic id")
        .to_string();
    let (ours_lines, java_lines) = describe_both(&["--topic-id", &id]);
    assert_eq!(ours_lines, java_lines);

    // JSON carries the same partitions.
    let json: serde_json::Value =
        serde_json::from_str(&ours_ok(&["--describe", "--topic", &a, "--output", "json"])).unwrap();
    assert_eq!(json["topics"][0]["partitionCount"], 3);
    assert_eq!(json["topics"][0]["configs"]["retention.ms"], "123456");
    assert_eq!(json["topics"][0]["partitions"].as_array().unwrap().len(), 3);

    // A missing topic: the error, or nothing with --if-exists.
    let missing = broker::unique_topic("missing");
    let err = our_error(&ours(&["--describe", "--topic", &missing]));
    assert_eq!(
        err,
        format!(
            "Error while executing topic command : Topic '{missing}' does not exist as expected"
        )
    );
    let java = broker::java_topics(&["--describe", "--topic", &missing]);
    assert_eq!(java.status.code(), Some(1));
    assert_eq!(text(&java.stdout).trim_end(), err);
    assert_eq!(
        ours_ok(&["--describe", "--topic", &missing, "--if-exists"]),
        ""
    );
    ours_ok(&["--delete", "--topic", &only_ours]);
}

#[test]
fn alter_partitions_up_and_refusals_as_java() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("alter");
    ours_ok(&["--create", "--topic", &topic, "--partitions", "3"]);
    ours_eventually(&["--describe", "--topic", &topic], |out| {
        out.lines().count() == 4
    });
    assert_eq!(
        ours_ok(&["--alter", "--topic", &topic, "--partitions", "5"]),
        ""
    );
    let described = ours_eventually(&["--describe", "--topic", &topic], |out| {
        out.lines().count() == 6 && !out.contains("Leader: none")
    });
    assert!(described.contains("\tPartitionCount: 5\t"), "{described}");
    let (ours_lines, java_lines) = describe_both(&["--topic", &topic]);
    assert_eq!(ours_lines, java_lines);

    for (count, message) in [
        ("5", "Topic already has 5 partition(s).".to_string()),
        (
            "2",
            format!("The topic {topic} currently has 5 partition(s); 2 would not be an increase."),
        ),
    ] {
        let err = our_error(&ours(&[
            "--alter",
            "--topic",
            &topic,
            "--partitions",
            count,
        ]));
        assert_eq!(
            err,
            format!("Error while executing topic command : {message}")
        );
        let java = broker::java_topics(&["--alter", "--topic", &topic, "--partitions", count]);
        assert_eq!(java.status.code(), Some(1));
        assert_eq!(text(&java.stdout).trim_end(), err);
    }

    let missing = broker::unique_topic("missing");
    let err = our_error(&ours(&[
        "--alter",
        "--topic",
        &missing,
        "--partitions",
        "2",
    ]));
    assert_eq!(
        err,
        format!(
            "Error while executing topic command : Topic '{missing}' does not exist as expected"
        )
    );
    assert_eq!(
        ours_ok(&[
            "--alter",
            "--topic",
            &missing,
            "--partitions",
            "2",
            "--if-exists"
        ]),
        ""
    );
    ours_ok(&["--delete", "--topic", &topic]);
}

/// The same bad `--replica-assignment` gets the same message on the embedded log and on a
/// cluster: each duplicate named once, as Kafka's tool names it.
#[test]
fn replica_assignment_errors_are_the_same_on_both_backends() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("ra-dup");
    let args = [
        "--create",
        "--topic",
        &topic,
        "--replica-assignment",
        "1:2:1:2",
    ];
    let remote = ours(&args);
    let local = crate::common::Kafkit::new().run(T, &args, None);
    for out in [&remote, &local] {
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    }
    assert_eq!(
        text(&remote.stderr),
        "Error while executing topic command : Partition replica lists may not contain duplicate entries: 1,2\n"
    );
    assert_eq!(text(&local.stderr), text(&remote.stderr));
}

/// The client API's config changes do the same on the embedded log and on the broker: a value
/// set shows as an override, a deleted one falls back to its default, and an unknown name or a
/// bad value is refused with Kafka's INVALID_CONFIG and changes nothing.
#[test]
fn altering_topic_configs_is_the_same_on_both_backends() {
    use kafkit::client::{Client, ConfigChange, ConnectOptions, NewTopic, TopicConfigChanges};

    let topic = broker::unique_topic("alter-configs");
    let local = tempfile::tempdir().unwrap();
    let backends = [
        ConnectOptions {
            log_dir: Some(local.path().to_path_buf()),
            ..ConnectOptions::default()
        },
        ConnectOptions {
            bootstrap_servers: Some(broker::bootstrap()),
            ..ConnectOptions::default()
        },
    ];
    let set = |name: &str, value: &str| ConfigChange::Set {
        name: name.into(),
        value: value.into(),
    };
    let change = |changes: Vec<ConfigChange>| TopicConfigChanges {
        topic: topic.clone(),
        changes,
    };
    let mut seen = Vec::new();
    for options in &backends {
        let mut client = Client::open(options).unwrap();
        let new = NewTopic {
            name: topic.clone(),
            partitions: Some(1),
            configs: vec![("retention.bytes".into(), "1000000".into())],
            ..NewTopic::default()
        };
        for (_, outcome) in client.create_topics(&[new]).unwrap() {
            outcome.unwrap();
        }
        let changes = change(vec![
            set("retention.ms", "86400000"),
            ConfigChange::Delete {
                name: "retention.bytes".into(),
            },
        ]);
        let refused = [
            change(vec![set("no.such.config", "1")]),
            change(vec![set("retention.ms", "soon")]),
        ];
        let mut outcomes = Vec::new();
        for request in std::iter::once(&changes).chain(&refused) {
            // The broker may not know a just-created topic for a moment.
            let deadline = Instant::now() + Duration::from_secs(60);
            let outcome = loop {
                let (_, outcome) = client
                    .alter_topic_configs(std::slice::from_ref(request))
                    .unwrap()
                    .remove(0);
                let unknown = outcome.as_ref().is_err_and(|e| {
                    e.kind() == Some(kafka_protocol::ResponseError::UnknownTopicOrPartition)
                });
                if !unknown || Instant::now() > deadline {
                    break outcome;
                }
                std::thread::sleep(Duration::from_millis(100));
            };
            outcomes.push(outcome.map_err(|e| e.kind()));
        }
        // The broker applies a change through its controller: its describe follows shortly (and
        // may not know the topic yet, though the controller took the change).
        let deadline = Instant::now() + Duration::from_secs(60);
        let shown = loop {
            let shown = retention_configs(&mut client, &topic);
            let settled = shown
                .as_ref()
                .is_ok_and(|shown| seen.first().is_none_or(|(_, first)| first == shown));
            if settled || Instant::now() > deadline {
                break shown.unwrap();
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        seen.push((outcomes, shown));
    }
    let (outcomes, shown) = &seen[0];
    assert_eq!(
        outcomes,
        &vec![
            Ok(()),
            Err(Some(kafka_protocol::ResponseError::InvalidConfig)),
            Err(Some(kafka_protocol::ResponseError::InvalidConfig)),
        ]
    );
    assert!(
        shown.contains(&("retention.ms".into(), Some("86400000".into()), false)),
        "{shown:?}"
    );
    assert!(
        shown.contains(&("retention.bytes".into(), Some("-1".into()), true)),
        "{shown:?}"
    );
    assert_eq!(seen[0], seen[1], "embedded log, then broker");
}

/// The topic's `retention.*` entries as (name, value, is default), sorted; the error when the
/// describe fails.
fn retention_configs(
    client: &mut kafkit::client::Client,
    topic: &str,
) -> Result<Vec<(String, Option<String>, bool)>, kafkit::client::error::ClientError> {
    let (_, entries) = client.describe_configs(&[topic.to_string()])?.remove(0);
    let mut shown: Vec<(String, Option<String>, bool)> = entries
        .into_iter()
        .filter(|e| e.name.starts_with("retention."))
        .map(|e| (e.name, e.value, e.is_default))
        .collect();
    shown.sort();
    Ok(shown)
}
