//! The producer: Metadata for one topic (allowing the broker to auto-create it, as Kafka's
//! producer does), InitProducerId for idempotence, and Produce requests carrying record batches
//! built by the caller ([`crate::record::BatchBuilder`]), each sent to its partition's leader.
//!
//! Requests are pipelined: up to `max.in.flight.requests.per.connection` Produce requests go to
//! a leader before the first answer is read (a broker handles one connection's requests in
//! order and answers them in order). A request holds at most one batch per partition (Produce
//! v3+ accepts exactly one), so a partition's batches reach its leader in order, each with the
//! sequence numbers its builder gave it. The caller is blocked only while a leader's pipeline
//! is full and more is waiting for it, or when it asks to flush.
//!
//! On any error the producer stops sending and reads every answer still due (behind a failed
//! batch, the idempotent broker refuses the later ones of the same partition as out of order,
//! which is expected then). Then it waits `retry.backoff.ms` (doubling up to 1 s), refreshes
//! the metadata (over a new connection if every one was lost) and sends again from the first
//! unacknowledged batch of each partition, in order, with the original sequence numbers: a
//! batch the broker had written before failing comes back as a duplicate and counts as
//! delivered. As in Kafka's producer, a batch sent and failed counts against `retries`, while a
//! leader that is unknown or unreachable (a broker restarting) only delays it, up to
//! `delivery.timeout.ms` after it was queued.
//!
//! One answer is not a failed send: REQUEST_TIMED_OUT to an idempotent producer. The leader
//! has written the batch and waits for a replica that may be dead (until the controller fences
//! it, 9 s by default); sending it again with the same sequence number only waits again, so it
//! costs no retry, and `delivery.timeout.ms` bounds it. Kafka's producer counts it: with its
//! console producer's defaults (3 retries of 1.5 s) a failover longer than about 6 s loses
//! records. So that a live leader gives this answer before the request times out here (which
//! does cost a retry: the broker may be hung), an idempotent Produce asks the leader to answer
//! within half of `request.timeout.ms`; Kafka's producer asks for all of it.
//!
//! With acks=0 the broker never answers, and a batch sent to a leader that has not yet created
//! its replica (a topic created a moment ago) is dropped while the broker closes the connection.
//! So before the first acks=0 batch to a partition, a ListOffsets asks its leader whether it is
//! ready (retrying as above), and [`Producer::close`] ends with a request that has an answer, so
//! a connection the broker closed is reported instead of silently losing records.
//!
//! # Modules
//!
//! This file holds the [`Producer`] facade and the state its parts share:
//!
//! - `sender`: the pipeline: Produce requests to leaders, their answers.
//! - `retry`: failed sends, expiry after `delivery.timeout.ms`, backoff and route refresh.
//! - `gap`: a batch written by a broker that then died unclean, refused as out of order when
//!   sent again.
//! - `routing`: Metadata (the topic's route), InitProducerId, the acks=0 leader probe,
//!   connections to leaders.
//! - `transactions`: a transactional id's coordinator: InitProducerId, AddPartitionsToTxn,
//!   EndTxn.

mod gap;
mod retry;
mod routing;
mod sender;
mod transactions;

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::ResponseError;
use tokio::runtime::Runtime;
use tokio::time::Instant;

use self::routing::{TopicRoute, fetch_route, init_producer_id, wait_for_topic};
use super::Cluster;
use super::admin::Client;
use super::error::{RemoteError, Result};
use super::net::connection::{ClientConfig, Connection};
use crate::kafka::producer::ProducerSettings;
use crate::record::BatchHeader;

/// UNKNOWN_TOPIC_OR_PARTITION.
const UNKNOWN_TOPIC: i16 = 3;
/// LEADER_NOT_AVAILABLE.
const LEADER_NOT_AVAILABLE: i16 = 5;
/// NOT_LEADER_OR_FOLLOWER.
const NOT_LEADER: i16 = 6;
/// NOT_ENOUGH_REPLICAS: fewer in-sync replicas than `min.insync.replicas`, checked before the
/// append (NOT_ENOUGH_REPLICAS_AFTER_APPEND, 20, is the one after).
const NOT_ENOUGH_REPLICAS: i16 = 19;
/// OUT_OF_ORDER_SEQUENCE_NUMBER: a batch whose predecessor the broker does not have.
const OUT_OF_ORDER_SEQUENCE: i16 = 45;
/// DUPLICATE_SEQUENCE_NUMBER: the broker already has this batch (an idempotent retry).
const DUPLICATE_SEQUENCE: i16 = 46;
/// REQUEST_TIMED_OUT: the leader wrote the batch but its in-sync replicas did not confirm it
/// within the request's timeout (acks=all).
const REQUEST_TIMED_OUT: i16 = 7;
/// The longest wait between two retries (Kafka's `retry.backoff.max.ms`).
const MAX_BACKOFF: Duration = Duration::from_millis(1000);

/// Where a queued batch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    /// To be sent (again).
    Queued,
    /// Sent; its answer is due.
    InFlight,
    /// Acknowledged while an earlier batch of its partition was not (only without idempotence,
    /// where batches may be reordered as in Kafka); dropped once the earlier ones are.
    Acked,
    /// In its leader's log, as `gap` found, but not known to be committed there: acknowledged
    /// once a later batch of its partition is.
    Covered,
}

/// One batch of a partition, until it is acknowledged.
#[derive(Debug)]
struct Slot {
    batch: Bytes,
    state: SlotState,
    queued_at: Instant,
    /// A send of it ended without a clear answer (a lost connection, REQUEST_TIMED_OUT): the
    /// broker may have written it. A batch only ever refused cannot be in the log.
    maybe_written: bool,
}

/// The unacknowledged batches of one partition, oldest first, and its retry state.
#[derive(Debug, Default)]
struct PartitionQueue {
    slots: VecDeque<Slot>,
    /// Failed sends of the oldest batch: Kafka's `retries` count.
    attempts: u32,
    /// A batch of this partition failed since the last recovery: the later ones that come back
    /// out of order are victims of that failure, not failures of their own.
    failed: bool,
    /// A batch of this partition came back REQUEST_TIMED_OUT since the last recovery: held by
    /// its leader, not failed, so it costs no retry; the later ones refused as out of order are
    /// its victims too. Other errors still count.
    held: bool,
    /// The last error, for the message when a batch expires.
    last_error: Option<String>,
    /// The broker refused the oldest batch as out of order (this message): before sending
    /// again, ask it what it has (see `gap`).
    gap: Option<String>,
    /// Records of this partition acknowledged so far, counting from the first.
    acked_records: u64,
    /// A batch of this partition was acknowledged under this producer id. Until then an
    /// idempotent producer sends it one batch at a time: a leader that does not know the
    /// producer takes any sequence number as its first, so a later batch could be written while
    /// an earlier one, refused (say, by a broker that has not yet seen the topic), is not.
    proven: bool,
}

/// A Produce request whose answer is due.
#[derive(Debug)]
struct InFlight {
    id: i32,
    version: i16,
    partitions: Vec<i32>,
}

/// A producer for one topic of a cluster, with the blocking interface of the console producer.
#[derive(Debug)]
pub struct Producer {
    runtime: Runtime,
    sender: Sender,
}

/// The producer's state, apart from the runtime that drives it.
#[derive(Debug)]
struct Sender {
    client: Client,
    config: ClientConfig,
    topic: String,
    settings: ProducerSettings,
    route: Option<TopicRoute>,
    /// Connections to partition leaders, by broker id.
    conns: HashMap<i32, Connection>,
    /// Producer id and epoch, when idempotent.
    producer: Option<(i64, i16)>,
    /// Partitions whose leader has been seen ready to take acks=0 batches.
    ready: HashSet<i32>,
    queues: Vec<PartitionQueue>,
    /// Requests whose answers are due, by leader, oldest first.
    in_flight: HashMap<i32, VecDeque<InFlight>>,
    /// Sending stopped after an error: recover once every answer due has been read.
    recovering: bool,
    backoff: Duration,
    /// The error that ended the producer: every later call returns it again.
    failed: Option<(i16, String)>,
    /// The transactional id's coordinator, when the records go in transactions.
    txn: Option<transactions::TxnCoordinator>,
}

impl Cluster {
    /// Turns the connected cluster into a producer for `topic`. Nothing is sent until
    /// [`Producer::partitions`] is first called.
    pub fn into_producer(self, topic: &str, settings: ProducerSettings) -> Producer {
        let settings_txn = settings
            .transactional_id
            .as_deref()
            .map(|id| transactions::TxnCoordinator::new(id, settings.transaction_timeout_ms));
        Producer {
            runtime: self.runtime,
            sender: Sender {
                client: self.client,
                config: self.config,
                topic: topic.to_string(),
                backoff: settings.retry_backoff,
                settings,
                route: None,
                conns: HashMap::new(),
                producer: None,
                ready: HashSet::new(),
                queues: Vec::new(),
                in_flight: HashMap::new(),
                recovering: false,
                failed: None,
                txn: settings_txn,
            },
        }
    }
}

impl Producer {
    /// The topic's partition count, fetching its metadata (and a producer id when idempotent)
    /// on first use; fails when the topic does not exist and the cluster does not create it.
    pub fn partitions(&mut self) -> Result<u32> {
        let s = &mut self.sender;
        if s.route.is_none() {
            let route =
                self.runtime
                    .block_on(wait_for_topic(&mut s.client, &s.topic, &s.settings))?;
            if let Some(txn) = &mut s.txn {
                s.producer = Some(
                    self.runtime
                        .block_on(txn.init(&mut s.client, &s.settings))?,
                );
            } else if s.settings.idempotence {
                s.producer = Some(
                    self.runtime
                        .block_on(init_producer_id(&mut s.client, &s.settings))?,
                );
            }
            s.queues = (0..route.leaders.len())
                .map(|_| PartitionQueue::default())
                .collect();
            s.route = Some(route);
        }
        Ok(s.queues.len() as u32)
    }

    /// Adds every partition of the topic to the transaction that begins (transactional
    /// producers only).
    pub fn begin_transaction(&mut self) -> Result<()> {
        let s = &mut self.sender;
        let (Some(txn), Some(producer)) = (&mut s.txn, s.producer) else {
            return Ok(());
        };
        let partitions = (0..s.queues.len() as i32).collect();
        self.runtime.block_on(txn.add_partitions(
            &mut s.client,
            &s.settings,
            producer,
            &s.topic,
            partitions,
        ))
    }

    /// Sends a consumer group's offsets in the transaction (transactional producers only).
    pub fn send_offsets_to_transaction(
        &mut self,
        group: &str,
        offsets: &[(crate::kafka::TopicPartition, i64)],
    ) -> Result<()> {
        self.sender.check()?;
        let s = &mut self.sender;
        let (Some(txn), Some(producer)) = (&mut s.txn, s.producer) else {
            return Ok(());
        };
        self.runtime.block_on(txn.send_offsets(
            &mut s.client,
            &s.settings,
            producer,
            group,
            offsets,
        ))
    }

    /// Commits or aborts the transaction, once every batch of it is acknowledged
    /// ([`Producer::flush`] first).
    pub fn end_transaction(&mut self, commit: bool) -> Result<()> {
        self.sender.check()?;
        let s = &mut self.sender;
        let (Some(txn), Some(producer)) = (&mut s.txn, s.producer) else {
            return Ok(());
        };
        self.runtime
            .block_on(txn.end(&mut s.client, &s.settings, producer, commit))
    }

    /// The producer id and epoch to write into batches, when idempotent.
    pub fn producer_id(&self) -> Option<(i64, i16)> {
        self.sender.producer
    }

    /// The topic's `max.message.bytes` (DescribeConfigs); `None` when the cluster does not say
    /// (no rights to describe configs, say).
    pub fn max_message_bytes(&mut self) -> Option<usize> {
        let s = &mut self.sender;
        let names = [s.topic.clone()];
        let answer = self
            .runtime
            .block_on(s.client.describe_configs(&names))
            .ok()?;
        let (_, entries) = answer.into_iter().next()?;
        entries
            .ok()?
            .into_iter()
            .find(|e| e.name == "max.message.bytes")?
            .value?
            .parse()
            .ok()
    }

    /// Queues a finished batch of `partition` (batches of a partition in the order built) and
    /// sends what the pipelines allow; blocks only while its leader's pipeline is full.
    pub fn push(&mut self, partition: u32, batch: Bytes) -> Result<()> {
        self.sender.check()?;
        let Some(queue) = self.sender.queues.get_mut(partition as usize) else {
            return Err(RemoteError::Broker {
                code: UNKNOWN_TOPIC,
                message: format!("no partition {partition} in topic {}", self.sender.topic),
            });
        };
        queue.slots.push_back(Slot {
            batch,
            state: SlotState::Queued,
            queued_at: Instant::now(),
            maybe_written: false,
        });
        let result = self.runtime.block_on(self.sender.drive(false));
        self.sender.remember(result)
    }

    /// Reads the answers that arrive within `wait` (zero: those already there) without
    /// blocking on the rest, and sends what the pipelines then allow (see
    /// [`Producer::acked_records`]).
    pub fn poll(&mut self, wait: Duration) -> Result<()> {
        self.sender.check()?;
        let deadline = Instant::now() + wait;
        let result = self.runtime.block_on(self.sender.poll(deadline));
        self.sender.remember(result)
    }

    /// Records acknowledged per partition so far, each partition's in the order sent: a
    /// record is acknowledged once the batch holding it and every earlier batch of its
    /// partition are.
    pub fn acked_records(&self) -> impl Iterator<Item = u64> + '_ {
        self.sender.queues.iter().map(|q| q.acked_records)
    }

    /// Sends every queued batch and returns once all are acknowledged as `acks` asks (at once
    /// with acks=0).
    pub fn flush(&mut self) -> Result<()> {
        self.sender.check()?;
        let result = self.runtime.block_on(self.sender.drive(true));
        self.sender.remember(result)
    }

    /// Ends the producer. With acks=0 it first asks each leader a question with an answer: the
    /// broker handles a connection's requests in order, so the answer proves every batch before
    /// it was read, and a connection the broker closed (after an error it could not report) is
    /// an error here rather than records lost without a word.
    pub fn close(mut self) -> Result<()> {
        if self.sender.settings.acks != 0 {
            return Ok(());
        }
        let topic = self.sender.topic.clone();
        let conns = std::mem::take(&mut self.sender.conns);
        self.runtime.block_on(async move {
            for (leader, mut conn) in conns {
                if let Err(e) = fetch_route(&mut conn, &topic).await {
                    return Err(RemoteError::Broker {
                        code: -1,
                        message: format!(
                            "broker {leader} closed the connection while taking acks=0 records for topic {topic}, so some may be lost ({e}); produce with --request-required-acks 1 to see the broker's error"
                        ),
                    });
                }
            }
            Ok(())
        })
    }
}

/// The number of records in a batch (its last offset delta + 1), for messages.
fn record_count(batch: &[u8]) -> i64 {
    BatchHeader::parse(batch).map_or(0, |h| h.last_offset_delta as i64 + 1)
}

impl PartitionQueue {
    /// Drops acknowledged batches from the front, counting their records.
    fn pop_acked(&mut self) {
        while self
            .slots
            .front()
            .is_some_and(|s| s.state == SlotState::Acked)
        {
            if let Some(slot) = self.slots.pop_front() {
                self.acked_records += record_count(&slot.batch) as u64;
            }
        }
    }
}

/// Whether a Produce answer with `code` leaves the batch possibly written: every error but
/// those a leader gives before appending anything (no leader here, or the batch refused by
/// its checks: framing, size, records, policy, producer state).
fn may_have_written(code: i16) -> bool {
    use ResponseError as E;
    let refused_before_append = matches!(
        ResponseError::try_from_code(code),
        Some(
            E::CorruptMessage
                | E::MessageTooLarge
                | E::RecordListTooLarge
                | E::InvalidRequiredAcks
                | E::TopicAuthorizationFailed
                | E::InvalidTimestamp
                | E::UnsupportedForMessageFormat
                | E::PolicyViolation
                | E::InvalidProducerEpoch
                | E::InvalidRecord
                | E::TransactionalIdAuthorizationFailed
        )
    );
    !refused_before_append
        && !matches!(
            code,
            UNKNOWN_TOPIC
                | LEADER_NOT_AVAILABLE
                | NOT_LEADER
                | NOT_ENOUGH_REPLICAS
                | OUT_OF_ORDER_SEQUENCE
        )
}

fn is_retriable(code: i16) -> bool {
    ResponseError::try_from_code(code).is_some_and(|e| e.is_retriable())
}
