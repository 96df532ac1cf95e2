//! Kafka's own handling of the new consumer group protocol (KIP-848), which
//! `kafka-server-start` does not copy: a classic member joining a consumer-protocol group (Kafka
//! 4.x takes it in; the server refuses it, see docs/differences.md), and
//! `group.protocol=consumer` refused, with a hint, by a cluster without the new protocol (a
//! Kafka broker of its own, configured so).

use std::process::{Command, Stdio};

use crate::common::broker::{self, OwnBroker, TOPIC_COMMAND, java_create_topic};
use crate::common::text;
use crate::consumer_group::{
    Running, assert_each_once, produce, wait_for_commits, wait_for_members,
};

#[test]
fn a_cluster_without_the_new_protocol_is_refused_with_a_hint() {
    // The shared broker first: it makes sure Java and Maven are there (or skips as every test
    // here does when they are not and KAFKIT_REQUIRE_BROKER is unset).
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let Some(own) = OwnBroker::start(
        "kafkit-classic-only-",
        "group.coordinator.rebalance.protocols=classic",
    ) else {
        return;
    };
    let topic = broker::unique_topic("cg-classic-only");
    let out = broker::java_tool(
        TOPIC_COMMAND,
        &[
            "--bootstrap-server",
            &own.bootstrap,
            "--create",
            "--topic",
            &topic,
        ],
    );
    assert!(out.status.success(), "create: {}", text(&out.stderr));
    let run = |protocol: &str| {
        Command::new(assert_cmd::cargo::cargo_bin("kafka-console-consumer"))
            .args(["--bootstrap-server", &own.bootstrap])
            .args([
                "--topic",
                &topic,
                "--group",
                "classic-only",
                "--timeout-ms",
                "3000",
            ])
            .args(["--command-property", &format!("group.protocol={protocol}")])
            .env_remove("KAFKIT_LOG_DIR")
            .stdin(Stdio::null())
            .output()
            .expect("our consumer runs")
    };
    let refused = run("consumer");
    let stderr = text(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(
        stderr.contains("group.protocol=classic") && !stderr.contains("panicked"),
        "{stderr}"
    );
    let errors = stderr
        .lines()
        .filter(|l| !l.starts_with("Processed a total of"))
        .count();
    assert_eq!(errors, 1, "one line besides the count: {stderr}");
    // The same broker takes the classic protocol: it was the protocol that was refused.
    let classic = run("classic");
    assert!(classic.status.success(), "{}", text(&classic.stderr));
}

#[test]
fn ours_joins_a_group_of_java_consumers_on_the_new_protocol() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    // Java on group.protocol=consumer (KIP-848) makes a consumer-protocol group; ours joins it
    // with the classic protocol, which Kafka 4.x accepts, and the two still split the work.
    let topic = broker::unique_topic("cg-mixed");
    let group = broker::unique_topic("cg-mixed-group");
    java_create_topic(&topic, 4);
    let java = Running::java(
        &topic,
        &group,
        &["--command-property", "group.protocol=consumer"],
    );
    wait_for_members(&group, 1, 4);
    let ours = Running::ours(&topic, &group, &[]);
    let split = wait_for_members(&group, 2, 4);
    assert!(split.values().all(|n| *n == 2), "2+2: {split:?}");
    let lines: Vec<String> = (0..400).map(|i| format!("m{i}")).collect();
    produce(&topic, &lines);
    wait_for_commits(&group, &topic, 400);
    let a = ours.interrupt();
    let b = java.interrupt();
    assert!(
        !a.is_empty() && !b.is_empty(),
        "ours {} java {}",
        a.len(),
        b.len()
    );
    let all: Vec<String> = a.into_iter().chain(b).collect();
    assert_each_once(&all, &lines);
}
