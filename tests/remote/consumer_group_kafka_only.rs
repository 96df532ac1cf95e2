//! `kafka-console-consumer --group` on the new consumer group protocol (KIP-848,
//! `group.protocol=consumer`) against a real Kafka 4.3.1 broker, beside the Java console
//! consumer as in `consumer_group`, and refused with a hint by a cluster without it. These run
//! in the `remote` binary only until `kafka-server-start` serves ConsumerGroupHeartbeat (the
//! group-coordinator work on KIP-848), and the refusal needs a broker of its own.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::broker::{self, GROUP_COMMAND, OwnBroker, TOPIC_COMMAND, java_create_topic};
use crate::common::text;
use crate::consumer_group::{
    Running, assert_each_once, produce, wait_for_commits, wait_for_members,
};

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

/// Our consumer's options for the new group protocol (KIP-848).
const NEW_PROTOCOL: [&str; 2] = ["--command-property", "group.protocol=consumer"];

/// The group's type and state as the Java tool's `--list --state` prints them, once listed.
fn group_type(group: &str) -> Option<(String, String)> {
    let out = broker::java_tool(
        GROUP_COMMAND,
        &[
            "--bootstrap-server",
            &broker::bootstrap(),
            "--list",
            "--type",
            "--state",
        ],
    );
    // GROUP TYPE STATE
    text(&out.stdout).lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.first() == Some(&group) && f.len() >= 3).then(|| (f[1].to_string(), f[2].to_string()))
    })
}

#[test]
fn ours_and_java_both_on_the_new_protocol_split_the_work() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("cg-848");
    let group = broker::unique_topic("cg-848-group");
    java_create_topic(&topic, 4);
    let ours = Running::ours(&topic, &group, &NEW_PROTOCOL);
    wait_for_members(&group, 1, 4);
    let java = Running::java(&topic, &group, &NEW_PROTOCOL);
    let split = wait_for_members(&group, 2, 4);
    assert!(split.values().all(|n| *n == 2), "2+2: {split:?}");
    // Members of the new protocol name themselves with a 22-character UUID; a classic member
    // gets `console-consumer-<uuid>` from the coordinator.
    for member in split.keys() {
        let id = member.rsplit('#').next().unwrap_or_default();
        assert_eq!(id.len(), 22, "a consumer-protocol member id: {split:?}");
    }
    let lines: Vec<String> = (0..400).map(|i| format!("n{i}")).collect();
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

#[test]
fn ours_on_the_new_protocol_makes_a_consumer_group_and_hands_over_on_leaving() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("cg-848-leave");
    let group = broker::unique_topic("cg-848-leave-group");
    java_create_topic(&topic, 3);
    let lines: Vec<String> = (0..300).map(|i| format!("l{i}")).collect();
    produce(&topic, &lines);
    // A long-running member: the Java tool lists the group as a consumer-protocol group.
    let running = Running::ours(&topic, &group, &NEW_PROTOCOL);
    wait_for_members(&group, 1, 3);
    assert_eq!(
        group_type(&group),
        Some(("Consumer".to_string(), "Stable".to_string())),
        "the group is listed as a Consumer group"
    );
    // It started at the end (nothing committed, latest): nothing printed; leaving commits that.
    assert!(running.interrupt().is_empty());
    // Reset to the beginning so that the next members read everything.
    let reset = broker::java_tool(
        GROUP_COMMAND,
        &[
            "--bootstrap-server",
            &broker::bootstrap(),
            "--reset-offsets",
            "--to-earliest",
            "--execute",
            "--group",
            &group,
            "--topic",
            &topic,
        ],
    );
    assert!(reset.status.success(), "{}", text(&reset.stderr));
    let mut args = NEW_PROTOCOL.to_vec();
    args.extend(["--max-messages", "110"]);
    let first = Running::ours(&topic, &group, &args).finish(Duration::from_secs(60));
    assert_eq!(first.len(), 110);
    let mut args = NEW_PROTOCOL.to_vec();
    args.extend(["--timeout-ms", "5000"]);
    let second = Running::ours(&topic, &group, &args).finish(Duration::from_secs(60));
    let all: Vec<String> = first.into_iter().chain(second).collect();
    assert_each_once(&all, &lines);
}

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
