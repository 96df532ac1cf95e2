//! The share groups' admin APIs (ShareGroupDescribe, DescribeShareGroupOffsets,
//! AlterShareGroupOffsets, DeleteShareGroupOffsets), answered from the group's files.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kafka_protocol::ResponseError;
use kafka_protocol::messages::alter_share_group_offsets_response::{
    AlterShareGroupOffsetsResponsePartition, AlterShareGroupOffsetsResponseTopic,
};
use kafka_protocol::messages::delete_share_group_offsets_response::DeleteShareGroupOffsetsResponseTopic;
use kafka_protocol::messages::describe_share_group_offsets_response::{
    DescribeShareGroupOffsetsResponseGroup, DescribeShareGroupOffsetsResponsePartition,
    DescribeShareGroupOffsetsResponseTopic,
};
use kafka_protocol::messages::share_group_describe_response::{
    Assignment as DescribedAssignment, DescribedGroup, Member,
    TopicPartitions as DescribedPartitions,
};
use kafka_protocol::messages::*;

use crate::local::share::admin;
use crate::server::broker::Broker;
use crate::server::handlers::{blocking, error_code, str_bytes, topic_uuid};

use super::wire_topic_id;

pub async fn describe(
    broker: &Arc<Broker>,
    _: i16,
    request: ShareGroupDescribeRequest,
) -> Option<ShareGroupDescribeResponse> {
    let b = Arc::clone(broker);
    let groups = blocking(move || {
        request
            .group_ids
            .iter()
            .map(|g| describe_group(&b, &g.0))
            .collect()
    })
    .await;
    Some(ShareGroupDescribeResponse::default().with_groups(groups))
}

fn describe_group(broker: &Broker, group: &str) -> DescribedGroup {
    let base = DescribedGroup::default()
        .with_group_id(GroupId(str_bytes(group)))
        .with_authorized_operations(i32::MIN);
    let described = match admin::describe(&broker.dir, group) {
        Ok(Some(d)) => d,
        Ok(None) => {
            return base
                .with_error_code(ResponseError::GroupIdNotFound.code())
                .with_error_message(Some(str_bytes(format!("Group {group} not found."))))
                .with_group_state(str_bytes("Dead"));
        }
        Err(e) => {
            return base
                .with_error_code(error_code(&e))
                .with_error_message(Some(str_bytes(e.to_string())));
        }
    };
    let epochs = broker.shares.epochs(group);
    let group_epoch = epochs.values().copied().max().unwrap_or(0);
    let members = described
        .members
        .into_iter()
        .map(|m| {
            let partitions = m
                .assignment
                .iter()
                .filter_map(|(t, ps)| {
                    let meta = broker.dir.topic(t).ok().flatten()?;
                    Some(
                        DescribedPartitions::default()
                            .with_topic_id(topic_uuid(&meta.id))
                            .with_topic_name(TopicName(str_bytes(t.clone())))
                            .with_partitions(ps.clone()),
                    )
                })
                .collect();
            Member::default()
                .with_member_epoch(epochs.get(&m.member_id).copied().unwrap_or(0))
                .with_member_id(str_bytes(m.member_id))
                .with_client_id(str_bytes(m.client_id))
                .with_client_host(str_bytes(m.host))
                .with_subscribed_topic_names(
                    m.assignment
                        .keys()
                        .map(|t| TopicName(str_bytes(t.clone())))
                        .collect(),
                )
                .with_assignment(DescribedAssignment::default().with_topic_partitions(partitions))
        })
        .collect();
    base.with_group_state(str_bytes(described.state))
        .with_group_epoch(group_epoch)
        .with_assignment_epoch(group_epoch)
        .with_assignor_name(str_bytes("simple"))
        .with_members(members)
}

pub async fn describe_offsets(
    broker: &Arc<Broker>,
    _: i16,
    request: DescribeShareGroupOffsetsRequest,
) -> Option<DescribeShareGroupOffsetsResponse> {
    let b = Arc::clone(broker);
    let groups = blocking(move || {
        request
            .groups
            .iter()
            .map(|g| {
                let group = g.group_id.0.to_string();
                let base = DescribeShareGroupOffsetsResponseGroup::default()
                    .with_group_id(g.group_id.clone());
                let offsets = match admin::offsets(&b.dir, &group) {
                    Ok(o) => o,
                    Err(e) => {
                        return base
                            .with_error_code(error_code(&e))
                            .with_error_message(Some(str_bytes(e.to_string())));
                    }
                };
                let wanted = |t: &str, p: i32| match &g.topics {
                    None => true,
                    Some(ts) => ts.iter().any(|w| {
                        *w.topic_name.0 == *t
                            && (w.partitions.is_empty() || w.partitions.contains(&p))
                    }),
                };
                let mut topics: BTreeMap<String, Vec<DescribeShareGroupOffsetsResponsePartition>> =
                    BTreeMap::new();
                for ((t, p), o) in offsets {
                    if !wanted(&t, p) {
                        continue;
                    }
                    topics.entry(t).or_default().push(
                        DescribeShareGroupOffsetsResponsePartition::default()
                            .with_partition_index(p)
                            .with_start_offset(o.start_offset.unwrap_or(-1))
                            .with_leader_epoch(o.leader_epoch.unwrap_or(-1)),
                    );
                }
                base.with_topics(
                    topics
                        .into_iter()
                        .map(|(t, partitions)| {
                            let id = wire_topic_id(&b.dir, &t);
                            DescribeShareGroupOffsetsResponseTopic::default()
                                .with_topic_name(TopicName(str_bytes(t)))
                                .with_topic_id(id)
                                .with_partitions(partitions)
                        })
                        .collect(),
                )
            })
            .collect()
    })
    .await;
    Some(DescribeShareGroupOffsetsResponse::default().with_groups(groups))
}

pub async fn alter_offsets(
    broker: &Arc<Broker>,
    _: i16,
    request: AlterShareGroupOffsetsRequest,
) -> Option<AlterShareGroupOffsetsResponse> {
    let b = Arc::clone(broker);
    Some(
        blocking(move || {
            let group = request.group_id.0.to_string();
            let mut plan = BTreeMap::new();
            let mut unknown: BTreeSet<(String, i32)> = BTreeSet::new();
            for t in &request.topics {
                let meta = b.dir.topic(&t.topic_name.0).ok().flatten();
                for p in &t.partitions {
                    let key = (t.topic_name.0.to_string(), p.partition_index);
                    match &meta {
                        Some(m)
                            if p.partition_index >= 0
                                && (p.partition_index as u32) < m.partitions =>
                        {
                            plan.insert(key, p.start_offset);
                        }
                        _ => {
                            unknown.insert(key);
                        }
                    }
                }
            }
            if let Err(e) = admin::reset(&b.dir, &group, &plan) {
                return AlterShareGroupOffsetsResponse::default()
                    .with_error_code(error_code(&e))
                    .with_error_message(Some(str_bytes(
                        if error_code(&e) == ResponseError::NonEmptyGroup.code() {
                            "The group is not empty.".to_string()
                        } else {
                            e.to_string()
                        },
                    )));
            }
            let mut topics: BTreeMap<String, Vec<AlterShareGroupOffsetsResponsePartition>> =
                BTreeMap::new();
            for (t, p) in plan.keys().chain(unknown.iter()) {
                let code = if unknown.contains(&(t.clone(), *p)) {
                    ResponseError::UnknownTopicOrPartition.code()
                } else {
                    0
                };
                topics.entry(t.clone()).or_default().push(
                    AlterShareGroupOffsetsResponsePartition::default()
                        .with_partition_index(*p)
                        .with_error_code(code)
                        .with_error_message(
                            (code != 0).then(|| {
                                str_bytes("This server does not host this topic-partition.")
                            }),
                        ),
                );
            }
            AlterShareGroupOffsetsResponse::default().with_responses(
                topics
                    .into_iter()
                    .map(|(t, partitions)| {
                        let id = wire_topic_id(&b.dir, &t);
                        AlterShareGroupOffsetsResponseTopic::default()
                            .with_topic_name(TopicName(str_bytes(t)))
                            .with_topic_id(id)
                            .with_partitions(partitions)
                    })
                    .collect(),
            )
        })
        .await,
    )
}

pub async fn delete_offsets(
    broker: &Arc<Broker>,
    _: i16,
    request: DeleteShareGroupOffsetsRequest,
) -> Option<DeleteShareGroupOffsetsResponse> {
    let b = Arc::clone(broker);
    Some(
        blocking(move || {
            let group = request.group_id.0.to_string();
            let topics: Vec<String> = request
                .topics
                .iter()
                .map(|t| t.topic_name.0.to_string())
                .collect();
            let outcome = match admin::delete_offsets(&b.dir, &group, &topics) {
                Ok(o) => o,
                Err(e) => {
                    return DeleteShareGroupOffsetsResponse::default()
                        .with_error_code(error_code(&e))
                        .with_error_message(Some(str_bytes(e.to_string())));
                }
            };
            if let Some(error) = outcome.error {
                return DeleteShareGroupOffsetsResponse::default()
                    .with_error_code(ResponseError::NonEmptyGroup.code())
                    .with_error_message(Some(str_bytes(error)));
            }
            DeleteShareGroupOffsetsResponse::default().with_responses(
                outcome
                    .topics
                    .into_iter()
                    .map(|(t, error)| {
                        let id = wire_topic_id(&b.dir, &t);
                        let code = match &error {
                            None => 0,
                            Some(m) if m.contains("does not host") => {
                                ResponseError::UnknownTopicOrPartition.code()
                            }
                            Some(_) => ResponseError::InvalidRequest.code(),
                        };
                        DeleteShareGroupOffsetsResponseTopic::default()
                            .with_topic_name(TopicName(str_bytes(t)))
                            .with_topic_id(id)
                            .with_error_code(code)
                            .with_error_message(error.map(str_bytes))
                    })
                    .collect(),
            )
        })
        .await,
    )
}
