//! Partition offsets on either backend, as Kafka's ListOffsets gives them: the log start
//! (earliest), the log end (latest), the record with the greatest timestamp, or the first offset
//! at or after a time.
//!
//! Each backend answers once here: the embedded log from a snapshot of each partition, a
//! cluster with one ListOffsets per partition leader. Group admin and the tools use these.

use std::collections::BTreeMap;

use kafka_protocol::ResponseError;

use super::{Backend, Client, ClientError, Result};
use crate::kafka::TopicPartition;
use crate::local::LogDir;
use crate::remote::Cluster;

/// Which offset of a partition to look up (Kafka's `OffsetSpec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OffsetSpec {
    /// The log start offset.
    Earliest,
    /// The log end offset (the next offset to be written).
    Latest,
    /// The offset of the first record with the greatest timestamp in the partition; none when
    /// the partition holds no record.
    MaxTimestamp,
    /// The first offset still in local storage: the log start without tiered storage.
    EarliestLocal,
    /// The last offset in tiered storage: none without tiered storage.
    LatestTiered,
    /// The first offset not yet uploaded to tiered storage: none without tiered storage.
    EarliestPendingUpload,
    /// The first offset whose record timestamp is at or after this time (ms since the epoch).
    /// A negative time other than the special values above is refused, as a broker refuses it.
    Timestamp(i64),
}

impl OffsetSpec {
    /// The timestamp ListOffsets carries for it (Kafka's -2 and -1 for earliest and latest,
    /// -3 to -6 for the others).
    pub fn list_offsets_timestamp(self) -> i64 {
        match self {
            OffsetSpec::Earliest => -2,
            OffsetSpec::Latest => -1,
            OffsetSpec::MaxTimestamp => -3,
            OffsetSpec::EarliestLocal => -4,
            OffsetSpec::LatestTiered => -5,
            OffsetSpec::EarliestPendingUpload => -6,
            OffsetSpec::Timestamp(ts) => ts,
        }
    }

    /// The spec a ListOffsets timestamp stands for: -1 to -6 are the special specs, anything
    /// else a time.
    pub fn from_list_offsets_timestamp(ts: i64) -> OffsetSpec {
        match ts {
            -1 => OffsetSpec::Latest,
            -2 => OffsetSpec::Earliest,
            -3 => OffsetSpec::MaxTimestamp,
            -4 => OffsetSpec::EarliestLocal,
            -5 => OffsetSpec::LatestTiered,
            -6 => OffsetSpec::EarliestPendingUpload,
            ts => OffsetSpec::Timestamp(ts),
        }
    }
}

/// One partition's answer: the offset, `None` when no record is at or after the time asked,
/// or why the partition has none (unknown partition, no leader).
pub type PartitionOffset = std::result::Result<Option<i64>, ClientError>;

impl Client {
    /// The offsets `spec` names for many partitions at once.
    pub fn list_offsets(
        &mut self,
        partitions: &[TopicPartition],
        spec: OffsetSpec,
    ) -> Result<BTreeMap<TopicPartition, PartitionOffset>> {
        match &mut self.backend {
            Backend::Local(dir) => Ok(local(dir, partitions, spec)),
            Backend::Remote(cluster) => remote(cluster, partitions, spec),
        }
    }
}

/// The embedded log's answers, each from one snapshot of the partition.
pub(super) fn local(
    dir: &LogDir,
    partitions: &[TopicPartition],
    spec: OffsetSpec,
) -> BTreeMap<TopicPartition, PartitionOffset> {
    let mut counts: BTreeMap<&str, Option<u32>> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (topic, partition) in partitions {
        let count = match counts.get(topic.as_str()) {
            Some(count) => Ok(*count),
            None => dir.topic(topic).map(|meta| meta.map(|t| t.partitions)),
        };
        let answer = count.map_err(ClientError::from).and_then(|count| {
            counts.insert(topic, count);
            // The log numbers its partitions from 0 in a u32.
            let local = u32::try_from(*partition)
                .ok()
                .filter(|p| count.is_some_and(|n| *p < n));
            let Some(local) = local else {
                return Err(ClientError::kafka(
                    ResponseError::UnknownTopicOrPartition,
                    "This server does not host this topic-partition.",
                ));
            };
            local_offset(dir, topic, local, spec)
        });
        out.insert((topic.clone(), *partition), answer);
    }
    out
}

/// One partition's answer, as a one-broker cluster without tiered storage gives it.
fn local_offset(dir: &LogDir, topic: &str, partition: u32, spec: OffsetSpec) -> PartitionOffset {
    // The spec a broker would read from the timestamp on the wire, so that a `Timestamp(-1)`
    // means what it means to a cluster.
    let spec = OffsetSpec::from_list_offsets_timestamp(spec.list_offsets_timestamp());
    if let OffsetSpec::Timestamp(ts) = spec
        && ts < 0
    {
        // A broker answers UNSUPPORTED_VERSION for a negative time it does not know.
        return Err(ClientError::kafka(
            ResponseError::UnsupportedVersion,
            "The version of API is not supported.",
        ));
    }
    let log = dir.partition(topic, partition)?;
    let snapshot = log.snapshot()?;
    Ok(match spec {
        OffsetSpec::Earliest | OffsetSpec::EarliestLocal => Some(snapshot.log_start_offset),
        OffsetSpec::Latest => Some(snapshot.log_end_offset),
        OffsetSpec::MaxTimestamp => log.offset_of_max_timestamp(&snapshot)?,
        // Nothing is tiered: no offset, as a broker answers for a topic without remote storage.
        OffsetSpec::LatestTiered | OffsetSpec::EarliestPendingUpload => None,
        OffsetSpec::Timestamp(ts) => log.offset_for_timestamp(&snapshot, ts)?,
    })
}

/// A cluster's answers: one ListOffsets per partition leader.
pub(super) fn remote(
    cluster: &mut Cluster,
    partitions: &[TopicPartition],
    spec: OffsetSpec,
) -> Result<BTreeMap<TopicPartition, PartitionOffset>> {
    let mut out = BTreeMap::new();
    let mut found = cluster.list_offsets(partitions, spec.list_offsets_timestamp())?;
    for tp in partitions.iter().cloned() {
        // A partition the answer does not mention has no leader to ask.
        let answer = found
            .remove(&tp)
            .unwrap_or(Err(crate::remote::RemoteError::broker(
                ResponseError::LeaderNotAvailable.code(),
                None,
            )));
        out.insert(tp, answer.map_err(ClientError::from));
    }
    Ok(out)
}
