//! Kafka's sparse segment indexes: `.index` (offset to byte position) and `.timeindex`
//! (timestamp to offset), big-endian and byte-compatible with Kafka's `OffsetIndex`/`TimeIndex`.
//!
//! Both files are *hints*: they carry no checksum and are not fsynced on every append, so after a
//! crash they may be missing, short, torn mid-entry or stale. Every entry is validated against the
//! `.log` before it is trusted, and writers rebuild an index they cannot trust (see
//! `partition.rs`). Files are only ever appended to (no preallocation), so unlike Kafka's
//! preallocated files they never end in zero entries.
//!
//! - `.index` entry (8 bytes): int32 offset relative to the segment base (the **last** offset of
//!   the indexed batch), int32 position of that batch's first byte.
//! - `.timeindex` entry (12 bytes): int64 max timestamp so far in the segment, int32 relative
//!   offset of the batch holding it. "Every record with timestamp > T is after that offset."

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use crate::log_files;
use crate::record::BatchHeader;

pub(crate) const OFFSET_ENTRY_SIZE: u64 = log_files::OFFSET_ENTRY_SIZE as u64;
pub(crate) const TIME_ENTRY_SIZE: u64 = log_files::TIME_ENTRY_SIZE as u64;

/// One `.index` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OffsetEntry {
    pub relative_offset: i32,
    pub position: u32,
}

/// One `.timeindex` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimeEntry {
    pub timestamp: i64,
    pub relative_offset: i32,
}

/// Reads entry `i` of an offset index.
pub(crate) fn read_offset_entry(file: &File, i: u64) -> io::Result<OffsetEntry> {
    let mut b = [0u8; log_files::OFFSET_ENTRY_SIZE];
    file.read_exact_at(&mut b, i * OFFSET_ENTRY_SIZE)?;
    let (relative_offset, position) = log_files::offset_entry(&b);
    Ok(OffsetEntry {
        relative_offset,
        position: position as u32,
    })
}

/// Reads entry `i` of a time index.
pub(crate) fn read_time_entry(file: &File, i: u64) -> io::Result<TimeEntry> {
    let mut b = [0u8; log_files::TIME_ENTRY_SIZE];
    file.read_exact_at(&mut b, i * TIME_ENTRY_SIZE)?;
    let (timestamp, relative_offset) = log_files::time_entry(&b);
    Ok(TimeEntry {
        timestamp,
        relative_offset,
    })
}

/// Index of the last entry in `0..n` for which `at_or_below(i)` holds, assuming the predicate is
/// true for a prefix. Binary search with one pread per probe: no mmap (a writer may truncate the
/// file under us), no reading the whole file.
fn last_at_or_below(
    n: u64,
    mut at_or_below: impl FnMut(u64) -> io::Result<bool>,
) -> io::Result<Option<u64>> {
    let (mut lo, mut hi) = (0u64, n); // answer is in [lo, hi): invariant pred(lo-1) true, pred(hi) false
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if at_or_below(mid)? {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo.checked_sub(1))
}

/// The greatest entry whose relative offset is `<= relative_target` (Kafka's lookup).
pub(crate) fn lookup_offset(
    file: &File,
    entries: u64,
    relative_target: i64,
) -> io::Result<Option<OffsetEntry>> {
    let i = last_at_or_below(entries, |i| {
        Ok(read_offset_entry(file, i)?.relative_offset as i64 <= relative_target)
    })?;
    i.map(|i| read_offset_entry(file, i)).transpose()
}

/// The greatest entry whose timestamp is strictly below `ts`: every record up to its offset has a
/// timestamp `< ts`, so a search for `ts` may start after it.
pub(crate) fn lookup_time_before(
    file: &File,
    entries: u64,
    ts: i64,
) -> io::Result<Option<TimeEntry>> {
    let i = last_at_or_below(entries, |i| Ok(read_time_entry(file, i)?.timestamp < ts))?;
    i.map(|i| read_time_entry(file, i)).transpose()
}

/// Decides where index entries go, with Kafka's rules (`LogSegment.append`), and buffers them so
/// one append call costs one write per index file, not one per entry.
#[derive(Debug)]
pub(crate) struct IndexTracker {
    base: i64,
    interval: u64,
    /// Bytes appended since the last offset-index entry.
    pub bytes_since: u64,
    /// Largest batch max-timestamp in the segment so far, and the last offset of its batch.
    pub max_ts: Option<(i64, i64)>,
    /// Timestamp of the last time-index entry (entries must strictly increase).
    pub last_time_ts: Option<i64>,
    /// Entries in each file, written plus pending (for the "index full" roll rule).
    pub offset_entries: u64,
    pub time_entries: u64,
    pub pending_offset: Vec<u8>,
    pub pending_time: Vec<u8>,
}

impl IndexTracker {
    pub fn new(base: i64, interval: u64) -> Self {
        IndexTracker {
            base,
            interval,
            bytes_since: 0,
            max_ts: None,
            last_time_ts: None,
            offset_entries: 0,
            time_entries: 0,
            pending_offset: Vec::new(),
            pending_time: Vec::new(),
        }
    }

    /// Folds a batch's max timestamp into the running maximum (no entries written).
    pub fn observe(&mut self, header: &BatchHeader) {
        let last = header.base_offset + header.last_offset_delta as i64;
        match self.max_ts {
            Some((ts, _)) if header.max_timestamp <= ts => {}
            _ => self.max_ts = Some((header.max_timestamp, last)),
        }
    }

    /// Accounts for a batch written at `position`: Kafka checks the interval *before* adding the
    /// batch, so a segment's first batch is never indexed and an entry names the batch that
    /// crossed the interval (its last offset, its start position).
    pub fn on_batch(&mut self, position: u64, header: &BatchHeader) {
        self.observe(header);
        if self.bytes_since > self.interval {
            let last = header.base_offset + header.last_offset_delta as i64;
            self.pending_offset
                .extend_from_slice(&((last - self.base) as i32).to_be_bytes());
            self.pending_offset
                .extend_from_slice(&(position as u32).to_be_bytes());
            self.offset_entries += 1;
            self.maybe_time_entry();
            self.bytes_since = 0;
        }
        self.bytes_since += header.total_size() as u64;
    }

    /// Appends a time entry if the max timestamp grew (Kafka's `TimeIndex.maybeAppend`). Called
    /// with each offset entry and once more when the segment is closed, so a closed segment's
    /// last time entry holds its max timestamp (retention and lookups rely on that).
    pub fn maybe_time_entry(&mut self) {
        let Some((ts, offset)) = self.max_ts else {
            return;
        };
        if self.last_time_ts.is_none_or(|last| ts > last) {
            self.pending_time.extend_from_slice(&ts.to_be_bytes());
            self.pending_time
                .extend_from_slice(&((offset - self.base) as i32).to_be_bytes());
            self.time_entries += 1;
            self.last_time_ts = Some(ts);
        }
    }

    /// Kafka rolls when either index has reached `segment.index.bytes / entry size` entries.
    pub fn is_full(&self, segment_index_bytes: u64) -> bool {
        self.offset_entries >= segment_index_bytes / OFFSET_ENTRY_SIZE
            || self.time_entries >= segment_index_bytes / TIME_ENTRY_SIZE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn binary_search_finds_greatest_lower_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i");
        let mut f = File::create(&path).unwrap();
        for (rel, pos) in [(3i32, 100u32), (7, 200), (12, 300)] {
            f.write_all(&rel.to_be_bytes()).unwrap();
            f.write_all(&pos.to_be_bytes()).unwrap();
        }
        let f = File::open(&path).unwrap();
        assert_eq!(lookup_offset(&f, 3, 2).unwrap(), None);
        assert_eq!(lookup_offset(&f, 3, 3).unwrap().unwrap().position, 100);
        assert_eq!(lookup_offset(&f, 3, 11).unwrap().unwrap().position, 200);
        assert_eq!(lookup_offset(&f, 3, 99).unwrap().unwrap().position, 300);
        assert_eq!(lookup_offset(&f, 0, 99).unwrap(), None);
    }
}
