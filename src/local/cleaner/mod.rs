//! Kafka's log cleaner for compacted topics (`cleanup.policy=compact`): the log keeps the last
//! record of each key, and a tombstone (a key with a null value) for `delete.retention.ms`
//! after a cleaning first kept it. Offsets never change: kept records keep theirs, and readers
//! skip the gaps.
//!
//! - `offset_map`: each key's last offset over the dirty part of the log.
//! - `retain`: what a round keeps of each batch, given that map.

mod offset_map;
mod retain;

pub use offset_map::OffsetMap;
pub use retain::{RetainCounts, Retained, RoundRules, retain_batch};
