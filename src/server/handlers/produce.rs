//! Produce: each partition's batches are checked (whole, CRC-valid RecordBatch v2, at least one
//! record, within the topic's size limit, no control batch (a transaction's batches only with
//! its transactional id, checked with the coordinator), and every record readable, as
//! Kafka's LogValidator reads them), then queued for the partition's group-commit append. The
//! answer (for acks 1 and -1) comes once the data is fdatasync'ed; acks=0 gets none, as in
//! Kafka. The queueing and the answer are two steps, so that a connection can queue its next
//! produce while this one's fsync runs (see `connection`), and the two share a round. A refused batch writes nothing: one malformed batch stored would make the partition
//! unreadable for every consumer after it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::ResponseError;
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{ProduceRequest, ProduceResponse};

use super::{Refusal, blocking, served_partition, str_bytes};
use crate::record::{BatchHeader, RecordError, for_each_record_crc, verify_crc};
use crate::server::appender::{self, Appended};
use crate::server::broker::{Broker, ServedPartition};

/// A partition's part of the request, checked: where to append and what.
type Checked = Result<(Arc<ServedPartition>, Vec<u8>, Vec<BatchHeader>), Refusal>;

/// The answer to a produce whose batches are queued: ready once they are durable; `None` for
/// acks=0.
pub type Answer = Pin<Box<dyn Future<Output = Option<ProduceResponse>> + Send>>;

/// Checks the request and queues its partitions' batches for their appends before it returns,
/// so the next request queued is written after this one; the answer waits for the appends.
pub async fn queue(broker: &Arc<Broker>, version: i16, request: ProduceRequest) -> Answer {
    if ![-1, 0, 1].contains(&request.acks) {
        // Kafka answers every partition so, even for acks it will not answer otherwise.
        let refused = refuse_all(
            &request,
            ResponseError::InvalidRequiredAcks,
            "acks must be -1 (all), 0 or 1",
        );
        return Box::pin(std::future::ready(Some(refused)));
    }
    let acks = request.acks;
    let transactional_id = request.transactional_id.map(|id| id.0.to_string());
    let transactional = transactional_id.is_some();
    let b = Arc::clone(broker);
    let topics = request.topic_data;
    let mut checked = blocking(move || {
        topics
            .into_iter()
            .map(|t| {
                let name = t.name.0.to_string();
                let parts = t
                    .partition_data
                    .into_iter()
                    .map(|p| (p.index, check(&b, &name, p.index, p.records, transactional)))
                    .collect::<Vec<_>>();
                (name, parts)
            })
            .collect::<Vec<_>>()
    })
    .await;
    // A transaction's partitions are checked with its coordinator (the producer is current
    // and its transaction open), and join the transaction if they are not in it yet.
    if let Some(id) = &transactional_id {
        for (name, parts) in &mut checked {
            for (index, part) in parts.iter_mut() {
                let Ok((_, _, headers)) = part else { continue };
                // Every producer and epoch of the batches: one may not hide behind another.
                let mut producers: Vec<(i64, i16)> = headers
                    .iter()
                    .filter(|h| h.is_transactional())
                    .map(|h| (h.producer_id, h.producer_epoch))
                    .collect();
                producers.dedup();
                for (pid, epoch) in producers {
                    let who = (id.as_str(), pid, epoch);
                    if let Err(refused) =
                        broker.txns.verify_produce(who, name, *index, version).await
                    {
                        *part = Err(refused);
                        break;
                    }
                }
            }
        }
    }
    // Every partition's append is queued before any is awaited, so they share fsync rounds.
    let pending: Vec<_> = checked
        .into_iter()
        .map(|(name, parts)| {
            let waits: Vec<_> = parts
                .into_iter()
                .map(|(index, part)| {
                    let wait = part.map(|(partition, batches, headers)| {
                        appender::append(broker, &partition, batches, headers)
                    });
                    (index, wait)
                })
                .collect();
            (name, waits)
        })
        .collect();
    Box::pin(async move {
        let mut responses = Vec::new();
        for (name, waits) in pending {
            let mut partitions = Vec::new();
            for (index, wait) in waits {
                let appended: Appended = match wait {
                    Ok(appended) => appended.await,
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
        (acks != 0).then(|| ProduceResponse::default().with_responses(responses))
    })
}

fn partition_response(index: i32, appended: Appended) -> PartitionProduceResponse {
    let response = PartitionProduceResponse::default()
        .with_index(index)
        .with_log_append_time_ms(-1);
    match appended {
        Ok(written) => response
            .with_base_offset(written.base_offset)
            .with_log_append_time_ms(written.log_append_time),
        Err((code, message)) => response
            .with_error_code(code.code())
            .with_base_offset(-1)
            .with_error_message(Some(str_bytes(message))),
    }
}

/// Looks up the partition and checks its batches; `transactional`: the request names a
/// transactional id.
fn check(
    broker: &Broker,
    topic: &str,
    index: i32,
    records: Option<Bytes>,
    transactional: bool,
) -> Checked {
    let (meta, partition) = served_partition(broker, topic, index)?;
    let records = records.unwrap_or_default();
    let compacted = meta.is_compacted().then(|| format!("{topic}-{index}"));
    let headers = check_batches(
        &records,
        broker.max_batch_bytes(&meta),
        compacted.as_deref(),
    )?;
    if let Some(h) = headers
        .iter()
        .find(|h| h.is_transactional() != transactional)
    {
        return Err(match transactional {
            false => (
                ResponseError::TransactionalIdAuthorizationFailed,
                "a transactional batch came without a transactional id".to_string(),
            ),
            true => (
                ResponseError::InvalidRecord,
                format!(
                    "a batch of producer {} is not transactional but the request names a \
                     transactional id",
                    h.producer_id
                ),
            ),
        });
    }
    Ok((partition, records.to_vec(), headers))
}

/// Splits a partition's records into batches and checks each, as a broker does before
/// appending: CORRUPT_MESSAGE for bad framing or CRC, MESSAGE_TOO_LARGE past the limit,
/// INVALID_RECORD for what no producer may send here. `compacted` names the partition
/// (`topic-partition`) of a compacted topic, whose records must have keys.
pub fn check_batches(
    records: &[u8],
    max_batch_bytes: usize,
    compacted: Option<&str>,
) -> Result<Vec<BatchHeader>, (ResponseError, String)> {
    let corrupt = |why: String| (ResponseError::CorruptMessage, why);
    let mut headers = Vec::new();
    let mut scratch = Vec::new();
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
        if h.is_control() {
            // Markers are the coordinator's to write.
            return Err((
                ResponseError::InvalidRecord,
                format!("batch at byte {pos}: clients are not allowed to write control records"),
            ));
        }
        if h.is_transactional() && h.producer_id < 0 {
            return Err((
                ResponseError::InvalidRecord,
                format!("batch at byte {pos} is transactional but has no producer id"),
            ));
        }
        if h.has_delete_horizon() {
            // Only the cleaner sets it: a producer's batch with it would have its first
            // timestamp read as a tombstone's deadline.
            return Err((
                ResponseError::InvalidRecord,
                format!(
                    "batch at byte {pos} has the delete-horizon attribute (bit 6) set, which only the log cleaner sets"
                ),
            ));
        }
        let keyless = check_records(
            &rest[..size],
            h.base_offset,
            compacted.is_some(),
            &mut scratch,
        )
        .map_err(|(code, why)| (code, format!("batch at byte {pos}: {why}")))?;
        if let Some(partition) = compacted
            && !keyless.is_empty()
        {
            return Err((
                ResponseError::InvalidRecord,
                keyless_refusal(&keyless, partition),
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

/// Reads every record of one CRC-checked batch, as Kafka's LogValidator does: lengths, varints,
/// header counts and the record count must hold together (INVALID_RECORD), and a compressed
/// batch must name a known codec and decompress (CORRUPT_MESSAGE, as Kafka answers). Record
/// offset deltas must run 0, 1, 2, ...: every producer writes them so, and the stored bytes
/// keep them (Kafka would rewrite a compressed batch with other deltas; kafkit refuses it).
///
/// Returns the indexes (in the batch) of the records without a key, when `keys_required`.
fn check_records(
    batch: &[u8],
    base_offset: i64,
    keys_required: bool,
    scratch: &mut Vec<u8>,
) -> Result<Vec<i64>, (ResponseError, String)> {
    let mut expected_delta = 0i64;
    let mut out_of_order = None;
    let mut keyless = Vec::new();
    // The CRC was checked by the caller.
    let read = for_each_record_crc(batch, scratch, false, |record| {
        if keys_required && record.key.is_none() {
            keyless.push(expected_delta);
        }
        if out_of_order.is_none() {
            let delta = record.offset - base_offset;
            if delta != expected_delta {
                out_of_order = Some((expected_delta, delta));
            }
        }
        expected_delta += 1;
        Ok(())
    });
    match read {
        Ok(_) => {}
        Err(e @ (RecordError::UnknownCodec(_) | RecordError::Compression { .. })) => {
            return Err((ResponseError::CorruptMessage, e.to_string()));
        }
        Err(e) => return Err((ResponseError::InvalidRecord, e.to_string())),
    }
    if let Some((expected, found)) = out_of_order {
        return Err((
            ResponseError::InvalidRecord,
            format!("record {expected} has offset delta {found}: deltas must run 0, 1, 2, ..."),
        ));
    }
    Ok(keyless)
}

/// Kafka's answer to a batch with keyless records for a compacted topic's `partition`.
fn keyless_refusal(keyless: &[i64], partition: &str) -> String {
    let shown: Vec<String> = keyless
        .iter()
        .take(3)
        .map(|i| {
            format!(
                "RecordError(batchIndex={i}, message='Compacted topic cannot accept message without key in topic partition {partition}')"
            )
        })
        .collect();
    format!(
        "One or more records have been rejected due to {} record errors in total, and only showing the first three errors at most: [{}]",
        keyless.len(),
        shown.join(", ")
    )
}

/// The same refusal for every partition of the request.
fn refuse_all(request: &ProduceRequest, code: ResponseError, why: &str) -> ProduceResponse {
    let responses = request
        .topic_data
        .iter()
        .map(|t| {
            TopicProduceResponse::default()
                .with_name(t.name.clone())
                .with_partition_responses(
                    t.partition_data
                        .iter()
                        .map(|p| partition_response(p.index, Err((code, why.to_string()))))
                        .collect(),
                )
        })
        .collect();
    ProduceResponse::default().with_responses(responses)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::varint::put_varint;
    use crate::record::{BATCH_OVERHEAD, BatchBuilder, Compression, LOG_OVERHEAD};

    const LIMIT: usize = 1 << 20;

    /// One record's bytes with the given fields (lengths as declared, not as the data has).
    fn record(
        offset_delta: i32,
        key_len: i32,
        key: &[u8],
        value_len: i32,
        value: &[u8],
    ) -> Vec<u8> {
        let mut body = vec![0u8]; // attributes
        put_varint(&mut body, 0); // timestamp delta (a varlong of 0 is the same byte)
        put_varint(&mut body, offset_delta);
        put_varint(&mut body, key_len);
        body.extend_from_slice(key);
        put_varint(&mut body, value_len);
        body.extend_from_slice(value);
        put_varint(&mut body, 0); // headers
        let mut out = Vec::new();
        put_varint(&mut out, body.len() as i32);
        out.extend(body);
        out
    }

    /// A batch around `records` with a correct CRC, so that only what is inside is wrong.
    fn batch(attributes: i16, count: i32, records: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(0i64.to_be_bytes()); // base offset
        b.extend(((BATCH_OVERHEAD - LOG_OVERHEAD + records.len()) as i32).to_be_bytes());
        b.extend(0i32.to_be_bytes()); // partition leader epoch
        b.push(2); // magic
        b.extend(0u32.to_be_bytes()); // CRC, below
        b.extend(attributes.to_be_bytes());
        b.extend((count - 1).to_be_bytes()); // last offset delta
        b.extend(1_700_000_000_000i64.to_be_bytes());
        b.extend(1_700_000_000_000i64.to_be_bytes());
        b.extend((-1i64).to_be_bytes()); // producer id
        b.extend((-1i16).to_be_bytes());
        b.extend((-1i32).to_be_bytes());
        b.extend(count.to_be_bytes());
        b.extend_from_slice(records);
        let crc = crc32c::crc32c(&b[21..]);
        b[17..21].copy_from_slice(&crc.to_be_bytes());
        b
    }

    fn refused(batch: &[u8]) -> ResponseError {
        check_batches(batch, LIMIT, None).expect_err("refused").0
    }

    #[test]
    fn well_formed_batches_in_every_codec_pass() {
        for codec in Compression::ALL {
            let mut builder = BatchBuilder::new(codec);
            for i in 0..5 {
                let value = format!("value-{i}");
                builder.append(1_700_000_000_000, Some(b"k"), Some(value.as_bytes()), &[]);
            }
            let mut two = builder.build(0).unwrap();
            two.extend(batch(0, 1, &record(0, -1, b"", 3, b"abc")));
            assert_eq!(
                check_batches(&two, LIMIT, None).unwrap().len(),
                2,
                "{codec:?}"
            );
        }
    }

    #[test]
    fn records_that_do_not_parse_are_invalid_records() {
        let cases: [(&str, Vec<u8>); 7] = [
            ("key length 2^31-1", record(0, i32::MAX, b"k", 3, b"abc")),
            ("key length -5", record(0, -5, b"", 3, b"abc")),
            ("value length -5 and no value", record(0, -1, b"", -5, b"")),
            (
                "value length -5 over a value",
                record(0, -1, b"", -5, b"abc"),
            ),
            ("header count 2^31-1", {
                let mut r = record(0, -1, b"", 3, b"abc");
                r.pop();
                put_varint(&mut r, i32::MAX);
                r
            }),
            ("record size past the batch", {
                let mut r = record(0, -1, b"", 3, b"abc");
                r[0] = 100;
                r
            }),
            (
                "offset delta 1 for the first record",
                record(1, -1, b"", 3, b"abc"),
            ),
        ];
        for (what, records) in cases {
            assert_eq!(
                refused(&batch(0, 1, &records)),
                ResponseError::InvalidRecord,
                "{what}"
            );
        }
        // A batch that claims more records than it holds.
        let one = record(0, -1, b"", 3, b"abc");
        assert_eq!(refused(&batch(0, 2, &one)), ResponseError::InvalidRecord);
        // Bytes left over after the last record.
        let mut extra = one.clone();
        extra.extend(record(1, -1, b"", 3, b"abc"));
        assert_eq!(refused(&batch(0, 1, &extra)), ResponseError::InvalidRecord);
    }

    #[test]
    fn bad_compression_is_a_corrupt_message() {
        let garbage = b"this is not gzip data at all".to_vec();
        assert_eq!(
            refused(&batch(1, 1, &garbage)),
            ResponseError::CorruptMessage
        );
        let one = record(0, -1, b"", 3, b"abc");
        assert_eq!(refused(&batch(7, 1, &one)), ResponseError::CorruptMessage);
        // Valid zstd around records that do not parse: an invalid record.
        let inner = Compression::Zstd
            .compress(&record(0, i32::MAX, b"", 3, b"abc"))
            .unwrap();
        assert_eq!(refused(&batch(4, 1, &inner)), ResponseError::InvalidRecord);
    }

    #[test]
    fn a_compacted_topic_refuses_keyless_records_and_batches_with_the_horizon_bit() {
        let mut records = record(0, 1, b"k", 3, b"abc");
        records.extend(record(1, -1, b"", 3, b"abc"));
        records.extend(record(2, 1, b"k", -1, b""));
        let mixed = batch(0, 3, &records);
        assert!(check_batches(&mixed, LIMIT, None).is_ok());
        let (code, message) = check_batches(&mixed, LIMIT, Some("t-0")).unwrap_err();
        assert_eq!(code, ResponseError::InvalidRecord);
        assert_eq!(
            message,
            "One or more records have been rejected due to 1 record errors in total, and only \
             showing the first three errors at most: [RecordError(batchIndex=1, message='Compacted \
             topic cannot accept message without key in topic partition t-0')]"
        );
        // Keys with tombstones pass.
        let keyed = batch(0, 1, &record(0, 1, b"k", -1, b""));
        assert!(check_batches(&keyed, LIMIT, Some("t-0")).is_ok());
        // Bit 6 is the cleaner's.
        let horizon = batch(1 << 6, 1, &record(0, 1, b"k", 3, b"abc"));
        assert_eq!(refused(&horizon), ResponseError::InvalidRecord);
    }
}
