//! `kafka-topics` on three nodes: topics created with `--replication-factor 3` and with
//! `--replica-assignment` across the nodes, then `--describe` and its four health filters
//! (`--under-replicated-partitions`, `--under-min-isr-partitions`, `--at-min-isr-partitions`,
//! `--unavailable-partitions`), identical to Java's with every node up, with one down, and after
//! it returns and catches up. On a single broker the filters never print anything.

use super::harness::{PartitionState, Session, unique};
use crate::common::broker::TOPIC_COMMAND;

const T: &str = "kafka-topics";

/// `--describe` alone, then with each filter.
const FILTERS: [&str; 5] = [
    "",
    "--under-replicated-partitions",
    "--under-min-isr-partitions",
    "--at-min-isr-partitions",
    "--unavailable-partitions",
];

/// The node that goes away: a replica of every partition below, and the only one of one.
const DOWN: u32 = 2;

/// Each filter's output, ours and Java's being the same (asserted).
fn describe_all(c: &Session, pattern: &str) -> Vec<String> {
    FILTERS
        .iter()
        .map(|filter| {
            let mut args = vec!["--describe", "--topic", pattern];
            if !filter.is_empty() {
                args.push(filter);
            }
            c.same_as_java(T, TOPIC_COMMAND, &args, topic_order)
        })
        .collect()
}

/// `--describe` text with its topics in name order: Java lists the topics a pattern matched in
/// hash-map order, ours sorted (a deliberate difference). A topic's block is its summary line
/// and its partition lines; without a summary line (a filter), each partition line.
fn topic_order(text: &str) -> String {
    let mut blocks: Vec<String> = Vec::new();
    for line in text.lines() {
        match blocks.last_mut() {
            Some(block) if line.starts_with('\t') && !block.starts_with('\t') => {
                block.push_str(line);
                block.push('\n');
            }
            _ => blocks.push(format!("{line}\n")),
        }
    }
    blocks.sort();
    blocks.concat()
}

/// The lines of `out` naming partition `p` of `topic`.
fn shows(out: &str, topic: &str, p: u32) -> bool {
    out.contains(&format!("\tTopic: {topic}\tPartition: {p}\t"))
}

/// Creates `topic` with ours and `{topic}-java` with Java, with the same arguments: the same
/// confirmation.
fn create_both(c: &Session, topic: &str, args: &[&str]) {
    let java_topic = format!("{topic}-java");
    let with = |name: &str| {
        let mut all = vec!["--create", "--topic", name];
        all.extend_from_slice(args);
        all.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let ours_args = with(topic);
    let ours = c.ours_ok(T, &ours_args.iter().map(String::as_str).collect::<Vec<_>>());
    let java_args = with(&java_topic);
    let java = c.java_ok(
        TOPIC_COMMAND,
        &java_args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(ours, format!("Created topic {topic}.\n"));
    assert_eq!(java, format!("Created topic {java_topic}.\n"));
}

#[test]
pub fn describe_and_health_filters_match_java_as_a_node_goes_and_returns() {
    let Some(c) = Session::begin() else {
        return;
    };
    let prefix = unique("health");
    let pattern = format!("{prefix}-.*");
    // Three replicas each, two of them needed to write.
    let rf3 = format!("{prefix}-rf3");
    create_both(
        &c,
        &rf3,
        &["--partitions", "3", "--replication-factor", "3"],
    );
    // Two replicas each, placed by hand, both needed to write.
    let placed = format!("{prefix}-placed");
    create_both(
        &c,
        &placed,
        &[
            "--replica-assignment",
            "1:2,2:3,3:1",
            "--config",
            "min.insync.replicas=2",
        ],
    );
    // One replica each: partition 0 lives on the node that goes away only.
    let single = format!("{prefix}-single");
    create_both(&c, &single, &["--replica-assignment", "2,3"]);
    c.wait_for("the new partitions in sync", || {
        let layout = c.layout(&pattern);
        layout.len() == 16 && layout.iter().all(|p| p.isr.len() == p.replicas.len())
    });

    let whole = describe_all(&c, &pattern);
    assert_eq!(whole[0].lines().filter(|l| l.starts_with('\t')).count(), 16);
    assert_eq!(whole[1], "", "nothing under-replicated");
    assert_eq!(whole[4], "", "nothing unavailable");
    // Two in sync of two needed: at the minimum. One of one (min.insync.replicas=1): too.
    assert!(
        shows(&whole[3], &placed, 0) && shows(&whole[3], &single, 1),
        "{}",
        whole[3]
    );

    c.stop(DOWN);
    c.wait_for("the stopped node out of every ISR", || {
        c.layout(&pattern).iter().all(|p: &PartitionState| {
            p.leader != Some(DOWN) && (!p.isr.contains(&DOWN) || p.replicas == [DOWN])
        })
    });
    let down = describe_all(&c, &pattern);
    // Every partition with a replica on the stopped node is under-replicated.
    for (topic, p) in [
        (&rf3, 0),
        (&rf3, 2),
        (&placed, 0),
        (&placed, 1),
        (&single, 0),
    ] {
        assert!(shows(&down[1], topic, p), "{topic}-{p}:\n{}", down[1]);
    }
    assert!(!shows(&down[1], &placed, 2), "{}", down[1]);
    // One in sync of two needed.
    assert!(
        shows(&down[2], &placed, 0) && !shows(&down[2], &placed, 2),
        "{}",
        down[2]
    );
    // Partition 0 of `single` has no leader.
    assert_eq!(
        down[4].lines().count(),
        2,
        "two topics' partition 0: {}",
        down[4]
    );
    assert!(shows(&down[4], &single, 0), "{}", down[4]);

    c.restart(DOWN);
    c.wait_for(
        "every partition back in sync at its preferred leader",
        || {
            c.layout(&pattern)
                .iter()
                .all(|p| p.isr.len() == p.replicas.len() && p.leader == p.replicas.first().copied())
        },
    );
    let back = describe_all(&c, &pattern);
    assert_eq!(back[1..], whole[1..], "the filters as before the node went");
    assert_eq!(
        back[0].lines().count(),
        whole[0].lines().count(),
        "{}",
        back[0]
    );
}
