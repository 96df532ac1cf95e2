//! ListOffsets: the log start (-2, and -4 without tiered storage), the log end (-1), the record
//! with the greatest timestamp (-3), or the first record at or after a time, with that record's
//! timestamp, as a one-broker cluster without tiered storage answers; `read_committed` asks see
//! no further than the last stable offset.

use std::sync::Arc;

use kafka_protocol::ResponseError;
use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::{ListOffsetsRequest, ListOffsetsResponse, TopicName};

use super::{blocking, error_code, served_partition, str_bytes};
use crate::local::{LocalError, PartitionLog, Snapshot};
use crate::record::{BatchIter, for_each_record};
use crate::server::broker::Broker;

pub async fn handle(
    broker: &Arc<Broker>,
    version: i16,
    request: ListOffsetsRequest,
) -> Option<ListOffsetsResponse> {
    let b = Arc::clone(broker);
    let read_committed = request.isolation_level == 1;
    let topics = blocking(move || {
        request
            .topics
            .into_iter()
            .map(|t| {
                let name = t.name.0.to_string();
                let partitions = t
                    .partitions
                    .iter()
                    .map(|p| {
                        let wanted = (p.partition_index, p.timestamp);
                        answer(&b, &name, wanted, version, read_committed)
                    })
                    .collect();
                ListOffsetsTopicResponse::default()
                    .with_name(TopicName(str_bytes(name)))
                    .with_partitions(partitions)
            })
            .collect()
    })
    .await;
    Some(ListOffsetsResponse::default().with_topics(topics))
}

fn answer(
    broker: &Broker,
    topic: &str,
    (index, timestamp): (i32, i64),
    version: i16,
    read_committed: bool,
) -> ListOffsetsPartitionResponse {
    let response = ListOffsetsPartitionResponse::default()
        .with_partition_index(index)
        .with_timestamp(-1)
        .with_offset(-1)
        // The field exists from v4; setting it below is an encoding error.
        .with_leader_epoch(if version >= 4 { 0 } else { -1 });
    let partition = match served_partition(broker, topic, index) {
        Ok((_, partition)) => partition,
        Err((kind, _)) => return response.with_error_code(kind.code()),
    };
    let found = lookup(&partition.log, timestamp, read_committed);
    match found {
        Ok(Some((offset, ts))) => response.with_offset(offset).with_timestamp(ts),
        Ok(None) => response,
        Err(LocalError::Invalid(_)) => {
            response.with_error_code(ResponseError::UnsupportedVersion.code())
        }
        Err(e) => response.with_error_code(error_code(&e)),
    }
}

/// The offset (with its record's timestamp, for a time) that a ListOffsets timestamp names;
/// `Invalid` for a negative value that names nothing. `read_committed` (as Kafka): the end
/// is the last stable offset, and no record at or past it is found by time.
fn lookup(
    log: &PartitionLog,
    timestamp: i64,
    read_committed: bool,
) -> Result<Option<(i64, i64)>, LocalError> {
    let snapshot = log.snapshot()?;
    let end = match read_committed {
        true => snapshot.last_stable_offset,
        false => snapshot.log_end_offset,
    };
    let found = match timestamp {
        -1 => Some((end, -1)),
        -2 | -4 => Some((snapshot.log_start_offset, -1)),
        -3 => with_timestamp(log, &snapshot, log.offset_of_max_timestamp(&snapshot)?)?,
        // Nothing is tiered.
        -5 | -6 => None,
        ts if ts >= 0 => with_timestamp(log, &snapshot, log.offset_for_timestamp(&snapshot, ts)?)?,
        _ => {
            return Err(LocalError::Invalid(format!(
                "unknown special timestamp {timestamp}"
            )));
        }
    };
    // The start and the end are answered as they are; a record found by time only below the
    // end (an empty log's start is its end).
    Ok(found.filter(|&(offset, _)| matches!(timestamp, -1 | -2 | -4) || offset < end))
}

/// The offset with its record's timestamp.
fn with_timestamp(
    log: &PartitionLog,
    snapshot: &Snapshot,
    offset: Option<i64>,
) -> Result<Option<(i64, i64)>, LocalError> {
    let Some(offset) = offset else {
        return Ok(None);
    };
    let bytes = log.read(snapshot, offset, 1)?;
    let mut timestamp = -1;
    let mut scratch = Vec::new();
    if let Some(Ok(batch)) = BatchIter::new(&bytes).next() {
        let _ = for_each_record(batch, &mut scratch, |r| {
            if r.offset == offset {
                timestamp = r.timestamp;
            }
            Ok(())
        });
    }
    Ok(Some((offset, timestamp)))
}
