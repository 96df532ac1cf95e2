//! A topic's change board: one small file per topic where every append writes its partition's
//! new log end, so that an idle consumer learns which partitions have new records from one
//! read of one file per topic instead of two `stat`s per partition (item 8 of the hardening
//! issue: 100,000 idle partitions made each round take a large part of a second).
//!
//! The file is `topics/<topic id>.ends`: partition `p`'s end is the little-endian `i64` at byte
//! `8 * p` (a slot never written reads as 0, or lies past the end of the file). Named by the
//! topic's id, so a topic deleted and created again gets a new board.
//!
//! The board is a hint, never the truth:
//! - Writers update their slot under the partition's exclusive lock after the data is written
//!   and synced, so a slot never runs ahead of the log and slots move in append order.
//! - A writer killed between its data and its slot, a failed slot write or a writer that does
//!   not know boards leaves a slot behind the log. Readers therefore also check a few
//!   partitions per round the slow way (their files' stamps), every partition in turn, so such
//!   records are still seen, only later.
//! - Nothing is synced: after a crash the board may be behind, which the same rule covers.

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::file_stamp::{FileStamp, now_ns};

/// The board file of the topic with id `topic_id` in the log dir's `topics` directory.
pub fn board_path(topics_dir: &Path, topic_id: &str) -> PathBuf {
    topics_dir.join(format!("{topic_id}.ends"))
}

/// One partition's slot on its topic's board, held by its writers. Topic creation and
/// added partitions write the last partition's slot (0) before the topic's metadata names it,
/// so that the board has a slot for every partition from the start: a slot that is still a
/// hole reads as an end of 0, which a new partition has.
#[derive(Clone, Debug)]
pub struct Slot {
    path: PathBuf,
    partition: u32,
}

impl Slot {
    pub fn new(path: PathBuf, partition: u32) -> Slot {
        Slot { path, partition }
    }

    /// Records `log_end` as the partition's end. Best effort: a board that cannot be written
    /// only makes readers find the records by their slower check, so a failure is not an
    /// append failure. The board is created when missing (a topic made by an older kafkit).
    pub fn record(&self, log_end: i64) {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.path);
        if let Ok(file) = file {
            let _ = file.write_all_at(&log_end.to_le_bytes(), 8 * u64::from(self.partition));
        }
    }
}

/// A reader's view of one topic's board, read again each round.
#[derive(Debug)]
pub struct BoardReader {
    /// `None` when the topic has no board (yet).
    file: Option<File>,
    bytes: Vec<u8>,
    /// The bytes of the read before.
    before: Vec<u8>,
    /// The file as the last read found it.
    stamp: Option<Stamp>,
}

/// A board file as a read found it, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    file: FileStamp,
    taken_ns: i128,
}

impl Stamp {
    fn of(m: &std::fs::Metadata) -> Stamp {
        Stamp {
            file: FileStamp::of(m),
            taken_ns: now_ns(),
        }
    }

    /// Whether `now` shows the file as this stamp saw it, settled (see
    /// [`FileStamp::settled_at`]), so that no write can have come since unseen.
    fn settled_same(&self, now: Stamp) -> bool {
        self.file == now.file && self.file.settled_at(self.taken_ns)
    }
}

impl BoardReader {
    /// Opens the board at `path`; a missing board is not an error (every slot is unknown).
    pub fn open(path: &Path) -> std::io::Result<BoardReader> {
        let file = match File::open(path) {
            Ok(f) => Some(f),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        Ok(BoardReader {
            file,
            bytes: Vec::new(),
            before: Vec::new(),
            stamp: None,
        })
    }

    /// Reads the whole board again (a `stat` and one `pread`: 8 bytes per partition). A board
    /// that cannot be read has no slots. Returns the partitions whose slot changed since the
    /// last read (a slot the board did not have before counts as changed).
    pub fn read(&mut self) -> impl Iterator<Item = u32> + '_ {
        std::mem::swap(&mut self.bytes, &mut self.before);
        self.bytes.clear();
        if let Some(file) = &self.file {
            let stamp = file.metadata().ok().map(|m| Stamp::of(&m));
            if stamp.is_some_and(|s| self.stamp.is_some_and(|seen| seen.settled_same(s))) {
                // Provably unchanged since the last read: no need to read it again.
                self.bytes.extend_from_slice(&self.before);
                return self.moved();
            }
            self.stamp = stamp;
            let len = stamp.map_or(0, |s| s.file.size as usize);
            self.bytes.resize(len, 0);
            let mut filled = 0;
            while filled < len {
                match file.read_at(&mut self.bytes[filled..], filled as u64) {
                    Ok(0) => break,
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            self.bytes.truncate(filled - filled % 8);
        }
        self.moved()
    }

    /// The slots that differ between the last two reads.
    fn moved(&self) -> impl Iterator<Item = u32> + '_ {
        let (now, before) = (&self.bytes, &self.before);
        // Compared a block at a time: on a quiet board, a memcmp of each 4 KiB.
        now.chunks(4096)
            .enumerate()
            .filter(move |(b, block)| before.get(b * 4096..b * 4096 + block.len()) != Some(*block))
            .flat_map(move |(b, block)| {
                block.chunks(8).enumerate().filter_map(move |(i, slot)| {
                    let at = b * 4096 + i * 8;
                    (before.get(at..at + 8) != Some(slot)).then_some((at / 8) as u32)
                })
            })
    }

    /// Partition `p`'s end as the last [`BoardReader::read`] saw it; `None` when its slot lies
    /// past the board's end or there is no board.
    pub fn end(&self, p: u32) -> Option<i64> {
        let at = 8 * p as usize;
        let slot = self.bytes.get(at..at + 8)?;
        Some(i64::from_le_bytes(slot.try_into().expect("8 bytes")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_read_back_and_unwritten_ones_read_as_zero_or_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let path = board_path(dir.path(), "id");
        let mut reader = BoardReader::open(&path).unwrap();
        assert_eq!(reader.read().count(), 0);
        assert_eq!(reader.end(0), None, "no board yet");
        Slot::new(path.clone(), 2).record(42);
        let mut reader = BoardReader::open(&path).unwrap();
        assert_eq!(
            reader.read().collect::<Vec<_>>(),
            [0, 1, 2],
            "new slots count as moved"
        );
        assert_eq!(reader.end(2), Some(42));
        assert_eq!(reader.end(0), Some(0), "a hole reads as zero");
        assert_eq!(reader.end(3), None, "past the end");
        assert_eq!(reader.read().count(), 0, "nothing moved");
        Slot::new(path.clone(), 0).record(7);
        Slot::new(path.clone(), 700).record(1);
        let moved: Vec<u32> = reader.read().collect();
        assert_eq!(moved[0], 0);
        assert_eq!(moved.len(), 1 + 698, "slot 0, and 3..=700 are new");
        assert_eq!(
            (reader.end(0), reader.end(2), reader.end(700)),
            (Some(7), Some(42), Some(1))
        );
    }

    #[test]
    fn a_board_that_cannot_be_written_is_no_failure() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the board should be: opening it for writing fails.
        let slot = Slot::new(dir.path().to_path_buf(), 0);
        slot.record(1);
        let mut reader = BoardReader::open(dir.path()).unwrap();
        assert_eq!(reader.read().count(), 0);
    }
}
