//! The transaction admin calls of `kafka-transactions`, as Kafka's Admin client makes them:
//! ListTransactions at every broker, DescribeTransactions and the fencing InitProducerId at the
//! transactional id's coordinator, DescribeProducers and WriteTxnMarkers at a partition's
//! leader (or a given broker).

use std::time::Duration;

use kafka_protocol::messages::describe_producers_request::TopicRequest;
use kafka_protocol::messages::write_txn_markers_request::{
    WritableTxnMarker, WritableTxnMarkerTopic,
};
use kafka_protocol::messages::{
    DescribeProducersRequest, DescribeTransactionsRequest, InitProducerIdRequest,
    ListTransactionsRequest, ProducerId, TransactionalId, WriteTxnMarkersRequest,
};
use kafka_protocol::protocol::StrBytes;

use super::admin::{BrokerInfo, Client, topic_name};
use super::coordinator::find_transaction_coordinator;
use super::error::{RemoteError, Result};
use super::net::connection::connect_broker;
use crate::kafka::TopicPartition;
use crate::kafka::transactions::{
    AbortSpec, ProducerDescription, TransactionDescription, TransactionFilter, TransactionListing,
};

/// TRANSACTIONAL_ID_NOT_FOUND.
const NOT_FOUND: i16 = 105;
/// CONCURRENT_TRANSACTIONS: the coordinator is still ending the id's transaction.
const CONCURRENT_TRANSACTIONS: i16 = 51;

fn text(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

impl Client {
    /// Every broker's transactions that pass `filter`, broker by broker.
    pub async fn list_transactions(
        &mut self,
        filter: &TransactionFilter,
    ) -> Result<Vec<TransactionListing>> {
        let brokers = self.metadata(Some(&[])).await?.brokers;
        let config = self.conn.config().clone();
        let mut out = Vec::new();
        for b in brokers {
            let mut conn = connect_broker(b.id, &b.host, b.port, &config).await?;
            let version = conn.version::<ListTransactionsRequest>()?;
            if filter.pattern.is_some() && version < 2 {
                return Err(RemoteError::Protocol {
                    addr: conn.addr().to_string(),
                    api: "ListTransactions",
                    reason: "the broker cannot filter by transactional id pattern (it needs \
                             ListTransactions v2, Kafka 4.1 or later)"
                        .into(),
                });
            }
            let mut request = ListTransactionsRequest::default().with_producer_id_filters(
                filter.producer_ids.iter().map(|&p| ProducerId(p)).collect(),
            );
            if version >= 1 {
                request = request.with_duration_filter(filter.duration_ms);
            }
            if version >= 2 {
                request =
                    request.with_transactional_id_pattern(filter.pattern.as_deref().map(text));
            }
            let response = conn.send(&request, version).await?;
            if response.error_code != 0 {
                return Err(RemoteError::broker(response.error_code, None));
            }
            out.extend(
                response
                    .transaction_states
                    .into_iter()
                    .map(|t| TransactionListing {
                        transactional_id: t.transactional_id.0.to_string(),
                        coordinator: b.id,
                        producer_id: t.producer_id.0,
                        state: t.transaction_state.to_string(),
                    }),
            );
        }
        Ok(out)
    }

    /// Transactional id `id` as its coordinator describes it; `None` when the coordinator
    /// does not know it.
    pub async fn describe_transaction(
        &mut self,
        id: &str,
    ) -> Result<Option<TransactionDescription>> {
        let mut coordinator = find_transaction_coordinator(&mut self.conn, id).await?;
        let conn = &mut coordinator.conn;
        let version = conn.version::<DescribeTransactionsRequest>()?;
        let request = DescribeTransactionsRequest::default()
            .with_transactional_ids(vec![TransactionalId(text(id))]);
        let response = conn.send(&request, version).await?;
        let Some(t) = response.transaction_states.into_iter().next() else {
            return Err(RemoteError::Protocol {
                addr: conn.addr().to_string(),
                api: "DescribeTransactions",
                reason: format!("no answer for {id}"),
            });
        };
        match t.error_code {
            0 => {}
            NOT_FOUND => return Ok(None),
            code => return Err(RemoteError::broker(code, None)),
        }
        Ok(Some(TransactionDescription {
            coordinator: coordinator.node_id,
            transactional_id: id.to_string(),
            producer_id: t.producer_id.0,
            producer_epoch: t.producer_epoch,
            state: t.transaction_state.to_string(),
            timeout_ms: t.transaction_timeout_ms,
            start_ms: t.transaction_start_time_ms,
            partitions: t
                .topics
                .into_iter()
                .flat_map(|d| {
                    let topic = d.topic.0.to_string();
                    d.partitions.into_iter().map(move |p| (topic.clone(), p))
                })
                .collect(),
        }))
    }

    /// The broker that leads `tp`, or broker `id` when given.
    async fn broker_for(&mut self, tp: &TopicPartition, id: Option<i32>) -> Result<BrokerInfo> {
        if let Some(id) = id {
            let brokers = self.metadata(Some(&[])).await?.brokers;
            return brokers.into_iter().find(|b| b.id == id).ok_or_else(|| {
                RemoteError::broker(-1, Some(&format!("broker {id} is not in the cluster")))
            });
        }
        let leaders = self.leaders(std::slice::from_ref(tp)).await?;
        if let Some((_, code)) = leaders.leaderless.first() {
            return Err(RemoteError::broker(*code, None));
        }
        leaders
            .by_leader
            .into_iter()
            .next()
            .map(|(b, _)| b)
            .ok_or_else(|| RemoteError::broker(-1, Some("the partition has no leader")))
    }

    /// The active producers of `tp`, at its leader or at broker `broker`.
    pub async fn describe_producers(
        &mut self,
        tp: &TopicPartition,
        broker: Option<i32>,
    ) -> Result<Vec<ProducerDescription>> {
        let b = self.broker_for(tp, broker).await?;
        let config = self.conn.config().clone();
        let mut conn = connect_broker(b.id, &b.host, b.port, &config).await?;
        let version = conn.version::<DescribeProducersRequest>()?;
        let request = DescribeProducersRequest::default().with_topics(vec![
            TopicRequest::default()
                .with_name(topic_name(&tp.0))
                .with_partition_indexes(vec![tp.1]),
        ]);
        let response = conn.send(&request, version).await?;
        let partition = response
            .topics
            .into_iter()
            .flat_map(|t| t.partitions)
            .find(|p| p.partition_index == tp.1)
            .ok_or_else(|| RemoteError::Protocol {
                addr: conn.addr().to_string(),
                api: "DescribeProducers",
                reason: format!("no answer for {}-{}", tp.0, tp.1),
            })?;
        if partition.error_code != 0 {
            let message = partition.error_message.map(|m| m.to_string());
            return Err(RemoteError::broker(
                partition.error_code,
                message.as_deref(),
            ));
        }
        Ok(partition
            .active_producers
            .into_iter()
            .map(|p| ProducerDescription {
                producer_id: p.producer_id.0,
                producer_epoch: p.producer_epoch,
                coordinator_epoch: p.coordinator_epoch,
                last_sequence: p.last_sequence,
                last_timestamp: p.last_timestamp,
                current_txn_start_offset: p.current_txn_start_offset,
            })
            .collect())
    }

    /// Writes an ABORT marker for a producer's transaction on one partition, at its leader.
    pub async fn abort_transaction(&mut self, spec: &AbortSpec) -> Result<()> {
        let tp = (spec.topic.clone(), spec.partition);
        let b = self.broker_for(&tp, None).await?;
        let config = self.conn.config().clone();
        let mut conn = connect_broker(b.id, &b.host, b.port, &config).await?;
        let version = conn.version::<WriteTxnMarkersRequest>()?;
        let request = WriteTxnMarkersRequest::default().with_markers(vec![
            WritableTxnMarker::default()
                .with_producer_id(ProducerId(spec.producer_id))
                .with_producer_epoch(spec.producer_epoch)
                .with_transaction_result(false)
                .with_coordinator_epoch(spec.coordinator_epoch)
                .with_topics(vec![
                    WritableTxnMarkerTopic::default()
                        .with_name(topic_name(&spec.topic))
                        .with_partition_indexes(vec![spec.partition]),
                ]),
        ]);
        let response = conn.send(&request, version).await?;
        let code = response
            .markers
            .iter()
            .flat_map(|m| &m.topics)
            .flat_map(|t| &t.partitions)
            .map(|p| p.error_code)
            .find(|&c| c != 0);
        match code {
            None => Ok(()),
            Some(code) => Err(RemoteError::broker(code, None)),
        }
    }

    /// Fences the producers of transactional id `id` (Kafka's `fenceProducers`): an
    /// InitProducerId at its coordinator bumps the epoch and aborts its open transaction.
    pub async fn fence_producers(&mut self, id: &str) -> Result<()> {
        let timeout = self.conn.request_timeout();
        let deadline = tokio::time::Instant::now() + timeout;
        let mut coordinator = find_transaction_coordinator(&mut self.conn, id).await?;
        let conn = &mut coordinator.conn;
        let version = conn.version::<InitProducerIdRequest>()?;
        let request = InitProducerIdRequest::default()
            .with_transactional_id(Some(TransactionalId(text(id))))
            .with_transaction_timeout_ms(i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX))
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1);
        loop {
            let response = conn.send(&request, version).await?;
            match response.error_code {
                0 => return Ok(()),
                CONCURRENT_TRANSACTIONS if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                code => return Err(RemoteError::broker(code, None)),
            }
        }
    }

    /// The partitions broker `id` leads.
    pub async fn partitions_led_by(&mut self, id: i32) -> Result<Vec<TopicPartition>> {
        let meta = self.metadata(None).await?;
        Ok(meta
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .filter(|p| p.leader == id)
                    .map(|p| (t.name.clone(), p.partition))
            })
            .collect())
    }
}
