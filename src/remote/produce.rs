//! The producer: Metadata for one topic (allowing the broker to auto-create it, as Kafka's
//! producer does), InitProducerId for idempotence, and Produce requests carrying record batches
//! built by the caller ([`crate::record::BatchBuilder`]), each sent to its partition's leader.
//!
//! Batches are sent in rounds: one request per leader per round, holding at most one batch per
//! partition (Produce v3+ accepts exactly one batch per partition), so the batches of a
//! partition reach the broker in order and a retried batch keeps its sequence numbers. A
//! retriable error (NOT_LEADER_OR_FOLLOWER, a lost connection, ...) refreshes the metadata and
//! sends the batch again after `retry.backoff.ms`, up to `retries` times.
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

use super::Cluster;
use super::admin::Client;
use super::connection::Connection;
use super::error::{RemoteError, Result};

/// UNKNOWN_TOPIC_OR_PARTITION.
const UNKNOWN_TOPIC: i16 = 3;
/// LEADER_NOT_AVAILABLE.
const LEADER_NOT_AVAILABLE: i16 = 5;
/// DUPLICATE_SEQUENCE_NUMBER: the broker already has this batch (an idempotent retry).
const DUPLICATE_SEQUENCE: i16 = 46;
/// The longest wait between two retries (Kafka's `retry.backoff.max.ms`).
const MAX_BACKOFF: Duration = Duration::from_millis(1000);

/// How the producer sends, from the producer properties.
#[derive(Debug, Clone)]
pub struct ProducerSettings {
    /// `acks`: -1 (all in-sync replicas), 1 (the leader) or 0 (no answer at all).
    pub acks: i16,
    /// `retries`: how many times a batch is sent again after a retriable error.
    pub retries: u32,
    /// `retry.backoff.ms`: the first wait before a retry; it doubles up to 1 s.
    pub retry_backoff: Duration,
    /// `max.block.ms`: how long to wait for the topic's metadata and a producer id.
    pub max_block: Duration,
    /// `enable.idempotence`: InitProducerId, then sequence numbers in every batch.
    pub idempotence: bool,
}

/// A partition's leader and the brokers, from Metadata.
#[derive(Debug, Default)]
struct TopicRoute {
    /// The leader of each partition, by partition index; -1 while there is none.
    leaders: Vec<i32>,
    /// Broker id to `host:port`.
    brokers: HashMap<i32, (String, i32)>,
}

/// A producer for one topic of a cluster, with the blocking interface of the console producer.
#[derive(Debug)]
pub struct Producer {
    runtime: Runtime,
    client: Client,
    topic: String,
    settings: ProducerSettings,
    route: Option<TopicRoute>,
    /// Connections to partition leaders, by broker id.
    conns: HashMap<i32, Connection>,
    /// Producer id and epoch, when idempotent.
    producer: Option<(i64, i16)>,
    /// Partitions whose leader has been seen ready to take acks=0 batches.
    ready: HashSet<i32>,
}

impl Cluster {
    /// Turns the connected cluster into a producer for `topic`. Nothing is sent until
    /// [`Producer::partitions`] is first called.
    pub fn into_producer(self, topic: &str, settings: ProducerSettings) -> Producer {
        Producer {
            runtime: self.runtime,
            client: self.client,
            topic: topic.to_string(),
            settings,
            route: None,
            conns: HashMap::new(),
            producer: None,
            ready: HashSet::new(),
        }
    }
}

impl Producer {
    /// The topic's partition count, fetching its metadata (and a producer id when idempotent)
    /// on first use; fails when the topic does not exist and the cluster does not create it.
    pub fn partitions(&mut self) -> Result<u32> {
        if self.route.is_none() {
            let (client, topic, settings) = (&mut self.client, &self.topic, &self.settings);
            let route = self
                .runtime
                .block_on(wait_for_topic(client, topic, settings))?;
            if settings.idempotence {
                self.producer = Some(self.runtime.block_on(init_producer_id(client, settings))?);
            }
            self.route = Some(route);
        }
        Ok(self.route.as_ref().map_or(0, |r| r.leaders.len() as u32))
    }

    /// The producer id and epoch to write into batches, when idempotent.
    pub fn producer_id(&self) -> Option<(i64, i16)> {
        self.producer
    }

    /// Sends every queued batch (one queue per partition, in partition order), emptying the
    /// queues; returns once all are acknowledged as `acks` asks (at once with acks=0).
    pub fn send(&mut self, queues: &mut [VecDeque<Bytes>]) -> Result<()> {
        let runtime = &self.runtime;
        // `runtime` borrows a field while the future borrows the others.
        let mut this = ProducerState {
            client: &mut self.client,
            topic: &self.topic,
            settings: &self.settings,
            route: self.route.get_or_insert_with(TopicRoute::default),
            conns: &mut self.conns,
            ready: &mut self.ready,
        };
        runtime.block_on(this.send(queues))
    }

    /// Ends the producer. With acks=0 it first asks each leader a question with an answer: the
    /// broker handles a connection's requests in order, so the answer proves every batch before
    /// it was read, and a connection the broker closed (after an error it could not report) is
    /// an error here rather than records lost without a word.
    pub fn close(mut self) -> Result<()> {
        if self.settings.acks != 0 {
            return Ok(());
        }
        let topic = self.topic.clone();
        let conns = std::mem::take(&mut self.conns);
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
        let (code, route) = fetch_route(client.connection(), topic).await?;
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
        let conn = client.connection();
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

/// The producer's fields the async send needs, borrowed apart from its runtime.
struct ProducerState<'a> {
    client: &'a mut Client,
    topic: &'a str,
    settings: &'a ProducerSettings,
    route: &'a mut TopicRoute,
    conns: &'a mut HashMap<i32, Connection>,
    ready: &'a mut HashSet<i32>,
}

/// What happened to one partition's batch in a round.
enum Outcome {
    Done,
    /// Retriable: the code (or -1 for a connection failure) and the error.
    Retry(RemoteError),
    Fatal(RemoteError),
}

impl ProducerState<'_> {
    async fn send(&mut self, queues: &mut [VecDeque<Bytes>]) -> Result<()> {
        let mut attempts = vec![0u32; queues.len()];
        let mut backoff = self.settings.retry_backoff;
        while queues.iter().any(|q| !q.is_empty()) {
            // One batch per partition per round, grouped by leader.
            let mut by_leader: BTreeMap<i32, Vec<(i32, Bytes)>> = BTreeMap::new();
            let mut outcomes: Vec<(i32, Outcome)> = Vec::new();
            for (p, queue) in queues.iter().enumerate() {
                let Some(batch) = queue.front() else { continue };
                match self.route.leaders.get(p).copied().filter(|l| *l >= 0) {
                    Some(leader) => by_leader
                        .entry(leader)
                        .or_default()
                        .push((p as i32, batch.clone())),
                    None => outcomes.push((
                        p as i32,
                        Outcome::Retry(RemoteError::broker(LEADER_NOT_AVAILABLE, None)),
                    )),
                }
            }
            for (leader, batches) in by_leader {
                let partitions: Vec<i32> = batches.iter().map(|(p, _)| *p).collect();
                match self.produce(leader, batches).await {
                    Ok(results) => outcomes.extend(results),
                    Err(e) => {
                        // The connection is gone (timeout, hang-up): reconnect on the retry.
                        self.conns.remove(&leader);
                        let retriable = matches!(
                            e,
                            RemoteError::Timeout { .. }
                                | RemoteError::Closed { .. }
                                | RemoteError::Io { .. }
                                | RemoteError::Connect { .. }
                        );
                        let mut e = Some(e);
                        for p in partitions {
                            let err = e.take().unwrap_or_else(|| RemoteError::Broker {
                                code: -1,
                                message: format!("the request to broker {leader} failed"),
                            });
                            outcomes.push((
                                p,
                                if retriable {
                                    Outcome::Retry(err)
                                } else {
                                    Outcome::Fatal(err)
                                },
                            ));
                        }
                    }
                }
            }
            let mut retry = false;
            for (p, outcome) in outcomes {
                let pu = p as usize;
                match outcome {
                    Outcome::Done => {
                        queues[pu].pop_front();
                        attempts[pu] = 0;
                    }
                    Outcome::Retry(e) if attempts[pu] < self.settings.retries => {
                        attempts[pu] += 1;
                        retry = true;
                        let _ = e;
                    }
                    Outcome::Retry(e) | Outcome::Fatal(e) => {
                        return Err(RemoteError::Broker {
                            code: e.code().unwrap_or(-1),
                            message: format!(
                                "Error when sending messages to topic {} (partition {p}): {e}",
                                self.topic
                            ),
                        });
                    }
                }
            }
            if retry {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
                self.refresh_route().await;
            } else {
                backoff = self.settings.retry_backoff;
            }
        }
        Ok(())
    }

    /// Refreshes the route through any live connection: the bootstrap one may have been closed
    /// by the broker while idle (`connections.max.idle.ms`). A failed refresh keeps the old
    /// route; the next round's failure is counted against the retries.
    async fn refresh_route(&mut self) {
        let conns = self
            .conns
            .values_mut()
            .chain(std::iter::once(self.client.connection()));
        for conn in conns {
            match fetch_route(conn, self.topic).await {
                Ok((0, route)) if !route.leaders.is_empty() => {
                    *self.route = route;
                    return;
                }
                Ok(_) => return,
                Err(_) => {}
            }
        }
    }

    /// One Produce request to `leader`; the outcome per partition.
    async fn produce(
        &mut self,
        leader: i32,
        batches: Vec<(i32, Bytes)>,
    ) -> Result<Vec<(i32, Outcome)>> {
        let config = self.client.connection().config().clone();
        if !self.conns.contains_key(&leader) {
            let conn = connect(&self.route.brokers, leader, &config).await?;
            self.conns.insert(leader, conn);
        }
        let conn = self.conns.get_mut(&leader).expect("inserted above");
        let mut not_ready = Vec::new();
        let mut batches = batches;
        if self.settings.acks == 0 {
            let unproven: Vec<i32> = batches
                .iter()
                .map(|(p, _)| *p)
                .filter(|p| !self.ready.contains(p))
                .collect();
            if !unproven.is_empty() {
                for (p, code) in probe_leader(conn, self.topic, &unproven).await? {
                    if code == 0 {
                        self.ready.insert(p);
                    } else {
                        let e = RemoteError::broker(code, None);
                        let outcome = if is_retriable(code) {
                            Outcome::Retry(e)
                        } else {
                            Outcome::Fatal(e)
                        };
                        not_ready.push((p, outcome));
                    }
                }
                batches.retain(|(p, _)| self.ready.contains(p));
                if batches.is_empty() {
                    return Ok(not_ready);
                }
            }
        }
        let version = conn.version::<ProduceRequest>()?;
        let partitions: Vec<i32> = batches.iter().map(|(p, _)| *p).collect();
        let request = ProduceRequest::default()
            .with_transactional_id(None)
            .with_acks(self.settings.acks)
            .with_timeout_ms(config.request_timeout.as_millis().min(i32::MAX as u128) as i32)
            .with_topic_data(vec![
                TopicProduceData::default()
                    .with_name(TopicName(StrBytes::from_string(self.topic.to_string())))
                    .with_partition_data(
                        batches
                            .into_iter()
                            .map(|(p, records)| {
                                PartitionProduceData::default()
                                    .with_index(p)
                                    .with_records(Some(records))
                            })
                            .collect(),
                    ),
            ]);
        if self.settings.acks == 0 {
            conn.send_without_response(&request, version).await?;
            not_ready.extend(partitions.into_iter().map(|p| (p, Outcome::Done)));
            return Ok(not_ready);
        }
        let response = conn.send(&request, version).await?;
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
        Ok(partitions
            .into_iter()
            .map(|p| {
                let outcome = match answers.remove(&p) {
                    Some((0 | DUPLICATE_SEQUENCE, _)) => Outcome::Done,
                    Some((code, message)) => {
                        let e = RemoteError::broker(code, message.as_deref());
                        if is_retriable(code) {
                            Outcome::Retry(e)
                        } else {
                            Outcome::Fatal(e)
                        }
                    }
                    None => Outcome::Fatal(RemoteError::Protocol {
                        addr: conn.addr().to_string(),
                        api: "Produce",
                        reason: format!("no answer for partition {p}"),
                    }),
                };
                (p, outcome)
            })
            .collect())
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
    let count = t
        .partitions
        .iter()
        .map(|p| p.partition_index + 1)
        .max()
        .unwrap_or(0)
        .max(0) as usize;
    let mut leaders = vec![-1; count];
    for p in &t.partitions {
        if p.partition_index >= 0 {
            leaders[p.partition_index as usize] = p.leader_id.0;
        }
    }
    Ok((t.error_code, TopicRoute { leaders, brokers }))
}

/// Opens a connection to broker `id` at the address Metadata gave for it.
async fn connect(
    brokers: &HashMap<i32, (String, i32)>,
    id: i32,
    config: &super::ClientConfig,
) -> Result<Connection> {
    let Some((host, port)) = brokers.get(&id) else {
        return Err(RemoteError::Connect {
            attempts: format!("broker {id} (not in the cluster metadata)"),
        });
    };
    super::connection::connect_broker(id, host, *port, config).await
}
