//! Share groups on the embedded log (`kafka-console-share-consumer --log-dir`): members in
//! separate processes split a topic's records, each record once; the records of a member
//! killed with SIGKILL go to the others at once, those of a stalled member once their lock
//! expires; `--reject` archives, `--release` delivers again until the delivery count limit
//! archives; and bad invocations are one line, non-zero, with nothing changed.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Kafkit, signal, text};

const TOOL: &str = "kafka-console-share-consumer";

/// A share consumer of `topic` in group `group`, started in the background: each record
/// printed as `partition offset delivery value`, tab-separated.
fn spawn_member(k: &Kafkit, topic: &str, group: &str, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_kafka-console-share-consumer"))
        .env("KAFKIT_LOG_DIR", k.log_dir())
        .args(["--topic", topic, "--group", group])
        .args(print_all())
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the share consumer starts")
}

fn print_all() -> [&'static str; 6] {
    [
        "--formatter-property",
        "print.partition=true",
        "--formatter-property",
        "print.offset=true",
        "--formatter-property",
        "print.delivery=true",
    ]
}

/// A printed record: (partition, offset, delivery count, value).
type Printed = (u32, i64, u32, String);

fn parse(line: &str) -> Printed {
    let fields: Vec<&str> = line.split('\t').collect();
    assert_eq!(fields.len(), 4, "{line:?}");
    let num = |f: &str, prefix: &str| -> i64 {
        f.strip_prefix(prefix)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line:?}"))
    };
    (
        num(fields[0], "Partition:") as u32,
        num(fields[1], "Offset:"),
        num(fields[2], "Delivery:") as u32,
        fields[3].to_string(),
    )
}

/// The group reads from the earliest record (Kafka's default is the latest).
fn from_earliest(k: &Kafkit, group: &str, more: &[&str]) {
    let mut config = String::from("share.auto.offset.reset=earliest");
    for c in more {
        config.push(',');
        config.push_str(c);
    }
    alter_group(k, group, &config);
}

/// Sets the group configs of `config` (`name=value,...`) with `kafka-configs`.
fn alter_group(k: &Kafkit, group: &str, config: &str) {
    let out = k.ok(
        "kafka-configs",
        &[
            "--entity-type",
            "groups",
            "--entity-name",
            group,
            "--alter",
            "--add-config",
            config,
        ],
        None,
    );
    assert_eq!(
        out,
        format!("Completed updating config for group {group}.\n")
    );
}

fn numbered(n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| format!("r{i}\n"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn two_members_split_a_topic_each_record_once() {
    let k = Kafkit::new();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "jobs", "--partitions", "3"],
        None,
    );
    from_earliest(&k, "workers", &[]);
    k.produce("jobs", &[], &numbered(3000));
    let members: Vec<Child> = (0..2)
        .map(|_| {
            spawn_member(
                &k,
                "jobs",
                "workers",
                &[
                    "--timeout-ms",
                    "3000",
                    "--command-property",
                    "max.poll.records=25",
                ],
            )
        })
        .collect();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for member in members {
        let out = member.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let lines: Vec<Printed> = text(&out.stdout).lines().map(parse).collect();
        assert!(
            !lines.is_empty(),
            "each member gets records while both run; stderr: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr)
                .ends_with(&format!("Processed a total of {} messages\n", lines.len())),
            "{}",
            text(&out.stderr)
        );
        for (_, _, delivery, value) in lines {
            assert_eq!(delivery, 1, "{value} was delivered before");
            assert!(seen.insert(value.clone()), "{value} printed twice");
        }
    }
    let all: BTreeSet<String> = (0..3000).map(|i| format!("r{i}")).collect();
    assert_eq!(seen, all);
    // Everything was accepted: a new member gets nothing.
    let out = k.ok(
        TOOL,
        &[
            "--topic",
            "jobs",
            "--group",
            "workers",
            "--timeout-ms",
            "300",
        ],
        None,
    );
    assert_eq!(out, "");
}

/// A member that takes every record of `t` in one poll and holds them: its output stays in
/// its stdout pipe, unread, so it acknowledges none of them. Returns once the group's state
/// shows the records acquired.
fn spawn_holder(k: &Kafkit, group: &str) -> Child {
    let holder = spawn_member(k, "t", group, &[]);
    let window = k.path(&format!("groups/{group}/share/t-0.window"));
    crate::common::wait_for("the holder acquires the records", || {
        std::fs::read_to_string(&window).is_ok_and(|w| w.contains("\"state\":1"))
    });
    holder
}

#[test]
fn a_killed_members_records_go_to_the_others_at_once() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    from_earliest(&k, "g", &[]);
    k.produce("t", &[], &numbered(50));
    let mut holder = spawn_holder(&k, "g");
    holder.kill().unwrap();
    holder.wait().unwrap();
    let start = Instant::now();
    let mut args = vec!["--topic", "t", "--group", "g", "--timeout-ms", "1000"];
    args.extend(print_all());
    let out = k.ok(TOOL, &args, None);
    let got: Vec<Printed> = out.lines().map(parse).collect();
    assert_eq!(got.len(), 50, "{out}");
    assert!(
        got.iter().all(|(_, _, delivery, _)| *delivery == 2),
        "{out}"
    );
    // Well before the 30 s record lock: the dead member's file lock told.
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_stalled_members_records_go_to_the_others_when_their_lock_expires() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    from_earliest(&k, "g", &["share.record.lock.duration.ms=15000"]);
    k.produce("t", &[], &numbered(10));
    let mut stalled = spawn_holder(&k, "g");
    let acquired = Instant::now();
    signal(&stalled, "-STOP");
    let mut other = spawn_member(
        &k,
        "t",
        "g",
        &["--max-messages", "10", "--timeout-ms", "60000"],
    );
    let reader = BufReader::new(other.stdout.take().unwrap());
    let got: Vec<Printed> = reader.lines().map(|l| parse(&l.unwrap())).collect();
    let waited = acquired.elapsed();
    assert!(other.wait().unwrap().success());
    assert_eq!(got.len(), 10, "{got:?}");
    assert!(
        got.iter().all(|(_, _, delivery, _)| *delivery == 2),
        "{got:?}"
    );
    assert!(
        waited >= Duration::from_millis(14_500),
        "delivered again after {waited:?}, before the 15 s lock expired"
    );
    // The stalled member, woken up with its reader gone, stops; it holds nothing any more.
    drop(stalled.stdout.take());
    signal(&stalled, "-CONT");
    let out = stalled.wait_with_output().unwrap();
    assert!(
        !text(&out.stderr).contains("panicked"),
        "{}",
        text(&out.stderr)
    );
    let out = k.ok(
        TOOL,
        &["--topic", "t", "--group", "g", "--timeout-ms", "300"],
        None,
    );
    assert_eq!(out, "");
}

#[test]
fn reject_archives_and_release_delivers_again_until_the_limit() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    from_earliest(&k, "rej", &[]);
    k.produce("t", &[], b"a\nb\n");
    let out = k.ok(
        TOOL,
        &[
            "--topic",
            "t",
            "--group",
            "rej",
            "--reject",
            "--timeout-ms",
            "500",
        ],
        None,
    );
    assert_eq!(out, "a\nb\n");
    assert_eq!(
        k.ok(
            TOOL,
            &["--topic", "t", "--group", "rej", "--timeout-ms", "300"],
            None
        ),
        ""
    );

    from_earliest(&k, "rel", &["share.delivery.count.limit=3"]);
    let mut args = vec![
        "--topic",
        "t",
        "--group",
        "rel",
        "--release",
        "--timeout-ms",
        "500",
    ];
    args.extend(print_all());
    let got: Vec<Printed> = k.ok(TOOL, &args, None).lines().map(parse).collect();
    let expected: Vec<Printed> = (1..=3)
        .flat_map(|d| [(0, 0, d, "a".to_string()), (0, 1, d, "b".to_string())])
        .collect();
    assert_eq!(got, expected);
    // Archived after the third delivery.
    assert_eq!(
        k.ok(
            TOOL,
            &["--topic", "t", "--group", "rel", "--timeout-ms", "300"],
            None
        ),
        ""
    );
    // Another group reads on its own: the log is not a queue for it.
    from_earliest(&k, "other", &[]);
    assert_eq!(
        k.ok(
            TOOL,
            &["--topic", "t", "--group", "other", "--timeout-ms", "300"],
            None
        ),
        "a\nb\n"
    );
}

#[test]
fn a_group_starts_at_the_end_by_default_and_max_messages_takes_only_what_it_prints() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    k.produce("t", &[], b"old\n");
    // Kafka's default share.auto.offset.reset is latest: records before the group's first
    // read are never delivered.
    assert_eq!(
        k.ok(TOOL, &["--topic", "t", "--timeout-ms", "300"], None),
        ""
    );
    k.produce("t", &[], b"new1\nnew2\nnew3\n");
    let out = k.run(
        TOOL,
        &[
            "--topic",
            "t",
            "--max-messages",
            "1",
            "--timeout-ms",
            "3000",
        ],
        None,
    );
    assert_eq!(text(&out.stdout), "new1\n");
    assert_eq!(text(&out.stderr), "Processed a total of 1 messages\n");
    // The other two were not acquired with it: their first delivery is the next member's.
    let mut args = vec!["--topic", "t", "--timeout-ms", "300"];
    args.extend(print_all());
    let got: Vec<Printed> = k.ok(TOOL, &args, None).lines().map(parse).collect();
    assert_eq!(
        got,
        vec![(0, 2, 1, "new2".to_string()), (0, 3, 1, "new3".to_string())]
    );
}

#[test]
fn group_configs_are_checked_and_described() {
    let k = Kafkit::new();
    let alter = |config: &str| {
        k.run(
            "kafka-configs",
            &[
                "--entity-type",
                "groups",
                "--entity-name",
                "g",
                "--alter",
                "--add-config",
                config,
            ],
            None,
        )
    };
    for (config, message) in [
        (
            "share.record.lock.duration.ms=1000",
            "Invalid value 1000 for configuration share.record.lock.duration.ms: Value must be at least 15000",
        ),
        (
            "share.delivery.count.limit=11",
            "Invalid value 11 for configuration share.delivery.count.limit: Value must be no more than 10",
        ),
        (
            "share.auto.offset.reset=first",
            "Invalid value first for configuration share.auto.offset.reset",
        ),
        ("share.nope=1", "Unknown group config name: share.nope"),
    ] {
        let out = alter(config);
        assert_eq!(out.status.code(), Some(1), "{config}");
        assert!(
            text(&out.stderr).contains(message),
            "{config}: {}",
            text(&out.stderr)
        );
        assert_eq!(
            text(&out.stderr).lines().count(),
            1,
            "{}",
            text(&out.stderr)
        );
    }
    assert!(
        alter("share.auto.offset.reset=by_duration:PT1H")
            .status
            .success()
    );
    let described = k.ok(
        "kafka-configs",
        &[
            "--entity-type",
            "groups",
            "--entity-name",
            "g",
            "--describe",
        ],
        None,
    );
    assert_eq!(
        described,
        "Dynamic configs for group g are:\n  share.auto.offset.reset=by_duration:PT1H sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.auto.offset.reset=by_duration:PT1H}\n"
    );
}

#[test]
fn bad_invocations_are_one_line_and_change_nothing() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    k.produce("t", &[], b"x\n");
    let before = k.files();
    for (args, code, message) in [
        (vec!["--group", "g"], 2, "--topic is a required argument"),
        (
            vec!["--topic", "t", "--reject", "--release"],
            2,
            "At most one of --reject and --release may be specified.",
        ),
        (
            vec![
                "--topic",
                "t",
                "--group",
                "a",
                "--command-property",
                "group.id=b",
            ],
            2,
            "The group ids provided in different places (directly using '--group', via '--consumer-property', or via '--consumer-config') do not match. Detected group ids: 'a', 'b'",
        ),
        (
            vec![
                "--topic",
                "t",
                "--command-property",
                "auto.offset.reset=earliest",
            ],
            1,
            "auto.offset.reset cannot be set when using a share group.",
        ),
        (
            vec!["--topic", "t", "--command-property", "max.poll.records=0"],
            2,
            "Invalid value 0 for configuration max.poll.records: Value must be at least 1",
        ),
        (
            vec!["--topic", "t", "--formatter", "com.example.Nope"],
            2,
            "com.example.Nope",
        ),
        (
            vec![
                "--topic",
                "t",
                "--command-config",
                "/nonexistent/consumer.properties",
            ],
            1,
            "/nonexistent/consumer.properties",
        ),
        (
            vec![
                "--topic",
                "t",
                "--consumer-property",
                "a=b",
                "--command-property",
                "c=d",
            ],
            2,
            "Options --consumer-property and --command-property cannot be specified together.",
        ),
    ] {
        let err = k.fails(TOOL, &args, None, code);
        assert!(err.contains(message), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    assert_eq!(
        k.files(),
        before,
        "a refused invocation changed the log dir"
    );
    let version = k.ok(TOOL, &["--version"], None);
    assert!(version.starts_with("4.3"), "{version}");
}

const GROUPS_TOOL: &str = "kafka-share-groups";

#[test]
fn share_groups_lists_describes_resets_and_deletes_on_the_embedded_log() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    from_earliest(&k, "g", &[]);
    k.produce("t", &[], &numbered(10));
    let out = k.ok(
        TOOL,
        &[
            "--topic",
            "t",
            "--group",
            "g",
            "--max-messages",
            "4",
            "--timeout-ms",
            "3000",
        ],
        None,
    );
    assert_eq!(out, "r0\nr1\nr2\nr3\n");
    assert_eq!(k.ok(GROUPS_TOOL, &["--list"], None), "g\n");
    assert_eq!(
        k.ok(GROUPS_TOOL, &["--list", "--state"], None),
        "GROUP           STATE\ng               Empty\n"
    );
    // Four accepted, six released at the close: the start offset is 4, six to go.
    assert_eq!(
        k.ok(GROUPS_TOOL, &["--describe", "--group", "g"], None),
        "\nGROUP           TOPIC           PARTITION  START-OFFSET  LAG\ng               t               0          4             6\n"
    );
    assert_eq!(
        k.ok(
            GROUPS_TOOL,
            &["--describe", "--group", "g", "--offsets", "--verbose"],
            None
        ),
        "\nGROUP           TOPIC           PARTITION  LEADER-EPOCH  START-OFFSET  LAG\ng               t               0          0             4             6\n"
    );
    let out = k.run(
        GROUPS_TOOL,
        &["--describe", "--group", "g", "--members"],
        None,
    );
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "\nShare group 'g' has no active members.\n"
    );

    // A live member, holding records.
    let mut holder = spawn_holder(&k, "g");
    let members = k.ok(
        GROUPS_TOOL,
        &["--describe", "--group", "g", "--members"],
        None,
    );
    let rows: Vec<&str> = members.lines().collect();
    assert_eq!(rows.len(), 3, "{members}");
    assert!(
        rows[1].starts_with("GROUP           CONSUMER-ID"),
        "{members}"
    );
    assert!(rows[1].ends_with("#PARTITIONS  ASSIGNMENT"), "{members}");
    assert!(
        rows[2].contains(" console-share-consumer 1            t:0"),
        "{members}"
    );
    let state = k.ok(
        GROUPS_TOOL,
        &["--describe", "--group", "g", "--state"],
        None,
    );
    assert!(
        state.lines().nth(2).unwrap().ends_with("Stable          1"),
        "{state}"
    );
    assert_eq!(
        k.ok(GROUPS_TOOL, &["--list", "--state", "Stable"], None),
        "GROUP           STATE\ng               Stable\n"
    );
    // Changes are refused while it lives, and change nothing.
    let before = k.files();
    let err = k.fails(
        GROUPS_TOOL,
        &[
            "--reset-offsets",
            "--group",
            "g",
            "--topic",
            "t",
            "--to-earliest",
            "--execute",
        ],
        None,
        1,
    );
    assert_eq!(err, "Error: Share group 'g' is not empty.\n");
    let err = k.fails(GROUPS_TOOL, &["--delete", "--group", "g"], None, 1);
    assert!(err.contains("Share group 'g' is not EMPTY."), "{err}");
    let err = k.fails(
        GROUPS_TOOL,
        &["--delete-offsets", "--group", "g", "--topic", "t"],
        None,
        1,
    );
    assert_eq!(err, "Error: The group is not empty.\n");
    assert_eq!(k.files().len(), before.len());
    holder.kill().unwrap();
    holder.wait().unwrap();

    // Reset to the earliest: all ten are delivered again.
    let plan = "\nGROUP           TOPIC           PARTITION  NEW-OFFSET\ng               t               0          0\n";
    assert_eq!(
        k.ok(
            GROUPS_TOOL,
            &[
                "--reset-offsets",
                "--group",
                "g",
                "--topic",
                "t",
                "--to-earliest",
                "--dry-run"
            ],
            None
        ),
        plan
    );
    assert_eq!(
        k.ok(
            GROUPS_TOOL,
            &[
                "--reset-offsets",
                "--group",
                "g",
                "--all-topics",
                "--to-earliest",
                "--execute"
            ],
            None
        ),
        plan
    );
    let out = k.ok(
        TOOL,
        &[
            "--topic",
            "t",
            "--group",
            "g",
            "--max-messages",
            "10",
            "--timeout-ms",
            "3000",
        ],
        None,
    );
    assert_eq!(out.lines().count(), 10, "{out}");
    assert_eq!(
        k.ok(
            GROUPS_TOOL,
            &[
                "--reset-offsets",
                "--group",
                "g",
                "--topic",
                "t:0",
                "--to-latest",
                "--execute"
            ],
            None
        ),
        "\nGROUP           TOPIC           PARTITION  NEW-OFFSET\ng               t               0          10\n"
    );
    assert_eq!(
        k.ok(
            GROUPS_TOOL,
            &["--delete-offsets", "--group", "g", "--topic", "t"],
            None
        ),
        "\nTOPIC           STATUS\nt               Successful\n"
    );
    assert_eq!(
        k.ok(GROUPS_TOOL, &["--describe", "--group", "g"], None),
        "\nShare group 'g' has no offset information.\n"
    );
    assert_eq!(
        k.ok(GROUPS_TOOL, &["--delete", "--group", "g"], None),
        "Deletion of requested share groups ('g') was successful.\n"
    );
    assert_eq!(k.ok(GROUPS_TOOL, &["--list"], None), "");
    let err = k.fails(GROUPS_TOOL, &["--describe", "--group", "g"], None, 1);
    assert_eq!(
        err,
        "Error: Executing share group command failed due to org.apache.kafka.common.errors.GroupIdNotFoundException: Group g not found.\n"
    );
}

#[test]
fn share_groups_bad_invocations_are_one_line_and_change_nothing() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    let before = k.files();
    for (args, message) in [
        (
            vec!["--timeout", "5"],
            "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets.",
        ),
        (
            vec!["--list", "--describe"],
            "Command must include exactly one action",
        ),
        (
            vec!["--describe"],
            "Option [describe] takes one of these options: [all-groups], [group]",
        ),
        (
            vec!["--describe", "--group", "g", "--all-groups"],
            "Option \"[group]\" can't be used with option \"[all-groups]\"",
        ),
        (
            vec!["--describe", "--group", "g", "--members", "--state"],
            "Option [describe] takes at most one of these options: [members], [offsets], [state]",
        ),
        (
            vec!["--describe", "--group", "g", "--state", "Stable"],
            "Option [describe] does not take a value for [state]",
        ),
        (
            vec!["--list", "--group", "g"],
            "Option \"[group]\" can't be used with option \"[list]\"",
        ),
        (
            vec!["--list", "--state", "Foo"],
            "Invalid state list 'Foo'. Valid states are: Dead, Empty, Stable",
        ),
        (
            vec!["--delete"],
            "Option [delete] takes the options [group] or [all-groups]",
        ),
        (
            vec!["--delete", "--group", "g", "--all-groups"],
            "Option [delete] takes either [group] or [all-groups], not both.",
        ),
        (
            vec!["--delete", "--group", "g", "--topic", "t"],
            "Option [delete] does not take the option: [topic]",
        ),
        (
            vec!["--delete-offsets", "--group", "g"],
            "Option [delete-offsets] takes the following options: [group], [topic]",
        ),
        (
            vec![
                "--reset-offsets",
                "--group",
                "g",
                "--topic",
                "t",
                "--to-earliest",
            ],
            "Option [reset-offsets] takes the option: [execute] or [dry-run]",
        ),
        (
            vec![
                "--reset-offsets",
                "--group",
                "g",
                "--to-earliest",
                "--execute",
            ],
            "Option [reset-offsets] takes one of these options: [all-topics], [topic]",
        ),
        (
            vec![
                "--reset-offsets",
                "--group",
                "g",
                "--topic",
                "t",
                "--execute",
            ],
            "Option [reset-offsets] takes one of these options: [to-datetime], [to-earliest], [to-latest]",
        ),
        (
            vec![
                "--reset-offsets",
                "--group",
                "g",
                "--topic",
                "t",
                "--to-earliest",
                "--to-latest",
                "--execute",
            ],
            "Option \"[to-earliest]\" can't be used with option \"[to-latest]\"",
        ),
        (
            vec![
                "--reset-offsets",
                "--topic",
                "t",
                "--to-earliest",
                "--execute",
            ],
            "Option [reset-offsets] takes the option: [group]",
        ),
        (
            vec![
                "--reset-offsets",
                "--group",
                "g",
                "--topic",
                "t",
                "--to-earliest",
                "--dry-run",
                "--execute",
            ],
            "Option [reset-offsets] only accepts one of [execute] and [dry-run]",
        ),
        (
            vec![
                "--reset-offsets",
                "--group",
                "g",
                "--topic",
                "t:x",
                "--to-earliest",
                "--execute",
            ],
            "Invalid partition 'x' specified in topic arg 't:x''",
        ),
    ] {
        let err = k.fails(GROUPS_TOOL, &args, None, 2);
        assert!(err.contains(message), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    for (args, message) in [
        (
            vec![
                "--reset-offsets",
                "--group",
                "g",
                "--topic",
                "t",
                "--to-datetime",
                "xyz",
                "--execute",
            ],
            "Error parsing timestamp",
        ),
        (
            vec![
                "--reset-offsets",
                "--group",
                "g",
                "--topic",
                "nosuch",
                "--to-earliest",
                "--execute",
            ],
            "This server does not host this topic-partition.",
        ),
        (
            vec!["--delete", "--group", "nosuch"],
            "Group 'nosuch' is not a share group.",
        ),
    ] {
        let err = k.fails(GROUPS_TOOL, &args, None, 1);
        assert!(err.contains(message), "{args:?}: {err}");
    }
    assert_eq!(
        k.files(),
        before,
        "a refused invocation changed the log dir"
    );
    let version = k.ok(GROUPS_TOOL, &["--version"], None);
    assert!(version.starts_with("4.3"), "{version}");
}

/// A group id is a consumer group or a share group, never both (as Kafka keeps them apart):
/// share tools refuse a consumer group's id, consumers refuse a share group's, and a refusal
/// changes nothing.
#[test]
fn consumer_groups_and_share_groups_keep_apart() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    k.produce("t", &[], b"a\nb\n");
    k.ok(
        "kafka-console-consumer",
        &[
            "--topic",
            "t",
            "--group",
            "audit",
            "--from-beginning",
            "--max-messages",
            "2",
        ],
        None,
    );
    k.ok(
        TOOL,
        &["--topic", "t", "--group", "work", "--timeout-ms", "200"],
        None,
    );
    let before = k.files();
    let not_share = "Group audit is not a share group.";
    let err = k.fails(
        TOOL,
        &["--topic", "t", "--group", "audit", "--timeout-ms", "200"],
        None,
        1,
    );
    assert!(err.contains(not_share), "{err}");
    for args in [
        vec![
            "--reset-offsets",
            "--group",
            "audit",
            "--topic",
            "t",
            "--to-earliest",
            "--execute",
        ],
        vec!["--delete-offsets", "--group", "audit", "--topic", "t"],
        vec!["--describe", "--group", "audit"],
    ] {
        let err = k.fails(GROUPS_TOOL, &args, None, 1);
        assert!(err.contains(not_share), "{args:?}: {err}");
    }
    let err = k.fails(
        "kafka-console-consumer",
        &[
            "--topic",
            "t",
            "--group",
            "work",
            "--from-beginning",
            "--timeout-ms",
            "200",
        ],
        None,
        1,
    );
    assert!(
        err.contains("supported protocols are incompatible"),
        "{err}"
    );
    // Committed offsets would make the share group a consumer group too.
    let err = k.fails(
        "kafka-consumer-groups",
        &[
            "--reset-offsets",
            "--group",
            "work",
            "--topic",
            "t",
            "--to-earliest",
            "--execute",
        ],
        None,
        1,
    );
    assert!(err.contains("Group work is not a consumer group."), "{err}");
    assert_eq!(
        k.files(),
        before,
        "a refused invocation changed the log dir"
    );
    assert_eq!(k.ok("kafka-consumer-groups", &["--list"], None), "audit\n");
    assert_eq!(k.ok(GROUPS_TOOL, &["--list"], None), "work\n");
    // A group config does not make a group of either kind (Kafka keeps configs apart).
    for group in ["audit", "fresh"] {
        alter_group(&k, group, "share.record.lock.duration.ms=60000");
    }
    k.produce("t", &[], b"c\n");
    let more = k.ok(
        "kafka-console-consumer",
        &[
            "--topic",
            "t",
            "--group",
            "audit",
            "--max-messages",
            "1",
            "--timeout-ms",
            "5000",
        ],
        None,
    );
    assert_eq!(more, "c\n", "the consumer group goes on from its offsets");
    assert_eq!(k.ok(GROUPS_TOOL, &["--list"], None), "work\n");
}

const PERF_TOOL: &str = "kafka-share-consumer-perf-test";
const PERF_HEADER: &str = "start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms";

#[test]
fn share_consumer_perf_test_reads_and_accepts_every_record() {
    let k = Kafkit::new();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "perf", "--partitions", "2"],
        None,
    );
    k.ok(
        "kafka-producer-perf-test",
        &[
            "--topic",
            "perf",
            "--num-records",
            "3000",
            "--record-size",
            "100",
            "--throughput",
            "-1",
        ],
        None,
    );
    from_earliest(&k, "perf-share-consumer", &[]);
    let out = k.ok(
        PERF_TOOL,
        &[
            "--topic",
            "perf",
            "--num-records",
            "3000",
            "--threads",
            "2",
            "--show-consumer-stats",
        ],
        None,
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[0], PERF_HEADER);
    assert!(
        lines[1].starts_with(
            "Share consumer 1 having client id perf-share-consumer-client-1 consumption metrics- "
        ),
        "{out}"
    );
    assert!(
        lines[2].starts_with(
            "Share consumer 2 having client id perf-share-consumer-client-2 consumption metrics- "
        ),
        "{out}"
    );
    let totals: Vec<&str> = lines[3].split(", ").collect();
    assert_eq!(totals.len(), 7, "{out}");
    assert_eq!(totals[2], "0.2861", "3000 x 100 bytes in MB: {out}");
    assert_eq!(totals[5], "3000", "{out}");
    let per_consumer: u64 = lines[1..3]
        .iter()
        .map(|l| l.split(", ").nth(5).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(per_consumer, 3000, "{out}");
    // Every record was accepted: the group has nothing left, and no lag.
    assert_eq!(
        k.ok(
            TOOL,
            &[
                "--topic",
                "perf",
                "--group",
                "perf-share-consumer",
                "--timeout-ms",
                "300"
            ],
            None
        ),
        ""
    );
    let described = k.ok(
        GROUPS_TOOL,
        &["--describe", "--group", "perf-share-consumer"],
        None,
    );
    assert!(
        described.lines().skip(2).all(|l| l.ends_with(" 0")),
        "{described}"
    );

    // Too few records: Kafka's warning, the header and the totals.
    let out = k.run(
        PERF_TOOL,
        &[
            "--topic",
            "perf",
            "--num-records",
            "10",
            "--timeout",
            "500",
            "--group",
            "empty",
            "--hide-header",
        ],
        None,
    );
    assert!(out.status.success());
    assert_eq!(
        text(&out.stderr),
        "WARNING: Exiting before consuming the expected number of records: timeout (500 ms) exceeded. You can use the --timeout option to increase the timeout.\n"
    );
    assert!(
        text(&out.stdout).lines().count() == 1 && text(&out.stdout).contains(", 0, "),
        "{}",
        text(&out.stdout)
    );
    for (args, message) in [
        (
            vec!["--num-records", "5"],
            "Missing required argument \"[topic]\"",
        ),
        (
            vec!["--topic", "perf"],
            "Exactly one of the following arguments is required: [messages], [num-records]",
        ),
        (
            vec!["--topic", "perf", "--num-records", "5", "--threads", "0"],
            "--threads must be at least 1",
        ),
        (
            vec![
                "--topic",
                "perf",
                "--num-records",
                "5",
                "--reporting-interval",
                "0",
            ],
            "Reporting interval must be greater than 0.",
        ),
    ] {
        let err = k.fails(PERF_TOOL, &args, None, 2);
        assert!(err.contains(message), "{args:?}: {err}");
    }
}
