//! Dumping `.index` and `.timeindex` files as Kafka's tool does: each entry, checked against
//! the segment's `.log` (mismatches are collected for the summary on stderr), or only Kafka's
//! startup sanity check. The indexes are read as Kafka's `OffsetIndex` and `TimeIndex` read a
//! file they do not write: as many whole entries as the file holds, zeros included.

use super::batch::{Fields, for_each_record};
use super::file_records::{FileBatch, FileRecords};
use super::java::{self, CORRUPT_INDEX, JavaError};
use super::{Findings, Out, Stop};
use crate::log_files::{OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE, offset_entry, time_entry};

/// What the options ask of an index dump.
pub struct IndexOptions {
    pub sanity_only: bool,
    pub verify_only: bool,
    pub max_message_size: i32,
}

/// An index file's bytes, as whole entries.
struct IndexFile {
    base: i64,
    bytes: Vec<u8>,
    length: u64,
    entry_size: usize,
}

impl IndexFile {
    /// Reads the index at `display`. (Kafka's tool creates a missing index file, then fails;
    /// kafkit writes nothing and reports the file missing.)
    fn open(display: &str, base: i64, entry_size: usize) -> Result<IndexFile, JavaError> {
        let mut bytes = std::fs::read(display).map_err(|e| java::open_error(display, &e))?;
        let length = bytes.len() as u64;
        bytes.truncate(bytes.len() / entry_size * entry_size);
        Ok(IndexFile {
            base,
            bytes,
            length,
            entry_size,
        })
    }

    fn entries(&self) -> usize {
        self.bytes.len() / self.entry_size
    }

    fn raw(&self, i: usize) -> &[u8] {
        &self.bytes[i * self.entry_size..(i + 1) * self.entry_size]
    }

    /// Offset-index entry `i`: (absolute offset, position).
    fn offset_entry(&self, i: usize) -> (i64, i32) {
        let (relative, position) = offset_entry(self.raw(i).try_into().expect("8 bytes"));
        (self.base.wrapping_add(i64::from(relative)), position)
    }

    /// Time-index entry `i`: (timestamp, absolute offset).
    fn time_entry(&self, i: usize) -> (i64, i64) {
        let (timestamp, relative) = time_entry(self.raw(i).try_into().expect("12 bytes"));
        (timestamp, self.base.wrapping_add(i64::from(relative)))
    }

    /// `OffsetIndex.lookup`: the entry of the largest offset at most `target`, searched as
    /// Kafka searches (the last 1024 entries first, then a binary search that assumes sorted
    /// entries); (base offset, 0) when there is none.
    fn lookup(&self, target: i64) -> (i64, i32) {
        let entries = self.entries();
        if entries == 0 {
            return (self.base, 0);
        }
        let warm = 8192 / OFFSET_ENTRY_SIZE;
        let first_hot = (entries - 1).saturating_sub(warm);
        let offset = |i| self.offset_entry(i).0;
        let slot = if offset(first_hot) < target {
            Some(self.largest_lower_bound(target, first_hot, entries - 1))
        } else if offset(0) > target {
            None
        } else {
            Some(self.largest_lower_bound(target, 0, first_hot))
        };
        slot.map_or((self.base, 0), |i| self.offset_entry(i))
    }

    fn largest_lower_bound(&self, target: i64, mut lo: usize, mut hi: usize) -> usize {
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            let found = self.offset_entry(mid).0;
            match found.cmp(&target) {
                std::cmp::Ordering::Greater => hi = mid - 1,
                std::cmp::Ordering::Less => lo = mid,
                std::cmp::Ordering::Equal => return mid,
            }
        }
        lo
    }

    fn corrupt(message: String) -> JavaError {
        JavaError::new(CORRUPT_INDEX, message)
    }

    /// `OffsetIndex.sanityCheck`.
    fn offset_sanity(&self, absolute: &str) -> Result<(), JavaError> {
        let last = match self.entries() {
            0 => self.base,
            n => self.offset_entry(n - 1).0,
        };
        if self.entries() != 0 && last < self.base {
            return Err(Self::corrupt(format!(
                "Corrupt index found, index file {absolute} has non-zero size but the last offset \
                 is {last} which is less than the base offset {}",
                self.base
            )));
        }
        if !self.length.is_multiple_of(OFFSET_ENTRY_SIZE as u64) {
            return Err(Self::corrupt(format!(
                "Index file {absolute} is corrupt, found {} bytes which is neither positive nor a \
                 multiple of {OFFSET_ENTRY_SIZE}",
                self.length
            )));
        }
        Ok(())
    }

    /// `TimeIndex.sanityCheck`.
    fn time_sanity(&self, absolute: &str) -> Result<(), JavaError> {
        if let Some(last) = self.entries().checked_sub(1) {
            let (last_ts, last_offset) = self.time_entry(last);
            let first_ts = self.time_entry(0).0;
            if last_ts < first_ts {
                return Err(Self::corrupt(format!(
                    "Corrupt time index found, time index file ({absolute}) has non-zero size but \
                     the last timestamp is {last_ts} which is less than the first timestamp \
                     {first_ts}"
                )));
            }
            if last_offset < self.base {
                return Err(Self::corrupt(format!(
                    "Corrupt time index found, time index file ({absolute}) has non-zero size but \
                     the last offset is {last_offset} which is less than the first offset {}",
                    self.base
                )));
            }
        }
        if !self.length.is_multiple_of(TIME_ENTRY_SIZE as u64) {
            return Err(Self::corrupt(format!(
                "Time index file {absolute} is corrupt, found {} bytes which is neither positive \
                 nor a multiple of {TIME_ENTRY_SIZE}",
                self.length
            )));
        }
        Ok(())
    }
}

/// The last offset of a batch, as its header says.
fn last_offset(batch: &mut FileBatch<'_>) -> Result<i64, JavaError> {
    if batch.magic < 2 {
        return Ok(batch.offset);
    }
    Ok(Fields::of(batch.header()?)?.last_offset())
}

/// Dumps the offset index at `display` (named `name`).
pub fn dump_index(
    display: &str,
    name: &str,
    opts: &IndexOptions,
    out: &mut Out,
    findings: &mut Findings,
) -> Result<(), Stop> {
    let base = java::base_offset(name)?;
    let prefix = java::name_prefix(name)?;
    let log = FileRecords::open(&java::sibling(display, &format!("{prefix}.log")))?;
    let index = IndexFile::open(display, base, OFFSET_ENTRY_SIZE)?;
    let absolute = java::absolute(display);
    if index.entries() == 0 {
        out.line(&format!("{display} is empty."))?;
        return Ok(());
    }
    if opts.sanity_only {
        index.offset_sanity(&absolute)?;
        out.line(&format!("{display} passed sanity check."))?;
        return Ok(());
    }
    for i in 0..index.entries() {
        let (offset, position) = index.offset_entry(i);
        // A preallocated index ends in zero entries: the first one ends the dump.
        if offset == base && i > 0 {
            return Ok(());
        }
        let slice = log.slice(position, opts.max_message_size)?;
        let mut frames = slice.frames();
        let mut batch = frames
            .next_batch()?
            .ok_or_else(|| JavaError::bare("java.util.NoSuchElementException"))?;
        let found = last_offset(&mut batch)?;
        if found != offset {
            findings.index_mismatch(&absolute, offset, found);
        }
        if !opts.verify_only {
            out.line(&format!("offset: {offset} position: {position}"))?;
        }
    }
    Ok(())
}

/// Dumps the time index at `display` (named `name`).
pub fn dump_time_index(
    display: &str,
    name: &str,
    opts: &IndexOptions,
    out: &mut Out,
    findings: &mut Findings,
) -> Result<(), Stop> {
    let base = java::base_offset(name)?;
    let prefix = java::name_prefix(name)?;
    let log = FileRecords::open(&java::sibling(display, &format!("{prefix}.log")))?;
    let index_path = java::sibling(display, &format!("{prefix}.index"));
    let index = IndexFile::open(&index_path, base, OFFSET_ENTRY_SIZE)?;
    let time_index = IndexFile::open(display, base, TIME_ENTRY_SIZE)?;
    let absolute = java::absolute(display);
    if opts.sanity_only {
        time_index.time_sanity(&absolute)?;
        out.line(&format!("{display} passed sanity check."))?;
        return Ok(());
    }
    let mut previous = -1i64;
    for i in 0..time_index.entries() {
        let (timestamp, offset) = time_index.time_entry(i);
        if offset == base && i > 0 {
            return Ok(());
        }
        let (_, position) = index.lookup(offset);
        let partial = log.slice(position, i32::MAX)?;
        // Kafka lists every batch from the position before looking at any.
        let mut batches = Vec::new();
        let mut frames = partial.frames();
        while let Some(batch) = frames.next_batch()? {
            batches.push(batch);
        }
        let mut matching = None;
        for batch in &mut batches {
            if last_offset(batch)? >= offset {
                matching = Some(batch);
                break;
            }
        }
        match matching {
            None => findings.not_found(&absolute, offset, -1),
            Some(batch) => {
                let found = last_offset(batch)?;
                if found != offset {
                    findings.not_found(&absolute, offset, found);
                } else {
                    let mut max = -1i64;
                    for_each_record(batch, |_, r| {
                        max = max.max(r.timestamp);
                        Ok::<(), JavaError>(())
                    })?;
                    if max != timestamp {
                        findings.time_mismatch(&absolute, timestamp, max);
                    }
                    if previous >= timestamp {
                        findings.out_of_order(&absolute, timestamp, previous);
                    }
                }
            }
        }
        if !opts.verify_only {
            out.line(&format!("timestamp: {timestamp} offset: {offset}"))?;
        }
        previous = timestamp;
    }
    Ok(())
}
