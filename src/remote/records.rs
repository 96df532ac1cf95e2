//! DeleteRecords on a cluster: each partition's request goes to its leader, which moves the
//! partition's log start offset (its low watermark) up to the offset asked for.

use std::collections::{BTreeMap, HashMap};

use kafka_protocol::messages::DeleteRecordsRequest;
use kafka_protocol::messages::delete_records_request::{
    DeleteRecordsPartition, DeleteRecordsTopic,
};

use super::admin::{Client, topic_name};
use super::error::{RemoteError, Result};
use super::net::connection::connect_broker;
use crate::kafka::TopicPartition;

impl Client {
    /// DeleteRecords at each partition's leader: per partition, the low watermark the leader
    /// reports afterwards, or the error (a partition the cluster does not have is
    /// UNKNOWN_TOPIC_OR_PARTITION at once; Java's admin client waits for it until its
    /// timeout). An offset of -1 asks for the high watermark, as in Kafka.
    pub async fn delete_records(
        &mut self,
        offsets: &[(TopicPartition, i64)],
    ) -> Result<HashMap<TopicPartition, Result<i64>>> {
        let tps: Vec<TopicPartition> = offsets.iter().map(|(tp, _)| tp.clone()).collect();
        let offset_of: HashMap<&TopicPartition, i64> =
            offsets.iter().map(|(tp, o)| (tp, *o)).collect();
        let leaders = self.leaders(&tps).await?;
        let mut out = HashMap::new();
        for (tp, code) in leaders.leaderless {
            out.insert(tp, Err(RemoteError::broker(code, None)));
        }
        let config = self.conn.config().clone();
        let timeout_ms = i32::try_from(config.request_timeout.as_millis()).unwrap_or(i32::MAX);
        for (b, tps) in leaders.by_leader {
            let mut by_topic: BTreeMap<&str, Vec<DeleteRecordsPartition>> = BTreeMap::new();
            for tp in &tps {
                by_topic.entry(&tp.0).or_default().push(
                    DeleteRecordsPartition::default()
                        .with_partition_index(tp.1)
                        .with_offset(offset_of[tp]),
                );
            }
            let request = DeleteRecordsRequest::default()
                .with_timeout_ms(timeout_ms)
                .with_topics(
                    by_topic
                        .into_iter()
                        .map(|(t, partitions)| {
                            DeleteRecordsTopic::default()
                                .with_name(topic_name(t))
                                .with_partitions(partitions)
                        })
                        .collect(),
                );
            let mut conn = connect_broker(b.id, &b.host, b.port, &config).await?;
            let version = conn.version::<DeleteRecordsRequest>()?;
            let response = conn.send(&request, version).await?;
            for t in response.topics {
                for p in t.partitions {
                    let result = match p.error_code {
                        0 => Ok(p.low_watermark),
                        code => Err(RemoteError::broker(code, None)),
                    };
                    out.insert((t.name.0.to_string(), p.partition_index), result);
                }
            }
        }
        // A partition the leader's answer left out was not dealt with.
        for tp in tps {
            out.entry(tp).or_insert_with(|| {
                Err(RemoteError::broker(
                    -1,
                    Some("the leader's DeleteRecords response did not mention this partition"),
                ))
            });
        }
        Ok(out)
    }
}
