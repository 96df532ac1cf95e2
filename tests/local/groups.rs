//! `kafka-consumer-groups` on the embedded log, as a user types it: list, describe (every view),
//! each reset scenario in dry run and `--execute`, export and import, delete, delete-offsets,
//! and every validation error. Committed offsets are seeded and live members are held through
//! the library, in this test process.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{Kafkit, committed, wait_for};
use kafkit::local::LogDir;
use kafkit::local::group::member::hostname;
use kafkit::local::group::{GroupState, Member, MemberConfig, TopicPartition};

const G: &str = "kafka-consumer-groups";

fn tp(t: &str, p: u32) -> TopicPartition {
    (t.to_string(), p as i32)
}

fn dir(k: &Kafkit) -> LogDir {
    LogDir::open(k.log_dir()).unwrap()
}

/// Creates `topic` with `partitions` and produces `records[p]` records to partition p (keys
/// chosen so that the default partitioner sends them there).
fn topic_with(k: &Kafkit, topic: &str, records: &[usize]) {
    let n = records.len().to_string();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", topic, "--partitions", &n],
        None,
    );
    let mut input = String::new();
    for (p, &count) in records.iter().enumerate() {
        let keys = keys_for(records.len() as u32, p as u32, count);
        for key in keys {
            input.push_str(&format!("{key}\tv\n"));
        }
    }
    if !input.is_empty() {
        k.produce(
            topic,
            &["--reader-property", "parse.key=true"],
            input.as_bytes(),
        );
    }
    for (p, &count) in records.iter().enumerate() {
        assert_eq!(end(k, topic, p as u32), count as i64, "partition {p}");
    }
}

/// `count` keys that Kafka's partitioner maps to `partition` of `n`.
fn keys_for(n: u32, partition: u32, count: usize) -> Vec<String> {
    (0..)
        .map(|i| format!("k{i}"))
        .filter(|k| kafkit::partitioner::partition_for_key(k.as_bytes(), n) == partition)
        .take(count)
        .collect()
}

fn end(k: &Kafkit, topic: &str, p: u32) -> i64 {
    dir(k)
        .partition(topic, p)
        .unwrap()
        .snapshot()
        .unwrap()
        .log_end_offset
}

fn seed(k: &Kafkit, group: &str, offsets: &[(&str, u32, i64)]) {
    let map: BTreeMap<TopicPartition, i64> =
        offsets.iter().map(|(t, p, o)| (tp(t, *p), *o)).collect();
    dir(k).groups().reset_offsets(group, &map).unwrap();
}

fn owned(v: &[(&str, u32, i64)]) -> Vec<(String, u32, i64)> {
    v.iter().map(|(t, p, o)| (t.to_string(), *p, *o)).collect()
}

/// A live member of `group` subscribed to `topics`, polled until the group is Stable.
fn live_member(k: &Kafkit, group: &str, topics: &[(&str, u32)]) -> Member {
    let store = dir(k).groups();
    let mut member = store
        .join(group, "console-consumer", MemberConfig::default())
        .unwrap();
    let sub: BTreeMap<String, u32> = topics.iter().map(|(t, n)| (t.to_string(), *n)).collect();
    wait_for(&format!("group {group} Stable"), || {
        member.poll(&sub, &BTreeMap::new()).unwrap();
        store.describe(group).unwrap().unwrap().state == GroupState::Stable
    });
    member
}

fn out_err(k: &Kafkit, args: &[&str]) -> (Option<i32>, String, String) {
    let out = k.run(G, args, None);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const DRY_RUN_WARN: &str = "WARN: No action will be performed as the --execute option is missing. In version 5.0, this command will require either --dry-run or --execute to be specified. You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.\n";

/// Expected (partition, new offset) rows of one reset.
type Rows = Vec<(u32, i64)>;

fn reset_table(rows: &[(&str, &str, u32, i64)]) -> String {
    let gw = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(15);
    let tw = rows.iter().map(|r| r.1.len()).max().unwrap_or(0).max(15);
    let mut s = format!(
        "\n{:<gw$} {:<tw$} {:<10} NEW-OFFSET",
        "GROUP", "TOPIC", "PARTITION"
    );
    for (g, t, p, o) in rows {
        s.push_str(&format!("\n{g:<gw$} {t:<tw$} {p:<10} {o}"));
    }
    s.push('\n');
    s
}

#[test]
fn list_plain_with_state_and_type() {
    let k = Kafkit::new();
    topic_with(&k, "t", &[1, 1]);
    assert_eq!(k.ok(G, &["--list"], None), "");
    seed(&k, "beta", &[("t", 0, 0)]);
    seed(&k, "alpha", &[("t", 1, 1)]);
    let _m = live_member(&k, "live", &[("t", 2)]);
    assert_eq!(k.ok(G, &["--list"], None), "alpha\nbeta\nlive\n");
    let row = |g: &str, s: &str| format!("{g:<25} {s:<20}\n");
    assert_eq!(
        k.ok(G, &["--list", "--state"], None),
        row("GROUP", "STATE")
            + &row("alpha", "Empty")
            + &row("beta", "Empty")
            + &row("live", "Stable")
    );
    assert_eq!(
        k.ok(G, &["--list", "--state", "stable"], None),
        row("GROUP", "STATE") + &row("live", "Stable")
    );
    let typed = |g: &str, t: &str, s: &str| format!("{g:<25} {t:<20} {s:<20}\n");
    assert_eq!(
        k.ok(G, &["--list", "--type", "--state", "Empty"], None),
        typed("GROUP", "TYPE", "STATE")
            + &typed("alpha", "Classic", "Empty")
            + &typed("beta", "Classic", "Empty")
    );
    assert_eq!(
        k.ok(G, &["--list", "--type", "consumer"], None),
        format!("{:<25} {:<20}\n", "GROUP", "TYPE")
    );
    let long = "a-group-id-longer-than-fifteen";
    seed(&k, long, &[("t", 0, 0)]);
    let out = k.ok(G, &["--list", "--type=CLASSIC"], None);
    assert!(
        out.starts_with(&format!("{:<40} {:<20}\n", "GROUP", "TYPE")),
        "{out}"
    );
    let err = k.fails(G, &["--list", "--state", "Stable,Running"], None, 2);
    assert!(err.starts_with("Invalid state list 'Stable,Running'. Valid states are: PreparingRebalance, CompletingRebalance, Stable, Dead, Empty, Assigning, Reconciling"), "{err}");
    let err = k.fails(G, &["--list", "--type", "share"], None, 2);
    assert!(
        err.starts_with("Invalid types list 'share'. Valid types are: Classic, Consumer"),
        "{err}"
    );
}

#[test]
fn describe_every_view_of_a_stable_group() {
    let k = Kafkit::new();
    topic_with(&k, "orders", &[5, 3]);
    topic_with(&k, "old-topic", &[4]);
    seed(&k, "g", &[("orders", 0, 2), ("old-topic", 0, 1)]);
    let member = live_member(&k, "g", &[("orders", 2)]);
    let id = member.member_id().to_string();
    let host = format!("/{}", hostname());
    let cw = id.len().max(15);
    let hw = host.len().max(15);
    let line =
        |g: &str, t: &str, p: &str, c: &str, e: &str, l: &str, ci: &str, h: &str, cl: &str| {
            format!("\n{g:<15} {t:<15} {p:<10} {c:<15} {e:<15} {l:<15} {ci:<cw$} {h:<hw$} {cl}")
        };
    let expected = line(
        "GROUP",
        "TOPIC",
        "PARTITION",
        "CURRENT-OFFSET",
        "LOG-END-OFFSET",
        "LAG",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
    ) + &line(
        "g",
        "orders",
        "0",
        "2",
        "5",
        "3",
        &id,
        &host,
        "console-consumer",
    ) + &line(
        "g",
        "orders",
        "1",
        "-",
        "3",
        "-",
        &id,
        &host,
        "console-consumer",
    ) + &line("g", "old-topic", "0", "1", "4", "3", "-", "-", "-")
        + "\n";
    let (code, out, err) = out_err(&k, &["--describe", "--group", "g"]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert_eq!(out, expected);
    assert_eq!(
        k.ok(G, &["--describe", "--group", "g", "--offsets"], None),
        expected
    );

    let verbose = k.ok(G, &["--describe", "--group", "g", "--verbose"], None);
    let first = verbose.lines().nth(1).unwrap();
    assert!(
        first.starts_with(&format!(
            "{:<15} {:<15} {:<10} {:<15} {:<15}",
            "GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "CURRENT-OFFSET"
        )),
        "{verbose}"
    );
    assert!(
        verbose.contains(&format!(
            "\n{:<15} {:<15} {:<10} {:<15} {:<15} {:<15} {:<15} ",
            "g", "orders", "0", "-", "2", "5", "3"
        )),
        "{verbose}"
    );

    let lw = "console-consumer".len();
    let members = k.ok(G, &["--describe", "--group", "g", "--members"], None);
    assert_eq!(
        members,
        format!(
            "\n{:<15} {:<cw$} {:<hw$} {:<lw$} {:<15} \n{:<15} {id:<cw$} {host:<hw$} {:<lw$} {:<15} \n",
            "GROUP",
            "CONSUMER-ID",
            "HOST",
            "CLIENT-ID",
            "#PARTITIONS",
            "g",
            "console-consumer",
            "2"
        )
    );
    let members = k.ok(
        G,
        &["--describe", "--group", "g", "--members", "--verbose"],
        None,
    );
    assert_eq!(
        members,
        format!(
            "\n{:<15} {:<cw$} {:<hw$} {:<lw$} {:<15} {:<15} {:<20} {:<15} {:<20}\n{:<15} {id:<cw$} {host:<hw$} {:<lw$} {:<15} {:<15} {:<20} {:<15} {:<20}\n",
            "GROUP",
            "CONSUMER-ID",
            "HOST",
            "CLIENT-ID",
            "#PARTITIONS",
            "CURRENT-EPOCH",
            "CURRENT-ASSIGNMENT",
            "TARGET-EPOCH",
            "TARGET-ASSIGNMENT",
            "g",
            "console-consumer",
            "2",
            "-",
            "orders:0,1",
            "-",
            "-"
        )
    );

    let coordinator = format!("{}  (0)", k.log_dir().display());
    let kw = coordinator.len().max(25);
    let state = k.ok(G, &["--describe", "--group", "g", "--state"], None);
    assert_eq!(
        state,
        format!(
            "\n{:<15} {:<kw$} {:<20} {:<20} #MEMBERS\n{:<15} {coordinator:<kw$} {:<20} {:<20} 1\n",
            "GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "g", "range", "Stable"
        )
    );
    let state = k.ok(
        G,
        &["--describe", "--group", "g", "--state", "--verbose"],
        None,
    );
    assert_eq!(
        state,
        format!(
            "\n{:<15} {:<kw$} {:<20} {:<20} {:<15} {:<25} #MEMBERS\n{:<15} {coordinator:<kw$} {:<20} {:<20} {:<15} {:<25} 1\n",
            "GROUP",
            "COORDINATOR (ID)",
            "ASSIGNMENT-STRATEGY",
            "STATE",
            "GROUP-EPOCH",
            "TARGET-ASSIGNMENT-EPOCH",
            "g",
            "range",
            "Stable",
            "-",
            "-"
        )
    );
    drop(member);
}

#[test]
fn describe_empty_missing_and_all_groups() {
    let k = Kafkit::new();
    topic_with(&k, "t", &[3]);
    let group = "group-with-a-long-name";
    seed(&k, group, &[("t", 0, 1)]);
    seed(&k, "a", &[("t", 0, 3)]);
    let (code, out, err) = out_err(&k, &["--describe", "--group", group]);
    assert_eq!(code, Some(0));
    assert_eq!(
        err,
        format!("\nConsumer group '{group}' has no active members.\n")
    );
    let line = |g: &str, t: &str, p: &str, c: &str, e: &str, l: &str| {
        format!(
            "\n{g:<22} {t:<15} {p:<10} {c:<15} {e:<15} {l:<15} {:<15} {:<15} -",
            "-", "-"
        )
    };
    let header = |g: &str| {
        format!(
            "\n{:<w$} {:<15} {:<10} {:<15} {:<15} {:<15} {:<15} {:<15} CLIENT-ID",
            "GROUP",
            "TOPIC",
            "PARTITION",
            "CURRENT-OFFSET",
            "LOG-END-OFFSET",
            "LAG",
            "CONSUMER-ID",
            "HOST",
            w = g.len().max(15)
        )
    };
    assert_eq!(
        out,
        header(group) + &line(group, "t", "0", "1", "3", "2") + "\n"
    );

    // --all-groups: sorted by id, one table each.
    let (code, out, err) = out_err(&k, &["--describe", "--all-groups"]);
    assert_eq!(code, Some(0));
    assert!(out.starts_with(&header("a")), "{out}");
    assert_eq!(out.matches("\nGROUP ").count(), 2, "{out}");
    assert_eq!(err.matches("has no active members").count(), 2);

    // A group that does not exist fails the whole command, before anything is printed.
    let (code, out, err) = out_err(&k, &["--describe", "--group", "a", "--group", "nope"]);
    assert_eq!(code, Some(1));
    assert_eq!(out, "");
    assert_eq!(
        err,
        "Error: Executing consumer group command failed due to org.apache.kafka.common.errors.GroupIdNotFoundException: Group nope not found.\n"
    );

    // The members view of an empty group: the header only.
    let (_, out, err) = out_err(&k, &["--describe", "--group", "a", "--members"]);
    assert_eq!(
        out,
        format!(
            "\n{:<15} {:<15} {:<15} {:<15} {:<15} \n",
            "GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"
        )
    );
    assert_eq!(err, "\nConsumer group 'a' has no active members.\n");
    let state = k.ok(G, &["--describe", "--group", "a", "--state"], None);
    assert!(
        state.contains(" -                    Empty                0\n"),
        "{state}"
    );
}

#[test]
fn reset_scenarios_dry_run_and_execute() {
    let k = Kafkit::new();
    topic_with(&k, "t", &[10, 4, 0]);
    let seeded = [("t", 0, 5), ("t", 1, 2)];
    seed(&k, "g", &seeded);
    let cases: Vec<(Vec<&str>, Rows)> = vec![
        (
            vec!["--topic", "t", "--to-earliest"],
            vec![(0, 0), (1, 0), (2, 0)],
        ),
        (
            vec!["--topic", "t", "--to-latest"],
            vec![(0, 10), (1, 4), (2, 0)],
        ),
        (
            vec!["--topic", "t:0,1", "--to-offset", "3"],
            vec![(0, 3), (1, 3)],
        ),
        (
            vec!["--all-topics", "--shift-by", "-2"],
            vec![(0, 3), (1, 0)],
        ),
        (
            vec!["--all-topics", "--shift-by", "2"],
            vec![(0, 7), (1, 4)],
        ),
        (
            vec!["--topic", "t", "--to-current"],
            vec![(0, 5), (1, 2), (2, 0)],
        ),
        (
            vec!["--topic", "t:1", "--to-datetime", "2020-01-01T00:00:00.000"],
            vec![(1, 0)],
        ),
        (
            vec![
                "--topic",
                "t:1",
                "--to-datetime",
                "2020-01-01T00:00:00.000+05:30",
            ],
            vec![(1, 0)],
        ),
        (
            vec!["--topic", "t:0", "--by-duration", "P3650D"],
            vec![(0, 0)],
        ),
    ];
    for (args, rows) in cases {
        let rows: Vec<(&str, &str, u32, i64)> =
            rows.iter().map(|(p, o)| ("g", "t", *p, *o)).collect();
        let mut base = vec!["--reset-offsets", "--group", "g"];
        base.extend(&args);
        // Default: a dry run with Kafka's warning; nothing changes.
        let (code, out, err) = out_err(&k, &base);
        assert_eq!(
            (code, out.as_str()),
            (Some(0), reset_table(&rows).as_str()),
            "{args:?}: {err}"
        );
        assert!(err.starts_with(DRY_RUN_WARN), "{args:?}: {err}");
        let dry: Vec<&str> = base.iter().copied().chain(["--dry-run"]).collect();
        assert_eq!(k.ok(G, &dry, None), reset_table(&rows), "{args:?}");
        assert_eq!(committed(&k, "g"), owned(&seeded), "{args:?}");
        // --execute: the same output, and the offsets are stored (others kept).
        let exec: Vec<&str> = base.iter().copied().chain(["--execute"]).collect();
        assert_eq!(k.ok(G, &exec, None), reset_table(&rows), "{args:?}");
        let mut expected: BTreeMap<u32, i64> = seeded.iter().map(|(_, p, o)| (*p, *o)).collect();
        expected.extend(rows.iter().map(|r| (r.2, r.3)));
        let now: BTreeMap<u32, i64> = committed(&k, "g")
            .into_iter()
            .map(|(_, p, o)| (p, o))
            .collect();
        assert_eq!(now, expected, "{args:?}");
        seed(&k, "g", &seeded);
        dir(&k).groups().delete_offsets("g", &[tp("t", 2)]).unwrap();
    }
}

#[test]
fn reset_clamps_and_warns() {
    let k = Kafkit::new();
    topic_with(&k, "t", &[4]);
    seed(&k, "g", &[("t", 0, 3)]);
    let (code, out, err) = out_err(
        &k,
        &[
            "--reset-offsets",
            "--group",
            "g",
            "--topic",
            "t",
            "--to-offset",
            "99",
            "--execute",
        ],
    );
    assert_eq!(code, Some(0));
    assert_eq!(out, reset_table(&[("g", "t", 0, 4)]));
    assert_eq!(
        err,
        "WARN: New offset (99) is higher than latest offset for topic partition t-0. Value will be set to 4\n"
    );
    let (_, out, err) = out_err(
        &k,
        &[
            "--reset-offsets",
            "--group",
            "g",
            "--topic",
            "t",
            "--shift-by",
            "-10",
            "--execute",
        ],
    );
    assert_eq!(out, reset_table(&[("g", "t", 0, 0)]));
    assert_eq!(
        err,
        "WARN: New offset (-6) is lower than earliest offset for topic partition t-0. Value will be set to 0\n"
    );
    assert_eq!(committed(&k, "g"), owned(&[("t", 0, 0)]));
    // No record at or after the time: Kafka's warning, then the log end.
    let (_, out, err) = out_err(
        &k,
        &[
            "--reset-offsets",
            "--group",
            "g",
            "--topic",
            "t",
            "--to-datetime",
            "2999-01-01T00:00:00.000",
            "--dry-run",
        ],
    );
    assert_eq!(out, reset_table(&[("g", "t", 0, 4)]));
    assert_eq!(
        err,
        "Warn: Partition 0 from topic t is empty. Falling back to latest known offset.\n"
    );
}

fn utc_now_text() -> String {
    let out = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%S.%3N"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn reset_by_time_finds_the_first_later_record() {
    let k = Kafkit::new();
    topic_with(&k, "t", &[3]);
    // At least a second on each side of `between` (lower bounds: a slower machine only
    // widens the gaps).
    std::thread::sleep(Duration::from_millis(1100));
    let between = utc_now_text();
    std::thread::sleep(Duration::from_millis(1100));
    k.produce("t", &[], b"d\ne\n");
    let (_, out, _) = out_err(
        &k,
        &[
            "--reset-offsets",
            "--group",
            "g",
            "--topic",
            "t",
            "--to-datetime",
            &between,
            "--execute",
        ],
    );
    assert_eq!(out, reset_table(&[("g", "t", 0, 3)]));
    assert_eq!(committed(&k, "g"), owned(&[("t", 0, 3)]));
    let (_, out, _) = out_err(
        &k,
        &[
            "--reset-offsets",
            "--group",
            "g",
            "--topic",
            "t",
            "--by-duration",
            "PT0.8S",
            "--dry-run",
        ],
    );
    assert_eq!(out, reset_table(&[("g", "t", 0, 3)]));
    let (_, out, _) = out_err(
        &k,
        &[
            "--reset-offsets",
            "--group",
            "g",
            "--topic",
            "t",
            "--by-duration",
            "PT1M",
            "--dry-run",
        ],
    );
    assert_eq!(out, reset_table(&[("g", "t", 0, 0)]));
}

#[test]
fn export_and_from_file_round_trip() {
    let k = Kafkit::new();
    topic_with(&k, "t", &[6, 6]);
    seed(&k, "a", &[("t", 0, 1), ("t", 1, 2)]);
    seed(&k, "b", &[("t", 0, 3)]);
    // One group: 3 columns, then the extra newline Kafka prints.
    let csv = k.ok(
        G,
        &[
            "--reset-offsets",
            "--group",
            "a",
            "--all-topics",
            "--shift-by",
            "3",
            "--export",
            "--dry-run",
        ],
        None,
    );
    assert_eq!(csv, "t,0,4\nt,1,5\n\n");
    let file = k.path("plan-a.csv");
    std::fs::write(&file, &csv).unwrap();
    let f = file.to_str().unwrap();
    let out = k.ok(
        G,
        &[
            "--reset-offsets",
            "--group",
            "a",
            "--from-file",
            f,
            "--execute",
        ],
        None,
    );
    assert_eq!(out, reset_table(&[("a", "t", 0, 4), ("a", "t", 1, 5)]));
    assert_eq!(committed(&k, "a"), owned(&[("t", 0, 4), ("t", 1, 5)]));

    // Several groups: 4 columns.
    let csv = k.ok(
        G,
        &[
            "--reset-offsets",
            "--all-groups",
            "--all-topics",
            "--to-earliest",
            "--export",
            "--dry-run",
        ],
        None,
    );
    assert_eq!(csv, "a,t,0,0\na,t,1,0\nb,t,0,0\n\n");
    let file = k.path("plan-all.csv");
    std::fs::write(&file, "a,t,0,2\nb,t,0,9\nb,t,1,1\n").unwrap();
    let f = file.to_str().unwrap();
    let (code, out, err) = out_err(
        &k,
        &[
            "--reset-offsets",
            "--group",
            "a",
            "--group",
            "b",
            "--from-file",
            f,
            "--execute",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out,
        reset_table(&[("a", "t", 0, 2), ("b", "t", 0, 6), ("b", "t", 1, 1)])
    );
    assert_eq!(
        err,
        "WARN: New offset (9) is higher than latest offset for topic partition t-0. Value will be set to 6\n"
    );
    assert_eq!(committed(&k, "b"), owned(&[("t", 0, 6), ("t", 1, 1)]));
    // A group the file does not mention.
    let before = k.files();
    let err = k.fails(
        G,
        &[
            "--reset-offsets",
            "--group",
            "a",
            "--group",
            "c",
            "--from-file",
            f,
            "--execute",
        ],
        None,
        1,
    );
    assert!(
        err.ends_with("Error: No reset plan for group c found\n"),
        "{err}"
    );
    assert_eq!(k.files(), before);
}

#[test]
fn reset_is_refused_while_the_group_has_live_members() {
    let k = Kafkit::new();
    topic_with(&k, "t", &[3, 3]);
    seed(&k, "g", &[("t", 0, 1), ("t", 1, 1)]);
    seed(&k, "idle", &[("t", 0, 1)]);
    let member = live_member(&k, "g", &[("t", 2)]);
    let before = committed(&k, "g");
    for group_args in [vec!["--group", "g"], vec!["--all-groups"]] {
        let mut args = vec![
            "--reset-offsets",
            "--all-topics",
            "--to-earliest",
            "--execute",
        ];
        args.extend(&group_args);
        let (code, out, err) = out_err(&k, &args);
        assert_eq!(code, Some(1));
        assert_eq!(out, "");
        assert_eq!(
            err,
            "Error: Assignments can only be reset if the group 'g' is inactive, but the current state is Stable.\n"
        );
    }
    assert_eq!(committed(&k, "g"), before);
    assert_eq!(
        committed(&k, "idle"),
        owned(&[("t", 0, 1)]),
        "no group changes on any error"
    );
    // --delete and --delete-offsets are refused too.
    let err = k.fails(G, &["--delete", "--group", "g"], None, 1);
    assert_eq!(
        err,
        "Error: Deletion of some consumer groups failed:\n* Group 'g' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.\n"
    );
    let (code, out, err) = out_err(&k, &["--delete-offsets", "--group", "g", "--topic", "t:0"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        out,
        format!(
            "\n{:<15} {:<10} {:<15}\n{:<15} {:<10} {:<15}\n",
            "TOPIC",
            "PARTITION",
            "STATUS",
            "t",
            "0",
            "Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."
        )
    );
    assert_eq!(
        err,
        "Error: Encountered some partition-level error, see the follow-up details.\n"
    );
    assert_eq!(committed(&k, "g"), before);
    // Once the member has left, the reset goes through.
    member.leave(&BTreeMap::new()).unwrap();
    k.ok(
        G,
        &[
            "--reset-offsets",
            "--group",
            "g",
            "--all-topics",
            "--to-earliest",
            "--execute",
        ],
        None,
    );
    assert_eq!(committed(&k, "g"), owned(&[("t", 0, 0), ("t", 1, 0)]));
}

#[test]
fn delete_groups_and_offsets() {
    let k = Kafkit::new();
    topic_with(&k, "t", &[1, 1]);
    topic_with(&k, "u", &[1]);
    seed(&k, "a", &[("t", 0, 1)]);
    seed(&k, "b", &[("t", 0, 1), ("t", 1, 1), ("u", 0, 1)]);
    seed(&k, "c", &[("t", 0, 1)]);
    assert_eq!(
        k.ok(G, &["--delete", "--group", "c", "--group", "a"], None),
        "Deletion of requested consumer groups ('a', 'c') was successful.\n"
    );
    assert_eq!(k.ok(G, &["--list"], None), "b\n");
    let (code, out, err) = out_err(
        &k,
        &[
            "--delete",
            "--group",
            "nope",
            "--group",
            "x",
            "--all-groups",
        ],
    );
    assert_eq!((code, out.as_str()), (Some(2), ""));
    assert!(
        err.starts_with("Option \"[group]\" can't be used with option \"[all-groups]\""),
        "{err}"
    );
    let (code, out, err) = out_err(&k, &["--delete", "--group", "nope", "--group", "b"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        out,
        "These consumer groups were deleted successfully: 'b'\n"
    );
    assert_eq!(
        err,
        "Error: Deletion of some consumer groups failed:\n* Group 'nope' could not be deleted due to: org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.\n"
    );

    seed(&k, "b", &[("t", 0, 1), ("t", 1, 1), ("u", 0, 1)]);
    let row = |t: &str, p: &str, s: &str| format!("\n{t:<15} {p:<10} {s:<15}");
    let out = k.ok(
        G,
        &["--delete-offsets", "--group", "b", "--topic", "t"],
        None,
    );
    assert_eq!(
        out,
        "Request succeeded for deleting offsets from group b.\n".to_string()
            + &row("TOPIC", "PARTITION", "STATUS")
            + &row("t", "0", "Successful")
            + &row("t", "1", "Successful")
            + "\n"
    );
    assert_eq!(committed(&k, "b"), owned(&[("u", 0, 1)]));
    let (code, out, err) = out_err(
        &k,
        &[
            "--delete-offsets",
            "--group",
            "b",
            "--topic",
            "nosuch",
            "--topic",
            "u:0,3",
        ],
    );
    assert_eq!(code, Some(1));
    let unknown = "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.";
    assert_eq!(
        out,
        row("TOPIC", "PARTITION", "STATUS")
            + &row("nosuch", "-", unknown)
            + &row("u", "0", "Successful")
            + &row("u", "3", unknown)
            + "\n"
    );
    assert_eq!(
        err,
        "Error: Encountered some partition-level error, see the follow-up details.\n"
    );
    let (code, _, err) = out_err(&k, &["--delete-offsets", "--group", "gone", "--topic", "t"]);
    assert_eq!(code, Some(1));
    assert_eq!(err, "Error: The group id does not exist.\n");
}

#[test]
fn validate_regex() {
    let k = Kafkit::new();
    assert_eq!(
        k.ok(G, &["--validate-regex", "orders-.*"], None),
        "The regular expression `orders-.*` is valid.\n"
    );
    let err = k.fails(G, &["--validate-regex", "orders-("], None, 1);
    assert!(
        err.starts_with("Error: The regular expression `orders-(` is invalid: "),
        "{err}"
    );
}

#[test]
fn usage_errors_in_kafkas_order() {
    let k = Kafkit::new();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--group", "g"],
            "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets, --validate-regex",
        ),
        (
            &["--list", "--validate-regex", "x"],
            "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets, --validate-regex",
        ),
        (
            &["--list", "--members"],
            "Option(s) [members] are unavailable given other options on the command line",
        ),
        (
            &["--list", "--verbose"],
            "Option(s) [verbose] are unavailable given other options on the command line",
        ),
        (
            &["--describe", "--group", "g", "--type"],
            "Option(s) [type] are unavailable given other options on the command line",
        ),
        (
            &["--delete", "--group", "g", "--state"],
            "Option(s) [state] are unavailable given other options on the command line",
        ),
        (
            &["--describe"],
            "Option [describe] takes one of these options: [all-groups], [group]",
        ),
        (
            &["--describe", "--group", "g", "--members", "--offsets"],
            "Option [describe] takes at most one of these options: [members], [offsets], [state]",
        ),
        (
            &["--describe", "--group", "g", "--state", "Stable"],
            "Option [describe] does not take a value for [state]",
        ),
        (
            &["--delete"],
            "Option [delete] takes one of these options: [all-groups], [group]",
        ),
        (
            &["--delete", "--group", "g", "--topic", "t"],
            "The consumer does not support topic-specific offset deletion from a consumer group.",
        ),
        (
            &["--delete-offsets", "--group", "g"],
            "Option [delete-offsets] takes the following options: [topic], [group]",
        ),
        (
            &[
                "--delete-offsets",
                "--group",
                "g",
                "--group",
                "h",
                "--topic",
                "t",
            ],
            "Found multiple arguments for option group, but you asked for only one",
        ),
        (
            &["--reset-offsets", "--group", "g", "--dry-run", "--execute"],
            "Option [reset-offsets] only accepts one of [execute] and [dry-run]",
        ),
        (
            &["--reset-offsets", "--dry-run", "--to-earliest"],
            "Option [reset-offsets] takes one of these options: [all-groups], [group]",
        ),
        (
            &[
                "--reset-offsets",
                "--group",
                "g",
                "--dry-run",
                "--to-offset",
                "1",
                "--shift-by",
                "-1",
            ],
            "Option \"[to-offset]\" can't be used with option \"[shift-by]\"",
        ),
        (
            &[
                "--reset-offsets",
                "--group",
                "g",
                "--all-groups",
                "--dry-run",
            ],
            "Option \"[group]\" can't be used with option \"[all-groups]\"",
        ),
        (
            &["--list", "--group", "g"],
            "Option \"[group]\" can't be used with option \"[list]\"",
        ),
        (
            &["--describe", "--group", "g", "--topic", "t"],
            "Option \"[topic]\" can't be used with option \"[describe]\"",
        ),
        (
            &[
                "--reset-offsets",
                "--group",
                "g",
                "--dry-run",
                "--to-earliest",
            ],
            "One of the reset scopes should be defined: --all-topics, --topic.",
        ),
        (
            &[
                "--reset-offsets",
                "--group",
                "g",
                "--dry-run",
                "--topic",
                "t:",
                "--to-earliest",
            ],
            "Invalid topic arg 't:', expected topic name and partitions",
        ),
        (
            &[
                "--reset-offsets",
                "--group",
                "g",
                "--dry-run",
                "--topic",
                "t:0,x",
                "--to-earliest",
            ],
            "Invalid partition 'x' specified in topic arg 't:0,x''",
        ),
        (
            &[
                "--reset-offsets",
                "--group",
                "g",
                "--dry-run",
                "--all-topics",
            ],
            "Option '[reset-offsets]' requires one of the following scenarios: [[to-offset], [to-datetime], [by-duration], [to-earliest], [to-latest], [to-current], [shift-by], [from-file]]",
        ),
        (&["--list", "--bogus"], "bogus is not a recognized option"),
        (
            &["--reset-offsets", "--group", "g", "--to-offset", "x"],
            "Cannot parse argument 'x' of option to-offset",
        ),
        (
            &["--reset-offsets", "--group", "g", "--to-offset"],
            "Option to-offset requires an argument",
        ),
    ];
    for (args, msg) in cases {
        let err = k.fails(G, args, None, 2);
        let err = err.strip_prefix(DRY_RUN_WARN).unwrap_or(&err);
        assert!(
            err.starts_with(msg),
            "{args:?}: expected {msg:?}, got {err:?}"
        );
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    // The dry-run warning comes first, on stderr, even before a later usage error.
    let err = k.fails(G, &["--reset-offsets", "--to-earliest"], None, 2);
    assert!(err.starts_with(DRY_RUN_WARN), "{err}");
}

#[test]
fn bad_input_changes_nothing() {
    let k = Kafkit::new();
    topic_with(&k, "t", &[5, 5]);
    seed(&k, "g", &[("t", 0, 2), ("t", 1, 2)]);
    let plan = k.path("bad.csv");
    let p = plan.to_str().unwrap();
    let before = k.files();
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (
            vec!["--topic", "t", "--to-datetime", "2024-01-01"],
            "2024-01-01",
            "Error: Executing consumer group command failed due to java.text.ParseException: Error parsing timestamp. It does not contain a 'T' according to ISO8601 format (2024-01-01).\n",
        ),
        (
            vec!["--topic", "t", "--to-datetime", "2024-01-01T10:00:00"],
            "",
            "Error: Executing consumer group command failed due to java.text.ParseException: Unparseable date: \"2024-01-01T10:00:00Z\"\n",
        ),
        (
            vec!["--topic", "t", "--to-datetime", "2024-02-30T10:00:00.000"],
            "",
            "Error: Executing consumer group command failed due to java.text.ParseException: Unparseable date: \"2024-02-30T10:00:00.000Z\"\n",
        ),
        (
            vec!["--topic", "t", "--by-duration", "1 hour"],
            "",
            "Error: Executing consumer group command failed due to Text cannot be parsed to a Duration: 1 hour\n",
        ),
        (
            vec!["--topic", "t:0,7", "--to-earliest"],
            "",
            "Error: Executing consumer group command failed due to The partitions \"t-7\" do not exist\n",
        ),
        (vec!["--topic", "nosuch", "--to-earliest"], "", "nosuch"),
        (
            vec!["--from-file", p],
            "t,0,1\nt,zero,1\n",
            "line 2 (\"t,zero,1\"): partition 'zero' is not an int; expected topic,partition,offset",
        ),
        (
            vec!["--from-file", p],
            "t,0,1\nt,1,2,3,4\n",
            "line 2 (\"t,1,2,3,4\"): 5 columns; expected topic,partition,offset",
        ),
        (
            vec!["--from-file", p],
            "t,0,1\nt,9,1\n",
            "The partitions \"t-9\" do not exist",
        ),
        (
            vec!["--from-file", p],
            "t,0,x\n",
            "line 1 (\"t,0,x\"): offset 'x' is not a long; expected topic,partition,offset",
        ),
    ];
    for (args, file, msg) in cases {
        let mut all = vec!["--reset-offsets", "--group", "g", "--execute"];
        all.extend(&args);
        if args.contains(&p) {
            std::fs::write(&plan, file).unwrap();
        }
        let err = k.fails(G, &all, None, 1);
        assert!(err.contains(msg), "{args:?}: expected {msg:?} in {err:?}");
        let after: Vec<_> = k.files().into_iter().filter(|(f, _)| *f != plan).collect();
        assert_eq!(after, before, "{args:?} changed the log dir");
    }
    let _ = std::fs::remove_file(&plan);
    let err = k.fails(
        G,
        &[
            "--reset-offsets",
            "--group",
            "g",
            "--topic",
            "t",
            "--shift-by",
            "1",
            "--group",
            "h",
            "--execute",
        ],
        None,
        1,
    );
    assert!(
        err.contains(
            "Cannot shift offset for partition t-0 since there is no current committed offset"
        ),
        "{err}"
    );
    assert_eq!(k.files(), before);
}

#[test]
fn describe_warns_while_rebalancing() {
    let k = Kafkit::new();
    topic_with(&k, "t", &[2, 2]);
    let _first = live_member(&k, "g", &[("t", 2)]);
    // A second member joins: the range assignment gives it partition 1, which the first member
    // still owns until its next poll.
    let store = dir(&k).groups();
    let mut second = store
        .join("g", "console-consumer", MemberConfig::default())
        .unwrap();
    let sub = BTreeMap::from([("t".to_string(), 2)]);
    second.poll(&sub, &BTreeMap::new()).unwrap();
    assert_eq!(
        store.describe("g").unwrap().unwrap().state,
        GroupState::PreparingRebalance
    );
    let (code, out, err) = out_err(&k, &["--describe", "--group", "g"]);
    assert_eq!(code, Some(0));
    assert_eq!(err, "\nWarning: Consumer group 'g' is rebalancing.\n");
    assert_eq!(out.lines().count(), 4, "{out}");
    let state = k.ok(G, &["--list", "--state", "PreparingRebalance"], None);
    assert!(state.contains("\ng "), "{state}");
}

fn json_of(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not one JSON document ({e}): {text}"))
}

#[test]
fn output_json_for_list_describe_and_reset() {
    use serde_json::json;
    let k = Kafkit::new();
    topic_with(&k, "orders", &[5, 3]);
    topic_with(&k, "old-topic", &[4]);
    seed(&k, "g", &[("orders", 0, 2), ("old-topic", 0, 1)]);
    seed(&k, "idle", &[("orders", 1, 3)]);
    let member = live_member(&k, "g", &[("orders", 2)]);
    let id = member.member_id().to_string();
    let host = hostname();

    // --output text is the default, byte for byte.
    assert_eq!(
        k.ok(G, &["--describe", "--group", "g", "--output", "text"], None),
        k.ok(G, &["--describe", "--group", "g"], None)
    );

    let (code, out, err) = out_err(&k, &["--list", "--output", "json"]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert_eq!(
        json_of(&out),
        json!({"groups": [
            {"group": "g", "type": "Classic", "state": "Stable"},
            {"group": "idle", "type": "Classic", "state": "Empty"},
        ]})
    );
    let out = k.ok(G, &["--list", "--state", "Empty", "--output", "json"], None);
    assert_eq!(
        json_of(&out),
        json!({"groups": [{"group": "idle", "type": "Classic", "state": "Empty"}]})
    );

    let (code, out, err) = out_err(&k, &["--describe", "--group", "g", "--output", "json"]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let owned_row = |p: u32, current: serde_json::Value, end: i64, lag: serde_json::Value| {
        json!({"topic": "orders", "partition": p, "leaderEpoch": null, "currentOffset": current,
            "logEndOffset": end, "lag": lag, "consumerId": id, "host": host,
            "clientId": "console-consumer"})
    };
    let expected = json!({"groups": [{
        "group": "g",
        "state": "Stable",
        "partitions": [
            owned_row(0, json!(2), 5, json!(3)),
            owned_row(1, json!(null), 3, json!(null)),
            {"topic": "old-topic", "partition": 0, "leaderEpoch": null, "currentOffset": 1,
                "logEndOffset": 4, "lag": 3, "consumerId": null, "host": null, "clientId": null},
        ],
        "totalLag": 6,
    }]});
    assert_eq!(json_of(&out), expected);
    // --verbose and --offsets do not change the document.
    let out = k.ok(
        G,
        &[
            "--describe",
            "--group",
            "g",
            "--offsets",
            "--verbose",
            "--output",
            "json",
        ],
        None,
    );
    assert_eq!(json_of(&out), expected);

    // Several groups: one document; the notice for the empty one stays on stderr.
    let (code, out, err) = out_err(&k, &["--describe", "--all-groups", "--output", "json"]);
    assert_eq!(code, Some(0));
    assert_eq!(err, "\nConsumer group 'idle' has no active members.\n");
    let doc = json_of(&out);
    assert_eq!(doc["groups"][0], expected["groups"][0]);
    assert_eq!(
        doc["groups"][1],
        json!({"group": "idle", "state": "Empty", "partitions": [
            {"topic": "orders", "partition": 1, "leaderEpoch": null, "currentOffset": 3,
                "logEndOffset": 3, "lag": 0, "consumerId": null, "host": null, "clientId": null},
        ], "totalLag": 0})
    );

    let out = k.ok(
        G,
        &[
            "--describe",
            "--group",
            "g",
            "--members",
            "--output",
            "json",
        ],
        None,
    );
    assert_eq!(
        json_of(&out),
        json!({"groups": [{"group": "g", "state": "Stable", "members": [{
            "consumerId": id, "host": host, "clientId": "console-consumer", "partitions": 2,
            "assignment": [{"topic": "orders", "partition": 0}, {"topic": "orders", "partition": 1}],
        }]}]})
    );

    let out = k.ok(
        G,
        &[
            "--describe",
            "--group",
            "g",
            "--group",
            "idle",
            "--state",
            "--output",
            "json",
        ],
        None,
    );
    let coordinator = json!({"id": 0, "host": k.log_dir().display().to_string()});
    assert_eq!(
        json_of(&out),
        json!({"groups": [
            {"group": "g", "coordinator": coordinator, "assignmentStrategy": "range",
                "state": "Stable", "members": 1},
            {"group": "idle", "coordinator": coordinator, "assignmentStrategy": null,
                "state": "Empty", "members": 0},
        ]})
    );

    // The reset plan, dry run then executed.
    let args = [
        "--reset-offsets",
        "--group",
        "idle",
        "--topic",
        "orders",
        "--to-earliest",
        "--output",
        "json",
    ];
    let plan = |executed: bool| {
        json!({"groups": [{"group": "idle", "partitions": [
            {"topic": "orders", "partition": 0, "newOffset": 0},
            {"topic": "orders", "partition": 1, "newOffset": 0},
        ]}], "executed": executed})
    };
    let (code, out, err) = out_err(&k, &[&args[..], &["--dry-run"]].concat());
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert_eq!(json_of(&out), plan(false));
    assert_eq!(committed(&k, "idle"), owned(&[("orders", 1, 3)]));
    let out = k.ok(G, &[&args[..], &["--execute"]].concat(), None);
    assert_eq!(json_of(&out), plan(true));
    assert_eq!(
        committed(&k, "idle"),
        owned(&[("orders", 0, 0), ("orders", 1, 0)])
    );
    drop(member);
}

#[test]
fn output_table_has_lag_totals() {
    let k = Kafkit::new();
    topic_with(&k, "orders", &[5, 3]);
    topic_with(&k, "old-topic", &[4]);
    seed(
        &k,
        "g",
        &[("orders", 0, 2), ("orders", 1, 1), ("old-topic", 0, 1)],
    );
    let (code, out, err) = out_err(&k, &["--describe", "--group", "g", "--output", "table"]);
    assert_eq!(code, Some(0));
    assert_eq!(err, "\nConsumer group 'g' has no active members.\n");
    let row = |cells: &[&str]| -> String {
        let line = out
            .lines()
            .find(|l| {
                let got: Vec<&str> = l.split('|').map(str::trim).collect();
                got.len() > cells.len() && got[1..=cells.len()] == *cells
            })
            .unwrap_or_else(|| panic!("no row {cells:?} in\n{out}"));
        line.to_string()
    };
    assert!(out.starts_with("GROUP g (Empty)\n+--"), "{out}");
    row(&["orders", "0", "2", "5", "3", "-", "-", "-"]);
    row(&["orders", "1", "1", "3", "2"]);
    row(&["orders", "TOTAL LAG", "", "", "5"]);
    row(&["old-topic", "TOTAL LAG", "", "", "3"]);
    row(&["TOTAL LAG (group)", "", "", "", "8"]);
    assert!(out.is_ascii() && !out.contains('\x1b'), "{out}");

    let out = k.ok(G, &["--list", "--output", "table"], None);
    assert!(out.contains("| GROUP | TYPE    | STATE |"), "{out}");
    assert!(out.contains("| g     | Classic | Empty |"), "{out}");

    let out = k.ok(
        G,
        &[
            "--reset-offsets",
            "--group",
            "g",
            "--topic",
            "old-topic",
            "--to-latest",
            "--dry-run",
            "--output",
            "table",
        ],
        None,
    );
    assert!(
        out.contains("| GROUP | TOPIC     | PARTITION | NEW-OFFSET |"),
        "{out}"
    );
    assert!(
        out.contains("| g     | old-topic |         0 |          4 |"),
        "{out}"
    );

    let out = k.ok(
        G,
        &["--describe", "--group", "g", "--state", "--output", "table"],
        None,
    );
    assert!(out.contains("| Empty |        0 |"), "{out}");
    let out = k.ok(
        G,
        &[
            "--describe",
            "--group",
            "g",
            "--members",
            "--output",
            "table",
        ],
        None,
    );
    assert!(out.contains("| GROUP | CONSUMER-ID |"), "{out}");
}

#[test]
fn output_usage_errors() {
    let k = Kafkit::new();
    topic_with(&k, "t", &[1]);
    seed(&k, "g", &[("t", 0, 0)]);
    let err = k.fails(G, &["--list", "--output", "xml"], None, 2);
    assert_eq!(
        err,
        "Invalid value 'xml' for option --output; valid values are: text, json, table (see kafka-consumer-groups --help)\n"
    );
    for format in ["json", "table", "text"] {
        let err = k.fails(
            G,
            &[
                "--reset-offsets",
                "--group",
                "g",
                "--all-topics",
                "--to-earliest",
                "--dry-run",
                "--export",
                "--output",
                format,
            ],
            None,
            2,
        );
        assert_eq!(
            err,
            "Option \"[output]\" can't be used with option \"[export]\" (see kafka-consumer-groups --help)\n"
        );
    }
    let err = k.fails(
        G,
        &["--delete", "--group", "g", "--output", "json"],
        None,
        2,
    );
    assert!(
        err.starts_with("--output json is not supported with --delete;"),
        "{err}"
    );
    let err = k.fails(
        G,
        &["--validate-regex", "a.*", "--output", "table"],
        None,
        2,
    );
    assert!(
        err.starts_with("--output table is not supported with --validate-regex;"),
        "{err}"
    );
    // Nothing was changed.
    assert_eq!(committed(&k, "g"), owned(&[("t", 0, 0)]));
}

#[test]
fn reset_progress_only_on_a_terminal() {
    let k = Kafkit::new();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "wide", "--partitions", "500"],
        None,
    );
    let tool = assert_cmd::cargo::cargo_bin(G);
    let under_pty = |extra: &str| {
        k.under_pty(&format!(
            "'{}' --reset-offsets --group g --topic wide --to-earliest --execute {extra}",
            tool.display()
        ))
    };
    let screen = under_pty("");
    assert!(screen.contains("/500 partitions"), "{screen:?}");
    assert!(!under_pty("--no-progress").contains("partitions"));
    // On a pipe stderr has nothing but the output.
    let (code, stdout, stderr) = out_err(
        &k,
        &[
            "--reset-offsets",
            "--group",
            "g",
            "--topic",
            "wide",
            "--to-latest",
            "--execute",
        ],
    );
    assert_eq!(code, Some(0));
    assert_eq!(stderr, "");
    assert_eq!(stdout.lines().filter(|l| l.contains("wide")).count(), 500);
}

/// A reset plan line `topic,partition` without an offset is read as offset 0 (then clamped
/// to the log start), as Kafka's CSV reader reads it (issue 11, item 15).
#[test]
fn a_plan_line_without_an_offset_means_offset_zero() {
    let k = Kafkit::new();
    topic_with(&k, "t", &[5, 5]);
    seed(&k, "g", &[("t", 0, 2), ("t", 1, 2)]);
    let plan = k.path("plan.csv");
    std::fs::write(&plan, "t,0\nt,1,4\n").unwrap();
    let args = [
        "--reset-offsets",
        "--group",
        "g",
        "--execute",
        "--from-file",
        plan.to_str().unwrap(),
    ];
    k.ok(G, &args, None);
    assert_eq!(
        common::committed(&k, "g"),
        [("t".to_string(), 0, 0), ("t".to_string(), 1, 4)]
    );
}
