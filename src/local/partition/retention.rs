//! Retention: Kafka's `deleteOldSegments` by `retention.bytes` and `retention.ms`, applied by
//! writers (after each append) and admin commands, never by readers. The new log start offset
//! is made durable before any segment is deleted.

use super::active::Active;
use super::checkpoint::{read_log_start, write_log_start};
use super::hints::time_entry_checks_out;
use super::{
    PartitionConfig, PartitionLog, file_len, now_ms, open_optional, open_rw, system_time_ms,
};
use crate::local::error::{IoContext, LocalError, Result};
use crate::local::index::{TIME_ENTRY_SIZE, read_time_entry};
use crate::local::lock::{FileLock, LockMode};
use crate::local::segment::{
    LOG_SUFFIX, TIMEINDEX_SUFFIX, remove_segment_files, segment_path, sync_dir,
};

impl PartitionLog {
    /// Applies `retention.ms` and `retention.bytes` now, under the exclusive lock (recovering the
    /// tail first, as any writer does), waiting for a writer that holds it.
    pub fn apply_retention(&self, config: &PartitionConfig) -> Result<()> {
        self.retention_under_lock(config, true)
    }

    /// [`PartitionLog::apply_retention`] for a query (describe): if a writer holds the
    /// partition right now, nothing is done and nothing waited for, since that writer applies
    /// retention itself after its appends.
    pub fn apply_retention_if_idle(&self, config: &PartitionConfig) -> Result<()> {
        self.retention_under_lock(config, false)
    }

    fn retention_under_lock(&self, config: &PartitionConfig, wait: bool) -> Result<()> {
        config.validate()?;
        // An empty partition holds nothing to remove: a query that applies retention
        // (describe, get-offsets) writes nothing to it, not even the lock file or the indexes a
        // recovery makes. Looked at before locking: records appended meanwhile are new, and
        // the next look sees them.
        let first_log = segment_path(&self.dir, 0, LOG_SUFFIX);
        if self.segment_bases()? == [0] && std::fs::metadata(&first_log).is_ok_and(|m| m.len() == 0)
        {
            return Ok(());
        }
        let _lock = if wait {
            self.lock(LockMode::Exclusive)?
        } else {
            match FileLock::try_acquire(&self.lock_path(), LockMode::Exclusive)? {
                Some(lock) => self.settle_swap(lock, LockMode::Exclusive)?,
                None => return Ok(()),
            }
        };
        let bases = self.segment_bases()?;
        let mut active = Active::recover(&self.dir, bases[bases.len() - 1], config)?;
        self.retention_locked(config, &mut active)
    }

    /// Max timestamp of a closed segment: its last time-index entry (written and fsynced when
    /// the segment was closed), or a rebuild of its indexes if that entry cannot be trusted.
    fn closed_max_timestamp(
        &self,
        base: i64,
        next_base: i64,
        config: &PartitionConfig,
    ) -> Result<Option<i64>> {
        let path = segment_path(&self.dir, base, TIMEINDEX_SUFFIX);
        let log_path = segment_path(&self.dir, base, LOG_SUFFIX);
        let log = open_rw(&log_path)?;
        let len = file_len(&log, &log_path)?;
        if let Some(f) = open_optional(&path, false)? {
            let tlen = file_len(&f, &path)?;
            if tlen % TIME_ENTRY_SIZE == 0
                && tlen > 0
                && let Ok(e) = read_time_entry(&f, tlen / TIME_ENTRY_SIZE - 1)
                && base + (e.relative_offset as i64) < next_base
                && time_entry_checks_out(&self.dir, base, &log, &log_path, len, e)
            {
                return Ok(Some(e.timestamp));
            }
        }
        let rebuilt = Active::rebuild(&self.dir, base, config, log, log_path, len, true)?;
        Ok(rebuilt.tracker.max_ts.map(|(ts, _)| ts))
    }

    /// Whether a cleaner is recopying this partition right now (`compact,delete`): retention
    /// then waits for the next append, rather than remove segments under the round and make
    /// it start over (which, with segments ageing out faster than a round takes, would never
    /// end). Kafka, likewise, never runs the two on a partition at once.
    fn cleaner_busy(&self) -> Result<bool> {
        let path = self.dir.join(super::CLEANER_LOCK);
        if !path.exists() {
            return Ok(false);
        }
        Ok(FileLock::try_acquire(&path, LockMode::Exclusive)?.is_none())
    }

    /// Kafka's `deleteOldSegments`: the longest prefix of segments that breach retention by
    /// size or by time (or that lie wholly below the log start offset after an interrupted
    /// deletion) is deleted. The active segment is deleted only when it breaches too and is not
    /// empty; a new empty segment at the log end is rolled first, so a segment always remains.
    pub(super) fn retention_locked(
        &self,
        config: &PartitionConfig,
        active: &mut Active,
    ) -> Result<()> {
        let bases = self.segment_bases()?;
        let n = bases.len();
        if bases[n - 1] != active.base {
            return Err(LocalError::Invalid(format!(
                "the segments of {} changed under the lock",
                self.dir.display()
            )));
        }
        let checkpoint = read_log_start(&self.dir)?;
        let mut count = 0;
        if let Some(start) = checkpoint {
            while count + 1 < n && bases[count + 1] <= start {
                count += 1;
            }
        }
        let seg_len = |i: usize| -> Result<u64> {
            if i == n - 1 {
                return Ok(active.size);
            }
            let path = segment_path(&self.dir, bases[i], LOG_SUFFIX);
            Ok(std::fs::metadata(&path)
                .context(|| format!("cannot stat {}", path.display()))?
                .len())
        };
        if config.retention_bytes >= 0 {
            let sizes = (0..n).map(seg_len).collect::<Result<Vec<_>>>()?;
            let mut excess = sizes.iter().sum::<u64>() as i64 - config.retention_bytes;
            let mut k = 0;
            while k < n && excess - sizes[k] as i64 >= 0 {
                excess -= sizes[k] as i64;
                k += 1;
            }
            count = count.max(k);
        }
        if config.retention_ms >= 0 {
            let now = now_ms();
            let mut k = 0;
            while k < n {
                let max_ts = if k == n - 1 {
                    active.tracker.max_ts.map(|(ts, _)| ts)
                } else {
                    self.closed_max_timestamp(bases[k], bases[k + 1], config)?
                };
                // Kafka falls back to the file's mtime when a segment has no timestamps.
                let ts = match max_ts {
                    Some(ts) if ts >= 0 => ts,
                    _ => {
                        let path = segment_path(&self.dir, bases[k], LOG_SUFFIX);
                        std::fs::metadata(&path)
                            .ok()
                            .and_then(|m| system_time_ms(m.modified()))
                            .unwrap_or(now)
                    }
                };
                if now.saturating_sub(ts) > config.retention_ms {
                    k += 1;
                } else {
                    break;
                }
            }
            count = count.max(k);
        }
        if count == n && active.size == 0 {
            count = n - 1;
        }
        if count == 0 || self.cleaner_busy()? {
            return Ok(());
        }
        let new_start = if count == n {
            active.close()?;
            *active = Active::create(&self.dir, active.next_offset, config)?;
            sync_dir(&self.dir)?;
            active.base
        } else {
            bases[count]
        };
        // The new start is durable before any file goes: a crash in between leaves segments
        // below the start, which readers skip and the next retention pass deletes.
        if checkpoint.is_none_or(|c| c < new_start) {
            write_log_start(&self.dir, new_start)?;
        }
        for &base in &bases[..count] {
            remove_segment_files(&self.dir, base)?;
        }
        sync_dir(&self.dir)
    }
}
