//! ShareFetch and ShareAcknowledge: a share session per member (epoch 0 opens it, then 1, 2,
//! ...; -1 closes it and releases what the member holds); acknowledgements are applied before
//! records are acquired, and acquisitions are answered with the whole batches that hold them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::ResponseError;
use kafka_protocol::messages::share_acknowledge_response::{
    PartitionData as AckPartitionData, ShareAcknowledgeTopicResponse,
};
use kafka_protocol::messages::share_fetch_response::{
    AcquiredRecords, PartitionData, ShareFetchableTopicResponse,
};
use kafka_protocol::messages::*;

use crate::kafka::share::{AckRun, AcknowledgeType, Acquired};
use crate::local::LocalError;
use crate::local::share::{ShareMember, SharePartitionExchange};
use crate::server::broker::Broker;
use crate::server::dispatch::client;
use crate::server::handlers::{blocking, error_code, str_bytes, topic_uuid};

use super::{MAX_GROUP_MEMBERS, Served, UNKNOWN_MEMBER_ID, lock, topics_by_id};

/// How often a waiting ShareFetch looks for records again.
const FETCH_POLL: Duration = Duration::from_millis(50);
/// The most record bytes one ShareFetch partition answer holds (beyond its first batch).
const MAX_PARTITION_BYTES: usize = 8 << 20;
/// Kafka's error codes only these APIs answer with.
const INVALID_RECORD_STATE: i16 = 121;
const SHARE_SESSION_NOT_FOUND: i16 = 122;
const INVALID_SHARE_SESSION_EPOCH: i16 = 123;
const UNKNOWN_TOPIC_ID: i16 = 100;

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
