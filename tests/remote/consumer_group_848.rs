//! `kafka-console-consumer --group` on the new consumer group protocol (KIP-848,
//! `group.protocol=consumer`), beside the Java console consumer as in `consumer_group`.

use std::time::Duration;

use crate::common::broker::{self, GROUP_COMMAND, java_create_topic};
use crate::common::text;
use crate::consumer_group::{
    Running, assert_each_once, produce, wait_for_commits, wait_for_members,
};

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
    // The rest, counted rather than ended by an idle --timeout-ms: on this protocol the
    // assignment comes with a heartbeat, and the idle clock runs from the start, so a slow
    // first heartbeat would end the consumer before it read anything.
    let mut args = NEW_PROTOCOL.to_vec();
    args.extend(["--max-messages", "190"]);
    let second = Running::ours(&topic, &group, &args).finish(Duration::from_secs(60));
    let all: Vec<String> = first.into_iter().chain(second).collect();
    assert_each_once(&all, &lines);
    // And its commit on leaving covers the rest: nothing is left for the group.
    wait_for_commits(&group, &topic, 300);
}
