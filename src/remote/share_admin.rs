//! The share-group admin calls of `kafka-share-groups` on a cluster: ListGroups of type Share,
//! and at the group's coordinator ShareGroupDescribe, DescribeShareGroupOffsets (v1 when the
//! broker has it, for the lag; see [`crate::wire::api::ShareGroupOffsetsRequest`]),
//! AlterShareGroupOffsets and DeleteShareGroupOffsets. Deleting a share group is DeleteGroups,
//! as for any group (see [`super::groups`]).
//!
//! As for consumer groups, an answer saying the coordinator moved or is loading, or a
//! connection lost to it, is retried with a fresh FindCoordinator, with backoff, within
//! `request.timeout.ms`.

use std::collections::{BTreeMap, HashMap};

use kafka_protocol::messages::alter_share_group_offsets_request::{
    AlterShareGroupOffsetsRequestPartition, AlterShareGroupOffsetsRequestTopic,
};
use kafka_protocol::messages::delete_share_group_offsets_request::DeleteShareGroupOffsetsRequestTopic;
use kafka_protocol::messages::describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestGroup;
use kafka_protocol::messages::share_group_describe_response::DescribedGroup;
use kafka_protocol::messages::{
    AlterShareGroupOffsetsRequest, DeleteShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsRequest, ShareGroupDescribeRequest,
};

use super::admin::{Client, topic_name};
use super::coordinator::{group_id, is_coordinator_error};
use super::error::{RemoteError, Result};
use super::groups::GROUP_ID_NOT_FOUND;
use super::net::connection::Connection;
use crate::kafka::TopicPartition;
use crate::kafka::share::{
    ShareGroupDescription, ShareMemberDescription, ShareOffset, ShareOffsetsDeletion,
};
use crate::kafka::uuid::uuid_to_string;
use crate::wire::api::ShareGroupOffsetsRequest;

impl Client {
    /// The share groups (ListGroups with type filter `Share`, at every broker) with their
    /// states (`Empty`, `Stable`, `Dead`), sorted by group id.
    pub async fn list_share_groups(&mut self) -> Result<Vec<(String, String)>> {
        let groups = self.list_groups(&[], &["Share".to_string()]).await?;
        // The filter is the broker's; the type is checked again so that no other group slips
        // in should a broker ignore it.
        Ok(groups
            .into_iter()
            .filter(|g| g.group_type.eq_ignore_ascii_case("share"))
            .map(|g| (g.group_id, g.state.name().to_string()))
            .collect())
    }

    /// A share group's state, epochs and members (ShareGroupDescribe at its coordinator);
    /// `None` when no group has that id. A group of another type is an error (the broker's
    /// `Group g is not a share group.`).
    pub async fn describe_share_group(
        &mut self,
        group: &str,
    ) -> Result<Option<ShareGroupDescription>> {
        let (described, c) = self
            .at_coordinator(group, async |conn: &mut Connection| {
                describe_at(conn, group).await
            })
            .await?;
        let Some(g) = described else {
            return Ok(None);
        };
        // Kafka 4.3.1 names each assigned topic; an id without a name (a topic the
        // coordinator could not resolve) is looked up in Metadata.
        let unnamed = g
            .members
            .iter()
            .flat_map(|m| m.assignment.topic_partitions.iter())
            .any(|t| t.topic_name.is_empty());
        let names: HashMap<String, String> = if unnamed {
            self.metadata(None)
                .await?
                .topics
                .into_iter()
                .map(|t| (t.id, t.name))
                .collect()
        } else {
            HashMap::new()
        };
        let mut members: Vec<ShareMemberDescription> = g
            .members
            .into_iter()
            .map(|m| {
                let mut assignment: BTreeMap<String, Vec<i32>> = BTreeMap::new();
                for t in m.assignment.topic_partitions {
                    let name = if t.topic_name.is_empty() {
                        let id = uuid_to_string(t.topic_id.as_bytes());
                        names.get(&id).cloned().unwrap_or(id)
                    } else {
                        t.topic_name.0.to_string()
                    };
                    assignment.entry(name).or_default().extend(t.partitions);
                }
                for partitions in assignment.values_mut() {
                    partitions.sort_unstable();
                    partitions.dedup();
                }
                ShareMemberDescription {
                    member_id: m.member_id.to_string(),
                    client_id: m.client_id.to_string(),
                    host: m.client_host.to_string(),
                    member_epoch: m.member_epoch,
                    assignment,
                }
            })
            .collect();
        members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
        Ok(Some(ShareGroupDescription {
            group_id: g.group_id.0.to_string(),
            state: g.group_state.to_string(),
            coordinator: (c.host, c.port, c.node_id),
            group_epoch: g.group_epoch,
            assignment_epoch: g.assignment_epoch,
            members,
        }))
    }

    /// Where the group stands in each partition it has state for (DescribeShareGroupOffsets
    /// for all topics): start offset, leader epoch and, from brokers with v1 (Kafka 4.3+), lag.
    /// Empty when no group has that id. As Kafka's admin client does, a partition the broker
    /// answers with an error is left out, and one not initialized (start offset -1) has no
    /// values at all.
    pub async fn share_group_offsets(
        &mut self,
        group: &str,
    ) -> Result<BTreeMap<TopicPartition, ShareOffset>> {
        let (offsets, _) = self
            .at_coordinator(group, async |conn: &mut Connection| {
                offsets_at(conn, group).await
            })
            .await?;
        Ok(offsets)
    }

    /// Sets the group's start offsets of these partitions (AlterShareGroupOffsets; the broker
    /// refuses while the group has live members, and creates a group that does not exist):
    /// each partition's error message, `None` for success. A refusal of the whole request
    /// (NON_EMPTY_GROUP) is an error.
    pub async fn alter_share_group_offsets(
        &mut self,
        group: &str,
        offsets: &BTreeMap<TopicPartition, i64>,
    ) -> Result<BTreeMap<TopicPartition, Option<String>>> {
        let (outcomes, _) = self
            .at_coordinator(group, async |conn: &mut Connection| {
                alter_at(conn, group, offsets).await
            })
            .await?;
        Ok(outcomes)
    }

    /// Deletes the group's state of `topics` (DeleteShareGroupOffsets): the refusal of the
    /// whole request (the group is not empty, or does not exist), or each topic's outcome.
    pub async fn delete_share_group_offsets(
        &mut self,
        group: &str,
        topics: &[String],
    ) -> Result<ShareOffsetsDeletion> {
        let (deletion, _) = self
            .at_coordinator(group, async |conn: &mut Connection| {
                delete_offsets_at(conn, group, topics).await
            })
            .await?;
        Ok(deletion)
    }
}

/// Whether a GROUP_ID_NOT_FOUND answer's message says the group exists with another type:
/// the broker uses the one code both for no group and for a consumer (or streams) group
/// asked about as a share group, and only the text tells them apart.
fn other_type(message: Option<&str>) -> bool {
    message.is_some_and(|m| m.contains("is not a share group"))
}

/// ShareGroupDescribe of one group at its coordinator: `None` when it does not exist.
async fn describe_at(conn: &mut Connection, group: &str) -> Result<Option<DescribedGroup>> {
    let version = conn.version::<ShareGroupDescribeRequest>()?;
    let request = ShareGroupDescribeRequest::default().with_group_ids(vec![group_id(group)]);
    let response = conn.send(&request, version).await?;
    let Some(g) = response
        .groups
        .into_iter()
        .find(|g| g.group_id.0.as_str() == group)
    else {
        return Ok(None);
    };
    let message = g.error_message.as_deref();
    match g.error_code {
        0 => Ok(Some(g)),
        GROUP_ID_NOT_FOUND if !other_type(message) => Ok(None),
        code => Err(RemoteError::broker(code, message)),
    }
}

/// DescribeShareGroupOffsets of all the group's partitions at its coordinator.
async fn offsets_at(
    conn: &mut Connection,
    group: &str,
) -> Result<BTreeMap<TopicPartition, ShareOffset>> {
    let version = conn.version::<ShareGroupOffsetsRequest>()?;
    let request = ShareGroupOffsetsRequest(
        DescribeShareGroupOffsetsRequest::default().with_groups(vec![
            DescribeShareGroupOffsetsRequestGroup::default()
                .with_group_id(group_id(group))
                // Null: every partition the group has state for.
                .with_topics(None),
        ]),
    );
    let response = conn.send(&request, version).await?;
    let mut out = BTreeMap::new();
    for g in response.groups.into_iter().filter(|g| g.group_id == group) {
        let message = g.error_message.as_deref();
        match g.error_code {
            0 => {}
            GROUP_ID_NOT_FOUND if !other_type(message) => return Ok(BTreeMap::new()),
            code => return Err(RemoteError::broker(code, message)),
        }
        for t in g.topics {
            for p in t.partitions {
                if p.error_code != 0 {
                    continue;
                }
                let known = |v: i64| (v >= 0).then_some(v);
                let offset = match known(p.start_offset) {
                    Some(start) => ShareOffset {
                        start_offset: Some(start),
                        leader_epoch: (p.leader_epoch >= 0).then_some(p.leader_epoch),
                        lag: known(p.lag),
                    },
                    None => ShareOffset {
                        start_offset: None,
                        leader_epoch: None,
                        lag: None,
                    },
                };
                out.insert((t.topic_name.clone(), p.partition_index), offset);
            }
        }
    }
    Ok(out)
}

/// AlterShareGroupOffsets at the group's coordinator.
async fn alter_at(
    conn: &mut Connection,
    group: &str,
    offsets: &BTreeMap<TopicPartition, i64>,
) -> Result<BTreeMap<TopicPartition, Option<String>>> {
    let version = conn.version::<AlterShareGroupOffsetsRequest>()?;
    let mut by_topic: BTreeMap<&str, Vec<AlterShareGroupOffsetsRequestPartition>> = BTreeMap::new();
    for ((topic, partition), offset) in offsets {
        by_topic.entry(topic).or_default().push(
            AlterShareGroupOffsetsRequestPartition::default()
                .with_partition_index(*partition)
                .with_start_offset(*offset),
        );
    }
    let request = AlterShareGroupOffsetsRequest::default()
        .with_group_id(group_id(group))
        .with_topics(
            by_topic
                .into_iter()
                .map(|(t, ps)| {
                    AlterShareGroupOffsetsRequestTopic::default()
                        .with_topic_name(topic_name(t))
                        .with_partitions(ps)
                })
                .collect(),
        );
    let response = conn.send(&request, version).await?;
    RemoteError::check(response.error_code, response.error_message.as_deref())?;
    let mut out = BTreeMap::new();
    for t in response.responses {
        for p in t.partitions {
            let error = (p.error_code != 0)
                .then(|| RemoteError::broker(p.error_code, p.error_message.as_deref()).to_string());
            out.insert((t.topic_name.0.to_string(), p.partition_index), error);
        }
    }
    Ok(out)
}

/// DeleteShareGroupOffsets at the group's coordinator; a coordinator error is an `Err`, so
/// that it is retried, any other group-level error the deletion's refusal.
async fn delete_offsets_at(
    conn: &mut Connection,
    group: &str,
    topics: &[String],
) -> Result<ShareOffsetsDeletion> {
    let version = conn.version::<DeleteShareGroupOffsetsRequest>()?;
    let request = DeleteShareGroupOffsetsRequest::default()
        .with_group_id(group_id(group))
        .with_topics(
            topics
                .iter()
                .map(|t| {
                    DeleteShareGroupOffsetsRequestTopic::default().with_topic_name(topic_name(t))
                })
                .collect(),
        );
    let response = conn.send(&request, version).await?;
    let message = response.error_message.as_deref();
    if is_coordinator_error(response.error_code) {
        RemoteError::check(response.error_code, message)?;
    }
    let error = (response.error_code != 0)
        .then(|| RemoteError::broker(response.error_code, message).to_string());
    let topics = response
        .responses
        .into_iter()
        .map(|t| {
            let error = (t.error_code != 0)
                .then(|| RemoteError::broker(t.error_code, t.error_message.as_deref()).to_string());
            (t.topic_name.0.to_string(), error)
        })
        .collect();
    Ok(ShareOffsetsDeletion { error, topics })
}
