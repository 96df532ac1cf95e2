//! A consumer's membership of a group on a cluster, with the classic group protocol that Java
//! consumers speak: FindCoordinator, JoinGroup (twice on first join: the coordinator answers
//! MEMBER_ID_REQUIRED with our id), SyncGroup (the leader brings everyone's assignment, computed
//! with Kafka's range assignor), OffsetFetch for where to start, OffsetCommit, LeaveGroup.
//!
//! Rebalances are eager, as with Java's `RangeAssignor`: before rejoining, a member commits its
//! positions and gives up every partition, so that no two members ever read the same partition
//! and a partition's next owner starts where the last one stopped printing.
//!
//! Heartbeats come from a thread of their own with its own connection, as Java's consumer has a
//! heartbeat thread: a consumer blocked on a slow standard output stays in the group. The thread
//! only reports what the coordinator says (a rebalance started, we were evicted); the consumer's
//! own thread acts on it in [`GroupMember::poll`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as AssignedTopic;
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::{
    ConsumerProtocolAssignment, ConsumerProtocolSubscription, HeartbeatRequest, JoinGroupRequest,
    LeaveGroupRequest, SyncGroupRequest,
};
use kafka_protocol::protocol::StrBytes;

use super::admin::topic_name;
use super::connection::{ClientConfig, Connection, connect_broker};
use super::consumer_protocol;
use super::coordinator::{CoordinatorLink, group_id, is_coordinator_error};
use super::error::{RemoteError, Result};
use super::fetch::Fetcher;

/// ILLEGAL_GENERATION.
const ILLEGAL_GENERATION: i16 = 22;
/// UNKNOWN_MEMBER_ID.
const UNKNOWN_MEMBER_ID: i16 = 25;
/// REBALANCE_IN_PROGRESS.
const REBALANCE_IN_PROGRESS: i16 = 27;
/// MEMBER_ID_REQUIRED: the first JoinGroup's answer, carrying our member id.
const MEMBER_ID_REQUIRED: i16 = 79;
/// FENCED_INSTANCE_ID.
const FENCED_INSTANCE_ID: i16 = 82;
/// The assignor we offer, known to every Java consumer (in its default list since 3.0).
const RANGE: &str = "range";

/// A topic and partition.
pub use crate::assignor::TopicPartition;

/// Partitions by topic, sorted.
pub(crate) type Partitions = BTreeMap<String, BTreeSet<i32>>;

/// The ConsumerProtocol subscription bytes JoinGroup carries: the subscribed topics.
fn subscription_metadata(subscription: &BTreeMap<String, u32>) -> Result<bytes::Bytes> {
    let topics: BTreeSet<String> = subscription.keys().cloned().collect();
    let ours = ConsumerProtocolSubscription::default().with_topics(
        topics
            .iter()
            .map(|t| StrBytes::from_string(t.clone()))
            .collect(),
    );
    consumer_protocol::encode_subscription(&ours, PROTOCOL_VERSION).map_err(|e| {
        RemoteError::Encode {
            api: "JoinGroup",
            version: PROTOCOL_VERSION,
            reason: e.to_string(),
        }
    })
}

/// The consumer-protocol version we write: v1 is understood by every 2.x+ client.
const PROTOCOL_VERSION: i16 = 1;

/// Kafka's consumer properties for group membership.
#[derive(Debug, Clone)]
pub struct MemberSettings {
    /// `group.id`.
    pub group_id: String,
    /// `session.timeout.ms`: without a heartbeat for this long the coordinator evicts us.
    pub session_timeout: Duration,
    /// `max.poll.interval.ms`: how long the coordinator waits for members to rejoin.
    pub rebalance_timeout: Duration,
    /// `heartbeat.interval.ms`.
    pub heartbeat_interval: Duration,
    /// `retry.backoff.ms`.
    pub retry_backoff: Duration,
    /// `group.protocol`: which protocol the member speaks.
    pub protocol: GroupProtocol,
}

/// Kafka's `group.protocol`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GroupProtocol {
    /// JoinGroup/SyncGroup/Heartbeat, the assignment computed by the group's leader.
    #[default]
    Classic,
    /// KIP-848's ConsumerGroupHeartbeat, the assignment computed by the coordinator.
    Consumer,
}

/// What a poll changed. Apply `revoked` first, then `acquired`.
#[derive(Debug, Default)]
pub struct Change {
    /// Newly owned partitions with the group's committed offset (`None`: nothing committed).
    pub acquired: Vec<(TopicPartition, Option<i64>)>,
    /// Partitions given up; their positions were committed first when auto-commit is on.
    pub revoked: Vec<TopicPartition>,
}

impl Change {
    pub fn is_empty(&self) -> bool {
        self.acquired.is_empty() && self.revoked.is_empty()
    }
}

/// This process's membership of one group.
#[derive(Debug)]
pub struct GroupMember {
    settings: MemberSettings,
    /// The coordinator, with a request timeout that covers a JoinGroup waiting for the whole
    /// group to rejoin.
    link: CoordinatorLink,
    member_id: String,
    /// -1 until the first SyncGroup succeeds.
    generation: i32,
    owned: Partitions,
    /// The subscription (topic -> partition count) of the last join: a change means rejoin.
    joined_with: BTreeMap<String, u32>,
    heartbeat: Heartbeat,
}

impl GroupMember {
    /// A member that has not joined yet; the first [`GroupMember::poll`] joins.
    pub fn new(settings: MemberSettings, config: &ClientConfig) -> GroupMember {
        let mut config = config.clone();
        config.request_timeout = config
            .request_timeout
            .max(settings.rebalance_timeout + Duration::from_secs(5));
        let heartbeat = Heartbeat::start(settings.heartbeat_interval, config.clone());
        let link = CoordinatorLink::new(&settings.group_id, config.clone(), settings.retry_backoff);
        GroupMember {
            settings,
            link,
            member_id: String::new(),
            generation: -1,
            owned: Partitions::new(),
            joined_with: BTreeMap::new(),
            heartbeat,
        }
    }

    /// Joins the group, or rejoins when a rebalance started, we were evicted, or the
    /// `subscription` (topic -> partition count) changed; otherwise changes nothing.
    /// `positions` are the next offsets to read of the partitions owned now, committed before
    /// they are given up when `commit` is set.
    pub async fn poll(
        &mut self,
        fetcher: &mut Fetcher,
        subscription: &BTreeMap<String, u32>,
        positions: &BTreeMap<TopicPartition, i64>,
        commit: bool,
    ) -> Result<Change> {
        let rejoin = self.heartbeat.take_rejoin();
        if self.generation >= 0 && !rejoin && *subscription == self.joined_with {
            return Ok(Change::default());
        }
        let mut change = Change::default();
        if self.generation >= 0 && commit {
            self.commit(fetcher, positions).await?;
        }
        change.revoked = flatten(&self.owned);
        self.owned.clear();
        self.heartbeat.aim(None);
        let assigned = self.join(fetcher, subscription).await?;
        self.joined_with = subscription.clone();
        let committed = self.committed(fetcher, &assigned).await?;
        change.acquired = flatten(&assigned)
            .into_iter()
            .map(|tp| {
                let offset = committed.get(&tp).copied();
                (tp, offset)
            })
            .collect();
        self.owned = assigned;
        Ok(change)
    }

    /// Commits `positions` (next offsets to read). A commit refused because the group is
    /// rebalancing or moved on without us is dropped, as Kafka's auto-commit drops it: the
    /// next poll rejoins, and the partitions' next owner starts from the last commit.
    pub async fn commit(
        &mut self,
        fetcher: &mut Fetcher,
        positions: &BTreeMap<TopicPartition, i64>,
    ) -> Result<()> {
        if self.generation < 0 || positions.is_empty() {
            return Ok(());
        }
        let code = self
            .link
            .commit(
                fetcher.bootstrap(),
                self.generation,
                &self.member_id,
                positions,
            )
            .await?;
        match code {
            0 => Ok(()),
            REBALANCE_IN_PROGRESS | ILLEGAL_GENERATION | UNKNOWN_MEMBER_ID | FENCED_INSTANCE_ID => {
                self.heartbeat.request_rejoin();
                Ok(())
            }
            c => Err(self.group_error(c, "committing offsets")),
        }
    }

    /// Commits `positions` when asked, then leaves the group, so that the others rebalance at
    /// once instead of after `session.timeout.ms`.
    pub async fn leave(
        mut self,
        fetcher: &mut Fetcher,
        positions: &BTreeMap<TopicPartition, i64>,
        commit: bool,
    ) -> Result<()> {
        self.heartbeat.stop();
        if self.generation < 0 && self.member_id.is_empty() {
            return Ok(());
        }
        if commit {
            self.commit(fetcher, positions).await?;
        }
        let request = LeaveGroupRequest::default()
            .with_group_id(group_id(&self.settings.group_id))
            .with_members(vec![
                MemberIdentity::default()
                    .with_member_id(StrBytes::from_string(self.member_id.clone()))
                    .with_reason(Some(StrBytes::from_static_str(
                        "the consumer is being closed",
                    ))),
            ]);
        // Leaving is a courtesy: if the coordinator has already forgotten us, so much the better.
        let _ = self.link.send(fetcher.bootstrap(), &request).await;
        Ok(())
    }

    /// JoinGroup and SyncGroup until both succeed in the same generation; our assignment.
    async fn join(
        &mut self,
        fetcher: &mut Fetcher,
        subscription: &BTreeMap<String, u32>,
    ) -> Result<Partitions> {
        let metadata = subscription_metadata(subscription)?;
        loop {
            let request = JoinGroupRequest::default()
                .with_group_id(group_id(&self.settings.group_id))
                .with_session_timeout_ms(millis(self.settings.session_timeout))
                .with_rebalance_timeout_ms(millis(self.settings.rebalance_timeout))
                .with_member_id(StrBytes::from_string(self.member_id.clone()))
                .with_protocol_type(StrBytes::from_static_str("consumer"))
                .with_protocols(vec![
                    JoinGroupRequestProtocol::default()
                        .with_name(StrBytes::from_static_str(RANGE))
                        .with_metadata(metadata.clone()),
                ])
                .with_reason(Some(StrBytes::from_static_str("kafkit consumer joining")));
            let joined = match self.link.send(fetcher.bootstrap(), &request).await? {
                None => continue,
                Some(r) => r,
            };
            match joined.error_code {
                0 => {}
                MEMBER_ID_REQUIRED => {
                    self.member_id = joined.member_id.to_string();
                    continue;
                }
                UNKNOWN_MEMBER_ID | ILLEGAL_GENERATION | FENCED_INSTANCE_ID => {
                    self.member_id.clear();
                    continue;
                }
                REBALANCE_IN_PROGRESS => continue,
                c if is_coordinator_error(c) => {
                    self.link.forget();
                    tokio::time::sleep(self.settings.retry_backoff).await;
                    continue;
                }
                c => return Err(self.group_error(c, "joining the group")),
            }
            self.member_id = joined.member_id.to_string();
            let generation = joined.generation_id;
            let protocol = joined.protocol_name.clone();
            let assignments = if joined.leader == joined.member_id {
                self.assign(fetcher, subscription, &joined.members).await?
            } else {
                Vec::new()
            };
            let request = SyncGroupRequest::default()
                .with_group_id(group_id(&self.settings.group_id))
                .with_generation_id(generation)
                .with_member_id(StrBytes::from_string(self.member_id.clone()))
                .with_protocol_type(Some(StrBytes::from_static_str("consumer")))
                .with_protocol_name(protocol)
                .with_assignments(assignments);
            let synced = match self.link.send(fetcher.bootstrap(), &request).await? {
                None => continue,
                Some(r) => r,
            };
            match synced.error_code {
                0 => {}
                UNKNOWN_MEMBER_ID | FENCED_INSTANCE_ID => {
                    self.member_id.clear();
                    continue;
                }
                REBALANCE_IN_PROGRESS | ILLEGAL_GENERATION => continue,
                c if is_coordinator_error(c) => {
                    self.link.forget();
                    tokio::time::sleep(self.settings.retry_backoff).await;
                    continue;
                }
                c => return Err(self.group_error(c, "joining the group")),
            }
            let assigned = self.decode_assignment(&synced.assignment)?;
            self.generation = generation;
            let coordinator = self.link.current().expect("answered above");
            self.heartbeat.aim(Some(Target {
                node_id: coordinator.node_id,
                host: coordinator.host.clone(),
                port: coordinator.port,
                group: self.settings.group_id.clone(),
                generation,
                member_id: self.member_id.clone(),
            }));
            return Ok(assigned);
        }
    }

    /// Our partitions, from the ConsumerProtocol assignment bytes SyncGroup returned.
    fn decode_assignment(&self, bytes: &[u8]) -> Result<Partitions> {
        let assignment =
            consumer_protocol::decode_assignment(bytes).map_err(|e| RemoteError::Protocol {
                addr: self.link.addr(),
                api: "SyncGroup",
                reason: e.to_string(),
            })?;
        let mut assigned = Partitions::new();
        for t in assignment.assigned_partitions {
            assigned
                .entry(t.topic.0.to_string())
                .or_default()
                .extend(t.partitions);
        }
        Ok(assigned)
    }

    /// The leader's job: a range assignment over every member's subscription.
    async fn assign(
        &mut self,
        fetcher: &mut Fetcher,
        ours: &BTreeMap<String, u32>,
        members: &[kafka_protocol::messages::join_group_response::JoinGroupResponseMember],
    ) -> Result<Vec<SyncGroupRequestAssignment>> {
        let mut subscriptions: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for m in members {
            // A member whose metadata we cannot read subscribes to nothing; it still gets an
            // (empty) assignment, so that the group can complete.
            let topics = consumer_protocol::decode_subscription(&m.metadata)
                .map(|s| s.topics.into_iter().map(|t| t.to_string()).collect())
                .unwrap_or_default();
            subscriptions.insert(m.member_id.to_string(), topics);
        }
        let mut counts = ours.clone();
        let missing: Vec<String> = subscriptions
            .values()
            .flatten()
            .filter(|t| !counts.contains_key(*t))
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if !missing.is_empty() {
            counts.extend(fetcher.topics(Some(&missing)).await?);
        }
        let plan = crate::assignor::range(&counts, &subscriptions);
        plan.into_iter()
            .map(|(member, tps)| {
                let mut partitions = Partitions::new();
                for (t, p) in tps {
                    partitions.entry(t).or_default().insert(p as i32);
                }
                let assignment = ConsumerProtocolAssignment::default().with_assigned_partitions(
                    partitions
                        .into_iter()
                        .map(|(t, ps)| {
                            AssignedTopic::default()
                                .with_topic(topic_name(&t))
                                .with_partitions(ps.into_iter().collect())
                        })
                        .collect(),
                );
                let bytes = consumer_protocol::encode_assignment(&assignment, PROTOCOL_VERSION)
                    .map_err(|e| RemoteError::Encode {
                        api: "SyncGroup",
                        version: PROTOCOL_VERSION,
                        reason: e.to_string(),
                    })?;
                Ok(SyncGroupRequestAssignment::default()
                    .with_member_id(StrBytes::from_string(member))
                    .with_assignment(bytes))
            })
            .collect()
    }

    /// The group's committed offsets of `partitions`.
    async fn committed(
        &mut self,
        fetcher: &mut Fetcher,
        partitions: &Partitions,
    ) -> Result<BTreeMap<TopicPartition, i64>> {
        match self.link.committed(fetcher.bootstrap(), partitions).await? {
            Ok(offsets) => Ok(offsets),
            Err(code) => Err(self.group_error(code, "reading committed offsets")),
        }
    }

    /// A group error the member cannot recover from, naming the group and what it was doing.
    fn group_error(&self, code: i16, doing: &str) -> RemoteError {
        let e = RemoteError::broker(code, None);
        RemoteError::Broker {
            code,
            message: format!(
                "consumer group {} refused us while {doing}: {e}",
                self.settings.group_id
            ),
        }
    }
}

impl Drop for GroupMember {
    fn drop(&mut self) {
        self.heartbeat.stop();
    }
}

/// The error when a transaction kept the committed offsets of `group` unreadable.
pub(crate) fn flatten(partitions: &Partitions) -> Vec<TopicPartition> {
    partitions
        .iter()
        .flat_map(|(t, ps)| ps.iter().map(move |p| (t.clone(), *p as u32)))
        .collect()
}

pub(crate) fn millis(d: Duration) -> i32 {
    i32::try_from(d.as_millis()).unwrap_or(i32::MAX)
}

/// Whom the heartbeat thread beats for.
#[derive(Debug, Clone, PartialEq)]
struct Target {
    node_id: i32,
    host: String,
    port: i32,
    group: String,
    generation: i32,
    member_id: String,
}

/// What the consumer thread and the heartbeat thread share.
#[derive(Debug, Default)]
struct Beat {
    /// `None` while not a member (before the first join, during a rejoin).
    target: Option<Target>,
    /// The coordinator said to rejoin (a rebalance, or we were evicted).
    rejoin: bool,
    stop: bool,
}

/// The heartbeat thread and its shared state.
#[derive(Debug)]
struct Heartbeat {
    shared: Arc<(Mutex<Beat>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Heartbeat {
    fn start(interval: Duration, config: ClientConfig) -> Heartbeat {
        let shared = Arc::new((Mutex::new(Beat::default()), Condvar::new()));
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("heartbeat".to_string())
            .spawn(move || beat_until_stopped(&theirs, interval, &config))
            .ok();
        Heartbeat { shared, thread }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Beat> {
        // The thread never panics while holding the lock; a poisoned lock still holds a Beat.
        self.shared.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Beats for `target` from now on (`None`: stop beating).
    fn aim(&self, target: Option<Target>) {
        let mut beat = self.state();
        beat.target = target;
        beat.rejoin = false;
    }

    fn take_rejoin(&self) -> bool {
        std::mem::take(&mut self.state().rejoin)
    }

    fn request_rejoin(&self) {
        self.state().rejoin = true;
    }

    fn stop(&mut self) {
        self.state().stop = true;
        self.shared.1.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The heartbeat thread: one Heartbeat per interval to the coordinator while a member.
fn beat_until_stopped(shared: &(Mutex<Beat>, Condvar), interval: Duration, config: &ClientConfig) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    // A heartbeat must come back well within the session timeout to be of any use.
    let mut config = config.clone();
    config.request_timeout = interval.max(Duration::from_secs(1)) * 3;
    let mut conn: Option<(i32, Connection)> = None;
    loop {
        let target = {
            let guard = shared.0.lock().unwrap_or_else(|e| e.into_inner());
            let (guard, _) = shared
                .1
                .wait_timeout_while(guard, interval, |b| !b.stop)
                .unwrap_or_else(|e| e.into_inner());
            if guard.stop {
                return;
            }
            guard.target.clone()
        };
        let Some(target) = target else {
            continue;
        };
        let code = runtime.block_on(async {
            if conn.as_ref().is_none_or(|(id, _)| *id != target.node_id) {
                let opened =
                    connect_broker(target.node_id, &target.host, target.port, &config).await;
                conn = opened.ok().map(|c| (target.node_id, c));
            }
            let (_, c) = conn.as_mut()?;
            let request = HeartbeatRequest::default()
                .with_group_id(group_id(&target.group))
                .with_generation_id(target.generation)
                .with_member_id(StrBytes::from_string(target.member_id.clone()));
            let version = c.version::<HeartbeatRequest>().ok()?;
            c.send(&request, version).await.ok().map(|r| r.error_code)
        });
        let rejoin = match code {
            None => {
                // No answer: try a fresh connection next time; the session timeout decides.
                conn = None;
                false
            }
            Some(0) => false,
            Some(REBALANCE_IN_PROGRESS | ILLEGAL_GENERATION | UNKNOWN_MEMBER_ID)
            | Some(FENCED_INSTANCE_ID) => true,
            Some(c) if is_coordinator_error(c) => {
                conn = None;
                true
            }
            Some(_) => false,
        };
        if rejoin {
            let mut beat = shared.0.lock().unwrap_or_else(|e| e.into_inner());
            // Only if the answer is about the generation we still belong to.
            if beat.target.as_ref() == Some(&target) {
                beat.rejoin = true;
            }
        }
    }
}
