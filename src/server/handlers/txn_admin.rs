//! The transaction APIs of operators' tools (`kafka-transactions`): DescribeTransactions and
//! ListTransactions from the coordinator's state, DescribeProducers from each partition's
//! producer state, and WriteTxnMarkers, which `kafka-transactions abort` sends to end a
//! hanging transaction on a partition without its coordinator.

use std::collections::BTreeMap;
use std::sync::Arc;

use kafka_protocol::ResponseError;
use kafka_protocol::messages::describe_producers_response::{
    PartitionResponse, ProducerState, TopicResponse,
};
use kafka_protocol::messages::describe_transactions_response::{
    TopicData, TransactionState as DescribedState,
};
use kafka_protocol::messages::list_transactions_response::TransactionState as ListedState;
use kafka_protocol::messages::write_txn_markers_response::{
    WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
};
use kafka_protocol::messages::{
    DescribeProducersRequest, DescribeProducersResponse, DescribeTransactionsRequest,
    DescribeTransactionsResponse, ListTransactionsRequest, ListTransactionsResponse, ProducerId,
    TopicName, TransactionalId, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};

use super::{blocking, served_partition, str_bytes};
use crate::kafka::now_ms;
use crate::local::partition::txn::{ABORT, COMMIT};
use crate::local::txn::TxnState;
use crate::server::broker::Broker;
use crate::server::txn::Marker;

pub async fn describe_transactions(
    broker: &Arc<Broker>,
    _: i16,
    request: DescribeTransactionsRequest,
) -> Option<DescribeTransactionsResponse> {
    let mut states = Vec::new();
    for id in request.transactional_ids {
        let described = DescribedState::default()
            .with_transactional_id(id.clone())
            .with_transaction_state(str_bytes(""))
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1)
            .with_transaction_start_time_ms(-1);
        let state = match broker.txns.describe(&id.0).await {
            Ok(Some(meta)) => {
                let mut topics: BTreeMap<String, Vec<i32>> = BTreeMap::new();
                for (t, p) in &meta.partitions {
                    topics.entry(t.clone()).or_default().push(*p);
                }
                described
                    .with_transaction_state(str_bytes(meta.state.name()))
                    .with_transaction_timeout_ms(meta.timeout_ms)
                    .with_transaction_start_time_ms(meta.start_ms)
                    .with_producer_id(ProducerId(meta.producer_id))
                    .with_producer_epoch(meta.producer_epoch)
                    .with_topics(
                        topics
                            .into_iter()
                            .map(|(t, ps)| {
                                TopicData::default()
                                    .with_topic(TopicName(str_bytes(t)))
                                    .with_partitions(ps)
                            })
                            .collect(),
                    )
            }
            Ok(None) => described.with_error_code(ResponseError::TransactionalIdNotFound.code()),
            Err((code, message)) => {
                broker.log.warn(&format!(
                    "Cannot describe transactional id '{}': {message}",
                    id.0
                ));
                described.with_error_code(code.code())
            }
        };
        states.push(state);
    }
    Some(DescribeTransactionsResponse::default().with_transaction_states(states))
}

/// Kafka's state names a ListTransactions filter may hold.
const STATES: [TxnState; 6] = [
    TxnState::Empty,
    TxnState::Ongoing,
    TxnState::PrepareCommit,
    TxnState::PrepareAbort,
    TxnState::CompleteCommit,
    TxnState::CompleteAbort,
];

pub async fn list_transactions(
    broker: &Arc<Broker>,
    _: i16,
    request: ListTransactionsRequest,
) -> Option<ListTransactionsResponse> {
    let response = ListTransactionsResponse::default();
    let known = |s: &str| STATES.iter().any(|state| state.name() == s) || s == "Dead";
    let unknown: Vec<_> = request
        .state_filters
        .iter()
        .filter(|s| !known(s))
        .cloned()
        .collect();
    let pattern = match &request.transactional_id_pattern {
        Some(p) if !p.is_empty() => match fancy_regex::Regex::new(&format!("^(?:{p})$")) {
            Ok(re) => Some(re),
            Err(e) => {
                broker.log.warn(&format!(
                    "Refused ListTransactions: the transactional id pattern '{p}' is not a regular expression: {e}"
                ));
                return Some(
                    response.with_error_code(ResponseError::InvalidRegularExpression.code()),
                );
            }
        },
        _ => None,
    };
    let all = match broker.txns.list().await {
        Ok(all) => all,
        Err((code, message)) => {
            broker
                .log
                .warn(&format!("Cannot list transactions: {message}"));
            return Some(response.with_error_code(code.code()));
        }
    };
    let now = now_ms();
    let states = all
        .into_iter()
        .filter(|m| {
            request.state_filters.is_empty()
                || request
                    .state_filters
                    .iter()
                    .any(|s| s.as_str() == m.state.name())
        })
        .filter(|m| {
            request.producer_id_filters.is_empty()
                || request
                    .producer_id_filters
                    .contains(&ProducerId(m.producer_id))
        })
        // As Kafka: the time since the start, which for an id with no transaction (-1) is
        // longer than any filter.
        .filter(|m| request.duration_filter < 0 || now - m.start_ms >= request.duration_filter)
        .filter(|m| {
            pattern
                .as_ref()
                .is_none_or(|re| re.is_match(&m.transactional_id).unwrap_or(false))
        })
        .map(|m| {
            ListedState::default()
                .with_transactional_id(TransactionalId(str_bytes(m.transactional_id)))
                .with_producer_id(ProducerId(m.producer_id))
                .with_transaction_state(str_bytes(m.state.name()))
        })
        .collect();
    Some(
        response
            .with_unknown_state_filters(unknown)
            .with_transaction_states(states),
    )
}

pub async fn describe_producers(
    broker: &Arc<Broker>,
    _: i16,
    request: DescribeProducersRequest,
) -> Option<DescribeProducersResponse> {
    let b = Arc::clone(broker);
    let topics = blocking(move || {
        request
            .topics
            .into_iter()
            .map(|t| {
                let partitions = t
                    .partition_indexes
                    .iter()
                    .map(|&p| producers_of(&b, &t.name.0, p))
                    .collect();
                TopicResponse::default()
                    .with_name(t.name)
                    .with_partitions(partitions)
            })
            .collect()
    })
    .await;
    Some(DescribeProducersResponse::default().with_topics(topics))
}

/// One partition's transactional producers (the embedded log keeps the state of those only).
fn producers_of(broker: &Broker, topic: &str, index: i32) -> PartitionResponse {
    let response = PartitionResponse::default().with_partition_index(index);
    let partition = match served_partition(broker, topic, index) {
        Ok((_, partition)) => partition,
        Err((code, message)) => {
            return response
                .with_error_code(code.code())
                .with_error_message(Some(str_bytes(message)));
        }
    };
    match partition.log.producer_states() {
        Ok(states) => response.with_active_producers(
            states
                .producers()
                .map(|p| {
                    ProducerState::default()
                        .with_producer_id(ProducerId(p.producer_id))
                        .with_producer_epoch(i32::from(p.epoch))
                        .with_last_sequence(p.last_sequence)
                        .with_last_timestamp(p.timestamp)
                        .with_coordinator_epoch(p.coordinator_epoch)
                        .with_current_txn_start_offset(p.current_txn_first_offset)
                })
                .collect(),
        ),
        Err(e) => response
            .with_error_code(super::error_code(&e))
            .with_error_message(Some(str_bytes(e.to_string()))),
    }
}

pub async fn write_txn_markers(
    broker: &Arc<Broker>,
    _: i16,
    request: WriteTxnMarkersRequest,
) -> Option<WriteTxnMarkersResponse> {
    let mut results = Vec::new();
    for marker in request.markers {
        let kind = if marker.transaction_result {
            COMMIT
        } else {
            ABORT
        };
        let written = Marker::new(
            marker.producer_id.0,
            marker.producer_epoch,
            kind,
            marker.coordinator_epoch,
        );
        let mut topics = Vec::new();
        for t in marker.topics {
            let mut partitions = Vec::new();
            for p in t.partition_indexes {
                let code = match written.append_to(broker, &t.name.0, p).await {
                    Ok(()) => 0,
                    Err((code, _)) => code.code(),
                };
                partitions.push(
                    WritableTxnMarkerPartitionResult::default()
                        .with_partition_index(p)
                        .with_error_code(code),
                );
            }
            topics.push(
                WritableTxnMarkerTopicResult::default()
                    .with_name(t.name)
                    .with_partitions(partitions),
            );
        }
        broker.log.info(&format!(
            "Wrote {} markers of producer {} epoch {} on request",
            if marker.transaction_result {
                "COMMIT"
            } else {
                "ABORT"
            },
            marker.producer_id.0,
            marker.producer_epoch
        ));
        results.push(
            WritableTxnMarkerResult::default()
                .with_producer_id(marker.producer_id)
                .with_topics(topics),
        );
    }
    Some(WriteTxnMarkersResponse::default().with_markers(results))
}
