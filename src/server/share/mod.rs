//! Share groups (KIP-932) served to networked clients, over the embedded log's share-group files
//! (`local::share`): each networked member is a member of the log dir's group like any
//! `kafka-console-share-consumer --log-dir` process, so both kinds split the same records.
//!
//! - ShareGroupHeartbeat: a member joins at epoch 0 (its id is its own), and is assigned every
//!   partition of its subscribed topics (the group's state says which records it gets); its
//!   epoch moves up when that assignment changes. Leaving (epoch -1) or a session timeout
//!   (45 s without a heartbeat) gives its records back.
//!   This module holds the members (`ShareGroups`) and the heartbeat.
//! - [`fetch`]: ShareFetch and ShareAcknowledge, with a share session per member.
//! - [`admin`]: ShareGroupDescribe, DescribeShareGroupOffsets, AlterShareGroupOffsets and
//!   DeleteShareGroupOffsets, answered from the group's files.

mod admin;
mod fetch;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kafka_protocol::ResponseError;
use kafka_protocol::messages::share_group_heartbeat_response::{Assignment, TopicPartitions};
use kafka_protocol::messages::*;

use crate::local::share::ShareMember;
use crate::local::{LocalError, LogDir, TopicMeta};
use crate::server::broker::Broker;
use crate::server::dispatch::client;
use crate::server::handlers::{blocking, error_code, str_bytes, topic_uuid};

pub use admin::{alter_offsets, delete_offsets, describe, describe_offsets};
pub use fetch::{acknowledge, fetch};

/// How often members are told to heartbeat (Kafka's `group.share.heartbeat.interval.ms`).
const HEARTBEAT_INTERVAL_MS: i32 = 5_000;
/// A member silent this long is removed (Kafka's `group.share.session.timeout.ms`).
const SESSION_TIMEOUT: Duration = Duration::from_secs(45);
/// The most members of one share group (Kafka's `group.share.max.size`): each networked
/// member has a member file, so a client cannot make the server keep any number of them.
const MAX_GROUP_MEMBERS: usize = 200;
/// Kafka's error codes the share APIs answer with.
const GROUP_MAX_SIZE_REACHED: i16 = 81;
const UNKNOWN_MEMBER_ID: i16 = 25;
const FENCED_MEMBER_EPOCH: i16 = 110;

/// A partition by topic name.
type Partition = (String, i32);
/// A networked member by group and member id.
type Members = HashMap<(String, String), Arc<Mutex<Served>>>;

/// The networked members of every share group.
#[derive(Debug, Default)]
pub struct ShareGroups {
    members: Mutex<Members>,
}

/// One networked member.
#[derive(Debug)]
struct Served {
    /// Its membership of the log dir's group (its member file, its exchanges); `None` once it
    /// left.
    member: Option<ShareMember>,
    epoch: i32,
    topics: Vec<String>,
    /// Its partitions, by topic name.
    assignment: BTreeMap<String, Vec<i32>>,
    last_heartbeat: Instant,
    /// The epoch its next share-session request must carry (`None`: no session open).
    session: Option<i32>,
    /// The partitions of its share session.
    session_partitions: BTreeSet<Partition>,
}

impl ShareGroups {
    fn get(&self, group: &str, member: &str) -> Option<Arc<Mutex<Served>>> {
        let members = self.members.lock().unwrap_or_else(|p| p.into_inner());
        members
            .get(&(group.to_string(), member.to_string()))
            .cloned()
    }

    fn insert(&self, group: &str, member: &str, served: Served) -> Arc<Mutex<Served>> {
        let served = Arc::new(Mutex::new(served));
        let mut members = self.members.lock().unwrap_or_else(|p| p.into_inner());
        members.insert((group.to_string(), member.to_string()), Arc::clone(&served));
        served
    }

    /// Whether `group` has room for one more networked member.
    fn has_room(&self, group: &str) -> bool {
        let members = self.members.lock().unwrap_or_else(|p| p.into_inner());
        members.keys().filter(|(g, _)| g == group).count() < MAX_GROUP_MEMBERS
    }

    fn remove(&self, group: &str, member: &str) -> Option<Arc<Mutex<Served>>> {
        let mut members = self.members.lock().unwrap_or_else(|p| p.into_inner());
        members.remove(&(group.to_string(), member.to_string()))
    }

    /// The networked members' epochs in `group`, by member id.
    fn epochs(&self, group: &str) -> HashMap<String, i32> {
        let members = self.members.lock().unwrap_or_else(|p| p.into_inner());
        members
            .iter()
            .filter(|((g, _), _)| g == group)
            .map(|((_, m), s)| (m.clone(), lock(s).epoch))
            .collect()
    }

    /// Removes the members whose session timed out, giving their records back.
    pub fn expire(&self, dir: &LogDir) {
        let expired: Vec<Arc<Mutex<Served>>> = {
            let mut members = self.members.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let gone: Vec<(String, String)> = members
                .iter()
                .filter(|(_, s)| now.duration_since(lock(s).last_heartbeat) >= SESSION_TIMEOUT)
                .map(|(k, _)| k.clone())
                .collect();
            gone.iter().filter_map(|k| members.remove(k)).collect()
        };
        for served in expired {
            leave(dir, &served);
        }
    }
}

fn lock(served: &Mutex<Served>) -> std::sync::MutexGuard<'_, Served> {
    served.lock().unwrap_or_else(|p| p.into_inner())
}

/// The member leaves the log dir's group: its records go back.
fn leave(dir: &LogDir, served: &Mutex<Served>) {
    if let Some(member) = lock(served).member.take() {
        let _ = member.leave(dir, Vec::new());
    }
}

/// The topics of the log dir by wire id.
fn topics_by_id(dir: &LogDir) -> Result<HashMap<uuid::Uuid, TopicMeta>, LocalError> {
    let mut out = HashMap::new();
    for name in dir.topic_names()? {
        if let Some(meta) = dir.topic(&name)? {
            out.insert(topic_uuid(&meta.id), meta);
        }
    }
    Ok(out)
}

/// The wire id of topic `name` (the zero id when it does not exist).
fn wire_topic_id(dir: &LogDir, name: &str) -> uuid::Uuid {
    dir.topic(name)
        .ok()
        .flatten()
        .map_or_else(uuid::Uuid::default, |m| topic_uuid(&m.id))
}

/// Every partition of the subscribed topics that exist.
fn assignment_of(dir: &LogDir, topics: &[String]) -> BTreeMap<String, Vec<i32>> {
    topics
        .iter()
        .filter_map(|t| dir.topic(t).ok().flatten())
        .map(|meta| (meta.name.clone(), (0..meta.partitions as i32).collect()))
        .collect()
}

fn heartbeat_error(code: i16, message: &str) -> ShareGroupHeartbeatResponse {
    ShareGroupHeartbeatResponse::default()
        .with_error_code(code)
        .with_error_message(Some(str_bytes(message)))
}

pub async fn heartbeat(
    broker: &Arc<Broker>,
    _: i16,
    request: ShareGroupHeartbeatRequest,
) -> Option<ShareGroupHeartbeatResponse> {
    let group = request.group_id.0.to_string();
    let member_id = request.member_id.to_string();
    let epoch = request.member_epoch;
    let invalid = ResponseError::InvalidRequest.code();
    if group.is_empty() {
        return Some(heartbeat_error(invalid, "GroupId can't be empty."));
    }
    if member_id.is_empty() || member_id.len() > 36 {
        return Some(heartbeat_error(
            invalid,
            "Invalid member id in the request.",
        ));
    }
    if epoch < -1 {
        return Some(heartbeat_error(invalid, "MemberEpoch is invalid."));
    }
    let topics: Option<Vec<String>> = request
        .subscribed_topic_names
        .map(|ts| ts.into_iter().map(|t| t.0.to_string()).collect());
    let b = Arc::clone(broker);
    let who = client();
    let response = blocking(move || {
        let dir = &b.dir;
        let groups = &b.shares;
        if epoch == -1 {
            if let Some(served) = groups.remove(&group, &member_id) {
                leave(dir, &served);
            }
            return ShareGroupHeartbeatResponse::default()
                .with_member_id(Some(str_bytes(member_id)))
                .with_member_epoch(-1);
        }
        if epoch == 0 {
            let Some(topics) = topics.filter(|t| !t.is_empty()) else {
                return heartbeat_error(invalid, "SubscribedTopicNames must be set in first request.");
            };
            // A member the server knows (fenced, or one that fetched before its first heartbeat
            // after a restart) joins again as itself: the records it holds stay its own.
            if let Some(known) = groups.get(&group, &member_id) {
                let mut s = lock(&known);
                if s.member.is_some() {
                    let assignment = assignment_of(dir, &topics);
                    s.epoch += 1;
                    s.topics = topics;
                    s.assignment = assignment.clone();
                    s.last_heartbeat = Instant::now();
                    return answer(dir, &member_id, s.epoch, Some(&assignment));
                }
                drop(s);
                groups.remove(&group, &member_id);
            }
            if !groups.has_room(&group) {
                return heartbeat_error(
                    GROUP_MAX_SIZE_REACHED,
                    &format!("The share group has reached its maximum size of {MAX_GROUP_MEMBERS}."),
                );
            }
            let member = match ShareMember::join(
                dir.root(),
                &group,
                &member_id,
                (&who.client_id, &who.host),
                &topics,
            ) {
                Ok(m) => m,
                Err(e) => return heartbeat_error(error_code(&e), &e.to_string()),
            };
            let assignment = assignment_of(dir, &topics);
            groups.insert(
                &group,
                &member_id,
                Served {
                    member: Some(member),
                    epoch: 1,
                    topics,
                    assignment: assignment.clone(),
                    last_heartbeat: Instant::now(),
                    session: None,
                    session_partitions: BTreeSet::new(),
                },
            );
            return answer(dir, &member_id, 1, Some(&assignment));
        }
        let Some(served) = groups.get(&group, &member_id) else {
            return heartbeat_error(UNKNOWN_MEMBER_ID, &format!("Member {member_id} is not a member of group {group}."));
        };
        let mut s = lock(&served);
        if epoch != s.epoch && epoch != s.epoch - 1 {
            return heartbeat_error(FENCED_MEMBER_EPOCH, "The share group member has a smaller member epoch than the one known by the group coordinator.");
        }
        s.last_heartbeat = Instant::now();
        if let Some(topics) = topics.filter(|t| !t.is_empty()) {
            s.topics = topics;
        }
        let assignment = assignment_of(dir, &s.topics);
        if assignment != s.assignment {
            s.assignment = assignment.clone();
            s.epoch += 1;
            return answer(dir, &member_id, s.epoch, Some(&assignment));
        }
        answer(dir, &member_id, s.epoch, None)
    })
    .await;
    Some(response)
}

fn answer(
    dir: &LogDir,
    member_id: &str,
    epoch: i32,
    assignment: Option<&BTreeMap<String, Vec<i32>>>,
) -> ShareGroupHeartbeatResponse {
    let assignment = assignment.map(|a| {
        Assignment::default().with_topic_partitions(
            a.iter()
                .filter_map(|(t, ps)| {
                    let meta = dir.topic(t).ok().flatten()?;
                    Some(
                        TopicPartitions::default()
                            .with_topic_id(topic_uuid(&meta.id))
                            .with_partitions(ps.clone()),
                    )
                })
                .collect(),
        )
    });
    ShareGroupHeartbeatResponse::default()
        .with_member_id(Some(str_bytes(member_id)))
        .with_member_epoch(epoch)
        .with_heartbeat_interval_ms(HEARTBEAT_INTERVAL_MS)
        .with_assignment(assignment)
}
