//! Segment files: names, listing a partition directory, and walking the batches of a `.log` file
//! with pread while checking everything a batch must satisfy in this log.
//!
//! A batch is *good* when: at least 61 bytes remain, the header parses (length ≥ 49, magic 2),
//! the partition leader epoch is 0 (this log always writes 0; the CRC does not cover it, so this
//! is the only way to notice a flipped epoch), it holds at most `last_offset_delta + 1` records
//! (fewer once the cleaner has removed some; the CRC covers both fields), its base offset is the
//! one expected (offsets are dense; in a partition the cleaner has compacted, marked by its
//! `cleaner-checkpoint` file, a batch may start past it, but never before), its offsets fit
//! the segment's int32 relative range, the whole batch lies before the scan limit, and the
//! CRC-32C matches. The first batch that is not good ends the scan with `Step::Bad`; the
//! caller decides between "torn tail" and "corruption" with `find_valid_batch_after`.
//!
//! Large batches are CRC-checked in chunks, so a damaged length field never causes an allocation
//! larger than the scan chunk.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::error::{IoContext, LocalError, Result};
use crate::record::batch::be_i32;
use crate::record::{BATCH_OVERHEAD, BatchHeader, LOG_OVERHEAD, verify_crc};

pub(crate) const LOG_SUFFIX: &str = ".log";
pub(crate) const INDEX_SUFFIX: &str = ".index";
pub(crate) const TIMEINDEX_SUFFIX: &str = ".timeindex";
/// A segment's aborted-transaction index (see `partition::txn`).
pub(crate) const TXNINDEX_SUFFIX: &str = ".txnindex";
/// A partition's producer-state snapshot (see `partition::txn`).
pub(crate) const SNAPSHOT_SUFFIX: &str = ".snapshot";

/// A partition's cleaner checkpoint: the offset its next cleaning starts from (Kafka's
/// `cleaner-offset-checkpoint`, one per partition here). Its presence means the log may have
/// gaps: offsets that compaction removed.
pub(crate) const CLEANER_CHECKPOINT: &str = "cleaner-checkpoint";

/// Whether the partition in `dir` may have gaps in its offsets (see [`CLEANER_CHECKPOINT`]).
pub(crate) fn may_have_gaps(dir: &Path) -> bool {
    dir.join(CLEANER_CHECKPOINT).is_file()
}

/// How much a scan reads per pread.
pub(crate) const SCAN_CHUNK: usize = 1 << 20;

/// The largest base offset a segment may have, and so the largest log end offset: a segment's
/// offsets are its base plus an int32 relative offset (the indexes hold those), and every one
/// of them must fit in an i64. Found by fuzzing: a segment file named near `i64::MAX` made
/// base + relative offset overflow in the index checks.
pub(crate) const MAX_BASE_OFFSET: i64 = i64::MAX - i32::MAX as i64 - 1;

/// `<dir>/<20-digit base offset><suffix>`, Kafka's `LogFileUtils.filenamePrefixFromOffset`.
pub(crate) fn segment_path(dir: &Path, base: i64, suffix: &str) -> PathBuf {
    dir.join(format!("{base:020}{suffix}"))
}

/// Base offsets of the segments (`.log` files) in a partition directory, sorted.
///
/// Other files are ignored: index files are opened by name from their segment, and the directory
/// also holds `.lock`, `log-start-offset`, `partition.metadata` and temporary files. A `.log`
/// file whose name is not a 20-digit offset is an error, because ignoring it could hide data.
pub(crate) fn list_segments(dir: &Path) -> Result<Vec<i64>> {
    Ok(list_partition(dir)?.bases)
}

/// What one listing of a partition directory found.
#[derive(Debug)]
pub(crate) struct Listing {
    /// The segments' base offsets, ascending.
    pub bases: Vec<i64>,
    /// The newest producer-state snapshot's number (`<20 digits>.snapshot`), if any.
    pub producer_state: Option<i64>,
}

/// [`list_segments`], noting the newest producer-state snapshot from the same directory read.
pub(crate) fn list_partition(dir: &Path) -> Result<Listing> {
    let entries =
        std::fs::read_dir(dir).context(|| format!("cannot list partition {}", dir.display()))?;
    let mut bases = Vec::new();
    let mut producer_state = None;
    for entry in entries {
        let entry = entry.context(|| format!("cannot list partition {}", dir.display()))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(stem) = name.strip_suffix(LOG_SUFFIX) else {
            if let Some(n) = name.strip_suffix(SNAPSHOT_SUFFIX).and_then(offset_name) {
                producer_state = producer_state.max(Some(n));
            }
            continue;
        };
        let base = offset_name(stem).ok_or_else(|| {
            LocalError::Invalid(format!(
                "unexpected file {} in a partition directory: segment files are named by a \
                 20-digit base offset",
                dir.join(name).display()
            ))
        })?;
        if base > MAX_BASE_OFFSET {
            return Err(LocalError::Invalid(format!(
                "segment {} starts past offset {MAX_BASE_OFFSET}, the last a log can hold",
                dir.join(name).display()
            )));
        }
        bases.push(base);
    }
    bases.sort_unstable();
    Ok(Listing {
        bases,
        producer_state,
    })
}

/// The offset a 20-digit file name stem stands for.
pub(crate) fn offset_name(stem: &str) -> Option<i64> {
    (stem.len() == 20 && stem.bytes().all(|b| b.is_ascii_digit()))
        .then(|| stem.parse::<i64>().ok())
        .flatten()
}

/// fsyncs a directory so that file creations, renames and unlinks in it are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .context(|| format!("cannot fsync directory {}", dir.display()))
}

/// Creates an empty segment (`.log`, `.index`, `.timeindex`). The `.log` is created with
/// O_EXCL: a segment is never silently reused. The caller fsyncs the directory.
pub(crate) fn create_segment_files(dir: &Path, base: i64) -> Result<()> {
    let log = segment_path(dir, base, LOG_SUFFIX);
    File::create_new(&log).context(|| format!("cannot create segment {}", log.display()))?;
    for suffix in [INDEX_SUFFIX, TIMEINDEX_SUFFIX] {
        let path = segment_path(dir, base, suffix);
        File::create(&path).context(|| format!("cannot create index {}", path.display()))?;
    }
    Ok(())
}

/// Removes a segment's files, indexes first: a crash in between leaves a `.log` that is still
/// listed (and removed by the next retention pass), never an index with no log.
pub(crate) fn remove_segment_files(dir: &Path, base: i64) -> Result<()> {
    for suffix in [INDEX_SUFFIX, TIMEINDEX_SUFFIX, TXNINDEX_SUFFIX, LOG_SUFFIX] {
        let path = segment_path(dir, base, suffix);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(LocalError::io(
                    format!("cannot delete {}", path.display()),
                    e,
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Checks the header fields the CRC does not protect or that tie the batch to its place in the
/// log. Returns why the batch is not acceptable, if it is not.
pub(crate) fn check_header(
    h: &BatchHeader,
    seg_base: i64,
    expected: Option<i64>,
    gaps: bool,
) -> Option<String> {
    if h.partition_leader_epoch != 0 {
        return Some(format!(
            "partition leader epoch {} (this log always writes 0)",
            h.partition_leader_epoch
        ));
    }
    if h.last_offset_delta < 0
        || h.records_count < 0
        || h.records_count as i64 > h.last_offset_delta as i64 + 1
    {
        return Some(format!(
            "{} records with last offset delta {}",
            h.records_count, h.last_offset_delta
        ));
    }
    if let Some(expected) = expected
        && (h.base_offset < expected || (!gaps && h.base_offset != expected))
    {
        return Some(format!(
            "base offset {} where {expected} was expected",
            h.base_offset
        ));
    }
    // Checked before any `last_offset()` so that a wild base offset cannot overflow.
    if h.base_offset < seg_base
        || h.base_offset - seg_base + h.last_offset_delta as i64 > i32::MAX as i64
    {
        return Some(format!(
            "base offset {} does not belong to the segment starting at {seg_base}",
            h.base_offset
        ));
    }
    None
}

/// CRC-32C of `file[start..end)`, read in chunks.
fn crc_of_range(file: &File, start: u64, end: u64, buf: &mut Vec<u8>) -> io::Result<u32> {
    let mut crc = 0;
    let mut at = start;
    while at < end {
        let n = ((end - at) as usize).min(SCAN_CHUNK);
        buf.resize(n.max(buf.len()), 0);
        file.read_exact_at(&mut buf[..n], at)?;
        crc = crc32c::crc32c_append(crc, &buf[..n]);
        at += n as u64;
    }
    Ok(crc)
}

/// A batch found by [`Scanner::next`].
pub(crate) struct ScannedBatch<'a> {
    pub position: u64,
    pub header: BatchHeader,
    /// The whole batch when it fits in the scan buffer; otherwise re-read it with pread (its
    /// CRC has already been checked in chunks).
    pub bytes: Option<&'a [u8]>,
}

/// One step of a scan.
pub(crate) enum Step<'a> {
    Batch(ScannedBatch<'a>),
    /// The scan limit was reached exactly at a batch boundary.
    End,
    /// The bytes at `position` are not a good batch.
    Bad {
        position: u64,
        reason: String,
    },
}

/// Walks the batches of one segment from `pos` up to `end` with chunked preads.
pub(crate) struct Scanner<'f> {
    file: &'f File,
    path: &'f Path,
    seg_base: i64,
    pos: u64,
    end: u64,
    expected: Option<i64>,
    /// Whether the partition may have gaps (see [`may_have_gaps`]), looked up the first time a
    /// batch starts past the offset expected: a dense log never pays for the lookup.
    gaps: Option<bool>,
    buf: Vec<u8>,
    buf_start: u64,
    buf_len: usize,
    chunk: usize,
}

impl<'f> Scanner<'f> {
    /// `expected` is the base offset the first batch must have, when known (always known at
    /// position 0: the segment's base offset).
    pub fn new(
        file: &'f File,
        path: &'f Path,
        seg_base: i64,
        start: u64,
        end: u64,
        chunk: usize,
    ) -> Self {
        Scanner {
            file,
            path,
            seg_base,
            pos: start,
            end,
            expected: (start == 0).then_some(seg_base),
            gaps: None,
            buf: Vec::new(),
            buf_start: 0,
            buf_len: 0,
            chunk: chunk.max(BATCH_OVERHEAD),
        }
    }

    /// Reuses `buf` as the read buffer (avoids a fresh allocation per scan on hot paths).
    pub fn with_buffer(mut self, buf: Vec<u8>) -> Self {
        self.buf = buf;
        self
    }

    /// Gives the read buffer back for reuse.
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// End of the last good batch returned (or the start).
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The offset after the last good batch returned, if any was.
    pub fn next_offset(&self) -> Option<i64> {
        self.expected
    }

    /// Makes `buf` cover `[at, at + len)`; `at + len <= end` is the caller's job.
    fn fill(&mut self, at: u64, len: usize) -> Result<()> {
        if at >= self.buf_start && at + len as u64 <= self.buf_start + self.buf_len as u64 {
            return Ok(());
        }
        let n = (self.chunk.max(len) as u64).min(self.end - at) as usize;
        if self.buf.len() < n {
            self.buf.resize(n, 0);
        }
        let path = self.path;
        self.file
            .read_exact_at(&mut self.buf[..n], at)
            .context(|| format!("cannot read {} at byte {at}", path.display()))?;
        self.buf_start = at;
        self.buf_len = n;
        Ok(())
    }

    fn slice(&self, at: u64, len: usize) -> &[u8] {
        let s = (at - self.buf_start) as usize;
        &self.buf[s..s + len]
    }

    /// The total size of the batch at the scan position, from its header alone (no CRC
    /// check); `None` at the end or where [`Scanner::next`] would find no good header. Lets a
    /// reader with a byte budget stop before reading and checking a batch it would not take.
    pub fn peek_size(&mut self) -> Result<Option<u64>> {
        if self.end.saturating_sub(self.pos) < BATCH_OVERHEAD as u64 {
            return Ok(None);
        }
        let (at, len) = (self.pos, BATCH_OVERHEAD);
        let buffered =
            at >= self.buf_start && at + len as u64 <= self.buf_start + self.buf_len as u64;
        let mut header = [0u8; BATCH_OVERHEAD];
        if buffered {
            header.copy_from_slice(self.slice(at, len));
        } else {
            // Only the header: the batch itself may never be read.
            let path = self.path;
            self.file
                .read_exact_at(&mut header, at)
                .context(|| format!("cannot read {} at byte {at}", path.display()))?;
        }
        Ok(BatchHeader::parse(&header)
            .ok()
            .map(|h| h.total_size() as u64))
    }

    pub fn next(&mut self) -> Result<Step<'_>> {
        let pos = self.pos;
        let remaining = self.end.saturating_sub(pos);
        let bad = |reason: String| {
            Ok(Step::Bad {
                position: pos,
                reason,
            })
        };
        if remaining == 0 {
            return Ok(Step::End);
        }
        if remaining < BATCH_OVERHEAD as u64 {
            return bad(format!(
                "{remaining} bytes at the end are too few for a batch header"
            ));
        }
        self.fill(pos, BATCH_OVERHEAD)?;
        let header = match BatchHeader::parse(self.slice(pos, BATCH_OVERHEAD)) {
            Ok(h) => h,
            Err(e) => return bad(e.to_string()),
        };
        let mut verdict = check_header(&header, self.seg_base, self.expected, false);
        if verdict.is_some() && self.expected.is_some_and(|e| header.base_offset > e) {
            let path = self.path;
            let gaps = *self
                .gaps
                .get_or_insert_with(|| path.parent().is_some_and(may_have_gaps));
            if gaps {
                verdict = check_header(&header, self.seg_base, self.expected, true);
            }
        }
        if let Some(reason) = verdict {
            return bad(reason);
        }
        let total = header.total_size() as u64;
        if total > remaining {
            return bad(format!(
                "batch of {total} bytes runs past the end of the data ({remaining} bytes left)"
            ));
        }
        let fits = total as usize <= self.chunk;
        if fits {
            self.fill(pos, total as usize)?;
            if let Err(e) = verify_crc(self.slice(pos, total as usize)) {
                return bad(e.to_string());
            }
        } else {
            let mut scratch = std::mem::take(&mut self.buf);
            let crc = crc_of_range(self.file, pos + 21, pos + total, &mut scratch)
                .context(|| format!("cannot read {} at byte {pos}", self.path.display()))?;
            self.buf = scratch;
            self.buf_len = 0; // contents replaced by the chunked read
            if crc != header.crc {
                return bad(format!(
                    "record batch CRC mismatch: stored {:#010x}, computed {crc:#010x}",
                    header.crc
                ));
            }
        }
        self.pos = pos + total;
        self.expected = Some(header.base_offset + header.last_offset_delta as i64 + 1);
        let bytes = fits.then(|| self.slice(pos, total as usize));
        Ok(Step::Batch(ScannedBatch {
            position: pos,
            header,
            bytes,
        }))
    }
}

/// Looks for a good batch starting anywhere in `file[from..end)` whose base offset is at least
/// `min_base`. If one exists, the bad bytes before it are damage in the middle of the log (fail
/// stop); if none does, they are a torn tail (safe to cut). Cheap filters (magic, length, offsets,
/// epoch) reject almost every position before a CRC is computed, so zero pages and garbage scan
/// at memory speed.
pub(crate) fn find_valid_batch_after(
    file: &File,
    path: &Path,
    seg_base: i64,
    from: u64,
    end: u64,
    min_base: i64,
) -> Result<Option<u64>> {
    const WINDOW: usize = 1 << 20;
    let read_err = |at: u64| move || format!("cannot read {} at byte {at}", path.display());
    let mut buf = Vec::new();
    let mut scratch = Vec::new();
    let mut q0 = from;
    while q0 + BATCH_OVERHEAD as u64 <= end {
        let n = ((end - q0) as usize).min(WINDOW + BATCH_OVERHEAD);
        buf.resize(n, 0);
        file.read_exact_at(&mut buf[..n], q0)
            .context(read_err(q0))?;
        // Positions i with a whole header in this window; the next window starts after them.
        let starts = (n - BATCH_OVERHEAD + 1).min(WINDOW);
        for i in 0..starts {
            let b = &buf[i..n];
            if b[16] != 2 {
                continue;
            }
            let q = q0 + i as u64;
            let length = be_i32(b, 8);
            if length < (BATCH_OVERHEAD - LOG_OVERHEAD) as i32 {
                continue;
            }
            let total = LOG_OVERHEAD as u64 + length as u64;
            if total > end - q {
                continue;
            }
            let Ok(header) = BatchHeader::parse(b) else {
                continue;
            };
            if header.base_offset < min_base
                || check_header(&header, seg_base, None, false).is_some()
            {
                continue;
            }
            let ok = if i as u64 + total <= n as u64 {
                verify_crc(&b[..total as usize]).is_ok()
            } else {
                crc_of_range(file, q + 21, q + total, &mut scratch).context(read_err(q))?
                    == header.crc
            };
            if ok {
                return Ok(Some(q));
            }
        }
        q0 += starts as u64;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_past_the_last_base_offset_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for base in [0, MAX_BASE_OFFSET] {
            File::create(segment_path(dir.path(), base, LOG_SUFFIX)).unwrap();
        }
        assert_eq!(list_segments(dir.path()).unwrap(), [0, MAX_BASE_OFFSET]);
        // Its offsets could not all be named: base + relative offset overflows an i64.
        File::create(segment_path(dir.path(), MAX_BASE_OFFSET + 1, LOG_SUFFIX)).unwrap();
        let err = list_segments(dir.path()).unwrap_err().to_string();
        assert!(err.contains("the last a log can hold"), "{err}");
    }
}
