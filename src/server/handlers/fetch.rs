//! Fetch: whole batches from each partition asked for, from the batch holding the fetch
//! offset, within the partition's and the request's byte limits (the first batch always, as in
//! Kafka, so that one larger than the limit still moves the consumer on). Waits up to
//! `max_wait_ms` for `min_bytes` to be there: an append by this server wakes the wait at once;
//! appends by other processes on the same log directory are seen within 50 ms.
//!
//! The data of every response holds its share of the broker's fetch budget until written, so a
//! client that never reads its answers cannot make the server's memory grow (issue 24, item 2).
//!
//! Fetch sessions (KIP-227) are not kept: every response carries session id 0, which tells the
//! client to send full requests.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::ResponseError;
use kafka_protocol::messages::fetch_response::{
    AbortedTransaction, FetchableTopicResponse, PartitionData,
};
use kafka_protocol::messages::{FetchRequest, FetchResponse, ProducerId, TopicName};
use tokio::sync::OwnedSemaphorePermit;

use super::{Refusal, blocking, error_code, partition_of, served_topic, str_bytes};
use crate::local::LocalError;
use crate::server::broker::{Broker, FETCH_BUDGET_BYTES, ServedPartition};

/// How often a waiting fetch looks for data written by other processes.
const POLL: Duration = Duration::from_millis(50);

/// One partition to read: index, fetch offset, byte limit.
type Wanted = (i32, i64, i32);

/// Answers a fetch, with the share of the broker's fetch budget its data holds: the caller
/// keeps it until the response is written. A read first takes its limit from the budget
/// (waiting while other responses hold it), then gives back what it did not use.
pub async fn handle(
    broker: &Arc<Broker>,
    _: i16,
    request: FetchRequest,
) -> (FetchResponse, OwnedSemaphorePermit) {
    let deadline = Instant::now() + Duration::from_millis(request.max_wait_ms.max(0) as u64);
    let wanted: Arc<Vec<(String, Vec<Wanted>)>> = Arc::new(
        request
            .topics
            .iter()
            .map(|t| {
                let parts = t
                    .partitions
                    .iter()
                    .map(|p| (p.partition, p.fetch_offset, p.partition_max_bytes))
                    .collect();
                (t.topic.0.to_string(), parts)
            })
            .collect(),
    );
    // A negative limit fails each partition's read, as in Kafka (see `read_all`).
    let negative_max = (request.max_bytes < 0).then_some(request.max_bytes);
    // One response may take a quarter of the budget, so that a few clients are served at once.
    let max_bytes = (request.max_bytes.max(0) as usize).min(FETCH_BUDGET_BYTES / 4);
    let min_bytes = request.min_bytes.max(0) as usize;
    let read_committed = request.isolation_level == 1;
    let mut appended = broker.appended();
    loop {
        appended.borrow_and_update();
        let mut held = Arc::clone(&broker.fetch_budget)
            .acquire_many_owned(kib(max_bytes))
            .await
            .expect("the fetch budget is never closed");
        let (b, w) = (Arc::clone(broker), Arc::clone(&wanted));
        let (topics, bytes, errors) =
            blocking(move || read_all(&b, &w, (max_bytes, negative_max), read_committed)).await;
        let now = Instant::now();
        // min_bytes 0 answers at once, as in Kafka.
        if bytes >= min_bytes || errors || now >= deadline {
            // The first batch may exceed the limit (see `read_all`): then the whole limit
            // stays held.
            let unused = held.num_permits().saturating_sub(kib(bytes) as usize);
            drop(held.split(unused));
            return (FetchResponse::default().with_responses(topics), held);
        }
        drop(held);
        let wait = POLL.min(deadline - now);
        tokio::select! {
            _ = appended.changed() => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

/// `bytes` in the budget's KiB, rounded up (at least one, so that every read holds a share).
fn kib(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(1024).max(1)).unwrap_or(u32::MAX)
}

/// Reads every partition asked for; returns the topics, the bytes read and whether any
/// partition answered with an error (which ends the wait, as in Kafka). A negative limit, the
/// request's (`negative_max`) or a partition's, fails a read that would return records with
/// UNKNOWN_SERVER_ERROR and a log line, as Kafka's log read raises "Invalid max size".
fn read_all(
    broker: &Broker,
    wanted: &[(String, Vec<Wanted>)],
    (max_bytes, negative_max): (usize, Option<i32>),
    read_committed: bool,
) -> (Vec<FetchableTopicResponse>, usize, bool) {
    let mut total = 0;
    let mut errors = false;
    let topics = wanted
        .iter()
        .map(|(topic, parts)| {
            // Once per topic, not per partition: a waiting fetch looks again every 50 ms.
            let meta = served_topic(broker, topic);
            let partitions = parts
                .iter()
                .map(|&(index, offset, limit)| {
                    let negative = negative_max.or((limit < 0).then_some(limit));
                    // The first data of the response may exceed the total limit and the
                    // partition's, even a limit of 0, so that a consumer always makes progress
                    // (as in Kafka); after that a partition gets what is left.
                    let room = if total == 0 {
                        (limit.max(0) as usize).max(1)
                    } else {
                        (limit.max(0) as usize).min(max_bytes.saturating_sub(total))
                    };
                    let partition = meta
                        .as_ref()
                        .map_err(Clone::clone)
                        .and_then(|meta| partition_of(broker, meta, index));
                    let data = read_partition(
                        broker,
                        topic,
                        partition,
                        (index, offset),
                        (room, negative),
                        read_committed,
                    );
                    errors |= data.error_code != 0;
                    total += data.records.as_ref().map_or(0, Bytes::len);
                    data
                })
                .collect();
            FetchableTopicResponse::default()
                .with_topic(TopicName(str_bytes(topic.clone())))
                .with_partitions(partitions)
        })
        .collect();
    (topics, total, errors)
}

/// A partition's answer without records, with this error code.
fn refused(index: i32, code: i16) -> PartitionData {
    PartitionData::default()
        .with_partition_index(index)
        .with_error_code(code)
        .with_high_watermark(-1)
        .with_last_stable_offset(-1)
        .with_log_start_offset(-1)
        .with_aborted_transactions(Some(Vec::new()))
        .with_records(Some(Bytes::new()))
}

/// One partition's answer. `negative`: the negative byte limit the request gave, which fails
/// a read that would return records, after the checks Kafka makes first (the partition
/// exists, the offset is in range; a fetch at the end answers empty).
fn read_partition(
    broker: &Broker,
    topic: &str,
    partition: Result<Arc<ServedPartition>, Refusal>,
    (index, offset): (i32, i64),
    (room, negative): (usize, Option<i32>),
    read_committed: bool,
) -> PartitionData {
    let empty = refused(index, 0);
    let failed = |code: i16| refused(index, code);
    let partition = match partition {
        Ok(partition) => partition,
        Err((kind, _)) => return failed(kind.code()),
    };
    let read = partition.log.snapshot().and_then(|snapshot| {
        let in_range = (snapshot.log_start_offset..snapshot.log_end_offset).contains(&offset);
        if let Some(size) = negative
            && in_range
        {
            return Err(LocalError::kafka(
                ResponseError::UnknownServerError,
                format!("Invalid max size {size}"),
            ));
        }
        // read_committed: nothing at or past the last stable offset, and the aborted
        // transactions the data may hold, as Kafka lists them.
        let end = match read_committed {
            true => snapshot.last_stable_offset,
            false => snapshot.log_end_offset,
        };
        let mut records = Vec::new();
        if room > 0 && !(negative.is_some() && offset == snapshot.log_end_offset) {
            partition
                .log
                .read_into_upto(&snapshot, offset, room, end, &mut records)?;
        }
        let aborted = match read_committed {
            true => Some(aborted_in(&partition, &snapshot, offset, &records, end)?),
            false => None,
        };
        Ok((snapshot, records, aborted))
    });
    match read {
        Ok((snapshot, records, aborted)) => empty
            .with_high_watermark(snapshot.log_end_offset)
            .with_last_stable_offset(snapshot.last_stable_offset)
            .with_log_start_offset(snapshot.log_start_offset)
            .with_aborted_transactions(aborted)
            .with_records(Some(Bytes::from(records))),
        Err(e) => {
            // Damage in the log: CORRUPT_MESSAGE, which clients report and stop on (Java's
            // consumer raises it), where KAFKA_STORAGE_ERROR would have them retry forever.
            // The batches before the damage were served by the fetches before this one.
            let damaged = matches!(e, LocalError::Corrupt { .. });
            if e.kind() != Some(ResponseError::OffsetOutOfRange) {
                broker
                    .log
                    .error(&format!("Fetch from {topic}-{index} failed: {e}"));
            }
            if damaged {
                failed(ResponseError::CorruptMessage.code())
            } else {
                failed(error_code(&e))
            }
        }
    }
}

/// The aborted transactions of a read_committed answer: those of the partition's index whose
/// marker is at or past `offset` and that began before the offset after the returned data
/// (Kafka's upper bound), or before the LSO when nothing was returned.
fn aborted_in(
    partition: &ServedPartition,
    snapshot: &crate::local::Snapshot,
    offset: i64,
    records: &[u8],
    lso: i64,
) -> Result<Vec<AbortedTransaction>, LocalError> {
    let mut upper = lso;
    let mut batches = crate::record::BatchIter::new(records);
    if let Some(Ok(last)) = batches.by_ref().last()
        && let Ok(h) = crate::record::BatchHeader::parse(last)
    {
        upper = h.next_offset();
    }
    Ok(partition
        .log
        .aborted_transactions(snapshot, offset, upper)?
        .into_iter()
        .map(|(pid, first)| {
            AbortedTransaction::default()
                .with_producer_id(ProducerId(pid))
                .with_first_offset(first)
        })
        .collect())
}
