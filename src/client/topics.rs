//! Topic admin on either backend: list, describe, describe configs, create, add partitions
//! and delete, with the types Kafka's admin client uses for them.
//!
//! The embedded log answers as a one-broker cluster would (broker id 0, one replica per
//! partition), so that a tool prints the same thing for the same state on both backends.

use kafka_protocol::ResponseError;

use super::{Backend, Client, ClientError, Result};
pub use crate::kafka::configs::{ConfigChange, ConfigEntry, TopicConfigChanges};
pub use crate::kafka::repair::{Cut, PartitionRepair, RepairReport};
pub use crate::kafka::topics::{
    NewTopic, PartitionDescription, PartitionIncrease, TopicDescription, TopicListing,
};
use crate::local;
use crate::remote::{PartitionInfo, RemoteError, TopicInfo};

/// The outcome for one topic of a create, add-partitions or delete call.
pub type TopicOutcome = (String, Result<()>);

/// The embedded log's outcomes as the client reports them.
fn local_outcomes(outcomes: Vec<local::admin::TopicOutcome>) -> Vec<TopicOutcome> {
    outcomes
        .into_iter()
        .map(|(name, result)| (name, result.map_err(ClientError::from)))
        .collect()
}

impl Client {
    /// Every topic, sorted by name.
    pub fn list_topics(&mut self) -> Result<Vec<TopicListing>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(local::admin::list_topics(dir)?),
            Backend::Remote(cluster) => Ok(cluster
                .metadata(None)?
                .topics
                .into_iter()
                .map(|t| TopicListing {
                    name: t.name,
                    internal: t.internal,
                })
                .collect()),
        }
    }

    /// The named topics, sorted by name; a topic that cannot be described fails the call, as
    /// the admin client's `allTopicNames().get()` does. `page_limit` bounds the partitions of
    /// one DescribeTopicPartitions response.
    pub fn describe_topics(
        &mut self,
        names: &[String],
        page_limit: i32,
    ) -> Result<Vec<TopicDescription>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(local::admin::describe_topics(dir, names)?),
            Backend::Remote(cluster) => cluster
                .describe_topics(names, page_limit)?
                .into_iter()
                .map(description)
                .collect(),
        }
    }

    /// The topic with this id, if there is one (from metadata: without eligible leader
    /// replicas on a cluster, as Kafka's tool asks for it).
    pub fn describe_topic_id(&mut self, id: &str) -> Result<Option<TopicDescription>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(local::admin::describe_topic_id(dir, id)?),
            Backend::Remote(cluster) => cluster
                .metadata(None)?
                .topics
                .into_iter()
                .find(|t| t.id == id)
                .map(description)
                .transpose(),
        }
    }

    /// Every config entry of the named topics, defaults included; the first topic that fails
    /// fails the call.
    pub fn describe_configs(
        &mut self,
        names: &[String],
    ) -> Result<Vec<(String, Vec<ConfigEntry>)>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(local::admin::describe_configs(dir, names)?),
            Backend::Remote(cluster) => cluster
                .describe_configs(names)?
                .into_iter()
                .map(|(name, entries)| Ok((name, entries?)))
                .collect(),
        }
    }

    /// The ids of the brokers that are up.
    pub fn live_brokers(&mut self) -> Result<Vec<i32>> {
        match &mut self.backend {
            Backend::Local(_) => Ok(vec![local::logdir::LOCAL_NODE_ID]),
            Backend::Remote(cluster) => Ok(cluster.live_brokers()?),
        }
    }

    /// Creates topics; the outcome of each, in request order.
    pub fn create_topics(&mut self, topics: &[NewTopic]) -> Result<Vec<TopicOutcome>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(local_outcomes(local::admin::create_topics(dir, topics))),
            Backend::Remote(cluster) => Ok(outcomes(cluster.create_topics(topics)?)),
        }
    }

    /// Raises partition counts; the outcome of each topic, in request order.
    pub fn create_partitions(
        &mut self,
        increases: &[PartitionIncrease],
    ) -> Result<Vec<TopicOutcome>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(local_outcomes(local::admin::create_partitions(
                dir, increases,
            ))),
            Backend::Remote(cluster) => Ok(outcomes(cluster.create_partitions(increases)?)),
        }
    }

    /// Changes topic configs, all of a topic's changes or none; the outcome of each topic, in
    /// request order.
    pub fn alter_topic_configs(
        &mut self,
        alterations: &[TopicConfigChanges],
    ) -> Result<Vec<TopicOutcome>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(local_outcomes(local::admin::alter_topic_configs(
                dir,
                alterations,
            ))),
            Backend::Remote(cluster) => Ok(outcomes(cluster.alter_topic_configs(alterations)?)),
        }
    }

    /// Deletes topics; the outcome of each, in request order.
    pub fn delete_topics(&mut self, names: &[String]) -> Result<Vec<TopicOutcome>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(local_outcomes(local::admin::delete_topics(dir, names))),
            Backend::Remote(cluster) => Ok(outcomes(cluster.delete_topics(names)?)),
        }
    }

    /// Repairs a topic of the embedded log (`kafka-topics --repair`): each partition is cut
    /// back before its first damaged batch or missing segment, the rest kept aside in
    /// `*.damaged-<ms>` files, and a partition directory naming another topic id is adopted.
    /// A cluster's brokers repair their own logs, so a cluster refuses it.
    pub fn repair_topic(&mut self, name: &str) -> Result<Vec<PartitionRepair>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(dir.repair_topic(name)?),
            Backend::Remote(_) => Err(ClientError::kafka(
                ResponseError::InvalidRequest,
                "--repair works on the embedded log only: a broker checks and repairs its own log when it starts; drop --bootstrap-server to repair a topic of the embedded log",
            )),
        }
    }
}

/// A cluster's answer for one topic, or its error.
fn description(t: TopicInfo) -> Result<TopicDescription> {
    RemoteError::check(t.error_code, None)?;
    Ok(TopicDescription {
        name: t.name,
        id: t.id,
        partitions: t.partitions.into_iter().map(partition).collect(),
    })
}

fn partition(p: PartitionInfo) -> PartitionDescription {
    PartitionDescription {
        partition: p.partition,
        leader: (p.leader >= 0).then_some(p.leader),
        replicas: p.replicas,
        isr: p.isr,
        elr: p.elr,
        last_known_elr: p.last_known_elr,
    }
}

fn outcomes(list: Vec<(String, crate::remote::error::Result<()>)>) -> Vec<TopicOutcome> {
    list.into_iter()
        .map(|(name, outcome)| (name, outcome.map_err(ClientError::from)))
        .collect()
}
