//! The writer's view of the active segment, the one appends go to: its open files and valid
//! end, the roll rule (Kafka's `shouldRoll`), writes of batches and index entries, and closing
//! it before a roll. Opening one for writing is [`super::recovery`]'s job.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::{PartitionConfig, now_ms, open_rw};
use crate::local::error::{IoContext, Result};
use crate::local::index::IndexTracker;
use crate::local::segment::{LOG_SUFFIX, create_segment_files, segment_path};
use crate::record::BatchHeader;

/// The writer's view of a segment it may append to: open files, the valid end, and the state
/// the index rules need.
pub(super) struct Active {
    pub(super) base: i64,
    pub(super) log_path: PathBuf,
    pub(super) log: File,
    pub(super) index: File,
    pub(super) timeindex: File,
    /// Bytes on disk in each index (pending entries excluded).
    pub(super) index_len: u64,
    pub(super) timeindex_len: u64,
    /// End of the last good batch: where the next write goes.
    pub(super) size: u64,
    pub(super) next_offset: i64,
    /// Max timestamp of the segment's first batch (Kafka's `rollingBasedTimestamp`).
    pub(super) rolling_ts: Option<i64>,
    pub(super) created_ms: Option<i64>,
    pub(super) tracker: IndexTracker,
}

impl Active {
    /// Creates a new, empty segment; the caller fsyncs the directory.
    pub(super) fn create(dir: &Path, base: i64, cfg: &PartitionConfig) -> Result<Active> {
        create_segment_files(dir, base)?;
        let log_path = segment_path(dir, base, LOG_SUFFIX);
        let log = open_rw(&log_path)?;
        let mut active = Self::assemble(
            dir,
            base,
            log,
            log_path,
            (0, base, IndexTracker::new(base, cfg.index_interval_bytes)),
        )?;
        active.created_ms = Some(now_ms());
        Ok(active)
    }

    /// Kafka's `LogSegment.shouldRoll`, checked before each batch. An empty segment never rolls.
    pub(super) fn should_roll(&self, h: &BatchHeader, cfg: &PartitionConfig, now: i64) -> bool {
        if self.size == 0 {
            return false;
        }
        let incoming = h.total_size() as u64;
        let waited = match self.rolling_ts {
            Some(first) if first >= 0 => Some(h.max_timestamp.saturating_sub(first)),
            _ => self.created_ms.map(|c| now.saturating_sub(c)),
        };
        self.size.saturating_add(incoming) > cfg.segment_bytes
            || waited.is_some_and(|w| w > cfg.segment_ms)
            || self.tracker.is_full(cfg.segment_index_bytes)
            || h.last_offset() - self.base > i32::MAX as i64
    }

    /// Writes `data` at `at` (one pwrite; std loops on short writes) and the pending index
    /// entries (one write per index file).
    pub(super) fn write(&mut self, data: &[u8], at: u64) -> Result<()> {
        if !data.is_empty() {
            self.log
                .write_all_at(data, at)
                .context(|| format!("cannot write to {}", self.log_path.display()))?;
        }
        self.flush_index_entries()
    }

    fn flush_index_entries(&mut self) -> Result<()> {
        let path = &self.log_path;
        if !self.tracker.pending_offset.is_empty() {
            self.index
                .write_all_at(&self.tracker.pending_offset, self.index_len)
                .context(|| format!("cannot write the index of {}", path.display()))?;
            self.index_len += self.tracker.pending_offset.len() as u64;
            self.tracker.pending_offset.clear();
        }
        if !self.tracker.pending_time.is_empty() {
            self.timeindex
                .write_all_at(&self.tracker.pending_time, self.timeindex_len)
                .context(|| format!("cannot write the time index of {}", path.display()))?;
            self.timeindex_len += self.tracker.pending_time.len() as u64;
            self.tracker.pending_time.clear();
        }
        Ok(())
    }

    pub(super) fn sync_log(&self) -> Result<()> {
        self.log
            .sync_data()
            .context(|| format!("cannot fdatasync {}", self.log_path.display()))
    }

    /// Closes the segment before a roll: its data is already synced; add the final time entry
    /// (so the last entry holds the segment's max timestamp) and make both indexes durable, since
    /// retention and timestamp lookups trust a closed segment's last time entry.
    pub(super) fn close(&mut self) -> Result<()> {
        self.tracker.maybe_time_entry();
        self.flush_index_entries()?;
        self.index
            .sync_data()
            .and_then(|()| self.timeindex.sync_data())
            .context(|| format!("cannot fsync the indexes of {}", self.log_path.display()))
    }
}
