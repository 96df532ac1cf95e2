//! The share consumer (KIP-932 share groups, Kafka's queues): the members of one group split
//! the records of the topics they subscribe to, each record delivered to one member at a time,
//! and acknowledge each record: accepted (done), released (delivered again, to any member) or
//! rejected (archived). A record delivered too often is archived.
//!
//! Acknowledgement is explicit, as `share.acknowledgement.mode=explicit`: the caller
//! acknowledges each record it was handed ([`ShareConsumer::acknowledge`]) once it is done
//! with it, and the acknowledgements go with the next poll or the close. A record the caller
//! has not acknowledged stays locked to it (until its lock expires) and is released at the
//! close, so nothing is acknowledged that the caller did not vouch for.
//!
//! On the embedded log the group's state is files in the log dir, shared by every member
//! process (`local::share`); on a cluster, the member speaks ShareGroupHeartbeat, ShareFetch
//! and ShareAcknowledge (`remote::share`). Either way the records come as whole batches with
//! the offsets acquired for this member, which this module hands out.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::{Backend, Client, Result};
use crate::kafka::share::Acquired;
use crate::kafka::share::{AckRun, AcknowledgeType};
use crate::kafka::uuid::random_uuid_string;
use crate::local::share::{ShareMember, SharePartitionExchange};
use crate::local::{LogDir, PartitionLog, Snapshot};
use crate::record::{BatchHeader, BatchIter, RecordRef, TimestampType, for_each_record_crc};
use crate::remote::ShareClient;

/// How often the subscribed topics' partitions are looked up again.
const METADATA_REFRESH: Duration = Duration::from_millis(500);
/// How long an empty poll of the embedded log waits before it asks for records again.
const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The longest a ShareFetch waits at a leader for records.
const FETCH_WAIT: Duration = Duration::from_millis(500);
/// Bytes read from a partition at a time.
const READ_BYTES: usize = 1024 * 1024;

/// A share consumer's settings, from Kafka's consumer properties.
#[derive(Debug, Clone)]
pub struct ShareConsumerConfig {
    /// `group.id`.
    pub group_id: String,
    /// `client.id`.
    pub client_id: String,
    /// The topics to read.
    pub topics: Vec<String>,
    /// `max.poll.records`: the most records one poll acquires.
    pub max_poll_records: usize,
}

/// A record handed to the caller of [`ShareConsumer::poll`].
#[derive(Debug)]
pub struct SharedRecord<'a, 'r> {
    pub topic: &'a str,
    pub partition: i32,
    pub timestamp_type: TimestampType,
    pub record: &'a RecordRef<'r>,
    /// How many times the record has been delivered, this time included.
    pub delivery_count: i16,
}

/// What a poll did besides handing out records.
#[derive(Debug, Default)]
pub struct ShareRound {
    /// Records handed to the caller.
    pub records: u64,
    /// Acknowledgements the group refused (the record's lock had expired and another member
    /// took it, say), one line each.
    pub refused: Vec<String>,
}

/// A partition: topic name and partition.
type Partition = (String, i32);

/// A member of a share group.
#[derive(Debug)]
pub struct ShareConsumer {
    config: ShareConsumerConfig,
    backend: ShareBackend,
    /// Acknowledgements to send, per partition.
    pending: BTreeMap<Partition, Vec<AckRun>>,
    scratch: Vec<u8>,
    /// At most this many records are acquired by a poll (see [`ShareConsumer::acquire_at_most`]).
    acquire_limit: usize,
}

/// Where the group lives.
#[derive(Debug)]
enum ShareBackend {
    /// Boxed, as the other: the two differ in size.
    Local(Box<LocalShare>),
    Remote(Box<ShareClient>),
}

/// A member on the embedded log.
#[derive(Debug)]
struct LocalShare {
    dir: LogDir,
    /// `None` once closed.
    member: Option<ShareMember>,
    /// The subscribed partitions, refreshed every [`METADATA_REFRESH`].
    partitions: Vec<Partition>,
    last_refresh: Option<Instant>,
    /// Where the next exchange starts among the partitions, so that each gets its turn first.
    rotation: usize,
    buf: Vec<u8>,
}

impl Client {
    /// A new member of the share group `config.group_id`, reading `config.topics`.
    pub fn into_share_consumer(self, config: ShareConsumerConfig) -> Result<ShareConsumer> {
        let backend = match self.backend {
            Backend::Local(dir) => {
                let member = ShareMember::join(
                    dir.root(),
                    &config.group_id,
                    &random_uuid_string(),
                    (&config.client_id, &crate::local::group::member::hostname()),
                    &config.topics,
                )?;
                ShareBackend::Local(Box::new(LocalShare {
                    dir,
                    member: Some(member),
                    partitions: Vec::new(),
                    last_refresh: None,
                    rotation: 0,
                    buf: Vec::new(),
                }))
            }
            Backend::Remote(cluster) => ShareBackend::Remote(Box::new(
                cluster.into_share_member(&config.group_id, &config.topics),
            )),
        };
        Ok(ShareConsumer {
            config,
            backend,
            pending: BTreeMap::new(),
            scratch: Vec::new(),
            acquire_limit: usize::MAX,
        })
    }
}

impl ShareConsumer {
    /// Polls acquire at most `n` records (at least one), below `max.poll.records`: a caller
    /// that stops after `n` more records (`--max-messages`) then takes no record it will not
    /// hand out, so it raises no other record's delivery count (each acquisition counts as a
    /// delivery, and `share.delivery.count.limit` of them archive a record).
    pub fn acquire_at_most(&mut self, n: usize) {
        self.acquire_limit = n.max(1);
    }

    fn max_records(&self) -> usize {
        self.config.max_poll_records.min(self.acquire_limit)
    }

    /// The member id the group knows this consumer by.
    pub fn member_id(&self) -> &str {
        match &self.backend {
            ShareBackend::Local(l) => l.member.as_ref().map_or("", |m| m.member_id()),
            ShareBackend::Remote(r) => r.member_id(),
        }
    }

    /// Acknowledges a record a poll handed out; sent with the next poll or the close.
    pub fn acknowledge(&mut self, topic: &str, partition: i32, offset: i64, kind: AcknowledgeType) {
        let key = (topic.to_string(), partition);
        push_ack(self.pending.entry(key).or_default(), offset, kind);
    }

    /// Sends the acknowledgements made since the last poll, then hands the records acquired
    /// to `each` (in offset order per partition) until it returns `false`; waits up to
    /// `timeout` for records when none are available. Records acquired and not handed out
    /// (the caller stopped) are released with the next poll or the close.
    pub fn poll(
        &mut self,
        timeout: Duration,
        mut each: impl FnMut(SharedRecord<'_, '_>) -> bool,
    ) -> Result<ShareRound> {
        let deadline = Instant::now() + timeout;
        let mut round = ShareRound::default();
        let max_records = self.max_records();
        loop {
            let stopped = match &mut self.backend {
                ShareBackend::Local(local) => local.poll(
                    &self.config.topics,
                    &mut self.pending,
                    max_records,
                    &mut self.scratch,
                    &mut each,
                    &mut round,
                )?,
                ShareBackend::Remote(remote) => {
                    let wait = deadline
                        .saturating_duration_since(Instant::now())
                        .min(FETCH_WAIT);
                    let acks = std::mem::take(&mut self.pending);
                    let polled = remote.poll(acks, max_records, wait)?;
                    round.refused.extend(polled.refused);
                    let mut stopped = false;
                    for batch in polled.batches {
                        let mut handout =
                            Handout::new(&batch.topic, batch.partition, &batch.acquired, stopped);
                        handout.take(
                            &batch.records,
                            false,
                            &mut self.scratch,
                            &mut each,
                            &mut round,
                        )?;
                        stopped = handout.stopped;
                        handout.finish(
                            self.pending
                                .entry((batch.topic.clone(), batch.partition))
                                .or_default(),
                        );
                    }
                    stopped
                }
            };
            if round.records > 0 || stopped || Instant::now() >= deadline {
                return Ok(round);
            }
            if matches!(self.backend, ShareBackend::Local(_)) {
                std::thread::sleep(
                    POLL_INTERVAL.min(deadline.saturating_duration_since(Instant::now())),
                );
            }
        }
    }

    /// Leaves the group: sends the last acknowledgements and releases every record still
    /// held (those handed out and not acknowledged included).
    pub fn close(mut self) -> Result<()> {
        let acks = std::mem::take(&mut self.pending);
        match &mut self.backend {
            ShareBackend::Local(local) => {
                let exchanges = exchanges(&[], 0, &acks, false);
                let member = local.member.take().expect("open until closed");
                Ok(member.leave(&local.dir, exchanges)?)
            }
            ShareBackend::Remote(remote) => Ok(remote.close(acks)?),
        }
    }
}

impl LocalShare {
    /// One exchange with the group's files, then the records it acquired handed out. Returns
    /// whether the caller stopped.
    fn poll(
        &mut self,
        topics: &[String],
        pending: &mut BTreeMap<Partition, Vec<AckRun>>,
        max_records: usize,
        scratch: &mut Vec<u8>,
        each: &mut impl FnMut(SharedRecord<'_, '_>) -> bool,
        round: &mut ShareRound,
    ) -> Result<bool> {
        if self
            .last_refresh
            .is_none_or(|t| t.elapsed() >= METADATA_REFRESH)
        {
            self.refresh(topics)?;
        }
        let mut exchanges = exchanges(&self.partitions, self.rotation, pending, true);
        let member = self.member.as_mut().expect("open until closed");
        member.exchange(&self.dir, &mut exchanges, max_records)?;
        pending.clear();
        self.rotation = self.rotation.wrapping_add(1);
        let mut stopped = false;
        for p in exchanges.iter_mut() {
            if let Some(e) = &p.ack_error {
                round.refused.push(format!(
                    "the acknowledgement of offset {} of {}-{} was refused: the record is no longer held by this member (its lock expired, or the group was reset)",
                    e.offset, p.topic, p.partition
                ));
            }
            let Some((log, snapshot)) = p.log.take() else {
                continue;
            };
            let mut handout = Handout::new(&p.topic, p.partition, &p.acquired, stopped);
            handout.read_log(&log, &snapshot, &mut self.buf, scratch, each, round)?;
            stopped = handout.stopped;
            handout.finish(pending.entry((p.topic.clone(), p.partition)).or_default());
        }
        Ok(stopped)
    }

    /// Looks up the subscribed topics' partitions; a topic that does not exist has none yet.
    fn refresh(&mut self, topics: &[String]) -> Result<()> {
        let mut partitions = Vec::new();
        for topic in topics {
            if let Some(meta) = self.dir.topic(topic)? {
                partitions.extend((0..meta.partitions as i32).map(|p| (topic.clone(), p)));
            }
        }
        self.partitions = partitions;
        self.last_refresh = Some(Instant::now());
        Ok(())
    }
}

/// One exchange per partition of `partitions` (starting at `rotation`; `acquire`: each asks
/// for records), plus one for each other partition with acknowledgements in `acks`.
fn exchanges(
    partitions: &[Partition],
    rotation: usize,
    acks: &BTreeMap<Partition, Vec<AckRun>>,
    acquire: bool,
) -> Vec<SharePartitionExchange> {
    let mut exchanges: Vec<SharePartitionExchange> = Vec::new();
    let n = partitions.len();
    for i in 0..n {
        let (topic, partition) = &partitions[(i + rotation) % n];
        exchanges.push(SharePartitionExchange::new(topic, *partition, acquire));
    }
    for ((topic, partition), runs) in acks {
        let existing = exchanges
            .iter_mut()
            .find(|e| e.topic == *topic && e.partition == *partition);
        match existing {
            Some(e) => e.acks = runs.clone(),
            None => {
                let mut e = SharePartitionExchange::new(topic, *partition, false);
                e.acks = runs.clone();
                exchanges.push(e);
            }
        }
    }
    exchanges
}

/// The handing out of one partition's acquired records, from batches that hold them.
struct Handout<'a> {
    topic: &'a str,
    partition: i32,
    runs: &'a [Acquired],
    /// The run the next record may be in.
    run: usize,
    /// The offsets handed to the caller, ascending.
    handed: Vec<i64>,
    /// Every offset below this was read past.
    next: i64,
    /// The caller stopped (here or in an earlier partition): nothing more is handed out.
    stopped: bool,
}

impl<'a> Handout<'a> {
    fn new(topic: &'a str, partition: i32, runs: &'a [Acquired], stopped: bool) -> Handout<'a> {
        Handout {
            topic,
            partition,
            runs,
            run: 0,
            handed: Vec::new(),
            next: runs.first().map_or(0, |r| r.first),
            stopped,
        }
    }

    fn last(&self) -> i64 {
        self.runs.last().map_or(-1, |r| r.last)
    }

    /// Reads the acquired offsets from the embedded log and hands them out.
    fn read_log(
        &mut self,
        log: &PartitionLog,
        snapshot: &Snapshot,
        buf: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
        each: &mut impl FnMut(SharedRecord<'_, '_>) -> bool,
        round: &mut ShareRound,
    ) -> Result<()> {
        while !self.stopped && self.next <= self.last() {
            log.read_into_upto(snapshot, self.next, READ_BYTES, self.last() + 1, buf)?;
            if buf.is_empty() {
                break;
            }
            // The embedded log checked every batch's CRC as it read it.
            self.take(buf, true, scratch, each, round)?;
        }
        Ok(())
    }

    /// Hands out the acquired records among `batches` (whole batches; `verified`: their CRCs
    /// were checked already).
    fn take(
        &mut self,
        batches: &[u8],
        verified: bool,
        scratch: &mut Vec<u8>,
        each: &mut impl FnMut(SharedRecord<'_, '_>) -> bool,
        round: &mut ShareRound,
    ) -> Result<()> {
        let last = self.last();
        for batch in BatchIter::new(batches) {
            if self.stopped || self.next > last {
                break;
            }
            let batch = batch?;
            let header = BatchHeader::parse(batch)?;
            if !header.is_control() && header.next_offset() > self.next {
                let ts_type = header.timestamp_type();
                for_each_record_crc(batch, scratch, !verified, |record| {
                    if self.stopped {
                        return Ok(());
                    }
                    while self.run < self.runs.len() && self.runs[self.run].last < record.offset {
                        self.run += 1;
                    }
                    let Some(r) = self.runs.get(self.run).filter(|r| r.first <= record.offset)
                    else {
                        return Ok(());
                    };
                    if self.handed.last().is_some_and(|h| *h >= record.offset) {
                        return Ok(());
                    }
                    self.handed.push(record.offset);
                    round.records += 1;
                    if !each(SharedRecord {
                        topic: self.topic,
                        partition: self.partition,
                        timestamp_type: ts_type,
                        record: &record,
                        delivery_count: r.delivery_count,
                    }) {
                        self.stopped = true;
                    }
                    Ok(())
                })?;
            }
            self.next = self.next.max(header.next_offset());
        }
        Ok(())
    }

    /// The acknowledgements of what was not handed out: gaps for offsets read past (control
    /// records, records compacted away), releases for the rest (the caller stopped).
    fn finish(self, acks: &mut Vec<AckRun>) {
        let mut handed = self.handed.iter().peekable();
        for r in self.runs {
            for offset in r.first..=r.last {
                if handed.next_if(|h| **h == offset).is_some() {
                    continue;
                }
                let kind = if offset < self.next && !self.stopped {
                    AcknowledgeType::Gap
                } else {
                    AcknowledgeType::Release
                };
                push_ack(acks, offset, kind);
            }
        }
    }
}

/// Adds an acknowledgement of `offset` to `acks`, extending the last run when it continues it.
fn push_ack(acks: &mut Vec<AckRun>, offset: i64, kind: AcknowledgeType) {
    match acks.last_mut() {
        Some((_, last, k)) if *last + 1 == offset && *k == kind => *last = offset,
        _ => acks.push((offset, offset, kind)),
    }
}
