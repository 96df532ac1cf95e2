//! Deleting records (Kafka's DeleteRecords): each partition's log start offset moves up to an
//! offset, so the records below it are no longer read and their segments are removed.
//!
//! The embedded log moves its own log start offset checkpoint; a cluster gets one DeleteRecords
//! request per partition leader.

use std::collections::BTreeMap;

use kafka_protocol::ResponseError;

use super::{Backend, Client, ClientError, Result};
use crate::kafka::TopicPartition;

/// The offset that stands for a partition's high watermark (its log end on the embedded log),
/// as in Kafka's `RecordsToDelete.beforeOffset(-1)`.
pub const HIGH_WATERMARK: i64 = crate::local::partition::HIGH_WATERMARK;

/// One partition's answer: its log start offset afterwards (Kafka's low watermark), or why the
/// records could not be deleted (OFFSET_OUT_OF_RANGE for an offset past the high watermark,
/// UNKNOWN_TOPIC_OR_PARTITION, ...).
pub type DeletedRecords = std::result::Result<i64, ClientError>;

impl Client {
    /// Deletes the records below each partition's offset ([`HIGH_WATERMARK`] for all of them);
    /// an answer for every partition asked. Fails as a whole only when the backend cannot be
    /// reached.
    pub fn delete_records(
        &mut self,
        offsets: &BTreeMap<TopicPartition, i64>,
    ) -> Result<BTreeMap<TopicPartition, DeletedRecords>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(crate::local::records::delete_records(dir, offsets)?
                .into_iter()
                .map(|(tp, answer)| (tp, answer.map_err(ClientError::from)))
                .collect()),
            Backend::Remote(cluster) => {
                let asked: Vec<(TopicPartition, i64)> =
                    offsets.iter().map(|(tp, o)| (tp.clone(), *o)).collect();
                let mut answers = cluster.delete_records(&asked)?;
                Ok(offsets
                    .keys()
                    .map(|tp| {
                        let answer =
                            answers
                                .remove(tp)
                                .unwrap_or(Err(crate::remote::RemoteError::broker(
                                    ResponseError::UnknownServerError.code(),
                                    None,
                                )));
                        (tp.clone(), answer.map_err(ClientError::from))
                    })
                    .collect())
            }
        }
    }
}
