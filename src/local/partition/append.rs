//! Appends: the input is split into whole, CRC-valid batches before anything is written, base
//! offsets are assigned, and the batches are written with one pwrite and one fdatasync per
//! segment touched, rolling segments as needed; a failed append is undone.
//!
//! A writer that appends again and again (the producer's writer thread) may keep the active
//! segment open between appends in a [`KeptTail`]: the next append then skips recovering the
//! tail (opening three files, re-reading and CRC-checking the last batch) when the segment
//! files are provably as it left them.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::active::Active;
use super::checkpoint::write_recovery_point;
use super::txn::{self, TxnAppend};
use super::{AppendResult, PartitionConfig, PartitionLog, now_ms, open_rw};
use crate::local::error::{IoContext, LocalError, Result};
use crate::local::lock::LockMode;
use crate::local::segment::{
    INDEX_SUFFIX, LOG_SUFFIX, MAX_BASE_OFFSET, TIMEINDEX_SUFFIX, remove_segment_files,
    segment_path, sync_dir,
};
use crate::record::{
    BatchHeader, set_base_offset, set_log_append_time, set_partition_leader_epoch, verify_crc,
};

/// The state to restore if an append fails part way.
struct Undo {
    base: i64,
    size: u64,
    index_len: u64,
    timeindex_len: u64,
}

/// The active segment as the last append of this writer left it, open, to be reused by its
/// next append if no other process touched the partition in between.
#[derive(Default)]
pub struct KeptTail(Option<Active>);

impl std::fmt::Debug for KeptTail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "KeptTail(open)"
        } else {
            "KeptTail(none)"
        })
    }
}

impl PartitionLog {
    /// Appends whole RecordBatch v2 batches (concatenated, any base offsets, as built by
    /// `BatchBuilder`). Base offsets are rewritten to the next offsets and the partition leader
    /// epoch to 0 (the CRC covers neither), so `batches` is modified in place. Each input batch
    /// must be whole, CRC-valid and hold at least one record, or nothing is written
    /// ([`LocalError::Invalid`]). An empty input only recovers the tail and returns the log end.
    ///
    /// Returns once all of it is fdatasync'ed. Retention is applied afterwards; its failure is
    /// reported in [`AppendResult::retention_error`], not as an append failure.
    pub fn append(&self, batches: &mut [u8], config: &PartitionConfig) -> Result<AppendResult> {
        config.validate()?;
        let spans = split_input(batches, true)?;
        self.append_spans(batches, &spans, config, &mut KeptTail::default())
    }

    /// [`PartitionLog::append`] of batches this process's `BatchBuilder` built (their CRCs
    /// were computed moments ago, so they are not summed again), starting from the segment
    /// `kept` holds when it is still the partition's tail and leaving the active segment there
    /// afterwards (nothing after a failure).
    pub fn append_built(
        &self,
        batches: &mut [u8],
        config: &PartitionConfig,
        kept: &mut KeptTail,
    ) -> Result<AppendResult> {
        config.validate()?;
        let spans = split_input(batches, false)?;
        self.append_spans(batches, &spans, config, kept)
    }

    fn append_spans(
        &self,
        batches: &mut [u8],
        spans: &[(usize, usize)],
        config: &PartitionConfig,
        kept: &mut KeptTail,
    ) -> Result<AppendResult> {
        let _lock = self.lock(LockMode::Exclusive)?;
        let bases = self.segment_bases()?;
        let last = bases[bases.len() - 1];
        let mut active = match kept.0.take() {
            Some(active) if active.base == last && active.unchanged(&self.dir) => active,
            _ => Active::recover(&self.dir, last, config)?,
        };
        let first = active.next_offset;

        let mut next = first;
        let mut transactional = false;
        let log_append_time = config.log_append_time.then(now_ms);
        for &(start, len) in spans {
            let batch = &mut batches[start..start + len];
            set_base_offset(batch, next);
            set_partition_leader_epoch(batch, 0);
            if let Some(now) = log_append_time {
                set_log_append_time(batch, now);
            }
            let header = BatchHeader::parse(batch).ok();
            transactional |= header
                .as_ref()
                .is_some_and(|h| h.is_transactional() || h.is_control());
            let count = header.map_or(1, |h| h.records_count as i64);
            // Past the last base offset a segment rolled there could not be listed again.
            next = next
                .checked_add(count)
                .filter(|&n| n <= MAX_BASE_OFFSET)
                .ok_or_else(|| {
                    LocalError::Invalid(format!(
                        "offsets would pass {MAX_BASE_OFFSET}, the last a log can hold"
                    ))
                })?;
        }

        // Transactions first open (saved ahead of the data) and then close (after it), see
        // `txn`; an append of plain batches skips this.
        let changes = match transactional {
            true => txn::changes(batches, spans)?,
            false => Vec::new(),
        };
        let txn = if changes.is_empty() {
            None
        } else {
            Some(TxnAppend::begin(
                &self.dir,
                self.listing()?.producer_state,
                &changes,
                next,
            )?)
        };
        let undo = Undo {
            base: active.base,
            size: active.size,
            index_len: active.index_len,
            timeindex_len: active.timeindex_len,
        };
        let mut created = Vec::new();
        // The recovery point moves only once the data is fdatasync'ed (by write_batches); if it
        // cannot be recorded, the append is undone like a failed write, so that what the
        // producer reports and what the log holds agree.
        let written = self
            .write_batches(&mut active, batches, spans, config, &mut created)
            .and_then(|()| write_recovery_point(&self.dir, active.next_offset));
        if let Err(e) = written {
            drop(active);
            let undone = self.undo(&undo, &created).and_then(|()| match txn {
                Some(txn) => txn.undo(&self.dir, first),
                None => Ok(()),
            });
            return Err(match undone {
                Ok(()) => e,
                Err(undo_err) => LocalError::Invalid(format!(
                    "{e}; undoing the partial append also failed ({undo_err}); the next append \
                     will verify the tail again"
                )),
            });
        }
        if let Some(txn) = txn {
            // The data stands; a failure here leaves its transactions open (see `txn`).
            let bases = self.segment_bases()?;
            let segment_of = |offset: i64| {
                let i = bases.partition_point(|&b| b <= offset).saturating_sub(1);
                bases[i]
            };
            txn.finish(&self.dir, &changes, active.next_offset, segment_of)?;
        }
        if let Some(board) = &self.board {
            board.record(active.next_offset);
        }
        let retention_error = self.retention_locked(config, &mut active).err();
        let next_offset = active.next_offset;
        if retention_error.is_none() {
            kept.0 = Some(active);
        }
        Ok(AppendResult {
            base_offset: first,
            next_offset,
            retention_error,
            log_append_time,
        })
    }

    /// Writes the (already patched) batches, rolling segments as needed: one pwrite per segment
    /// touched, one fdatasync per segment, one directory fsync if segments were created.
    fn write_batches(
        &self,
        active: &mut Active,
        batches: &[u8],
        spans: &[(usize, usize)],
        config: &PartitionConfig,
        created: &mut Vec<i64>,
    ) -> Result<()> {
        let Some(&(first_start, _)) = spans.first() else {
            return Ok(());
        };
        let now = now_ms();
        let mut chunk_start = first_start;
        let mut chunk_pos = active.size;
        for &(start, len) in spans {
            let header = BatchHeader::parse(&batches[start..start + len])
                .map_err(|e| LocalError::Invalid(e.to_string()))?;
            if active.should_roll(&header, config, now) {
                active.write(&batches[chunk_start..start], chunk_pos)?;
                active.sync_log()?;
                active.close()?;
                *active = Active::create(&self.dir, header.base_offset, config)?;
                created.push(header.base_offset);
                chunk_start = start;
                chunk_pos = 0;
            }
            if active.size == 0 {
                active.rolling_ts = Some(header.max_timestamp);
            }
            active.tracker.on_batch(active.size, &header);
            active.size += len as u64;
            active.next_offset = header.next_offset();
        }
        active.write(&batches[chunk_start..], chunk_pos)?;
        active.sync_log()?;
        if !created.is_empty() {
            sync_dir(&self.dir)?;
        }
        Ok(())
    }

    /// Puts the partition back as it was before a failed append: segments created by it are
    /// removed and the old active segment and its indexes are cut back to their old lengths.
    fn undo(&self, undo: &Undo, created: &[i64]) -> Result<()> {
        for &base in created.iter().rev() {
            remove_segment_files(&self.dir, base)?;
        }
        let cut = |suffix: &str, len: u64, sync: bool| -> Result<()> {
            let path = segment_path(&self.dir, undo.base, suffix);
            let f = open_rw(&path)?;
            f.set_len(len)
                .and_then(|()| if sync { f.sync_data() } else { Ok(()) })
                .context(|| format!("cannot truncate {}", path.display()))
        };
        cut(LOG_SUFFIX, undo.size, true)?;
        cut(INDEX_SUFFIX, undo.index_len, false)?;
        cut(TIMEINDEX_SUFFIX, undo.timeindex_len, false)?;
        if !created.is_empty() {
            sync_dir(&self.dir)?;
        }
        Ok(())
    }
}

impl Active {
    /// Whether the segment's three files are still the ones this writer holds open, at the
    /// lengths it left them. Other writers only ever append at the tail or cut a torn tail back
    /// to a valid end, and replace an index by renaming a new one over it; so same files at the
    /// same lengths mean the same valid tail, and the tail need not be recovered again.
    fn unchanged(&self, dir: &Path) -> bool {
        let same = |suffix: &str, file: &File, len: u64| {
            let (Ok(named), Ok(open)) = (
                std::fs::metadata(segment_path(dir, self.base, suffix)),
                file.metadata(),
            ) else {
                return false;
            };
            named.dev() == open.dev() && named.ino() == open.ino() && open.len() == len
        };
        same(LOG_SUFFIX, &self.log, self.size)
            && same(INDEX_SUFFIX, &self.index, self.index_len)
            && same(TIMEINDEX_SUFFIX, &self.timeindex, self.timeindex_len)
    }
}

/// Splits the input into whole batches and checks each before anything is written: a batch
/// stored with a bad CRC would later look like damage in the middle of the log. With
/// `check_crc` false (batches built in this process) the CRCs are trusted.
fn split_input(buf: &[u8], check_crc: bool) -> Result<Vec<(usize, usize)>> {
    let mut spans = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        let rest = &buf[pos..];
        let bad = |why: String| {
            LocalError::Invalid(format!(
                "cannot append: batch {} at byte {pos} of the input: {why}",
                spans.len()
            ))
        };
        let h = BatchHeader::parse(rest).map_err(|e| bad(e.to_string()))?;
        let total = h.total_size();
        if total > rest.len() {
            return Err(bad(format!(
                "it is {total} bytes but only {} remain",
                rest.len()
            )));
        }
        if h.records_count < 1 || h.records_count as i64 != h.last_offset_delta as i64 + 1 {
            return Err(bad(format!(
                "{} records with last offset delta {} (batches must hold at least one record, \
                 with dense offsets)",
                h.records_count, h.last_offset_delta
            )));
        }
        if check_crc {
            verify_crc(&rest[..total]).map_err(|e| bad(e.to_string()))?;
        }
        spans.push((pos, total));
        pos += total;
    }
    Ok(spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::segment::create_segment_files;
    use crate::record::{BatchBuilder, Compression};

    fn one_record() -> Vec<u8> {
        let mut b = BatchBuilder::new(Compression::None);
        b.append(0, None, Some(b"v"), &[]);
        b.build(0).unwrap()
    }

    #[test]
    fn appends_stop_at_the_last_offset_a_log_can_hold() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().join("t-0");
        PartitionLog::create(&dir).unwrap();
        remove_segment_files(&dir, 0).unwrap();
        create_segment_files(&dir, MAX_BASE_OFFSET - 1).unwrap();
        let log = PartitionLog::open(&dir).unwrap();
        let config = PartitionConfig::default();
        let done = log.append(&mut one_record(), &config).unwrap();
        assert_eq!(done.next_offset, MAX_BASE_OFFSET);
        // One more would need offsets a segment rolled there could not name.
        let err = log.append(&mut one_record(), &config).unwrap_err();
        assert!(err.to_string().contains("the last a log can hold"), "{err}");
        assert_eq!(log.snapshot().unwrap().log_end_offset, MAX_BASE_OFFSET);
    }

    #[test]
    fn a_kept_tail_is_used_only_while_no_one_else_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().join("t-0");
        PartitionLog::create(&dir).unwrap();
        let log = PartitionLog::open(&dir).unwrap();
        let config = PartitionConfig::default();
        let mut kept = KeptTail::default();
        let first = log
            .append_built(&mut one_record(), &config, &mut kept)
            .unwrap();
        assert_eq!((first.base_offset, first.next_offset), (0, 1));
        let again = log
            .append_built(&mut one_record(), &config, &mut kept)
            .unwrap();
        assert_eq!(again.base_offset, 1);
        // Another writer appends in between: the kept segment's length no longer matches.
        let other = log.append(&mut one_record(), &config).unwrap();
        assert_eq!(other.base_offset, 2);
        let after = log
            .append_built(&mut one_record(), &config, &mut kept)
            .unwrap();
        assert_eq!(
            after.base_offset, 3,
            "the kept tail was trusted after another append"
        );
        // Another writer replaces the index (as a rebuild does): recovered again, not trusted.
        // (Retention rolled past the records, dated 1970, so the active segment starts at 4.)
        let index = segment_path(
            &dir,
            *log.segment_bases().unwrap().last().unwrap(),
            INDEX_SUFFIX,
        );
        let bytes = std::fs::read(&index).unwrap();
        std::fs::remove_file(&index).unwrap();
        std::fs::write(&index, bytes).unwrap();
        assert!(kept.0.as_ref().is_some_and(|a| !a.unchanged(&dir)));
        let last = log
            .append_built(&mut one_record(), &config, &mut kept)
            .unwrap();
        assert_eq!(last.base_offset, 4);
        assert_eq!(log.snapshot().unwrap().log_end_offset, 5);
    }
}
