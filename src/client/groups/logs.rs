//! What group admin on the embedded log needs from the partition logs (Kafka's Metadata and ListOffsets):
//! partition counts, log start and end offsets, and offsets by timestamp, cached for one run.

use std::collections::HashMap;

use super::Tp;
use crate::local::partition::Snapshot;
use crate::local::{LocalError, LogDir};

/// The log dir's partitions, read lazily and cached.
pub(super) struct Logs<'a> {
    dir: &'a LogDir,
    counts: HashMap<String, Option<u32>>,
    snapshots: HashMap<Tp, Snapshot>,
}

impl<'a> Logs<'a> {
    pub(super) fn new(dir: &'a LogDir) -> Self {
        Logs {
            dir,
            counts: HashMap::new(),
            snapshots: HashMap::new(),
        }
    }

    /// The topic's partition count, `None` if it does not exist.
    pub(super) fn partitions(&mut self, topic: &str) -> Result<Option<u32>, LocalError> {
        if let Some(count) = self.counts.get(topic) {
            return Ok(*count);
        }
        let count = self.dir.topic(topic)?.map(|t| t.partitions);
        self.counts.insert(topic.to_string(), count);
        Ok(count)
    }

    /// Whether the partition exists.
    pub(super) fn exists(&mut self, tp: &Tp) -> Result<bool, LocalError> {
        Ok(self
            .partitions(&tp.0)?
            .is_some_and(|n| tp.1 >= 0 && tp.1 < i64::from(n)))
    }

    /// The partition's log start and end, `None` if it does not exist.
    pub(super) fn snapshot(&mut self, tp: &Tp) -> Result<Option<&Snapshot>, LocalError> {
        if !self.snapshots.contains_key(tp) {
            if !self.exists(tp)? {
                return Ok(None);
            }
            let snap = self.dir.partition(&tp.0, tp.1 as u32)?.snapshot()?;
            self.snapshots.insert(tp.clone(), snap);
        }
        Ok(self.snapshots.get(tp))
    }

    /// The log end offset (Kafka's ListOffsets latest), `None` if the partition does not exist.
    pub(super) fn end(&mut self, tp: &Tp) -> Result<Option<i64>, LocalError> {
        Ok(self.snapshot(tp)?.map(|s| s.log_end_offset))
    }

    /// The log start offset (ListOffsets earliest), `None` if the partition does not exist.
    pub(super) fn start(&mut self, tp: &Tp) -> Result<Option<i64>, LocalError> {
        Ok(self.snapshot(tp)?.map(|s| s.log_start_offset))
    }

    /// The first offset whose timestamp is `>= ts`, `None` if there is none (or no partition).
    pub(super) fn offset_for_time(&mut self, tp: &Tp, ts: i64) -> Result<Option<i64>, LocalError> {
        let dir = self.dir;
        let Some(snap) = self.snapshot(tp)? else {
            return Ok(None);
        };
        dir.partition(&tp.0, tp.1 as u32)?
            .offset_for_timestamp(snap, ts)
    }
}
