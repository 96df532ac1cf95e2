//! The sparse indexes as hints: an offset-index or time-index entry is used as a scan start
//! only after it is checked against the log, since an index may be stale, zero-filled or
//! damaged. An entry that does not check out is ignored: readers scan from the segment start
//! instead, and a writer rebuilds the indexes (see `recovery`).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::open_optional;
use crate::local::index::{
    OFFSET_ENTRY_SIZE, OffsetEntry, TIME_ENTRY_SIZE, TimeEntry, lookup_offset, read_offset_entry,
    read_time_entry,
};
use crate::local::segment::{
    INDEX_SUFFIX, SCAN_CHUNK, Scanner, Step, TIMEINDEX_SUFFIX, check_header, segment_path,
};
use crate::record::{BATCH_OVERHEAD, BatchHeader};

/// Whether an offset-index entry names the start of a plausible batch whose last offset is the
/// entry's offset, below `limit`. The CRC is checked later by the scan that starts there. Any
/// I/O error means "no": the index is only a hint and the scan will meet the error itself.
pub(super) fn entry_points_at_batch(log: &File, base: i64, limit: u64, e: OffsetEntry) -> bool {
    let pos = e.position as u64;
    if e.relative_offset < 0 || pos + BATCH_OVERHEAD as u64 > limit {
        return false;
    }
    let mut b = [0u8; BATCH_OVERHEAD];
    if log.read_exact_at(&mut b, pos).is_err() {
        return false;
    }
    match BatchHeader::parse(&b) {
        Ok(h) => {
            check_header(&h, base, None, false).is_none()
                && h.last_offset() == base + e.relative_offset as i64
                && pos + h.total_size() as u64 <= limit
        }
        Err(_) => false,
    }
}

/// The last offset-index entry of a segment if it can be trusted as a scan start, for readers.
pub(super) fn reader_last_entry(
    dir: &Path,
    base: i64,
    log: &File,
    limit: u64,
) -> Option<OffsetEntry> {
    let index = open_optional(&segment_path(dir, base, INDEX_SUFFIX), false).ok()??;
    let entries = index.metadata().ok()?.len() / OFFSET_ENTRY_SIZE;
    let e = read_offset_entry(&index, entries.checked_sub(1)?).ok()?;
    entry_points_at_batch(log, base, limit, e).then_some(e)
}

/// Where to start scanning for `offset` in a segment: the offset index's greatest entry at or
/// below it, if it checks out; else the segment start.
pub(super) fn reader_position_for(
    dir: &Path,
    base: i64,
    log: &File,
    limit: u64,
    offset: i64,
) -> u64 {
    let hint = || -> Option<u64> {
        let index = open_optional(&segment_path(dir, base, INDEX_SUFFIX), false).ok()??;
        let entries = index.metadata().ok()?.len() / OFFSET_ENTRY_SIZE;
        let e = lookup_offset(&index, entries, offset - base).ok()??;
        entry_points_at_batch(log, base, limit, e).then_some(e.position as u64)
    };
    hint().unwrap_or(0)
}

/// The last entry of a segment's time index, unchecked (see [`time_entry_checks_out`]); `None`
/// when the index is missing, empty, torn mid-entry or unreadable.
pub(super) fn last_time_entry(dir: &Path, base: i64) -> Option<TimeEntry> {
    let index = open_optional(&segment_path(dir, base, TIMEINDEX_SUFFIX), false).ok()??;
    let len = index.metadata().ok()?.len();
    if len % TIME_ENTRY_SIZE != 0 {
        return None;
    }
    read_time_entry(&index, (len / TIME_ENTRY_SIZE).checked_sub(1)?).ok()
}

/// Whether a time-index entry (T, O) agrees with the log: the batch holding offset O must have
/// max timestamp T (O is the offset of the batch that set the max). This rejects zero-filled,
/// garbage and stale entries before a lookup or retention trusts them. Found through the offset
/// index, so it usually costs one short scan.
pub(super) fn time_entry_checks_out(
    dir: &Path,
    base: i64,
    log: &File,
    path: &Path,
    limit: u64,
    e: TimeEntry,
) -> bool {
    if e.relative_offset < 0 {
        return false;
    }
    let target = base + e.relative_offset as i64;
    let start = reader_position_for(dir, base, log, limit, target);
    let mut scanner = Scanner::new(log, path, base, start, limit, SCAN_CHUNK);
    loop {
        match scanner.next() {
            Ok(Step::Batch(b)) if b.header.last_offset() >= target => {
                return b.header.base_offset <= target && b.header.max_timestamp == e.timestamp;
            }
            Ok(Step::Batch(_)) => {}
            _ => return false,
        }
    }
}
