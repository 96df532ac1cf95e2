//! Produce: each partition's batches are checked (whole, CRC-valid RecordBatch v2, at least one
//! record, within the topic's size limit, not transactional), then queued for the partition's
//! group-commit append. The answer (for acks 1 and -1) comes once the data is fdatasync'ed;
//! acks=0 gets none, as in Kafka.

use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::ResponseError;
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{ProduceRequest, ProduceResponse};

use super::{Refusal, blocking, served_partition, str_bytes};
use crate::record::{BatchHeader, verify_crc};
use crate::server::appender::{self, Appended};
use crate::server::broker::{Broker, ServedPartition};

/// A partition's part of the request, checked: where to append and what.
type Checked = Result<(Arc<ServedPartition>, Vec<u8>, Vec<BatchHeader>), Refusal>;

pub async fn handle(
    broker: &Arc<Broker>,
    _: i16,
    request: ProduceRequest,
) -> Option<ProduceResponse> {
    if request.transactional_id.is_some() {
        // No transactional producer id is ever handed out, so this cannot be valid.
        return Some(refuse_all(
            &request,
            ResponseError::TransactionalIdAuthorizationFailed,
        ));
    }
    let acks = request.acks;
    let b = Arc::clone(broker);
    let topics = request.topic_data;
    let checked = blocking(move || {
        topics
            .into_iter()
            .map(|t| {
                let name = t.name.0.to_string();
                let parts = t
                    .partition_data
                    .into_iter()
                    .map(|p| (p.index, check(&b, &name, p.index, p.records)))
                    .collect::<Vec<_>>();
                (name, parts)
            })
            .collect::<Vec<_>>()
    })
    .await;
    // Every partition's append is queued before any is awaited, so they share fsync rounds.
    let mut pending = Vec::new();
    for (name, parts) in checked {
        let mut waits = Vec::new();
        for (index, part) in parts {
            let wait = match part {
                Ok((partition, batches, headers)) => {
                    let broker = Arc::clone(broker);
                    Ok(tokio::spawn(async move {
                        appender::append(&broker, &partition, batches, headers).await
                    }))
                }
                Err(e) => Err(e),
            };
            waits.push((index, wait));
        }
        pending.push((name, waits));
    }
    let mut responses = Vec::new();
    for (name, waits) in pending {
        let mut partitions = Vec::new();
        for (index, wait) in waits {
            let appended: Appended = match wait {
                Ok(task) => task
                    .await
                    .unwrap_or_else(|e| Err((ResponseError::UnknownServerError, e.to_string()))),
                Err(e) => Err(e),
            };
            partitions.push(partition_response(index, appended));
        }
        responses.push(
            TopicProduceResponse::default()
                .with_name(kafka_protocol::messages::TopicName(str_bytes(name)))
                .with_partition_responses(partitions),
        );
    }
    if acks == 0 {
        return None;
    }
    Some(ProduceResponse::default().with_responses(responses))
}

fn partition_response(index: i32, appended: Appended) -> PartitionProduceResponse {
    let response = PartitionProduceResponse::default()
        .with_index(index)
        .with_log_append_time_ms(-1);
    match appended {
        Ok(base) => response.with_base_offset(base),
        Err((code, message)) => response
            .with_error_code(code.code())
            .with_base_offset(-1)
            .with_error_message(Some(str_bytes(message))),
    }
}

/// Looks up the partition and checks its batches.
fn check(broker: &Broker, topic: &str, index: i32, records: Option<Bytes>) -> Checked {
    let (meta, partition) = served_partition(broker, topic, index)?;
    let records = records.unwrap_or_default();
    let headers = check_batches(&records, broker.max_batch_bytes(&meta))?;
    Ok((partition, records.to_vec(), headers))
}

/// Splits a partition's records into batches and checks each, as a broker does before
/// appending: CORRUPT_MESSAGE for bad framing or CRC, MESSAGE_TOO_LARGE past the limit,
/// INVALID_RECORD for what no producer may send here.
pub fn check_batches(
    records: &[u8],
    max_batch_bytes: usize,
) -> Result<Vec<BatchHeader>, (ResponseError, String)> {
    let corrupt = |why: String| (ResponseError::CorruptMessage, why);
    let mut headers = Vec::new();
    let mut pos = 0;
    while pos < records.len() {
        let rest = &records[pos..];
        let h =
            BatchHeader::parse(rest).map_err(|e| corrupt(format!("batch at byte {pos}: {e}")))?;
        let size = h.total_size();
        if size > rest.len() {
            return Err(corrupt(format!(
                "batch at byte {pos} is {size} bytes but only {} were sent",
                rest.len()
            )));
        }
        if size > max_batch_bytes {
            return Err((
                ResponseError::MessageTooLarge,
                format!(
                    "a record batch of {size} bytes is larger than the topic's limit of {max_batch_bytes} (max.message.bytes)"
                ),
            ));
        }
        verify_crc(&rest[..size]).map_err(|e| corrupt(format!("batch at byte {pos}: {e}")))?;
        if h.records_count < 1 || h.records_count as i64 != h.last_offset_delta as i64 + 1 {
            return Err((
                ResponseError::InvalidRecord,
                format!(
                    "batch at byte {pos} holds {} records with last offset delta {}",
                    h.records_count, h.last_offset_delta
                ),
            ));
        }
        if h.is_transactional() || h.is_control() {
            return Err((
                ResponseError::InvalidRecord,
                "transactional and control batches are not accepted: transactions are not served"
                    .to_string(),
            ));
        }
        headers.push(h);
        pos += size;
    }
    if headers.is_empty() {
        return Err((
            ResponseError::InvalidRecord,
            "the request holds no record batch".to_string(),
        ));
    }
    Ok(headers)
}

fn refuse_all(request: &ProduceRequest, code: ResponseError) -> ProduceResponse {
    let responses = request
        .topic_data
        .iter()
        .map(|t| {
            TopicProduceResponse::default()
                .with_name(t.name.clone())
                .with_partition_responses(
                    t.partition_data
                        .iter()
                        .map(|p| {
                            partition_response(
                                p.index,
                                Err((
                                    code,
                                    "transactions are not served by kafka-server-start".to_string(),
                                )),
                            )
                        })
                        .collect(),
                )
        })
        .collect();
    ProduceResponse::default().with_responses(responses)
}
