//! JoinGroup and SyncGroup: the two requests of a rebalance that wait for the other members,
//! JoinGroup until every member has joined the round (or its rebalance timeout passed), a
//! follower's SyncGroup until the leader has sent the assignments.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_protocol::ResponseError;
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::{
    JoinGroupRequest, JoinGroupResponse, SyncGroupRequest, SyncGroupResponse,
};

use super::Entry;
use super::group::{Group, JoinRequest, Joined};
use crate::kafka::groups::GroupState;
use crate::server::broker::Broker;
use crate::server::handlers::{blocking, str_bytes};

/// Kafka's bounds for `session.timeout.ms` (group.min/max.session.timeout.ms).
const SESSION_TIMEOUT_MS: std::ops::RangeInclusive<i32> = 6_000..=1_800_000;

pub async fn join_group(
    broker: &Arc<Broker>,
    version: i16,
    request: JoinGroupRequest,
) -> Option<JoinGroupResponse> {
    let fail = |code: i16| Some(join_error(version, code));
    let name = request.group_id.0.to_string();
    if name.is_empty() {
        return fail(ResponseError::InvalidGroupId.code());
    }
    if !SESSION_TIMEOUT_MS.contains(&request.session_timeout_ms) {
        return fail(ResponseError::InvalidSessionTimeout.code());
    }
    let client = crate::server::dispatch::client();
    let req = JoinRequest {
        member_id: request.member_id.to_string(),
        client_id: client.client_id,
        host: client.host,
        instance_id: request.group_instance_id.as_ref().map(|s| s.to_string()),
        session_timeout: millis(request.session_timeout_ms),
        // v0 has no rebalance timeout: the session timeout serves as both.
        rebalance_timeout: millis(if version >= 1 {
            request.rebalance_timeout_ms
        } else {
            request.session_timeout_ms
        }),
        protocol_type: request.protocol_type.to_string(),
        protocols: request
            .protocols
            .iter()
            .map(|p| (p.name.to_string(), p.metadata.clone()))
            .collect(),
        require_member_id: version >= 4,
    };
    let entry = broker.groups.entry(&name);
    let (e, b) = (Arc::clone(&entry), Arc::clone(broker));
    let joined = blocking(move || step(&b, &e, &name, req)).await;
    let (member_id, round) = match joined {
        Ok(Joined::Waiting { member_id, round }) => (member_id, round),
        Ok(Joined::NeedsId(id)) => {
            return Some(
                join_error(version, ResponseError::MemberIdRequired.code())
                    .with_member_id(str_bytes(id)),
            );
        }
        Err(code) => return fail(code),
    };
    entry.notify();
    Some(await_round(&entry, version, &member_id, round).await)
}

/// Under the stand-in lock: the stand-in joins the group store if the group had no networked
/// member, then the member joins the group.
fn step(broker: &Broker, entry: &Entry, name: &str, req: JoinRequest) -> Result<Joined, i16> {
    let mut standin = entry.standin();
    if let Err(e) = Entry::ensure_standin(&mut standin, &broker.groups.store, name) {
        broker
            .log
            .warn(&format!("Refused a member of group {name}: {e}"));
        return Err(ResponseError::InconsistentGroupProtocol.code());
    }
    let mut group = entry.group();
    if !entry.consumer().members.is_empty() {
        broker.log.warn(&format!(
            "Refused a classic member of group {name}: its members use the consumer protocol"
        ));
        return Err(ResponseError::InconsistentGroupProtocol.code());
    }
    let result = group.join(req, Instant::now());
    let empty = group.members.is_empty();
    drop(group);
    // A refused first member leaves no stand-in behind.
    if empty && let Some(member) = standin.take() {
        let _ = member.leave(&Default::default());
    }
    result
}

/// Waits for the round to complete, ending it when its time is up, then answers.
async fn await_round(
    entry: &Entry,
    version: i16,
    member_id: &str,
    round: u64,
) -> JoinGroupResponse {
    let mut changed = entry.watch();
    loop {
        let deadline = {
            let mut group = entry.group();
            if group.rounds > round || group.try_complete(Instant::now()) {
                let response = join_response(&group, version, member_id);
                drop(group);
                entry.notify();
                return response;
            }
            group.deadline()
        };
        let deadline = deadline.unwrap_or_else(|| Instant::now() + Duration::from_secs(1));
        tokio::select! {
            _ = changed.changed() => {}
            () = tokio::time::sleep_until(deadline.into()) => {}
        }
    }
}

/// The JoinGroup answer of a member once its round completed: the leader gets every member's
/// metadata.
fn join_response(group: &Group, version: i16, member_id: &str) -> JoinGroupResponse {
    if !group.members.contains_key(member_id) {
        return join_error(version, ResponseError::UnknownMemberId.code());
    }
    let leader = group.leader.clone().unwrap_or_default();
    let members = if leader == member_id {
        group
            .members
            .iter()
            .map(|(id, m)| {
                let member = JoinGroupResponseMember::default()
                    .with_member_id(str_bytes(id.clone()))
                    .with_metadata(group.metadata(m));
                if version >= 5 {
                    member.with_group_instance_id(m.instance_id.clone().map(str_bytes))
                } else {
                    member
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let response = JoinGroupResponse::default()
        .with_generation_id(group.generation)
        .with_protocol_name(group.protocol.clone().map(str_bytes))
        .with_leader(str_bytes(leader))
        .with_member_id(str_bytes(member_id))
        .with_members(members);
    if version >= 7 {
        response.with_protocol_type(Some(str_bytes(group.protocol_type.clone())))
    } else {
        response
    }
}

fn join_error(version: i16, code: i16) -> JoinGroupResponse {
    let response = JoinGroupResponse::default()
        .with_error_code(code)
        .with_generation_id(-1);
    // Nullable from v7; an empty string before.
    if version >= 7 {
        response
    } else {
        response.with_protocol_name(Some(str_bytes("")))
    }
}

fn millis(ms: i32) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

pub async fn sync_group(
    broker: &Arc<Broker>,
    version: i16,
    request: SyncGroupRequest,
) -> Option<SyncGroupResponse> {
    let entry = broker.groups.entry(&request.group_id.0);
    let member_id = request.member_id.to_string();
    let generation = request.generation_id;
    let mut changed = entry.watch();
    {
        let mut group = entry.group();
        if let Err(code) = group.check(&member_id, generation, Instant::now()) {
            return Some(sync_response(&group, version, code, None));
        }
        match group.state {
            GroupState::PreparingRebalance | GroupState::Empty => {
                let code = ResponseError::RebalanceInProgress.code();
                return Some(sync_response(&group, version, code, None));
            }
            GroupState::CompletingRebalance if group.leader.as_deref() == Some(&member_id) => {
                let assignments: BTreeMap<_, _> = request
                    .assignments
                    .iter()
                    .map(|a| (a.member_id.to_string(), a.assignment.clone()))
                    .collect();
                group.assign(assignments);
                drop(group);
                entry.notify();
            }
            _ => {}
        }
    }
    // A follower waits for the leader's assignments (or for the next rebalance).
    loop {
        {
            let group = entry.group();
            if group.generation != generation || !group.members.contains_key(&member_id) {
                let code = ResponseError::RebalanceInProgress.code();
                return Some(sync_response(&group, version, code, None));
            }
            match group.state {
                GroupState::Stable => {
                    return Some(sync_response(&group, version, 0, Some(&member_id)));
                }
                GroupState::CompletingRebalance => {}
                _ => {
                    let code = ResponseError::RebalanceInProgress.code();
                    return Some(sync_response(&group, version, code, None));
                }
            }
        }
        let _ = changed.changed().await;
    }
}

fn sync_response(
    group: &Group,
    version: i16,
    code: i16,
    member_id: Option<&str>,
) -> SyncGroupResponse {
    let assignment = member_id
        .and_then(|id| group.members.get(id))
        .map(|m| m.assignment.clone())
        .unwrap_or_default();
    let response = SyncGroupResponse::default()
        .with_error_code(code)
        .with_assignment(assignment);
    if version >= 5 && code == 0 {
        response
            .with_protocol_type(Some(str_bytes(group.protocol_type.clone())))
            .with_protocol_name(group.protocol.clone().map(str_bytes))
    } else {
        response
    }
}
