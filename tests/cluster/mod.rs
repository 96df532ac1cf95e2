//! The tools against a three-node Apache Kafka 4.3.1 cluster (`tests/broker/kafka-cluster.sh`):
//! replication, leaders that move, a group coordinator that moves, partitions without a leader,
//! a dead bootstrap broker. Things a single broker never shows.
//!
//! A module of the `remote` test binary, so that the cluster (three JVMs) starts once, and only
//! when that binary runs. Its tests kill and restart nodes, so they run one at a time whatever
//! `--test-threads` says: each holds [`harness::Session`] (a lock) for its whole run, which also
//! brings every node back and waits for the cluster to be whole before the next test starts.
//! Each test uses topic and group names of its own.
//!
//! In a whole run of the binary they run beside the single-broker tests ([`beside`]): the
//! cluster mostly waits (for a node to be fenced, a JVM to start), and the other tests use that
//! time. Run on their own (`cargo test --test remote with_a_cluster::`) they run as any test.
//!
//! Where a tool prints something, the Java tool from the same jars runs on the same state and
//! must print the same (up to the deliberate differences in docs/differences.md).

pub mod beside;
mod bootstrap;
mod groups;
mod harness;
mod produce;
mod reset;
mod topics;

/// Every test of this module with its name as libtest knows it, in name order: what
/// [`beside`] runs.
macro_rules! scenarios {
    ($($module:ident::$test:ident),* $(,)?) => {
        pub const SCENARIOS: &[(&str, fn())] = &[$(
            (concat!("with_a_cluster::", stringify!($module), "::", stringify!($test)), $module::$test),
        )*];
    };
}

scenarios![
    bootstrap::every_tool_skips_a_dead_first_bootstrap_broker,
    groups::a_mixed_group_reads_and_commits_on_while_its_coordinator_is_killed,
    produce::idempotent_stream_survives_a_leader_killed_and_restarted,
    produce::keyed_lines_sent_right_after_a_leader_is_killed_all_arrive,
    produce::too_few_in_sync_replicas_fail_after_retries_and_the_delivery_timeout,
    reset::reset_and_describe_ride_out_a_coordinator_that_moves,
    reset::reset_and_describe_with_a_partition_whose_only_replica_is_down,
    topics::describe_and_health_filters_match_java_as_a_node_goes_and_returns,
];

/// A test added to a file here but not to [`SCENARIOS`] would run on its own in a whole run,
/// while the runner may be killing nodes under it.
#[test]
fn every_test_is_a_scenario() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cluster");
    let mut tests = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let module = path.file_stem().unwrap().to_str().unwrap().to_string();
        if module == "mod" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for after in text.split("#[test]\npub fn ").skip(1) {
            let name = after.split('(').next().unwrap();
            tests.push(format!("with_a_cluster::{module}::{name}"));
        }
    }
    tests.sort();
    let listed: Vec<String> = SCENARIOS.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(
        tests, listed,
        "SCENARIOS lists every cluster test, in name order"
    );
}
