//! One partition's log: a directory of Kafka-format segments shared by many processes.
//!
//! # Files in a partition directory
//!
//! - `<20-digit base>.log` / `.index` / `.timeindex`: segments (see [`super::segment`] and
//!   [`super::index`]). The last segment is the *active* one; only it is appended to.
//! - `.lock`: permanent `flock` file. Writers (append, retention) hold it exclusively for the
//!   whole check-tail, write, fdatasync sequence; readers hold it shared only while taking a
//!   [`Snapshot`], then read without it.
//! - `log-start-offset`: `0\n<offset>\n`, the first offset still held after retention or
//!   DeleteRecords, written as tmp, fsync, rename, directory fsync. Missing means "the first
//!   segment's base offset". It may lie inside a segment (after DeleteRecords): readers skip
//!   the records below it.
//! - `cleaner-checkpoint`: `0\n<offset>\n`, where the next cleaning of a compacted topic starts.
//!   Its presence means the log may have gaps: offsets the cleaner removed, which readers skip
//!   (see [`super::segment`]).
//! - `.cleaner-lock`: held by the one cleaner working on the partition (see
//!   [`super::cleaner`]); `*.cleaned` and `*.swap`: its new segments before and during their
//!   swap; `cleaner-swap`: present while a swap is under way (see `swap`).
//! - `<20 digits>.snapshot` (the transactional producers) and `<base>.txnindex` (a segment's
//!   aborted transactions): see `txn`.
//! - `partition.metadata` (the topic code's), `*.tmp` and anything else: ignored. A `.log` file
//!   with a malformed name is an error (see `super::segment::list_segments`).
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
//!   bytes left by a writer killed between write and fdatasync durable before they are served,
//!   and the settling of a cleaner's swap that a crash interrupted, which any lock does first).
//! - The cleaner replaces segments by renames and unlinks, never by rewriting a file: a reader
//!   that opened a segment reads it whole, and one whose snapshot names a replaced file finds
//!   another inode there and takes a new snapshot.
//!
//! # Cost of an append
//!
//! The writer verifies the tail from the last offset-index entry onward (about
//! `index.interval.bytes` plus one batch), so damage further back is found by readers (which
//! verify every CRC they return) rather than by every append.
//!
//! # Modules
//!
//! This file holds the types and the opening of a partition; each job has its own submodule:
//!
//! - `append`: input checks, offset assignment, one write and fdatasync per segment touched,
//!   segment rolling, undo of a failed append.
//! - `active`: the writer's open active segment: creation, the roll rule, writes, closing.
//! - `recovery`: opening a segment for writing: tail check, torn-tail cut, index rebuild.
//! - `read`: snapshots, reads of whole batches, the offset for a timestamp.
//! - `max_timestamp`: the offset of the record with the greatest timestamp.
//! - `retention`: `retention.ms` and `retention.bytes`.
//! - `delete_records`: Kafka's DeleteRecords, moving the log start offset up.
//! - `repair`: the explicit cut back to before the first damage (`kafka-topics --repair`).
//! - `checkpoint`: the `log-start-offset`, `recovery-point` and `cleaner-checkpoint` files.
//! - `swap`: putting a cleaner's segments in place of old ones, crash-safely.
//! - `txn`: transactions: open ones and the last stable offset, aborted ones in `.txnindex`.
//! - `stamp`: a snapshot's view of the files, for telling cheaply that nothing changed.
//! - `hints`: index entries as scan starts, checked against the log before they are trusted.

mod active;
mod append;
pub use append::KeptTail;
pub use delete_records::HIGH_WATERMARK;
mod checkpoint;
mod delete_records;
mod hints;
mod max_timestamp;
mod read;
mod recovery;
mod repair;
mod retention;
mod stamp;
pub(crate) mod swap;
pub mod txn;

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::board::Slot;
use super::error::{IoContext, LocalError, Result};
use super::lock::{FileLock, LockMode};
use super::segment::{LOG_SUFFIX, Listing, list_partition, list_segments, segment_path, sync_dir};
use crate::kafka::now_ms;

/// The partition's permanent lock file.
pub const LOCK_FILE: &str = ".lock";
/// Kafka's file naming a partition's topic id, written when its topic is created.
pub const PARTITION_METADATA: &str = "partition.metadata";
/// The lock a cleaner holds on the partition for a whole round (see [`super::cleaner`]).
pub(crate) const CLEANER_LOCK: &str = ".cleaner-lock";
/// The log start offset checkpoint.
pub const LOG_START_FILE: &str = "log-start-offset";
/// The recovery-point checkpoint's file name (see `checkpoint`).
pub const RECOVERY_POINT_FILE: &str = "recovery-point";

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
    /// `message.timestamp.type=LogAppendTime`: each appended batch gets the append time as its
    /// timestamp (see [`crate::record::set_log_append_time`]).
    pub log_append_time: bool,
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
            log_append_time: false,
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
    /// The time the batches were stamped with, on a `LogAppendTime` topic (a produce answers
    /// it as `log_append_time_ms`).
    pub log_append_time: Option<i64>,
}

/// One segment as seen by a [`Snapshot`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    pub base_offset: i64,
    /// Bytes of complete, CRC-valid batches readers may read (a torn tail is excluded).
    pub size: u64,
    /// The file's inode when the snapshot was taken: the cleaner replaces segment files (by
    /// rename) and never rewrites one, so a reader that opens another inode under the same
    /// name knows its snapshot is stale.
    inode: u64,
}

/// The readable extent of a partition at one moment. Everything below `log_end_offset` was
/// written and fdatasync'ed by a writer that has released the lock, so it never changes; only
/// retention may later remove whole segments.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub log_start_offset: i64,
    pub log_end_offset: i64,
    /// Where `read_committed` readers stop: the first offset of the oldest transaction still
    /// open, or the log end when none is (Kafka's LSO).
    pub last_stable_offset: i64,
    /// The partition has producer state (it saw a transactional batch), so its segments may
    /// have `.txnindex` files.
    has_transactions: bool,
    segments: Vec<SegmentInfo>,
    /// The files as the snapshot saw them, for [`PartitionLog::unchanged_since`].
    stamp: Option<stamp::Stamp>,
    /// Damage in the active segment right at `log_end_offset` (not a torn tail: acknowledged
    /// data was damaged), raised by a read that reaches it.
    damage: Option<Damage>,
}

/// Where and how the active segment is damaged, kept by a [`Snapshot`] so that the records
/// before it stay readable and a read that reaches it fails naming the file and position.
#[derive(Clone, Debug)]
struct Damage {
    path: PathBuf,
    position: u64,
    reason: String,
}

impl Damage {
    fn error(&self) -> LocalError {
        corrupt(&self.path, self.position, self.reason.clone())
    }
}

impl Snapshot {
    /// Segments holding offsets `log_start_offset..log_end_offset`, oldest first.
    pub fn segments(&self) -> &[SegmentInfo] {
        &self.segments
    }

    /// The error a read at `log_end_offset` fails with when acknowledged data right after it
    /// was damaged ([`LocalError::Corrupt`], naming the file and position); `None` for a
    /// sound log, whose end is where reads wait for more.
    pub fn damage(&self) -> Option<LocalError> {
        self.damage.as_ref().map(Damage::error)
    }

    /// Whether the partition saw a transactional batch (it has producer state).
    pub fn has_transactions(&self) -> bool {
        self.has_transactions
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
    /// Where appends note the new log end for idle readers (set when opened through its
    /// [`LogDir`](super::LogDir)).
    board: Option<Slot>,
}

impl Clone for PartitionLog {
    fn clone(&self) -> Self {
        PartitionLog {
            dir: self.dir.clone(),
            scratch: Default::default(),
            board: self.board.clone(),
        }
    }
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
        Self::fill_new(dir)?;
        sync_dir(dir)
    }

    /// Creates a partition in `dir`, which must not exist yet, without making it durable: for
    /// creating many partitions at once, made durable together by the caller (one `syncfs`
    /// instead of one per partition), who also writes its `partition.metadata`, which marks
    /// it as a partition for [`PartitionLog::open`]. Only the first segment's `.log` is
    /// created: its indexes are written by the first append (a missing index is rebuilt from
    /// the log), and the `.lock` by the first lock taken, which makes creating 100,000
    /// partitions about half as fast again.
    pub fn create_unsynced(dir: &Path) -> Result<()> {
        std::fs::create_dir(dir).context(|| format!("cannot create {}", dir.display()))?;
        let log = segment_path(dir, 0, LOG_SUFFIX);
        File::create_new(&log)
            .map(drop)
            .context(|| format!("cannot create segment {}", log.display()))
    }

    /// The files of a new, empty partition: the permanent `.lock` and an empty first segment.
    fn fill_new(dir: &Path) -> Result<()> {
        let lock = dir.join(LOCK_FILE);
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock)
            .context(|| format!("cannot create {}", lock.display()))?;
        let log = segment_path(dir, 0, LOG_SUFFIX);
        File::create_new(&log)
            .map(drop)
            .context(|| format!("cannot create segment {}", log.display()))
    }

    /// Opens an existing partition directory. Cheap: it only checks that `partition.metadata`
    /// (written when a topic is created) or `.lock` (made by the first lock, and at creation
    /// before) exists.
    pub fn open(dir: &Path) -> Result<PartitionLog> {
        let mut last = None;
        for marker in [PARTITION_METADATA, LOCK_FILE] {
            match std::fs::metadata(dir.join(marker)) {
                Ok(m) if m.is_file() => {
                    return Ok(PartitionLog {
                        dir: dir.to_path_buf(),
                        scratch: Default::default(),
                        board: None,
                    });
                }
                Ok(_) => last = Some(format!("{marker} is not a file")),
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(LocalError::io(format!("cannot open {}", dir.display()), e)),
            }
        }
        Err(LocalError::Invalid(format!(
            "{} is not a partition directory ({})",
            dir.display(),
            last.unwrap_or_else(|| format!("it has neither {PARTITION_METADATA} nor {LOCK_FILE}"))
        )))
    }

    /// This partition's slot on its topic's change board, which every append updates.
    pub fn with_board(mut self, slot: Slot) -> PartitionLog {
        self.board = Some(slot);
        self
    }

    /// The partition directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Takes the partition lock; a cleaner's swap that a crash interrupted is finished (or
    /// rolled back) first, under the exclusive lock, so no one ever works on a half-swapped
    /// log.
    fn lock(&self, mode: LockMode) -> Result<FileLock> {
        let lock = FileLock::acquire(&self.lock_path(), mode)?;
        self.settle_swap(lock, mode)
    }

    /// [`PartitionLog::lock`] held, as `mode`, with any interrupted swap settled.
    fn settle_swap(&self, lock: FileLock, mode: LockMode) -> Result<FileLock> {
        if !swap::interrupted(&self.dir) {
            return Ok(lock);
        }
        if mode == LockMode::Exclusive {
            swap::finish_interrupted(&self.dir)?;
            return Ok(lock);
        }
        drop(lock);
        {
            let _exclusive = FileLock::acquire(&self.lock_path(), LockMode::Exclusive)?;
            if swap::interrupted(&self.dir) {
                swap::finish_interrupted(&self.dir)?;
            }
        }
        FileLock::acquire(&self.lock_path(), mode)
    }

    /// Opens a segment of `snapshot` for reading; `None` when the snapshot is stale: retention
    /// deleted the file since, or the cleaner replaced it.
    pub(crate) fn open_segment(&self, seg: &SegmentInfo) -> Result<Option<File>> {
        use std::os::unix::fs::MetadataExt;
        let path = segment_path(&self.dir, seg.base_offset, LOG_SUFFIX);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(LocalError::io(format!("cannot open {}", path.display()), e)),
        };
        let inode = file
            .metadata()
            .context(|| format!("cannot stat {}", path.display()))?
            .ino();
        Ok((inode == seg.inode).then_some(file))
    }

    fn lock_path(&self) -> PathBuf {
        self.dir.join(LOCK_FILE)
    }

    fn segment_bases(&self) -> Result<Vec<i64>> {
        Ok(self.listing()?.bases)
    }

    /// The partition's files, with at least one segment.
    fn listing(&self) -> Result<Listing> {
        let listing = list_partition(&self.dir)?;
        if listing.bases.is_empty() {
            return Err(LocalError::Invalid(format!(
                "partition {} has no segment files (it was damaged or deleted)",
                self.dir.display()
            )));
        }
        Ok(listing)
    }

    /// Where the next cleaning starts (the `cleaner-checkpoint`); `None` for a log never
    /// cleaned.
    pub(crate) fn cleaner_checkpoint(&self) -> Result<Option<i64>> {
        checkpoint::read_cleaner_checkpoint(&self.dir)
    }

    /// Records where the next cleaning starts.
    pub(crate) fn set_cleaner_checkpoint(&self, offset: i64) -> Result<()> {
        checkpoint::write_cleaner_checkpoint(&self.dir, offset)
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
}
