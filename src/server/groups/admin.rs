//! FindCoordinator (this node, for groups; transactions are not served), ListGroups (groups of
//! both protocols), DescribeGroups (classic groups; ConsumerGroupDescribe is in
//! [`super::heartbeat`]) and DeleteGroups. Groups are listed and described from both sides: the
//! networked members the server holds, else the group store (`--log-dir` members and
//! committed offsets), so the Java admin tools see `--log-dir` groups too.

use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::ResponseError;
use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as AssignedPartition;
use kafka_protocol::messages::delete_groups_response::DeletableGroupResult;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::{
    BrokerId, ConsumerProtocolAssignment, ConsumerProtocolSubscription, DeleteGroupsRequest,
    DeleteGroupsResponse, DescribeGroupsRequest, DescribeGroupsResponse, FindCoordinatorRequest,
    FindCoordinatorResponse, GroupId, ListGroupsRequest, ListGroupsResponse, TopicName,
};

use crate::kafka::groups::GroupState;
use crate::local::LocalError;
use crate::local::group::{GroupDescription, GroupStore, TopicPartition};
use crate::server::broker::Broker;
use crate::server::handlers::{blocking, error_code, str_bytes};
use crate::wire::consumer_protocol;

const OTHER_KEYS: &str = "only groups and transactional ids have a coordinator here";

pub async fn find_coordinator(
    broker: &Arc<Broker>,
    version: i16,
    request: FindCoordinatorRequest,
) -> Option<FindCoordinatorResponse> {
    let (host, port) = broker.advertised.clone();
    let node = BrokerId(broker.config.node_id);
    // key type 0: a group; 1: a transactional id (this server coordinates both).
    let refused = !matches!(request.key_type, 0 | 1);
    let code = if refused {
        ResponseError::InvalidRequest.code()
    } else {
        0
    };
    let message = refused.then(|| str_bytes(OTHER_KEYS));
    if refused {
        broker.log.warn(&format!(
            "Refused FindCoordinator for key type {}: {OTHER_KEYS}",
            request.key_type
        ));
    }
    let response = FindCoordinatorResponse::default();
    if version >= 4 {
        let coordinators = request
            .coordinator_keys
            .into_iter()
            .map(|key| {
                let c = Coordinator::default()
                    .with_key(key)
                    .with_error_code(code)
                    .with_error_message(message.clone());
                if refused {
                    c.with_node_id(BrokerId(-1)).with_port(-1)
                } else {
                    c.with_node_id(node)
                        .with_host(str_bytes(host.clone()))
                        .with_port(i32::from(port))
                }
            })
            .collect();
        return Some(response.with_coordinators(coordinators));
    }
    let response = if refused {
        response.with_node_id(BrokerId(-1)).with_port(-1)
    } else {
        response
            .with_node_id(node)
            .with_host(str_bytes(host))
            .with_port(i32::from(port))
    };
    let response = response.with_error_code(code);
    Some(if version >= 1 {
        response.with_error_message(message)
    } else {
        response
    })
}

/// A group as listed: (id, (state, type)).
type Listed = Vec<(String, (GroupState, &'static str))>;

fn all_groups(broker: &Broker) -> Result<Listed, LocalError> {
    let mut groups: std::collections::BTreeMap<String, (GroupState, &'static str)> =
        Default::default();
    for (name, entry) in broker.groups.entries() {
        let group = entry.group();
        if !group.members.is_empty() {
            groups.insert(name.clone(), (group.state, "classic"));
        }
        drop(group);
        let consumer = entry.consumer();
        if !consumer.members.is_empty() {
            groups.insert(name, (consumer.state(), "consumer"));
        }
    }
    let store = &broker.groups.store;
    for name in store.list()? {
        if groups.contains_key(&name) {
            continue;
        }
        if let Some(d) = store.describe(&name)? {
            groups.insert(name, (d.state, "classic"));
        }
    }
    // Share groups: the log dir's (networked members and `--log-dir` ones alike).
    for (name, state) in crate::local::share::admin::list(&broker.dir)? {
        groups
            .entry(name)
            .or_insert((GroupState::parse(&state), "share"));
    }
    Ok(groups.into_iter().collect())
}

pub async fn list_groups(
    broker: &Arc<Broker>,
    version: i16,
    request: ListGroupsRequest,
) -> Option<ListGroupsResponse> {
    let b = Arc::clone(broker);
    let found = blocking(move || all_groups(&b)).await;
    let groups = match found {
        Ok(groups) => groups,
        Err(e) => {
            let code = error_code(&e);
            return Some(ListGroupsResponse::default().with_error_code(code));
        }
    };
    // Any case, as Kafka's coordinator compares them; a name of no state matches no group.
    let states: Vec<GroupState> = request
        .states_filter
        .iter()
        .map(|s| GroupState::parse(s))
        .collect();
    let types: Vec<String> = request
        .types_filter
        .iter()
        .map(|s| s.to_lowercase())
        .collect();
    let listed = groups
        .into_iter()
        .filter(|(_, (state, _))| states.is_empty() || states.contains(state))
        .filter(|(_, (_, kind))| types.is_empty() || types.iter().any(|t| t == kind))
        .map(|(id, (state, kind))| {
            let protocol = if kind == "share" { "share" } else { "consumer" };
            let g = ListedGroup::default()
                .with_group_id(GroupId(str_bytes(id)))
                .with_protocol_type(str_bytes(protocol));
            let g = if version >= 4 {
                g.with_group_state(str_bytes(state.name()))
            } else {
                g
            };
            if version >= 5 {
                g.with_group_type(str_bytes(kind))
            } else {
                g
            }
        })
        .collect();
    Some(ListGroupsResponse::default().with_groups(listed))
}

pub async fn describe_groups(
    broker: &Arc<Broker>,
    version: i16,
    request: DescribeGroupsRequest,
) -> Option<DescribeGroupsResponse> {
    let mut described = Vec::new();
    for id in request.groups {
        let networked = broker.groups.existing(&id.0).and_then(|entry| {
            let group = entry.group();
            (!group.members.is_empty()).then(|| networked_group(&group, id.clone(), version))
        });
        if let Some(g) = networked {
            described.push(g);
            continue;
        }
        if broker
            .groups
            .existing(&id.0)
            .is_some_and(|e| !e.consumer().members.is_empty())
        {
            described.push(not_classic(id, version));
            continue;
        }
        let store = broker.groups.store.clone();
        let name = id.0.to_string();
        let found = blocking(move || store.describe(&name)).await;
        described.push(match found {
            Ok(Some(d)) => local_group(&d, version),
            Ok(None) => missing_group(id, version),
            Err(e) => DescribedGroup::default()
                .with_group_id(id)
                .with_error_code(error_code(&e)),
        });
    }
    let described = described
        .into_iter()
        .map(|g| {
            if version >= 3 {
                g
            } else {
                g.with_authorized_operations(i32::MIN)
            }
        })
        .collect();
    Some(DescribeGroupsResponse::default().with_groups(described))
}

fn networked_group(group: &super::group::Group, id: GroupId, version: i16) -> DescribedGroup {
    let stable = group.state == GroupState::Stable;
    let members = group
        .members
        .iter()
        .map(|(mid, m)| {
            let member = DescribedGroupMember::default()
                .with_member_id(str_bytes(mid.clone()))
                .with_client_id(str_bytes(m.client_id.clone()))
                .with_client_host(str_bytes(m.host.clone()))
                .with_member_metadata(group.metadata(m))
                .with_member_assignment(if stable {
                    m.assignment.clone()
                } else {
                    Bytes::new()
                });
            if version >= 4 {
                member.with_group_instance_id(m.instance_id.clone().map(str_bytes))
            } else {
                member
            }
        })
        .collect();
    DescribedGroup::default()
        .with_group_id(id)
        .with_group_state(str_bytes(group.state.name()))
        .with_protocol_type(str_bytes(group.protocol_type.clone()))
        .with_protocol_data(str_bytes(group.protocol.clone().unwrap_or_default()))
        .with_members(members)
}

/// A group of `--log-dir` consumers (or only committed offsets), with its members'
/// subscriptions and assignments in the consumer protocol's encoding.
fn local_group(d: &GroupDescription, version: i16) -> DescribedGroup {
    let members = d
        .members
        .iter()
        .map(|m| {
            let subscription = ConsumerProtocolSubscription::default()
                .with_topics(m.subscribed_topics.iter().cloned().map(str_bytes).collect());
            let assignment = ConsumerProtocolAssignment::default()
                .with_assigned_partitions(assigned(&m.assignment));
            let member = DescribedGroupMember::default()
                .with_member_id(str_bytes(m.member_id.clone()))
                .with_client_id(str_bytes(m.client_id.clone()))
                .with_client_host(str_bytes(format!("/{}", m.host)))
                .with_member_metadata(
                    consumer_protocol::encode_subscription(&subscription, 0).unwrap_or_default(),
                )
                .with_member_assignment(
                    consumer_protocol::encode_assignment(&assignment, 0).unwrap_or_default(),
                );
            if version >= 4 {
                member.with_group_instance_id(None)
            } else {
                member
            }
        })
        .collect();
    let protocol = if d.members.is_empty() { "" } else { d.protocol };
    DescribedGroup::default()
        .with_group_id(GroupId(str_bytes(d.group_id.clone())))
        .with_group_state(str_bytes(d.state.name()))
        .with_protocol_type(str_bytes("consumer"))
        .with_protocol_data(str_bytes(protocol))
        .with_members(members)
}

/// A group of the consumer protocol, which DescribeGroups does not describe (Kafka: an error
/// from v6, a Dead group before).
fn not_classic(id: GroupId, version: i16) -> DescribedGroup {
    let g = DescribedGroup::default()
        .with_group_id(id.clone())
        .with_group_state(str_bytes(GroupState::Dead.name()));
    if version >= 6 {
        g.with_error_code(ResponseError::GroupIdNotFound.code())
            .with_error_message(Some(str_bytes(format!(
                "Group {} is not a classic group.",
                id.0
            ))))
    } else {
        g
    }
}

fn missing_group(id: GroupId, version: i16) -> DescribedGroup {
    let g = DescribedGroup::default()
        .with_group_id(id.clone())
        .with_group_state(str_bytes(GroupState::Dead.name()));
    // From v6 an unknown group is an error, as Kafka 4 answers.
    if version >= 6 {
        g.with_error_code(ResponseError::GroupIdNotFound.code())
            .with_error_message(Some(str_bytes(format!("Group {} not found.", id.0))))
    } else {
        g
    }
}

fn assigned(partitions: &[TopicPartition]) -> Vec<AssignedPartition> {
    let mut by_topic: std::collections::BTreeMap<&str, Vec<i32>> = Default::default();
    for (t, p) in partitions {
        by_topic.entry(t).or_default().push(*p);
    }
    by_topic
        .into_iter()
        .map(|(t, ps)| {
            AssignedPartition::default()
                .with_topic(TopicName(str_bytes(t)))
                .with_partitions(ps)
        })
        .collect()
}

pub async fn delete_groups(
    broker: &Arc<Broker>,
    _: i16,
    request: DeleteGroupsRequest,
) -> Option<DeleteGroupsResponse> {
    let mut results = Vec::new();
    for id in request.groups_names {
        let (b, name) = (Arc::clone(broker), id.0.to_string());
        let share = blocking(move || crate::local::share::admin::describe(&b.dir, &name)).await;
        if let Ok(Some(_)) = share {
            let (b, name) = (Arc::clone(broker), id.0.to_string());
            let code =
                match blocking(move || crate::local::share::admin::delete(&b.dir, &name)).await {
                    Ok(()) => 0,
                    Err(e) => error_code(&e),
                };
            results.push(
                DeletableGroupResult::default()
                    .with_group_id(id)
                    .with_error_code(code),
            );
            continue;
        }
        let code = if broker.groups.has_members(&id.0) {
            ResponseError::NonEmptyGroup.code()
        } else {
            let store: GroupStore = broker.groups.store.clone();
            let name = id.0.to_string();
            match blocking(move || store.delete_group(&name)).await {
                Ok(()) => 0,
                Err(LocalError::GroupNotEmpty { .. }) => ResponseError::NonEmptyGroup.code(),
                Err(LocalError::GroupNotFound(_)) => ResponseError::GroupIdNotFound.code(),
                Err(e) => error_code(&e),
            }
        };
        if code == ResponseError::NonEmptyGroup.code() {
            broker.log.info(&format!(
                "Refused to delete group {}: it has live members",
                id.0
            ));
        }
        results.push(
            DeletableGroupResult::default()
                .with_group_id(id)
                .with_error_code(code),
        );
    }
    Some(DeleteGroupsResponse::default().with_results(results))
}
