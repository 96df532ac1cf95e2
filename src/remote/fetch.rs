//! The consumer side of the client: ListOffsets and Fetch, each sent to the partition's leader.
//!
//! Leaders come from Metadata (refreshed by the consumer's own topic lookups, and again after a
//! NOT_LEADER_OR_FOLLOWER or similar answer); each broker gets one connection, opened on first
//! use by its node id. Fetches are kept small (1 MiB per partition, 4 MiB per request), unlike
//! Kafka's 50 MiB default, so the consumer's memory stays small.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::ResponseError;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::{BrokerId, FetchRequest, ListOffsetsRequest};

use super::admin::{BrokerInfo, Client, topic_name};
use super::error::{RemoteError, Result};
use super::net::connection::{ClientConfig, Connection, connect_broker};
use crate::kafka::TopicPartition;
use crate::kafka::consumer::Isolation;

/// Bytes per partition in one Fetch.
pub const PARTITION_MAX_BYTES: i32 = 1 << 20;
/// Bytes per Fetch response.
pub const REQUEST_MAX_BYTES: i32 = 4 << 20;
/// ListOffsets timestamp for the log start.
pub const EARLIEST: i64 = -2;
/// ListOffsets timestamp for the end (the last stable offset with read_committed).
pub const LATEST: i64 = -1;

/// One partition's answer to a Fetch.
#[derive(Debug)]
pub enum Fetched {
    /// Record batches from the fetch offset (the last may be truncated; the first may start
    /// below the fetch offset).
    Data(PartitionData),
    /// OFFSET_OUT_OF_RANGE: the position must be reset.
    OutOfRange,
    /// A retriable error or no known leader: try again after the metadata refresh.
    Retry,
    /// CORRUPT_MESSAGE at this fetch offset: damage in the broker's log. Kafka counts the code
    /// retriable, but its consumer stops on it when it reaches the partition (records of other
    /// partitions fetched with it are delivered first): a retry reads the same damage again.
    Corrupt { offset: i64 },
}

impl Fetched {
    /// The error Kafka's consumer raises for [`Fetched::Corrupt`].
    pub fn corrupt_error(topic: &str, partition: i32, offset: i64) -> RemoteError {
        RemoteError::broker(
            CORRUPT_MESSAGE,
            Some(&format!(
                "Encountered corrupt message when fetching offset {offset} for topic-partition {topic}-{partition}"
            )),
        )
    }
}

/// The records and offsets of one partition in a Fetch response.
#[derive(Debug)]
pub struct PartitionData {
    /// The high watermark, or the last stable offset with read_committed: where reading ends.
    pub end_offset: i64,
    pub records: Bytes,
    /// read_committed: `(producer id, first offset)` of the aborted transactions in range.
    pub aborted: Vec<(i64, i64)>,
}

/// Fetches and lists offsets of partitions, each at its leader.
#[derive(Debug)]
pub struct Fetcher {
    bootstrap: Client,
    config: ClientConfig,
    isolation: Isolation,
    brokers: HashMap<i32, BrokerInfo>,
    conns: HashMap<i32, Connection>,
    leaders: HashMap<TopicPartition, i32>,
    /// A leader changed or a broker failed: re-read Metadata (after a backoff) before fetching.
    stale: bool,
    /// `fetch.max.wait.ms`.
    max_wait: Duration,
    /// `retry.backoff.ms`.
    backoff: Duration,
}

impl Fetcher {
    pub fn new(bootstrap: Client, config: ClientConfig, isolation: Isolation) -> Fetcher {
        Fetcher {
            bootstrap,
            config,
            isolation,
            brokers: HashMap::new(),
            conns: HashMap::new(),
            leaders: HashMap::new(),
            stale: false,
            max_wait: Duration::from_millis(100),
            backoff: Duration::from_millis(100),
        }
    }

    /// The bootstrap broker's address, for messages.
    pub fn addr(&self) -> &str {
        self.bootstrap.addr()
    }

    /// The partition counts of the named topics that exist (`None`: every non-internal topic),
    /// updating the leader cache on the way.
    /// The bootstrap client, for requests that may go to any broker (FindCoordinator).
    pub(crate) fn bootstrap(&mut self) -> &mut Client {
        &mut self.bootstrap
    }

    pub async fn topics(
        &mut self,
        names: Option<&[String]>,
        auto_create: bool,
    ) -> Result<BTreeMap<String, u32>> {
        // After a lost connection (a broker restart) this connects again, or fails with why.
        self.bootstrap.live_connection().await?;
        let meta = self.bootstrap.metadata_creating(names, auto_create).await?;
        self.brokers = meta.brokers.into_iter().map(|b| (b.id, b)).collect();
        let mut out = BTreeMap::new();
        for t in meta.topics {
            if t.error_code != 0 || (names.is_none() && t.internal) {
                continue;
            }
            for p in &t.partitions {
                let tp = (t.name.clone(), p.partition);
                if p.leader >= 0 {
                    self.leaders.insert(tp, p.leader);
                } else {
                    self.leaders.remove(&tp);
                }
            }
            out.insert(t.name, t.partitions.len() as u32);
        }
        self.conns.retain(|id, _| self.brokers.contains_key(id));
        Ok(out)
    }

    async fn refresh(&mut self, tps: &[&TopicPartition]) -> Result<()> {
        let mut names: Vec<String> = tps.iter().map(|tp| tp.0.clone()).collect();
        names.sort();
        names.dedup();
        for tp in tps {
            self.leaders.remove(*tp);
        }
        self.topics(Some(&names), false).await?;
        self.stale = false;
        Ok(())
    }

    /// The connection to broker `id`, opened on first use; `None` when the broker is unknown
    /// or cannot be reached right now (the next metadata refresh may name another leader). A
    /// failure that retrying cannot mend (TLS, SASL) is an error.
    async fn conn(&mut self, id: i32) -> Result<Option<&mut Connection>> {
        if !self.conns.contains_key(&id) {
            let Some(b) = self.brokers.get(&id) else {
                return Ok(None);
            };
            match connect_broker(id, &b.host, b.port, &self.config).await {
                Ok(conn) => self.conns.insert(id, conn),
                Err(e) if e.is_connection() => return Ok(None),
                Err(e) => return Err(e),
            };
        }
        Ok(self.conns.get_mut(&id))
    }

    /// The offset for `timestamp` (or [`EARLIEST`], [`LATEST`]) in a partition; `None` when no
    /// record is at or after the timestamp. Retries retriable errors within
    /// `request.timeout.ms`.
    pub async fn list_offset(
        &mut self,
        tp: &TopicPartition,
        timestamp: i64,
    ) -> Result<Option<i64>> {
        let deadline = tokio::time::Instant::now() + self.config.request_timeout;
        loop {
            let error = match self.try_list_offset(tp, timestamp).await {
                Ok(found) => return Ok(found),
                Err(e) => e,
            };
            let retriable = match error.code() {
                Some(code) => ResponseError::try_from_code(code).is_some_and(|e| e.is_retriable()),
                None => true,
            };
            if !retriable || tokio::time::Instant::now() + self.backoff > deadline {
                return Err(error);
            }
            tokio::time::sleep(self.backoff).await;
            self.refresh(&[tp]).await?;
        }
    }

    async fn try_list_offset(
        &mut self,
        tp: &TopicPartition,
        timestamp: i64,
    ) -> Result<Option<i64>> {
        if self.stale || !self.leaders.contains_key(tp) {
            self.refresh(&[tp]).await?;
        }
        let leader = *self
            .leaders
            .get(tp)
            .ok_or_else(|| RemoteError::broker(5, None))?;
        let isolation = self.isolation.code();
        let timeout_ms = i32::try_from(self.config.request_timeout.as_millis()).unwrap_or(i32::MAX);
        let Some(conn) = self.conn(leader).await? else {
            self.stale = true;
            return Err(RemoteError::broker(5, None));
        };
        let version = conn.version::<ListOffsetsRequest>()?;
        let request = ListOffsetsRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_isolation_level(isolation)
            .with_timeout_ms(timeout_ms)
            .with_topics(vec![
                ListOffsetsTopic::default()
                    .with_name(topic_name(&tp.0))
                    .with_partitions(vec![
                        ListOffsetsPartition::default()
                            .with_partition_index(tp.1)
                            .with_timestamp(timestamp),
                    ]),
            ]);
        let response = match conn.send(&request, version).await {
            Ok(r) => r,
            Err(e) => {
                self.conns.remove(&leader);
                self.stale = true;
                return Err(e);
            }
        };
        let p = response
            .topics
            .iter()
            .filter(|t| t.name.0.as_str() == tp.0)
            .flat_map(|t| t.partitions.iter())
            .find(|p| p.partition_index == tp.1)
            .ok_or_else(|| RemoteError::Protocol {
                addr: self.addr().to_string(),
                api: "ListOffsets",
                reason: format!("no answer for partition {}-{}", tp.0, tp.1),
            })?;
        if p.error_code != 0 {
            self.stale = true;
            return Err(RemoteError::broker(p.error_code, None));
        }
        Ok((p.offset >= 0).then_some(p.offset))
    }

    /// One Fetch per leader for the partitions at their positions. Partitions whose leader is
    /// unknown or failed come back as [`Fetched::Retry`]; non-retriable errors fail.
    pub async fn fetch(
        &mut self,
        positions: &[(TopicPartition, i64)],
    ) -> Result<HashMap<TopicPartition, Fetched>> {
        let mut out = HashMap::new();
        if positions.is_empty() {
            return Ok(out);
        }
        if self.stale
            || positions
                .iter()
                .any(|(tp, _)| !self.leaders.contains_key(tp))
        {
            if self.stale {
                tokio::time::sleep(self.backoff).await;
            }
            let tps: Vec<&TopicPartition> = positions.iter().map(|(tp, _)| tp).collect();
            self.refresh(&tps).await?;
        }
        let mut by_leader: BTreeMap<i32, Vec<&(TopicPartition, i64)>> = BTreeMap::new();
        for entry in positions {
            match self.leaders.get(&entry.0) {
                Some(id) => by_leader.entry(*id).or_default().push(entry),
                None => {
                    out.insert(entry.0.clone(), Fetched::Retry);
                }
            }
        }
        for (leader, entries) in by_leader {
            match self.fetch_from(leader, &entries).await? {
                Some(results) => out.extend(results),
                None => {
                    self.stale = true;
                    self.conns.remove(&leader);
                    for (tp, _) in entries {
                        out.insert(tp.clone(), Fetched::Retry);
                    }
                }
            }
        }
        Ok(out)
    }

    /// One Fetch to one broker; `None` when the broker could not be reached or hung up.
    async fn fetch_from(
        &mut self,
        leader: i32,
        entries: &[&(TopicPartition, i64)],
    ) -> Result<Option<Vec<(TopicPartition, Fetched)>>> {
        let isolation = self.isolation;
        let max_wait = i32::try_from(self.max_wait.as_millis()).unwrap_or(500);
        let Some(conn) = self.conn(leader).await? else {
            return Ok(None);
        };
        let version = conn.version::<FetchRequest>()?;
        let mut topics: Vec<FetchTopic> = Vec::new();
        for ((topic, partition), offset) in entries.iter().map(|e| (&e.0, e.1)) {
            let partition = FetchPartition::default()
                .with_partition(*partition)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(PARTITION_MAX_BYTES);
            match topics.iter_mut().find(|t| t.topic.0.as_str() == topic) {
                Some(t) => t.partitions.push(partition),
                None => topics.push(
                    FetchTopic::default()
                        .with_topic(topic_name(topic))
                        .with_partitions(vec![partition]),
                ),
            }
        }
        let request = FetchRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_max_wait_ms(max_wait)
            .with_min_bytes(1)
            .with_max_bytes(REQUEST_MAX_BYTES)
            .with_isolation_level(isolation.code())
            .with_session_id(0)
            .with_session_epoch(-1)
            .with_topics(topics);
        let response = match conn.send(&request, version).await {
            Ok(r) => r,
            Err(e) if e.is_connection() => return Ok(None),
            Err(e) => return Err(e),
        };
        if response.error_code != 0 {
            if retriable(response.error_code) {
                return Ok(None);
            }
            return Err(RemoteError::broker(response.error_code, None));
        }
        let mut out = Vec::new();
        for t in response.responses {
            let topic = t.topic.0.to_string();
            for p in t.partitions {
                let tp = (topic.clone(), p.partition_index);
                let fetched = match p.error_code {
                    0 => Fetched::Data(PartitionData {
                        end_offset: match isolation {
                            Isolation::ReadCommitted if p.last_stable_offset >= 0 => {
                                p.last_stable_offset
                            }
                            _ => p.high_watermark,
                        },
                        records: p.records.unwrap_or_default(),
                        aborted: p
                            .aborted_transactions
                            .unwrap_or_default()
                            .iter()
                            .map(|a| (a.producer_id.0, a.first_offset))
                            .collect(),
                    }),
                    1 => Fetched::OutOfRange,
                    CORRUPT_MESSAGE => Fetched::Corrupt {
                        offset: entries.iter().find(|e| e.0 == tp).map_or(-1, |e| e.1),
                    },
                    code if retriable(code) => {
                        self.stale = true;
                        Fetched::Retry
                    }
                    code => {
                        return Err(RemoteError::broker(code, None));
                    }
                };
                out.push((tp, fetched));
            }
        }
        Ok(Some(out))
    }
}

/// CORRUPT_MESSAGE.
const CORRUPT_MESSAGE: i16 = 2;

/// Errors Kafka's consumer retries after refreshing metadata (NOT_LEADER_OR_FOLLOWER,
/// UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, FENCED/UNKNOWN_LEADER_EPOCH, ...).
fn retriable(code: i16) -> bool {
    ResponseError::try_from_code(code).is_some_and(|e| e.is_retriable()) || code == 3 // UNKNOWN_TOPIC_OR_PARTITION: being created, or deleted (the consumer notices)
}
