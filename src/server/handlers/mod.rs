//! One handler per API (or per group of related APIs): each takes the decoded request and
//! returns the response, doing its file work on tokio's blocking threads.
//!
//! - [`metadata`] answers Metadata (with auto-creation), DescribeCluster and
//!   DescribeTopicPartitions;
//! - [`produce`] answers Produce, through the group-commit append queue;
//! - [`fetch`] answers Fetch, long-polling for `min_bytes` up to `max_wait_ms`;
//! - [`offsets`] answers ListOffsets; [`records`] answers DeleteRecords;
//! - [`topics`] answers CreateTopics, DeleteTopics and CreatePartitions;
//! - [`configs`] answers DescribeConfigs and IncrementalAlterConfigs;
//! - [`txn`] answers InitProducerId and the transaction APIs of producers; [`txn_admin`]
//!   those of `kafka-transactions`;
//! - this module answers ApiVersions.

pub mod configs;
pub mod fetch;
pub mod metadata;
pub mod offsets;
pub mod produce;
pub mod records;
pub mod topics;
pub mod txn;
pub mod txn_admin;

use std::sync::Arc;

use kafka_protocol::ResponseError;
use kafka_protocol::messages::{ApiVersionsRequest, ApiVersionsResponse};
use kafka_protocol::protocol::StrBytes;

use super::broker::{Broker, ServedPartition};
use super::dispatch::api_versions_response;
use crate::kafka::uuid::{uuid_from_string, uuid_to_string};
use crate::local::{LocalError, TopicMeta};

/// Runs file work on a blocking thread.
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(f).await {
        Ok(value) => value,
        // The closure panicked: let the connection's task end the same way.
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// Kafka's error code for an embedded-log error: its kind when it has one, else
/// KAFKA_STORAGE_ERROR for a file problem, else UNKNOWN_SERVER_ERROR.
pub fn error_code(e: &LocalError) -> i16 {
    match e.kind() {
        Some(kind) => kind.code(),
        None => match e {
            LocalError::Io { .. } | LocalError::Corrupt { .. } => {
                ResponseError::KafkaStorageError.code()
            }
            LocalError::Invalid(_) => ResponseError::InvalidRequest.code(),
            LocalError::Context { source, .. } => error_code(source),
            _ => ResponseError::UnknownServerError.code(),
        },
    }
}

/// Why a request's partition cannot be served: the error to answer with, and a message.
pub type Refusal = (ResponseError, String);

/// The partition a request names, with its topic's metadata; UNKNOWN_TOPIC_OR_PARTITION for
/// a topic or partition that does not exist, KAFKA_STORAGE_ERROR (or the error's own kind)
/// when the log directory cannot be read.
pub fn served_partition(
    broker: &Broker,
    topic: &str,
    index: i32,
) -> Result<(TopicMeta, Arc<ServedPartition>), Refusal> {
    let meta = served_topic(broker, topic)?;
    let partition = partition_of(broker, &meta, index)?;
    Ok((meta, partition))
}

/// A topic a request names (the first half of [`served_partition`], for a request that names
/// many partitions of a topic and looks the topic up once).
pub fn served_topic(broker: &Broker, topic: &str) -> Result<TopicMeta, Refusal> {
    broker.topic(topic).map_err(storage)?.ok_or_else(unknown)
}

/// A partition of a topic looked up with [`served_topic`].
pub fn partition_of(
    broker: &Broker,
    meta: &TopicMeta,
    index: i32,
) -> Result<Arc<ServedPartition>, Refusal> {
    let p = u32::try_from(index)
        .ok()
        .filter(|&p| p < meta.partitions)
        .ok_or_else(unknown)?;
    broker.partition(meta, p).map_err(storage)
}

fn storage(e: LocalError) -> Refusal {
    let kind =
        ResponseError::try_from_code(error_code(&e)).unwrap_or(ResponseError::KafkaStorageError);
    (kind, e.to_string())
}

fn unknown() -> Refusal {
    (
        ResponseError::UnknownTopicOrPartition,
        "This server does not host this topic-partition.".to_string(),
    )
}

/// A string for a response field.
pub fn str_bytes(s: impl Into<String>) -> StrBytes {
    StrBytes::from_string(s.into())
}

/// A topic id as the wire carries it, from the 22-character base64url form the log dir keeps
/// (the zero id if that is unreadable).
pub fn topic_uuid(id: &str) -> uuid::Uuid {
    uuid_from_string(id)
        .map(uuid::Uuid::from_bytes)
        .unwrap_or_default()
}

/// A wire topic id in the log dir's form.
pub fn topic_id_text(id: uuid::Uuid) -> String {
    uuid_to_string(id.as_bytes())
}

pub async fn api_versions(
    _: &Arc<Broker>,
    _: i16,
    _: ApiVersionsRequest,
) -> Option<ApiVersionsResponse> {
    Some(api_versions_response())
}
