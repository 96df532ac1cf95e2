//! What the producer asks the cluster besides Produce: the topic's route (Metadata, waiting a
//! while for a topic being created), a producer id for idempotence (InitProducerId), whether a
//! leader is ready for acks=0 batches (ListOffsets), and connections to partition leaders.

use std::collections::HashMap;

use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::{
    BrokerId, InitProducerIdRequest, ListOffsetsRequest, MetadataRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::{LEADER_NOT_AVAILABLE, MAX_BACKOFF, UNKNOWN_TOPIC, is_retriable};
use crate::kafka::producer::ProducerSettings;
use crate::remote::admin::Client;
use crate::remote::error::{RemoteError, Result};
use crate::remote::net::connection::{ClientConfig, Connection};

/// A partition's leader and the brokers, from Metadata.
#[derive(Debug, Default)]
pub(super) struct TopicRoute {
    /// The leader of each partition, by partition index; -1 while there is none.
    pub(super) leaders: Vec<i32>,
    /// Broker id to `host:port`.
    pub(super) brokers: HashMap<i32, (String, i32)>,
}

pub(super) async fn wait_for_topic(
    client: &mut Client,
    topic: &str,
    settings: &ProducerSettings,
) -> Result<TopicRoute> {
    let start = tokio::time::Instant::now();
    let config = client.connection().config().clone();
    // A topic unknown to a cluster that does not create topics stays unknown: wait only a
    // short while, in case it was created a moment ago, not Kafka's 60 s max.block.ms.
    let unknown_wait = settings.max_block.min(config.request_timeout);
    let mut backoff = settings.retry_backoff;
    loop {
        let (code, route) = fetch_route(client.live_connection().await?, topic).await?;
        let waited = start.elapsed();
        match code {
            0 if !route.leaders.is_empty() => return Ok(route),
            UNKNOWN_TOPIC if waited >= unknown_wait => {
                let addr = client.addr().to_string();
                return Err(RemoteError::Broker {
                    code,
                    message: format!(
                        "Topic '{t}' does not exist on {addr} and the cluster does not create topics automatically (auto.create.topics.enable=false); create it with kafka-topics --bootstrap-server {addr} --create --topic {t}",
                        t = topic
                    ),
                });
            }
            0 | UNKNOWN_TOPIC | LEADER_NOT_AVAILABLE if waited < settings.max_block => {}
            code if waited < settings.max_block && is_retriable(code) => {}
            0 | UNKNOWN_TOPIC | LEADER_NOT_AVAILABLE => {
                return Err(RemoteError::Broker {
                    code,
                    message: format!(
                        "Topic {} not present in metadata after {} ms.",
                        topic,
                        settings.max_block.as_millis()
                    ),
                });
            }
            code => {
                let e = RemoteError::broker(code, None);
                return Err(RemoteError::Broker {
                    code,
                    message: format!("cannot produce to topic '{}': {e}", topic),
                });
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// InitProducerId without a transactional id, retried on retriable errors until
/// `max.block.ms`.
pub(super) async fn init_producer_id(
    client: &mut Client,
    settings: &ProducerSettings,
) -> Result<(i64, i16)> {
    let start = tokio::time::Instant::now();
    let mut backoff = settings.retry_backoff;
    loop {
        let conn = client.live_connection().await?;
        let version = conn.version::<InitProducerIdRequest>()?;
        let request = InitProducerIdRequest::default()
            .with_transactional_id(None)
            .with_transaction_timeout_ms(i32::MAX);
        let response = conn.send(&request, version).await?;
        match response.error_code {
            0 => return Ok((response.producer_id.0, response.producer_epoch)),
            code if is_retriable(code) && start.elapsed() < settings.max_block => {}
            code => {
                let e = RemoteError::broker(code, None);
                return Err(RemoteError::Broker {
                    code,
                    message: format!(
                        "cannot get a producer id for the idempotent producer: {e} (set --command-property enable.idempotence=false to produce without)"
                    ),
                });
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Asks `conn`'s broker for the end offset of `partitions`: an error code per partition says
/// whether it leads them yet (NOT_LEADER_OR_FOLLOWER until it has created the replica).
pub(super) async fn probe_leader(
    conn: &mut Connection,
    topic: &str,
    partitions: &[i32],
) -> Result<Vec<(i32, i16)>> {
    const LATEST: i64 = -1;
    let version = conn.version::<ListOffsetsRequest>()?;
    let request = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(vec![
            ListOffsetsTopic::default()
                .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                .with_partitions(
                    partitions
                        .iter()
                        .map(|p| {
                            ListOffsetsPartition::default()
                                .with_partition_index(*p)
                                .with_timestamp(LATEST)
                        })
                        .collect(),
                ),
        ]);
    let response = conn.send(&request, version).await?;
    let answers: HashMap<i32, i16> = response
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter())
        .map(|p| (p.partition_index, p.error_code))
        .collect();
    Ok(partitions
        .iter()
        .map(|p| (*p, answers.get(p).copied().unwrap_or(UNKNOWN_TOPIC)))
        .collect())
}

/// The topic's top-level error code and route, asking with auto-creation allowed (the broker's
/// `auto.create.topics.enable` decides), as Kafka's producer asks.
pub(super) async fn fetch_route(conn: &mut Connection, topic: &str) -> Result<(i16, TopicRoute)> {
    let version = conn.version::<MetadataRequest>()?;
    let request = MetadataRequest::default()
        .with_topics(Some(vec![MetadataRequestTopic::default().with_name(Some(
            TopicName(StrBytes::from_string(topic.to_string())),
        ))]))
        .with_allow_auto_topic_creation(true);
    let response = conn.send(&request, version).await?;
    let brokers = response
        .brokers
        .iter()
        .map(|b| (b.node_id.0, (b.host.to_string(), b.port)))
        .collect();
    let Some(t) = response
        .topics
        .iter()
        .find(|t| t.name.as_ref().is_some_and(|n| n.0.as_str() == topic))
    else {
        return Ok((UNKNOWN_TOPIC, TopicRoute::default()));
    };
    // Partitions are numbered 0..count; an index outside that is not trusted (nor sized for).
    let count = t.partitions.len();
    let mut leaders = vec![-1; count];
    for p in &t.partitions {
        if let Some(slot) = usize::try_from(p.partition_index)
            .ok()
            .and_then(|i| leaders.get_mut(i))
        {
            *slot = p.leader_id.0;
        }
    }
    Ok((t.error_code, TopicRoute { leaders, brokers }))
}

/// Opens a connection to broker `id` at the address Metadata gave for it.
pub(super) async fn connect(
    brokers: &HashMap<i32, (String, i32)>,
    id: i32,
    config: &ClientConfig,
) -> Result<Connection> {
    let Some((host, port)) = brokers.get(&id) else {
        return Err(RemoteError::Connect {
            attempts: format!("broker {id} (not in the cluster metadata)"),
        });
    };
    crate::remote::net::connection::connect_broker(id, host, *port, config).await
}
