//! ConsumerGroupHeartbeat and ConsumerGroupDescribe: the new consumer group protocol (KIP-848),
//! where the server assigns the partitions ([`super::consumer`] holds the group). The wire names
//! topics by id; the group holds them by name, so ids are turned into names on the way in and
//! back on the way out.
//!
//! A group is classic or consumer, never both: a heartbeat to a group with classic members is
//! refused with GROUP_ID_NOT_FOUND, and a JoinGroup to a group with consumer members with
//! INCONSISTENT_GROUP_PROTOCOL. Members hold the server's stand-in in the group store, as
//! classic members do, so `--log-dir` tools see the group as live.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_protocol::ResponseError;
use kafka_protocol::messages::consumer_group_describe_response::{
    Assignment as DescribedAssignment, DescribedGroup, Member as DescribedMember,
    TopicPartitions as DescribedPartitions,
};
use kafka_protocol::messages::consumer_group_heartbeat_response::{Assignment, TopicPartitions};
use kafka_protocol::messages::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse, GroupId, TopicName,
};

use super::Entry;
use super::consumer::{ASSIGNORS, Beat, Refusal, Reply};
use crate::kafka::TopicPartition;
use crate::kafka::groups::GroupState;
use crate::server::broker::Broker;
use crate::server::dispatch::ClientInfo;
use crate::server::handlers::{blocking, str_bytes, topic_uuid};

/// ConsumerGroupDescribe's member type for a member of the consumer protocol.
const CONSUMER_MEMBER: i8 = 1;

/// The topics a heartbeat deals with: partition counts, and ids both ways.
#[derive(Default)]
struct Topics {
    counts: BTreeMap<String, u32>,
    ids: BTreeMap<String, uuid::Uuid>,
    names: BTreeMap<uuid::Uuid, String>,
}

fn look_up(broker: &Broker, names: impl IntoIterator<Item = String>) -> Topics {
    let mut topics = Topics::default();
    for name in names {
        // A topic that cannot be read now is left out, as if it did not exist yet.
        if let Ok(Some(meta)) = broker.topic(&name) {
            let id = topic_uuid(&meta.id);
            topics.counts.insert(name.clone(), meta.partitions);
            topics.ids.insert(name.clone(), id);
            topics.names.insert(id, name);
        }
    }
    topics
}

pub async fn heartbeat(
    broker: &Arc<Broker>,
    version: i16,
    request: ConsumerGroupHeartbeatRequest,
) -> Option<ConsumerGroupHeartbeatResponse> {
    let fail = |(code, message): Refusal| {
        Some(
            ConsumerGroupHeartbeatResponse::default()
                .with_error_code(code)
                .with_error_message(Some(str_bytes(message))),
        )
    };
    let name = request.group_id.0.to_string();
    if name.is_empty() {
        return fail((
            ResponseError::InvalidGroupId.code(),
            "GroupId can't be empty.".into(),
        ));
    }
    // An empty regex is none, as in Kafka (librdkafka sends "" with every heartbeat).
    if request
        .subscribed_topic_regex
        .as_ref()
        .is_some_and(|re| !re.is_empty())
    {
        return fail((
            ResponseError::InvalidRequest.code(),
            "kafka-server-start does not serve regular expression subscriptions; subscribe to topic names".into(),
        ));
    }
    if let Some(a) = &request.server_assignor
        && !ASSIGNORS.contains(&a.as_str())
    {
        return fail((
            ResponseError::UnsupportedAssignor.code(),
            format!("ServerAssignor {a} is not supported. Supported assignors: uniform, range."),
        ));
    }
    let mut member_id = request.member_id.to_string();
    if member_id.is_empty() {
        // v0: the coordinator names a joining member; v1: the member names itself.
        if version >= 1 || request.member_epoch != 0 {
            return fail((
                ResponseError::InvalidRequest.code(),
                "MemberId can't be empty.".into(),
            ));
        }
        // As Kafka's coordinator names one: `Uuid.randomUuid()`'s text.
        member_id = crate::kafka::uuid::random_uuid_string();
    }
    let entry = broker.groups.entry(&name);
    // Read here: the blocking thread does not see the request's task-local client.
    let client = crate::server::dispatch::client();
    let (b, e, id) = (Arc::clone(broker), Arc::clone(&entry), member_id.clone());
    let result = blocking(move || step(&b, &e, &name, (id, client), request)).await;
    entry.notify();
    match result {
        Ok((reply, ids)) => Some(
            ConsumerGroupHeartbeatResponse::default()
                .with_member_id(Some(str_bytes(member_id)))
                .with_member_epoch(reply.epoch)
                .with_heartbeat_interval_ms(broker.config.consumer_heartbeat_interval_ms)
                .with_assignment(reply.assignment.map(|a| assignment(&a, &ids))),
        ),
        Err(refusal) => fail(refusal),
    }
}

/// Under the stand-in lock: checks the group is not classic, holds the stand-in while the group
/// has members, and runs the heartbeat.
fn step(
    broker: &Broker,
    entry: &Entry,
    name: &str,
    (member_id, client): (String, ClientInfo),
    request: ConsumerGroupHeartbeatRequest,
) -> Result<(Reply, BTreeMap<String, uuid::Uuid>), Refusal> {
    let mut standin = entry.standin();
    if request.member_epoch == 0 {
        if !entry.group().members.is_empty() {
            return Err((
                ResponseError::GroupIdNotFound.code(),
                format!("Group {name} is not a consumer group."),
            ));
        }
        if let Err(e) = Entry::ensure_standin(&mut standin, &broker.groups.store, name) {
            broker
                .log
                .warn(&format!("Refused a member of group {name}: {e}"));
            return Err((
                ResponseError::InconsistentGroupProtocol.code(),
                format!("Group {name} cannot be joined now: {e}"),
            ));
        }
    }
    let mut wanted = entry.consumer().subscribed();
    let subscribed: Option<Vec<String>> = request
        .subscribed_topic_names
        .as_ref()
        .map(|ts| ts.iter().map(|t| t.0.to_string()).collect());
    wanted.extend(subscribed.iter().flatten().cloned());
    let topics = look_up(broker, wanted);
    let owned = request.topic_partitions.as_ref().map(|tps| {
        tps.iter()
            .filter_map(|t| Some((topics.names.get(&t.topic_id)?, &t.partitions)))
            .flat_map(|(name, ps)| ps.iter().filter(|&&p| p >= 0).map(|&p| (name.clone(), p)))
            .collect::<BTreeSet<TopicPartition>>()
    });
    let beat = Beat {
        member_id: member_id.clone(),
        member_epoch: request.member_epoch,
        client_id: client.client_id,
        host: client.host,
        instance_id: request.instance_id.as_ref().map(|s| s.to_string()),
        rack_id: request.rack_id.as_ref().map(|s| s.to_string()),
        rebalance_timeout: (request.rebalance_timeout_ms >= 0)
            .then(|| Duration::from_millis(request.rebalance_timeout_ms as u64)),
        subscribed,
        assignor: request.server_assignor.as_ref().map(|s| s.to_string()),
        owned,
    };
    let said = broker
        .log
        .enabled(crate::server::log::Level::Debug)
        .then(|| format!("epoch {} owning {:?}", beat.member_epoch, beat.owned));
    let result = entry
        .consumer()
        .heartbeat(beat, &topics.counts, Instant::now());
    if let Some(said) = said {
        broker.log.debug(&format!(
            "Group {name}: member {member_id} at {said}: {result:?}"
        ));
    }
    match (&result, request.member_epoch) {
        (Ok(_), 0) => broker.log.info(&format!(
            "Member {member_id} joined group {name} (consumer protocol)"
        )),
        (Ok(_), e) if e < 0 => broker
            .log
            .info(&format!("Member(s) {member_id} left group {name}")),
        _ => {}
    }
    // The last member left (or a refused first one): the stand-in goes, unless classic
    // members hold it.
    if !entry.is_live()
        && let Some(member) = standin.take()
    {
        let _ = member.leave(&Default::default());
    }
    result.map(|reply| (reply, topics.ids))
}

fn assignment(
    partitions: &BTreeSet<TopicPartition>,
    ids: &BTreeMap<String, uuid::Uuid>,
) -> Assignment {
    let by_topic = group_by_topic(partitions);
    let topic_partitions = by_topic
        .into_iter()
        .map(|(t, ps)| {
            TopicPartitions::default()
                .with_topic_id(ids.get(t).copied().unwrap_or_default())
                .with_partitions(ps)
        })
        .collect();
    Assignment::default().with_topic_partitions(topic_partitions)
}

fn group_by_topic(partitions: &BTreeSet<TopicPartition>) -> BTreeMap<&str, Vec<i32>> {
    let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for (t, p) in partitions {
        by_topic.entry(t).or_default().push(*p);
    }
    by_topic
}

pub async fn describe(
    broker: &Arc<Broker>,
    _: i16,
    request: ConsumerGroupDescribeRequest,
) -> Option<ConsumerGroupDescribeResponse> {
    let b = Arc::clone(broker);
    let groups = blocking(move || {
        request
            .group_ids
            .into_iter()
            .map(|id| describe_one(&b, id))
            .collect()
    })
    .await;
    Some(ConsumerGroupDescribeResponse::default().with_groups(groups))
}

fn describe_one(broker: &Broker, id: GroupId) -> DescribedGroup {
    let name = id.0.to_string();
    let not_found = |message: String| {
        DescribedGroup::default()
            .with_group_id(id.clone())
            .with_group_state(str_bytes(GroupState::Dead.name()))
            .with_error_code(ResponseError::GroupIdNotFound.code())
            .with_error_message(Some(str_bytes(message)))
    };
    let Some(entry) = broker
        .groups
        .existing(&name)
        .filter(|e| !e.consumer().members.is_empty())
    else {
        // A classic group, or a group of `--log-dir` consumers or committed offsets only.
        let classic = broker.groups.has_members(&name)
            || broker.groups.store.describe(&name).ok().flatten().is_some();
        return not_found(if classic {
            format!("Group {name} is not a consumer group.")
        } else {
            format!("Group {name} not found.")
        });
    };
    let wanted: BTreeSet<String> = {
        let group = entry.consumer();
        let held = group
            .members
            .values()
            .flat_map(|m| m.assigned.iter().chain(&m.target));
        held.map(|(t, _)| t.clone()).collect()
    };
    let topics = look_up(broker, wanted);
    let group = entry.consumer();
    let described = |partitions: &BTreeSet<TopicPartition>| {
        let topic_partitions = group_by_topic(partitions)
            .into_iter()
            .map(|(t, ps)| {
                DescribedPartitions::default()
                    .with_topic_id(topics.ids.get(t).copied().unwrap_or_default())
                    .with_topic_name(TopicName(str_bytes(t)))
                    .with_partitions(ps)
            })
            .collect();
        DescribedAssignment::default().with_topic_partitions(topic_partitions)
    };
    let members = group
        .members
        .iter()
        .map(|(mid, m)| {
            DescribedMember::default()
                .with_member_id(str_bytes(mid.clone()))
                .with_instance_id(m.instance_id.clone().map(str_bytes))
                .with_rack_id(m.rack_id.clone().map(str_bytes))
                .with_member_epoch(m.epoch)
                .with_client_id(str_bytes(m.client_id.clone()))
                .with_client_host(str_bytes(m.host.clone()))
                .with_subscribed_topic_names(
                    m.subscribed
                        .iter()
                        .map(|t| TopicName(str_bytes(t.clone())))
                        .collect(),
                )
                .with_assignment(described(&m.assigned))
                .with_target_assignment(described(&m.target))
                .with_member_type(CONSUMER_MEMBER)
        })
        .collect();
    DescribedGroup::default()
        .with_group_id(id)
        .with_group_state(str_bytes(group.state().name()))
        .with_group_epoch(group.epoch)
        .with_assignment_epoch(group.assignment_epoch)
        .with_assignor_name(str_bytes(group.assignor()))
        .with_members(members)
        .with_authorized_operations(i32::MIN)
}
