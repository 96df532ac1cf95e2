//! One cleaning round over one partition (Kafka's `Cleaner.clean`): choose the dirty range,
//! map each key's last offset over it, recopy the log from its start up to the range's end
//! keeping what the map says, and swap the new segments in.
//!
//! - The dirty range runs from the cleaner checkpoint (or the log start) up to the active
//!   segment, or to the first segment younger than `min.compaction.lag.ms`; the active segment
//!   is never cleaned. A round runs when the dirty part is more than `min.cleanable.dirty.ratio`
//!   of the cleanable log, or when a dirty segment is older than `max.compaction.lag.ms`.
//! - The map holds as many keys as `log.cleaner.dedupe.buffer.size` allows; when it fills, the
//!   round cleans up to there and the next round goes on.
//! - Consecutive segments are merged while their sizes add up to at most `segment.bytes`; each
//!   group is written as one `.cleaned` segment named after its first segment, with its indexes.
//! - The round reads and writes without the partition lock (producers and readers go on), and
//!   takes it only for the swap (see `crate::local::partition::swap`), after checking that
//!   the segments it read are unchanged. One cleaner works on a partition at a time (its
//!   `.cleaner-lock`); another finds it busy and leaves it.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::offset_map::OffsetMap;
use super::retain::{RetainCounts, Retained, RoundRules, retain_batch};
use crate::local::error::{IoContext, LocalError, Result};
use crate::local::index::IndexTracker;
use crate::local::lock::{FileLock, LockMode};
use crate::local::partition::swap::{self, Replacement, cleaned_path, remove_cleaned};
use crate::local::partition::txn::AbortedRanges;
use crate::local::partition::{CLEANER_LOCK, PartitionConfig, PartitionLog, SegmentInfo, Snapshot};
use crate::local::segment::{
    INDEX_SUFFIX, LOG_SUFFIX, SCAN_CHUNK, Scanner, Step, TIMEINDEX_SUFFIX, segment_path,
};
use crate::record::{BATCH_OVERHEAD, BatchHeader, for_each_record_crc};

/// Kafka's `producer.id.expiration.ms`: a producer's last batch is kept while it wrote within
/// this long (its last sequence then survives cleaning).
const PRODUCER_EXPIRATION_MS: i64 = 86_400_000;

/// A compacted topic's settings, from its configs (Kafka's names and defaults).
#[derive(Clone, Debug)]
pub struct CompactionConfig {
    /// `min.cleanable.dirty.ratio` (0.5).
    pub min_cleanable_dirty_ratio: f64,
    /// `min.compaction.lag.ms` (0).
    pub min_compaction_lag_ms: i64,
    /// `max.compaction.lag.ms` (`i64::MAX`).
    pub max_compaction_lag_ms: i64,
    /// `delete.retention.ms` (one day).
    pub delete_retention_ms: i64,
    /// The partition's segment settings: `segment.bytes` bounds merged segments, and the
    /// index settings shape the new indexes.
    pub partition: PartitionConfig,
}

/// The cleaner's own settings (Kafka's `log.cleaner.*`).
#[derive(Clone, Debug)]
pub struct CleanerConfig {
    /// `log.cleaner.dedupe.buffer.size` (128 MiB): the key map's memory.
    pub dedupe_buffer_size: u64,
    /// `log.cleaner.io.buffer.load.factor` (0.9).
    pub load_factor: f64,
    /// `log.cleaner.io.max.bytes.per.second`: bytes read and written per second at most.
    pub max_bytes_per_second: f64,
    /// A round not done by then gives up and leaves the log as it was (a producer cleans
    /// after its appends only for so long).
    pub deadline: Option<Instant>,
    /// Set, a round gives up as at its deadline (the server stopping).
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// A log whose cleaning would recopy more bytes than this is left for another cleaner (a
    /// producer's exit, whose deadline such a round would never meet).
    pub max_log_bytes: Option<u64>,
}

impl Default for CleanerConfig {
    fn default() -> Self {
        CleanerConfig {
            dedupe_buffer_size: 128 << 20,
            load_factor: 0.9,
            max_bytes_per_second: f64::MAX,
            deadline: None,
            cancel: None,
            max_log_bytes: None,
        }
    }
}

/// How a round ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Not dirty enough, or nothing outside the active segment.
    NothingToClean,
    /// Another cleaner holds the partition.
    Busy,
    /// The log changed under the round (retention, DeleteRecords, a repair): nothing swapped.
    Changed,
    /// The deadline passed: nothing swapped.
    OutOfTime,
    /// The log is larger than [`CleanerConfig::max_log_bytes`]: not even started.
    TooLarge,
    /// The cleaned segments are in place.
    Cleaned(Report),
}

/// What a round did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// The offset the next round starts from.
    pub end_offset: i64,
    pub segments_before: usize,
    pub segments_after: usize,
    pub bytes_before: u64,
    pub bytes_after: u64,
    pub records: RetainCounts,
}

/// Reading and writing at most so many bytes a second.
struct Throttle {
    rate: f64,
    started: Instant,
    bytes: u64,
}

impl Throttle {
    fn new(rate: f64) -> Throttle {
        Throttle {
            rate,
            started: Instant::now(),
            bytes: 0,
        }
    }

    /// Counts `bytes`; how long to wait before going on, if the round is ahead of its rate.
    fn account(&mut self, bytes: usize) -> Option<Duration> {
        self.bytes += bytes as u64;
        // Zero, negative or Kafka's default (Double.MAX_VALUE): no limit.
        if !(self.rate > 0.0 && self.rate < f64::MAX / 2.0) {
            return None;
        }
        let due = Duration::try_from_secs_f64(self.bytes as f64 / self.rate).ok()?;
        due.checked_sub(self.started.elapsed())
    }
}

/// The longest single sleep of a throttled round: the deadline and a stopping server are
/// looked at in between.
const PACE_SLICE: Duration = Duration::from_millis(50);

/// The round's work, once it knows it will run.
struct Round<'a> {
    log: &'a PartitionLog,
    topic: &'a CompactionConfig,
    cleaner: &'a CleanerConfig,
    now_ms: i64,
    throttle: Throttle,
    scratch: Vec<u8>,
    batch: Vec<u8>,
}

/// Cleans `log` once if it is dirty enough (see the module docs). `now_ms` is the round's
/// time: tombstones whose horizon is at or before it go, new ones get it plus
/// `delete.retention.ms`.
pub fn clean(
    log: &PartitionLog,
    topic: &CompactionConfig,
    cleaner: &CleanerConfig,
    now_ms: i64,
) -> Result<Outcome> {
    let Some(_cleaner_lock) =
        FileLock::try_acquire(&log.dir().join(CLEANER_LOCK), LockMode::Exclusive)?
    else {
        return Ok(Outcome::Busy);
    };
    // The snapshot's lock settles a swap a crash interrupted, which may need its cleaned
    // files; what is left after is from a cleaner that gave up or died while writing.
    let snapshot = log.snapshot()?;
    remove_cleaned(log.dir())?;
    let mut round = Round {
        log,
        topic,
        cleaner,
        now_ms,
        throttle: Throttle::new(cleaner.max_bytes_per_second),
        scratch: Vec::new(),
        batch: Vec::new(),
    };
    let outcome = round.run(&snapshot);
    // A swap that failed half-way is settled by the next lock, which needs what it left.
    if !matches!(outcome, Ok(Outcome::Cleaned(_))) && !swap::interrupted(log.dir()) {
        let removed = remove_cleaned(log.dir());
        // The round's own failure is the one to report; a leftover goes with the next round.
        if outcome.is_ok() {
            removed?;
        }
    }
    outcome
}

impl Round<'_> {
    fn run(&mut self, snapshot: &Snapshot) -> Result<Outcome> {
        let segs = snapshot.segments();
        let Some((first_dirty, uncleanable)) = self.dirty_range(snapshot)? else {
            return Ok(Outcome::NothingToClean);
        };
        let recopied: u64 = segs
            .iter()
            .filter(|s| s.base_offset < uncleanable)
            .map(|s| s.size)
            .sum();
        if self.cleaner.max_log_bytes.is_some_and(|max| recopied > max) {
            return Ok(Outcome::TooLarge);
        }
        // Open every segment once: the round reads the files it checks at the swap.
        let mut files = Vec::with_capacity(segs.len());
        for seg in segs {
            match self.log.open_segment(seg)? {
                Some(file) => files.push(file),
                None => return Ok(Outcome::Changed),
            }
        }
        // Aborted transactions' records neither count as their keys' last nor stay.
        let aborted = self.log.aborted_ranges(snapshot)?;
        let mut map =
            OffsetMap::with_memory(self.cleaner.dedupe_buffer_size, self.cleaner.load_factor);
        let Some(producers) =
            self.map_keys(segs, &files, (first_dirty, uncleanable), &aborted, &mut map)?
        else {
            return Ok(Outcome::OutOfTime);
        };
        let end_offset = if map.latest_offset() + 1 < uncleanable {
            map.latest_offset() + 1
        } else {
            uncleanable
        };
        if end_offset <= first_dirty {
            return Ok(Outcome::NothingToClean);
        }
        let producers_last: HashSet<i64> = producers
            .values()
            .filter(|(_, ts)| *ts > self.now_ms.saturating_sub(PRODUCER_EXPIRATION_MS))
            .map(|(last, _)| *last)
            .collect();
        let rules = RoundRules {
            map: &map,
            now_ms: self.now_ms,
            delete_retention_ms: self.topic.delete_retention_ms,
            end_offset,
            producers_last: &producers_last,
            aborted: &aborted,
        };
        // The segments the round rewrites: every one holding an offset below its end.
        let count = segs.iter().filter(|s| s.base_offset < end_offset).count();
        let mut report = Report {
            end_offset,
            segments_before: count,
            bytes_before: segs[..count].iter().map(|s| s.size).sum(),
            ..Report::default()
        };
        let mut new = Vec::new();
        for group in self.groups(&segs[..count], segs.get(count)) {
            let Some((bytes, counts)) =
                self.write_group(&segs[group.clone()], &files[group.clone()], &rules)?
            else {
                return Ok(Outcome::OutOfTime);
            };
            new.push(segs[group.start].base_offset);
            report.bytes_after += bytes;
            report.records += counts;
        }
        report.segments_after = new.len();
        let replacement = Replacement {
            old: segs[..count].to_vec(),
            end: segs[count].base_offset,
            new,
            first_dirty,
        };
        if !self.log.replace_segments(&replacement)? {
            return Ok(Outcome::Changed);
        }
        self.log.set_cleaner_checkpoint(end_offset)?;
        Ok(Outcome::Cleaned(report))
    }

    /// Counts `bytes` read or written against the rate, waiting as the rate asks; `false`
    /// once the deadline passed or the round is cancelled.
    fn pace(&mut self, bytes: usize) -> bool {
        if let Some(mut wait) = self.throttle.account(bytes) {
            while !wait.is_zero() {
                if self.out_of_time() {
                    return false;
                }
                let slice = wait.min(PACE_SLICE);
                std::thread::sleep(slice);
                wait -= slice;
            }
        }
        !self.out_of_time()
    }

    fn out_of_time(&self) -> bool {
        self.cleaner.deadline.is_some_and(|d| Instant::now() >= d)
            || self
                .cleaner
                .cancel
                .as_ref()
                .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// The first dirty offset and the first one this round may not clean (a segment base),
    /// when the log is dirty enough to clean now.
    fn dirty_range(&self, snapshot: &Snapshot) -> Result<Option<(i64, i64)>> {
        let segs = snapshot.segments();
        let n = segs.len();
        if n < 2 {
            return Ok(None);
        }
        let (start, end) = (snapshot.log_start_offset, snapshot.log_end_offset);
        let first_dirty = match self.log.cleaner_checkpoint()? {
            Some(c) if c >= start && c <= end => c,
            _ => start,
        };
        // The segment holding the first dirty offset, and the dirty closed segments after it.
        let dirty = segs
            .partition_point(|s| s.base_offset <= first_dirty)
            .saturating_sub(1);
        let mut uncleanable = segs[n - 1].base_offset;
        // Nothing at or past the last stable offset: an open transaction is not decided yet.
        if snapshot.last_stable_offset < snapshot.log_end_offset {
            let holding = segs
                .partition_point(|s| s.base_offset <= snapshot.last_stable_offset)
                .saturating_sub(1);
            uncleanable = uncleanable.min(segs[holding].base_offset);
        }
        if self.topic.min_compaction_lag_ms > 0 {
            let newest_allowed = self.now_ms.saturating_sub(self.topic.min_compaction_lag_ms);
            for seg in &segs[dirty..n - 1] {
                // From the batch headers: reading the time index could mean rebuilding it,
                // and a round writes nothing but its own files before the swap.
                let Some(file) = self.log.open_segment(seg)? else {
                    return Ok(None);
                };
                let path = segment_path(self.log.dir(), seg.base_offset, LOG_SUFFIX);
                let mut max = None;
                walk_headers(&file, &path, seg.size, |h| {
                    max = max.max(Some(h.max_timestamp));
                    true
                })?;
                if max.is_some_and(|ts| ts > newest_allowed) {
                    uncleanable = seg.base_offset;
                    break;
                }
            }
        }
        if first_dirty >= uncleanable {
            return Ok(None);
        }
        let clean_bytes: u64 = segs[..dirty].iter().map(|s| s.size).sum();
        let cleanable: Vec<&SegmentInfo> = segs[dirty..]
            .iter()
            .take_while(|s| s.base_offset < uncleanable)
            .collect();
        let cleanable_bytes: u64 = cleanable.iter().map(|s| s.size).sum();
        if clean_bytes + cleanable_bytes == 0 {
            return Ok(None);
        }
        let ratio = cleanable_bytes as f64 / (clean_bytes + cleanable_bytes) as f64;
        let overdue = cleanable_bytes > 0 && self.overdue(&cleanable)?;
        Ok((overdue || ratio > self.topic.min_cleanable_dirty_ratio)
            .then_some((first_dirty, uncleanable)))
    }

    /// Whether a dirty segment's first batch is older than `max.compaction.lag.ms`.
    fn overdue(&self, dirty: &[&SegmentInfo]) -> Result<bool> {
        if self.topic.max_compaction_lag_ms == i64::MAX {
            return Ok(false);
        }
        let oldest_allowed = self.now_ms.saturating_sub(self.topic.max_compaction_lag_ms);
        for seg in dirty {
            let Some(file) = self.log.open_segment(seg)? else {
                continue;
            };
            let mut header = [0; BATCH_OVERHEAD];
            if seg.size < BATCH_OVERHEAD as u64 || file.read_exact_at(&mut header, 0).is_err() {
                continue;
            }
            let first = BatchHeader::read(&header).max_timestamp;
            if first > 0 && first < oldest_allowed {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Each producer's last batch (its last offset and max timestamp) over the whole snapshot,
    /// from the batch headers alone outside the dirty part, and each key's last offset from
    /// `first_dirty` until `uncleanable` or until the map is full. `None` when the deadline
    /// passed.
    fn map_keys(
        &mut self,
        segs: &[SegmentInfo],
        files: &[File],
        (first_dirty, uncleanable): (i64, i64),
        aborted: &AbortedRanges,
        map: &mut OffsetMap,
    ) -> Result<Option<HashMap<i64, (i64, i64)>>> {
        let mut producers = HashMap::new();
        let mut note = |h: &BatchHeader| {
            if h.producer_id >= 0 {
                producers.insert(h.producer_id, (h.last_offset(), h.max_timestamp));
            }
        };
        let mut full = false;
        for (i, (seg, file)) in segs.iter().zip(files).enumerate() {
            let in_dirty = !full
                && seg.base_offset < uncleanable
                && segs
                    .get(i + 1)
                    .is_none_or(|next| next.base_offset > first_dirty);
            let path = segment_path(self.log.dir(), seg.base_offset, LOG_SUFFIX);
            if !in_dirty {
                if !walk_headers(file, &path, seg.size, |h| {
                    note(h);
                    self.pace(BATCH_OVERHEAD)
                })? {
                    return Ok(None);
                }
                continue;
            }
            let mut scanner = Scanner::new(file, &path, seg.base_offset, 0, seg.size, SCAN_CHUNK);
            loop {
                let (header, position, bytes) = match scanner.next()? {
                    Step::End => break,
                    Step::Bad { position, reason } => return Err(damaged(&path, position, reason)),
                    Step::Batch(b) => (b.header, b.position, b.bytes),
                };
                note(&header);
                if !self.pace(header.total_size()) {
                    return Ok(None);
                }
                if full
                    || header.is_control()
                    || header.last_offset() < first_dirty
                    || (header.is_transactional()
                        && aborted.contains(header.producer_id, header.base_offset))
                {
                    continue;
                }
                let bytes = whole_batch(bytes, file, &path, position, &header, &mut self.batch)?;
                for_each_record_crc(bytes, &mut self.scratch, false, |r| {
                    if full || r.offset < first_dirty {
                        return Ok(());
                    }
                    if let Some(key) = r.key
                        && !map.put(key, r.offset)
                    {
                        full = true;
                    }
                    Ok(())
                })
                .map_err(|e| damaged(&path, position, e.to_string()))?;
            }
            if !full {
                // Records without a key up to the segment's end are covered too.
                if let Some(next) = segs.get(i + 1) {
                    map.cover_up_to(next.base_offset.min(uncleanable) - 1);
                }
            }
        }
        Ok(Some(producers))
    }

    /// Groups of consecutive segments (index ranges into `segs`) each written as one: their
    /// sizes add up to at most `segment.bytes`, and their offsets fit one segment's int32
    /// relative offsets. `after` is the first segment not rewritten.
    fn groups(
        &self,
        segs: &[SegmentInfo],
        after: Option<&SegmentInfo>,
    ) -> Vec<std::ops::Range<usize>> {
        let limit = self.topic.partition.segment_bytes;
        let next_base = |i: usize| {
            segs.get(i + 1)
                .or(after)
                .map_or(i64::MAX, |s| s.base_offset)
        };
        let mut groups = Vec::new();
        let mut start = 0;
        while start < segs.len() {
            let mut end = start + 1;
            let mut size = segs[start].size;
            while end < segs.len()
                && size + segs[end].size <= limit
                && next_base(end) - 1 - segs[start].base_offset <= i32::MAX as i64
            {
                size += segs[end].size;
                end += 1;
            }
            groups.push(start..end);
            start = end;
        }
        groups
    }

    /// Writes one group as a `.cleaned` segment named after its first segment, with its
    /// indexes, all fsynced; its `.log`'s mtime is the group's last segment's. Returns its
    /// size and what it kept, or `None` when the deadline passed.
    fn write_group(
        &mut self,
        segs: &[SegmentInfo],
        files: &[File],
        rules: &RoundRules<'_>,
    ) -> Result<Option<(u64, RetainCounts)>> {
        let dir = self.log.dir();
        let base = segs[0].base_offset;
        let out_path = cleaned_path(dir, base, LOG_SUFFIX);
        let out_file =
            File::create(&out_path).context(|| format!("cannot create {}", out_path.display()))?;
        let mut out = BufWriter::with_capacity(1 << 20, &out_file);
        let mut tracker = IndexTracker::new(base, self.topic.partition.index_interval_bytes);
        let mut position = 0u64;
        let mut counts = RetainCounts::default();
        let write_error = |e| LocalError::io(format!("cannot write {}", out_path.display()), e);
        for (seg, file) in segs.iter().zip(files) {
            let path = segment_path(dir, seg.base_offset, LOG_SUFFIX);
            let mut scanner = Scanner::new(file, &path, seg.base_offset, 0, seg.size, SCAN_CHUNK);
            loop {
                let (header, at, bytes) = match scanner.next()? {
                    Step::End => break,
                    Step::Bad { position, reason } => return Err(damaged(&path, position, reason)),
                    Step::Batch(b) => (b.header, b.position, b.bytes),
                };
                if !self.pace(header.total_size()) {
                    return Ok(None);
                }
                let bytes = whole_batch(bytes, file, &path, at, &header, &mut self.batch)?;
                let (retained, kept) = retain_batch(bytes, rules, &mut self.scratch)
                    .map_err(|e| damaged(&path, at, e.to_string()))?;
                counts += kept;
                let (written, written_header) = match &retained {
                    Retained::Whole => (bytes, header),
                    Retained::Rewritten(b) | Retained::Empty(b) => (
                        &b[..],
                        BatchHeader::parse(b).map_err(|e| damaged(&path, at, e.to_string()))?,
                    ),
                    Retained::Dropped => continue,
                };
                tracker.on_batch(position, &written_header);
                out.write_all(written).map_err(write_error)?;
                let n = written.len();
                position += n as u64;
                if !self.pace(n) {
                    return Ok(None);
                }
            }
        }
        out.flush().map_err(write_error)?;
        drop(out);
        tracker.maybe_time_entry();
        for (suffix, entries) in [
            (INDEX_SUFFIX, &tracker.pending_offset),
            (TIMEINDEX_SUFFIX, &tracker.pending_time),
        ] {
            let path = cleaned_path(dir, base, suffix);
            let write = || -> std::io::Result<()> {
                let f = File::create(&path)?;
                f.write_all_at(entries, 0)?;
                f.sync_all()
            };
            write().context(|| format!("cannot write {}", path.display()))?;
        }
        out_file
            .sync_all()
            .context(|| format!("cannot fsync {}", out_path.display()))?;
        // As Kafka does: time-based retention of a segment without timestamps goes by it.
        if let Some(last) = files.last()
            && let Ok(modified) = last.metadata().and_then(|m| m.modified())
        {
            let _ = out_file.set_modified(modified);
        }
        Ok(Some((position, counts)))
    }
}

/// The batch a scan found, whole: from the scan's buffer, or read into `buf` when it did not
/// fit there (its CRC was checked in chunks).
fn whole_batch<'a>(
    scanned: Option<&'a [u8]>,
    file: &File,
    path: &Path,
    position: u64,
    header: &BatchHeader,
    buf: &'a mut Vec<u8>,
) -> Result<&'a [u8]> {
    if let Some(bytes) = scanned {
        return Ok(bytes);
    }
    buf.resize(header.total_size(), 0);
    file.read_exact_at(buf, position)
        .context(|| format!("cannot read {}", path.display()))?;
    Ok(&buf[..])
}

/// Calls `each` with every batch header of a segment's first `size` bytes, read in chunks of
/// [`SCAN_CHUNK`] (a batch's records are skipped, not read, unless they share its chunk): for
/// what the headers say (producers, timestamps), where the records themselves are not needed.
/// Stops at the first header that does not parse (the recopy checks every batch it keeps), or
/// when `each` says so; `false` then.
fn walk_headers(
    file: &File,
    path: &Path,
    size: u64,
    mut each: impl FnMut(&BatchHeader) -> bool,
) -> Result<bool> {
    let mut chunk = Vec::new();
    let mut chunk_start = 0u64;
    let mut position = 0u64;
    while position + BATCH_OVERHEAD as u64 <= size {
        // Positions only grow: the chunk starts at or before this one.
        if position + BATCH_OVERHEAD as u64 > chunk_start + chunk.len() as u64 {
            let len = (size - position).min(SCAN_CHUNK as u64) as usize;
            chunk.resize(len, 0);
            file.read_exact_at(&mut chunk, position)
                .context(|| format!("cannot read {}", path.display()))?;
            chunk_start = position;
        }
        let at = (position - chunk_start) as usize;
        let Ok(h) = BatchHeader::parse(&chunk[at..at + BATCH_OVERHEAD]) else {
            break;
        };
        if !each(&h) {
            return Ok(false);
        }
        position += h.total_size() as u64;
    }
    Ok(true)
}

fn damaged(path: &Path, position: u64, reason: String) -> LocalError {
    LocalError::Corrupt {
        path: path.to_path_buf(),
        position,
        reason: format!("{reason}; the cleaner leaves this partition as it is"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{BatchBuilder, Compression, decode_batch};

    fn now() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64
    }

    /// Tiny segments: each append rolls.
    fn appending() -> PartitionConfig {
        PartitionConfig {
            segment_bytes: 100,
            retention_ms: -1,
            index_interval_bytes: 1,
            ..PartitionConfig::default()
        }
    }

    /// Cleaned segments merge up to 1,000 bytes.
    fn topic() -> CompactionConfig {
        CompactionConfig {
            min_cleanable_dirty_ratio: 0.0,
            min_compaction_lag_ms: 0,
            max_compaction_lag_ms: i64::MAX,
            delete_retention_ms: 1_000,
            partition: PartitionConfig {
                segment_bytes: 1_000,
                ..appending()
            },
        }
    }

    /// Appends one batch of (key, value) records; `None` values are tombstones.
    fn append(log: &PartitionLog, records: &[(&str, Option<&str>)]) {
        let mut b = BatchBuilder::new(Compression::None);
        for (k, v) in records {
            b.append(now(), Some(k.as_bytes()), v.map(str::as_bytes), &[]);
        }
        let mut batch = b.build(0).unwrap();
        log.append(&mut batch, &appending()).unwrap();
    }

    /// Every record from the start: (offset, key, value).
    fn read_all(log: &PartitionLog) -> Vec<(i64, String, Option<String>)> {
        let snap = log.snapshot().unwrap();
        let mut out = Vec::new();
        let mut offset = snap.log_start_offset;
        while offset < snap.log_end_offset {
            let bytes = log.read(&snap, offset, 1 << 20).unwrap();
            assert!(!bytes.is_empty());
            let mut at = 0;
            while at < bytes.len() {
                let (h, records) = decode_batch(&bytes[at..]).unwrap();
                at += h.total_size();
                for r in records {
                    if r.offset >= offset {
                        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
                        out.push((r.offset, text(r.key.unwrap()), r.value.map(text)));
                    }
                }
                offset = h.next_offset();
            }
        }
        out
    }

    fn log() -> (tempfile::TempDir, PartitionLog) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t-0");
        PartitionLog::create(&path).unwrap();
        let log = PartitionLog::open(&path).unwrap();
        (dir, log)
    }

    /// One transactional batch of (key, value) records of producer `pid`.
    fn append_txn(log: &PartitionLog, pid: i64, records: &[(&str, &str)]) {
        let mut b = BatchBuilder::new(Compression::None);
        b.set_producer(pid, 0, 0);
        b.set_transactional(true);
        for (k, v) in records {
            b.append(now(), Some(k.as_bytes()), Some(v.as_bytes()), &[]);
        }
        let mut batch = b.build(0).unwrap();
        log.append(&mut batch, &appending()).unwrap();
    }

    fn append_marker(log: &PartitionLog, pid: i64, kind: i16) {
        let mut marker = crate::record::encode_marker(pid, 0, kind, 0, now());
        log.append(&mut marker, &appending()).unwrap();
    }

    /// A compacted log written by transactions: the cleaner drops the records of aborted
    /// transactions (which must not count as their keys' last), keeps the committed ones'
    /// last values and every marker, and cleans nothing at or past an open transaction.
    #[test]
    fn aborted_records_go_and_open_transactions_wait() {
        use crate::local::partition::txn::{ABORT, COMMIT};
        let (_dir, log) = log();
        append_txn(&log, 1, &[("a", "committed"), ("b", "committed")]);
        append_marker(&log, 1, COMMIT);
        append_txn(&log, 2, &[("a", "aborted"), ("c", "aborted")]);
        append_marker(&log, 2, ABORT);
        append(&log, &[("b", Some("plain"))]);
        append_txn(&log, 3, &[("b", "open")]);
        append(&log, &[("d", Some("after the open one"))]);
        let outcome = clean(&log, &topic(), &CleanerConfig::default(), now()).unwrap();
        let Outcome::Cleaned(report) = outcome else {
            panic!("{outcome:?}");
        };
        // Stops at the segment of the open transaction (offset 7).
        assert_eq!(report.end_offset, 7);
        let kept: Vec<(i64, String, Option<String>)> = read_all(&log)
            .into_iter()
            .filter(|(_, k, _)| k.len() == 1)
            .collect();
        let rec = |o: i64, k: &str, v: &str| (o, k.to_string(), Some(v.to_string()));
        assert_eq!(
            kept,
            vec![
                rec(0, "a", "committed"),
                rec(6, "b", "plain"),
                rec(7, "b", "open"),
                rec(8, "d", "after the open one"),
            ]
        );
        // The markers stay (their 4-byte keys are what the filter above left out).
        let snap = log.snapshot().unwrap();
        let mut bytes = Vec::new();
        log.read_into(&snap, 0, 1 << 20, &mut bytes).unwrap();
        let controls = crate::record::BatchIter::new(&bytes)
            .map(|b| BatchHeader::parse(b.unwrap()).unwrap())
            .filter(BatchHeader::is_control)
            .count();
        assert_eq!(controls, 2);
        assert_eq!(snap.last_stable_offset, 7);
    }

    #[test]
    fn a_round_keeps_each_keys_last_record_at_its_offset() {
        let (_dir, log) = log();
        for round in 0..4 {
            let v = format!("r{round}");
            append(&log, &[("a", Some(&v)), ("b", Some(&v)), ("c", Some(&v))]);
        }
        append(&log, &[("b", None)]);
        append(&log, &[("d", Some("last"))]);
        let before = log.snapshot().unwrap();
        assert!(before.segments().len() > 3, "{:?}", before.segments());

        let outcome = clean(&log, &topic(), &CleanerConfig::default(), now()).unwrap();
        let Outcome::Cleaned(report) = outcome else {
            panic!("{outcome:?}");
        };
        // The active segment (holding d) is not cleaned.
        assert_eq!(report.end_offset, 13);
        assert_eq!(log.cleaner_checkpoint().unwrap(), Some(13));
        assert!(report.segments_after < report.segments_before, "{report:?}");
        let r3 = |k: &str| (k.to_string(), Some("r3".to_string()));
        assert_eq!(
            read_all(&log),
            vec![
                (9, r3("a").0, r3("a").1),
                (11, r3("c").0, r3("c").1),
                (12, "b".into(), None),
                (13, "d".into(), Some("last".into())),
            ]
        );
        let after = log.snapshot().unwrap();
        assert_eq!(after.log_start_offset, 0);
        assert_eq!(after.log_end_offset, 14);

        // Nothing dirty is left outside the active segment.
        assert_eq!(
            clean(&log, &topic(), &CleanerConfig::default(), now()).unwrap(),
            Outcome::NothingToClean
        );
    }

    #[test]
    fn a_tombstone_goes_on_a_later_round_after_its_horizon() {
        let (_dir, log) = log();
        append(&log, &[("a", Some("1")), ("b", Some("1"))]);
        append(&log, &[("a", None)]);
        append(&log, &[("c", Some("1"))]);
        let t0 = now();
        clean(&log, &topic(), &CleanerConfig::default(), t0).unwrap();
        let keys = |log: &PartitionLog| -> Vec<String> {
            read_all(log).into_iter().map(|(_, k, _)| k).collect()
        };
        assert_eq!(keys(&log), ["b", "a", "c"]);
        // New dirty data, then a round past the horizon: the tombstone goes.
        append(&log, &[("c", Some("2"))]);
        append(&log, &[("e", Some("1"))]);
        clean(&log, &topic(), &CleanerConfig::default(), t0 + 2_000).unwrap();
        assert_eq!(keys(&log), ["b", "c", "e"]);
    }

    #[test]
    fn a_reader_with_an_old_snapshot_reads_the_cleaned_log() {
        let (_dir, log) = log();
        for i in 0..6 {
            append(&log, &[("k", Some(&i.to_string())), ("x", Some("x"))]);
        }
        append(&log, &[("z", Some("z"))]);
        let old = log.snapshot().unwrap();
        clean(&log, &topic(), &CleanerConfig::default(), now()).unwrap();
        // Offset 3 lay in a segment the cleaner merged away.
        let bytes = log.read(&old, 3, 1 << 20).unwrap();
        let (h, records) = decode_batch(&bytes).unwrap();
        assert!(h.last_offset() >= 3);
        assert_eq!(records.last().unwrap().offset, 11);
        assert_eq!(
            log.offset_for_timestamp(&old, 0).unwrap(),
            Some(10),
            "the first record left"
        );
    }

    /// A swap stopped after each of its file operations in turn, as kill -9 would stop it:
    /// the next lock rolls it back or forward, and the log holds either the records it had
    /// or the cleaned ones, never fewer, never twice.
    #[test]
    fn a_swap_stopped_anywhere_is_settled_by_the_next_lock() {
        use crate::local::partition::swap::tests::STEPS_LEFT;
        let mut outcomes = std::collections::BTreeSet::new();
        for steps in 0.. {
            let (_dir, log) = log();
            for i in 0..5 {
                append(
                    &log,
                    &[("k", Some(&i.to_string())), (&format!("u{i}"), Some("u"))],
                );
            }
            append(&log, &[("z", Some("z"))]);
            let before = read_all(&log);
            STEPS_LEFT.set(steps);
            let result = clean(&log, &topic(), &CleanerConfig::default(), now());
            STEPS_LEFT.set(usize::MAX);
            let after = read_all(&log);
            let cleaned: Vec<_> = before
                .iter()
                .filter(|(o, k, _)| k != "k" || *o == 8)
                .cloned()
                .collect();
            assert!(
                after == before || after == cleaned,
                "after {steps} steps: {after:?}"
            );
            let leftovers: Vec<String> = std::fs::read_dir(log.dir())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|n| n.ends_with(".cleaned") || n.ends_with(".swap") || n == "cleaner-swap")
                .collect();
            assert!(leftovers.is_empty(), "after {steps} steps: {leftovers:?}");
            outcomes.insert(after == cleaned);
            if result.is_ok() {
                assert_eq!(after, cleaned);
                break;
            }
            // The next round cleans it.
            clean(&log, &topic(), &CleanerConfig::default(), now()).unwrap();
            assert_eq!(
                read_all(&log),
                cleaned,
                "after {steps} steps and a new round"
            );
        }
        assert_eq!(outcomes.len(), 2, "both rolled back and rolled forward");
    }

    /// A group whose every record was superseded is written as an empty segment, which
    /// readers pass over.
    #[test]
    fn an_emptied_segment_is_read_past() {
        let (_dir, log) = log();
        append(&log, &[("a", Some("1")), ("b", Some("1"))]);
        append(&log, &[("a", Some("2")), ("b", Some("2"))]);
        append(&log, &[("c", Some("1"))]);
        let no_merging = CompactionConfig {
            partition: appending(),
            ..topic()
        };
        let outcome = clean(&log, &no_merging, &CleanerConfig::default(), now()).unwrap();
        assert!(matches!(outcome, Outcome::Cleaned(_)), "{outcome:?}");
        let snap = log.snapshot().unwrap();
        assert_eq!(snap.segments()[0].size, 0);
        assert_eq!(
            read_all(&log),
            vec![
                (2, "a".into(), Some("2".into())),
                (3, "b".into(), Some("2".into())),
                (4, "c".into(), Some("1".into())),
            ]
        );
    }

    /// A writer, the cleaner and a reader on one partition at once: the reader never fails,
    /// gets offsets in order, each with the record written there; once the writer stops, a
    /// last round leaves each key's last record.
    #[test]
    fn readers_see_a_consistent_log_while_it_is_cleaned() {
        use std::collections::BTreeMap;
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use std::sync::{Arc, Mutex};
        let (_dir, log) = log();
        let log = Arc::new(log);
        let written: Arc<Mutex<BTreeMap<i64, (String, String)>>> = Default::default();
        let done = Arc::new(AtomicBool::new(false));
        let rounds = Arc::new(AtomicUsize::new(0));
        let writer = {
            let (log, written, done) = (Arc::clone(&log), Arc::clone(&written), Arc::clone(&done));
            let rounds = Arc::clone(&rounds);
            std::thread::spawn(move || {
                // At least 400 records, and on until the cleaner has swapped five times.
                for i in 0.. {
                    if i >= 400
                        && (rounds.load(Ordering::Relaxed) >= 5 || i >= 20_000)
                        && i % 7 == 0
                    {
                        break;
                    }
                    let (key, value) = (format!("k{}", i % 7), format!("v{i}"));
                    let mut b = BatchBuilder::new(Compression::None);
                    b.append(now(), Some(key.as_bytes()), Some(value.as_bytes()), &[]);
                    let mut batch = b.build(0).unwrap();
                    // Recorded before the append: a reader may see it as soon as it is there.
                    let next = log.snapshot().unwrap().log_end_offset;
                    written.lock().unwrap().insert(next, (key, value));
                    log.append(&mut batch, &appending()).unwrap();
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                done.store(true, Ordering::Relaxed);
            })
        };
        let cleaner = {
            let (log, done, rounds) = (Arc::clone(&log), Arc::clone(&done), Arc::clone(&rounds));
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    if let Outcome::Cleaned(_) =
                        clean(&log, &topic(), &CleanerConfig::default(), now()).unwrap()
                    {
                        rounds.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        };
        let mut reads = 0;
        while !done.load(Ordering::Relaxed) {
            let snap = log.snapshot().unwrap();
            let mut offset = snap.log_start_offset;
            let mut last = -1;
            while offset < snap.log_end_offset {
                let bytes = log.read(&snap, offset, 4096).unwrap();
                let mut at = 0;
                while at < bytes.len() {
                    let (h, records) = decode_batch(&bytes[at..]).unwrap();
                    at += h.total_size();
                    for r in records.iter().filter(|r| r.offset >= offset) {
                        assert!(r.offset > last, "{} after {last}", r.offset);
                        last = r.offset;
                        let text =
                            |b: &Option<Vec<u8>>| String::from_utf8(b.clone().unwrap()).unwrap();
                        let (key, value) = written.lock().unwrap()[&r.offset].clone();
                        assert_eq!((text(&r.key), text(&r.value)), (key, value));
                    }
                    offset = offset.max(h.next_offset());
                }
                if bytes.is_empty() {
                    break;
                }
            }
            reads += 1;
            // Readers that never pause would starve the writers of the exclusive lock.
            std::thread::sleep(std::time::Duration::from_micros(500));
        }
        writer.join().unwrap();
        cleaner.join().unwrap();
        let rounds = rounds.load(Ordering::Relaxed);
        assert!(rounds >= 5 && reads > 3, "{rounds} rounds, {reads} reads");
        append(&log, &[("end", Some("roll"))]);
        clean(&log, &topic(), &CleanerConfig::default(), now()).unwrap();
        let keys: Vec<String> = read_all(&log).into_iter().map(|(_, k, _)| k).collect();
        // The writer stopped after a k6: the last seven records are k0 to k6.
        assert_eq!(keys, ["k0", "k1", "k2", "k3", "k4", "k5", "k6", "end"]);
    }

    /// Appends one batch of keyed records with timestamp `ts`.
    fn append_at(log: &PartitionLog, ts: i64, records: &[(&str, &str)]) {
        let mut b = BatchBuilder::new(Compression::None);
        for (k, v) in records {
            b.append(ts, Some(k.as_bytes()), Some(v.as_bytes()), &[]);
        }
        let mut batch = b.build(0).unwrap();
        log.append(&mut batch, &appending()).unwrap();
    }

    /// `min.compaction.lag.ms` keeps young segments out of a round; a log larger than a
    /// budgeted round takes on is left; `max.compaction.lag.ms` forces a round on a log not
    /// dirty enough by the ratio.
    #[test]
    fn the_compaction_lags_hold_back_and_force_rounds() {
        let (_dir, log) = log();
        let old = now() - 60_000;
        append_at(&log, old, &[("a", "1"), ("b", "1")]);
        append_at(&log, old, &[("a", "2"), ("b", "2")]);
        append_at(&log, now(), &[("c", "1")]);
        let cleaner = CleanerConfig::default();
        let young = CompactionConfig {
            min_compaction_lag_ms: 3_600_000,
            ..topic()
        };
        assert_eq!(
            clean(&log, &young, &cleaner, now()).unwrap(),
            Outcome::NothingToClean
        );
        let never_by_ratio = CompactionConfig {
            min_cleanable_dirty_ratio: 1.0,
            ..topic()
        };
        assert_eq!(
            clean(&log, &never_by_ratio, &cleaner, now()).unwrap(),
            Outcome::NothingToClean
        );
        let bounded = CleanerConfig {
            max_log_bytes: Some(10),
            ..CleanerConfig::default()
        };
        assert_eq!(
            clean(&log, &topic(), &bounded, now()).unwrap(),
            Outcome::TooLarge
        );
        let overdue = CompactionConfig {
            max_compaction_lag_ms: 30_000,
            ..never_by_ratio
        };
        assert!(matches!(
            clean(&log, &overdue, &cleaner, now()).unwrap(),
            Outcome::Cleaned(_)
        ));
        let keys: Vec<String> = read_all(&log).into_iter().map(|(_, k, _)| k).collect();
        assert_eq!(keys, ["a", "b", "c"]);
    }

    /// A key map smaller than the dirty part's keys: a round cleans as far as the map reached,
    /// and the next goes on from there.
    #[test]
    fn a_full_key_map_ends_the_round_early() {
        let (_dir, log) = log();
        for round in 0..3 {
            let v = round.to_string();
            append(&log, &[("a", Some(&v)), ("b", Some(&v)), ("c", Some(&v))]);
        }
        append(&log, &[("z", Some("z"))]);
        // Two keys' worth of memory at Kafka's 24 bytes a key.
        let small = CleanerConfig {
            dedupe_buffer_size: 48,
            load_factor: 1.0,
            ..CleanerConfig::default()
        };
        let Outcome::Cleaned(first) = clean(&log, &topic(), &small, now()).unwrap() else {
            panic!("no round");
        };
        assert!(first.end_offset < 9, "{first:?}");
        let mut rounds = 1;
        while let Outcome::Cleaned(_) = clean(&log, &topic(), &small, now()).unwrap() {
            rounds += 1;
            assert!(rounds < 20);
        }
        assert_eq!(log.cleaner_checkpoint().unwrap(), Some(9));
        let keys: Vec<String> = read_all(&log).into_iter().map(|(_, k, _)| k).collect();
        assert_eq!(keys, ["a", "b", "c", "z"]);
    }

    /// `log.cleaner.io.max.bytes.per.second` slows a round down to that rate.
    #[test]
    fn the_io_limit_slows_a_round() {
        let (_dir, log) = log();
        let value = "v".repeat(2_000);
        for _ in 0..10 {
            append(&log, &[("a", Some(&value))]);
        }
        append(&log, &[("z", Some("z"))]);
        let slow = CleanerConfig {
            max_bytes_per_second: 100_000.0,
            ..CleanerConfig::default()
        };
        let start = std::time::Instant::now();
        assert!(matches!(
            clean(&log, &topic(), &slow, now()).unwrap(),
            Outcome::Cleaned(_)
        ));
        // About 20 KB read twice and 2 KB written: well over 0.3 s at 100 KB/s.
        assert!(
            start.elapsed() >= Duration::from_millis(300),
            "{:?}",
            start.elapsed()
        );
    }

    /// Retention (`compact,delete`) leaves the segments alone while a cleaner works on them,
    /// and removes them at its next run.
    #[test]
    fn retention_waits_for_a_cleaner_at_work() {
        let (_dir, log) = log();
        for i in 0..4 {
            append(&log, &[("k", Some(&i.to_string()))]);
        }
        let deleting = PartitionConfig {
            retention_bytes: 0,
            ..appending()
        };
        let held = FileLock::try_acquire(&log.dir().join(CLEANER_LOCK), LockMode::Exclusive)
            .unwrap()
            .unwrap();
        log.apply_retention(&deleting).unwrap();
        assert_eq!(log.snapshot().unwrap().log_start_offset, 0);
        drop(held);
        log.apply_retention(&deleting).unwrap();
        assert_eq!(log.snapshot().unwrap().log_start_offset, 4);
    }

    /// The header walk crosses its read chunks: every batch of a file three chunks long.
    #[test]
    fn the_header_walk_sees_every_batch_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("walk.log");
        let mut bytes = Vec::new();
        let value = vec![b'v'; 10_007];
        for i in 0..300 {
            let mut b = BatchBuilder::new(Compression::None);
            b.set_producer(i, 0, 0);
            b.append(0, Some(b"k"), Some(&value), &[]);
            bytes.extend(b.build(i).unwrap());
        }
        assert!(bytes.len() > 2 * SCAN_CHUNK);
        std::fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        let mut seen = Vec::new();
        assert!(
            walk_headers(&file, &path, bytes.len() as u64, |h| {
                seen.push(h.producer_id);
                true
            })
            .unwrap()
        );
        assert_eq!(seen, (0..300).collect::<Vec<i64>>());
    }
}
