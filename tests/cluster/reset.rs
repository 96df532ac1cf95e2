//! `kafka-consumer-groups --reset-offsets --execute` and `--describe` on three nodes: while the
//! group's coordinator moves (its node killed a moment before), and while a partition's only
//! replica is down (the partition has no leader). Java's tool on the same state is the oracle.

use std::process::Output;

use super::harness::{Session, unique};
use crate::common::broker::GROUP_COMMAND;
use crate::common::{sorted, text};

const G: &str = "kafka-consumer-groups";

/// Produces 30 keyed records to `topic`: keys `k0` to `k29`, which land on every partition of
/// a three-partition topic (Kafka's murmur2 of the key, so the same as Java's producer).
fn produce_keyed(c: &Session, topic: &str) {
    let input: String = (0..30).map(|i| format!("k{i}:v{i}\n")).collect();
    let out = c.ours_at(
        c.bootstrap(),
        "kafka-console-producer",
        &[
            "--topic",
            topic,
            "--reader-property",
            "parse.key=true",
            "--reader-property",
            "key.separator=:",
        ],
        Some(input.as_bytes()),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// Our error for a failure Java reports with `Error: ...` on stdout (and status 0): the same
/// line on stderr, status 1 (a deliberate difference).
fn our_error_is_javas(ours: &Output, java: &Output) {
    let java_line = text(&java.stdout)
        .lines()
        .find(|l| l.starts_with("Error: "))
        .unwrap_or_else(|| panic!("Java printed no error: {}", text(&java.stdout)))
        .to_string();
    assert_eq!(ours.status.code(), Some(1), "{}", text(&ours.stdout));
    assert_eq!(text(&ours.stderr), format!("{java_line}\n"));
    assert_eq!(text(&ours.stdout), "");
}

#[test]
pub fn reset_and_describe_ride_out_a_coordinator_that_moves() {
    let Some(c) = Session::begin() else {
        return;
    };
    let topic = unique("moving");
    let (reset, described) = (unique("moving-reset"), unique("moving-describe"));
    c.ours_ok(
        "kafka-topics",
        &[
            "--create",
            "--topic",
            &topic,
            "--partitions",
            "3",
            "--replication-factor",
            "3",
        ],
    );
    produce_keyed(&c, &topic);
    for group in [&reset, &described] {
        c.ours_ok(
            G,
            &[
                "--reset-offsets",
                "--group",
                group,
                "--topic",
                &topic,
                "--to-latest",
                "--execute",
            ],
        );
    }
    // The view before, ours and Java's.
    let before = c.same_as_java(
        G,
        GROUP_COMMAND,
        &["--describe", "--group", &described],
        str::to_string,
    );
    // The followers of __consumer_offsets learn its high watermark past the commits above
    // within two of their fetches, each held up to replica.fetch.wait.max.ms (500 ms). A
    // coordinator elected on one of them serves reads at that mark, so a kill before then could
    // leave the new coordinator without the group for a moment, for Java's tool as for ours.
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let from = c.coordinator(&reset);
    c.kill(from);
    // Both at once, the moment the node is gone: they wait for the group to move.
    let describing = {
        let bootstrap = c.bootstrap().to_string();
        let group = described.clone();
        std::thread::spawn(move || {
            crate::common::broker::kafkit_at(G, &bootstrap)
                .args(["--describe", "--group", &group])
                .timeout(std::time::Duration::from_secs(300))
                .output()
                .expect("kafka-consumer-groups runs")
        })
    };
    let reset_args = [
        "--reset-offsets",
        "--group",
        &reset,
        "--topic",
        &topic,
        "--to-earliest",
        "--execute",
    ];
    let ours = c.ours_ok(G, &reset_args);
    let ours_described = super::harness::ok(G, &[], describing.join().expect("describe thread"));
    assert_ne!(c.coordinator(&reset), from, "the group moved");

    // Java's, on the state the cluster settled in: the same reset (again) and the same view.
    let java = c.java_ok(GROUP_COMMAND, &reset_args);
    assert_eq!(
        sorted(&ours),
        sorted(&java),
        "reset, up to Java's hash-map order"
    );
    assert_eq!(
        ours.lines().filter(|l| l.ends_with(" 0")).count(),
        3,
        "{ours}"
    );
    let java_described = c.java_ok(GROUP_COMMAND, &["--describe", "--group", &described]);
    assert_eq!(ours_described, java_described);
    assert_eq!(
        ours_described, before,
        "nothing changed but the coordinator"
    );
    c.same_as_java(
        G,
        GROUP_COMMAND,
        &["--describe", "--group", &reset],
        str::to_string,
    );
}

/// Resets that touch partition `lonely` of `topic`, which has no leader, fail as Java's do.
fn refusals_match_java(c: &Session, group: &str, topic: &str, lonely: u32) {
    let whole = format!("{topic}:{lonely}");
    let reset = ["--reset-offsets", "--group", group];
    for scope in [
        &["--all-topics", "--to-earliest", "--execute"][..],
        &["--topic", topic, "--shift-by", "-1", "--dry-run"][..],
        &["--topic", &whole, "--to-offset", "0", "--execute"][..],
    ] {
        let args = [&reset[..], scope].concat();
        let ours = c.ours(G, &args);
        let java = c.java(GROUP_COMMAND, &args);
        our_error_is_javas(&ours, &java);
    }
}

#[test]
pub fn reset_and_describe_with_a_partition_whose_only_replica_is_down() {
    let Some(c) = Session::begin() else {
        return;
    };
    // Partition p lives on node p + 1 only.
    let topic = unique("lonely");
    let group = unique("lonely-group");
    c.ours_ok(
        "kafka-topics",
        &[
            "--create",
            "--topic",
            &topic,
            "--replica-assignment",
            "1,2,3",
        ],
    );
    produce_keyed(&c, &topic);
    c.ours_ok(
        G,
        &[
            "--reset-offsets",
            "--group",
            &group,
            "--topic",
            &topic,
            "--to-latest",
            "--execute",
        ],
    );
    // A node other than the coordinator's, so that only the partition goes.
    let coordinator = c.coordinator(&group);
    let down = [1, 2, 3]
        .into_iter()
        .find(|n| *n != coordinator)
        .expect("a node");
    let lonely = down - 1;
    c.stop(down);
    c.wait_for("the partition without a leader", || {
        c.layout(&topic)[lonely as usize].leader.is_none()
    });

    // Its log end is unknown: "-", as Java shows it.
    let described = c.same_as_java(
        G,
        GROUP_COMMAND,
        &["--describe", "--group", &group],
        str::to_string,
    );
    let unknown: Vec<String> = described
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() > 4 && f[4] == "-")
        .map(|f| f[2].to_string())
        .collect();
    assert_eq!(unknown, [lonely.to_string()], "{described}");
    c.same_as_java(
        G,
        GROUP_COMMAND,
        &["--describe", "--group", &group, "--offsets", "--verbose"],
        str::to_string,
    );

    // A reset that touches it fails as Java's does, changing nothing.
    refusals_match_java(&c, &group, &topic, lonely);
    // The partitions that have a leader can be reset.
    let others: Vec<String> = (0..3)
        .filter(|p| *p != lonely)
        .map(|p| p.to_string())
        .collect();
    let others = format!("{topic}:{}", others.join(","));
    let args = [
        "--reset-offsets",
        "--group",
        &group,
        "--topic",
        &others,
        "--to-earliest",
        "--execute",
    ];
    let ours = c.ours_ok(G, &args);
    let java = c.java_ok(GROUP_COMMAND, &args);
    assert_eq!(sorted(&ours), sorted(&java));
    c.same_as_java(
        G,
        GROUP_COMMAND,
        &["--describe", "--group", &group],
        str::to_string,
    );
}
