//! CreateTopics, DeleteTopics and CreatePartitions, through the embedded log's topic admin (the
//! same code as `kafka-topics --log-dir`), with this server's node id as the only broker.

use std::sync::Arc;

use kafka_protocol::ResponseError;
use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::{
    BrokerId, CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest,
    CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse, TopicName,
};

use super::{blocking, error_code, str_bytes, topic_id_text, topic_uuid};
use crate::kafka::topic_config;
use crate::kafka::topics::{NewTopic, PartitionIncrease};
use crate::local::logdir::LOCAL_NODE_ID;
use crate::local::{LocalError, admin};
use crate::server::broker::Broker;

/// A response's error code and message for an outcome.
fn outcome(result: &Result<(), LocalError>) -> (i16, Option<String>) {
    match result {
        Ok(()) => (0, None),
        Err(e) => (error_code(e), Some(e.to_string())),
    }
}

/// Broker ids as the embedded log knows them: this server's id is the log's only node.
fn local_ids(node: i32, ids: &[BrokerId]) -> Vec<i32> {
    ids.iter()
        .map(|id| {
            if id.0 == node {
                LOCAL_NODE_ID
            } else {
                i32::MIN
            }
        })
        .collect()
}

pub async fn create(
    broker: &Arc<Broker>,
    _: i16,
    request: CreateTopicsRequest,
) -> Option<CreateTopicsResponse> {
    let b = Arc::clone(broker);
    let node = broker.config.node_id;
    let topics = blocking(move || {
        request
            .topics
            .into_iter()
            .map(|t| {
                let mut assignments = t.assignments.clone();
                assignments.sort_by_key(|a| a.partition_index);
                let new = NewTopic {
                    name: t.name.0.to_string(),
                    partitions: (t.num_partitions >= 0)
                        .then_some(t.num_partitions)
                        .or(b.config.num_partitions.map(|n| n as i32)),
                    replication_factor: (t.replication_factor >= 0).then_some(t.replication_factor),
                    assignments: assignments
                        .iter()
                        .map(|a| local_ids(node, &a.broker_ids))
                        .collect(),
                    configs: t
                        .configs
                        .iter()
                        .map(|c| {
                            (
                                c.name.to_string(),
                                c.value.as_deref().unwrap_or("").to_string(),
                            )
                        })
                        .collect(),
                };
                let result = create_one(&b, &new, request.validate_only);
                let (code, message) = outcome(&result);
                let mut entry = CreatableTopicResult::default()
                    .with_name(t.name)
                    .with_error_code(code)
                    .with_error_message(message.map(str_bytes));
                if let Ok(Some(meta)) = b.topic(&new.name).map_err(drop)
                    && result.is_ok()
                {
                    entry = entry
                        .with_topic_id(topic_uuid(&meta.id))
                        .with_num_partitions(meta.partitions as i32)
                        .with_replication_factor(1);
                }
                entry
            })
            .collect()
    })
    .await;
    Some(CreateTopicsResponse::default().with_topics(topics))
}

fn create_one(broker: &Broker, topic: &NewTopic, validate_only: bool) -> Result<(), LocalError> {
    let invalid_config = |m: String| LocalError::kafka(ResponseError::InvalidConfig, m);
    let configs = topic.configs.iter().cloned().collect();
    topic_config::validate_all(&configs).map_err(invalid_config)?;
    if validate_only {
        crate::kafka::topic_name::validate(&topic.name)
            .map_err(|m| LocalError::kafka(ResponseError::InvalidTopicException, m))?;
        if broker.dir.topic(&topic.name)?.is_some() {
            return Err(LocalError::kafka(
                ResponseError::TopicAlreadyExists,
                format!("Topic '{}' already exists.", topic.name),
            ));
        }
        return Ok(());
    }
    let (_, result) = admin::create_topics(&broker.dir, std::slice::from_ref(topic))
        .pop()
        .unwrap_or_else(|| (topic.name.clone(), Ok(())));
    if result.is_ok() {
        broker.log.info(&format!("Created topic {}", topic.name));
    }
    result
}

pub async fn delete(
    broker: &Arc<Broker>,
    _: i16,
    request: DeleteTopicsRequest,
) -> Option<DeleteTopicsResponse> {
    let b = Arc::clone(broker);
    let responses = blocking(move || {
        // v6+ name topics in `topics` (by name or id); older versions in `topic_names`.
        let mut wanted: Vec<(Option<String>, uuid::Uuid)> = request
            .topic_names
            .iter()
            .map(|n| (Some(n.0.to_string()), uuid::Uuid::nil()))
            .collect();
        wanted.extend(
            request
                .topics
                .iter()
                .map(|t| (t.name.as_ref().map(|n| n.0.to_string()), t.topic_id)),
        );
        wanted
            .into_iter()
            .map(|(name, id)| delete_one(&b, name, id))
            .collect()
    })
    .await;
    Some(DeleteTopicsResponse::default().with_responses(responses))
}

fn delete_one(broker: &Broker, name: Option<String>, id: uuid::Uuid) -> DeletableTopicResult {
    let name = match name {
        Some(name) => Some(name),
        None => {
            let text = topic_id_text(id);
            broker
                .dir
                .topic_names()
                .unwrap_or_default()
                .into_iter()
                .find(|n| matches!(broker.dir.topic(n), Ok(Some(meta)) if meta.id == text))
        }
    };
    let Some(name) = name else {
        return DeletableTopicResult::default()
            .with_topic_id(id)
            .with_error_code(ResponseError::UnknownTopicId.code());
    };
    // Answered with the topic's id, as Kafka does, also when it was named by name.
    let id = match broker.dir.topic(&name) {
        Ok(Some(meta)) => topic_uuid(&meta.id),
        _ => id,
    };
    let entry = DeletableTopicResult::default().with_topic_id(id);
    let (_, result) = admin::delete_topics(&broker.dir, std::slice::from_ref(&name))
        .pop()
        .unwrap_or_else(|| (name.clone(), Ok(())));
    if result.is_ok() {
        broker.log.info(&format!("Deleted topic {name}"));
        broker.forget_topic(&name);
    }
    let (code, message) = outcome(&result);
    entry
        .with_name(Some(TopicName(str_bytes(name))))
        .with_error_code(code)
        .with_error_message(message.map(str_bytes))
}

pub async fn create_partitions(
    broker: &Arc<Broker>,
    _: i16,
    request: CreatePartitionsRequest,
) -> Option<CreatePartitionsResponse> {
    let b = Arc::clone(broker);
    let node = broker.config.node_id;
    let results = blocking(move || {
        request
            .topics
            .into_iter()
            .map(|t| {
                let increase = PartitionIncrease {
                    name: t.name.0.to_string(),
                    count: t.count,
                    assignments: t
                        .assignments
                        .as_ref()
                        .map(|all| all.iter().map(|a| local_ids(node, &a.broker_ids)).collect()),
                };
                let result = if request.validate_only {
                    Ok(())
                } else {
                    admin::create_partitions(&b.dir, std::slice::from_ref(&increase))
                        .pop()
                        .map_or(Ok(()), |(_, r)| r)
                };
                let (code, message) = outcome(&result);
                CreatePartitionsTopicResult::default()
                    .with_name(t.name)
                    .with_error_code(code)
                    .with_error_message(message.map(str_bytes))
            })
            .collect()
    })
    .await;
    Some(CreatePartitionsResponse::default().with_results(results))
}
