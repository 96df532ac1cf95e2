//! OffsetCommit, OffsetFetch and OffsetDelete on the log directory's group store, so that
//! offsets committed through the server are what `kafka-consumer-groups --log-dir` shows, and
//! the reverse.
//!
//! A member's commit (of either protocol) goes through the server's stand-in member (fenced
//! like any member); a
//! commit without a generation (the admin client's reset, a consumer without a group) is a
//! reset, refused while the group has members on either side, as Kafka refuses it for a
//! non-empty group (UNKNOWN_MEMBER_ID).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use kafka_protocol::ResponseError;
use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::offset_delete_response::{
    OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
};
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::{
    GroupId, OffsetCommitRequest, OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse,
    OffsetFetchRequest, OffsetFetchResponse, TopicName,
};

use super::Entry;
use crate::kafka::groups::GroupState;
use crate::local::LocalError;
use crate::local::group::{CommittedOffset, TopicPartition};
use crate::server::broker::Broker;
use crate::server::handlers::{blocking, error_code, str_bytes};
use crate::wire::consumer_protocol;

pub async fn commit(
    broker: &Arc<Broker>,
    _: i16,
    request: OffsetCommitRequest,
) -> Option<OffsetCommitResponse> {
    let name = request.group_id.0.to_string();
    let entry = broker.groups.entry(&name);
    let generation = request.generation_id_or_member_epoch;
    let admin = generation < 0 && request.member_id.is_empty();
    let consumer_code = {
        let group = entry.consumer();
        // A member of the consumer protocol commits with its member epoch.
        (!group.members.is_empty()).then(|| {
            if admin {
                ResponseError::UnknownMemberId.code()
            } else {
                group
                    .check_commit(&request.member_id, generation)
                    .err()
                    .unwrap_or(0)
            }
        })
    };
    let mut code = if let Some(code) = consumer_code {
        code
    } else {
        let mut group = entry.group();
        if admin {
            if group.members.is_empty() {
                0
            } else {
                ResponseError::UnknownMemberId.code()
            }
        } else {
            match group.check(&request.member_id, generation, Instant::now()) {
                Err(code) => code,
                Ok(()) if group.state == GroupState::CompletingRebalance => {
                    ResponseError::RebalanceInProgress.code()
                }
                Ok(()) => 0,
            }
        }
    };
    let asked: Vec<(String, i32, i64)> = request
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (t.name.0.to_string(), p.partition_index, p.committed_offset))
        })
        .collect();
    // As Kafka: a partition of no topic is refused on its own, whatever the group says, and
    // never committed (a topic created later would start past records nobody read).
    let b = Arc::clone(broker);
    let (positions, refused) = blocking(move || known_partitions(&b, asked)).await;
    if code == 0 && name.is_empty() {
        code = ResponseError::InvalidGroupId.code();
    }
    if code == 0 {
        let (b, e, n, p) = (
            Arc::clone(broker),
            Arc::clone(&entry),
            name.clone(),
            positions,
        );
        code = blocking(move || write(&b, &e, &n, &p, admin)).await;
    }
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let refused = refused.get(&(t.name.0.to_string(), p.partition_index));
                    OffsetCommitResponsePartition::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(refused.copied().unwrap_or(code))
                })
                .collect();
            OffsetCommitResponseTopic::default()
                .with_name(t.name.clone())
                .with_partitions(partitions)
        })
        .collect();
    Some(OffsetCommitResponse::default().with_topics(topics))
}

/// The asked positions of partitions that exist, and the error code of each (topic, index)
/// pair refused: UNKNOWN_TOPIC_OR_PARTITION, or the storage error that kept its topic from
/// being looked up (logged).
fn known_partitions(
    broker: &Broker,
    asked: Vec<(String, i32, i64)>,
) -> (BTreeMap<TopicPartition, i64>, HashMap<TopicPartition, i16>) {
    let mut partitions: HashMap<String, Result<Option<u32>, i16>> = HashMap::new();
    let mut known = BTreeMap::new();
    let mut refused = HashMap::new();
    for (topic, index, offset) in asked {
        let count = *partitions.entry(topic.clone()).or_insert_with(|| {
            broker
                .topic(&topic)
                .map(|m| m.map(|m| m.partitions))
                .map_err(|e| {
                    broker.log.warn(&format!(
                        "Cannot look up topic {topic} for an offset commit: {e}"
                    ));
                    error_code(&e)
                })
        });
        let exists = count.map(|n| {
            u32::try_from(index)
                .ok()
                .is_some_and(|p| n.is_some_and(|n| p < n))
        });
        match exists {
            Ok(true) => {
                known.insert((topic, index), offset);
            }
            Ok(false) => {
                refused.insert(
                    (topic, index),
                    ResponseError::UnknownTopicOrPartition.code(),
                );
            }
            Err(code) => {
                refused.insert((topic, index), code);
            }
        }
    }
    (known, refused)
}

/// Writes the offsets; the error code for every partition.
fn write(
    broker: &Broker,
    entry: &Entry,
    name: &str,
    positions: &BTreeMap<TopicPartition, i64>,
    admin: bool,
) -> i16 {
    let store = &broker.groups.store;
    let result = if admin {
        store.reset_offsets(name, positions)
    } else {
        let mut standin = entry.standin();
        let mut result = match standin.as_mut() {
            Some(m) => m.commit_any(positions),
            None => Err(LocalError::MemberFenced {
                group: name.to_string(),
                member_id: String::new(),
            }),
        };
        // The stand-in was evicted (the server stalled past its session timeout): it joins
        // again, unless `--log-dir` members took the group meanwhile.
        if let Err(LocalError::MemberFenced { .. }) = result {
            *standin = None;
            result = Entry::ensure_standin(&mut standin, store, name)
                .and_then(|()| standin.as_mut().map_or(Ok(()), |m| m.commit_any(positions)));
        }
        result
    };
    match result {
        Ok(()) => 0,
        Err(LocalError::GroupNotEmpty { .. }) => {
            broker.log.warn(&format!(
                "Refused an offset reset of group {name}: it has live consumers using --log-dir"
            ));
            ResponseError::UnknownMemberId.code()
        }
        Err(e) => {
            broker
                .log
                .warn(&format!("Cannot commit offsets of group {name}: {e}"));
            error_code(&e)
        }
    }
}

/// A topic's partitions with their committed offset and leader epoch (-1 when none).
type Found = Vec<(String, Vec<(i32, i64, i32)>)>;

/// Requested topics and partitions; `None` for all committed ones.
type Wanted = Option<Vec<(String, Vec<i32>)>>;

/// The committed offset of each wanted partition (-1 when none).
fn lookup(committed: &BTreeMap<TopicPartition, CommittedOffset>, wanted: Wanted) -> Found {
    let wanted = wanted.unwrap_or_else(|| {
        let mut all: BTreeMap<String, Vec<i32>> = BTreeMap::new();
        for (t, p) in committed.keys() {
            all.entry(t.clone()).or_default().push(*p);
        }
        all.into_iter().collect()
    });
    wanted
        .into_iter()
        .map(|(topic, partitions)| {
            let found = partitions
                .into_iter()
                .map(|p| {
                    let c = committed.get(&(topic.clone(), p));
                    let epoch = c.and_then(|c| c.leader_epoch).unwrap_or(-1);
                    (p, c.map_or(-1, |c| c.offset), epoch)
                })
                .collect();
            (topic, found)
        })
        .collect()
}

pub async fn fetch(
    broker: &Arc<Broker>,
    version: i16,
    request: OffsetFetchRequest,
) -> Option<OffsetFetchResponse> {
    let store = broker.groups.store.clone();
    // Offsets of an open transaction are not answered while it is open: the consumer waits
    // (Kafka's UNSTABLE_OFFSET_COMMIT, for clients that ask for stable offsets).
    let b = Arc::clone(broker);
    let require_stable = request.require_stable;
    let unstable = move |group: &str, topic: &str, p: i32| {
        require_stable && b.txns.has_pending_offset(group, topic, p)
    };
    if version >= 8 {
        let groups = blocking(move || {
            request
                .groups
                .into_iter()
                .map(|g| {
                    let wanted = g.topics.map(|ts| {
                        ts.into_iter()
                            .map(|t| (t.name.0.to_string(), t.partition_indexes))
                            .collect()
                    });
                    group_offsets(&store, g.group_id, wanted, &unstable)
                })
                .collect()
        })
        .await;
        return Some(OffsetFetchResponse::default().with_groups(groups));
    }
    let wanted: Wanted = request.topics.map(|ts| {
        ts.into_iter()
            .map(|t| (t.name.0.to_string(), t.partition_indexes))
            .collect()
    });
    let group = request.group_id.0.to_string();
    let g = group.clone();
    let (topics, code) = blocking(move || match store.committed(&g) {
        Ok(committed) => (lookup(&committed, wanted), 0),
        Err(e) => (Vec::new(), error_code(&e)),
    })
    .await;
    let topics = topics
        .into_iter()
        .map(|(topic, partitions)| {
            let partitions = partitions
                .into_iter()
                .map(|(p, offset, epoch)| {
                    let response = OffsetFetchResponsePartition::default()
                        .with_partition_index(p)
                        .with_committed_offset(offset)
                        .with_committed_leader_epoch(if version >= 5 { epoch } else { -1 })
                        .with_metadata(Some(str_bytes("")));
                    match unstable(&group, &topic, p) {
                        true => response
                            .with_committed_offset(-1)
                            .with_error_code(ResponseError::UnstableOffsetCommit.code()),
                        false => response,
                    }
                })
                .collect();
            OffsetFetchResponseTopic::default()
                .with_name(TopicName(str_bytes(topic)))
                .with_partitions(partitions)
        })
        .collect();
    let response = OffsetFetchResponse::default().with_topics(topics);
    // The top-level error code exists from v2.
    Some(if version >= 2 {
        response.with_error_code(code)
    } else {
        response
    })
}

/// One group of a v8+ OffsetFetch.
fn group_offsets(
    store: &crate::local::group::GroupStore,
    id: GroupId,
    wanted: Wanted,
    unstable: &dyn Fn(&str, &str, i32) -> bool,
) -> OffsetFetchResponseGroup {
    let response = OffsetFetchResponseGroup::default().with_group_id(id.clone());
    let committed = match store.committed(&id.0) {
        Ok(committed) => committed,
        Err(e) => return response.with_error_code(error_code(&e)),
    };
    let topics = lookup(&committed, wanted)
        .into_iter()
        .map(|(topic, partitions)| {
            let partitions = partitions
                .into_iter()
                .map(|(p, offset, epoch)| {
                    let response = OffsetFetchResponsePartitions::default()
                        .with_partition_index(p)
                        .with_committed_offset(offset)
                        .with_committed_leader_epoch(epoch)
                        .with_metadata(Some(str_bytes("")));
                    match unstable(&id.0, &topic, p) {
                        true => response
                            .with_committed_offset(-1)
                            .with_error_code(ResponseError::UnstableOffsetCommit.code()),
                        false => response,
                    }
                })
                .collect();
            OffsetFetchResponseTopics::default()
                .with_name(TopicName(str_bytes(topic)))
                .with_partitions(partitions)
        })
        .collect();
    response.with_topics(topics)
}

/// The topics a consumer's subscription metadata names (empty if it is not a consumer's).
pub fn subscribed_topics(metadata: &[u8]) -> Vec<String> {
    consumer_protocol::decode_subscription(metadata)
        .map(|s| s.topics.into_iter().map(|t| t.to_string()).collect())
        .unwrap_or_default()
}

/// The partitions a classic consumer's assignment bytes give it (empty if they are not a
/// consumer's).
pub fn assigned_partitions(assignment: &[u8]) -> Vec<TopicPartition> {
    let Ok(assignment) = consumer_protocol::decode_assignment(assignment) else {
        return Vec::new();
    };
    assignment
        .assigned_partitions
        .into_iter()
        .flat_map(|t| {
            let topic = t.topic.to_string();
            t.partitions
                .into_iter()
                .filter(|&p| p >= 0)
                .map(move |p| (topic.clone(), p))
        })
        .collect()
}

pub async fn delete(
    broker: &Arc<Broker>,
    _: i16,
    request: OffsetDeleteRequest,
) -> Option<OffsetDeleteResponse> {
    let name = request.group_id.0.to_string();
    // Topics the networked members subscribe to keep their offsets.
    let subscribed: BTreeSet<String> =
        broker
            .groups
            .existing(&name)
            .map_or_else(BTreeSet::new, |entry| {
                let group = entry.group();
                group
                    .members
                    .values()
                    .flat_map(|m| subscribed_topics(&group.metadata(m)))
                    .collect()
            });
    let asked: Vec<TopicPartition> = request
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .filter(|p| p.partition_index >= 0)
                .map(|p| (t.name.0.to_string(), p.partition_index))
        })
        .collect();
    let (mine, theirs): (Vec<_>, Vec<_>) =
        asked.into_iter().partition(|(t, _)| subscribed.contains(t));
    let store = broker.groups.store.clone();
    let n = name.clone();
    let result = blocking(move || store.delete_offsets(&n, &theirs)).await;
    let mut codes: BTreeMap<TopicPartition, i16> = mine
        .into_iter()
        .map(|tp| (tp, ResponseError::GroupSubscribedToTopic.code()))
        .collect();
    match result {
        Ok(results) => {
            for (tp, r) in results {
                let code = if r.is_ok() {
                    0
                } else {
                    ResponseError::GroupSubscribedToTopic.code()
                };
                codes.insert(tp, code);
            }
        }
        Err(LocalError::GroupNotFound(_)) => {
            let code = ResponseError::GroupIdNotFound.code();
            return Some(OffsetDeleteResponse::default().with_error_code(code));
        }
        Err(e) => {
            let code = error_code(&e);
            return Some(OffsetDeleteResponse::default().with_error_code(code));
        }
    }
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    // A negative index was never asked: UNKNOWN_TOPIC_OR_PARTITION, as Kafka.
                    let key = (t.name.0.to_string(), p.partition_index);
                    let code = codes
                        .get(&key)
                        .copied()
                        .unwrap_or(ResponseError::UnknownTopicOrPartition.code());
                    OffsetDeleteResponsePartition::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(code)
                })
                .collect();
            OffsetDeleteResponseTopic::default()
                .with_name(t.name.clone())
                .with_partitions(partitions)
        })
        .collect();
    Some(OffsetDeleteResponse::default().with_topics(topics))
}
