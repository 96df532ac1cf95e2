//! The one interface the consumer engine ([`super::Consumer`]) reads through, implemented once
//! per backend: [`super::local::LocalLog`] for the embedded log and
//! [`super::cluster::ClusterConsumer`] for a cluster.
//!
//! Each implementation owns everything its backend needs together: its connection or log
//! directory, its per-partition readers and its group member (if any). So a member of a
//! cluster's group always talks to that cluster, and a partition of the embedded log is always
//! read from it: the pairings cannot go wrong, and the engine never asks which backend it has.
//!
//! The engine keeps what is the same everywhere: the assigned partitions with their positions,
//! what a commit covers, delivery marks and record delivery. A backend's per-partition state
//! follows the engine's assignment by index: [`ConsumerBackend::open`] is called for each
//! partition the engine appends, and [`ConsumerBackend::retain`] whenever it drops some.
//! Calls are per round or per partition per round, never per record.

use std::collections::BTreeMap;

use super::{Assigned, Mark, OffsetReset, Result};
use crate::kafka::TopicPartition;
use crate::kafka::groups::AssignmentChange;

/// The next offset to read of each owned partition: what a commit writes.
pub(super) type Positions = BTreeMap<TopicPartition, i64>;

/// A consumer's backend: where its records come from, and its group membership there.
pub(super) trait ConsumerBackend: std::fmt::Debug + Send {
    /// The partition counts of the named topics that exist, or of every non-internal topic.
    /// With `auto_create`, missing named topics are created where the embedded log or the
    /// broker allows it (`auto.create.topics.enable`), as Java's consumer has them created.
    fn topics(
        &mut self,
        names: Option<&[String]>,
        auto_create: bool,
    ) -> Result<BTreeMap<String, u32>>;

    /// How many partitions a topic the consumer has created gets, where that is known (the
    /// embedded log; a broker applies its own). `None` also when nothing would be created.
    fn auto_created_partitions(&self) -> Result<Option<u32>>;

    /// Whether `topic` exists (a cluster's fetch says so itself: always true there).
    fn has_topic(&self, topic: &str) -> Result<bool>;

    /// Where the records are, for the missing-topic warning.
    fn place(&self) -> String;

    /// Opens partition `p` of `topic` for reading, as the next entry of the engine's
    /// assignment.
    fn open(&mut self, topic: &str, p: u32, from_time: Option<i64>) -> Result<Opened>;

    /// The engine dropped partitions from its assignment: entry `i` is now at `new_index[i]`
    /// (`None`: dropped).
    fn retain(&mut self, new_index: &[Option<usize>]);

    /// Starts a round over `assigned` and puts in `order` which of them (by index) it reads.
    /// A `full` round (after a metadata refresh or a change of assignment) reads them all.
    fn start_round(
        &mut self,
        assigned: &[Assigned],
        full: bool,
        order: &mut Vec<usize>,
    ) -> Result<()>;

    /// Loads the next batches of the partition at `cursor` into `out`, resetting its position
    /// first if it fell out of range.
    fn load(&mut self, cursor: Cursor<'_>, out: &mut Vec<u8>) -> Result<Loaded>;

    /// Whether the consumer is a member of a group (its partitions come from the group).
    fn in_group(&self) -> bool;

    /// Heartbeats (where the member has no thread of its own for it) and follows the group's
    /// assignment. `subscription`: the subscribed topics that exist, with their partition
    /// counts; the delivered positions of `assigned` are committed before a partition is
    /// given up (on a cluster only with auto-commit; the embedded log always commits them).
    fn poll_group(
        &mut self,
        subscription: &BTreeMap<String, u32>,
        assigned: &[Assigned],
    ) -> Result<AssignmentChange>;

    /// Commits `positions` of owned partitions (nothing outside a group). A commit refused
    /// because the member was evicted or the group moved on is dropped, as Kafka's auto-commit
    /// drops it: the next poll rejoins.
    fn commit(&mut self, positions: &Positions) -> Result<()>;

    /// Commits `positions` with auto-commit, then leaves the group, so that the others take
    /// its partitions over at once (nothing outside a group). An evicted member just goes.
    fn leave(&mut self, positions: &Positions) -> Result<()>;
}

/// A partition opened for reading: its start and end offsets, and the first offset at or
/// after the `from_time` asked for (the end when there is none).
pub(super) struct Opened {
    pub start: i64,
    pub end: i64,
    pub at_time: Option<i64>,
}

/// What [`ConsumerBackend::load`] found for a partition.
pub(super) enum Loaded {
    /// Nothing to read this round.
    Nothing,
    /// Nothing to read, and provably nothing new since the last look (the embedded log): the
    /// next rounds need not look again until the partition's board slot moves.
    Idle,
    /// The partition's topic is gone (the embedded log): stop the round.
    TopicDeleted,
    /// Batches in the buffer, with a cluster's aborted transactions (producer id, first
    /// offset), sorted by first offset; `crc_checked` when the reader checked every batch's
    /// CRC already (the embedded log's does).
    Batches {
        aborted: std::collections::VecDeque<(i64, i64)>,
        crc_checked: bool,
    },
}

/// One assigned partition as a backend loads it: the engine's state of it, and what an offset
/// reset needs.
pub(super) struct Cursor<'a> {
    /// Its index in the assignment.
    pub index: usize,
    pub assigned: &'a mut Assigned,
    marks: &'a mut Vec<Mark>,
    reset: OffsetReset,
}

impl<'a> Cursor<'a> {
    pub fn new(
        index: usize,
        assigned: &'a mut Assigned,
        marks: &'a mut Vec<Mark>,
        reset: OffsetReset,
    ) -> Self {
        Cursor {
            index,
            assigned,
            marks,
            reset,
        }
    }

    /// The position fell out of the partition's range `start..=end`: moves it to where
    /// `auto.offset.reset` says, as Kafka's consumer does. What a commit covers moves only
    /// once the output before it is delivered.
    pub fn reset_within(&mut self, start: i64, end: i64) {
        let position = match self.reset {
            OffsetReset::Earliest => start,
            OffsetReset::Latest => end,
        };
        self.assigned.position = position;
        let end = self.marks.last().map_or(0, |m| m.end);
        self.marks.push(Mark {
            end,
            assigned: self.index,
            next: position,
            record: false,
        });
    }
}
