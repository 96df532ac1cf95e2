//! The producer's transactions on a cluster, as Kafka's transaction version 1 runs them (what
//! librdkafka and Java's producer on older clusters do): InitProducerId with the
//! transactional id at its coordinator (FindCoordinator), AddPartitionsToTxn before the first
//! record of a transaction, AddOffsetsToTxn and TxnOffsetCommit (at the group's coordinator)
//! for a consumer group's offsets, EndTxn once the transaction's records are acknowledged. A request
//! the coordinator answers CONCURRENT_TRANSACTIONS (it is still writing the last transaction's
//! markers) or with a coordinator error, or whose connection fails, is sent again with
//! backoff, up to `max.block.ms`.

use std::time::Duration;

use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_protocol::messages::txn_offset_commit_request::{
    TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use kafka_protocol::messages::{
    AddOffsetsToTxnRequest, AddPartitionsToTxnRequest, EndTxnRequest, GroupId,
    InitProducerIdRequest, ProducerId, TransactionalId, TxnOffsetCommitRequest,
};
use kafka_protocol::protocol::StrBytes;

use super::super::admin::{Client, topic_name};
use super::super::coordinator::{
    Coordinator, find_coordinator, find_transaction_coordinator, is_coordinator_error,
};
use super::super::error::{RemoteError, Result};
use crate::kafka::producer::ProducerSettings;
use crate::wire::api::Api;

/// CONCURRENT_TRANSACTIONS.
const CONCURRENT_TRANSACTIONS: i16 = 51;
/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// The link to a transactional id's coordinator.
#[derive(Debug)]
pub(super) struct TxnCoordinator {
    id: String,
    timeout_ms: i32,
    coordinator: Option<Coordinator>,
}

impl TxnCoordinator {
    pub fn new(id: &str, timeout_ms: i32) -> TxnCoordinator {
        TxnCoordinator {
            id: id.to_string(),
            timeout_ms,
            coordinator: None,
        }
    }

    /// The transactional id.
    pub fn transactional_id(&self) -> &str {
        &self.id
    }

    fn id(&self) -> TransactionalId {
        TransactionalId(StrBytes::from_string(self.id.clone()))
    }

    /// Sends `request` to the coordinator (found first) and returns its error code with the
    /// response, until the code is not one worth waiting out; `what` names the step in errors.
    async fn ask<R: Api>(
        &mut self,
        client: &mut Client,
        settings: &ProducerSettings,
        what: &str,
        request: &R,
        code_of: impl Fn(&R::Response) -> i16,
    ) -> Result<R::Response> {
        let start = tokio::time::Instant::now();
        let mut backoff = Duration::from_millis(20);
        loop {
            let sent = async {
                if self.coordinator.is_none() {
                    let conn = client.live_connection().await?;
                    self.coordinator = Some(find_transaction_coordinator(conn, &self.id).await?);
                }
                let conn = &mut self.coordinator.as_mut().expect("found above").conn;
                let version = conn.version::<R>()?;
                conn.send(request, version).await
            }
            .await;
            let waited_out = start.elapsed() >= settings.max_block;
            match sent {
                Ok(response) => match code_of(&response) {
                    0 => return Ok(response),
                    code if (code == CONCURRENT_TRANSACTIONS || is_coordinator_error(code))
                        && !waited_out =>
                    {
                        if is_coordinator_error(code) {
                            self.coordinator = None;
                        }
                    }
                    code => {
                        let e = RemoteError::broker(code, None);
                        return Err(RemoteError::Broker {
                            code,
                            message: format!(
                                "{what} for transactional id '{}' failed: {e}",
                                self.id
                            ),
                        });
                    }
                },
                Err(_) if !waited_out => self.coordinator = None,
                Err(e) => return Err(e),
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// The producer id and epoch of the transactional id (a transaction its last producer
    /// left open is aborted by the coordinator).
    pub async fn init(
        &mut self,
        client: &mut Client,
        settings: &ProducerSettings,
    ) -> Result<(i64, i16)> {
        let request = InitProducerIdRequest::default()
            .with_transactional_id(Some(self.id()))
            .with_transaction_timeout_ms(self.timeout_ms)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1);
        let response = self
            .ask(client, settings, "InitProducerId", &request, |r| {
                r.error_code
            })
            .await?;
        Ok((response.producer_id.0, response.producer_epoch))
    }

    /// Adds `partitions` of `topic` to the transaction.
    pub async fn add_partitions(
        &mut self,
        client: &mut Client,
        settings: &ProducerSettings,
        producer: (i64, i16),
        topic: &str,
        partitions: Vec<i32>,
    ) -> Result<()> {
        let request = AddPartitionsToTxnRequest::default()
            .with_v3_and_below_transactional_id(self.id())
            .with_v3_and_below_producer_id(ProducerId(producer.0))
            .with_v3_and_below_producer_epoch(producer.1)
            .with_v3_and_below_topics(vec![
                AddPartitionsToTxnTopic::default()
                    .with_name(topic_name(topic))
                    .with_partitions(partitions),
            ]);
        // The first partition's code stands for all (they fail together).
        let code_of = |r: &<AddPartitionsToTxnRequest as Api>::Response| {
            r.results_by_topic_v3_and_below
                .iter()
                .flat_map(|t| &t.results_by_partition)
                .map(|p| p.partition_error_code)
                .find(|&c| c != 0)
                .unwrap_or(r.error_code)
        };
        self.ask(client, settings, "AddPartitionsToTxn", &request, code_of)
            .await
            .map(drop)
    }

    /// Adds `group` to the transaction (AddOffsetsToTxn) and sends its offsets
    /// (TxnOffsetCommit at the group's coordinator, as an admin would: no generation, no
    /// member), which the group gets when the transaction commits.
    pub async fn send_offsets(
        &mut self,
        client: &mut Client,
        settings: &ProducerSettings,
        producer: (i64, i16),
        group: &str,
        offsets: &[(crate::kafka::TopicPartition, i64)],
    ) -> Result<()> {
        let group_id = GroupId(StrBytes::from_string(group.to_string()));
        let request = AddOffsetsToTxnRequest::default()
            .with_transactional_id(self.id())
            .with_producer_id(ProducerId(producer.0))
            .with_producer_epoch(producer.1)
            .with_group_id(group_id.clone());
        self.ask(client, settings, "AddOffsetsToTxn", &request, |r| {
            r.error_code
        })
        .await?;
        let mut topics: std::collections::BTreeMap<&str, Vec<TxnOffsetCommitRequestPartition>> =
            Default::default();
        for ((topic, partition), offset) in offsets {
            topics.entry(topic).or_default().push(
                TxnOffsetCommitRequestPartition::default()
                    .with_partition_index(*partition)
                    .with_committed_offset(*offset)
                    .with_committed_leader_epoch(-1),
            );
        }
        let request = TxnOffsetCommitRequest::default()
            .with_transactional_id(self.id())
            .with_group_id(group_id)
            .with_producer_id(ProducerId(producer.0))
            .with_producer_epoch(producer.1)
            .with_generation_id(-1)
            .with_topics(
                topics
                    .into_iter()
                    .map(|(t, partitions)| {
                        TxnOffsetCommitRequestTopic::default()
                            .with_name(topic_name(t))
                            .with_partitions(partitions)
                    })
                    .collect(),
            );
        let start = tokio::time::Instant::now();
        let mut backoff = Duration::from_millis(20);
        loop {
            let conn = client.live_connection().await?;
            let mut coordinator = find_coordinator(conn, group).await?;
            let conn = &mut coordinator.conn;
            let version = conn.version::<TxnOffsetCommitRequest>()?;
            let response = conn.send(&request, version).await?;
            let code = response
                .topics
                .iter()
                .flat_map(|t| &t.partitions)
                .map(|p| p.error_code)
                .find(|&c| c != 0)
                .unwrap_or(0);
            match code {
                0 => return Ok(()),
                code if (code == CONCURRENT_TRANSACTIONS || is_coordinator_error(code))
                    && start.elapsed() < settings.max_block => {}
                code => {
                    let e = RemoteError::broker(code, None);
                    return Err(RemoteError::Broker {
                        code,
                        message: format!(
                            "TxnOffsetCommit of group '{group}' for transactional id '{}' failed: {e}",
                            self.id
                        ),
                    });
                }
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Commits or aborts the transaction.
    pub async fn end(
        &mut self,
        client: &mut Client,
        settings: &ProducerSettings,
        producer: (i64, i16),
        commit: bool,
    ) -> Result<()> {
        let request = EndTxnRequest::default()
            .with_transactional_id(self.id())
            .with_producer_id(ProducerId(producer.0))
            .with_producer_epoch(producer.1)
            .with_committed(commit);
        let what = if commit { "committing" } else { "aborting" };
        self.ask(client, settings, what, &request, |r| r.error_code)
            .await
            .map(drop)
    }
}
