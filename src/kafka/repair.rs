//! What `kafka-topics --repair` reports: where each partition was cut back, and which files
//! were set aside. Plain data, so that the client returns it to the tools without exposing the
//! embedded log, which is the backend that repairs (a broker repairs its own log when it
//! starts).

use std::path::PathBuf;

/// What a repair did to one partition of a topic.
#[derive(Debug)]
pub struct PartitionRepair {
    pub partition: u32,
    /// The topic id its `partition.metadata` named before it was adopted.
    pub adopted_from: Option<String>,
    /// Its `partition.metadata` was missing (or named no topic id) and was written again.
    pub metadata_restored: bool,
    pub report: RepairReport,
}

/// What a repair found and did to one partition's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairReport {
    /// The first damage: where the log was cut. `None`: every batch checked out.
    pub cut: Option<Cut>,
    /// Files renamed aside (the cut segment's copy, and every later segment's files).
    pub set_aside: Vec<PathBuf>,
}

/// Where a partition was cut back, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// The partition's log end after the cut: the first offset no longer held.
    pub offset: i64,
    /// The segment file and byte position of the damage.
    pub path: PathBuf,
    pub position: u64,
    pub reason: String,
}
