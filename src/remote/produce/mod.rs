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
//! With acks=0 the broker never answers, and a batch sent to a leader that has not yet created
//! its replica (a topic created a moment ago) is dropped while the broker closes the connection.
//! So before the first acks=0 batch to a partition, a ListOffsets asks its leader whether it is
//! ready (retrying as above), and [`Producer::close`] ends with a request that has an answer, so
//! a connection the broker closed is reported instead of silently losing records.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::ResponseError;
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{
    BrokerId, InitProducerIdRequest, ListOffsetsRequest, MetadataRequest, ProduceRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use tokio::runtime::Runtime;
use tokio::time::Instant;

use super::Cluster;
use super::admin::Client;
use super::connection::{ClientConfig, Connection};
use super::error::{RemoteError, Result};
use crate::client::ProducerSettings;
use crate::record::BatchHeader;

/// UNKNOWN_TOPIC_OR_PARTITION.
const UNKNOWN_TOPIC: i16 = 3;
/// LEADER_NOT_AVAILABLE.
const LEADER_NOT_AVAILABLE: i16 = 5;
/// OUT_OF_ORDER_SEQUENCE_NUMBER: a batch whose predecessor the broker does not have.
const OUT_OF_ORDER_SEQUENCE: i16 = 45;
/// DUPLICATE_SEQUENCE_NUMBER: the broker already has this batch (an idempotent retry).
const DUPLICATE_SEQUENCE: i16 = 46;
/// The longest wait between two retries (Kafka's `retry.backoff.max.ms`).
const MAX_BACKOFF: Duration = Duration::from_millis(1000);

/// A partition's leader and the brokers, from Metadata.
#[derive(Debug, Default)]
struct TopicRoute {
    /// The leader of each partition, by partition index; -1 while there is none.
    leaders: Vec<i32>,
    /// Broker id to `host:port`.
    brokers: HashMap<i32, (String, i32)>,
}

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
}

/// One batch of a partition, until it is acknowledged.
#[derive(Debug)]
struct Slot {
    batch: Bytes,
    state: SlotState,
    queued_at: Instant,
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
    /// The last error, for the message when a batch expires.
    last_error: Option<String>,
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
}

impl Cluster {
    /// Turns the connected cluster into a producer for `topic`. Nothing is sent until
    /// [`Producer::partitions`] is first called.
    pub fn into_producer(self, topic: &str, settings: ProducerSettings) -> Producer {
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
            if s.settings.idempotence {
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
        });
        let result = self.runtime.block_on(self.sender.drive(false));
        self.sender.remember(result)
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

async fn wait_for_topic(
    client: &mut Client,
    topic: &str,
    settings: &ProducerSettings,
) -> Result<TopicRoute> {
    let start = tokio::time::Instant::now();
    let config = client.connection().config().clone();
    // A topic unknown to a cluster that does not create topics stays unknown: wait only a
    // short while, in case it was created a moment ago, not Kafka's 60 s max.block.ms.
    let unknown_wait = settings.max_block.min(config.request_timeout);
    let mut backoff = settings.retry_backoff;
    loop {
        let (code, route) = fetch_route(client.live_connection().await?, topic).await?;
        let waited = start.elapsed();
        match code {
            0 if !route.leaders.is_empty() => return Ok(route),
            UNKNOWN_TOPIC if waited >= unknown_wait => {
                let addr = client.addr().to_string();
                return Err(RemoteError::Broker {
                    code,
                    message: format!(
                        "Topic '{t}' does not exist on {addr} and the cluster does not create topics automatically (auto.create.topics.enable=false); create it with kafka-topics --bootstrap-server {addr} --create --topic {t}",
                        t = topic
                    ),
                });
            }
            0 | UNKNOWN_TOPIC | LEADER_NOT_AVAILABLE if waited < settings.max_block => {}
            code if waited < settings.max_block && is_retriable(code) => {}
            0 | UNKNOWN_TOPIC | LEADER_NOT_AVAILABLE => {
                return Err(RemoteError::Broker {
                    code,
                    message: format!(
                        "Topic {} not present in metadata after {} ms.",
                        topic,
                        settings.max_block.as_millis()
                    ),
                });
            }
            code => {
                let e = RemoteError::broker(code, None);
                return Err(RemoteError::Broker {
                    code,
                    message: format!("cannot produce to topic '{}': {e}", topic),
                });
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// InitProducerId without a transactional id, retried on retriable errors until
/// `max.block.ms`.
async fn init_producer_id(client: &mut Client, settings: &ProducerSettings) -> Result<(i64, i16)> {
    let start = tokio::time::Instant::now();
    let mut backoff = settings.retry_backoff;
    loop {
        let conn = client.live_connection().await?;
        let version = conn.version::<InitProducerIdRequest>()?;
        let request = InitProducerIdRequest::default()
            .with_transactional_id(None)
            .with_transaction_timeout_ms(i32::MAX);
        let response = conn.send(&request, version).await?;
        match response.error_code {
            0 => return Ok((response.producer_id.0, response.producer_epoch)),
            code if is_retriable(code) && start.elapsed() < settings.max_block => {}
            code => {
                let e = RemoteError::broker(code, None);
                return Err(RemoteError::Broker {
                    code,
                    message: format!(
                        "cannot get a producer id for the idempotent producer: {e} (set --command-property enable.idempotence=false to produce without)"
                    ),
                });
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// The number of records in a batch (its last offset delta + 1), for messages.
fn record_count(batch: &[u8]) -> i64 {
    BatchHeader::parse(batch).map_or(0, |h| h.last_offset_delta as i64 + 1)
}

impl Sender {
    /// The error that ended the producer, if any.
    fn check(&self) -> Result<()> {
        match &self.failed {
            Some((code, message)) => Err(RemoteError::Broker {
                code: *code,
                message: message.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Keeps a failure for later calls: the producer's state after it is not worth sending on.
    /// The error says how many records were not acknowledged, so that a user knows what to
    /// send again (those in flight may have been written).
    fn remember(&mut self, result: Result<()>) -> Result<()> {
        let Err(e) = result else {
            return Ok(());
        };
        let count = |state: SlotState| -> i64 {
            self.queues
                .iter()
                .flat_map(|q| q.slots.iter())
                .filter(|s| s.state == state)
                .map(|s| record_count(&s.batch))
                .sum()
        };
        let (queued, in_flight) = (count(SlotState::Queued), count(SlotState::InFlight));
        let message = if queued + in_flight > 0 {
            format!(
                "{e}; {} record(s) not acknowledged ({in_flight} of them sent, which the broker may have written)",
                queued + in_flight
            )
        } else {
            e.to_string()
        };
        let code = e.code().unwrap_or(-1);
        self.failed = Some((code, message.clone()));
        Err(RemoteError::Broker { code, message })
    }

    /// Sends what the pipelines allow and reads answers: with `all`, until every batch is
    /// acknowledged; without, until nothing waits for a full pipeline.
    async fn drive(&mut self, all: bool) -> Result<()> {
        loop {
            let blocked = if self.recovering {
                None
            } else {
                self.send_ready().await?
            };
            let due = |s: &Sender| {
                s.in_flight
                    .iter()
                    .find(|(_, q)| !q.is_empty())
                    .map(|(l, _)| *l)
            };
            let leader = if self.recovering || all {
                due(self)
            } else {
                blocked
            };
            match leader {
                Some(leader) => self.receive(leader).await?,
                None if self.recovering => self.recover().await?,
                None if all && self.queues.iter().any(|q| !q.slots.is_empty()) => {
                    // Nothing went out and nothing is due: wait and look again.
                    self.recovering = true;
                }
                None => return Ok(()),
            }
        }
    }

    /// Sends requests while leaders' pipelines have room, each with the next batch of every
    /// partition it leads. Returns a leader whose pipeline is full while more waits for it.
    async fn send_ready(&mut self) -> Result<Option<i32>> {
        let mut blocked = None;
        loop {
            let Some(route) = self.route.as_ref() else {
                return Ok(None);
            };
            let max = if self.settings.acks == 0 {
                usize::MAX
            } else {
                self.settings.max_in_flight.max(1)
            };
            let mut by_leader: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
            for (p, q) in self.queues.iter().enumerate() {
                if !q.slots.iter().any(|s| s.state == SlotState::Queued) {
                    continue;
                }
                match route.leaders.get(p).copied().filter(|l| *l >= 0) {
                    Some(leader) => by_leader.entry(leader).or_default().push(p as i32),
                    None => {
                        // No leader (an election, a broker restarting): wait for one.
                        let e = RemoteError::broker(LEADER_NOT_AVAILABLE, None);
                        self.queues[p].last_error = Some(e.to_string());
                        self.recovering = true;
                        return Ok(None);
                    }
                }
            }
            let mut sent = false;
            for (leader, partitions) in by_leader {
                if self.in_flight.get(&leader).map_or(0, VecDeque::len) >= max {
                    blocked = Some(leader);
                    continue;
                }
                self.send_request(leader, partitions).await?;
                if self.recovering {
                    return Ok(None);
                }
                sent = true;
            }
            if !sent {
                return Ok(blocked);
            }
        }
    }

    /// One Produce request to `leader` with the next queued batch of each of `partitions`.
    async fn send_request(&mut self, leader: i32, mut partitions: Vec<i32>) -> Result<()> {
        if !self.conns.contains_key(&leader) {
            let brokers = &self.route.as_ref().expect("known when sending").brokers;
            match connect(brokers, leader, &self.config).await {
                Ok(conn) => {
                    self.conns.insert(leader, conn);
                }
                Err(e) if e.is_connection() => {
                    // Unreachable: not a send, so not a retry; the batches wait (up to
                    // delivery.timeout.ms) for the broker to come back.
                    for p in &partitions {
                        self.queues[*p as usize].last_error = Some(e.to_string());
                    }
                    self.recovering = true;
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
        if self.settings.acks == 0 {
            let unproven: Vec<i32> = partitions
                .iter()
                .copied()
                .filter(|p| !self.ready.contains(p))
                .collect();
            if !unproven.is_empty() {
                let conn = self.conns.get_mut(&leader).expect("connected above");
                let answers = match probe_leader(conn, &self.topic, &unproven).await {
                    Ok(answers) => answers,
                    Err(e) => return self.connection_lost(leader, e, &[]),
                };
                for (p, code) in answers {
                    if code == 0 {
                        self.ready.insert(p);
                    } else {
                        self.recovering = true;
                        let e = RemoteError::broker(code, None);
                        self.fail(p, code, &e.to_string(), is_retriable(code))?;
                    }
                }
                partitions.retain(|p| self.ready.contains(p));
                if partitions.is_empty() {
                    return Ok(());
                }
            }
        }
        let mut data = Vec::with_capacity(partitions.len());
        for p in &partitions {
            let slot = self.queues[*p as usize]
                .slots
                .iter()
                .find(|s| s.state == SlotState::Queued)
                .expect("partitions with a queued batch");
            data.push(
                PartitionProduceData::default()
                    .with_index(*p)
                    .with_records(Some(slot.batch.clone())),
            );
        }
        let request = ProduceRequest::default()
            .with_transactional_id(None)
            .with_acks(self.settings.acks)
            .with_timeout_ms(
                self.config
                    .request_timeout
                    .as_millis()
                    .min(i32::MAX as u128) as i32,
            )
            .with_topic_data(vec![
                TopicProduceData::default()
                    .with_name(TopicName(StrBytes::from_string(self.topic.clone())))
                    .with_partition_data(data),
            ]);
        let conn = self.conns.get_mut(&leader).expect("connected above");
        let version = conn.version::<ProduceRequest>()?;
        let sent = if self.settings.acks == 0 {
            conn.send_without_response(&request, version)
                .await
                .map(|_| None)
        } else {
            conn.submit(&request, version).await.map(Some)
        };
        let id = match sent {
            Ok(id) => id,
            Err(e) => return self.connection_lost(leader, e, &partitions),
        };
        // No answer will come with acks=0: the batches are done once written.
        let state = match id {
            Some(_) => SlotState::InFlight,
            None => SlotState::Acked,
        };
        for p in &partitions {
            let q = &mut self.queues[*p as usize];
            if let Some(slot) = q.slots.iter_mut().find(|s| s.state == SlotState::Queued) {
                slot.state = state;
            }
            q.pop_acked();
        }
        if let Some(id) = id {
            self.in_flight
                .entry(leader)
                .or_default()
                .push_back(InFlight {
                    id,
                    version,
                    partitions,
                });
        }
        Ok(())
    }

    /// Reads the oldest answer due from `leader` and settles its batches.
    async fn receive(&mut self, leader: i32) -> Result<()> {
        let Some(request) = self
            .in_flight
            .get_mut(&leader)
            .and_then(VecDeque::pop_front)
        else {
            return Ok(());
        };
        let Some(conn) = self.conns.get_mut(&leader) else {
            self.in_flight
                .entry(leader)
                .or_default()
                .push_front(request);
            return self.connection_lost(
                leader,
                RemoteError::Connect {
                    attempts: format!("broker {leader} (connection lost)"),
                },
                &[],
            );
        };
        let response = match conn
            .receive::<ProduceRequest>(request.version, request.id)
            .await
        {
            Ok(response) => response,
            Err(e) => {
                self.in_flight
                    .entry(leader)
                    .or_default()
                    .push_front(request);
                return self.connection_lost(leader, e, &[]);
            }
        };
        let addr = conn.addr().to_string();
        let mut answers: HashMap<i32, (i16, Option<String>)> = HashMap::new();
        for topic in &response.responses {
            for p in &topic.partition_responses {
                let message = p.error_message.as_ref().map(|m| m.to_string()).or_else(|| {
                    p.record_errors
                        .first()
                        .and_then(|r| r.batch_index_error_message.as_ref())
                        .map(|m| m.to_string())
                });
                answers.insert(p.index, (p.error_code, message));
            }
        }
        for p in request.partitions {
            let q = &mut self.queues[p as usize];
            let Some(i) = q.slots.iter().position(|s| s.state == SlotState::InFlight) else {
                continue;
            };
            match answers.remove(&p) {
                Some((0 | DUPLICATE_SEQUENCE, _)) => {
                    q.slots[i].state = SlotState::Acked;
                    if i == 0 {
                        q.attempts = 0;
                    }
                    q.pop_acked();
                    self.backoff = self.settings.retry_backoff;
                }
                Some((code, message)) => {
                    q.slots[i].state = SlotState::Queued;
                    self.recovering = true;
                    let e = RemoteError::broker(code, message.as_deref());
                    self.fail(p, code, &e.to_string(), is_retriable(code))?;
                }
                None => {
                    return Err(RemoteError::Protocol {
                        addr,
                        api: "Produce",
                        reason: format!("no answer for partition {p}"),
                    });
                }
            }
        }
        Ok(())
    }

    /// A connection failed with `e`: every batch in flight on it goes back to its queue (and
    /// so do `unsent`'s, whose request failed on the way out), counted as a failed send.
    fn connection_lost(&mut self, leader: i32, e: RemoteError, unsent: &[i32]) -> Result<()> {
        self.conns.remove(&leader);
        self.recovering = true;
        let message = e.to_string();
        let retriable = e.is_connection();
        let requests = self.in_flight.remove(&leader).unwrap_or_default();
        let mut partitions: Vec<i32> = unsent.to_vec();
        for request in requests {
            for p in request.partitions {
                let q = &mut self.queues[p as usize];
                if let Some(slot) = q.slots.iter_mut().find(|s| s.state == SlotState::InFlight) {
                    slot.state = SlotState::Queued;
                }
                partitions.push(p);
            }
        }
        if !retriable {
            return Err(e);
        }
        for p in partitions {
            self.fail(p, -1, &message, true)?;
        }
        Ok(())
    }

    /// Records a failed send of partition `p`; an error when it may not be retried.
    fn fail(&mut self, p: i32, code: i16, message: &str, retriable: bool) -> Result<()> {
        let q = &mut self.queues[p as usize];
        q.last_error = Some(message.to_string());
        if code == OUT_OF_ORDER_SEQUENCE && q.failed {
            return Ok(());
        }
        let fatal = || RemoteError::Broker {
            code,
            message: format!(
                "Error when sending messages to topic {} (partition {p}): {message}",
                self.topic
            ),
        };
        if !retriable {
            return Err(fatal());
        }
        if !q.failed {
            q.failed = true;
            q.attempts += 1;
            if q.attempts > self.settings.retries {
                return Err(fatal());
            }
        }
        Ok(())
    }

    /// Every answer due has been read after an error: expire batches past
    /// `delivery.timeout.ms`, wait the backoff, refresh the metadata and resume sending.
    async fn recover(&mut self) -> Result<()> {
        for (p, q) in self.queues.iter_mut().enumerate() {
            q.failed = false;
            let Some(oldest) = q.slots.iter().find(|s| s.state != SlotState::Acked) else {
                continue;
            };
            let waited = oldest.queued_at.elapsed();
            if waited >= self.settings.delivery_timeout {
                let records: i64 = q
                    .slots
                    .iter()
                    .filter(|s| s.state != SlotState::Acked)
                    .map(|s| record_count(&s.batch))
                    .sum();
                return Err(RemoteError::Broker {
                    code: 7,
                    message: format!(
                        "Expiring {records} record(s) for {}-{p}: {} ms has passed since batch creation (delivery.timeout.ms); last error: {}",
                        self.topic,
                        waited.as_millis(),
                        q.last_error.as_deref().unwrap_or("none")
                    ),
                });
            }
        }
        tokio::time::sleep(self.backoff).await;
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        self.refresh_route().await;
        self.recovering = false;
        Ok(())
    }

    /// Refreshes the route through any live connection: the bootstrap one may have been closed
    /// by the broker while idle (`connections.max.idle.ms`). When every connection is gone (a
    /// broker restarted), a new one to any known broker asks. A failed refresh keeps the old
    /// route; sending again finds out whether it still holds.
    async fn refresh_route(&mut self) {
        let ids: Vec<i32> = self.conns.keys().copied().collect();
        for id in ids {
            let conn = self.conns.get_mut(&id).expect("listed above");
            match fetch_route(conn, &self.topic).await {
                Ok(answer) => return self.take_route(answer),
                Err(_) => {
                    self.conns.remove(&id);
                }
            }
        }
        // The bootstrap connection, connected again if a failure broke it.
        if let Ok(conn) = self.client.live_connection().await
            && let Ok(answer) = fetch_route(conn, &self.topic).await
        {
            return self.take_route(answer);
        }
        let Some(route) = self.route.as_ref() else {
            return;
        };
        let brokers = route.brokers.clone();
        let mut ids: Vec<i32> = brokers.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            if let Ok(mut conn) = connect(&brokers, id, &self.config).await
                && let Ok(answer) = fetch_route(&mut conn, &self.topic).await
            {
                self.conns.insert(id, conn);
                return self.take_route(answer);
            }
        }
    }

    fn take_route(&mut self, (code, route): (i16, TopicRoute)) {
        if code == 0 && !route.leaders.is_empty() {
            self.route = Some(route);
        }
    }
}

impl PartitionQueue {
    /// Drops acknowledged batches from the front.
    fn pop_acked(&mut self) {
        while self
            .slots
            .front()
            .is_some_and(|s| s.state == SlotState::Acked)
        {
            self.slots.pop_front();
        }
    }
}

/// Asks `conn`'s broker for the end offset of `partitions`: an error code per partition says
/// whether it leads them yet (NOT_LEADER_OR_FOLLOWER until it has created the replica).
async fn probe_leader(
    conn: &mut Connection,
    topic: &str,
    partitions: &[i32],
) -> Result<Vec<(i32, i16)>> {
    const LATEST: i64 = -1;
    let version = conn.version::<ListOffsetsRequest>()?;
    let request = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(vec![
            ListOffsetsTopic::default()
                .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                .with_partitions(
                    partitions
                        .iter()
                        .map(|p| {
                            ListOffsetsPartition::default()
                                .with_partition_index(*p)
                                .with_timestamp(LATEST)
                        })
                        .collect(),
                ),
        ]);
    let response = conn.send(&request, version).await?;
    let answers: HashMap<i32, i16> = response
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter())
        .map(|p| (p.partition_index, p.error_code))
        .collect();
    Ok(partitions
        .iter()
        .map(|p| (*p, answers.get(p).copied().unwrap_or(UNKNOWN_TOPIC)))
        .collect())
}

fn is_retriable(code: i16) -> bool {
    ResponseError::try_from_code(code).is_some_and(|e| e.is_retriable())
}

/// The topic's top-level error code and route, asking with auto-creation allowed (the broker's
/// `auto.create.topics.enable` decides), as Kafka's producer asks.
async fn fetch_route(conn: &mut Connection, topic: &str) -> Result<(i16, TopicRoute)> {
    let version = conn.version::<MetadataRequest>()?;
    let request = MetadataRequest::default()
        .with_topics(Some(vec![MetadataRequestTopic::default().with_name(Some(
            TopicName(StrBytes::from_string(topic.to_string())),
        ))]))
        .with_allow_auto_topic_creation(true);
    let response = conn.send(&request, version).await?;
    let brokers = response
        .brokers
        .iter()
        .map(|b| (b.node_id.0, (b.host.to_string(), b.port)))
        .collect();
    let Some(t) = response
        .topics
        .iter()
        .find(|t| t.name.as_ref().is_some_and(|n| n.0.as_str() == topic))
    else {
        return Ok((UNKNOWN_TOPIC, TopicRoute::default()));
    };
    // Partitions are numbered 0..count; an index outside that is not trusted (nor sized for).
    let count = t.partitions.len();
    let mut leaders = vec![-1; count];
    for p in &t.partitions {
        if let Some(slot) = usize::try_from(p.partition_index)
            .ok()
            .and_then(|i| leaders.get_mut(i))
        {
            *slot = p.leader_id.0;
        }
    }
    Ok((t.error_code, TopicRoute { leaders, brokers }))
}

/// Opens a connection to broker `id` at the address Metadata gave for it.
async fn connect(
    brokers: &HashMap<i32, (String, i32)>,
    id: i32,
    config: &ClientConfig,
) -> Result<Connection> {
    let Some((host, port)) = brokers.get(&id) else {
        return Err(RemoteError::Connect {
            attempts: format!("broker {id} (not in the cluster metadata)"),
        });
    };
    super::connection::connect_broker(id, host, *port, config).await
}
