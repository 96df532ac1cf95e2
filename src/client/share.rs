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
//! process (`local::share`); on a cluster, share groups are not served yet.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::{Backend, Client, ClientError, Result};
use crate::kafka::share::AcknowledgeType;
use crate::kafka::uuid::random_uuid_string;
use crate::local::LogDir;
use crate::local::share::{AckRun, ShareMember, SharePartitionExchange};
use crate::record::{BatchHeader, BatchIter, RecordRef, TimestampType, for_each_record_crc};

/// How often the subscribed topics' partitions are looked up again.
const METADATA_REFRESH: Duration = Duration::from_millis(500);
/// How long an empty poll waits before it asks for records again.
const POLL_INTERVAL: Duration = Duration::from_millis(50);
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

/// A member of a share group.
#[derive(Debug)]
pub struct ShareConsumer {
    config: ShareConsumerConfig,
    member: Option<ShareMember>,
    dir: LogDir,
    /// The subscribed partitions, refreshed every [`METADATA_REFRESH`].
    partitions: Vec<(String, i32)>,
    last_refresh: Option<Instant>,
    /// Where the next poll starts among the partitions, so that each gets its turn first.
    rotation: usize,
    /// Acknowledgements to send, per partition, in runs `(first, last, type)`.
    pending: BTreeMap<(String, i32), Vec<AckRun>>,
    buf: Vec<u8>,
    scratch: Vec<u8>,
}

impl Client {
    /// A new member of the share group `config.group_id`, reading `config.topics`.
    pub fn into_share_consumer(self, config: ShareConsumerConfig) -> Result<ShareConsumer> {
        match self.backend {
            Backend::Local(dir) => {
                let member =
                    ShareMember::join(dir.root(), &config.group_id, &random_uuid_string())?;
                Ok(ShareConsumer {
                    config,
                    member: Some(member),
                    dir,
                    partitions: Vec::new(),
                    last_refresh: None,
                    rotation: 0,
                    pending: BTreeMap::new(),
                    buf: Vec::new(),
                    scratch: Vec::new(),
                })
            }
            Backend::Remote(_) => Err(ClientError::kafka(
                kafka_protocol::ResponseError::UnsupportedVersion,
                "kafkit's share consumer reads share groups on the embedded log (--log-dir) only so far; a cluster's share groups are not supported yet",
            )),
        }
    }
}

impl ShareConsumer {
    /// The member id the group knows this consumer by.
    pub fn member_id(&self) -> &str {
        self.member.as_ref().map_or("", |m| m.member_id())
    }

    /// Acknowledges a record a poll handed out; sent with the next poll or the close.
    pub fn acknowledge(&mut self, topic: &str, partition: i32, offset: i64, kind: AcknowledgeType) {
        let key = (topic.to_string(), partition);
        push_ack(self.pending.entry(key).or_default(), offset, kind);
    }

    /// Sends the acknowledgements made since the last poll, then hands the records acquired
    /// to `each` (in offset order per partition) until it returns `false`; waits up to
    /// `timeout` for records when none are available.
    pub fn poll(
        &mut self,
        timeout: Duration,
        mut each: impl FnMut(SharedRecord<'_, '_>) -> bool,
    ) -> Result<ShareRound> {
        let deadline = Instant::now() + timeout;
        let mut round = ShareRound::default();
        loop {
            if self
                .last_refresh
                .is_none_or(|t| t.elapsed() >= METADATA_REFRESH)
            {
                self.refresh()?;
            }
            let mut exchanges = self.exchanges(true);
            let member = self.member.as_mut().expect("open until closed");
            member.exchange(&self.dir, &mut exchanges, self.config.max_poll_records)?;
            self.pending.clear();
            self.rotation = self.rotation.wrapping_add(1);
            let mut stopped = false;
            for p in exchanges.iter_mut() {
                if let Some(e) = &p.ack_error {
                    round.refused.push(format!(
                        "the acknowledgement of offset {} of {}-{} was refused: the record is no longer held by this member (its lock expired, or the group was reset)",
                        e.offset, p.topic, p.partition
                    ));
                }
                if !p.acquired.is_empty() {
                    stopped = self.deliver(p, stopped, &mut each, &mut round)?;
                }
            }
            if round.records > 0 || stopped || Instant::now() >= deadline {
                return Ok(round);
            }
            std::thread::sleep(
                POLL_INTERVAL.min(deadline.saturating_duration_since(Instant::now())),
            );
        }
    }

    /// Leaves the group: sends the last acknowledgements and releases every record still
    /// held (those handed out and not acknowledged included).
    pub fn close(mut self) -> Result<()> {
        let exchanges = self.exchanges(false);
        let member = self.member.take().expect("open until closed");
        Ok(member.leave(&self.dir, exchanges)?)
    }

    /// Looks up the subscribed topics' partitions; a topic that does not exist has none yet.
    fn refresh(&mut self) -> Result<()> {
        let mut partitions = Vec::new();
        for topic in &self.config.topics {
            if let Some(meta) = self.dir.topic(topic)? {
                partitions.extend((0..meta.partitions as i32).map(|p| (topic.clone(), p)));
            }
        }
        self.partitions = partitions;
        self.last_refresh = Some(Instant::now());
        Ok(())
    }

    /// One exchange per subscribed partition (starting at the rotation), plus one for each
    /// other partition with acknowledgements pending; `acquire`: each asks for records.
    fn exchanges(&self, acquire: bool) -> Vec<SharePartitionExchange> {
        let mut exchanges: Vec<SharePartitionExchange> = Vec::new();
        let n = self.partitions.len();
        for i in 0..n {
            let (topic, partition) = &self.partitions[(i + self.rotation) % n];
            exchanges.push(SharePartitionExchange::new(topic, *partition, acquire));
        }
        for ((topic, partition), acks) in &self.pending {
            let existing = exchanges
                .iter_mut()
                .find(|e| e.topic == *topic && e.partition == *partition);
            match existing {
                Some(e) => e.acks = acks.clone(),
                None => {
                    let mut e = SharePartitionExchange::new(topic, *partition, false);
                    e.acks = acks.clone();
                    exchanges.push(e);
                }
            }
        }
        exchanges
    }

    /// Reads the records `p` acquired and hands them to `each`; offsets without a record for
    /// the caller (control records, compacted away) are acknowledged as gaps, and those left
    /// when the caller stopped are released. Returns whether the caller stopped.
    fn deliver(
        &mut self,
        p: &mut SharePartitionExchange,
        mut stopped: bool,
        each: &mut impl FnMut(SharedRecord<'_, '_>) -> bool,
        round: &mut ShareRound,
    ) -> Result<bool> {
        let key = (p.topic.clone(), p.partition);
        let (log, snapshot) = p.log.take().expect("a snapshot with the acquired records");
        let runs = &p.acquired;
        let last = runs.last().map_or(-1, |r| r.last);
        let mut handed: Vec<i64> = Vec::new();
        let mut next = runs[0].first;
        let mut run = 0;
        let mut acks = Vec::new();
        // Every acquired offset below `next` is dealt with; those not handed out are gaps.
        while !stopped && next <= last {
            log.read_into_upto(&snapshot, next, READ_BYTES, last + 1, &mut self.buf)?;
            if self.buf.is_empty() {
                break;
            }
            for batch in BatchIter::new(&self.buf) {
                let batch = batch?;
                let header = BatchHeader::parse(batch)?;
                if !header.is_control() {
                    let ts_type = header.timestamp_type();
                    for_each_record_crc(batch, &mut self.scratch, false, |record| {
                        if stopped {
                            return Ok(());
                        }
                        while run < runs.len() && runs[run].last < record.offset {
                            run += 1;
                        }
                        let Some(r) = runs.get(run).filter(|r| r.first <= record.offset) else {
                            return Ok(());
                        };
                        handed.push(record.offset);
                        round.records += 1;
                        if !each(SharedRecord {
                            topic: &p.topic,
                            partition: p.partition,
                            timestamp_type: ts_type,
                            record: &record,
                            delivery_count: r.delivery_count,
                        }) {
                            stopped = true;
                        }
                        Ok(())
                    })?;
                }
                next = header.next_offset();
                if stopped || next > last {
                    break;
                }
            }
        }
        // What was not handed out: gaps below where reading got to, released above it.
        let mut handed_iter = handed.iter().peekable();
        for r in runs {
            for offset in r.first..=r.last {
                if handed_iter.next_if_eq(&&offset).is_some() {
                    continue;
                }
                let kind = if offset < next && !stopped {
                    AcknowledgeType::Gap
                } else {
                    AcknowledgeType::Release
                };
                push_ack(&mut acks, offset, kind);
            }
        }
        if !acks.is_empty() {
            let pending = self.pending.entry(key.clone()).or_default();
            for (first, last, kind) in acks {
                for offset in first..=last {
                    push_ack(pending, offset, kind);
                }
            }
        }
        Ok(stopped)
    }
}

/// Adds an acknowledgement of `offset` to `acks`, extending the last run when it continues it.
fn push_ack(acks: &mut Vec<AckRun>, offset: i64, kind: AcknowledgeType) {
    match acks.last_mut() {
        Some((_, last, k)) if *last + 1 == offset && *k == kind => *last = offset,
        _ => acks.push((offset, offset, kind)),
    }
}
