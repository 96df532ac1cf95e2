//! Dumping `.index` and `.timeindex` files as Kafka's tool does: each entry, checked against
//! the segment's `.log` (mismatches are collected for the summary on stderr), or only Kafka's
//! startup sanity check. The indexes are read as Kafka's `OffsetIndex` and `TimeIndex` read a
//! file they do not write: as many whole entries as the file holds, zeros included.

use std::collections::{HashMap, HashSet};

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
fn last_offset_of(batch: &mut FileBatch<'_>) -> Result<i64, JavaError> {
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
        let mut batch = frames.next_batch()?.ok_or_else(no_such_element)?;
        let found = last_offset_of(&mut batch)?;
        if found != offset {
            findings.index_mismatch(&absolute, offset, found);
        }
        if !opts.verify_only {
            out.line(&format!("offset: {offset} position: {position}"))?;
        }
    }
    Ok(())
}

/// The batches from a position to the end of a log, as Kafka's time-index dump lists them for
/// each entry (all of them, so that damage anywhere after the position ends the dump), with
/// each batch read once however many entries start before it: Kafka's way costs a walk of the
/// rest of the segment per entry.
struct BatchChain<'a> {
    log: &'a FileRecords,
    /// The batch at a position: the position after it and its last offset once read, or the
    /// end of the log, or the error framing it meets.
    links: HashMap<i32, Link>,
    /// Positions whose walk to the end is known to be clean.
    clean: HashSet<i32>,
}

#[derive(Clone)]
enum Link {
    Batch { next: i32, last_offset: Option<i64> },
    End,
    Fail(JavaError),
}

impl<'a> BatchChain<'a> {
    fn new(log: &'a FileRecords) -> Self {
        BatchChain {
            log,
            links: HashMap::new(),
            clean: HashSet::new(),
        }
    }

    fn link(&mut self, at: i32) -> Link {
        if let Some(link) = self.links.get(&at) {
            return link.clone();
        }
        let link = match self.log.slice(at, i32::MAX).and_then(|s| {
            let mut frames = s.frames();
            frames
                .next_batch()
                .map(|b| b.map(|b| b.position + b.size_in_bytes()))
        }) {
            Ok(Some(next)) => Link::Batch {
                next,
                last_offset: None,
            },
            Ok(None) => Link::End,
            Err(e) => Link::Fail(e),
        };
        self.links.insert(at, link.clone());
        link
    }

    /// Walks from `from` to the end: the error framing meets on the way, if any.
    fn check_to_end(&mut self, from: i32) -> Result<(), JavaError> {
        let mut seen = Vec::new();
        let mut at = from;
        while !self.clean.contains(&at) {
            match self.link(at) {
                Link::Batch { next, .. } => {
                    seen.push(at);
                    at = next;
                }
                Link::End => break,
                Link::Fail(e) => return Err(e),
            }
        }
        self.clean.extend(seen);
        Ok(())
    }

    /// The first batch from `from` whose last offset is at least `target`: its position and
    /// last offset (headers read up to it, as Kafka reads them).
    fn first_ending_at_or_after(
        &mut self,
        from: i32,
        target: i64,
    ) -> Result<Option<(i32, i64)>, JavaError> {
        let mut at = from;
        loop {
            let Link::Batch { next, last_offset } = self.link(at) else {
                return Ok(None);
            };
            let last = match last_offset {
                Some(last) => last,
                None => {
                    let slice = self.log.slice(at, i32::MAX)?;
                    let mut frames = slice.frames();
                    // The file may have shrunk since the chain framed this batch.
                    let mut batch = frames.next_batch()?.ok_or_else(no_such_element)?;
                    let last = last_offset_of(&mut batch)?;
                    self.links.insert(
                        at,
                        Link::Batch {
                            next,
                            last_offset: Some(last),
                        },
                    );
                    last
                }
            };
            if last >= target {
                return Ok(Some((at, last)));
            }
            at = next;
        }
    }
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
    let mut chain = BatchChain::new(&log);
    for i in 0..time_index.entries() {
        let (timestamp, offset) = time_index.time_entry(i);
        if offset == base && i > 0 {
            return Ok(());
        }
        let (_, position) = index.lookup(offset);
        log.slice(position, i32::MAX)?;
        chain.check_to_end(position)?;
        match chain.first_ending_at_or_after(position, offset)? {
            None => findings.not_found(&absolute, offset, -1),
            Some((_, found)) if found != offset => findings.not_found(&absolute, offset, found),
            Some((at, _)) => {
                let slice = log.slice(at, i32::MAX)?;
                let mut frames = slice.frames();
                let mut batch = frames.next_batch()?.ok_or_else(no_such_element)?;
                let mut max = -1i64;
                for_each_record(&mut batch, |_, r| {
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
        if !opts.verify_only {
            out.line(&format!("timestamp: {timestamp} offset: {offset}"))?;
        }
        previous = timestamp;
    }
    Ok(())
}

/// What Java's iterators throw when asked for an element past the end.
fn no_such_element() -> JavaError {
    JavaError::bare("java.util.NoSuchElementException")
}
