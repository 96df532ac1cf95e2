//! `kafka-consumer-groups --bootstrap-server` against a real Kafka 4.3.1 broker, with the Java
//! `kafka-consumer-groups` (ConsumerGroupCommand) from the same jars as the oracle, on the same
//! group state.
//!
//! Group state comes from the Java tools: the Java console consumer with `--group` (and
//! `--max-messages`, which commits on close) for classic groups with committed offsets, and left
//! running in the background for active members (groups of the new protocol, KIP-848, are in
//! `groups_kafka_only`). Outputs are compared exactly where Java prints to stdout what
//! kafkit prints to stdout, and as sorted lines where Java prints hash-map order or puts its
//! errors and warnings on stdout (kafkit: stderr).
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracles (see `tests/served/main.rs`).

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::broker::{self, CONSOLE_CONSUMER, GROUP_COMMAND, create_topic};
use crate::common::text;
use serde_json::{Value, json};

const G: &str = "kafka-consumer-groups";

/// The lines of `s` without Java's stdout-only error and warning lines and blank lines, sorted.
fn sorted_rows(s: &str) -> Vec<String> {
    let mut lines: Vec<String> = s
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("Error: ") && !l.starts_with("Warn: "))
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

fn ours(args: &[&str]) -> Output {
    broker::run(G, args, None)
}

pub(crate) fn ours_ok(args: &[&str]) -> String {
    broker::ok(G, args, None)
}

/// Our tool failing with exit 1: its stderr.
fn ours_err(args: &[&str]) -> (String, String) {
    let out = ours(args);
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{args:?}: stdout {}\nstderr {stderr}",
        text(&out.stdout)
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    (text(&out.stdout), stderr)
}

/// The Java tool's stdout (it exits 0 even after `Error:`).
pub(crate) fn java(args: &[&str]) -> String {
    broker::java_ok(GROUP_COMMAND, args)
}

/// Both tools on the same state must print exactly the same stdout.
pub(crate) fn same(args: &[&str]) -> String {
    let o = ours_ok(args);
    assert_eq!(o, java(args), "{args:?}");
    o
}

/// Produces `n` keyed records per partition of `topic` (keys spread them over the partitions).
pub(crate) fn produce(topic: &str, partitions: u32, n: usize) {
    let input: String = (0..n * partitions as usize)
        .map(|i| format!("key-{i}:v{i}\n"))
        .collect();
    broker::kafkit("kafka-console-producer")
        .args(["--topic", topic])
        .args(["--reader-property", "parse.key=true"])
        .args(["--reader-property", "key.separator=:"])
        .write_stdin(input)
        .assert()
        .success();
}

/// The Java console consumer reading `max` records for `group` and committing them on close.
pub(crate) fn java_consume(topic: &str, group: &str, max: usize, extra: &[&str]) {
    let max = max.to_string();
    let mut args = vec![
        "--topic",
        topic,
        "--group",
        group,
        "--from-beginning",
        "--max-messages",
        max.as_str(),
        "--timeout-ms",
        "30000",
    ];
    args.extend_from_slice(extra);
    broker::java_ok(CONSOLE_CONSUMER, &args);
}

/// A Java console consumer left running as an active member; killed when dropped.
pub(crate) struct Member(Child);

impl Member {
    pub(crate) fn start(topic: &str, group: &str, extra: &[&str]) -> Member {
        let bootstrap = broker::bootstrap();
        let child = Command::new("bash")
            .arg(broker::script())
            .args(["tool", CONSOLE_CONSUMER, "--bootstrap-server", &bootstrap])
            .args(["--topic", topic, "--group", group, "--from-beginning"])
            .args(["--consumer-property", "auto.commit.interval.ms=200"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the Java console consumer starts");
        Member(child)
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Polls our tool until `done` holds for its stdout (at most 60 s); panics otherwise.
fn wait_for(args: &[&str], what: &str, done: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = ours(args);
        let stdout = text(&out.stdout);
        if out.status.success() && done(&stdout) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {stdout}\n{}",
            text(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Waits until `group` is Stable with one member that owns all `partitions` and has committed
/// an offset for each of them, so that its state no longer changes between two describes.
pub(crate) fn wait_stable(group: &str, partitions: usize) {
    wait_for(
        &["--describe", "--group", group, "--state"],
        "a Stable group",
        |s| s.contains(" Stable "),
    );
    wait_for(
        &["--describe", "--group", group],
        "committed offsets of the active member",
        |s| {
            let rows: Vec<Vec<&str>> = s
                .lines()
                .filter(|l| l.starts_with(group))
                .map(|l| l.split_whitespace().collect())
                .collect();
            rows.len() == partitions && rows.iter().all(|r| r[3] != "-" && r[6] != "-")
        },
    );
}

/// Our `--list` output and Java's for `args`. Their column widths follow the longest group
/// name of the whole cluster, where other tests create groups meanwhile: headers that differ
/// count only if ours was the same before and after Java's run; otherwise both run again.
fn listed_beside_java(args: &[&str]) -> (String, String) {
    let header = |s: &str| s.lines().next().unwrap_or_default().to_string();
    for _ in 0..5 {
        let ours = ours_ok(args);
        let theirs = java(args);
        if header(&ours) == header(&theirs) || header(&ours_ok(args)) == header(&ours) {
            return (ours, theirs);
        }
    }
    panic!("{args:?}: the cluster's groups never held still long enough to compare with Java");
}

/// `--list` (every filter) and `--describe` (every view, all of `groups` at once) print what
/// Java prints, on the groups of `topic`; `stable_of_type` (`classic` or `consumer`) is the type
/// of the one Stable group `--list --state stable --type` must find: `active`.
pub(crate) fn lists_and_describes_agree(
    topic: &str,
    groups: &[&String],
    stable_of_type: &str,
    active: &str,
) {
    // --list: ours sorted, Java in the brokers' order; only this test's groups.
    let mine = |s: &str| -> Vec<String> {
        let mut v: Vec<String> = s
            .lines()
            .filter(|l| l.starts_with(topic) || l.starts_with("GROUP"))
            .map(str::to_string)
            .collect();
        v.sort();
        v
    };
    let listed = ours_ok(&["--list"]);
    assert_eq!(mine(&listed), mine(&java(&["--list"])));
    assert_eq!(mine(&listed).len(), groups.len(), "{listed}");
    let stable = ["--list", "--state", "stable", "--type", stable_of_type];
    for args in [
        &["--list", "--state"][..],
        &["--list", "--type"],
        &["--list", "--state", "--type"],
        &stable,
        &["--list", "--state", "Empty"],
    ] {
        let (o, j) = listed_beside_java(args);
        assert_eq!(mine(&o), mine(&j), "{args:?}");
        // Column widths depend on every group of the cluster, so the whole header agrees too.
        assert_eq!(o.lines().next(), j.lines().next(), "{args:?}");
    }
    let filtered = ours_ok(&stable);
    assert_eq!(mine(&filtered).len(), 2, "{filtered}");
    assert!(filtered.contains(active), "{filtered}");

    // --describe: every view, several groups at once, exactly as Java prints them.
    let mut base = vec!["--describe"];
    for g in groups {
        base.extend(["--group", g.as_str()]);
    }
    for view in [
        &[][..],
        &["--offsets"],
        &["--offsets", "--verbose"],
        &["--members"],
        &["--members", "--verbose"],
        &["--state"],
        &["--state", "--verbose"],
    ] {
        let mut args = base.clone();
        args.extend_from_slice(view);
        let out = same(&args);
        assert!(out.contains(active), "{out}");
    }
}

#[test]
fn list_and_describe_every_view_agree_with_java() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("grp-describe");
    create_topic(&topic, 3);
    produce(&topic, 3, 4);
    // A classic group, empty with committed offsets, and an active one.
    let classic = format!("{topic}-classic");
    java_consume(&topic, &classic, 5, &[]);
    let active = format!("{topic}-active");
    let _m1 = Member::start(&topic, &active, &[]);
    wait_stable(&active, 3);
    lists_and_describes_agree(&topic, &[&classic, &active], "classic", &active);
    let members = ours_ok(&["--describe", "--group", &active, "--members", "--verbose"]);
    assert!(
        members.contains(&format!(" {topic}:0,1,2 ")),
        "the classic member's decoded assignment: {members}"
    );

    // The notices of empty groups go to stderr.
    let out = ours(&["--describe", "--group", &classic]);
    assert_eq!(
        text(&out.stderr),
        format!("\nConsumer group '{classic}' has no active members.\n")
    );

    // A missing group: Java's message (kafkit: on stderr, exit 1).
    let missing = format!("{topic}-nope");
    let (_, err) = ours_err(&["--describe", "--group", &missing]);
    let j = java(&["--describe", "--group", &missing]);
    assert_eq!(format!("\n{err}"), j);
    assert_eq!(
        err,
        format!(
            "Error: Executing consumer group command failed due to org.apache.kafka.common.errors.GroupIdNotFoundException: Group {missing} not found.\n"
        )
    );

    // Resetting an active group is refused with Java's message; deleting it too.
    let (_, err) = ours_err(&[
        "--reset-offsets",
        "--group",
        &active,
        "--topic",
        &topic,
        "--to-earliest",
        "--execute",
    ]);
    let message = format!(
        "Error: Assignments can only be reset if the group '{active}' is inactive, but the current state is Stable."
    );
    assert_eq!(err, format!("{message}\n"));
    assert!(
        java(&[
            "--reset-offsets",
            "--group",
            &active,
            "--topic",
            &topic,
            "--to-earliest",
            "--execute"
        ])
        .contains(&message)
    );
    let (_, err) = ours_err(&["--delete", "--group", &active]);
    assert_eq!(
        err,
        format!(
            "Error: Deletion of some consumer groups failed:\n* Group '{active}' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.\n"
        )
    );
    // OffsetDelete of a topic the active group subscribes to: per-partition errors.
    let (out, err) = ours_err(&["--delete-offsets", "--group", &active, "--topic", &topic]);
    let j = java(&["--delete-offsets", "--group", &active, "--topic", &topic]);
    assert_eq!(
        err,
        "Error: Encountered some partition-level error, see the follow-up details.\n"
    );
    assert_eq!(sorted_rows(&out), sorted_rows(&j));
    assert!(out.contains("GroupSubscribedToTopicException"), "{out}");
}

/// Every scope and scenario of `--reset-offsets`, dry run, on the same committed offsets as
/// Java; then `--execute`, checked with Java's describe.
#[test]
fn reset_offsets_agree_with_java() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("grp-reset");
    let other = format!("{topic}-b");
    create_topic(&topic, 2);
    create_topic(&other, 1);
    produce(&topic, 2, 5);
    produce(&other, 1, 3);
    let group = format!("{topic}-g");
    java_consume(&topic, &group, 4, &[]);
    let missing = format!("{topic}-new");
    let tp0 = format!("{topic}:0");
    let both = format!("{topic}:0,1");
    let scenarios: Vec<Vec<&str>> = vec![
        vec!["--topic", &topic, "--to-earliest"],
        vec!["--topic", &topic, "--to-latest"],
        vec!["--topic", &topic, "--to-current"],
        vec!["--topic", &topic, "--to-offset", "3"],
        vec!["--topic", &topic, "--to-offset", "99"],
        vec!["--all-topics", "--shift-by", "-1"],
        vec!["--all-topics", "--shift-by", "2"],
        vec!["--topic", &tp0, "--to-datetime", "2020-01-01T00:00:00.000"],
        vec!["--topic", &both, "--by-duration", "PT1H"],
        vec!["--topic", &topic, "--topic", &other, "--to-latest"],
        vec![
            "--topic",
            &other,
            "--to-datetime",
            "2999-01-01T00:00:00.000Z",
        ],
    ];
    for scenario in &scenarios {
        let mut args = vec!["--reset-offsets", "--group", &group, "--group", &missing];
        args.extend_from_slice(scenario);
        args.push("--dry-run");
        let o = ours_ok(&args);
        let j = java(&args);
        assert_eq!(sorted_rows(&o), sorted_rows(&j), "{args:?}");
        assert!(o.contains("NEW-OFFSET"), "{o}");
        args.push("--export");
        assert_eq!(
            sorted_rows(&ours_ok(&args)),
            sorted_rows(&java(&args)),
            "{args:?}"
        );
    }

    // --from-file with a plan exported by us, read by both.
    let plan = ours_ok(&[
        "--reset-offsets",
        "--group",
        &group,
        "--topic",
        &topic,
        "--to-offset",
        "1",
        "--dry-run",
        "--export",
    ]);
    assert_eq!(plan, format!("{topic},0,1\n{topic},1,1\n\n"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plan.csv");
    std::fs::write(&file, plan.trim_end()).unwrap();
    let file = file.to_str().unwrap();
    let args = [
        "--reset-offsets",
        "--group",
        &group,
        "--from-file",
        file,
        "--dry-run",
    ];
    assert_eq!(sorted_rows(&ours_ok(&args)), sorted_rows(&java(&args)));

    // --execute: the same plan as the dry run, and Java then sees the new offsets.
    let executed = ours_ok(&[
        "--reset-offsets",
        "--group",
        &group,
        "--topic",
        &topic,
        "--to-offset",
        "2",
        "--execute",
    ]);
    assert_eq!(
        sorted_rows(&executed),
        sorted_rows(&java(&[
            "--reset-offsets",
            "--group",
            &group,
            "--topic",
            &topic,
            "--to-offset",
            "2",
            "--dry-run",
        ]))
    );
    let described = same(&["--describe", "--group", &group]);
    let current: Vec<&str> = described
        .lines()
        .filter(|l| l.starts_with(group.as_str()))
        .map(|l| l.split_whitespace().nth(3).unwrap())
        .collect();
    assert_eq!(current, ["2", "2"], "{described}");

    // --execute on a group that does not exist creates it with those offsets, as Java does.
    ours_ok(&[
        "--reset-offsets",
        "--group",
        &missing,
        "--topic",
        &other,
        "--to-latest",
        "--execute",
    ]);
    let described = same(&["--describe", "--group", &missing, "--verbose"]);
    assert!(
        described.contains(&format!("{other} ")) && described.contains(" 3 "),
        "{described}"
    );

    // Partitions that do not exist: Java's message (stderr, exit 1).
    let bad = format!("{topic}:7");
    let (_, err) = ours_err(&[
        "--reset-offsets",
        "--group",
        &group,
        "--topic",
        &bad,
        "--to-latest",
        "--dry-run",
    ]);
    assert_eq!(
        err,
        format!(
            "Error: Executing consumer group command failed due to The partitions \"{topic}-7\" do not exist\n"
        )
    );
}

#[test]
fn delete_groups_and_offsets_agree_with_java() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("grp-delete");
    create_topic(&topic, 2);
    produce(&topic, 2, 3);
    // Two groups with the same offsets: one for us, one for Java (deleting is one-way).
    let (a, b) = (format!("{topic}-a"), format!("{topic}-b"));
    for g in [&a, &b] {
        ours_ok(&[
            "--reset-offsets",
            "--group",
            g,
            "--topic",
            &topic,
            "--to-latest",
            "--execute",
        ]);
    }
    let missing_topic = format!("{topic}-none");
    let tp1 = format!("{topic}:1");
    let o = ours_ok(&[
        "--delete-offsets",
        "--group",
        &a,
        "--topic",
        &tp1,
        "--topic",
        &missing_topic,
    ]);
    let j = java(&[
        "--delete-offsets",
        "--group",
        &b,
        "--topic",
        &tp1,
        "--topic",
        &missing_topic,
    ]);
    assert_eq!(o, j.replace(&b, &a));
    assert!(o.starts_with(&format!(
        "Request succeeded for deleting offsets from group {a}.\n"
    )));
    same(&["--describe", "--group", &a]);
    assert_eq!(
        ours_ok(&["--describe", "--group", &a])
            .lines()
            .filter(|l| l.starts_with(a.as_str()))
            .count(),
        1
    );

    // A group that does not exist.
    let nope = format!("{topic}-nope");
    let tp0 = format!("{topic}:0");
    let (out, err) = ours_err(&["--delete-offsets", "--group", &nope, "--topic", &tp0]);
    let j = java(&["--delete-offsets", "--group", &nope, "--topic", &tp0]);
    assert_eq!(err, "Error: The group id does not exist.\n");
    assert_eq!(format!("\n{}{out}", err), j);

    // --delete: one missing, one deleted.
    let (out, err) = ours_err(&["--delete", "--group", &a, "--group", &nope]);
    assert_eq!(
        out,
        format!("These consumer groups were deleted successfully: '{a}'\n")
    );
    assert_eq!(
        err,
        format!(
            "Error: Deletion of some consumer groups failed:\n* Group '{nope}' could not be deleted due to: org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.\n"
        )
    );
    assert_eq!(
        java(&["--delete", "--group", &b]),
        format!("Deletion of requested consumer groups ('{b}') was successful.\n")
    );
    let listed = java(&["--list"]);
    assert!(!listed.contains(&a) && !listed.contains(&b), "{listed}");
}

#[test]
fn output_json_and_table_on_a_cluster() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("grp-json");
    create_topic(&topic, 1);
    produce(&topic, 1, 6);
    let group = format!("{topic}-g");
    java_consume(&topic, &group, 4, &[]);
    let list: Value = serde_json::from_str(&ours_ok(&["--list", "--output", "json"])).unwrap();
    let entry = list["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == group.as_str())
        .cloned();
    assert_eq!(
        entry,
        Some(json!({"group": group, "type": "Classic", "state": "Empty"}))
    );
    let doc: Value = serde_json::from_str(&ours_ok(&[
        "--describe",
        "--group",
        &group,
        "--output",
        "json",
    ]))
    .unwrap();
    assert_eq!(
        doc,
        json!({"groups": [{"group": group, "state": "Empty", "partitions": [{
            "topic": topic, "partition": 0, "leaderEpoch": doc["groups"][0]["partitions"][0]["leaderEpoch"],
            "currentOffset": 4, "logEndOffset": 6, "lag": 2,
            "consumerId": null, "host": null, "clientId": null}], "totalLag": 2}]})
    );
    let doc: Value = serde_json::from_str(&ours_ok(&[
        "--reset-offsets",
        "--group",
        &group,
        "--all-topics",
        "--to-earliest",
        "--dry-run",
        "--output",
        "json",
    ]))
    .unwrap();
    assert_eq!(
        doc,
        json!({"groups": [{"group": group, "partitions": [
            {"topic": topic, "partition": 0, "newOffset": 0}]}], "executed": false})
    );
    let table = ours_ok(&["--describe", "--group", &group, "--output", "table"]);
    assert!(
        table.starts_with(&format!("GROUP {group} (Empty)\n")),
        "{table}"
    );
    assert!(table.contains("TOTAL LAG (group)"), "{table}");
    let state: Value = serde_json::from_str(&ours_ok(&[
        "--describe",
        "--group",
        &group,
        "--state",
        "--output",
        "json",
    ]))
    .unwrap();
    let bootstrap = broker::bootstrap();
    assert_eq!(
        state["groups"][0]["coordinator"]["host"],
        bootstrap.as_str()
    );
    assert_eq!(state["groups"][0]["members"], 0);
}
