//! The consumer-group admin calls of `kafka-consumer-groups` on a cluster: ListGroups (to every
//! broker), ConsumerGroupDescribe with DescribeGroups for classic groups, OffsetFetch,
//! ListOffsets at the partition leaders, OffsetCommit (generation -1, as the admin client
//! resets offsets), DeleteGroups and OffsetDelete.
//!
//! Group requests go to the group's coordinator (see [`super::coordinator`]); an answer saying
//! the coordinator moved or is loading, or a connection lost to it, is retried with a fresh
//! lookup, with backoff, within `request.timeout.ms`. ListOffsets likewise retries partitions
//! whose leader cannot be reached or has moved. So a command run while a node dies waits for
//! the cluster to move its groups and partitions elsewhere, as Java's admin client does.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::offset_delete_request::{
    OffsetDeleteRequestPartition, OffsetDeleteRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestGroup;
use kafka_protocol::messages::{
    BrokerId, ConsumerGroupDescribeRequest, DeleteGroupsRequest, DescribeGroupsRequest,
    ListGroupsRequest, ListOffsetsRequest, OffsetCommitRequest, OffsetDeleteRequest,
    OffsetFetchRequest,
};
use kafka_protocol::protocol::StrBytes;

use super::admin::{Client, topic_name};
use super::coordinator::{
    Coordinator, commit_request, find_coordinator, group_id, is_coordinator_error,
};
use super::error::{RemoteError, Result};
use super::net::connection::{Connection, connect_broker};
use crate::kafka::TopicPartition;
use crate::kafka::groups::GroupState;
use crate::wire::consumer_protocol::decode_assignment;
use crate::wire::versions::list_offsets_min_version;

/// GROUP_ID_NOT_FOUND.
pub const GROUP_ID_NOT_FOUND: i16 = 69;
/// UNSUPPORTED_VERSION: ConsumerGroupDescribe on a broker without the new protocol enabled, or
/// a ListOffsets timestamp the broker cannot take.
const UNSUPPORTED_VERSION: i16 = 35;
/// ConsumerGroupDescribe's member type of a member that joined with the classic protocol.
const CLASSIC_MEMBER: i8 = 0;
/// ConsumerGroupDescribe's member type of a member of the new consumer protocol.
const CONSUMER_MEMBER: i8 = 1;

/// A group as ListGroups reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedGroup {
    pub group_id: String,
    /// `consumer` for consumer groups (classic or new), `""` for groups that only commit.
    pub protocol_type: String,
    /// The group's state, parsed as Kafka's admin client parses it (`Unknown` for a name it
    /// does not know, or none from a broker without ListGroups v4).
    pub state: GroupState,
    /// `classic` or `consumer` (lower case, as the broker sends it); empty from old brokers.
    pub group_type: String,
}

/// One member of a described group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMember {
    pub member_id: String,
    pub instance_id: Option<String>,
    pub client_id: String,
    /// As the broker reports it, e.g. `/127.0.0.1`.
    pub host: String,
    /// The partitions it owns.
    pub assignment: Vec<TopicPartition>,
    /// New-protocol groups: the member epoch, the target assignment, and whether the member
    /// joined with the new protocol (`Some(false)`: a classic member of an upgraded group).
    pub epoch: Option<i32>,
    pub target: Option<Vec<TopicPartition>>,
    pub consumer_protocol: Option<bool>,
}

/// A described consumer group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupInfo {
    pub group_id: String,
    /// Whether this came from ConsumerGroupDescribe (a group of the new consumer protocol).
    pub consumer_protocol: bool,
    pub state: GroupState,
    /// The assignor (`range`, `uniform`, ...); empty when the group has none.
    pub assignor: String,
    /// New-protocol groups: the group epoch and the target assignment epoch.
    pub group_epoch: Option<i32>,
    pub assignment_epoch: Option<i32>,
    /// The coordinator's broker id, host and port.
    pub coordinator: (i32, String, i32),
    pub members: Vec<GroupMember>,
}

pub use crate::kafka::groups::CommittedOffset;

/// Per-partition outcomes of OffsetDelete: the top-level error code (0 for none) and each
/// partition's code.
pub type OffsetDeleteOutcome = (i16, Vec<(TopicPartition, i16)>);

/// The backoff between coordinator lookups.
const BACKOFF: Duration = Duration::from_millis(100);

impl Client {
    /// A connection to `group`'s coordinator, asked through the bootstrap connection (opened
    /// again if its broker went away).
    async fn coordinator(&mut self, group: &str) -> Result<Coordinator> {
        find_coordinator(self.live_connection().await?, group).await
    }

    /// Runs `call` against `group`'s coordinator until it answers with something other than a
    /// coordinator error (moved, loading, not available) or the connection fails, within
    /// `request.timeout.ms`. A coordinator whose node died is named by FindCoordinator until
    /// the cluster has fenced the node and moved the group: until then connecting fails.
    pub(super) async fn at_coordinator<T>(
        &mut self,
        group: &str,
        mut call: impl AsyncCall<T>,
    ) -> Result<(T, Coordinator)> {
        let deadline = tokio::time::Instant::now() + self.conn.request_timeout();
        loop {
            let attempt = match self.coordinator(group).await {
                Ok(mut c) => call.call(&mut c.conn).await.map(|v| (v, c)),
                Err(e) => Err(e),
            };
            match attempt {
                Err(e)
                    if (e.code().is_some_and(is_coordinator_error) || e.is_connection())
                        && tokio::time::Instant::now() + BACKOFF < deadline =>
                {
                    tokio::time::sleep(BACKOFF).await;
                }
                answer => return answer,
            }
        }
    }

    /// ListGroups at every broker of the cluster, with the state and type filters (empty: all);
    /// sorted by group id.
    pub async fn list_groups(
        &mut self,
        states: &[String],
        types: &[String],
    ) -> Result<Vec<ListedGroup>> {
        let brokers = self.metadata(Some(&[])).await?.brokers;
        let config = self.conn.config().clone();
        let mut groups: BTreeMap<String, ListedGroup> = BTreeMap::new();
        for b in brokers {
            let mut conn = connect_broker(b.id, &b.host, b.port, &config).await?;
            let version = conn.version::<ListGroupsRequest>()?;
            let mut request = ListGroupsRequest::default();
            if version >= 4 {
                request = request.with_states_filter(strs(states));
            }
            if version >= 5 {
                request = request.with_types_filter(strs(types));
            }
            let response = conn.send(&request, version).await?;
            if response.error_code != 0 {
                return Err(RemoteError::broker(response.error_code, None));
            }
            for g in response.groups {
                let id = g.group_id.0.to_string();
                groups.insert(
                    id.clone(),
                    ListedGroup {
                        group_id: id,
                        protocol_type: g.protocol_type.to_string(),
                        state: GroupState::parse(&g.group_state),
                        group_type: g.group_type.to_string(),
                    },
                );
            }
        }
        Ok(groups.into_values().collect())
    }

    /// Describes one group: ConsumerGroupDescribe, then DescribeGroups when the group is not a
    /// new-protocol group (or the broker lacks the API). `None` when the group does not exist.
    pub async fn describe_group(&mut self, group: &str) -> Result<Option<GroupInfo>> {
        let (info, c) = self.at_coordinator(group, DescribeCall(group)).await?;
        Ok(info.map(|mut info| {
            info.coordinator = (c.node_id, c.host, c.port);
            info
        }))
    }

    /// The group's committed offsets (OffsetFetch, all topics); empty if it has none.
    pub async fn committed_offsets(
        &mut self,
        group: &str,
    ) -> Result<BTreeMap<TopicPartition, CommittedOffset>> {
        Ok(self.at_coordinator(group, OffsetFetchCall(group)).await?.0)
    }

    /// Commits `offsets` for `group` as the admin client does (generation -1, no member id):
    /// the broker accepts it only while the group has no active members. Per-partition errors.
    pub async fn commit_offsets(
        &mut self,
        group: &str,
        offsets: &BTreeMap<TopicPartition, i64>,
    ) -> Result<Vec<(TopicPartition, i16)>> {
        Ok(self
            .at_coordinator(group, CommitCall { group, offsets })
            .await?
            .0)
    }

    /// Deletes `group` (DeleteGroups at its coordinator); the group's error code, 0 for success.
    pub async fn delete_group(&mut self, group: &str) -> Result<i16> {
        Ok(self.at_coordinator(group, DeleteGroupCall(group)).await?.0)
    }

    /// Deletes the committed offsets of `tps` in `group` (OffsetDelete).
    pub async fn delete_offsets(
        &mut self,
        group: &str,
        tps: &[TopicPartition],
    ) -> Result<OffsetDeleteOutcome> {
        Ok(self
            .at_coordinator(group, OffsetDeleteCall { group, tps })
            .await?
            .0)
    }

    /// ListOffsets at each partition's leader for `timestamp` (-1 latest, -2 earliest, -3 to -6
    /// Kafka's other specs, or a time in ms): per partition, the offset (`None` when the broker
    /// has none, such as no record at or after the time) or the error. Partitions without a
    /// leader get LEADER_NOT_AVAILABLE; a leader too old for the timestamp, UNSUPPORTED_VERSION.
    /// A leader that cannot be reached or is no longer the leader is asked again, after a fresh
    /// Metadata, within `request.timeout.ms` (its node may be dying: the partition gets another
    /// leader, or none).
    pub async fn list_offsets(
        &mut self,
        tps: &[TopicPartition],
        timestamp: i64,
    ) -> Result<HashMap<TopicPartition, Result<Option<i64>>>> {
        let deadline = tokio::time::Instant::now() + self.conn.request_timeout();
        let mut out = HashMap::new();
        let mut pending = tps.to_vec();
        loop {
            let mut lost = None;
            let retry = self
                .list_offsets_once(&pending, timestamp, &mut out, &mut lost)
                .await?;
            if retry.is_empty() || tokio::time::Instant::now() + BACKOFF >= deadline {
                // Out of time: a partition whose leader answered keeps its error; one whose
                // leader could not be reached fails the call, as it did before retrying.
                if let Some(e) = lost.filter(|_| retry.iter().any(|(_, code)| code.is_none())) {
                    return Err(e);
                }
                for (tp, code) in retry {
                    out.insert(tp, Err(RemoteError::broker(code.unwrap_or(5), None)));
                }
                return Ok(out);
            }
            pending = retry.into_iter().map(|(tp, _)| tp).collect();
            tokio::time::sleep(BACKOFF).await;
        }
    }

    /// One round of [`Client::list_offsets`]: answers go to `out`; the partitions to ask again
    /// come back with their leader's error code, or none when the leader (or the bootstrap
    /// broker) could not be reached, which then is in `lost`.
    async fn list_offsets_once(
        &mut self,
        tps: &[TopicPartition],
        timestamp: i64,
        out: &mut HashMap<TopicPartition, Result<Option<i64>>>,
        lost: &mut Option<RemoteError>,
    ) -> Result<Vec<(TopicPartition, Option<i16>)>> {
        match self.try_list_offsets(tps, timestamp, out, lost).await {
            Err(e) if e.is_connection() => {
                *lost = Some(e);
                Ok(tps.iter().map(|tp| (tp.clone(), None)).collect())
            }
            answer => answer,
        }
    }

    /// [`Client::list_offsets_once`], failing when Metadata cannot be had.
    async fn try_list_offsets(
        &mut self,
        tps: &[TopicPartition],
        timestamp: i64,
        out: &mut HashMap<TopicPartition, Result<Option<i64>>>,
        lost: &mut Option<RemoteError>,
    ) -> Result<Vec<(TopicPartition, Option<i16>)>> {
        self.live_connection().await?;
        let leaders = self.leaders(tps).await?;
        for (tp, code) in leaders.leaderless {
            out.insert(tp, Err(RemoteError::broker(code, None)));
        }
        let config = self.conn.config().clone();
        let mut retry = Vec::new();
        for (b, tps) in leaders.by_leader {
            let tps: Vec<&TopicPartition> = tps.iter().collect();
            let answers = match connect_broker(b.id, &b.host, b.port, &config).await {
                Ok(mut conn) => list_offsets_at(&mut conn, &tps, timestamp).await,
                Err(e) => Err(e),
            };
            match answers {
                Ok(answers) => {
                    for (tp, answer) in answers {
                        match answer.as_ref().map_err(RemoteError::code) {
                            Err(Some(code)) if leader_moved(code) => retry.push((tp, Some(code))),
                            _ => {
                                out.insert(tp, answer);
                            }
                        }
                    }
                }
                Err(e) if e.is_connection() => {
                    retry.extend(tps.into_iter().map(|tp| (tp.clone(), None)));
                    *lost = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(retry)
    }
}

/// Whether a partition's ListOffsets error means "ask the new leader": the broker asked is no
/// longer the leader, or a new one is being elected.
fn leader_moved(code: i16) -> bool {
    // NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH,
    // OFFSET_NOT_AVAILABLE (a new leader that does not know its high watermark yet).
    matches!(code, 6 | 5 | 74 | 76 | 78)
}

/// ListOffsets of `tps`, which `conn`'s broker leads, for `timestamp`: each partition's
/// answer. A broker too old for the timestamp fails the partitions, not the call (as Java's
/// admin client).
async fn list_offsets_at(
    conn: &mut Connection,
    tps: &[&TopicPartition],
    timestamp: i64,
) -> Result<Vec<(TopicPartition, Result<Option<i64>>)>> {
    let version = conn.version::<ListOffsetsRequest>()?;
    let needed = list_offsets_min_version(timestamp);
    if version < needed {
        let reason = format!(
            "{} supports ListOffsets up to v{version}; asking for timestamp {timestamp} needs v{needed}",
            conn.addr()
        );
        return Ok(tps
            .iter()
            .map(|tp| {
                let error = RemoteError::broker(UNSUPPORTED_VERSION, Some(&reason));
                ((*tp).clone(), Err(error))
            })
            .collect());
    }
    let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for tp in tps {
        by_topic.entry(&tp.0).or_default().push(tp.1);
    }
    let timeout_ms = i32::try_from(conn.request_timeout().as_millis()).unwrap_or(i32::MAX);
    let request = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_timeout_ms(timeout_ms)
        .with_topics(
            by_topic
                .iter()
                .map(|(t, ps)| {
                    ListOffsetsTopic::default()
                        .with_name(topic_name(t))
                        .with_partitions(
                            ps.iter()
                                .map(|p| {
                                    ListOffsetsPartition::default()
                                        .with_partition_index(*p)
                                        .with_timestamp(timestamp)
                                })
                                .collect(),
                        )
                })
                .collect(),
        );
    let response = conn.send(&request, version).await?;
    let mut out = Vec::new();
    for t in response.topics {
        for p in t.partitions {
            let tp = (t.name.0.to_string(), p.partition_index);
            let result = match p.error_code {
                0 => Ok((p.offset >= 0).then_some(p.offset)),
                code => Err(RemoteError::broker(code, None)),
            };
            out.push((tp, result));
        }
    }
    Ok(out)
}

fn strs(values: &[String]) -> Vec<StrBytes> {
    values
        .iter()
        .map(|v| StrBytes::from_string(v.clone()))
        .collect()
}

/// A request sent to a coordinator, repeatable after a coordinator error.
pub(super) trait AsyncCall<T> {
    async fn call(&mut self, conn: &mut Connection) -> Result<T>;
}

/// A closure is a call too (the share-group admin calls are written as closures).
impl<T, F: AsyncFnMut(&mut Connection) -> Result<T>> AsyncCall<T> for F {
    async fn call(&mut self, conn: &mut Connection) -> Result<T> {
        self(conn).await
    }
}

/// An error for a coordinator-level code, so that [`Client::at_coordinator`] retries it.
struct DescribeCall<'a>(&'a str);

impl AsyncCall<Option<GroupInfo>> for DescribeCall<'_> {
    async fn call(&mut self, conn: &mut Connection) -> Result<Option<GroupInfo>> {
        let group = self.0;
        if let Ok(version) = conn.version::<ConsumerGroupDescribeRequest>() {
            let request =
                ConsumerGroupDescribeRequest::default().with_group_ids(vec![group_id(group)]);
            let response = conn.send(&request, version).await?;
            if let Some(g) = response.groups.into_iter().next() {
                match g.error_code {
                    0 => return Ok(Some(consumer_group(g))),
                    // Not a new-protocol group (or none at all): ask DescribeGroups.
                    GROUP_ID_NOT_FOUND | UNSUPPORTED_VERSION => {}
                    code => RemoteError::check(code, g.error_message.as_deref())?,
                }
            }
        }
        let version = conn.version::<DescribeGroupsRequest>()?;
        let request = DescribeGroupsRequest::default().with_groups(vec![group_id(group)]);
        let response = conn.send(&request, version).await?;
        let Some(g) = response.groups.into_iter().next() else {
            return Ok(None);
        };
        match g.error_code {
            0 => {}
            GROUP_ID_NOT_FOUND => return Ok(None),
            code => RemoteError::check(code, g.error_message.as_deref())?,
        }
        if GroupState::parse(&g.group_state) == GroupState::Dead {
            return Ok(None);
        }
        let consumer = g.protocol_type.as_str() == "consumer";
        let members = g
            .members
            .into_iter()
            .map(|m| {
                // Only consumer groups carry ConsumerProtocol assignments; a member whose bytes
                // cannot be read is shown without partitions rather than failing the command.
                let assignment = if consumer {
                    decode_assignment(&m.member_assignment)
                        .map(|a| {
                            a.assigned_partitions
                                .iter()
                                .flat_map(|t| {
                                    t.partitions.iter().map(|p| (t.topic.0.to_string(), *p))
                                })
                                .collect()
                        })
                        .unwrap_or_default()
                } else {
                    Vec::new()
                };
                GroupMember {
                    member_id: m.member_id.to_string(),
                    instance_id: m.group_instance_id.map(|i| i.to_string()),
                    client_id: m.client_id.to_string(),
                    host: m.client_host.to_string(),
                    assignment,
                    epoch: None,
                    target: None,
                    consumer_protocol: None,
                }
            })
            .collect();
        Ok(Some(GroupInfo {
            group_id: g.group_id.0.to_string(),
            consumer_protocol: false,
            state: GroupState::parse(&g.group_state),
            assignor: g.protocol_data.to_string(),
            group_epoch: None,
            assignment_epoch: None,
            coordinator: (-1, String::new(), 0),
            members,
        }))
    }
}

fn consumer_group(
    g: kafka_protocol::messages::consumer_group_describe_response::DescribedGroup,
) -> GroupInfo {
    let tps = |a: &kafka_protocol::messages::consumer_group_describe_response::Assignment| {
        a.topic_partitions
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (t.topic_name.0.to_string(), *p))
            })
            .collect::<Vec<TopicPartition>>()
    };
    GroupInfo {
        group_id: g.group_id.0.to_string(),
        consumer_protocol: true,
        state: GroupState::parse(&g.group_state),
        assignor: g.assignor_name.to_string(),
        group_epoch: Some(g.group_epoch),
        assignment_epoch: Some(g.assignment_epoch),
        coordinator: (-1, String::new(), 0),
        members: g
            .members
            .iter()
            .map(|m| GroupMember {
                member_id: m.member_id.to_string(),
                instance_id: m.instance_id.as_ref().map(|i| i.to_string()),
                client_id: m.client_id.to_string(),
                host: m.client_host.to_string(),
                assignment: tps(&m.assignment),
                epoch: Some(m.member_epoch),
                target: Some(tps(&m.target_assignment)),
                consumer_protocol: match m.member_type {
                    CLASSIC_MEMBER => Some(false),
                    CONSUMER_MEMBER => Some(true),
                    _ => None,
                },
            })
            .collect(),
    }
}

struct OffsetFetchCall<'a>(&'a str);

impl AsyncCall<BTreeMap<TopicPartition, CommittedOffset>> for OffsetFetchCall<'_> {
    async fn call(
        &mut self,
        conn: &mut Connection,
    ) -> Result<BTreeMap<TopicPartition, CommittedOffset>> {
        let version = conn.version::<OffsetFetchRequest>()?;
        let request = OffsetFetchRequest::default().with_groups(vec![
            OffsetFetchRequestGroup::default()
                .with_group_id(group_id(self.0))
                .with_topics(None),
        ]);
        let response = conn.send(&request, version).await?;
        let mut out = BTreeMap::new();
        for g in response.groups {
            RemoteError::check(g.error_code, None)?;
            for t in g.topics {
                for p in t.partitions {
                    // -1: no offset committed for this partition.
                    if p.error_code != 0 || p.committed_offset < 0 {
                        continue;
                    }
                    out.insert(
                        (t.name.0.to_string(), p.partition_index),
                        CommittedOffset {
                            offset: p.committed_offset,
                            leader_epoch: (p.committed_leader_epoch >= 0)
                                .then_some(p.committed_leader_epoch),
                        },
                    );
                }
            }
        }
        Ok(out)
    }
}

struct CommitCall<'a> {
    group: &'a str,
    offsets: &'a BTreeMap<TopicPartition, i64>,
}

impl AsyncCall<Vec<(TopicPartition, i16)>> for CommitCall<'_> {
    async fn call(&mut self, conn: &mut Connection) -> Result<Vec<(TopicPartition, i16)>> {
        let version = conn.version::<OffsetCommitRequest>()?;
        let request = commit_request(
            self.group,
            -1,
            "",
            self.offsets.iter().map(|((t, p), o)| (t.as_str(), *p, *o)),
        );
        let response = conn.send(&request, version).await?;
        let mut out = Vec::new();
        for t in response.topics {
            for p in t.partitions {
                if is_coordinator_error(p.error_code) {
                    RemoteError::check(p.error_code, None)?;
                }
                out.push(((t.name.0.to_string(), p.partition_index), p.error_code));
            }
        }
        Ok(out)
    }
}

struct DeleteGroupCall<'a>(&'a str);

impl AsyncCall<i16> for DeleteGroupCall<'_> {
    async fn call(&mut self, conn: &mut Connection) -> Result<i16> {
        let version = conn.version::<DeleteGroupsRequest>()?;
        let request = DeleteGroupsRequest::default().with_groups_names(vec![group_id(self.0)]);
        let response = conn.send(&request, version).await?;
        let code = response
            .results
            .iter()
            .find(|r| r.group_id.0.as_str() == self.0)
            .map_or(0, |r| r.error_code);
        if is_coordinator_error(code) {
            RemoteError::check(code, None)?;
        }
        Ok(code)
    }
}

struct OffsetDeleteCall<'a> {
    group: &'a str,
    tps: &'a [TopicPartition],
}

impl AsyncCall<OffsetDeleteOutcome> for OffsetDeleteCall<'_> {
    async fn call(&mut self, conn: &mut Connection) -> Result<OffsetDeleteOutcome> {
        let version = conn.version::<OffsetDeleteRequest>()?;
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for (t, p) in self.tps {
            by_topic.entry(t).or_default().push(*p);
        }
        let request = OffsetDeleteRequest::default()
            .with_group_id(group_id(self.group))
            .with_topics(
                by_topic
                    .into_iter()
                    .map(|(t, ps)| {
                        OffsetDeleteRequestTopic::default()
                            .with_name(topic_name(t))
                            .with_partitions(
                                ps.into_iter()
                                    .map(|p| {
                                        OffsetDeleteRequestPartition::default()
                                            .with_partition_index(p)
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            );
        let response = conn.send(&request, version).await?;
        if is_coordinator_error(response.error_code) {
            RemoteError::check(response.error_code, None)?;
        }
        let partitions = response
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| ((t.name.0.to_string(), p.partition_index), p.error_code))
            })
            .collect();
        Ok((response.error_code, partitions))
    }
}
