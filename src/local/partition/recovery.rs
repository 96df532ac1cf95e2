//! Recovery of a segment for writing: its tail is verified from the last offset-index entry
//! (or from the start when the indexes cannot be trusted), a torn tail left by a killed writer
//! is cut off, damage followed by valid data is refused, and untrustworthy indexes are rebuilt.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::active::Active;
use super::checkpoint::read_recovery_point;
use super::hints::{entry_points_at_batch, time_entry_checks_out};
use super::{PartitionConfig, corrupt, file_len, open_optional, open_rw, system_time_ms};
use crate::local::error::{IoContext, Result};
use crate::local::index::{
    IndexTracker, OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE, TimeEntry, read_offset_entry, read_time_entry,
};
use crate::local::segment::{
    INDEX_SUFFIX, LOG_SUFFIX, SCAN_CHUNK, Scanner, Step, TIMEINDEX_SUFFIX, find_valid_batch_after,
    segment_path,
};
use crate::local::warnings;
use crate::record::{BATCH_OVERHEAD, BatchHeader};

/// Replaces an index file with `bytes` (tmp + rename, so a concurrent reader sees the old or the
/// new file, never a half-written one). `durable` also fsyncs it (closed segments, whose last
/// time-index entry retention relies on).
fn replace_index(path: &Path, bytes: &[u8], durable: bool) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let write = || -> io::Result<()> {
        let f = File::create(&tmp)?;
        f.write_all_at(bytes, 0)?;
        if durable {
            f.sync_data()?;
        }
        std::fs::rename(&tmp, path)
    };
    write().context(|| format!("cannot rebuild index {}", path.display()))
}

/// How a bad batch found by a writer is handled. Damage followed by valid data, or below the
/// recovery point (data acknowledged as durable), is an error naming the file and byte, and
/// nothing is changed. Otherwise it is the torn tail of an interrupted append: it is cut off,
/// durably, with a warning.
#[allow(clippy::too_many_arguments)]
fn cut_torn_tail(
    dir: &Path,
    log: &File,
    path: &Path,
    base: i64,
    bad_at: u64,
    reason: String,
    file_len: u64,
    next_offset: i64,
) -> Result<()> {
    if let Some(good) = find_valid_batch_after(log, path, base, bad_at + 1, file_len, next_offset)?
    {
        return Err(corrupt(
            path,
            bad_at,
            format!("{reason}; a valid batch follows at byte {good}"),
        ));
    }
    let recovery_point = read_recovery_point(dir);
    if next_offset < recovery_point {
        return Err(corrupt(
            path,
            bad_at,
            format!(
                "{reason}; the batch at offset {next_offset} lies below the recovery point \
                 {recovery_point}, so it was written, fsynced and acknowledged, and has been \
                 damaged since"
            ),
        ));
    }
    // Nothing good follows: the tail of an interrupted append. Cut it and make the cut durable
    // before anything is written after it.
    log.set_len(bad_at)
        .and_then(|()| log.sync_data())
        .context(|| format!("cannot truncate the torn tail of {}", path.display()))?;
    warnings::push(format!(
        "Cut the torn tail of {} at byte {bad_at} (offset {next_offset}: {reason}), left by an append that was interrupted before it was acknowledged.",
        path.display()
    ));
    Ok(())
}

impl Active {
    /// Recovers a segment for writing: finds and verifies its tail from the last index entry,
    /// cuts a torn tail, and rebuilds indexes that cannot be trusted.
    pub(super) fn recover(dir: &Path, base: i64, cfg: &PartitionConfig) -> Result<Active> {
        let log_path = segment_path(dir, base, LOG_SUFFIX);
        let log = open_rw(&log_path)?;
        let len = file_len(&log, &log_path)?;
        match Self::recover_from_index(dir, base, cfg, &log, &log_path, len)? {
            Some(parts) => Self::assemble(dir, base, log, log_path, parts),
            None => Self::rebuild(dir, base, cfg, log, log_path, len, false),
        }
    }

    /// The fast path. `None` means "the indexes cannot be trusted: rebuild".
    fn recover_from_index(
        dir: &Path,
        base: i64,
        cfg: &PartitionConfig,
        log: &File,
        log_path: &Path,
        len: u64,
    ) -> Result<Option<(u64, i64, IndexTracker)>> {
        let (Some(index), Some(timeindex)) = (
            open_optional(&segment_path(dir, base, INDEX_SUFFIX), false)?,
            open_optional(&segment_path(dir, base, TIMEINDEX_SUFFIX), false)?,
        ) else {
            return Ok(None);
        };
        let index_len = file_len(&index, log_path)?;
        let timeindex_len = file_len(&timeindex, log_path)?;
        if index_len % OFFSET_ENTRY_SIZE != 0 || timeindex_len % TIME_ENTRY_SIZE != 0 {
            return Ok(None);
        }
        let (oe, te) = (
            index_len / OFFSET_ENTRY_SIZE,
            timeindex_len / TIME_ENTRY_SIZE,
        );
        // Both indexes gain their first entry together; one without the other is damage.
        if (oe == 0) != (te == 0) {
            return Ok(None);
        }
        let last_entry = match oe.checked_sub(1) {
            Some(i) => match read_offset_entry(&index, i) {
                Ok(e) if entry_points_at_batch(log, base, len, e) => Some(e),
                _ => return Ok(None),
            },
            None => None,
        };
        let last_time: Option<TimeEntry> = match te.checked_sub(1) {
            Some(i) => match read_time_entry(&timeindex, i) {
                Ok(e) => Some(e),
                Err(_) => return Ok(None),
            },
            None => None,
        };
        let start = last_entry.map_or(0, |e| e.position as u64);
        let mut tracker = IndexTracker::new(base, cfg.index_interval_bytes);
        tracker.offset_entries = oe;
        tracker.time_entries = te;
        if let Some(t) = last_time {
            tracker.last_time_ts = Some(t.timestamp);
            tracker.max_ts = Some((t.timestamp, base + t.relative_offset as i64));
        }
        let mut scanner = Scanner::new(log, log_path, base, start, len, SCAN_CHUNK);
        let bad = loop {
            match scanner.next()? {
                Step::Batch(b) => tracker.observe(&b.header),
                Step::End => break None,
                Step::Bad { position, reason } => break Some((position, reason)),
            }
        };
        let (end, next) = (scanner.position(), scanner.next_offset());
        let Some(next) = next else {
            // The indexed batch itself is bad: the index is stale. Decide from a full scan.
            return Ok(None);
        };
        if let Some((position, reason)) = bad {
            cut_torn_tail(dir, log, log_path, base, position, reason, len, next)?;
        }
        // A time entry past the end is stale (its batch was cut off or never became durable).
        if let Some(t) = last_time
            && (t.relative_offset < 0
                || base + t.relative_offset as i64 >= next
                || !time_entry_checks_out(dir, base, log, log_path, end, t))
        {
            return Ok(None);
        }
        tracker.bytes_since = end - start;
        Ok(Some((end, next, tracker)))
    }

    /// Rebuilds both indexes from a full scan (cutting a torn tail of the active segment first).
    /// A closed segment gets its final time entry, and any bad batch in it is corruption, since
    /// later segments hold valid data.
    pub(super) fn rebuild(
        dir: &Path,
        base: i64,
        cfg: &PartitionConfig,
        log: File,
        log_path: PathBuf,
        len: u64,
        closed: bool,
    ) -> Result<Active> {
        let mut tracker = IndexTracker::new(base, cfg.index_interval_bytes);
        let mut scanner = Scanner::new(&log, &log_path, base, 0, len, SCAN_CHUNK);
        let bad = loop {
            match scanner.next()? {
                Step::Batch(b) => {
                    let (pos, header) = (b.position, b.header);
                    tracker.on_batch(pos, &header);
                }
                Step::End => break None,
                Step::Bad { position, reason } => break Some((position, reason)),
            }
        };
        let (end, next) = (scanner.position(), scanner.next_offset().unwrap_or(base));
        if let Some((position, reason)) = bad {
            if closed {
                return Err(corrupt(
                    &log_path,
                    position,
                    format!("{reason}; later segments hold valid data"),
                ));
            }
            cut_torn_tail(dir, &log, &log_path, base, position, reason, len, next)?;
        }
        if closed {
            tracker.maybe_time_entry();
        }
        replace_index(
            &segment_path(dir, base, INDEX_SUFFIX),
            &tracker.pending_offset,
            closed,
        )?;
        replace_index(
            &segment_path(dir, base, TIMEINDEX_SUFFIX),
            &tracker.pending_time,
            closed,
        )?;
        tracker.pending_offset.clear();
        tracker.pending_time.clear();
        Self::assemble(dir, base, log, log_path, (end, next, tracker))
    }

    pub(super) fn assemble(
        dir: &Path,
        base: i64,
        log: File,
        log_path: PathBuf,
        (size, next_offset, tracker): (u64, i64, IndexTracker),
    ) -> Result<Active> {
        let index_path = segment_path(dir, base, INDEX_SUFFIX);
        let timeindex_path = segment_path(dir, base, TIMEINDEX_SUFFIX);
        let index = open_rw(&index_path)?;
        let timeindex = open_rw(&timeindex_path)?;
        let rolling_ts = if size > 0 {
            let mut b = [0u8; BATCH_OVERHEAD];
            log.read_exact_at(&mut b, 0)
                .context(|| format!("cannot read {}", log_path.display()))?;
            BatchHeader::parse(&b).ok().map(|h| h.max_timestamp)
        } else {
            None
        };
        let created_ms = log
            .metadata()
            .ok()
            .and_then(|m| system_time_ms(m.created()));
        Ok(Active {
            base,
            index_len: file_len(&index, &index_path)?,
            timeindex_len: file_len(&timeindex, &timeindex_path)?,
            log_path,
            log,
            index,
            timeindex,
            size,
            next_offset,
            rolling_ts,
            created_ms,
            tracker,
        })
    }
}
