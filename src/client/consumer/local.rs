//! Reading the embedded log: each assigned partition with its latest snapshot, and what keeps
//! an idle consumer cheap on a topic of many partitions.
//!
//! - A partition that is empty when assigned is not opened (eight files and as many `stat`s
//!   each): one `stat` of its only segment tells it is empty, and it is opened once that
//!   changes.
//! - Each round reads every subscribed topic's change board (see [`crate::local::board`]): a
//!   caught-up partition whose slot still shows the end its reader saw needs no look at its
//!   files at all. A round then costs O(partitions with new records), not O(partitions).
//! - The board is a hint, so each round also checks a slice of the partitions the slow way
//!   (their files' stamps), all of them in turn within about [`SWEEP_ROUNDS`] rounds: records
//!   whose writer did not update the board are still read, only later.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::Assigned;
use super::source::{Opened, Reader};
use crate::local::board::BoardReader;
use crate::local::{self, LocalError, LogDir, PartitionLog, Snapshot, TopicMeta};

/// How long a snapshot of a partition is reused while records below its end remain unread. A
/// snapshot re-verifies the active segment's last batch (up to 1 MB of CRC) and lists the
/// partition's files, as much work as a round's read; reusing it while a backlog is read
/// halves that. Kept short, so a consumer sees retention and deletion about as soon as before.
const SNAPSHOT_REUSE: Duration = Duration::from_millis(100);

/// Rounds over which every partition is checked once without trusting the board (a round is
/// about 20 ms when idle, so about 10 s).
const SWEEP_ROUNDS: usize = 500;

/// The embedded log as a consumer reads it: the log dir, and the metadata and change board of
/// each topic it looked up at the last metadata refresh.
#[derive(Debug)]
pub(super) struct LocalLog {
    pub dir: LogDir,
    /// Never shrinks, so that a partition can name its topic by index.
    topics: Vec<LocalTopic>,
    by_name: HashMap<String, usize>,
    /// The first assigned partition the next round's sweep checks.
    sweep_next: usize,
    /// Partitions the next round must read: those this round found not idle.
    due: Vec<usize>,
}

#[derive(Debug)]
struct LocalTopic {
    meta: TopicMeta,
    board: BoardReader,
    /// Partition -> 1 + its index in the assignment (0: not assigned), as of the last full
    /// round.
    assigned: Vec<u32>,
}

/// The assigned partitions one round checks without trusting the board.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Sweep {
    first: usize,
    count: usize,
    of: usize,
}

impl Sweep {
    /// Whether the partition at `index` of the assignment is checked the slow way this round.
    pub fn covers(&self, index: usize) -> bool {
        self.of > 0 && (index + self.of - self.first) % self.of < self.count
    }
}

/// An assigned partition of the embedded log.
#[derive(Debug)]
pub(super) struct LocalPartition {
    /// Its topic's index in [`LocalLog`]'s topics (for its board), if it was remembered.
    topic: Option<usize>,
    state: State,
}

#[derive(Debug)]
enum State {
    /// Held no records when assigned and not opened since (its position is 0).
    Empty,
    Open(Box<OpenPartition>),
}

/// An opened partition with its latest snapshot.
#[derive(Debug)]
pub(super) struct OpenPartition {
    log: PartitionLog,
    /// The latest snapshot and when it was taken.
    snapshot: Option<(Snapshot, Instant)>,
    /// The last [`OpenPartition::snapshot`] reused the snapshot instead of taking one.
    reused: bool,
}

/// A partition's bounds, from [`LocalLog::bounds`].
pub(super) struct Bounds {
    pub log_start_offset: i64,
    pub log_end_offset: i64,
    /// Damage right at `log_end_offset` ([`Snapshot::damage`]): a reader that reaches the
    /// end fails with it instead of waiting there for more.
    pub damage: Option<LocalError>,
}

impl LocalLog {
    pub fn new(dir: LogDir) -> LocalLog {
        LocalLog {
            dir,
            topics: Vec::new(),
            by_name: HashMap::new(),
            sweep_next: 0,
            due: Vec::new(),
        }
    }

    /// Keeps `meta` (just read) for opening the topic's partitions, and opens its board again
    /// (the topic may have been created again, or gained its board, since).
    pub fn remember(&mut self, meta: &TopicMeta) -> local::Result<()> {
        let path = self.dir.board_path(meta);
        let board = BoardReader::open(&path)
            .map_err(|e| LocalError::io(format!("cannot open {}", path.display()), e))?;
        let topic = LocalTopic {
            meta: meta.clone(),
            board,
            assigned: Vec::new(),
        };
        match self.by_name.get(&meta.name) {
            Some(&i) => self.topics[i] = topic,
            None => {
                self.by_name.insert(meta.name.clone(), self.topics.len());
                self.topics.push(topic);
            }
        }
        Ok(())
    }

    /// Starts a round over the assignment: reads the boards and puts in `order` which
    /// assigned partitions (by index) the round reads. A `full` round (after a metadata
    /// refresh or a change of assignment) reads them all; any other reads only those the last
    /// round found not idle, those whose board slot moved, and the sweep's.
    pub fn start_round(
        &mut self,
        assigned: &[Assigned],
        full: bool,
        order: &mut Vec<usize>,
    ) -> Sweep {
        let n = assigned.len();
        let count = n.div_ceil(SWEEP_ROUNDS);
        let first = self.sweep_next.checked_rem(n).unwrap_or(0);
        self.sweep_next = first + count;
        let sweep = Sweep {
            first,
            count,
            of: n,
        };
        if full {
            self.map_assignment(assigned);
        }
        order.clear();
        order.append(&mut self.due);
        for topic in &mut self.topics {
            if topic.assigned.is_empty() {
                continue;
            }
            let moved = topic.board.read();
            if !full {
                let indices = moved.filter_map(|p| topic.assigned.get(p as usize).copied());
                order.extend(indices.filter(|&i| i > 0).map(|i| i as usize - 1));
            }
        }
        if full {
            order.clear();
            order.extend(0..n);
        } else {
            order.extend((first..first + count).map(|i| i % n));
            order.sort_unstable();
            order.dedup();
        }
        sweep
    }

    /// Notes that the partition at `index` of the assignment was not idle this round, so the
    /// next round reads it again.
    pub fn still_due(&mut self, index: usize) {
        self.due.push(index);
    }

    /// Maps each topic's partitions to their places in the assignment.
    fn map_assignment(&mut self, assigned: &[Assigned]) {
        for topic in &mut self.topics {
            topic.assigned.clear();
        }
        for (i, a) in assigned.iter().enumerate() {
            let Reader::Local(part) = &a.reader else {
                continue;
            };
            let Some(t) = part.topic else { continue };
            let map = &mut self.topics[t].assigned;
            let p = a.partition as usize;
            if map.len() <= p {
                map.resize(p + 1, 0);
            }
            map[p] = i as u32 + 1;
        }
    }

    /// Partition `p`'s end as its topic's board showed it at the start of the round, if it
    /// shows one.
    fn board_end(&self, topic: Option<usize>, p: u32) -> Option<i64> {
        self.topics[topic?].board.end(p)
    }

    fn open_log(&self, topic: &str, p: u32) -> local::Result<PartitionLog> {
        match self.by_name.get(topic) {
            Some(&i) => self.dir.partition_of(&self.topics[i].meta, p),
            None => self.dir.partition(topic, p),
        }
    }

    /// Opens partition `p` of `topic` for reading at `from_time` (if given): not at all when
    /// it is empty (one `stat`), else with a snapshot.
    pub fn open(&mut self, topic: &str, p: u32, from_time: Option<i64>) -> local::Result<Opened> {
        let index = self.by_name.get(topic).copied();
        let partition = |state| {
            Reader::Local(LocalPartition {
                topic: index,
                state,
            })
        };
        if self.dir.partition_is_empty(topic, p) {
            return Ok(Opened {
                reader: partition(State::Empty),
                start: 0,
                end: 0,
                at_time: from_time.map(|_| 0),
            });
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
        Ok(Opened {
            start: snap.log_start_offset,
            end: snap.log_end_offset,
            at_time,
            reader: partition(State::Open(Box::new(OpenPartition {
                log,
                snapshot: Some((snap, Instant::now())),
                reused: false,
            }))),
        })
    }

    /// Whether partition `p`, caught up at `position`, provably has nothing new: its board
    /// slot still shows `position` as its end, which its reader saw too. No system call but
    /// one read of the topic's board per round. `swept`: this round checks it the slow way.
    pub fn is_idle(&self, part: &LocalPartition, p: u32, position: i64, swept: bool) -> bool {
        let seen_end = match &part.state {
            State::Empty => Some(0),
            State::Open(open) => open.snapshot.as_ref().map(|(s, _)| s.log_end_offset),
        };
        !swept && seen_end == Some(position) && self.board_end(part.topic, p) == Some(position)
    }

    /// Partition `p` of `topic`'s bounds for reading at `position`. `swept`: this round
    /// checks it without trusting the board.
    pub fn bounds(
        &mut self,
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
        if let State::Empty = part.state {
            if hint == Some(0) || self.dir.partition_is_empty(topic, p) {
                return Ok(Bounds {
                    log_start_offset: 0,
                    log_end_offset: 0,
                    damage: None,
                });
            }
            part.state = State::Open(Box::new(OpenPartition {
                log: self.open_log(topic, p)?,
                snapshot: None,
                reused: false,
            }));
        }
        let State::Open(open) = &mut part.state else {
            unreachable!("opened above")
        };
        open.snapshot(position, hint)
    }
}

impl OpenPartition {
    /// The bounds for reading at `position`: the latest snapshot's while it is young and
    /// `position` is within it with records left, or while `position` is its end and the
    /// partition provably did not grow (the board shows that end, or else two `stat`s find
    /// its files unchanged); else a fresh snapshot's.
    fn snapshot(&mut self, position: i64, board_end: Option<i64>) -> local::Result<Bounds> {
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
            log_end_offset: s.log_end_offset,
            damage: s.damage(),
        })
    }
}

impl LocalPartition {
    /// Reads whole batches from `position` into `out` within the last snapshot, as
    /// [`PartitionLog::read_into`] (every batch's CRC checked). A read that fails on a reused
    /// snapshot (retention or a deleted topic may have moved the files since) drops it and
    /// is reported as out of range, so the next round decides on a fresh one.
    pub fn read_into(
        &mut self,
        position: i64,
        max_bytes: usize,
        out: &mut Vec<u8>,
    ) -> local::Result<()> {
        out.clear();
        let State::Open(open) = &mut self.state else {
            return Ok(());
        };
        let Some((snapshot, _)) = &open.snapshot else {
            return Ok(());
        };
        let result = open.log.read_into(snapshot, position, max_bytes, out);
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Consumer, Handled};
    use super::*;
    use crate::local::PartitionConfig;
    use crate::record::{BatchBuilder, Compression};

    const PARTITIONS: u32 = 300;

    /// One round with no metadata refresh (so not a full one after the first): the records
    /// it read.
    fn round(c: &mut Consumer) -> usize {
        if c.last_refresh.is_some() {
            c.last_refresh = Some(Instant::now());
        }
        let mut n = 0;
        c.poll(|_| {
            n += 1;
            Handled {
                output_end: n,
                delivered: true,
                stop: false,
            }
        })
        .unwrap();
        c.settle(n);
        n
    }

    fn append(log: &PartitionLog) {
        let mut b = BatchBuilder::new(Compression::None);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        b.append(now.unwrap().as_millis() as i64, None, Some(b"v"), &[]);
        let mut batch = b.build(0).unwrap();
        log.append(&mut batch, &PartitionConfig::default()).unwrap();
    }

    #[test]
    fn idle_rounds_read_only_what_the_board_shows_moved_and_the_sweep_finds_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = LogDir::open(tmp.path()).unwrap();
        dir.create_topic("t", PARTITIONS, Default::default())
            .unwrap();
        append(&dir.partition("t", 5).unwrap());
        let mut c = Consumer::on_topic_t(LogDir::open(tmp.path()).unwrap());
        assert_eq!(round(&mut c), 1, "the first round reads every partition");
        assert_eq!(c.round_order.len(), PARTITIONS as usize);
        round(&mut c);
        round(&mut c);
        let sweep = (PARTITIONS as usize).div_ceil(SWEEP_ROUNDS);
        assert_eq!(
            c.round_order.len(),
            sweep,
            "an idle round reads only the sweep's"
        );

        // A writer that notes its end on the board: read at the next round.
        append(&dir.partition("t", 200).unwrap());
        assert_eq!(round(&mut c), 1);
        assert!(c.round_order.contains(&200));

        // A writer that does not (an older kafkit, or one killed before it could): found by
        // the sweep, within its rounds.
        append(&PartitionLog::open(&tmp.path().join("t-250")).unwrap());
        let rounds = (1..=SWEEP_ROUNDS + 1).find(|_| round(&mut c) == 1);
        assert!(rounds.is_some(), "the sweep found the record");
        assert_eq!(round(&mut c), 0);
    }
}
