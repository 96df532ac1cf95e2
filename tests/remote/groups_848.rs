//! `kafka-consumer-groups --bootstrap-server` on groups of the new consumer group protocol
//! (KIP-848, made by the Java console consumer with `group.protocol=consumer`), with the Java
//! tool as the oracle as in `groups`.

use crate::common::broker::{self, create_topic};
use crate::groups::{
    Member, java_consume, lists_and_describes_agree, ours_ok, produce, wait_stable,
};

#[test]
fn list_and_describe_new_protocol_groups_agree_with_java() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("grp-describe-848");
    create_topic(&topic, 3);
    produce(&topic, 3, 4);
    // A new-protocol group, empty with committed offsets, and an active one.
    let modern = format!("{topic}-consumer");
    let new_protocol = ["--consumer-property", "group.protocol=consumer"];
    java_consume(&topic, &modern, 7, &new_protocol);
    let active_modern = format!("{topic}-active-consumer");
    let _m = Member::start(&topic, &active_modern, &new_protocol);
    wait_stable(&active_modern, 3);
    lists_and_describes_agree(
        &topic,
        &[&modern, &active_modern],
        "consumer",
        &active_modern,
    );
    // The new-protocol group's epochs and the assignor really are there.
    let state = ours_ok(&[
        "--describe",
        "--group",
        &active_modern,
        "--state",
        "--verbose",
    ]);
    assert!(state.contains(" uniform "), "{state}");
}
