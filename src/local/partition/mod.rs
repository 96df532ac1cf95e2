//! One partition's log: a directory of Kafka-format segments shared by many processes.
//!
//! # Files in a partition directory
//!
//! - `<20-digit base>.log` / `.index` / `.timeindex`: segments (see [`super::segment`] and
//!   [`super::index`]). The last segment is the *active* one; only it is appended to.
//! - `.lock`: permanent `flock` file. Writers (append, retention) hold it exclusively for the
//!   whole check-tail, write, fdatasync sequence; readers hold it shared only while taking a
//!   [`Snapshot`], then read without it.
//! - `log-start-offset`: `0\n<offset>\n`, the first offset still held after retention, written
//!   as tmp, fsync, rename, directory fsync. Missing means "the first segment's base offset".
//! - `partition.metadata` (the topic code's), `*.tmp` and anything else: ignored. A `.log` file
//!   with a malformed name is an error (see [`super::segment::list_segments`]).
//!
//! # Guarantees
//!
//! - `append` returns `Ok` only after every byte it wrote is fdatasync'ed; on any error the
//!   segment is cut back to its old end, so no partial batch is ever left behind by a live
//!   process. A process killed mid-append leaves a torn tail, which the next writer cuts off.
//! - Bad bytes followed by a good batch are damage in the middle of the log: every operation that
//!   meets them fails with [`LocalError::Corrupt`] naming file and byte position, and nothing is
//!   written or truncated.
//! - Readers never write or delete (apart from an fdatasync of the active segment, which makes
//!   bytes left by a writer killed between write and fdatasync durable before they are served).
//!
//! # Cost of an append
//!
//! The writer verifies the tail from the last offset-index entry onward (about
//! `index.interval.bytes` plus one batch), so damage further back is found by readers (which
//! verify every CRC they return) rather than by every append.

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::error::{IoContext, LocalError, Result};
use super::index::{
    IndexTracker, OFFSET_ENTRY_SIZE, OffsetEntry, TIME_ENTRY_SIZE, TimeEntry, lookup_offset,
    lookup_time_before, read_offset_entry, read_time_entry,
};
use super::lock::{FileLock, LockMode};
use super::segment::{
    INDEX_SUFFIX, LOG_SUFFIX, SCAN_CHUNK, Scanner, Step, TIMEINDEX_SUFFIX, check_header,
    create_segment_files, find_valid_batch_after, list_segments, remove_segment_files,
    segment_path, sync_dir,
};
use crate::record::{
    BATCH_OVERHEAD, BatchHeader, for_each_record, set_base_offset, set_partition_leader_epoch,
    verify_crc,
};

/// The partition's permanent lock file.
pub const LOCK_FILE: &str = ".lock";
/// The log start offset checkpoint.
pub const LOG_START_FILE: &str = "log-start-offset";

/// Settings that come from the topic's configs (Kafka's names, Kafka's defaults).
#[derive(Clone, Debug)]
pub struct PartitionConfig {
    /// `segment.bytes`: roll when the active segment would grow past this.
    pub segment_bytes: u64,
    /// `segment.ms`: roll when the incoming batch's max timestamp is this much past the segment's
    /// first batch timestamp (wall clock since creation when batches carry no timestamp).
    pub segment_ms: i64,
    /// `retention.ms`: delete a segment whose max timestamp is older than this; -1 = never.
    pub retention_ms: i64,
    /// `retention.bytes`: delete old segments while the log is larger than this; -1 = never.
    pub retention_bytes: i64,
    /// `index.interval.bytes`: bytes between offset-index entries.
    pub index_interval_bytes: u64,
    /// `segment.index.bytes`: bounds the entries per index; roll when an index is full.
    pub segment_index_bytes: u64,
}

impl Default for PartitionConfig {
    fn default() -> Self {
        PartitionConfig {
            segment_bytes: 1_073_741_824,
            segment_ms: 604_800_000,
            retention_ms: 604_800_000,
            retention_bytes: -1,
            index_interval_bytes: 4096,
            segment_index_bytes: 10_485_760,
        }
    }
}

impl PartitionConfig {
    fn validate(&self) -> Result<()> {
        // Index positions are int32 in Kafka's format, so a segment may not outgrow that.
        if self.segment_bytes > i32::MAX as u64 {
            return Err(LocalError::Invalid(format!(
                "segment.bytes {} is larger than the maximum {}",
                self.segment_bytes,
                i32::MAX
            )));
        }
        Ok(())
    }
}

/// What an append did.
#[derive(Debug)]
pub struct AppendResult {
    /// Offset given to the first record appended.
    pub base_offset: i64,
    /// Log end offset after the append (the offset the next record will get).
    pub next_offset: i64,
    /// The append succeeded and is durable, but retention could not be applied afterwards
    /// (callers should warn, not fail, since the records were stored).
    pub retention_error: Option<LocalError>,
}

/// One segment as seen by a [`Snapshot`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    pub base_offset: i64,
    /// Bytes of complete, CRC-valid batches readers may read (a torn tail is excluded).
    pub size: u64,
}

/// The readable extent of a partition at one moment. Everything below `log_end_offset` was
/// written and fdatasync'ed by a writer that has released the lock, so it never changes; only
/// retention may later remove whole segments.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub log_start_offset: i64,
    pub log_end_offset: i64,
    segments: Vec<SegmentInfo>,
}

impl Snapshot {
    /// Segments holding offsets `log_start_offset..log_end_offset`, oldest first.
    pub fn segments(&self) -> &[SegmentInfo] {
        &self.segments
    }

    /// Sum of the segments' readable sizes.
    pub fn size_bytes(&self) -> u64 {
        self.segments.iter().map(|s| s.size).sum()
    }
}

/// A partition directory. Holds no file or lock between calls, so it is cheap and may be opened
/// by many threads and processes at once (each call takes the `.lock` itself).
#[derive(Debug)]
pub struct PartitionLog {
    dir: PathBuf,
    /// The reader's scan buffer, kept between reads so tailing does not allocate per fetch.
    scratch: std::sync::Mutex<Vec<u8>>,
}

impl Clone for PartitionLog {
    fn clone(&self) -> Self {
        PartitionLog {
            dir: self.dir.clone(),
            scratch: Default::default(),
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn system_time_ms(t: io::Result<SystemTime>) -> Option<i64> {
    let d = t.ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some(d.as_millis() as i64)
}

fn open_rw(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .context(|| format!("cannot open {}", path.display()))
}

/// Opens a file that may legitimately be missing (an index).
fn open_optional(path: &Path, write: bool) -> Result<Option<File>> {
    match OpenOptions::new().read(true).write(write).open(path) {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(LocalError::io(format!("cannot open {}", path.display()), e)),
    }
}

fn file_len(file: &File, path: &Path) -> Result<u64> {
    Ok(file
        .metadata()
        .context(|| format!("cannot stat {}", path.display()))?
        .len())
}

fn corrupt(path: &Path, position: u64, reason: String) -> LocalError {
    LocalError::Corrupt {
        path: path.to_path_buf(),
        position,
        reason,
    }
}

/// Whether an offset-index entry names the start of a plausible batch whose last offset is the
/// entry's offset, below `limit`. The CRC is checked later by the scan that starts there. Any
/// I/O error means "no": the index is only a hint and the scan will meet the error itself.
fn entry_points_at_batch(log: &File, base: i64, limit: u64, e: OffsetEntry) -> bool {
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
            check_header(&h, base, None).is_none()
                && h.last_offset() == base + e.relative_offset as i64
                && pos + h.total_size() as u64 <= limit
        }
        Err(_) => false,
    }
}

/// The last offset-index entry of a segment if it can be trusted as a scan start, for readers.
fn reader_last_entry(dir: &Path, base: i64, log: &File, limit: u64) -> Option<OffsetEntry> {
    let index = open_optional(&segment_path(dir, base, INDEX_SUFFIX), false).ok()??;
    let entries = index.metadata().ok()?.len() / OFFSET_ENTRY_SIZE;
    let e = read_offset_entry(&index, entries.checked_sub(1)?).ok()?;
    entry_points_at_batch(log, base, limit, e).then_some(e)
}

/// Where to start scanning for `offset` in a segment: the offset index's greatest entry at or
/// below it, if it checks out; else the segment start.
fn reader_position_for(dir: &Path, base: i64, log: &File, limit: u64, offset: i64) -> u64 {
    let hint = || -> Option<u64> {
        let index = open_optional(&segment_path(dir, base, INDEX_SUFFIX), false).ok()??;
        let entries = index.metadata().ok()?.len() / OFFSET_ENTRY_SIZE;
        let e = lookup_offset(&index, entries, offset - base).ok()??;
        entry_points_at_batch(log, base, limit, e).then_some(e.position as u64)
    };
    hint().unwrap_or(0)
}

/// Whether a time-index entry (T, O) agrees with the log: the batch holding offset O must have
/// max timestamp T (O is the offset of the batch that set the max). This rejects zero-filled,
/// garbage and stale entries before a lookup or retention trusts them. Found through the offset
/// index, so it usually costs one short scan.
fn time_entry_checks_out(
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

/// Reads the `log-start-offset` checkpoint.
fn read_log_start(dir: &Path) -> Result<Option<i64>> {
    let path = dir.join(LOG_START_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LocalError::io(format!("cannot read {}", path.display()), e)),
    };
    let mut lines = text.lines();
    match (lines.next(), lines.next().map(str::parse::<i64>)) {
        (Some("0"), Some(Ok(offset))) if offset >= 0 => Ok(Some(offset)),
        _ => Err(LocalError::Invalid(format!(
            "{} is malformed (expected \"0\\n<offset>\\n\")",
            path.display()
        ))),
    }
}

/// Writes the checkpoint atomically and durably: a crash leaves the old or the new value.
fn write_log_start(dir: &Path, offset: i64) -> Result<()> {
    let path = dir.join(LOG_START_FILE);
    let tmp = dir.join(format!("{LOG_START_FILE}.tmp"));
    let write = || -> io::Result<()> {
        let f = File::create(&tmp)?;
        f.write_all_at(format!("0\n{offset}\n").as_bytes(), 0)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    write().context(|| format!("cannot write {}", path.display()))?;
    sync_dir(dir)
}

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

/// The writer's view of a segment it may append to: open files, the valid end, and the state
/// the index rules need.
struct Active {
    base: i64,
    log_path: PathBuf,
    log: File,
    index: File,
    timeindex: File,
    /// Bytes on disk in each index (pending entries excluded).
    index_len: u64,
    timeindex_len: u64,
    /// End of the last good batch: where the next write goes.
    size: u64,
    next_offset: i64,
    /// Max timestamp of the segment's first batch (Kafka's `rollingBasedTimestamp`).
    rolling_ts: Option<i64>,
    created_ms: Option<i64>,
    tracker: IndexTracker,
}

/// How a bad batch found by a writer is handled.
fn cut_torn_tail(
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
    // Nothing good follows: the tail of an interrupted append. Cut it and make the cut durable
    // before anything is written after it.
    log.set_len(bad_at)
        .and_then(|()| log.sync_data())
        .context(|| format!("cannot truncate the torn tail of {}", path.display()))
}

impl Active {
    /// Recovers a segment for writing: finds and verifies its tail from the last index entry,
    /// cuts a torn tail, and rebuilds indexes that cannot be trusted.
    fn recover(dir: &Path, base: i64, cfg: &PartitionConfig) -> Result<Active> {
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
            cut_torn_tail(log, log_path, base, position, reason, len, next)?;
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
    fn rebuild(
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
            cut_torn_tail(&log, &log_path, base, position, reason, len, next)?;
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

    fn assemble(
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

    /// Creates a new, empty segment; the caller fsyncs the directory.
    fn create(dir: &Path, base: i64, cfg: &PartitionConfig) -> Result<Active> {
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
    fn should_roll(&self, h: &BatchHeader, cfg: &PartitionConfig, now: i64) -> bool {
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
    fn write(&mut self, data: &[u8], at: u64) -> Result<()> {
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

    fn sync_log(&self) -> Result<()> {
        self.log
            .sync_data()
            .context(|| format!("cannot fdatasync {}", self.log_path.display()))
    }

    /// Closes the segment before a roll: its data is already synced; add the final time entry
    /// (so the last entry holds the segment's max timestamp) and make both indexes durable, since
    /// retention and timestamp lookups trust a closed segment's last time entry.
    fn close(&mut self) -> Result<()> {
        self.tracker.maybe_time_entry();
        self.flush_index_entries()?;
        self.index
            .sync_data()
            .and_then(|()| self.timeindex.sync_data())
            .context(|| format!("cannot fsync the indexes of {}", self.log_path.display()))
    }
}

/// The state to restore if an append fails part way.
struct Undo {
    base: i64,
    size: u64,
    index_len: u64,
    timeindex_len: u64,
}

impl PartitionLog {
    /// Creates a partition directory `dir` with its permanent `.lock` file and an empty first
    /// segment `00000000000000000000.log` (+ empty `.index` / `.timeindex`), fsyncing `dir`.
    /// Nothing depends on the directory's name, so topic creation may build it under a temporary
    /// name and rename it (fsyncing the parent is the caller's job). Fails if `dir` already holds
    /// segments.
    pub fn create(dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).context(|| format!("cannot create {}", dir.display()))?;
        if !list_segments(dir)?.is_empty() {
            return Err(LocalError::Invalid(format!(
                "{} already holds a partition log",
                dir.display()
            )));
        }
        let lock = dir.join(LOCK_FILE);
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock)
            .context(|| format!("cannot create {}", lock.display()))?;
        create_segment_files(dir, 0)?;
        sync_dir(dir)
    }

    /// Opens an existing partition directory. Cheap: it only checks that `.lock` exists.
    pub fn open(dir: &Path) -> Result<PartitionLog> {
        let lock = dir.join(LOCK_FILE);
        match std::fs::metadata(&lock) {
            Ok(m) if m.is_file() => Ok(PartitionLog {
                dir: dir.to_path_buf(),
                scratch: Default::default(),
            }),
            Ok(_) => Err(LocalError::Invalid(format!(
                "{} is not a partition directory ({LOCK_FILE} is not a file)",
                dir.display()
            ))),
            Err(e) if e.kind() == ErrorKind::NotFound => Err(LocalError::Invalid(format!(
                "{} is not a partition directory (it has no {LOCK_FILE} file)",
                dir.display()
            ))),
            Err(e) => Err(LocalError::io(format!("cannot open {}", dir.display()), e)),
        }
    }

    /// The partition directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn lock(&self, mode: LockMode) -> Result<FileLock> {
        FileLock::acquire(&self.dir.join(LOCK_FILE), mode)
    }

    fn segment_bases(&self) -> Result<Vec<i64>> {
        let bases = list_segments(&self.dir)?;
        if bases.is_empty() {
            return Err(LocalError::Invalid(format!(
                "partition {} has no segment files (it was damaged or deleted)",
                self.dir.display()
            )));
        }
        Ok(bases)
    }

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
        let spans = split_input(batches)?;
        let _lock = self.lock(LockMode::Exclusive)?;
        let bases = self.segment_bases()?;
        let mut active = Active::recover(&self.dir, bases[bases.len() - 1], config)?;
        let first = active.next_offset;

        let mut next = first;
        for &(start, len) in &spans {
            let batch = &mut batches[start..start + len];
            set_base_offset(batch, next);
            set_partition_leader_epoch(batch, 0);
            let count = BatchHeader::parse(batch)
                .map(|h| h.records_count as i64)
                .unwrap_or(1);
            next = next.checked_add(count).ok_or_else(|| {
                LocalError::Invalid("offsets would overflow a 64-bit integer".into())
            })?;
        }

        let undo = Undo {
            base: active.base,
            size: active.size,
            index_len: active.index_len,
            timeindex_len: active.timeindex_len,
        };
        let mut created = Vec::new();
        if let Err(e) = self.write_batches(&mut active, batches, &spans, config, &mut created) {
            drop(active);
            return Err(match self.undo(&undo, &created) {
                Ok(()) => e,
                Err(undo_err) => LocalError::Invalid(format!(
                    "{e}; undoing the partial append also failed ({undo_err}); the next append \
                     will verify the tail again"
                )),
            });
        }
        let retention_error = self.retention_locked(config, &mut active).err();
        Ok(AppendResult {
            base_offset: first,
            next_offset: active.next_offset,
            retention_error,
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

    /// Applies `retention.ms` and `retention.bytes` now, under the exclusive lock (recovering the
    /// tail first, as any writer does).
    pub fn apply_retention(&self, config: &PartitionConfig) -> Result<()> {
        config.validate()?;
        let _lock = self.lock(LockMode::Exclusive)?;
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

    /// Kafka's `deleteOldSegments`: the longest prefix of segments that breach retention by
    /// size or by time (or that lie wholly below the log start offset after an interrupted
    /// deletion) is deleted. The active segment is deleted only when it breaches too and is not
    /// empty; a new empty segment at the log end is rolled first, so a segment always remains.
    fn retention_locked(&self, config: &PartitionConfig, active: &mut Active) -> Result<()> {
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
        if count == 0 {
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

    /// Total bytes of all segment files.
    pub fn size_bytes(&self) -> Result<u64> {
        let mut total = 0;
        for base in self.segment_bases()? {
            let path = segment_path(&self.dir, base, LOG_SUFFIX);
            match std::fs::metadata(&path) {
                Ok(m) => total += m.len(),
                // Deleted by retention since the listing.
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(LocalError::io(format!("cannot stat {}", path.display()), e)),
            }
        }
        Ok(total)
    }

    /// Records the readable extent under a brief shared lock: the log start offset, the log end
    /// (after the last complete, CRC-valid batch of the active segment) and each segment's valid
    /// size. A torn tail is excluded, not repaired. Damage followed by valid data in the active
    /// segment's tail is [`LocalError::Corrupt`].
    pub fn snapshot(&self) -> Result<Snapshot> {
        let lock = self.lock(LockMode::Shared)?;
        let bases = self.segment_bases()?;
        let checkpoint = read_log_start(&self.dir)?;
        let n = bases.len();
        let mut segments = Vec::with_capacity(n);
        for &base in &bases[..n - 1] {
            let path = segment_path(&self.dir, base, LOG_SUFFIX);
            let size = std::fs::metadata(&path)
                .context(|| format!("cannot stat {}", path.display()))?
                .len();
            segments.push(SegmentInfo {
                base_offset: base,
                size,
            });
        }
        let (size, log_end, active) = self.reader_tail(bases[n - 1])?;
        drop(lock);
        // Bytes a writer wrote but did not fdatasync before it was killed may be about to be
        // served; make them durable first so a reader never sees data that can vanish. Done
        // after unlocking (writers never cut below a valid end) to keep the shared lock short.
        active.sync_data().context(|| {
            format!(
                "cannot fdatasync {}",
                segment_path(&self.dir, bases[n - 1], LOG_SUFFIX).display()
            )
        })?;
        segments.push(SegmentInfo {
            base_offset: bases[n - 1],
            size,
        });
        let log_start = checkpoint.unwrap_or(bases[0]).max(bases[0]).min(log_end);
        // Skip segments left wholly below the start by an interrupted retention pass.
        let first_kept = (0..n - 1)
            .find(|&i| bases[i + 1] > log_start)
            .unwrap_or(n - 1);
        segments.drain(..first_kept);
        Ok(Snapshot {
            log_start_offset: log_start,
            log_end_offset: log_end,
            segments,
        })
    }

    /// The active segment's valid size and next offset, as a reader (no repair).
    fn reader_tail(&self, base: i64) -> Result<(u64, i64, File)> {
        let path = segment_path(&self.dir, base, LOG_SUFFIX);
        let log = File::open(&path).context(|| format!("cannot open {}", path.display()))?;
        let len = file_len(&log, &path)?;
        let hint = reader_last_entry(&self.dir, base, &log, len).map(|e| e.position as u64);
        for start in hint.into_iter().chain([0]) {
            let mut scanner = Scanner::new(&log, &path, base, start, len, SCAN_CHUNK);
            let bad = loop {
                match scanner.next()? {
                    Step::Batch(_) => {}
                    Step::End => break None,
                    Step::Bad { position, reason } => break Some((position, reason)),
                }
            };
            let next = match scanner.next_offset() {
                Some(next) => next,
                // The indexed batch itself is bad: scan from the start instead.
                None if start > 0 => continue,
                None => base,
            };
            if let Some((position, reason)) = bad
                && let Some(good) =
                    find_valid_batch_after(&log, &path, base, position + 1, len, next)?
            {
                return Err(corrupt(
                    &path,
                    position,
                    format!("{reason}; a valid batch follows at byte {good}"),
                ));
            }
            return Ok((scanner.position(), next, log));
        }
        Ok((0, base, log)) // not reached: the scan from position 0 always returns above
    }

    fn out_of_range_now(&self, offset: i64) -> LocalError {
        match self.snapshot() {
            Ok(s) => LocalError::OffsetOutOfRange {
                offset,
                log_start: s.log_start_offset,
                log_end: s.log_end_offset,
            },
            Err(e) => e,
        }
    }

    /// Reads whole batches starting with the batch that contains `offset`, up to `max_bytes`
    /// (at least one whole batch when there is one), never past the snapshot's end, continuing
    /// into later segments while there is room. Returns an empty buffer at the log end.
    ///
    /// The first batch may start before `offset` (as in Kafka's Fetch); callers skip records
    /// below it. Every batch's CRC, framing and offset continuity is checked; a bad batch inside
    /// the snapshot is [`LocalError::Corrupt`]. An offset below the snapshot's log start or past
    /// its end, or in a segment deleted by retention since the snapshot, is
    /// [`LocalError::OffsetOutOfRange`] (with the current start and end, freshly snapshotted in
    /// the retention case): take a new snapshot and reset, like Kafka's `auto.offset.reset`.
    pub fn read(&self, snapshot: &Snapshot, offset: i64, max_bytes: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.read_into(snapshot, offset, max_bytes, &mut out)?;
        Ok(out)
    }

    /// [`PartitionLog::read`] into `out` (cleared first), reusing its allocation.
    pub fn read_into(
        &self,
        snapshot: &Snapshot,
        offset: i64,
        max_bytes: usize,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        out.clear();
        if offset < snapshot.log_start_offset || offset > snapshot.log_end_offset {
            return Err(LocalError::OffsetOutOfRange {
                offset,
                log_start: snapshot.log_start_offset,
                log_end: snapshot.log_end_offset,
            });
        }
        if offset == snapshot.log_end_offset {
            return Ok(());
        }
        let mut scratch = match self.scratch.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let segs = &snapshot.segments;
        let first = segs
            .partition_point(|s| s.base_offset <= offset)
            .saturating_sub(1);
        let chunk = max_bytes.clamp(64 * 1024, SCAN_CHUNK);
        for (k, seg) in segs[first..].iter().enumerate() {
            let path = segment_path(&self.dir, seg.base_offset, LOG_SUFFIX);
            let log = match File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    return Err(self.out_of_range_now(offset));
                }
                Err(e) => return Err(LocalError::io(format!("cannot open {}", path.display()), e)),
            };
            let start = if k == 0 {
                reader_position_for(&self.dir, seg.base_offset, &log, seg.size, offset)
            } else {
                0
            };
            let mut scanner = Scanner::new(&log, &path, seg.base_offset, start, seg.size, chunk)
                .with_buffer(std::mem::take(&mut *scratch));
            let full = loop {
                match scanner.next()? {
                    Step::End => break false,
                    Step::Bad { position, reason } => return Err(corrupt(&path, position, reason)),
                    Step::Batch(b) => {
                        if b.header.last_offset() < offset {
                            continue;
                        }
                        let total = b.header.total_size();
                        if !out.is_empty() && out.len() + total > max_bytes {
                            break true;
                        }
                        match b.bytes {
                            Some(bytes) => out.extend_from_slice(bytes),
                            None => {
                                let at = out.len();
                                out.resize(at + total, 0);
                                log.read_exact_at(&mut out[at..], b.position)
                                    .context(|| format!("cannot read {}", path.display()))?;
                            }
                        }
                        if out.len() >= max_bytes {
                            break true;
                        }
                    }
                }
            };
            *scratch = scanner.into_buffer();
            if full {
                return Ok(());
            }
        }
        Ok(())
    }

    /// The first offset whose record timestamp is `>= ts` (Kafka's ListOffsets by timestamp),
    /// or `None` if no record in the snapshot has one. Closed segments whose last time-index
    /// entry (their max timestamp) is below `ts` are skipped; otherwise the search starts at the
    /// time index's greatest entry below `ts` (validated through the offset index) and scans.
    /// Segments deleted by retention since the snapshot are skipped.
    pub fn offset_for_timestamp(&self, snapshot: &Snapshot, ts: i64) -> Result<Option<i64>> {
        let segs = &snapshot.segments;
        let mut scratch = Vec::new();
        let mut batch_buf = Vec::new();
        for (i, seg) in segs.iter().enumerate() {
            let base = seg.base_offset;
            let next_base = segs.get(i + 1).map(|s| s.base_offset);
            let path = segment_path(&self.dir, base, LOG_SUFFIX);
            let log = match File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => return Err(LocalError::io(format!("cannot open {}", path.display()), e)),
            };
            let time_hint = || -> Option<(Option<TimeEntry>, Option<TimeEntry>)> {
                let f = open_optional(&segment_path(&self.dir, base, TIMEINDEX_SUFFIX), false)
                    .ok()??;
                let len = f.metadata().ok()?.len();
                if len % TIME_ENTRY_SIZE != 0 {
                    return None;
                }
                let entries = len / TIME_ENTRY_SIZE;
                let last = entries
                    .checked_sub(1)
                    .and_then(|i| read_time_entry(&f, i).ok());
                let before = lookup_time_before(&f, entries, ts).ok()?;
                Some((last, before))
            };
            let (last, before) = time_hint().unwrap_or((None, None));
            let in_segment = |e: &TimeEntry| {
                e.relative_offset >= 0
                    && next_base.is_none_or(|nb| base + (e.relative_offset as i64) < nb)
                    && time_entry_checks_out(&self.dir, base, &log, &path, seg.size, *e)
            };
            // A closed segment's last time entry is its max timestamp (written at close).
            if let (Some(_), Some(last)) = (next_base, last)
                && in_segment(&last)
                && last.timestamp < ts
            {
                continue;
            }
            let start = match before.filter(in_segment) {
                Some(e) => reader_position_for(
                    &self.dir,
                    base,
                    &log,
                    seg.size,
                    base + e.relative_offset as i64,
                ),
                None => 0,
            };
            let mut scanner = Scanner::new(&log, &path, base, start, seg.size, SCAN_CHUNK);
            loop {
                let (position, header, bytes) = match scanner.next()? {
                    Step::End => break,
                    Step::Bad { position, reason } => return Err(corrupt(&path, position, reason)),
                    Step::Batch(b) => (b.position, b.header, b.bytes),
                };
                if header.max_timestamp < ts || header.last_offset() < snapshot.log_start_offset {
                    continue;
                }
                let bytes = match bytes {
                    Some(b) => b,
                    None => {
                        batch_buf.resize(header.total_size(), 0);
                        log.read_exact_at(&mut batch_buf, position)
                            .context(|| format!("cannot read {}", path.display()))?;
                        &batch_buf[..]
                    }
                };
                let mut found = None;
                for_each_record(bytes, &mut scratch, |r| {
                    if found.is_none() && r.timestamp >= ts && r.offset >= snapshot.log_start_offset
                    {
                        found = Some(r.offset);
                    }
                    Ok(())
                })
                .map_err(|e| corrupt(&path, position, e.to_string()))?;
                if found.is_some() {
                    return Ok(found);
                }
            }
        }
        Ok(None)
    }
}

/// Splits the input into whole batches and checks each before anything is written: a batch
/// stored with a bad CRC would later look like damage in the middle of the log.
fn split_input(buf: &[u8]) -> Result<Vec<(usize, usize)>> {
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
        verify_crc(&rest[..total]).map_err(|e| bad(e.to_string()))?;
        spans.push((pos, total));
        pos += total;
    }
    Ok(spans)
}
