//! Stamps: what a reader saw of a partition's files when it took a [`Snapshot`], so that an
//! idle consumer can tell "nothing changed" from two `stat`s instead of a new snapshot (a lock,
//! a directory listing and a tail check per partition, which made an idle poll over 100,000
//! partitions take seconds).
//!
//! Every change a reader must see changes the stamp: an append grows the active segment; a
//! roll, retention and a repair add, remove or rename files in the partition directory (its
//! mtime); a deleted topic's directory is gone.
//! File times move in clock ticks, so a stamp taken within
//! [`RACY`](crate::local::file_stamp::RACY) of a change is not trusted
//! (git's "racily clean" rule): the reader takes a snapshot instead.

use std::path::Path;

use super::{PartitionLog, Snapshot};
use crate::local::file_stamp::{FileStamp, now_ns};
use crate::local::segment::{LOG_SUFFIX, segment_path};

/// The partition directory and its active segment as a snapshot saw them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    dir: FileStamp,
    active: FileStamp,
    /// When the files were looked at, in ns since the epoch.
    taken_ns: i128,
}

fn file_stamp(path: &Path) -> Option<FileStamp> {
    std::fs::metadata(path).ok().map(|m| FileStamp::of(&m))
}

impl Stamp {
    /// Looks at the directory and its active segment (base `active_base`); `None` if either
    /// cannot be looked at. Called under the partition's shared lock, so no writer is between
    /// the snapshot and its stamp.
    pub(super) fn take(dir: &Path, active_base: i64) -> Option<Stamp> {
        Some(Stamp {
            dir: file_stamp(dir)?,
            active: file_stamp(&segment_path(dir, active_base, LOG_SUFFIX))?,
            taken_ns: now_ns(),
        })
    }

    /// Whether the files' times lie far enough before the stamp's taking that any later
    /// change must show in them.
    fn settled(&self) -> bool {
        self.dir.settled_at(self.taken_ns) && self.active.settled_at(self.taken_ns)
    }
}

impl PartitionLog {
    /// Whether the partition provably holds what `snapshot` saw: same directory, same active
    /// segment, same size, same times, and the stamp not racy. `false` means "take a new
    /// snapshot" (which may still find nothing new).
    pub fn unchanged_since(&self, snapshot: &Snapshot) -> bool {
        let Some(stamp) = &snapshot.stamp else {
            return false;
        };
        let Some(active) = snapshot.segments.last() else {
            return false;
        };
        stamp.settled()
            && file_stamp(&self.dir).as_ref() == Some(&stamp.dir)
            && file_stamp(&segment_path(&self.dir, active.base_offset, LOG_SUFFIX)).as_ref()
                == Some(&stamp.active)
    }
}

#[cfg(test)]
mod tests {
    use super::super::PartitionConfig;
    use super::*;
    use crate::record::{BatchBuilder, Compression};

    fn batch() -> Vec<u8> {
        let mut b = BatchBuilder::new(Compression::None);
        b.append(super::super::now_ms(), None, Some(b"v"), &[]);
        b.build(0).unwrap()
    }

    #[test]
    fn a_settled_stamp_says_unchanged_until_a_write_and_a_racy_one_never_does() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().join("t-0");
        PartitionLog::create(&dir).unwrap();
        let log = PartitionLog::open(&dir).unwrap();
        let config = PartitionConfig::default();
        log.append(&mut batch(), &config).unwrap();
        // Taken right after a write: its times may share a clock tick with the next one.
        let racy = log.snapshot().unwrap();
        assert!(!log.unchanged_since(&racy));
        std::thread::sleep(crate::local::file_stamp::RACY * 2);
        let settled = log.snapshot().unwrap();
        assert!(log.unchanged_since(&settled));
        log.append(&mut batch(), &config).unwrap();
        assert!(!log.unchanged_since(&settled), "an append is seen");
        std::thread::sleep(crate::local::file_stamp::RACY * 2);
        let settled = log.snapshot().unwrap();
        assert!(log.unchanged_since(&settled));
        // A roll (retention by time rolls past records dated long ago) changes the directory.
        let old = PartitionConfig {
            retention_ms: 0,
            ..PartitionConfig::default()
        };
        log.apply_retention(&old).unwrap();
        assert!(!log.unchanged_since(&settled), "the roll is seen");
    }
}
