//! Where a consumer's records come from: the embedded log, read partition by partition, or a
//! cluster, fetched from the leaders once per round. The engine in [`super`] sees one
//! interface.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use super::{Fetched, Tp};
use crate::client::{Result, topic_name};
use crate::local::{self, LocalError, LogDir, PartitionLog, Snapshot};
use crate::remote::ConsumerClient;

/// The consumer's backend.
#[derive(Debug)]
pub(super) enum Source {
    Local(LogDir),
    Remote(Box<ConsumerClient>),
}

/// How one assigned partition is read.
#[derive(Debug)]
pub(super) enum Reader {
    Local(Box<LocalPartition>),
    /// Fetched from its leader, with the others, once per round.
    Remote,
}

/// How long a snapshot of a partition of the embedded log is reused while records below its
/// end remain unread. A snapshot re-verifies the active segment's last batch (up to 1 MB of
/// CRC) and lists the partition's files, as much work as a round's read; reusing it while a
/// backlog is read halves that. Kept short, so a consumer sees retention and deletion about
/// as soon as before.
const SNAPSHOT_REUSE: Duration = Duration::from_millis(100);

/// A partition of the embedded log, with its latest snapshot.
#[derive(Debug)]
pub(super) struct LocalPartition {
    log: PartitionLog,
    /// The latest snapshot and when it was taken.
    snapshot: Option<(Snapshot, Instant)>,
    /// The last [`LocalPartition::snapshot`] reused the snapshot instead of taking one.
    reused: bool,
}

/// A partition's bounds, from [`LocalPartition::snapshot`].
pub(super) struct Bounds {
    pub log_start_offset: i64,
    pub log_end_offset: i64,
}

impl LocalPartition {
    /// A partition just opened with `snapshot`, which the first round reuses.
    pub fn new(log: PartitionLog, snapshot: Snapshot) -> Self {
        LocalPartition {
            log,
            snapshot: Some((snapshot, Instant::now())),
            reused: false,
        }
    }

    /// The partition's bounds for reading at `position`: the latest snapshot's while it is
    /// young and `position` is within it with records left, or while `position` is its end
    /// and the files are provably unchanged since (an idle poll: two `stat`s, not a new
    /// snapshot); else a fresh snapshot's.
    pub fn snapshot(&mut self, position: i64) -> local::Result<Bounds> {
        self.reused = self.snapshot.as_ref().is_some_and(|(s, taken)| {
            ((s.log_start_offset..s.log_end_offset).contains(&position)
                && taken.elapsed() < SNAPSHOT_REUSE)
                || (position == s.log_end_offset && self.log.unchanged_since(s))
        });
        if !self.reused {
            self.snapshot = None;
            self.snapshot = Some((self.log.snapshot()?, Instant::now()));
        }
        let (s, _) = self.snapshot.as_ref().expect("set above");
        Ok(Bounds {
            log_start_offset: s.log_start_offset,
            log_end_offset: s.log_end_offset,
        })
    }

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
        let Some((snapshot, _)) = &self.snapshot else {
            out.clear();
            return Ok(());
        };
        let result = self.log.read_into(snapshot, position, max_bytes, out);
        if let Err(e) = result {
            let (log_start, log_end) = (snapshot.log_start_offset, snapshot.log_end_offset);
            self.snapshot = None;
            if self.reused {
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

/// A partition opened for reading: its reader, start and end offsets, and the first offset
/// at or after the `from_time` asked for (the end when there is none).
pub(super) struct Opened {
    pub reader: Reader,
    pub start: i64,
    pub end: i64,
    pub at_time: Option<i64>,
}

impl Source {
    /// The partition counts of the named topics that exist, or of every non-internal topic.
    /// With `auto_create`, missing named topics are created where the embedded log or the
    /// broker allows it (`auto.create.topics.enable`), as Java's consumer has them created.
    pub fn topics(
        &mut self,
        names: Option<&[String]>,
        auto_create: bool,
    ) -> Result<BTreeMap<String, u32>> {
        match self {
            Source::Remote(c) => Ok(c.topics(names, auto_create)?),
            Source::Local(dir) => {
                let all;
                let names = match names {
                    Some(n) => n,
                    None => {
                        all = dir
                            .topic_names()?
                            .into_iter()
                            .filter(|n| !topic_name::is_internal(n))
                            .collect::<Vec<_>>();
                        &all
                    }
                };
                let mut out = BTreeMap::new();
                for n in names {
                    let meta = if auto_create {
                        dir.topic_or_auto_create(n)?
                    } else {
                        dir.topic(n)?
                    };
                    if let Some(meta) = meta {
                        out.insert(n.clone(), meta.partitions);
                    }
                }
                Ok(out)
            }
        }
    }

    /// Whether `topic` exists (the embedded log; a cluster's fetch says so itself).
    pub fn has_topic(&self, topic: &str) -> Result<bool> {
        match self {
            Source::Local(dir) => Ok(dir.topic(topic)?.is_some()),
            Source::Remote(_) => Ok(true),
        }
    }

    /// Where the records are, for the missing-topic warning.
    pub fn place(&self) -> String {
        match self {
            Source::Local(dir) => dir.root().display().to_string(),
            Source::Remote(c) => format!("the cluster at {}", c.addr()),
        }
    }

    /// Opens partition `p` of `topic` for reading.
    pub fn open(&mut self, topic: &str, p: u32, from_time: Option<i64>) -> Result<Opened> {
        match self {
            Source::Local(dir) => {
                let log = dir.partition(topic, p)?;
                let snap = log.snapshot()?;
                let at_time = match from_time {
                    Some(t) => Some(
                        log.offset_for_timestamp(&snap, t)?
                            .unwrap_or(snap.log_end_offset),
                    ),
                    None => None,
                };
                let (start, end) = (snap.log_start_offset, snap.log_end_offset);
                Ok(Opened {
                    reader: Reader::Local(Box::new(LocalPartition::new(log, snap))),
                    start,
                    end,
                    at_time,
                })
            }
            Source::Remote(c) => {
                let tp = (topic.to_string(), p as i32);
                let (start, end) = c.bounds(&tp)?;
                let at_time = match from_time {
                    Some(t) => Some(c.list_offset(&tp, t)?.unwrap_or(end)),
                    None => None,
                };
                Ok(Opened {
                    reader: Reader::Remote,
                    start,
                    end,
                    at_time,
                })
            }
        }
    }

    /// A cluster's answers for one round, one Fetch per leader for all the positions; the
    /// embedded log is read partition by partition instead (empty).
    pub fn fetch_round(&mut self, positions: &[(Tp, i64)]) -> Result<HashMap<Tp, Fetched>> {
        match self {
            Source::Remote(c) => Ok(c.fetch(positions)?),
            Source::Local(_) => Ok(HashMap::new()),
        }
    }

    /// A cluster partition's start and end, after its position fell out of range.
    pub fn bounds(&mut self, tp: &Tp) -> Result<(i64, i64)> {
        match self {
            Source::Remote(c) => Ok(c.bounds(tp)?),
            Source::Local(_) => unreachable!("the embedded log's bounds come from snapshots"),
        }
    }
}
