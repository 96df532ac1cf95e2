//! An assigned partition of the embedded log: not opened while it is empty, then read with its
//! latest snapshot, reused while that is provably still good.
//!
//! A partition that is empty when assigned is not opened (eight files and as many `stat`s
//! each): one `stat` of its only segment tells it is empty, and it is opened once that changes.

use std::time::{Duration, Instant};

use super::LogView;
use crate::client::consumer::backend::Opened;
use crate::local::{self, LocalError, PartitionLog, Snapshot};

/// How long a snapshot of a partition is reused while records below its end remain unread. A
/// snapshot re-verifies the active segment's last batch (up to 1 MB of CRC) and lists the
/// partition's files, as much work as a round's read; reusing it while a backlog is read
/// halves that. Kept short, so a consumer sees retention and deletion about as soon as before.
const SNAPSHOT_REUSE: Duration = Duration::from_millis(100);

/// An assigned partition of the embedded log.
#[derive(Debug)]
pub(super) struct LocalPartition {
    /// Its topic's index in [`LogView`]'s topics (for its board), if it was remembered.
    pub topic: Option<usize>,
    /// `None`: held no records when assigned and not opened since (its position is 0).
    open: Option<Box<OpenPartition>>,
}

/// An opened partition with its latest snapshot.
#[derive(Debug)]
struct OpenPartition {
    log: PartitionLog,
    /// The latest snapshot and when it was taken.
    snapshot: Option<(Snapshot, Instant)>,
    /// The last [`OpenPartition::snapshot`] reused the snapshot instead of taking one.
    reused: bool,
}

/// A partition's bounds, from [`LogView::bounds`].
pub(super) struct Bounds {
    pub log_start_offset: i64,
    pub log_end_offset: i64,
    /// Damage right at `log_end_offset` ([`Snapshot::damage`]): a reader that reaches the
    /// end fails with it instead of waiting there for more.
    pub damage: Option<LocalError>,
}

impl LogView {
    /// Opens partition `p` of `topic` for reading at `from_time` (if given): not at all when
    /// it is empty (one `stat`), else with a snapshot.
    pub fn open(
        &self,
        topic: &str,
        p: u32,
        from_time: Option<i64>,
    ) -> local::Result<(LocalPartition, Opened)> {
        let index = self.by_name.get(topic).copied();
        if self.dir.partition_is_empty(topic, p) {
            let opened = Opened {
                start: 0,
                end: 0,
                at_time: from_time.map(|_| 0),
            };
            let partition = LocalPartition {
                topic: index,
                open: None,
            };
            return Ok((partition, opened));
        }
        let log = self.open_log(topic, p)?;
        let snap = log.snapshot()?;
        let at_time = match from_time {
            Some(t) => Some(
                log.offset_for_timestamp(&snap, t)?
                    .unwrap_or(snap.log_end_offset),
            ),
            None => None,
        };
        let opened = Opened {
            start: snap.log_start_offset,
            end: readable_end(&snap, self.read_committed),
            at_time,
        };
        let partition = LocalPartition {
            topic: index,
            open: Some(Box::new(OpenPartition {
                log,
                snapshot: Some((snap, Instant::now())),
                reused: false,
            })),
        };
        Ok((partition, opened))
    }

    /// Whether partition `p`, caught up at `position`, provably has nothing new: its board
    /// slot still shows `position` as its end, which its reader saw too. No system call but
    /// one read of the topic's board per round. `swept`: this round checks it the slow way.
    pub fn is_idle(&self, part: &LocalPartition, p: u32, position: i64, swept: bool) -> bool {
        let seen_end = match &part.open {
            None => Some(0),
            Some(open) => open.snapshot.as_ref().map(|(s, _)| s.log_end_offset),
        };
        !swept && seen_end == Some(position) && self.board_end(part.topic, p) == Some(position)
    }

    /// Partition `p` of `topic`'s bounds for reading at `position`. `swept`: this round
    /// checks it without trusting the board.
    pub fn bounds(
        &self,
        topic: &str,
        p: u32,
        part: &mut LocalPartition,
        position: i64,
        swept: bool,
    ) -> local::Result<Bounds> {
        let hint = if swept {
            None
        } else {
            self.board_end(part.topic, p)
        };
        let open = match &mut part.open {
            Some(open) => open,
            not_opened @ None => {
                if hint == Some(0) || self.dir.partition_is_empty(topic, p) {
                    return Ok(Bounds {
                        log_start_offset: 0,
                        log_end_offset: 0,
                        damage: None,
                    });
                }
                not_opened.insert(Box::new(OpenPartition {
                    log: self.open_log(topic, p)?,
                    snapshot: None,
                    reused: false,
                }))
            }
        };
        open.snapshot(position, hint, self.read_committed)
    }
}

impl OpenPartition {
    /// The bounds for reading at `position`: the latest snapshot's while it is young and
    /// `position` is within it with records left, or while `position` is its end and the
    /// partition provably did not grow (the board shows that end, or else two `stat`s find
    /// its files unchanged); else a fresh snapshot's.
    fn snapshot(
        &mut self,
        position: i64,
        board_end: Option<i64>,
        read_committed: bool,
    ) -> local::Result<Bounds> {
        self.reused = self.snapshot.as_ref().is_some_and(|(s, taken)| {
            ((s.log_start_offset..s.log_end_offset).contains(&position)
                && taken.elapsed() < SNAPSHOT_REUSE)
                || (position == s.log_end_offset
                    && (board_end == Some(s.log_end_offset) || self.log.unchanged_since(s)))
        });
        if !self.reused {
            self.snapshot = None;
            self.snapshot = Some((self.log.snapshot()?, Instant::now()));
        }
        let (s, _) = self.snapshot.as_ref().expect("set above");
        Ok(Bounds {
            log_start_offset: s.log_start_offset,
            log_end_offset: readable_end(s, read_committed),
            damage: s.damage(),
        })
    }
}

impl LocalPartition {
    /// Reads whole batches from `position` into `out` within the last snapshot, as
    /// [`PartitionLog::read_into`] (every batch's CRC checked); `read_committed`, no further
    /// than its last stable offset, returning the aborted transactions (producer id, first
    /// offset) the batches may hold. A read that fails on a reused snapshot (retention or a
    /// deleted topic may have moved the files since) drops it and is reported as out of
    /// range, so the next round decides on a fresh one.
    pub fn read_into(
        &mut self,
        position: i64,
        max_bytes: usize,
        read_committed: bool,
        out: &mut Vec<u8>,
    ) -> local::Result<Vec<(i64, i64)>> {
        out.clear();
        let Some(open) = &mut self.open else {
            return Ok(Vec::new());
        };
        let Some((snapshot, _)) = &open.snapshot else {
            return Ok(Vec::new());
        };
        let end = readable_end(snapshot, read_committed);
        let result = open
            .log
            .read_into_upto(snapshot, position, max_bytes, end, out)
            .and_then(|()| match read_committed {
                true => open.log.aborted_transactions(snapshot, position, end),
                false => Ok(Vec::new()),
            });
        if let Err(e) = result {
            let (log_start, log_end) = (snapshot.log_start_offset, snapshot.log_end_offset);
            open.snapshot = None;
            if open.reused {
                out.clear();
                return Err(LocalError::OffsetOutOfRange {
                    offset: position,
                    log_start,
                    log_end,
                });
            }
            return Err(e);
        }
        result
    }
}

/// Where a reader of `snapshot` stops: the last stable offset for `read_committed`.
fn readable_end(snapshot: &Snapshot, read_committed: bool) -> i64 {
    match read_committed {
        true => snapshot.last_stable_offset,
        false => snapshot.log_end_offset,
    }
}
