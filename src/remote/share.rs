//! A member of a share group on a cluster (KIP-932).
//!
//! ShareGroupHeartbeat at the group's coordinator joins (member epoch 0, with the subscription
//! and a member id of our own), keeps the membership and brings the assignment, by topic id;
//! a topic's partitions are assigned only once the group's state for them is initialized, about
//! a heartbeat after the join, so heartbeats come every 500 ms until the first assignment.
//!
//! ShareFetch at each assigned partition's leader acquires records within a share session per
//! leader (epoch 0 opens it, then 1, 2, ...) and carries the acknowledgements of the records
//! the previous fetches delivered. At the end, ShareAcknowledge at epoch -1 sends the last
//! acknowledgements and closes each session (the leader releases what the member still
//! holds), and a heartbeat at epoch -1 leaves the group.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::messages::share_acknowledge_request::{
    AcknowledgePartition, AcknowledgeTopic, AcknowledgementBatch as AckBatch,
};
use kafka_protocol::messages::share_fetch_request::{
    AcknowledgementBatch, FetchPartition, FetchTopic, ForgottenTopic,
};
use kafka_protocol::messages::{
    ShareAcknowledgeRequest, ShareFetchRequest, ShareGroupHeartbeatRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::admin::{BrokerInfo, Client};
use super::coordinator::{CoordinatorLink, group_id, is_coordinator_error};
use super::error::{RemoteError, Result};
use super::net::connection::{ClientConfig, Connection, connect_broker};
use crate::kafka::share::{AckRun, Acquired};
use crate::kafka::uuid::{random_uuid_string, uuid_from_string};

const UNKNOWN_MEMBER_ID: i16 = 25;
const UNSUPPORTED_VERSION: i16 = 35;
const FENCED_MEMBER_EPOCH: i16 = 110;
const SHARE_SESSION_NOT_FOUND: i16 = 122;
const INVALID_SHARE_SESSION_EPOCH: i16 = 123;
/// How often to heartbeat while waiting for the first assignment.
const JOIN_BEAT: Duration = Duration::from_millis(500);
/// `retry.backoff.ms`'s default: the wait after a lost coordinator.
const RETRY_BACKOFF: Duration = Duration::from_millis(100);
/// Bytes of one ShareFetch response.
const MAX_BYTES: i32 = 4 << 20;

/// A partition of the assignment: topic name and partition.
type Partition = (String, i32);
/// Acknowledgements by partition.
type Acks = BTreeMap<Partition, Vec<AckRun>>;

/// Records a ShareFetch acquired for this member in one partition.
#[derive(Debug)]
pub struct AcquiredBatches {
    pub topic: String,
    pub partition: i32,
    /// Whole record batches holding the acquired records (and maybe others).
    pub records: Bytes,
    pub acquired: Vec<Acquired>,
}

/// What one poll brought.
#[derive(Debug, Default)]
pub struct SharePolled {
    pub batches: Vec<AcquiredBatches>,
    /// Acknowledgements the leaders refused, one line each.
    pub refused: Vec<String>,
}

/// This process's membership of one share group.
#[derive(Debug)]
pub struct ShareGroupMember {
    boot: Client,
    config: ClientConfig,
    coordinator: CoordinatorLink,
    group: String,
    member_id: String,
    epoch: i32,
    subscription: Vec<String>,
    next_beat: Instant,
    interval: Duration,
    /// The assignment the last heartbeat brought, by topic id, until it is named.
    pending: Option<BTreeMap<Uuid, Vec<i32>>>,
    assignment: BTreeSet<Partition>,
    ids: BTreeMap<String, Uuid>,
    brokers: HashMap<i32, BrokerInfo>,
    conns: HashMap<i32, Connection>,
    leaders: HashMap<Partition, i32>,
    /// Each leader's share session: the epoch of the next request (0: open one) and the
    /// partitions it holds.
    sessions: HashMap<i32, (i32, BTreeSet<Partition>)>,
    /// A leader moved or a connection failed: read Metadata again before fetching.
    stale: bool,
}

impl ShareGroupMember {
    /// A member of `group` reading `topics`, not joined yet (the first poll joins).
    pub fn new(boot: Client, config: ClientConfig, group: &str, topics: &[String]) -> Self {
        let backoff = RETRY_BACKOFF;
        ShareGroupMember {
            boot,
            coordinator: CoordinatorLink::new(group, config.clone(), backoff),
            config,
            group: group.to_string(),
            member_id: random_uuid_string(),
            epoch: 0,
            subscription: topics.to_vec(),
            next_beat: Instant::now(),
            interval: JOIN_BEAT,
            pending: None,
            assignment: BTreeSet::new(),
            ids: BTreeMap::new(),
            brokers: HashMap::new(),
            conns: HashMap::new(),
            leaders: HashMap::new(),
            sessions: HashMap::new(),
            stale: true,
        }
    }

    pub fn member_id(&self) -> &str {
        &self.member_id
    }

    /// Heartbeats when due, follows the assignment, and fetches from each assigned
    /// partition's leader, sending `acks` with the fetches (waiting up to `max_wait` for
    /// records).
    pub async fn poll(
        &mut self,
        acks: Acks,
        max_records: usize,
        max_wait: Duration,
    ) -> Result<SharePolled> {
        if Instant::now() >= self.next_beat {
            self.heartbeat().await?;
        }
        self.follow_assignment().await?;
        let mut polled = SharePolled::default();
        if self.assignment.is_empty() && acks.is_empty() {
            tokio::time::sleep(
                max_wait.min(self.next_beat.saturating_duration_since(Instant::now())),
            )
            .await;
            return Ok(polled);
        }
        if self.stale
            || self
                .assignment
                .iter()
                .any(|p| !self.leaders.contains_key(p))
        {
            self.refresh_leaders().await?;
        }
        let mut by_leader: BTreeMap<i32, (Vec<Partition>, Acks)> = BTreeMap::new();
        for p in &self.assignment {
            if let Some(leader) = self.leaders.get(p) {
                by_leader.entry(*leader).or_default().0.push(p.clone());
            }
        }
        for (p, runs) in acks {
            match self.leaders.get(&p) {
                Some(leader) => {
                    by_leader.entry(*leader).or_default().1.insert(p, runs);
                }
                None => polled.refused.push(format!(
                    "the acknowledgements of {}-{} were not sent: the partition has no leader now; its records are delivered again once their lock expires",
                    p.0, p.1
                )),
            }
        }
        for (leader, (partitions, acks)) in by_leader {
            self.fetch_from(
                leader,
                &partitions,
                acks,
                max_records,
                max_wait,
                &mut polled,
            )
            .await?;
        }
        Ok(polled)
    }

    /// Sends the last acknowledgements, closes every share session (the leaders release what
    /// this member still holds) and leaves the group.
    pub async fn close(&mut self, acks: Acks) -> Result<()> {
        let mut by_leader: BTreeMap<i32, Acks> = BTreeMap::new();
        for (p, runs) in acks {
            if let Some(leader) = self.leaders.get(&p) {
                by_leader.entry(*leader).or_default().insert(p, runs);
            }
        }
        let leaders: Vec<i32> = self.sessions.keys().copied().collect();
        for leader in leaders {
            let acks = by_leader.remove(&leader).unwrap_or_default();
            let request = ShareAcknowledgeRequest::default()
                .with_group_id(Some(group_id(&self.group)))
                .with_member_id(Some(StrBytes::from_string(self.member_id.clone())))
                .with_share_session_epoch(-1)
                .with_topics(self.ack_topics(&acks));
            if let Some(conn) = self.conn(leader).await? {
                let version = conn.version::<ShareAcknowledgeRequest>()?;
                // A failure here only delays the release to the records' lock expiry.
                let _ = conn.send(&request, version).await;
            }
        }
        self.sessions.clear();
        if self.epoch > 0 {
            let request = ShareGroupHeartbeatRequest::default()
                .with_group_id(group_id(&self.group))
                .with_member_id(StrBytes::from_string(self.member_id.clone()))
                .with_member_epoch(-1);
            let _ = self.coordinator.send(&mut self.boot, &request).await;
        }
        Ok(())
    }

    /// One heartbeat: joins at epoch 0 (with the subscription), else keeps the membership.
    async fn heartbeat(&mut self) -> Result<()> {
        let topics = (self.epoch == 0).then(|| {
            self.subscription
                .iter()
                .map(|t| TopicName(StrBytes::from_string(t.clone())))
                .collect()
        });
        let request = ShareGroupHeartbeatRequest::default()
            .with_group_id(group_id(&self.group))
            .with_member_id(StrBytes::from_string(self.member_id.clone()))
            .with_member_epoch(self.epoch)
            .with_subscribed_topic_names(topics);
        let Some(response) = self.coordinator.send(&mut self.boot, &request).await? else {
            self.next_beat = Instant::now() + RETRY_BACKOFF;
            return Ok(());
        };
        match response.error_code {
            0 => {
                self.epoch = response.member_epoch;
                self.interval = Duration::from_millis(response.heartbeat_interval_ms.max(0) as u64);
                if let Some(assignment) = response.assignment {
                    self.pending = Some(
                        assignment
                            .topic_partitions
                            .into_iter()
                            .map(|t| (t.topic_id, t.partitions))
                            .collect(),
                    );
                }
            }
            code if is_coordinator_error(code) => self.coordinator.forget(),
            UNKNOWN_MEMBER_ID | FENCED_MEMBER_EPOCH => {
                // Fenced: rejoin at once with the same id; the leaders released our records.
                self.epoch = 0;
                self.assignment.clear();
                self.pending = None;
                self.next_beat = Instant::now();
                return Ok(());
            }
            UNSUPPORTED_VERSION => {
                return Err(RemoteError::broker(
                    UNSUPPORTED_VERSION,
                    Some(
                        "The cluster does not support the share group protocol. To use share groups, the cluster must have the share group protocol enabled.",
                    ),
                ));
            }
            code => {
                return Err(RemoteError::broker(code, response.error_message.as_deref()));
            }
        }
        // Until partitions are assigned (the group initializes their state first), beat often.
        let waiting = match &self.pending {
            Some(pending) => pending.values().all(|ps| ps.is_empty()),
            None => self.assignment.is_empty(),
        };
        self.next_beat = Instant::now() + if waiting { JOIN_BEAT } else { self.interval };
        Ok(())
    }

    /// Turns the last assignment by topic id into names (asking Metadata for ids it does not
    /// know), and drops the sessions' partitions that are gone.
    async fn follow_assignment(&mut self) -> Result<()> {
        let Some(pending) = self.pending.take() else {
            return Ok(());
        };
        let known =
            |ids: &BTreeMap<String, Uuid>| pending.keys().all(|id| ids.values().any(|v| v == id));
        if !known(&self.ids) {
            self.refresh_leaders().await?;
            if !known(&self.ids) {
                // A topic just created, not in Metadata yet: name it at the next poll.
                self.pending = Some(pending);
                return Ok(());
            }
        }
        let mut assignment = BTreeSet::new();
        for (name, id) in &self.ids {
            for p in pending.get(id).into_iter().flatten() {
                assignment.insert((name.clone(), *p));
            }
        }
        self.assignment = assignment;
        Ok(())
    }

    /// Reads Metadata for the subscribed topics: ids, leaders and brokers.
    async fn refresh_leaders(&mut self) -> Result<()> {
        self.boot.live_connection().await?;
        let meta = self.boot.metadata(Some(&self.subscription)).await?;
        self.brokers = meta.brokers.into_iter().map(|b| (b.id, b)).collect();
        for t in meta.topics {
            if t.error_code != 0 {
                continue;
            }
            if let Ok(bytes) = uuid_from_string(&t.id) {
                self.ids.insert(t.name.clone(), Uuid::from_bytes(bytes));
            }
            for p in t.partitions {
                let key = (t.name.clone(), p.partition);
                if p.leader >= 0 {
                    self.leaders.insert(key, p.leader);
                } else {
                    self.leaders.remove(&key);
                }
            }
        }
        self.conns.retain(|id, _| self.brokers.contains_key(id));
        self.stale = false;
        Ok(())
    }

    /// The connection to broker `id`, opened on first use; `None` when it cannot be reached
    /// now (the leaders are read again first next time).
    async fn conn(&mut self, id: i32) -> Result<Option<&mut Connection>> {
        if !self.conns.contains_key(&id) {
            let Some(b) = self.brokers.get(&id) else {
                self.stale = true;
                return Ok(None);
            };
            match connect_broker(b.id, &b.host, b.port, &self.config).await {
                Ok(conn) => {
                    self.conns.insert(id, conn);
                }
                Err(e) if e.is_connection() => {
                    self.stale = true;
                    self.sessions.remove(&id);
                    return Ok(None);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(self.conns.get_mut(&id))
    }

    fn topic_id(&self, topic: &str) -> Uuid {
        self.ids.get(topic).copied().unwrap_or_default()
    }

    fn ack_topics(&self, acks: &Acks) -> Vec<AcknowledgeTopic> {
        let mut topics: BTreeMap<&str, Vec<AcknowledgePartition>> = BTreeMap::new();
        for ((topic, partition), runs) in acks {
            topics.entry(topic).or_default().push(
                AcknowledgePartition::default()
                    .with_partition_index(*partition)
                    .with_acknowledgement_batches(
                        sorted_runs(runs)
                            .into_iter()
                            .map(|(first, last, kind)| {
                                AckBatch::default()
                                    .with_first_offset(first)
                                    .with_last_offset(last)
                                    .with_acknowledge_types(vec![kind.code()])
                            })
                            .collect(),
                    ),
            );
        }
        topics
            .into_iter()
            .map(|(topic, partitions)| {
                AcknowledgeTopic::default()
                    .with_topic_id(self.topic_id(topic))
                    .with_partitions(partitions)
            })
            .collect()
    }

    /// One ShareFetch at `leader` for its assigned `partitions`, with `acks`.
    async fn fetch_from(
        &mut self,
        leader: i32,
        partitions: &[Partition],
        mut acks: Acks,
        max_records: usize,
        max_wait: Duration,
        polled: &mut SharePolled,
    ) -> Result<()> {
        let (epoch, in_session) = self.sessions.get(&leader).cloned().unwrap_or_default();
        if epoch == 0 && !acks.is_empty() {
            // A new session takes no acknowledgements: the records return at their lock expiry.
            for (p, _) in std::mem::take(&mut acks) {
                polled.refused.push(format!(
                    "the acknowledgements of {}-{} were lost with the share session; those records are delivered again once their lock expires",
                    p.0, p.1
                ));
            }
        }
        let mut topics: BTreeMap<&str, Vec<FetchPartition>> = BTreeMap::new();
        let wanted: BTreeSet<&Partition> = partitions.iter().chain(acks.keys()).collect();
        for p in &wanted {
            let batches = acks.get(*p).map(|runs| {
                sorted_runs(runs)
                    .into_iter()
                    .map(|(first, last, kind)| {
                        AcknowledgementBatch::default()
                            .with_first_offset(first)
                            .with_last_offset(last)
                            .with_acknowledge_types(vec![kind.code()])
                    })
                    .collect()
            });
            topics.entry(&p.0).or_default().push(
                FetchPartition::default()
                    .with_partition_index(p.1)
                    .with_acknowledgement_batches(batches.unwrap_or_default()),
            );
        }
        let mut forgotten: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for p in in_session.iter().filter(|p| !wanted.contains(p)) {
            forgotten.entry(&p.0).or_default().push(p.1);
        }
        let request = ShareFetchRequest::default()
            .with_group_id(Some(group_id(&self.group)))
            .with_member_id(Some(StrBytes::from_string(self.member_id.clone())))
            .with_share_session_epoch(epoch)
            .with_max_wait_ms(max_wait.as_millis().min(i32::MAX as u128) as i32)
            .with_min_bytes(1)
            .with_max_bytes(MAX_BYTES)
            .with_max_records(max_records.min(i32::MAX as usize) as i32)
            .with_batch_size(max_records.min(i32::MAX as usize) as i32)
            .with_topics(
                topics
                    .into_iter()
                    .map(|(t, ps)| {
                        FetchTopic::default()
                            .with_topic_id(self.topic_id(t))
                            .with_partitions(ps)
                    })
                    .collect(),
            )
            .with_forgotten_topics_data(
                forgotten
                    .into_iter()
                    .map(|(t, ps)| {
                        ForgottenTopic::default()
                            .with_topic_id(self.topic_id(t))
                            .with_partitions(ps)
                    })
                    .collect(),
            );
        let Some(conn) = self.conn(leader).await? else {
            return Ok(());
        };
        let version = conn.version::<ShareFetchRequest>()?;
        let response = match conn.send(&request, version).await {
            Ok(r) => r,
            Err(e) if e.is_connection() => {
                // The leader dropped the session with the connection.
                self.conns.remove(&leader);
                self.sessions.remove(&leader);
                self.stale = true;
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        match response.error_code {
            0 => {}
            SHARE_SESSION_NOT_FOUND | INVALID_SHARE_SESSION_EPOCH => {
                self.sessions.remove(&leader);
                return Ok(());
            }
            code => return Err(RemoteError::broker(code, response.error_message.as_deref())),
        }
        let next = if epoch == i32::MAX { 1 } else { epoch + 1 };
        let held: BTreeSet<Partition> = wanted.into_iter().cloned().collect();
        self.sessions.insert(leader, (next, held));
        let names: HashMap<Uuid, String> =
            self.ids.iter().map(|(n, id)| (*id, n.clone())).collect();
        for topic in response.responses {
            let Some(name) = names.get(&topic.topic_id) else {
                continue;
            };
            for p in topic.partitions {
                if p.acknowledge_error_code != 0 {
                    polled.refused.push(format!(
                        "the acknowledgements of {name}-{} were refused: {}",
                        p.partition_index,
                        RemoteError::broker(
                            p.acknowledge_error_code,
                            p.acknowledge_error_message.as_deref()
                        )
                    ));
                }
                if p.error_code != 0 {
                    // NOT_LEADER_OR_FOLLOWER and the like: ask Metadata before the next fetch.
                    self.stale = true;
                    continue;
                }
                let acquired: Vec<Acquired> = p
                    .acquired_records
                    .iter()
                    .map(|a| Acquired {
                        first: a.first_offset,
                        last: a.last_offset,
                        delivery_count: a.delivery_count,
                    })
                    .collect();
                if let (Some(records), false) = (p.records, acquired.is_empty()) {
                    polled.batches.push(AcquiredBatches {
                        topic: name.clone(),
                        partition: p.partition_index,
                        records,
                        acquired,
                    });
                }
            }
        }
        Ok(())
    }
}

/// Acknowledgement runs in offset order, as a leader takes them (ascending, not overlapping).
fn sorted_runs(runs: &[AckRun]) -> Vec<AckRun> {
    let mut sorted = runs.to_vec();
    sorted.sort_by_key(|r| r.0);
    sorted
}
