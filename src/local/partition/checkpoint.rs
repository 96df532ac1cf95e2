//! The partition's checkpoints, one offset each:
//! - `log-start-offset`: the first offset still held after retention or DeleteRecords, written
//!   atomically and durably, read by snapshots, retention and DeleteRecords;
//! - `recovery-point`: the offset below which every batch was fdatasync'ed and acknowledged,
//!   as Kafka's recovery point. Damage below it is damage to acknowledged data (an error);
//!   damage at or above it is the torn tail of an interrupted append (cut back);
//! - `cleaner-checkpoint`: where the next cleaning of a compacted topic starts (its presence
//!   marks a log that may have gaps), written atomically and durably.

use std::io::ErrorKind;
use std::path::Path;

use super::{LOG_START_FILE, RECOVERY_POINT_FILE};
use crate::local::error::{IoContext, LocalError, Result};
use crate::local::logdir::write_atomically;
use crate::local::segment::CLEANER_CHECKPOINT;

/// Reads the `log-start-offset` checkpoint.
pub(super) fn read_log_start(dir: &Path) -> Result<Option<i64>> {
    read_durable(dir, LOG_START_FILE)
}

/// Reads the `cleaner-checkpoint`: `None` for a log never cleaned.
pub(super) fn read_cleaner_checkpoint(dir: &Path) -> Result<Option<i64>> {
    read_durable(dir, CLEANER_CHECKPOINT)
}

/// Writes the `cleaner-checkpoint` atomically and durably.
pub(super) fn write_cleaner_checkpoint(dir: &Path, offset: i64) -> Result<()> {
    write_durable(dir, CLEANER_CHECKPOINT, offset)
}

fn read_durable(dir: &Path, name: &str) -> Result<Option<i64>> {
    let path = dir.join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LocalError::io(format!("cannot read {}", path.display()), e)),
    };
    match parse_checkpoint(&text) {
        Some(offset) => Ok(Some(offset)),
        None => Err(LocalError::Invalid(format!(
            "{} is malformed (expected \"0\\n<offset>\\n\")",
            path.display()
        ))),
    }
}

/// The offset in a checkpoint's text, Kafka's `0\n<offset>\n` (version 0, then the offset).
fn parse_checkpoint(text: &str) -> Option<i64> {
    let mut lines = text.lines();
    match (lines.next(), lines.next().map(str::parse::<i64>)) {
        (Some("0"), Some(Ok(offset))) if offset >= 0 => Some(offset),
        _ => None,
    }
}

/// Writes the checkpoint atomically and durably: a crash leaves the old or the new value.
pub(super) fn write_log_start(dir: &Path, offset: i64) -> Result<()> {
    write_durable(dir, LOG_START_FILE, offset)
}

fn write_durable(dir: &Path, name: &str, offset: i64) -> Result<()> {
    write_atomically(&dir.join(name), format!("0\n{offset}\n").as_bytes())
}

/// Reads the recovery point; 0 (nothing known to be durable: every bad tail is treated as
/// torn, as before there was one) when it is missing or unreadable.
pub(super) fn read_recovery_point(dir: &Path) -> i64 {
    let text = std::fs::read_to_string(dir.join(RECOVERY_POINT_FILE)).unwrap_or_default();
    parse_checkpoint(&text).unwrap_or(0)
}

/// Records that everything below `offset` is durable. Called only after the fdatasync of the
/// data it covers, so it never claims more than the disk holds. Rewritten in place, not
/// fsynced: after a crash it may be older than the data (a harmless, lower claim), never newer.
/// The offset is zero-padded to a fixed width, so each write covers the whole text in one
/// small write within a sector (no new file and rename per append, which cost a writer an
/// inode and two directory changes each time); a text that still does not parse reads as 0.
pub(super) fn write_recovery_point(dir: &Path, offset: i64) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let path = dir.join(RECOVERY_POINT_FILE);
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .and_then(|f| f.write_all_at(format!("0\n{offset:019}\n").as_bytes(), 0))
        .context(|| format!("cannot write {}", path.display()))
}
