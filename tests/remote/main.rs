//! The tools against a real Apache Kafka 4.3.1 broker (see `common::broker`): one test binary,
//! so that every test here shares one broker, started by the first test that asks for it.
//! Tests run in parallel against it, so each uses its own topic and group names. A test that
//! needs a broker of its own (killed and restarted, or with other settings) starts one.
//!
//! The modules of the first group also run against our own `kafka-server-start`, in the
//! `served` binary (`tests/served/main.rs` includes them); the second group is Kafka-only: what
//! the server does not do (SASL and TLS, Kafka's own cleaner, group and broker configs),
//! a broker of a test's own, Kafka's own files, or no broker at all.
//!
//! Last, `with_a_cluster` (`tests/cluster/`): the tools against a three-node cluster, whose
//! tests run on a thread of their own beside the others in a whole run.

#[path = "../common/mod.rs"]
mod common;

// Run against both: a real Kafka broker here, our server in `tests/served`.
mod broker_api_versions;
mod configs;
mod consumer;
mod consumer_group;
mod consumer_group_848;
mod delete_records;
mod get_offsets;
mod groups;
mod groups_848;
mod json;
mod kcat;
mod perf_test;
mod producer;
mod quickstart;
mod topics;
mod transactions;

// Kafka-only.
mod compaction_vs_kafka;
mod configs_kafka_only;
mod connection;
mod consumer_group_kafka_only;
mod consumer_kafka_only;
mod dump_log;
mod restart;
mod security;
mod share;

// Against a three-node cluster, beside the rest.
#[path = "../cluster/mod.rs"]
mod with_a_cluster;

/// First in name order, so that libtest starts it first: starts the three-node cluster and its
/// tests on a runner thread of their own (`with_a_cluster::beside`), so that they run while
/// the tests above use the time the cluster spends waiting.
#[test]
fn a_three_node_cluster_runs_its_tests_beside_the_others() {
    match with_a_cluster::beside::start() {
        Ok(bootstrap) => assert_eq!(bootstrap.split(',').count(), 3, "{bootstrap}"),
        Err(why) if common::broker::required() => {
            panic!("KAFKIT_REQUIRE_BROKER=1 but the three-node cluster did not start: {why}")
        }
        Err(why) => eprintln!(
            "SKIPPED (no three-node Kafka cluster; set KAFKIT_REQUIRE_BROKER=1 to make this a failure): {why}"
        ),
    }
}
