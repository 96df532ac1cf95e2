//! The consumer engine, the same on both backends: assignment (every partition of the
//! subscription, or a group's share), positions, fetching, read_committed filtering, offset
//! reset, and commits of what the caller has delivered.
//!
//! A round ([`Consumer::poll`]) refreshes metadata when due, follows the group's assignment,
//! reads each assigned partition once and hands every record to the caller, who formats it
//! and says where its output ends. Positions move as records are read; what a commit covers
//! moves only when the caller reports how much of that output it delivered
//! ([`Consumer::settle`]), so a commit never covers a record that did not reach its reader.
//!
//! Everything that depends on where the records are goes through one interface,
//! `backend::ConsumerBackend`, with one implementation per backend: `local` (the embedded log
//! and its flock-based group members) and `cluster` (a cluster's fetcher and its classic and
//! KIP-848 group members). Each owns its readers and its group member together, so the engine
//! never pairs them by hand.

mod backend;
mod cluster;
#[cfg(feature = "fuzzing")]
pub(crate) mod fuzz;
mod local;
mod read;
mod unread;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::{Backend, Client, ClientError, Result, TopicPattern};
use crate::kafka::TopicPartition;
pub use crate::kafka::consumer::{GroupProtocol, Isolation};
pub use crate::kafka::groups::AssignmentChange;
use crate::record::{RecordRef, TimestampType};
use backend::{ConsumerBackend, Opened};
use cluster::ClusterConsumer;
use local::LocalLog;
use unread::Unread;
pub use unread::UnreadProbe;

/// How often topic metadata is re-read (new partitions, new topics for a pattern).
const METADATA_REFRESH: Duration = Duration::from_millis(500);
/// Bytes read from one partition per round.
const FETCH_BYTES: usize = 1024 * 1024;

/// What to consume.
#[derive(Debug, Clone)]
pub enum Subscription {
    Topic(String),
    /// Every topic whose whole name matches (internal topics left out).
    Pattern(TopicPattern),
    /// One partition, from `start`; never in a group.
    Partition {
        topic: String,
        partition: u32,
        start: Start,
    },
}

/// Where one partition of a [`Subscription::Partition`] starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    Earliest,
    Latest,
    Offset(i64),
}

/// `auto.offset.reset`: where a partition starts when nothing says otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetReset {
    Earliest,
    Latest,
}

/// A consumer group member's settings, from Kafka's consumer properties.
#[derive(Debug, Clone)]
pub struct GroupSettings {
    /// `group.id`.
    pub id: String,
    /// `client.id`.
    pub client_id: String,
    /// `enable.auto.commit`.
    pub auto_commit: bool,
    /// `auto.commit.interval.ms`.
    pub auto_commit_interval: Duration,
    /// `session.timeout.ms`.
    pub session_timeout: Duration,
    /// `heartbeat.interval.ms`.
    pub heartbeat_interval: Duration,
    /// `max.poll.interval.ms`: a cluster's coordinator waits this long for a rejoin.
    pub rebalance_timeout: Duration,
    /// `retry.backoff.ms`.
    pub retry_backoff: Duration,
    /// `group.protocol` (a cluster's; the embedded log has one kind of group).
    pub protocol: GroupProtocol,
}

/// What a consumer reads and how.
#[derive(Debug, Clone)]
pub struct ConsumerConfig {
    pub subscription: Subscription,
    pub reset: OffsetReset,
    pub isolation: Isolation,
    /// Start each partition at its first record at or after this time (ms).
    pub from_time: Option<i64>,
    /// Stop once every partition reaches the end it had when it was assigned.
    pub until_end: bool,
    /// Read records up to this time (ms), then stop.
    pub until_time: Option<i64>,
    /// Consume as a member of this group.
    pub group: Option<GroupSettings>,
    /// `allow.auto.create.topics` (Java's default: true): a subscribed topic that does not
    /// exist is created where the embedded log or the broker allows it.
    pub allow_auto_create_topics: bool,
}

/// A record handed to the caller.
pub struct ConsumedRecord<'a, 'r> {
    pub topic: &'a str,
    pub partition: i32,
    pub timestamp_type: TimestampType,
    pub record: &'a RecordRef<'r>,
}

/// What the caller did with a record.
#[derive(Debug, Clone, Copy)]
pub struct Handled {
    /// Where the record's output ends in the caller's buffer (see [`Consumer::settle`]).
    pub output_end: usize,
    /// The record was dealt with (printed, or skipped on purpose); `false` leaves it to be
    /// read again by whoever consumes next (a commit stops before it).
    pub delivered: bool,
    /// Read no further records in this round: the caller is done.
    pub stop: bool,
}

/// What a round did.
#[derive(Debug, Default)]
pub struct Round {
    /// Any record was handed to the caller.
    pub read: bool,
    /// The caller stopped, or a bounded read (`until_end`, `until_time`) is complete.
    pub done: bool,
    /// Warnings for the user: a topic missing or deleted.
    pub warnings: Vec<String>,
}

/// A consumer on either backend.
#[derive(Debug)]
pub struct Consumer {
    /// Where the records come from, with the membership of `config.group` there.
    backend: Box<dyn ConsumerBackend>,
    config: ConsumerConfig,
    assigned: Vec<Assigned>,
    last_commit: Instant,
    last_refresh: Option<Instant>,
    /// Subscribed topics that exist, with their partition counts.
    subscription: BTreeMap<String, u32>,
    /// Partitions that existed at the first metadata refresh.
    initial: BTreeSet<TopicPartition>,
    warned_missing: bool,
    /// Set after the first metadata refresh.
    started: bool,
    /// Where each partition's delivery stands at each point of the caller's output, in order.
    marks: Vec<Mark>,
    /// Written output the reader has not taken yet, when the caller can tell
    /// ([`Consumer::commit_only_what_is_read`]).
    unread: Option<Unread>,
    /// A topic found deleted in the last round, forgotten once that round is settled.
    deleted: Option<String>,
    /// Warnings raised outside a round, for the next round to return.
    warnings: Vec<String>,
    /// The assignment changed or metadata was refreshed since the last round: the next one
    /// reads every partition (see [`ConsumerBackend::start_round`]).
    full_round: bool,
    /// The assigned partitions (indices) a round reads, reused between rounds.
    round_order: Vec<usize>,
    /// Batches fetched from one partition, reused between rounds.
    fetched: Vec<u8>,
    scratch: Vec<u8>,
}

/// One assigned partition, as the engine follows it on either backend (how it is read is the
/// backend's, kept at the same index).
#[derive(Debug)]
struct Assigned {
    topic: String,
    partition: u32,
    /// The next offset to read.
    position: i64,
    /// The offset after the last record the caller delivered: what a commit covers.
    delivered: i64,
    /// `until_end`: the partition's end when it was assigned.
    end_target: i64,
    /// `until_time`: a record after the time was reached.
    past_until: bool,
    /// The position reached the partition's end in the last round.
    caught_up: bool,
}

impl Assigned {
    fn new(topic: String, partition: u32, position: i64, end: i64) -> Self {
        Assigned {
            topic,
            partition,
            position,
            delivered: position,
            end_target: end,
            past_until: false,
            caught_up: position >= end,
        }
    }
}

/// The delivered position of each of `assigned`.
fn positions_of(assigned: &[Assigned]) -> BTreeMap<TopicPartition, i64> {
    assigned
        .iter()
        .map(|a| ((a.topic.clone(), a.partition as i32), a.delivered))
        .collect()
}

/// A point in the caller's output: once `end` bytes of it are delivered, partition
/// `assigned` (an index into `Consumer::assigned`) is delivered up to `next`.
#[derive(Debug)]
struct Mark {
    end: usize,
    assigned: usize,
    next: i64,
    /// A record ends here (it counts in what [`Consumer::settle`] returns).
    record: bool,
}

impl Client {
    /// A consumer of what `config` subscribes to; with a group, it joins it (on a cluster,
    /// at its first poll).
    pub fn into_consumer(self, config: ConsumerConfig) -> Result<Consumer> {
        let group = config.group.as_ref();
        let backend: Box<dyn ConsumerBackend> = match self.backend {
            Backend::Local(dir) => Box::new(
                LocalLog::new(dir)
                    .read_committed(config.isolation == Isolation::ReadCommitted)
                    .joined(group)?,
            ),
            Backend::Remote(cluster) => Box::new(ClusterConsumer::new(
                cluster.into_consumer(config.isolation),
                group,
            )),
        };
        Ok(Consumer::with(backend, config))
    }
}

impl Consumer {
    /// A consumer of topic `t` on the embedded log at `dir` from its earliest records, without
    /// a group: for the unit tests and the fuzz targets, which drive its rounds directly.
    #[cfg(any(test, feature = "fuzzing"))]
    fn on_topic_t(dir: crate::local::LogDir) -> Consumer {
        let config = ConsumerConfig {
            subscription: Subscription::Topic("t".to_string()),
            reset: OffsetReset::Earliest,
            isolation: Isolation::ReadUncommitted,
            from_time: None,
            until_end: false,
            until_time: None,
            group: None,
            allow_auto_create_topics: false,
        };
        Consumer::with(Box::new(LocalLog::new(dir)), config)
    }

    /// A consumer that has read nothing yet.
    fn with(backend: Box<dyn ConsumerBackend>, config: ConsumerConfig) -> Consumer {
        Consumer {
            backend,
            config,
            assigned: Vec::new(),
            last_commit: Instant::now(),
            last_refresh: None,
            subscription: BTreeMap::new(),
            initial: BTreeSet::new(),
            warned_missing: false,
            started: false,
            marks: Vec::new(),
            unread: None,
            deleted: None,
            warnings: Vec::new(),
            full_round: true,
            round_order: Vec::new(),
            fetched: Vec::with_capacity(FETCH_BYTES),
            scratch: Vec::new(),
        }
    }
}

impl Consumer {
    /// One round: re-reads metadata when due, follows the group's assignment, then reads each
    /// assigned partition once, handing every record to `each`. Call [`Consumer::settle`]
    /// after delivering the output, before the next round.
    pub fn poll(
        &mut self,
        mut each: impl FnMut(ConsumedRecord<'_, '_>) -> Handled,
    ) -> Result<Round> {
        let mut round = Round {
            warnings: std::mem::take(&mut self.warnings),
            ..Round::default()
        };
        if self
            .last_refresh
            .is_none_or(|t| t.elapsed() >= METADATA_REFRESH)
        {
            self.refresh(&mut round.warnings)?;
            self.last_refresh = Some(Instant::now());
            self.full_round = true;
        }
        self.rebalance()?;
        let stopped = self.read(&mut each, &mut round.read)?;
        round.done = stopped || self.bounded_read_done();
        Ok(round)
    }

    /// The caller delivered the first `delivered` bytes of the output it reported in the last
    /// round: the records that end within them count as delivered (a commit covers them).
    /// Returns how many records that was. The caller's output buffer starts afresh.
    pub fn settle(&mut self, delivered: usize) -> u64 {
        let mut records = 0;
        for mark in self.marks.iter().take_while(|m| m.end <= delivered) {
            match self.unread.as_mut() {
                Some(unread) => unread.written(mark.end, mark.assigned, mark.next),
                None => self.assigned[mark.assigned].delivered = mark.next,
            }
            records += u64::from(mark.record);
        }
        self.marks.clear();
        if let Some(unread) = self.unread.as_mut() {
            unread.round_written(delivered);
        }
        self.take_read();
        if let Some(topic) = self.deleted.take() {
            let warning = self.forget_topic(&topic);
            self.warnings.push(warning);
        }
        records
    }

    /// From now on, output counts as delivered (a commit covers it) only once its reader has
    /// taken it: `probe` says how many of the bytes written so far it has not (a pipe's
    /// unread bytes). See `unread`.
    pub fn commit_only_what_is_read(&mut self, probe: UnreadProbe) {
        self.unread = Some(Unread::new(probe));
    }

    /// Bytes of settled output that the reader has not taken yet (0 without a probe).
    pub fn unread_output(&mut self) -> u64 {
        self.unread.as_mut().map_or(0, Unread::unread)
    }

    /// Moves what a commit covers as far as the reader has taken the output.
    fn take_read(&mut self) {
        let assigned = &mut self.assigned;
        if let Some(unread) = self.unread.as_mut() {
            unread.take_read(|index, next| assigned[index].delivered = next);
        }
    }

    /// Drops the assigned partitions `keep` refuses, keeping the unread output's positions
    /// pointed at the partitions that stay.
    fn retain_assigned(&mut self, keep: impl Fn(&Assigned) -> bool) {
        let mut kept = 0;
        let new_index: Vec<Option<usize>> = self
            .assigned
            .iter()
            .map(|a| {
                keep(a).then(|| {
                    kept += 1;
                    kept - 1
                })
            })
            .collect();
        self.assigned.retain(|a| keep(a));
        self.backend.retain(&new_index);
        if let Some(unread) = self.unread.as_mut() {
            unread.reindex(&new_index);
        }
    }

    /// How many partitions the consumer reads now (for a group member, its share once
    /// assigned).
    pub fn assigned_partitions(&self) -> usize {
        self.assigned.len()
    }

    /// Records left before every partition reaches the end it had when assigned (for a
    /// progress bar with `until_end`); `None` until partitions are assigned.
    pub fn remaining_to_end(&self) -> Option<u64> {
        self.started.then(|| {
            self.assigned
                .iter()
                .map(|a| (a.end_target - a.position).max(0) as u64)
                .sum()
        })
    }

    /// Commits the delivered positions every `auto.commit.interval.ms` (group members with
    /// auto-commit only).
    pub fn auto_commit(&mut self) -> Result<()> {
        let Some(g) = self.config.group.as_ref().filter(|g| g.auto_commit) else {
            return Ok(());
        };
        if self.last_commit.elapsed() < g.auto_commit_interval {
            return Ok(());
        }
        self.take_read();
        let positions = self.positions();
        // A failed commit is tried again at the next interval, not at every round.
        self.last_commit = Instant::now();
        self.backend.commit(&positions)
    }

    /// Commits the delivered positions (when auto-commit is on) and leaves the group, as
    /// Kafka's consumer does on close.
    pub fn close(mut self) -> Result<()> {
        self.take_read();
        let positions = self.positions();
        self.backend.leave(&positions)
    }

    /// The delivered position of every assigned partition: a commit never covers a record
    /// that the caller did not deliver.
    fn positions(&self) -> BTreeMap<TopicPartition, i64> {
        positions_of(&self.assigned)
    }

    /// Where a partition starts when nothing says otherwise: `auto.offset.reset`, except that
    /// partitions which appeared after the consumer started are read from their beginning,
    /// since every record in them was written after the consumer started waiting.
    fn default_start(&self, tp: &TopicPartition, start: i64, end: i64) -> i64 {
        if self.started && !self.initial.contains(tp) {
            return start;
        }
        match self.config.reset {
            OffsetReset::Earliest => start,
            OffsetReset::Latest => end,
        }
    }

    /// `until_end` / `until_time`: whether every assigned partition is finished.
    fn bounded_read_done(&self) -> bool {
        if !self.started {
            return false;
        }
        if self.config.until_end {
            return self.assigned.iter().all(|a| a.position >= a.end_target);
        }
        if let Some(until) = self.config.until_time {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            return self
                .assigned
                .iter()
                .all(|a| a.past_until || (a.caught_up && now > until));
        }
        false
    }

    /// Re-reads topic metadata: the subscription's topics and partition counts; without a
    /// group, assigns new topics and partitions. Warns once about a missing topic.
    /// The partition counts of the subscribed topics that exist (every topic for a pattern).
    /// A named topic is created only before it was first seen, as Java's consumer has it
    /// created on subscribing; one deleted while we read it is waited for instead, so that its
    /// next incarnation is read from its start.
    fn existing_topics(&mut self, names: &[String]) -> Result<BTreeMap<String, u32>> {
        if matches!(self.config.subscription, Subscription::Pattern(_)) {
            return self.backend.topics(None, false);
        }
        let (seen, new): (Vec<String>, Vec<String>) = names
            .iter()
            .cloned()
            .partition(|name| self.subscription.contains_key(name));
        let mut existing = BTreeMap::new();
        if !seen.is_empty() {
            existing = self.backend.topics(Some(&seen), false)?;
        }
        // A name no topic can have is refused at once, as Kafka's consumer refuses it (a
        // cluster answers it with INVALID_TOPIC_EXCEPTION, which is no reason to wait).
        for name in &new {
            crate::kafka::topic_name::validate(name).map_err(|e| {
                ClientError::kafka(kafka_protocol::ResponseError::InvalidTopicException, e)
            })?;
        }
        if !new.is_empty() {
            let auto_create = self.config.allow_auto_create_topics;
            if auto_create
                && let Subscription::Partition {
                    topic, partition, ..
                } = &self.config.subscription
                && !self.backend.has_topic(topic)?
                && let Some(count) = self.backend.auto_created_partitions()?
                && *partition >= count
            {
                // Created now, the topic would not have the partition asked for: refuse before
                // creating anything, rather than fail after.
                return Err(ClientError::kafka(
                    kafka_protocol::ResponseError::UnknownTopicOrPartition,
                    format!(
                        "Topic '{topic}' does not exist, and created now it would have {count} partition(s) (num.partitions); partition {partition} would not exist: create it with kafka-topics --create --partitions"
                    ),
                ));
            }
            existing.extend(self.backend.topics(Some(&new), auto_create)?);
        }
        Ok(existing)
    }

    fn refresh(&mut self, warnings: &mut Vec<String>) -> Result<()> {
        let wanted: Vec<(String, Option<u32>, Option<Start>)> = match &self.config.subscription {
            Subscription::Topic(t) => vec![(t.clone(), None, None)],
            Subscription::Partition {
                topic,
                partition,
                start,
            } => vec![(topic.clone(), Some(*partition), Some(*start))],
            Subscription::Pattern(_) => Vec::new(),
        };
        let names: Vec<String> = wanted.iter().map(|w| w.0.clone()).collect();
        let existing = self.existing_topics(&names)?;
        let pattern = match &self.config.subscription {
            Subscription::Pattern(re) => Some(re.clone()),
            _ => None,
        };
        let wanted = match &pattern {
            Some(re) => existing
                .keys()
                .filter(|n| re.is_match(n))
                .map(|n| (n.clone(), None, None))
                .collect(),
            None => wanted,
        };
        let mut subscription = BTreeMap::new();
        for (topic, only, start) in wanted {
            let Some(&partitions) = existing.get(&topic) else {
                if self.subscription.contains_key(&topic) {
                    warnings.push(self.forget_topic(&topic));
                } else if pattern.is_none() && !self.warned_missing {
                    warnings.push(format!(
                        "WARN: Topic '{topic}' does not exist in {} yet; waiting for it to be created.",
                        self.backend.place()
                    ));
                    self.warned_missing = true;
                }
                continue;
            };
            if let Some(p) = only
                && p >= partitions
            {
                return Err(ClientError::kafka(
                    kafka_protocol::ResponseError::UnknownTopicOrPartition,
                    format!(
                        "Topic '{topic}' has {} partition(s) (0..{}); partition {p} does not exist",
                        partitions,
                        partitions - 1
                    ),
                ));
            }
            if !self.started {
                self.initial
                    .extend((0..partitions).map(|p| (topic.clone(), p as i32)));
            }
            subscription.insert(topic.clone(), partitions);
            if self.in_group() {
                continue;
            }
            let (first, last) = match only {
                Some(p) => (p, p + 1),
                None => (0, partitions),
            };
            // A set, not a scan of the assignment per partition: that was quadratic, 10^8
            // comparisons for a topic of 10,000 partitions.
            let held: HashSet<u32> = self
                .assigned
                .iter()
                .filter(|a| a.topic == topic)
                .map(|a| a.partition)
                .collect();
            for p in first..last {
                if held.contains(&p) {
                    continue;
                }
                self.assign((topic.clone(), p as i32), |c, tp, opened| {
                    let (lo, hi) = (opened.start, opened.end);
                    match start {
                        _ if c.started => lo,
                        Some(Start::Earliest) => lo,
                        Some(Start::Latest) => hi,
                        Some(Start::Offset(o)) if (lo..=hi).contains(&o) => o,
                        _ => c.default_start(tp, lo, hi),
                    }
                })?;
            }
        }
        self.subscription = subscription;
        self.started = true;
        Ok(())
    }

    /// A subscribed topic was deleted: drop its partitions and, as Kafka's consumer does, keep
    /// waiting; if it is created again it is read from its start. Returns the warning.
    fn forget_topic(&mut self, topic: &str) -> String {
        self.warned_missing = true;
        self.full_round = true;
        self.retain_assigned(|a| a.topic != topic);
        self.subscription.remove(topic);
        self.initial.retain(|(t, _)| t != topic);
        format!("WARN: Topic '{topic}' was deleted; waiting for it to be created again.")
    }

    /// Whether partitions come from a group's assignment rather than from the subscription.
    fn in_group(&self) -> bool {
        self.backend.in_group()
    }

    /// Opens partition `tp` on the backend and assigns it, at the first offset of the
    /// `from_time` asked for if any, else where `start` picks from its bounds.
    fn assign(
        &mut self,
        tp: TopicPartition,
        start: impl FnOnce(&Consumer, &TopicPartition, &Opened) -> i64,
    ) -> Result<()> {
        // The engine follows partitions as the backends number them, from 0; only a broker
        // gone wrong would assign a negative one.
        let Ok(partition) = u32::try_from(tp.1) else {
            return Err(ClientError::kafka(
                kafka_protocol::ResponseError::UnknownTopicOrPartition,
                format!("partition {}-{} does not exist", tp.0, tp.1),
            ));
        };
        let opened = self.backend.open(&tp.0, partition, self.config.from_time)?;
        let position = match opened.at_time {
            Some(at) => at,
            None => start(self, &tp, &opened),
        };
        let (topic, _) = tp;
        self.assigned
            .push(Assigned::new(topic, partition, position, opened.end));
        Ok(())
    }

    /// Group members: heartbeat, follow the group's assignment (drop revoked partitions, start
    /// acquired ones at their committed offset or by `auto.offset.reset`).
    fn rebalance(&mut self) -> Result<()> {
        if !self.in_group() {
            return Ok(());
        }
        // A revoked partition's commit covers what the reader took.
        self.take_read();
        let AssignmentChange {
            acquired, revoked, ..
        } = self
            .backend
            .poll_group(&self.subscription, &self.assigned)?;
        if acquired.is_empty() && revoked.is_empty() {
            return Ok(());
        }
        self.full_round = true;
        let revoked: HashSet<TopicPartition> = revoked.into_iter().collect();
        self.retain_assigned(|a| !revoked.contains(&(a.topic.clone(), a.partition as i32)));
        for (tp, committed) in acquired {
            self.assign(tp, |c, tp, opened| {
                let (lo, hi) = (opened.start, opened.end);
                match committed {
                    Some(o) if (lo..=hi).contains(&o) => o,
                    _ => c.default_start(tp, lo, hi),
                }
            })?;
        }
        Ok(())
    }
}
