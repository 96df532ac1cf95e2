//! Kafka's log cleaner for compacted topics (`cleanup.policy=compact`): the log keeps the last
//! record of each key, and a tombstone (a key with a null value) for `delete.retention.ms`
//! after a cleaning first kept it. Offsets never change: kept records keep theirs, and readers
//! skip the gaps.
//!
//! - `offset_map`: each key's last offset over the dirty part of the log.
//! - `retain`: what a round keeps of each batch, given that map.
//! - `round`: one cleaning round over a partition: the dirty range, the map, the recopy into
//!   `.cleaned` segments and the swap.

mod offset_map;
mod retain;
mod round;

pub use crate::kafka::now_ms;
pub use offset_map::OffsetMap;
pub use retain::{RetainCounts, Retained, RoundRules, retain_batch};
pub use round::{CleanerConfig, CompactionConfig, Outcome, Report, clean};
