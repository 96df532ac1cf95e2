//! Partition leaders: which broker a partition's request goes to (ListOffsets, DeleteRecords),
//! from one Metadata request for the partitions' topics.

use std::collections::{BTreeMap, HashMap};

use super::admin::{BrokerInfo, Client};
use super::error::Result;
use crate::kafka::TopicPartition;

/// UNKNOWN_TOPIC_OR_PARTITION: the cluster has no such partition.
pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
/// LEADER_NOT_AVAILABLE: the partition exists but has no leader now.
pub const LEADER_NOT_AVAILABLE: i16 = 5;

/// Partitions grouped by the broker that leads them, and those that cannot be sent anywhere.
#[derive(Debug, Default)]
pub struct Leaders {
    /// Each leader (with its address) and the partitions it leads, by broker id.
    pub by_leader: Vec<(BrokerInfo, Vec<TopicPartition>)>,
    /// Partitions without a leader to ask, with the error code that says why.
    pub leaderless: Vec<(TopicPartition, i16)>,
}

impl Client {
    /// The leaders of `tps`, from a Metadata request for their topics: a partition the cluster
    /// does not have is UNKNOWN_TOPIC_OR_PARTITION; one without a leader, or whose leader is
    /// not among the live brokers, LEADER_NOT_AVAILABLE.
    pub async fn leaders(&mut self, tps: &[TopicPartition]) -> Result<Leaders> {
        let mut topics: Vec<String> = tps.iter().map(|tp| tp.0.clone()).collect();
        topics.sort();
        topics.dedup();
        let meta = self.metadata(Some(&topics)).await?;
        let mut leader_of: HashMap<(&str, i32), i32> = HashMap::new();
        for t in &meta.topics {
            for p in &t.partitions {
                leader_of.insert((t.name.as_str(), p.partition), p.leader);
            }
        }
        let mut out = Leaders::default();
        let mut by_leader: BTreeMap<i32, Vec<TopicPartition>> = BTreeMap::new();
        for tp in tps {
            match leader_of.get(&(tp.0.as_str(), tp.1)) {
                Some(l) if *l >= 0 => by_leader.entry(*l).or_default().push(tp.clone()),
                Some(_) => out.leaderless.push((tp.clone(), LEADER_NOT_AVAILABLE)),
                None => out
                    .leaderless
                    .push((tp.clone(), UNKNOWN_TOPIC_OR_PARTITION)),
            }
        }
        for (leader, tps) in by_leader {
            match meta.brokers.iter().find(|b| b.id == leader) {
                Some(b) => out.by_leader.push((b.clone(), tps)),
                None => out
                    .leaderless
                    .extend(tps.into_iter().map(|tp| (tp, LEADER_NOT_AVAILABLE))),
            }
        }
        Ok(out)
    }
}
