//! The tools against a three-node Apache Kafka 4.3.1 cluster (`tests/broker/kafka-cluster.sh`):
//! replication, leaders that move, a group coordinator that moves, partitions without a leader,
//! a dead bootstrap broker. Things a single broker never shows.
//!
//! One test binary, so that the cluster (three JVMs) starts once, on the first test that asks
//! for it, and only when this binary runs. Its tests kill and restart nodes, so they run one at
//! a time whatever `--test-threads` says: each holds [`harness::Session`] (a lock) for its whole
//! run, which also brings every node back and waits for the cluster to be whole before the next
//! test starts. Each test uses topic and group names of its own.
//!
//! Where a tool prints something, the Java tool from the same jars runs on the same state and
//! must print the same (up to the deliberate differences in docs/differences.md).

#[path = "../common/mod.rs"]
mod common;

mod bootstrap;
mod groups;
mod harness;
mod produce;
mod reset;
mod topics;
