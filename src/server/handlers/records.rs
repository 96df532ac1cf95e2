//! DeleteRecords: each partition's log start offset moves up to the offset asked (-1: the high
//! watermark), through the embedded log's own code (the same as `kafka-delete-records
//! --log-dir`), and the segments wholly below it are deleted.

use std::collections::BTreeMap;
use std::sync::Arc;

use kafka_protocol::messages::delete_records_response::{
    DeleteRecordsPartitionResult, DeleteRecordsTopicResult,
};
use kafka_protocol::messages::{DeleteRecordsRequest, DeleteRecordsResponse, TopicName};

use super::{blocking, error_code, str_bytes};
use crate::kafka::TopicPartition;
use crate::local::records::delete_records;
use crate::server::broker::Broker;

pub async fn handle(
    broker: &Arc<Broker>,
    _: i16,
    request: DeleteRecordsRequest,
) -> Option<DeleteRecordsResponse> {
    let b = Arc::clone(broker);
    let topics = blocking(move || {
        let offsets: BTreeMap<TopicPartition, i64> = request
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| ((t.name.0.to_string(), p.partition_index), p.offset))
            })
            .collect();
        let outcomes = delete_records(&b.dir, &offsets);
        request
            .topics
            .iter()
            .map(|t| {
                let partitions = t
                    .partitions
                    .iter()
                    .map(|p| {
                        let key = (t.name.0.to_string(), p.partition_index);
                        let result = DeleteRecordsPartitionResult::default()
                            .with_partition_index(p.partition_index)
                            .with_low_watermark(-1);
                        match outcomes.as_ref().map(|o| o.get(&key)) {
                            Ok(Some(Ok(start))) => result.with_low_watermark(*start),
                            Ok(Some(Err(e))) => result.with_error_code(error_code(e)),
                            Ok(None) => result,
                            Err(e) => result.with_error_code(error_code(e)),
                        }
                    })
                    .collect();
                DeleteRecordsTopicResult::default()
                    .with_name(TopicName(str_bytes(t.name.0.to_string())))
                    .with_partitions(partitions)
            })
            .collect()
    })
    .await;
    // Fetches waiting below the new start must look again (and be told it moved).
    broker.notify_appended();
    Some(DeleteRecordsResponse::default().with_topics(topics))
}
