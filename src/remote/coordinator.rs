//! Finding a consumer group's coordinator: FindCoordinator (v4+, keys in a list) through any
//! connection, then a connection to the coordinator itself. Shared by the consumer's group
//! membership and by `kafka-consumer-groups`.
//!
//! A coordinator that is still loading its partition of `__consumer_offsets` (or not yet
//! elected, just after a broker starts) answers COORDINATOR_NOT_AVAILABLE or
//! COORDINATOR_LOAD_IN_PROGRESS; both are retried with backoff until `request.timeout.ms`.

use std::time::Duration;

use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopics,
};
use kafka_protocol::messages::{
    FindCoordinatorRequest, GroupId, OffsetCommitRequest, OffsetFetchRequest, OffsetFetchResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::admin::{Client, topic_name};
use crate::kafka::TopicPartition;
use crate::wire::api::Api;

use super::error::{RemoteError, Result};
use super::net::connection::{ClientConfig, Connection, connect_broker};

/// FindCoordinator's key type for a consumer group.
const GROUP_KEY: i8 = 0;
/// FindCoordinator's key type for a transactional id.
const TRANSACTION_KEY: i8 = 1;
/// COORDINATOR_LOAD_IN_PROGRESS.
const LOAD_IN_PROGRESS: i16 = 14;
/// COORDINATOR_NOT_AVAILABLE.
const NOT_AVAILABLE: i16 = 15;
/// NOT_COORDINATOR.
const NOT_COORDINATOR: i16 = 16;

/// A group coordinator: its broker id, address, and a connection to it.
#[derive(Debug)]
pub struct Coordinator {
    pub node_id: i32,
    pub host: String,
    pub port: i32,
    pub conn: Connection,
}

/// Asks `conn`'s broker which broker coordinates `group`, then connects to it.
pub async fn find_coordinator(conn: &mut Connection, group: &str) -> Result<Coordinator> {
    let config = conn.config().clone();
    find_coordinator_with(conn, group, &config).await
}

/// [`find_coordinator`], connecting to the coordinator with `config` (a group member needs a
/// request timeout long enough for JoinGroup).
pub async fn find_coordinator_with(
    conn: &mut Connection,
    group: &str,
    config: &ClientConfig,
) -> Result<Coordinator> {
    let (node_id, host, port) = locate(conn, group).await?;
    let coordinator = connect_broker(node_id, &host, port, config).await?;
    Ok(Coordinator {
        node_id,
        host,
        port,
        conn: coordinator,
    })
}

/// A group member's link to its coordinator: found on first use, forgotten after a failure or
/// a NOT_COORDINATOR-style answer, and found again on the next use.
#[derive(Debug)]
pub struct CoordinatorLink {
    group: String,
    /// For the coordinator connection (a member's request timeout covers a long JoinGroup).
    config: ClientConfig,
    /// `retry.backoff.ms`: the wait after a lost connection.
    backoff: Duration,
    current: Option<Coordinator>,
}

impl CoordinatorLink {
    pub fn new(group: &str, config: ClientConfig, backoff: Duration) -> CoordinatorLink {
        CoordinatorLink {
            group: group.to_string(),
            config,
            backoff,
            current: None,
        }
    }

    /// The coordinator, asking `boot`'s broker for it first when none is known.
    pub async fn get(&mut self, boot: &mut Client) -> Result<&mut Coordinator> {
        if self.current.is_none() {
            let conn = boot.live_connection().await?;
            let found = find_coordinator_with(conn, &self.group, &self.config).await?;
            self.current = Some(found);
        }
        Ok(self.current.as_mut().expect("found above"))
    }

    /// The coordinator known now, if any.
    pub fn current(&self) -> Option<&Coordinator> {
        self.current.as_ref()
    }

    /// The known coordinator's address, for messages (empty when none is known).
    pub fn addr(&self) -> String {
        self.current
            .as_ref()
            .map_or_else(String::new, |c| c.conn.addr().to_string())
    }

    /// Forgets the coordinator: the next use finds it again.
    pub fn forget(&mut self) {
        self.current = None;
    }

    /// The group's stable committed offsets of `partitions` (topic -> partitions): `Err(code)`
    /// for a group error the member cannot recover from; a pending transactional commit or a
    /// moving coordinator is waited for, up to the request timeout.
    pub async fn committed(
        &mut self,
        boot: &mut Client,
        partitions: &BTreeMap<String, BTreeSet<i32>>,
    ) -> Result<std::result::Result<BTreeMap<TopicPartition, i64>, i16>> {
        if partitions.is_empty() {
            return Ok(Ok(BTreeMap::new()));
        }
        let request = offset_fetch_request(&self.group, partitions);
        let deadline = tokio::time::Instant::now() + self.config.request_timeout;
        loop {
            let Some(response) = self.send(boot, &request).await? else {
                if tokio::time::Instant::now() >= deadline {
                    return Err(self.unreachable("OffsetFetch"));
                }
                continue;
            };
            match read_committed(response, &self.addr())? {
                Committed::Offsets(out) => return Ok(Ok(out)),
                Committed::Failed(code) => return Ok(Err(code)),
                Committed::Retry { moved } => {
                    if tokio::time::Instant::now() >= deadline {
                        return Err(RemoteError::Broker {
                            code: UNSTABLE_OFFSET_COMMIT,
                            message: format!(
                                "the committed offsets of group {} stayed unavailable for {} ms",
                                self.group,
                                self.config.request_timeout.as_millis()
                            ),
                        });
                    }
                    if moved {
                        self.forget();
                    }
                    tokio::time::sleep(self.backoff).await;
                }
            }
        }
    }

    /// Commits `positions` (next offsets to read) as member `member_id` of generation (or
    /// member epoch) `generation`: the first partition error code, 0 when all were committed; an
    /// error when the coordinator stayed unreachable or kept moving for the request timeout.
    pub async fn commit(
        &mut self,
        boot: &mut Client,
        generation: i32,
        member_id: &str,
        positions: &BTreeMap<TopicPartition, i64>,
    ) -> Result<i16> {
        let request = commit_request(
            &self.group,
            generation,
            member_id,
            positions.iter().map(|((t, p), o)| (t.as_str(), *p, *o)),
        );
        let deadline = tokio::time::Instant::now() + self.config.request_timeout;
        loop {
            if tokio::time::Instant::now() >= deadline {
                return Err(self.unreachable("OffsetCommit"));
            }
            let Some(response) = self.send(boot, &request).await? else {
                continue;
            };
            let code = response
                .topics
                .iter()
                .flat_map(|t| t.partitions.iter())
                .map(|p| p.error_code)
                .find(|c| *c != 0)
                .unwrap_or(0);
            if !is_coordinator_error(code) {
                return Ok(code);
            }
            self.forget();
            tokio::time::sleep(self.backoff).await;
        }
    }

    /// The error when the coordinator could not be reached for the request timeout: a
    /// timeout, which callers may wait out like any lost connection.
    fn unreachable(&self, api: &'static str) -> RemoteError {
        RemoteError::Timeout {
            addr: format!("the coordinator of group {}", self.group),
            api,
            timeout_ms: self.config.request_timeout.as_millis(),
        }
    }

    /// Sends a group request to the coordinator; `None` when the connection failed (the
    /// coordinator is forgotten, after `retry.backoff.ms`) and the request should be sent again.
    pub async fn send<R: Api>(
        &mut self,
        boot: &mut Client,
        request: &R,
    ) -> Result<Option<R::Response>> {
        let conn = &mut self.get(boot).await?.conn;
        let version = conn.version::<R>()?;
        match conn.send(request, version).await {
            Ok(r) => Ok(Some(r)),
            Err(e) if e.is_connection() => {
                self.forget();
                tokio::time::sleep(self.backoff).await;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

/// Whether `code` means "ask FindCoordinator again" (the group moved or is loading).
pub fn is_coordinator_error(code: i16) -> bool {
    matches!(code, LOAD_IN_PROGRESS | NOT_AVAILABLE | NOT_COORDINATOR)
}

/// FindCoordinator for `group`, retried while the coordinator is loading or not elected.
async fn locate(conn: &mut Connection, group: &str) -> Result<(i32, String, i32)> {
    locate_key(conn, GROUP_KEY, group).await
}

/// The coordinator of transactional id `id`, connected to.
pub async fn find_transaction_coordinator(conn: &mut Connection, id: &str) -> Result<Coordinator> {
    let config = conn.config().clone();
    let (node_id, host, port) = locate_key(conn, TRANSACTION_KEY, id).await?;
    let coordinator = connect_broker(node_id, &host, port, &config).await?;
    Ok(Coordinator {
        node_id,
        host,
        port,
        conn: coordinator,
    })
}

/// The broker (id, host, port) that coordinates `group` (key type 0) or a transactional id
/// (key type 1).
async fn locate_key(
    conn: &mut Connection,
    key_type: i8,
    group: &str,
) -> Result<(i32, String, i32)> {
    let deadline = tokio::time::Instant::now() + conn.request_timeout();
    let mut backoff = Duration::from_millis(50);
    loop {
        let version = conn.version::<FindCoordinatorRequest>()?;
        let request = FindCoordinatorRequest::default()
            .with_key_type(key_type)
            .with_coordinator_keys(vec![StrBytes::from_string(group.to_string())]);
        let response = conn.send(&request, version).await?;
        let answer = response
            .coordinators
            .into_iter()
            .find(|c| c.key.as_str() == group)
            .ok_or_else(|| RemoteError::Protocol {
                addr: conn.addr().to_string(),
                api: "FindCoordinator",
                reason: format!("no answer for {group}"),
            })?;
        match answer.error_code {
            0 => return Ok((answer.node_id.0, answer.host.to_string(), answer.port)),
            code if is_coordinator_error(code) && tokio::time::Instant::now() < deadline => {}
            code => {
                let message = answer.error_message.map(|m| m.to_string());
                return Err(RemoteError::broker(code, message.as_deref()));
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(1));
    }
}

/// A group id for a request.
pub fn group_id(group: &str) -> GroupId {
    GroupId(StrBytes::from_string(group.to_string()))
}

/// An OffsetCommit of `offsets` (topic, partition, next offset to read) for `group`: as a
/// member (its generation and member id) or, with generation -1 and an empty member id, as an
/// admin client does.
pub fn commit_request<'a>(
    group: &str,
    generation: i32,
    member_id: &str,
    offsets: impl IntoIterator<Item = (&'a str, i32, i64)>,
) -> OffsetCommitRequest {
    let mut by_topic: BTreeMap<&str, Vec<OffsetCommitRequestPartition>> = BTreeMap::new();
    for (topic, partition, offset) in offsets {
        by_topic.entry(topic).or_default().push(
            OffsetCommitRequestPartition::default()
                .with_partition_index(partition)
                .with_committed_offset(offset)
                .with_committed_leader_epoch(-1)
                .with_committed_metadata(Some(StrBytes::from_static_str(""))),
        );
    }
    OffsetCommitRequest::default()
        .with_group_id(group_id(group))
        .with_generation_id_or_member_epoch(generation)
        .with_member_id(StrBytes::from_string(member_id.to_string()))
        .with_retention_time_ms(-1)
        .with_topics(
            by_topic
                .into_iter()
                .map(|(t, ps)| {
                    OffsetCommitRequestTopic::default()
                        .with_name(topic_name(t))
                        .with_partitions(ps)
                })
                .collect(),
        )
}

/// UNSTABLE_OFFSET_COMMIT: a transaction holds offsets of the partition; ask again shortly.
pub const UNSTABLE_OFFSET_COMMIT: i16 = 88;

/// What one OffsetFetch said about a member's committed offsets.
#[derive(Debug)]
pub enum Committed {
    /// Next offsets to read by (topic, partition); partitions without a commit are absent.
    Offsets(BTreeMap<TopicPartition, i64>),
    /// Ask again after a backoff; `moved`: find the coordinator first.
    Retry { moved: bool },
    /// A group error the member cannot recover from.
    Failed(i16),
}

/// An OffsetFetch of the stable committed offsets of `partitions` (topic -> partitions) for
/// `group`: a pending transactional commit is waited for rather than read past.
pub fn offset_fetch_request(
    group: &str,
    partitions: &BTreeMap<String, BTreeSet<i32>>,
) -> OffsetFetchRequest {
    OffsetFetchRequest::default()
        .with_require_stable(true)
        .with_groups(vec![
            OffsetFetchRequestGroup::default()
                .with_group_id(group_id(group))
                .with_topics(Some(
                    partitions
                        .iter()
                        .map(|(t, ps)| {
                            OffsetFetchRequestTopics::default()
                                .with_name(topic_name(t))
                                .with_partition_indexes(ps.iter().copied().collect())
                        })
                        .collect(),
                )),
        ])
}

/// Reads the answer to [`offset_fetch_request`] from the coordinator at `addr`.
pub fn read_committed(response: OffsetFetchResponse, addr: &str) -> Result<Committed> {
    let Some(group) = response.groups.into_iter().next() else {
        return Err(RemoteError::Protocol {
            addr: addr.to_string(),
            api: "OffsetFetch",
            reason: "no answer for the group".to_string(),
        });
    };
    if is_coordinator_error(group.error_code) {
        return Ok(Committed::Retry { moved: true });
    }
    if group.error_code != 0 {
        return Ok(Committed::Failed(group.error_code));
    }
    let mut out = BTreeMap::new();
    let mut retry = false;
    for t in &group.topics {
        for p in &t.partitions {
            match p.error_code {
                0 if p.committed_offset >= 0 => {
                    out.insert(
                        (t.name.0.to_string(), p.partition_index),
                        p.committed_offset,
                    );
                }
                0 => {}
                UNSTABLE_OFFSET_COMMIT => retry = true,
                c => return Ok(Committed::Failed(c)),
            }
        }
    }
    Ok(if retry {
        Committed::Retry { moved: false }
    } else {
        Committed::Offsets(out)
    })
}
