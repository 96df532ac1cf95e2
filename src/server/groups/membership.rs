//! Heartbeat and LeaveGroup: a member says it is alive (and learns of a rebalance), or leaves,
//! so that the others rebalance at once instead of after its session timeout.

use std::sync::Arc;
use std::time::Instant;

use kafka_protocol::ResponseError;
use kafka_protocol::messages::leave_group_response::MemberResponse;
use kafka_protocol::messages::{
    HeartbeatRequest, HeartbeatResponse, LeaveGroupRequest, LeaveGroupResponse,
};

use crate::server::broker::Broker;
use crate::server::handlers::{blocking, str_bytes};

pub async fn heartbeat(
    broker: &Arc<Broker>,
    _: i16,
    request: HeartbeatRequest,
) -> Option<HeartbeatResponse> {
    let code = match broker.groups.existing(&request.group_id.0) {
        Some(entry) => {
            entry
                .group()
                .heartbeat(&request.member_id, request.generation_id, Instant::now())
        }
        None => ResponseError::UnknownMemberId.code(),
    };
    Some(HeartbeatResponse::default().with_error_code(code))
}

pub async fn leave_group(
    broker: &Arc<Broker>,
    version: i16,
    request: LeaveGroupRequest,
) -> Option<LeaveGroupResponse> {
    let name = request.group_id.0.to_string();
    // v3+ leaves a batch of members; before, one.
    let leaving: Vec<String> = if version >= 3 {
        request
            .members
            .iter()
            .map(|m| m.member_id.to_string())
            .collect()
    } else {
        vec![request.member_id.to_string()]
    };
    let Some(entry) = broker.groups.existing(&name) else {
        let code = ResponseError::UnknownMemberId.code();
        return Some(LeaveGroupResponse::default().with_error_code(code));
    };
    let results: Vec<(String, i16)> = {
        let mut group = entry.group();
        let results = leaving
            .iter()
            .map(|id| {
                let known = group.members.contains_key(id);
                (
                    id.clone(),
                    if known {
                        0
                    } else {
                        ResponseError::UnknownMemberId.code()
                    },
                )
            })
            .collect();
        group.remove(&leaving, Instant::now());
        results
    };
    entry.notify();
    broker.log.info(&format!(
        "Member(s) {} left group {name}",
        leaving.join(", ")
    ));
    let (e, log) = (Arc::clone(&entry), broker.log.clone());
    blocking(move || {
        if let Err(err) = e.release_standin_if_empty() {
            log.warn(&format!(
                "Group {name}: cannot leave the group store: {err}"
            ));
        }
    })
    .await;
    let response = LeaveGroupResponse::default();
    if version >= 3 {
        let members = results
            .into_iter()
            .map(|(id, code)| {
                MemberResponse::default()
                    .with_member_id(str_bytes(id))
                    .with_error_code(code)
            })
            .collect();
        Some(response.with_members(members))
    } else {
        Some(response.with_error_code(results.first().map_or(0, |r| r.1)))
    }
}
