//! A bootstrap list whose first broker is dead: every tool moves on to the next one at once
//! (a refused connection costs nothing), and prints what Java's tools print with the same list.

use std::time::{Duration, Instant};

use super::harness::{Session, unique};
use crate::common::broker::{GROUP_COMMAND, TOPIC_COMMAND};
use crate::common::sorted;

/// The first node of the bootstrap list.
const FIRST: u32 = 1;

/// Kafka's `kafka-get-offsets`.
const GET_OFFSETS: &str = "org.apache.kafka.tools.GetOffsetShell";

/// The request timeout of the timed commands: a tool that waited on the dead broker instead
/// of moving on would wait this long.
const REQUEST_TIMEOUT_MS: u64 = 240_000;

/// A refused connection moves on at once: a bound a loaded machine always meets, and still
/// far less than the request timeout.
const QUICK: Duration = Duration::from_secs(120);

#[test]
pub fn every_tool_skips_a_dead_first_bootstrap_broker() {
    let Some(c) = Session::begin() else {
        return;
    };
    assert!(c.bootstrap().starts_with(&c.address(FIRST)));
    c.kill(FIRST);
    // Once fenced it is no longer among the brokers (nor a leader, nor given new replicas).
    c.wait_for("the killed node fenced", || {
        let out = c.ours("kafka-broker-api-versions", &[]);
        out.status.success()
            && !crate::common::text(&out.stdout).contains(&format!("(id: {FIRST} "))
    });
    let topic = unique("dead-first");
    let group = unique("dead-first-group");
    let config_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        config_file.path(),
        format!("request.timeout.ms={REQUEST_TIMEOUT_MS}\n"),
    )
    .unwrap();
    let config = config_file.path().to_str().unwrap();
    let timed = |tool: &str, args: &[&str], stdin: Option<&[u8]>| {
        let args: Vec<&str> = [args, &["--command-config", config]].concat();
        let args = args.as_slice();
        let started = Instant::now();
        let out = c.ours_at(c.bootstrap(), tool, args, stdin);
        let took = started.elapsed();
        let stdout = super::harness::ok(tool, args, out);
        assert!(took < QUICK, "{tool} {args:?} took {took:?}");
        stdout
    };

    // Two replicas: two nodes are alive.
    let created = timed(
        "kafka-topics",
        &[
            "--create",
            "--topic",
            &topic,
            "--partitions",
            "2",
            "--replication-factor",
            "2",
        ],
        None,
    );
    assert_eq!(created, format!("Created topic {topic}.\n"));
    let lines: String = (0..100).map(|i| format!("{i}\n")).collect();
    timed(
        "kafka-console-producer",
        &["--topic", &topic],
        Some(lines.as_bytes()),
    );
    let read = timed(
        "kafka-console-consumer",
        &[
            "--topic",
            &topic,
            "--group",
            &group,
            "--from-beginning",
            "--max-messages",
            "100",
        ],
        None,
    );
    let mut numbers: Vec<usize> = read.lines().map(|l| l.parse().expect("a number")).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (0..100).collect::<Vec<_>>());

    c.wait_for("the topic in sync", || {
        c.layout(&topic).iter().all(|p| p.isr.len() == 2)
    });
    c.same_as_java(
        "kafka-topics",
        TOPIC_COMMAND,
        &["--describe", "--topic", &topic],
        str::to_string,
    );
    c.same_as_java(
        "kafka-get-offsets",
        GET_OFFSETS,
        &["--topic", &topic],
        |s| sorted(s).join("\n"),
    );
    c.same_as_java(
        "kafka-consumer-groups",
        GROUP_COMMAND,
        &["--describe", "--group", &group],
        str::to_string,
    );
    let listed = c.same_as_java("kafka-consumer-groups", GROUP_COMMAND, &["--list"], |s| {
        sorted(s).join("\n")
    });
    assert!(listed.lines().any(|g| g == group), "{listed}");
}
