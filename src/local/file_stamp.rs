//! What a reader saw of a file (identity, size, modification time) and when, with git's
//! "racily clean" rule: file times move in clock ticks, so a look taken within [`RACY`] of a
//! change may share its time, and such a stamp proves nothing. Used for the partitions' idle
//! checks and for the topics' change boards.

use std::os::unix::fs::MetadataExt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Changes closer than this to a look may share its file times.
pub const RACY: Duration = Duration::from_millis(50);

/// One file's identity, size and modification time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
}

impl FileStamp {
    pub fn of(m: &std::fs::Metadata) -> FileStamp {
        FileStamp {
            ino: m.ino(),
            size: m.size(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        }
    }

    /// Whether the file's last change lies far enough before `taken_ns` (when it was looked
    /// at) that any later change must show in its time.
    pub fn settled_at(&self, taken_ns: i128) -> bool {
        self.mtime_ns < taken_ns - RACY.as_nanos() as i128
    }
}

/// Now, in ns since the epoch.
pub fn now_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}
