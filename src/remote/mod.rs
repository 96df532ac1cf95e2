//! The client for a real Kafka cluster (`--bootstrap-server`): connections and version
//! negotiation over tokio, on the wire format of [`crate::wire`] (frames, the requests kafkit
//! sends, the versions it speaks, the ConsumerProtocol bytes), which the server shares.
//!
//! Two layers, the second using the first:
//! 1. [`net`]: one broker connection: TCP, TLS, SASL, ApiVersions, timeouts.
//! 2. the client logic, private to this module:
//!    - [`coordinator`]: FindCoordinator and a connection to a group's coordinator.
//!    - [`membership`]: a consumer's membership of a group, with the classic protocol or
//!      KIP-848's (ConsumerGroupHeartbeat), and the heartbeat thread both use.
//!    - [`groups`]: the consumer-group admin calls (list, describe, offsets, reset, delete).
//!    - [`fetch`]: ListOffsets and Fetch at partition leaders, for the consumer.
//!    - [`admin`]: the bootstrap list and the admin calls (Metadata, DescribeTopicPartitions,
//!      DescribeConfigs, IncrementalAlterConfigs, DescribeCluster, CreateTopics,
//!      CreatePartitions, DeleteTopics).
//!    - [`configs`]: DescribeConfigs with synonyms and IncrementalAlterConfigs for any entity.
//!    - [`brokers`]: every broker's ApiVersions, annotated with kafkit's use of each API.
//!    - [`leaders`]: which broker leads each partition; [`records`]: DeleteRecords at the
//!      leaders.
//!    - [`transactions`]: the transaction admin calls of `kafka-transactions`.
//!    - [`share`]: a member of a share group: ShareGroupHeartbeat, ShareFetch,
//!      ShareAcknowledge.
//!    - [`share_admin`]: the share-group admin calls of `kafka-share-groups` (list, describe,
//!      start offsets and lag, alter and delete offsets).
//!    - [`produce`]: the producer: leader routing, InitProducerId, Produce with retries.
//!    - [`error`]: [`RemoteError`], one line per failure, naming the broker.
//!
//! [`Cluster`] wraps the async client for the blocking command-line tools.

mod admin;
mod brokers;
mod configs;
mod coordinator;
pub mod error;
pub(crate) mod fetch;
mod groups;
mod leaders;
pub(crate) mod membership;
pub(crate) mod net;
mod produce;
mod records;
pub(crate) mod share;
mod share_admin;
mod transactions;

pub use admin::{Client, ClusterMetadata, PartitionInfo, TopicInfo, TopicOutcome};
pub use error::RemoteError;
pub use fetch::Fetched;
pub use groups::{CommittedOffset, GroupInfo, ListedGroup, OffsetDeleteOutcome};
pub use net::connection::ClientConfig;
pub use produce::Producer;

use crate::kafka::TopicPartition;
use crate::kafka::configs::{ConfigEntry, TopicConfigChanges};
use crate::kafka::consumer::Isolation;
use crate::kafka::topics::{NewTopic, PartitionIncrease};
use error::Result;

/// A connected admin client with its own single-threaded runtime, for the blocking tools: one
/// request at a time needs no worker threads.
#[derive(Debug)]
pub struct Cluster {
    runtime: tokio::runtime::Runtime,
    client: Client,
    config: ClientConfig,
}

impl Cluster {
    /// Connects to the first of `servers` that answers (see [`Client::connect`]).
    pub fn connect(servers: &str, config: ClientConfig) -> Result<Cluster> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|source| RemoteError::Io {
                addr: servers.to_string(),
                api: "starting the network runtime",
                source,
            })?;
        let client = runtime.block_on(Client::connect(servers, config.clone()))?;
        Ok(Cluster {
            runtime,
            client,
            config,
        })
    }

    /// See [`Client::metadata`].
    pub fn metadata(&mut self, topics: Option<&[String]>) -> Result<ClusterMetadata> {
        self.runtime.block_on(self.client.metadata(topics))
    }

    /// See [`Client::create_topics`].
    pub fn create_topics(&mut self, topics: &[NewTopic]) -> Result<Vec<TopicOutcome>> {
        self.runtime.block_on(self.client.create_topics(topics))
    }

    /// See [`Client::describe_topics`].
    pub fn describe_topics(&mut self, names: &[String], page_limit: i32) -> Result<Vec<TopicInfo>> {
        self.runtime
            .block_on(self.client.describe_topics(names, page_limit))
    }

    /// See [`Client::describe_configs`].
    pub fn describe_configs(
        &mut self,
        names: &[String],
    ) -> Result<Vec<(String, Result<Vec<ConfigEntry>>)>> {
        self.runtime.block_on(self.client.describe_configs(names))
    }

    /// See [`Client::live_brokers`].
    pub fn live_brokers(&mut self) -> Result<Vec<i32>> {
        self.runtime.block_on(self.client.live_brokers())
    }

    /// See [`Client::create_partitions`].
    pub fn create_partitions(
        &mut self,
        increases: &[PartitionIncrease],
    ) -> Result<Vec<TopicOutcome>> {
        self.runtime
            .block_on(self.client.create_partitions(increases))
    }

    /// What the client API's `Client::alter_topic_configs` does on a cluster.
    pub fn alter_topic_configs(
        &mut self,
        alterations: &[TopicConfigChanges],
    ) -> Result<Vec<TopicOutcome>> {
        self.runtime
            .block_on(self.client.alter_topic_configs(alterations))
    }

    /// See [`Client::delete_topics`].
    pub fn delete_topics(&mut self, names: &[String]) -> Result<Vec<TopicOutcome>> {
        self.runtime.block_on(self.client.delete_topics(names))
    }

    /// See [`Client::list_groups`].
    pub fn list_groups(&mut self, states: &[String], types: &[String]) -> Result<Vec<ListedGroup>> {
        self.runtime
            .block_on(self.client.list_groups(states, types))
    }

    /// See [`Client::describe_group`].
    pub fn describe_group(&mut self, group: &str) -> Result<Option<GroupInfo>> {
        self.runtime.block_on(self.client.describe_group(group))
    }

    /// See [`Client::committed_offsets`].
    pub fn committed_offsets(
        &mut self,
        group: &str,
    ) -> Result<std::collections::BTreeMap<TopicPartition, CommittedOffset>> {
        self.runtime.block_on(self.client.committed_offsets(group))
    }

    /// See [`Client::commit_offsets`].
    pub fn commit_offsets(
        &mut self,
        group: &str,
        offsets: &std::collections::BTreeMap<TopicPartition, i64>,
    ) -> Result<Vec<(TopicPartition, i16)>> {
        self.runtime
            .block_on(self.client.commit_offsets(group, offsets))
    }

    /// See [`Client::delete_group`].
    pub fn delete_group(&mut self, group: &str) -> Result<i16> {
        self.runtime.block_on(self.client.delete_group(group))
    }

    /// See [`Client::delete_offsets`].
    pub fn delete_offsets(
        &mut self,
        group: &str,
        tps: &[TopicPartition],
    ) -> Result<OffsetDeleteOutcome> {
        self.runtime
            .block_on(self.client.delete_offsets(group, tps))
    }

    /// See [`Client::list_offsets`].
    pub fn list_offsets(
        &mut self,
        tps: &[TopicPartition],
        timestamp: i64,
    ) -> Result<std::collections::HashMap<TopicPartition, Result<Option<i64>>>> {
        self.runtime
            .block_on(self.client.list_offsets(tps, timestamp))
    }

    /// See [`Client::list_transactions`].
    pub fn list_transactions(
        &mut self,
        filter: &crate::kafka::transactions::TransactionFilter,
    ) -> Result<Vec<crate::kafka::transactions::TransactionListing>> {
        self.runtime.block_on(self.client.list_transactions(filter))
    }

    /// See [`Client::describe_transaction`].
    pub fn describe_transaction(
        &mut self,
        id: &str,
    ) -> Result<Option<crate::kafka::transactions::TransactionDescription>> {
        self.runtime.block_on(self.client.describe_transaction(id))
    }

    /// See [`Client::describe_producers`].
    pub fn describe_producers(
        &mut self,
        tp: &TopicPartition,
        broker: Option<i32>,
    ) -> Result<Vec<crate::kafka::transactions::ProducerDescription>> {
        self.runtime
            .block_on(self.client.describe_producers(tp, broker))
    }

    /// See [`Client::abort_transaction`].
    pub fn abort_transaction(
        &mut self,
        spec: &crate::kafka::transactions::AbortSpec,
    ) -> Result<()> {
        self.runtime.block_on(self.client.abort_transaction(spec))
    }

    /// See [`Client::fence_producers`].
    pub fn fence_producers(&mut self, id: &str) -> Result<()> {
        self.runtime.block_on(self.client.fence_producers(id))
    }

    /// See [`Client::partitions_led_by`].
    pub fn partitions_led_by(&mut self, id: i32) -> Result<Vec<TopicPartition>> {
        self.runtime.block_on(self.client.partitions_led_by(id))
    }

    /// See [`Client::delete_records`].
    pub fn delete_records(
        &mut self,
        offsets: &[(TopicPartition, i64)],
    ) -> Result<std::collections::HashMap<TopicPartition, Result<i64>>> {
        self.runtime.block_on(self.client.delete_records(offsets))
    }

    /// See [`Client::broker_api_versions`].
    pub fn broker_api_versions(
        &mut self,
    ) -> Result<
        Vec<(
            crate::kafka::brokers::BrokerNode,
            Result<Vec<crate::kafka::brokers::ApiVersionSupport>>,
        )>,
    > {
        self.runtime.block_on(self.client.broker_api_versions())
    }

    /// See [`Client::list_share_groups`].
    pub fn list_share_groups(&mut self) -> Result<Vec<(String, String)>> {
        self.runtime.block_on(self.client.list_share_groups())
    }

    /// See [`Client::describe_share_group`].
    pub fn describe_share_group(
        &mut self,
        group: &str,
    ) -> Result<Option<crate::kafka::share::ShareGroupDescription>> {
        self.runtime
            .block_on(self.client.describe_share_group(group))
    }

    /// See [`Client::share_group_offsets`].
    pub fn share_group_offsets(
        &mut self,
        group: &str,
    ) -> Result<std::collections::BTreeMap<TopicPartition, crate::kafka::share::ShareOffset>> {
        self.runtime
            .block_on(self.client.share_group_offsets(group))
    }

    /// See [`Client::alter_share_group_offsets`].
    pub fn alter_share_group_offsets(
        &mut self,
        group: &str,
        offsets: &std::collections::BTreeMap<TopicPartition, i64>,
    ) -> Result<std::collections::BTreeMap<TopicPartition, Option<String>>> {
        self.runtime
            .block_on(self.client.alter_share_group_offsets(group, offsets))
    }

    /// See [`Client::delete_share_group_offsets`].
    pub fn delete_share_group_offsets(
        &mut self,
        group: &str,
        topics: &[String],
    ) -> Result<crate::kafka::share::ShareOffsetsDeletion> {
        self.runtime
            .block_on(self.client.delete_share_group_offsets(group, topics))
    }

    /// Turns the client into a consumer's fetcher.
    pub fn into_consumer(self, isolation: Isolation) -> ConsumerClient {
        ConsumerClient {
            runtime: self.runtime,
            fetcher: fetch::Fetcher::new(self.client, self.config.clone(), isolation),
            config: self.config,
        }
    }
}

impl Cluster {
    /// Turns the client into a member of share group `group` reading `topics`.
    pub fn into_share_member(self, group: &str, topics: &[String]) -> ShareClient {
        ShareClient {
            runtime: self.runtime,
            member: share::ShareGroupMember::new(self.client, self.config, group, topics),
        }
    }
}

/// The blocking face of [`share::ShareGroupMember`], for `kafka-console-share-consumer`.
#[derive(Debug)]
pub struct ShareClient {
    runtime: tokio::runtime::Runtime,
    member: share::ShareGroupMember,
}

impl ShareClient {
    pub fn member_id(&self) -> &str {
        self.member.member_id()
    }

    /// See [`share::ShareGroupMember::poll`].
    pub fn poll(
        &mut self,
        acks: std::collections::BTreeMap<(String, i32), Vec<crate::kafka::share::AckRun>>,
        max_records: usize,
        max_wait: std::time::Duration,
    ) -> Result<share::SharePolled> {
        self.runtime
            .block_on(self.member.poll(acks, max_records, max_wait))
    }

    /// See [`share::ShareGroupMember::close`].
    pub fn close(
        &mut self,
        acks: std::collections::BTreeMap<(String, i32), Vec<crate::kafka::share::AckRun>>,
    ) -> Result<()> {
        self.runtime.block_on(self.member.close(acks))
    }
}

/// The blocking face of [`fetch::Fetcher`], for `kafka-console-consumer`.
#[derive(Debug)]
pub struct ConsumerClient {
    runtime: tokio::runtime::Runtime,
    fetcher: fetch::Fetcher,
    config: ClientConfig,
}

impl ConsumerClient {
    /// The bootstrap broker's address.
    pub fn addr(&self) -> &str {
        self.fetcher.addr()
    }

    /// See [`fetch::Fetcher::topics`].
    pub fn topics(
        &mut self,
        names: Option<&[String]>,
        auto_create: bool,
    ) -> Result<std::collections::BTreeMap<String, u32>> {
        self.runtime
            .block_on(self.fetcher.topics(names, auto_create))
    }

    /// See [`fetch::Fetcher::list_offset`].
    pub fn list_offset(&mut self, tp: &TopicPartition, timestamp: i64) -> Result<Option<i64>> {
        self.runtime
            .block_on(self.fetcher.list_offset(tp, timestamp))
    }

    /// The log start and end (the last stable offset with read_committed) of a partition.
    pub fn bounds(&mut self, tp: &TopicPartition) -> Result<(i64, i64)> {
        let start = self.list_offset(tp, fetch::EARLIEST)?.unwrap_or(0);
        let end = self.list_offset(tp, fetch::LATEST)?.unwrap_or(start);
        Ok((start, end))
    }

    /// The client's settings, for a group member's own connections.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Runs `f` to its end on this client's runtime, with the fetcher: a group member's
    /// requests go through its bootstrap connection.
    pub fn run<T>(&mut self, f: impl AsyncFnOnce(&mut fetch::Fetcher) -> T) -> T {
        self.runtime.block_on(f(&mut self.fetcher))
    }

    /// See [`fetch::Fetcher::fetch`].
    pub fn fetch(
        &mut self,
        positions: &[(TopicPartition, i64)],
    ) -> Result<std::collections::HashMap<TopicPartition, Fetched>> {
        self.runtime.block_on(self.fetcher.fetch(positions))
    }
}
