//! The transaction APIs a producer sends: InitProducerId (with and without a transactional
//! id), AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit and EndTxn. Each decodes its
//! request, asks the coordinator (`server::txn`) and encodes the answer; the rules live there.

use std::sync::Arc;

use kafka_protocol::ResponseError;
use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_protocol::messages::add_partitions_to_txn_response::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnResult, AddPartitionsToTxnTopicResult,
};
use kafka_protocol::messages::txn_offset_commit_response::{
    TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use kafka_protocol::messages::{
    AddOffsetsToTxnRequest, AddOffsetsToTxnResponse, AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse, EndTxnRequest, EndTxnResponse, InitProducerIdRequest,
    InitProducerIdResponse, ProducerId, TxnOffsetCommitRequest, TxnOffsetCommitResponse,
};

use crate::local::txn::TxnOffset;
use crate::server::broker::Broker;

/// InitProducerId: for an idempotent producer a new producer id, or the same id with the next
/// epoch when it asks to bump its epoch (KIP-360); for a transactional id, the coordinator's
/// answer.
pub async fn init_producer_id(
    broker: &Arc<Broker>,
    version: i16,
    request: InitProducerIdRequest,
) -> Option<InitProducerIdResponse> {
    let response = InitProducerIdResponse::default();
    let Some(id) = request.transactional_id else {
        let (id, epoch) = if request.producer_id.0 >= 0 && request.producer_epoch < i16::MAX - 1 {
            (request.producer_id.0, request.producer_epoch + 1)
        } else {
            (broker.new_producer_id(), 0)
        };
        return Some(
            response
                .with_producer_id(ProducerId(id))
                .with_producer_epoch(epoch),
        );
    };
    let asked = (request.producer_id.0, request.producer_epoch);
    let answer = broker
        .txns
        .init_producer_id(broker, &id, request.transaction_timeout_ms, asked)
        .await;
    Some(match answer {
        Ok((pid, epoch)) => response
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch),
        Err((code, message)) => {
            log_refusal(broker, "InitProducerId", &id, code, &message);
            let code = older_fenced(code, version, 4);
            response
                .with_error_code(code.code())
                .with_producer_id(ProducerId(-1))
                .with_producer_epoch(-1)
        }
    })
}

/// Before `since`, a fenced producer is told INVALID_PRODUCER_EPOCH (PRODUCER_FENCED is newer).
fn older_fenced(code: ResponseError, version: i16, since: i16) -> ResponseError {
    match code {
        ResponseError::ProducerFenced if version < since => ResponseError::InvalidProducerEpoch,
        code => code,
    }
}

/// Refusals a well-behaved client meets (a zombie fenced, a retry) are logged at debug level
/// only; the others, which point at a problem, as warnings.
fn log_refusal(broker: &Broker, api: &str, id: &str, code: ResponseError, message: &str) {
    let line = format!("{api} for transactional id '{id}' refused with {code:?}: {message}");
    match code {
        ResponseError::ProducerFenced
        | ResponseError::ConcurrentTransactions
        | ResponseError::InvalidProducerEpoch => broker.log.debug(&line),
        _ => broker.log.warn(&line),
    }
}

pub async fn add_partitions(
    broker: &Arc<Broker>,
    version: i16,
    request: AddPartitionsToTxnRequest,
) -> Option<AddPartitionsToTxnResponse> {
    let response = AddPartitionsToTxnResponse::default();
    if version <= 3 {
        let id = request.v3_and_below_transactional_id.0.to_string();
        let who = (
            id.as_str(),
            request.v3_and_below_producer_id.0,
            request.v3_and_below_producer_epoch,
        );
        let topics = &request.v3_and_below_topics;
        let results = add_one(broker, version, who, topics, false).await;
        return Some(response.with_results_by_topic_v3_and_below(results));
    }
    let mut results = Vec::new();
    for t in &request.transactions {
        let id = t.transactional_id.0.to_string();
        let who = (id.as_str(), t.producer_id.0, t.producer_epoch);
        let topics = add_one(broker, version, who, &t.topics, t.verify_only).await;
        results.push(
            AddPartitionsToTxnResult::default()
                .with_transactional_id(t.transactional_id.clone())
                .with_topic_results(topics),
        );
    }
    Some(response.with_results_by_transaction(results))
}

/// One transaction's partitions added, with a code for each.
async fn add_one(
    broker: &Arc<Broker>,
    version: i16,
    who: (&str, i64, i16),
    topics: &[AddPartitionsToTxnTopic],
    verify_only: bool,
) -> Vec<AddPartitionsToTxnTopicResult> {
    let wanted: Vec<(String, i32)> = topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|&p| (t.name.0.to_string(), p)))
        .collect();
    let codes: Vec<i16> = match broker
        .txns
        .add_partitions(broker, who, &wanted, verify_only)
        .await
    {
        Ok(each) => each
            .into_iter()
            .map(|r| r.err().map_or(0, |c| c.code()))
            .collect(),
        Err((code, message)) => {
            log_refusal(broker, "AddPartitionsToTxn", who.0, code, &message);
            vec![older_fenced(code, version, 2).code(); wanted.len()]
        }
    };
    let mut codes = codes.into_iter();
    topics
        .iter()
        .map(|t| {
            let partitions = t
                .partitions
                .iter()
                .map(|&p| {
                    AddPartitionsToTxnPartitionResult::default()
                        .with_partition_index(p)
                        .with_partition_error_code(codes.next().unwrap_or(0))
                })
                .collect();
            AddPartitionsToTxnTopicResult::default()
                .with_name(t.name.clone())
                .with_results_by_partition(partitions)
        })
        .collect()
}

pub async fn add_offsets(
    broker: &Arc<Broker>,
    version: i16,
    request: AddOffsetsToTxnRequest,
) -> Option<AddOffsetsToTxnResponse> {
    let id = request.transactional_id.0.to_string();
    let who = (id.as_str(), request.producer_id.0, request.producer_epoch);
    let code = match broker.txns.add_offsets(who).await {
        Ok(()) => 0,
        Err((code, message)) => {
            log_refusal(broker, "AddOffsetsToTxn", &id, code, &message);
            older_fenced(code, version, 2).code()
        }
    };
    Some(AddOffsetsToTxnResponse::default().with_error_code(code))
}

pub async fn txn_offset_commit(
    broker: &Arc<Broker>,
    version: i16,
    request: TxnOffsetCommitRequest,
) -> Option<TxnOffsetCommitResponse> {
    let id = request.transactional_id.0.to_string();
    let group = request.group_id.0.to_string();
    let offsets = request
        .topics
        .iter()
        .flat_map(|t| {
            let group = &group;
            t.partitions.iter().map(move |p| TxnOffset {
                group: group.clone(),
                topic: t.name.0.to_string(),
                partition: p.partition_index,
                offset: p.committed_offset,
                leader_epoch: p.committed_leader_epoch,
            })
        })
        .collect();
    let who = (id.as_str(), request.producer_id.0, request.producer_epoch);
    let code = if group.is_empty() {
        ResponseError::InvalidGroupId.code()
    } else {
        match broker.txns.commit_offsets(who, offsets).await {
            Ok(()) => 0,
            Err((code, message)) => {
                log_refusal(broker, "TxnOffsetCommit", &id, code, &message);
                let code = match code {
                    // TxnOffsetCommit reports a fenced producer by the older code.
                    ResponseError::ProducerFenced => ResponseError::InvalidProducerEpoch,
                    ResponseError::TransactionAbortable if version < 4 => {
                        ResponseError::InvalidTxnState
                    }
                    code => code,
                };
                code.code()
            }
        }
    };
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    TxnOffsetCommitResponsePartition::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(code)
                })
                .collect();
            TxnOffsetCommitResponseTopic::default()
                .with_name(t.name.clone())
                .with_partitions(partitions)
        })
        .collect();
    Some(TxnOffsetCommitResponse::default().with_topics(topics))
}

pub async fn end_txn(
    broker: &Arc<Broker>,
    version: i16,
    request: EndTxnRequest,
) -> Option<EndTxnResponse> {
    let id = request.transactional_id.0.to_string();
    let who = (id.as_str(), request.producer_id.0, request.producer_epoch);
    let response = EndTxnResponse::default()
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1);
    Some(
        match broker
            .txns
            .end_transaction(broker, who, request.committed)
            .await
        {
            Ok((pid, epoch)) => response
                .with_producer_id(ProducerId(pid))
                .with_producer_epoch(epoch),
            Err((code, message)) => {
                log_refusal(broker, "EndTxn", &id, code, &message);
                response.with_error_code(older_fenced(code, version, 2).code())
            }
        },
    )
}
