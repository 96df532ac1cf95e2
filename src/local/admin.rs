//! Topic admin on the embedded log, answering as a one-broker Kafka cluster would: broker
//! [`LOCAL_NODE_ID`] leads every partition, the only replica, and refusals carry Kafka's error
//! kinds and messages.

use std::collections::BTreeMap;

use kafka_protocol::ResponseError;

use super::Result;
use super::logdir::LOCAL_NODE_ID;
use super::{LocalError, LogDir, TopicMeta};
use crate::kafka::configs::{ConfigChange, ConfigEntry, TopicConfigChanges};
use crate::kafka::topics::{
    NewTopic, PartitionDescription, PartitionIncrease, TopicDescription, TopicListing,
};
use crate::kafka::{topic_config, topic_name};

/// The outcome for one topic of a create, add-partitions or delete call.
pub type TopicOutcome = (String, Result<()>);

/// Every topic, sorted by name.
pub fn list_topics(dir: &LogDir) -> Result<Vec<TopicListing>> {
    Ok(dir
        .topic_names()?
        .into_iter()
        .map(|name| TopicListing {
            internal: topic_name::is_internal(&name),
            name,
        })
        .collect())
}

/// The named topics; a missing one is UNKNOWN_TOPIC_OR_PARTITION. Describing applies
/// retention, since the embedded log has no daemon to do it; where it cannot (a damaged
/// partition), that is a warning, and the topic is described all the same.
pub fn describe_topics(dir: &LogDir, names: &[String]) -> Result<Vec<TopicDescription>> {
    names
        .iter()
        .map(|name| {
            let meta = existing(dir, name)?;
            apply_retention_or_warn(dir, &meta, false);
            Ok(description(&meta))
        })
        .collect()
}

/// The topic whose id is `id`, if any.
pub fn describe_topic_id(dir: &LogDir, id: &str) -> Result<Option<TopicDescription>> {
    for name in dir.topic_names()? {
        if let Some(meta) = dir.topic(&name)?.filter(|t| t.id == id) {
            return Ok(Some(description(&meta)));
        }
    }
    Ok(None)
}

/// The overrides of each named topic (sorted by name), then the defaults of the other configs.
pub fn describe_configs(dir: &LogDir, names: &[String]) -> Result<Vec<(String, Vec<ConfigEntry>)>> {
    names
        .iter()
        .map(|name| {
            let meta = existing(dir, name)?;
            let overrides = meta.configs.iter().map(|(k, v)| ConfigEntry {
                name: k.clone(),
                value: Some(v.clone()),
                is_default: false,
            });
            let defaults = topic_config::all()
                .iter()
                .filter(|d| d.has_default() && !meta.configs.contains_key(d.name))
                .map(|d| ConfigEntry {
                    name: d.name.to_string(),
                    value: Some(d.default.to_string()),
                    is_default: true,
                });
            Ok((name.clone(), overrides.chain(defaults).collect()))
        })
        .collect()
}

/// Creates each topic in turn; the outcome of each.
pub fn create_topics(dir: &LogDir, topics: &[NewTopic]) -> Vec<TopicOutcome> {
    topics
        .iter()
        .map(|t| (t.name.clone(), create_topic(dir, t)))
        .collect()
}

fn create_topic(dir: &LogDir, t: &NewTopic) -> Result<()> {
    let configs: BTreeMap<String, String> = t.configs.iter().cloned().collect();
    on_this_broker(&t.assignments, 0)?;
    if let Some(rf) = t.replication_factor.filter(|rf| *rf > 1) {
        return Err(LocalError::kafka(
            ResponseError::InvalidReplicationFactor,
            format!(
                "Unable to replicate the partition {rf} time(s): The target replication factor of {rf} cannot be reached because only 1 broker(s) are registered or some brokers have all their log directories cordoned."
            ),
        ));
    }
    let partitions = match (t.assignments.len(), t.partitions) {
        (0, Some(p)) if p < 1 => {
            return Err(LocalError::kafka(
                ResponseError::InvalidPartitions,
                "The partitions must be greater than 0",
            ));
        }
        (0, Some(p)) => p as u32,
        (0, None) => dir.default_partitions()?,
        (n, _) => n as u32,
    };
    match dir.create_topic(&t.name, partitions, configs) {
        Ok(_) => Ok(()),
        Err(LocalError::Invalid(message)) => Err(LocalError::kafka(
            ResponseError::InvalidTopicException,
            message,
        )),
        Err(e) => Err(e),
    }
}

/// Raises each topic's partition count in turn; the outcome of each.
pub fn create_partitions(dir: &LogDir, increases: &[PartitionIncrease]) -> Vec<TopicOutcome> {
    increases
        .iter()
        .map(|i| (i.name.clone(), create_partitions_of(dir, i)))
        .collect()
}

fn create_partitions_of(dir: &LogDir, increase: &PartitionIncrease) -> Result<()> {
    if increase.count < 1 {
        return Err(LocalError::kafka(
            ResponseError::InvalidPartitions,
            "The partitions must be greater than 0",
        ));
    }
    let meta = existing(dir, &increase.name)?;
    if let Some(assignments) = &increase.assignments {
        let added = (increase.count as u32).saturating_sub(meta.partitions) as usize;
        if assignments.len() < added {
            return Err(LocalError::kafka(
                ResponseError::InvalidReplicaAssignment,
                format!(
                    "Attempted to add {added} additional partition(s), but only {} assignment(s) were specified.",
                    assignments.len()
                ),
            ));
        }
        on_this_broker(assignments, meta.partitions as usize)?;
    }
    match dir.add_partitions(&increase.name, increase.count as u32) {
        Ok(()) => Ok(()),
        Err(LocalError::Invalid(message)) => {
            Err(LocalError::kafka(ResponseError::InvalidPartitions, message))
        }
        Err(e) => Err(e),
    }
}

/// Applies each topic's config changes in turn, all of a topic's or none; the outcome of each.
pub fn alter_topic_configs(dir: &LogDir, alterations: &[TopicConfigChanges]) -> Vec<TopicOutcome> {
    alterations
        .iter()
        .map(|a| (a.topic.clone(), alter_topic_config(dir, a, true)))
        .collect()
}

/// One topic's config changes, all or none; a shorter retention takes effect at once, and so
/// does compaction when `clean` (not in the server, whose cleaner thread does it).
pub(super) fn alter_topic_config(
    dir: &LogDir,
    alteration: &TopicConfigChanges,
    clean: bool,
) -> Result<()> {
    existing(dir, &alteration.topic)?;
    let invalid = |message: String| LocalError::kafka(ResponseError::InvalidConfig, message);
    let meta = dir.alter_topic_configs(&alteration.topic, |configs| {
        for change in &alteration.changes {
            match change {
                // Stored as checked: Kafka's parse trims a value.
                ConfigChange::Set { name, value } => {
                    configs.insert(name.clone(), value.trim().to_string());
                }
                ConfigChange::Delete { name } => {
                    configs.remove(name);
                }
            }
        }
        // Kafka checks the topic's whole resulting config, so a change may not leave it
        // inconsistent (min.compaction.lag.ms above max.compaction.lag.ms, say).
        topic_config::validate_all(configs)
    });
    let meta = match meta {
        Ok(meta) => meta,
        Err(LocalError::Invalid(message)) => return Err(invalid(message)),
        Err(e) => return Err(e),
    };
    // A shorter retention takes effect now, as the broker's log cleaner would soon, and so
    // does compaction (a topic made compacted, a lower dirty ratio).
    apply_retention_or_warn(dir, &meta, true);
    if !clean {
        return Ok(());
    }
    match dir.clean_partitions(&meta, 0..meta.partitions, None) {
        Err(e) if !e.is_read_only() => {
            super::warnings::push(format!("topic '{}' was not cleaned: {e}", meta.name))
        }
        _ => {}
    }
    Ok(())
}

/// Applies the topic's retention now, as a broker's log cleaner would soon: a warning where it
/// cannot (a damaged partition), since the command's own change is done and stays. A
/// read-only log dir is left as it is, silently. A query does not wait for writers.
fn apply_retention_or_warn(dir: &LogDir, meta: &TopicMeta, wait_for_writers: bool) {
    match dir.apply_retention(meta, wait_for_writers) {
        Err(e) if e.is_read_only() => {}
        Err(e) => super::warnings::push(format!(
            "retention was not applied to topic '{}': {e}",
            meta.name
        )),
        Ok(()) => {}
    }
}

/// Deletes each topic in turn; the outcome of each.
pub fn delete_topics(dir: &LogDir, names: &[String]) -> Vec<TopicOutcome> {
    names
        .iter()
        .map(|name| (name.clone(), dir.delete_topic(name)))
        .collect()
}

/// A topic that exists, or UNKNOWN_TOPIC_OR_PARTITION with the broker's message.
fn existing(dir: &LogDir, name: &str) -> Result<TopicMeta> {
    dir.topic(name)?.ok_or_else(|| {
        LocalError::kafka(
            ResponseError::UnknownTopicOrPartition,
            "This server does not host this topic-partition.",
        )
    })
}

/// Replica assignments for partitions `first..` must name this broker alone.
fn on_this_broker(assignments: &[Vec<i32>], first: usize) -> Result<()> {
    for (i, ids) in assignments.iter().enumerate() {
        if ids.as_slice() != [LOCAL_NODE_ID] {
            let brokers: Vec<String> = ids.iter().map(i32::to_string).collect();
            return Err(LocalError::kafka(
                ResponseError::InvalidReplicaAssignment,
                format!(
                    "partition {} is assigned to brokers {}, but the embedded log has a single broker {LOCAL_NODE_ID}; use {LOCAL_NODE_ID} for every partition",
                    first + i,
                    brokers.join(":")
                ),
            ));
        }
    }
    Ok(())
}

fn description(meta: &TopicMeta) -> TopicDescription {
    TopicDescription {
        name: meta.name.clone(),
        id: meta.id.clone(),
        partitions: (0..meta.partitions as i32)
            .map(|partition| PartitionDescription {
                partition,
                leader: Some(LOCAL_NODE_ID),
                replicas: vec![LOCAL_NODE_ID],
                isr: vec![LOCAL_NODE_ID],
                elr: Some(Vec::new()),
                last_known_elr: Some(Vec::new()),
            })
            .collect(),
    }
}
