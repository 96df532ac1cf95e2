//! DeleteRecords on the embedded log, answering as a one-broker Kafka cluster would: each
//! partition's log start offset moves up (see
//! [`PartitionLog::delete_records`](super::PartitionLog::delete_records)), and refusals carry
//! Kafka's error kinds and messages.

use std::collections::BTreeMap;

use kafka_protocol::ResponseError;

use super::Result;
use super::lock::LockMode;
use super::{LocalError, LogDir, TopicMeta};
use crate::kafka::TopicPartition;

/// Deletes the records below each partition's offset (-1: the high watermark); per partition,
/// the log start offset afterwards (Kafka's low watermark) or why not. Holds the log-dir lock
/// shared throughout, as writers do, so no topic is deleted or re-created meanwhile.
pub fn delete_records(
    dir: &LogDir,
    offsets: &BTreeMap<TopicPartition, i64>,
) -> Result<BTreeMap<TopicPartition, Result<i64>>> {
    // A new directory holds no topics: every partition is unknown, and nothing is created
    // (nor read: a topic created meanwhile is not touched without the lock).
    if !dir.is_formatted() {
        return Ok(offsets
            .keys()
            .map(|tp| (tp.clone(), Err(unknown_partition())))
            .collect());
    }
    let _lock = dir.lock(LockMode::Shared)?;
    let mut topics: BTreeMap<&str, Option<TopicMeta>> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for ((topic, partition), &offset) in offsets {
        let meta = match topics.get(topic.as_str()) {
            Some(meta) => meta.clone(),
            None => {
                let meta = dir.topic(topic)?;
                topics.insert(topic, meta.clone());
                meta
            }
        };
        let hosted = meta.filter(|m| u32::try_from(*partition).is_ok_and(|p| p < m.partitions));
        let outcome = match hosted {
            // As Kafka's broker: only a log that deletes (its policy holds `delete`) has
            // records deleted from its start.
            Some(meta) if !meta.cleanup_policy().iter().any(|p| p == "delete") => {
                Err(LocalError::kafka(
                    ResponseError::PolicyViolation,
                    format!(
                        "Records of partition {topic}-{partition} can not be deleted due to the configured policy"
                    ),
                ))
            }
            Some(meta) => dir
                .partition(topic, *partition as u32)
                .and_then(|log| log.delete_records(offset, &meta.partition_config()))
                .map_err(kafka_error),
            None => Err(unknown_partition()),
        };
        out.insert((topic.clone(), *partition), outcome);
    }
    Ok(out)
}

/// UNKNOWN_TOPIC_OR_PARTITION, with Kafka's message.
fn unknown_partition() -> LocalError {
    LocalError::kafka(
        ResponseError::UnknownTopicOrPartition,
        "This server does not host this topic-partition.",
    )
}

/// The refusal a broker would send, with Kafka's message; other failures (a damaged
/// partition, I/O) keep the embedded log's own text.
fn kafka_error(e: LocalError) -> LocalError {
    match e {
        LocalError::OffsetOutOfRange { .. } => LocalError::kafka(
            ResponseError::OffsetOutOfRange,
            "The requested offset is not within the range of offsets maintained by the server.",
        ),
        other => other,
    }
}
