//! Share groups (KIP-932) served to networked clients, over the embedded log's share-group files
//! (`local::share`): each networked member is a member of the log dir's group like any
//! `kafka-console-share-consumer --log-dir` process, so both kinds split the same records.
//!
//! - ShareGroupHeartbeat: a member joins at epoch 0 (its id is its own), and is assigned every
//!   partition of its subscribed topics (the group's state says which records it gets); its
//!   epoch moves up when that assignment changes. Leaving (epoch -1) or a session timeout
//!   (45 s without a heartbeat) gives its records back.
//! - ShareFetch and ShareAcknowledge: a share session per member (epoch 0 opens it, then 1, 2,
//!   ...; -1 closes it and releases what the member holds), acknowledgements applied before
//!   records are acquired, acquisitions answered with the whole batches that hold them.
//! - The admin APIs (ShareGroupDescribe, DescribeShareGroupOffsets, AlterShareGroupOffsets,
//!   DeleteShareGroupOffsets) answer from the group's files.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::ResponseError;
use kafka_protocol::messages::alter_share_group_offsets_response::{
    AlterShareGroupOffsetsResponsePartition, AlterShareGroupOffsetsResponseTopic,
};
use kafka_protocol::messages::delete_share_group_offsets_response::DeleteShareGroupOffsetsResponseTopic;
use kafka_protocol::messages::describe_share_group_offsets_response::{
    DescribeShareGroupOffsetsResponseGroup, DescribeShareGroupOffsetsResponsePartition,
    DescribeShareGroupOffsetsResponseTopic,
};
use kafka_protocol::messages::share_acknowledge_response::{
    PartitionData as AckPartitionData, ShareAcknowledgeTopicResponse,
};
use kafka_protocol::messages::share_fetch_response::{
    AcquiredRecords, PartitionData, ShareFetchableTopicResponse,
};
use kafka_protocol::messages::share_group_describe_response::{
    Assignment as DescribedAssignment, DescribedGroup, Member,
    TopicPartitions as DescribedPartitions,
};
use kafka_protocol::messages::share_group_heartbeat_response::{Assignment, TopicPartitions};
use kafka_protocol::messages::*;

use super::broker::Broker;
use super::dispatch::client;
use super::handlers::{blocking, error_code, str_bytes, topic_uuid};
use crate::kafka::share::{AckRun, AcknowledgeType, Acquired};
use crate::local::share::{ShareMember, SharePartitionExchange, admin};
use crate::local::{LocalError, LogDir, TopicMeta};

/// How often members are told to heartbeat (Kafka's `group.share.heartbeat.interval.ms`).
const HEARTBEAT_INTERVAL_MS: i32 = 5_000;
/// A member silent this long is removed (Kafka's `group.share.session.timeout.ms`).
const SESSION_TIMEOUT: Duration = Duration::from_secs(45);
/// How often a waiting ShareFetch looks for records again.
const FETCH_POLL: Duration = Duration::from_millis(50);
/// The most record bytes one ShareFetch partition answer holds (beyond its first batch).
const MAX_PARTITION_BYTES: usize = 8 << 20;
/// The most members of one share group (Kafka's `group.share.max.size`): each networked
/// member has a member file, so a client cannot make the server keep any number of them.
const MAX_GROUP_MEMBERS: usize = 200;
/// Kafka's error codes the share APIs answer with.
const GROUP_MAX_SIZE_REACHED: i16 = 81;
const UNKNOWN_MEMBER_ID: i16 = 25;
const FENCED_MEMBER_EPOCH: i16 = 110;
const INVALID_RECORD_STATE: i16 = 121;
const SHARE_SESSION_NOT_FOUND: i16 = 122;
const INVALID_SHARE_SESSION_EPOCH: i16 = 123;
const UNKNOWN_TOPIC_ID: i16 = 100;

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

/// Acknowledgement batches of the wire as runs: one type for the whole range, or one per
/// offset. `None` when a batch is malformed (Kafka answers INVALID_REQUEST).
fn ack_runs<'a>(batches: impl Iterator<Item = (i64, i64, &'a [i8])>) -> Option<Vec<AckRun>> {
    let mut runs = Vec::new();
    let mut previous_last = i64::MIN;
    for (first, last, types) in batches {
        if first > last || first <= previous_last {
            return None;
        }
        previous_last = last;
        match types {
            [one] => runs.push((first, last, AcknowledgeType::from_code(*one)?)),
            many if many.len() as i64 == last - first + 1 => {
                for (offset, code) in (first..=last).zip(many) {
                    runs.push((offset, offset, AcknowledgeType::from_code(*code)?));
                }
            }
            _ => return None,
        }
    }
    Some(runs)
}

/// What the share-session epoch of a request allows.
enum SessionStep {
    /// Open a new session (epoch 0).
    Open,
    /// Go on in the open session.
    Next,
    /// Close the session after this request (epoch -1).
    Close,
}

/// Checks a request's session epoch against the member's session; the error code otherwise.
fn session_step(served: &Served, epoch: i32) -> Result<SessionStep, i16> {
    match (epoch, served.session) {
        (0, _) => Ok(SessionStep::Open),
        (-1, Some(_)) => Ok(SessionStep::Close),
        (_, None) => Err(SHARE_SESSION_NOT_FOUND),
        (e, Some(expected)) if e == expected => Ok(SessionStep::Next),
        _ => Err(INVALID_SHARE_SESSION_EPOCH),
    }
}

fn next_epoch(epoch: i32) -> i32 {
    if epoch == i32::MAX { 1 } else { epoch + 1 }
}

/// The member's entry, joining it to the group if the server does not know it (a fetch before
/// the first heartbeat, or after a restart of the server).
fn served_member(
    broker: &Broker,
    group: &str,
    member_id: &str,
) -> Result<Arc<Mutex<Served>>, LocalError> {
    if let Some(served) = broker.shares.get(group, member_id) {
        return Ok(served);
    }
    if !broker.shares.has_room(group) {
        return Err(LocalError::kafka(
            ResponseError::GroupMaxSizeReached,
            format!("The share group has reached its maximum size of {MAX_GROUP_MEMBERS}."),
        ));
    }
    let who = client();
    let member = ShareMember::join(
        broker.dir.root(),
        group,
        member_id,
        (&who.client_id, &who.host),
        &[],
    )?;
    Ok(broker.shares.insert(
        group,
        member_id,
        Served {
            member: Some(member),
            epoch: 0,
            topics: Vec::new(),
            assignment: BTreeMap::new(),
            last_heartbeat: Instant::now(),
            session: None,
            session_partitions: BTreeSet::new(),
        },
    ))
}

/// One partition's outcome in a ShareFetch.
struct Fetched {
    error: i16,
    ack_error: i16,
    records: Option<Bytes>,
    acquired: Vec<Acquired>,
}

pub async fn fetch(
    broker: &Arc<Broker>,
    _: i16,
    request: ShareFetchRequest,
) -> Option<ShareFetchResponse> {
    let (Some(group), Some(member_id)) = (request.group_id.clone(), request.member_id.clone())
    else {
        return Some(
            ShareFetchResponse::default()
                .with_error_code(ResponseError::InvalidRequest.code())
                .with_error_message(Some(str_bytes("GroupId and MemberId are required."))),
        );
    };
    let (group, member_id) = (group.0.to_string(), member_id.to_string());
    let deadline = Instant::now() + Duration::from_millis(request.max_wait_ms.max(0) as u64);
    let mut appended = broker.appended();
    let mut first = true;
    loop {
        let b = Arc::clone(broker);
        let (g, m, r, with_acks) = (group.clone(), member_id.clone(), request.clone(), first);
        let round = blocking(move || fetch_round(&b, &g, &m, &r, with_acks)).await;
        let (response, got, lock_ms) = match round {
            Ok(round) => round,
            Err(code) => return Some(ShareFetchResponse::default().with_error_code(code)),
        };
        first = false;
        let acked = request.topics.iter().any(|t| {
            t.partitions
                .iter()
                .any(|p| !p.acknowledgement_batches.is_empty())
        });
        if got || acked || request.share_session_epoch == -1 || Instant::now() >= deadline {
            return Some(response.with_acquisition_lock_timeout_ms(lock_ms));
        }
        let wait = deadline
            .saturating_duration_since(Instant::now())
            .min(FETCH_POLL);
        let _ = tokio::time::timeout(wait, appended.changed()).await;
    }
}

/// One exchange of a ShareFetch (its acknowledgements only the first time): the response,
/// whether records were acquired, and the lock duration.
fn fetch_round(
    broker: &Broker,
    group: &str,
    member_id: &str,
    request: &ShareFetchRequest,
    with_acks: bool,
) -> Result<(ShareFetchResponse, bool, i32), i16> {
    let served = served_member(broker, group, member_id).map_err(|e| error_code(&e))?;
    let mut s = lock(&served);
    let epoch = request.share_session_epoch;
    let step = if with_acks {
        session_step(&s, epoch)?
    } else {
        SessionStep::Next
    };
    let by_id = topics_by_id(&broker.dir).map_err(|e| error_code(&e))?;
    let has_acks = request.topics.iter().any(|t| {
        t.partitions
            .iter()
            .any(|p| !p.acknowledgement_batches.is_empty())
    });
    if with_acks {
        match step {
            SessionStep::Open if has_acks => return Err(ResponseError::InvalidRequest.code()),
            SessionStep::Open => {
                s.session_partitions.clear();
                s.session = Some(1);
            }
            SessionStep::Next => s.session = Some(next_epoch(epoch)),
            SessionStep::Close => {}
        }
        for t in &request.forgotten_topics_data {
            if let Some(meta) = by_id.get(&t.topic_id) {
                for p in &t.partitions {
                    s.session_partitions.remove(&(meta.name.clone(), *p));
                }
            }
        }
    }
    // The partitions of the request (with their acknowledgements), then the rest of the session.
    let mut outcome: BTreeMap<(uuid::Uuid, i32), Fetched> = BTreeMap::new();
    let mut exchanges: Vec<SharePartitionExchange> = Vec::new();
    let acquire = !matches!(step, SessionStep::Close) || !with_acks;
    for t in &request.topics {
        let Some(meta) = by_id.get(&t.topic_id) else {
            for p in &t.partitions {
                outcome.insert(
                    (t.topic_id, p.partition_index),
                    fetched_error(UNKNOWN_TOPIC_ID),
                );
            }
            continue;
        };
        for p in &t.partitions {
            if p.partition_index < 0 || p.partition_index as u32 >= meta.partitions {
                outcome.insert(
                    (t.topic_id, p.partition_index),
                    fetched_error(ResponseError::UnknownTopicOrPartition.code()),
                );
                continue;
            }
            s.session_partitions
                .insert((meta.name.clone(), p.partition_index));
            let mut e = SharePartitionExchange::new(&meta.name, p.partition_index, acquire);
            if with_acks {
                let batches = p.acknowledgement_batches.iter().map(|b| {
                    (
                        b.first_offset,
                        b.last_offset,
                        b.acknowledge_types.as_slice(),
                    )
                });
                match ack_runs(batches) {
                    Some(runs) => e.acks = runs,
                    None => {
                        outcome.insert(
                            (t.topic_id, p.partition_index),
                            Fetched {
                                ack_error: ResponseError::InvalidRequest.code(),
                                ..fetched_error(0)
                            },
                        );
                    }
                }
            }
            exchanges.push(e);
        }
    }
    if acquire {
        for (topic, partition) in s.session_partitions.clone() {
            if !exchanges
                .iter()
                .any(|e| e.topic == topic && e.partition == partition)
            {
                exchanges.push(SharePartitionExchange::new(&topic, partition, true));
            }
        }
    }
    let max_records = match request.max_records {
        n if n > 0 => n as usize,
        _ => 500,
    };
    let max_bytes = (request.max_bytes.max(0) as usize).min(MAX_PARTITION_BYTES);
    let member = s.member.as_mut().ok_or(UNKNOWN_MEMBER_ID)?;
    let exchange = member
        .exchange(&broker.dir, &mut exchanges, max_records)
        .map_err(|e| error_code(&e))?;
    let mut got = false;
    for e in exchanges.iter_mut() {
        let Some(meta) = broker.dir.topic(&e.topic).ok().flatten() else {
            continue;
        };
        let id = topic_uuid(&meta.id);
        let entry = outcome
            .entry((id, e.partition))
            .or_insert_with(|| fetched_error(0));
        if e.ack_error.is_some() {
            entry.ack_error = INVALID_RECORD_STATE;
        }
        if let Some((log, snapshot)) = e.log.take() {
            let last = e.acquired.last().map_or(-1, |r| r.last);
            let mut records = Vec::new();
            let mut buf = Vec::new();
            let mut next = e.acquired.first().map_or(0, |r| r.first);
            // Every acquired offset's batch goes out: the client takes an acquired offset
            // missing from the records for a gap.
            while next <= last && records.len() < max_bytes.max(1) {
                if log
                    .read_into_upto(&snapshot, next, 1 << 20, last + 1, &mut buf)
                    .is_err()
                    || buf.is_empty()
                {
                    break;
                }
                next = crate::record::BatchIter::new(&buf)
                    .filter_map(|b| b.ok())
                    .filter_map(|b| crate::record::BatchHeader::parse(b).ok())
                    .map(|h| h.next_offset())
                    .max()
                    .unwrap_or(last + 1);
                records.extend_from_slice(&buf);
            }
            got = true;
            entry.records = Some(Bytes::from(records));
            entry.acquired = std::mem::take(&mut e.acquired);
        }
    }
    if with_acks && matches!(step, SessionStep::Close) {
        let _ = member.release_all();
        s.session = None;
        s.session_partitions.clear();
    }
    let mut topics: BTreeMap<uuid::Uuid, Vec<PartitionData>> = BTreeMap::new();
    for ((id, partition), f) in outcome {
        topics.entry(id).or_default().push(
            PartitionData::default()
                .with_partition_index(partition)
                .with_error_code(f.error)
                .with_acknowledge_error_code(f.ack_error)
                // Never null: Kafka's schema makes the field non-nullable.
                .with_records(Some(f.records.unwrap_or_default()))
                .with_acquired_records(
                    f.acquired
                        .iter()
                        .map(|a| {
                            AcquiredRecords::default()
                                .with_first_offset(a.first)
                                .with_last_offset(a.last)
                                .with_delivery_count(a.delivery_count)
                        })
                        .collect(),
                ),
        );
    }
    let response = ShareFetchResponse::default().with_responses(
        topics
            .into_iter()
            .map(|(id, partitions)| {
                ShareFetchableTopicResponse::default()
                    .with_topic_id(id)
                    .with_partitions(partitions)
            })
            .collect(),
    );
    let lock_ms = exchange.lock_duration_ms.min(i32::MAX as i64) as i32;
    Ok((response, got, lock_ms))
}

fn fetched_error(code: i16) -> Fetched {
    Fetched {
        error: code,
        ack_error: 0,
        records: None,
        acquired: Vec::new(),
    }
}

pub async fn acknowledge(
    broker: &Arc<Broker>,
    _: i16,
    request: ShareAcknowledgeRequest,
) -> Option<ShareAcknowledgeResponse> {
    let b = Arc::clone(broker);
    let response = blocking(move || acknowledge_now(&b, &request)).await;
    Some(response)
}

fn acknowledge_now(broker: &Broker, request: &ShareAcknowledgeRequest) -> ShareAcknowledgeResponse {
    let refuse = |code: i16| ShareAcknowledgeResponse::default().with_error_code(code);
    let (Some(group), Some(member_id)) = (&request.group_id, &request.member_id) else {
        return refuse(ResponseError::InvalidRequest.code());
    };
    let Some(served) = broker.shares.get(&group.0, member_id) else {
        return refuse(SHARE_SESSION_NOT_FOUND);
    };
    let mut s = lock(&served);
    let epoch = request.share_session_epoch;
    let step = match session_step(&s, epoch) {
        Ok(SessionStep::Open) => return refuse(INVALID_SHARE_SESSION_EPOCH),
        Ok(step) => step,
        Err(code) => return refuse(code),
    };
    let by_id = match topics_by_id(&broker.dir) {
        Ok(t) => t,
        Err(e) => return refuse(error_code(&e)),
    };
    let mut codes: BTreeMap<(uuid::Uuid, i32), i16> = BTreeMap::new();
    let mut ids = Vec::new();
    let mut exchanges = Vec::new();
    for t in &request.topics {
        let Some(meta) = by_id.get(&t.topic_id) else {
            for p in &t.partitions {
                codes.insert((t.topic_id, p.partition_index), UNKNOWN_TOPIC_ID);
            }
            continue;
        };
        for p in &t.partitions {
            let batches = p.acknowledgement_batches.iter().map(|b| {
                (
                    b.first_offset,
                    b.last_offset,
                    b.acknowledge_types.as_slice(),
                )
            });
            let Some(runs) = ack_runs(batches) else {
                codes.insert(
                    (t.topic_id, p.partition_index),
                    ResponseError::InvalidRequest.code(),
                );
                continue;
            };
            let mut e = SharePartitionExchange::new(&meta.name, p.partition_index, false);
            e.acks = runs;
            ids.push(t.topic_id);
            exchanges.push(e);
        }
    }
    let Some(member) = s.member.as_mut() else {
        return refuse(UNKNOWN_MEMBER_ID);
    };
    if let Err(e) = member.exchange(&broker.dir, &mut exchanges, 0) {
        return refuse(error_code(&e));
    }
    for (id, e) in ids.iter().zip(&exchanges) {
        codes.insert(
            (*id, e.partition),
            if e.ack_error.is_some() {
                INVALID_RECORD_STATE
            } else {
                0
            },
        );
    }
    match step {
        SessionStep::Close => {
            let _ = member.release_all();
            s.session = None;
            s.session_partitions.clear();
        }
        _ => s.session = Some(next_epoch(epoch)),
    }
    let mut topics: BTreeMap<uuid::Uuid, Vec<AckPartitionData>> = BTreeMap::new();
    for ((id, partition), code) in codes {
        topics.entry(id).or_default().push(
            AckPartitionData::default()
                .with_partition_index(partition)
                .with_error_code(code),
        );
    }
    ShareAcknowledgeResponse::default().with_responses(
        topics
            .into_iter()
            .map(|(id, partitions)| {
                ShareAcknowledgeTopicResponse::default()
                    .with_topic_id(id)
                    .with_partitions(partitions)
            })
            .collect(),
    )
}

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
