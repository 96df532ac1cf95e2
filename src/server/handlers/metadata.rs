//! Metadata, DescribeCluster and DescribeTopicPartitions: one broker (this server) leads every
//! partition and is its only replica. Metadata creates a missing topic when the client allows
//! it and `auto.create.topics.enable` is on, as a broker does.

use std::sync::Arc;

use kafka_protocol::ResponseError;
use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::describe_topic_partitions_response::{
    DescribeTopicPartitionsResponsePartition, DescribeTopicPartitionsResponseTopic,
};
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{
    BrokerId, DescribeClusterRequest, DescribeClusterResponse, DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse, MetadataRequest, MetadataResponse, TopicName,
};

use super::{blocking, error_code, str_bytes, topic_id_text, topic_uuid};
use crate::kafka::topic_name;
use crate::local::TopicMeta;
use crate::server::broker::Broker;

/// A topic as Metadata reports it: its metadata, or the error for what was asked.
type Lookup = (Asked, Result<TopicMeta, i16>);

/// How a topic was asked for: an error names it the same way (Kafka answers an unknown id with
/// the id and no name).
enum Asked {
    Name(String),
    Id(uuid::Uuid),
}

pub async fn handle(
    broker: &Arc<Broker>,
    version: i16,
    request: MetadataRequest,
) -> Option<MetadataResponse> {
    let b = Arc::clone(broker);
    // Before v4 every Metadata request may create topics; v0 asks for all with an empty list.
    let auto_create = version < 4 || request.allow_auto_topic_creation;
    let wanted = match request.topics {
        Some(topics) if !(version == 0 && topics.is_empty()) => Some(topics),
        _ => None,
    };
    let lookups = blocking(move || lookup(&b, wanted, auto_create)).await;
    let node = BrokerId(broker.config.node_id);
    let topics = lookups
        .into_iter()
        .map(|(asked, found)| match (found, asked) {
            (Ok(meta), _) => topic_entry(broker.config.node_id, &meta),
            (Err(code), Asked::Name(name)) => MetadataResponseTopic::default()
                .with_name(Some(TopicName(str_bytes(name))))
                .with_error_code(code),
            (Err(code), Asked::Id(id)) => MetadataResponseTopic::default()
                .with_name(None)
                .with_topic_id(id)
                .with_error_code(code),
        })
        .collect();
    Some(
        MetadataResponse::default()
            .with_brokers(vec![
                MetadataResponseBroker::default()
                    .with_node_id(node)
                    .with_host(str_bytes(broker.advertised.0.clone()))
                    .with_port(i32::from(broker.advertised.1)),
            ])
            .with_cluster_id(Some(str_bytes(broker.cluster_id.clone())))
            .with_controller_id(node)
            .with_topics(topics),
    )
}

/// The topics asked for (all when `None`), created when missing and allowed.
fn lookup(
    broker: &Broker,
    wanted: Option<Vec<kafka_protocol::messages::metadata_request::MetadataRequestTopic>>,
    auto_create: bool,
) -> Vec<Lookup> {
    let Some(wanted) = wanted else {
        let names = broker.dir.topic_names().unwrap_or_default();
        return names
            .into_iter()
            .filter_map(|name| Some((Asked::Name(name.clone()), Ok(broker.topic(&name).ok()??))))
            .collect();
    };
    wanted
        .into_iter()
        .map(|t| {
            // v10+: a topic asked for by id; its name is then null or empty (Java's client
            // sends ""), and ignored as Kafka ignores it.
            let name = match t.name {
                Some(name) if t.topic_id.is_nil() => name.0.to_string(),
                _ => return by_id(broker, t.topic_id),
            };
            let found = find(broker, &name, auto_create);
            (Asked::Name(name), found)
        })
        .collect()
}

fn find(broker: &Broker, name: &str, auto_create: bool) -> Result<TopicMeta, i16> {
    if topic_name::validate(name).is_err() {
        return Err(ResponseError::InvalidTopicException.code());
    }
    let unknown = ResponseError::UnknownTopicOrPartition.code();
    let storage = |e| error_code(&e);
    match broker.topic(name).map_err(storage)? {
        Some(meta) => Ok(meta),
        None if auto_create => broker.auto_create(name).map_err(storage)?.ok_or(unknown),
        None => Err(unknown),
    }
}

fn by_id(broker: &Broker, id: uuid::Uuid) -> Lookup {
    let text = topic_id_text(id);
    let names = broker.dir.topic_names().unwrap_or_default();
    for name in names {
        if let Ok(Some(meta)) = broker.topic(&name)
            && meta.id == text
        {
            return (Asked::Name(name), Ok(meta));
        }
    }
    (Asked::Id(id), Err(ResponseError::UnknownTopicId.code()))
}

fn topic_entry(node: i32, meta: &TopicMeta) -> MetadataResponseTopic {
    let partitions = (0..meta.partitions as i32)
        .map(|p| {
            MetadataResponsePartition::default()
                .with_partition_index(p)
                .with_leader_id(BrokerId(node))
                .with_leader_epoch(0)
                .with_replica_nodes(vec![BrokerId(node)])
                .with_isr_nodes(vec![BrokerId(node)])
        })
        .collect();
    MetadataResponseTopic::default()
        .with_name(Some(TopicName(str_bytes(meta.name.clone()))))
        .with_topic_id(topic_uuid(&meta.id))
        .with_partitions(partitions)
}

pub async fn describe_cluster(
    broker: &Arc<Broker>,
    _: i16,
    _: DescribeClusterRequest,
) -> Option<DescribeClusterResponse> {
    let node = BrokerId(broker.config.node_id);
    Some(
        DescribeClusterResponse::default()
            .with_cluster_id(str_bytes(broker.cluster_id.clone()))
            .with_controller_id(node)
            .with_brokers(vec![
                DescribeClusterBroker::default()
                    .with_broker_id(node)
                    .with_host(str_bytes(broker.advertised.0.clone()))
                    .with_port(i32::from(broker.advertised.1)),
            ]),
    )
}

/// DescribeTopicPartitions (what Kafka 4's `kafka-topics --describe` asks): the topics named,
/// never created, all partitions in one page.
pub async fn describe_topic_partitions(
    broker: &Arc<Broker>,
    _: i16,
    request: DescribeTopicPartitionsRequest,
) -> Option<DescribeTopicPartitionsResponse> {
    let b = Arc::clone(broker);
    let names: Vec<String> = request
        .topics
        .iter()
        .map(|t| t.name.0.to_string())
        .collect();
    let node = broker.config.node_id;
    let topics = blocking(move || {
        let names = if names.is_empty() {
            b.dir.topic_names().unwrap_or_default()
        } else {
            names
        };
        names
            .into_iter()
            .map(|name| match find(&b, &name, false) {
                Ok(meta) => described(node, &meta),
                Err(code) => DescribeTopicPartitionsResponseTopic::default()
                    .with_name(Some(TopicName(str_bytes(name))))
                    .with_error_code(code),
            })
            .collect()
    })
    .await;
    Some(DescribeTopicPartitionsResponse::default().with_topics(topics))
}

fn described(node: i32, meta: &TopicMeta) -> DescribeTopicPartitionsResponseTopic {
    let partitions = (0..meta.partitions as i32)
        .map(|p| {
            DescribeTopicPartitionsResponsePartition::default()
                .with_partition_index(p)
                .with_leader_id(BrokerId(node))
                .with_leader_epoch(0)
                .with_replica_nodes(vec![BrokerId(node)])
                .with_isr_nodes(vec![BrokerId(node)])
                // One replica: no eligible leader replica besides the leader (Java's admin
                // client reads these lists and fails on null).
                .with_eligible_leader_replicas(Some(Vec::new()))
                .with_last_known_elr(Some(Vec::new()))
        })
        .collect();
    DescribeTopicPartitionsResponseTopic::default()
        .with_name(Some(TopicName(str_bytes(meta.name.clone()))))
        .with_topic_id(topic_uuid(&meta.id))
        .with_partitions(partitions)
}
