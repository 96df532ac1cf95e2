//! A consumer's membership of a group on a cluster with KIP-848's consumer group protocol
//! (`group.protocol=consumer`, Kafka 4.0+): one request, ConsumerGroupHeartbeat, both joins and
//! keeps the membership, and the coordinator (not a leader member) computes the assignment.
//!
//! The member id is ours, a random UUID as Java prints it (22 characters of base64url), sent
//! from the first heartbeat at member epoch 0. A background thread with its own connection to
//! the coordinator beats every `heartbeat_interval_ms` (the broker decides), telling the
//! coordinator our subscription and the partitions we own; the answers carry our member epoch
//! and, when it changed, our target assignment by topic id.
//!
//! The consumer's own thread reconciles in [`ConsumerMember::poll`]: it names the topic ids
//! (Metadata), gives up owned partitions outside the target (committing their positions first
//! when auto-commit is on), takes the new ones at their committed offsets (OffsetFetch), and
//! hands the new owned set to the heartbeat thread, whose next heartbeat (sent at once)
//! acknowledges it. Partitions the coordinator takes from another member only reach us after
//! that member acknowledged giving them up, so no partition is ever read twice at once.
//!
//! Fenced (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID): every partition is dropped without a commit
//! and the member rejoins at epoch 0 with the same id. Leaving is a heartbeat at epoch -1.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use base64::Engine;
use kafka_protocol::messages::consumer_group_heartbeat_request::TopicPartitions;
use kafka_protocol::messages::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::connection::{ClientConfig, Connection, connect_broker};
use super::coordinator::{Coordinator, CoordinatorLink, group_id, is_coordinator_error};
use super::error::{RemoteError, Result};
use super::fetch::Fetcher;
use super::membership::{Change, MemberSettings, Partitions, TopicPartition, flatten, millis};

/// ILLEGAL_GENERATION.
const ILLEGAL_GENERATION: i16 = 22;
/// UNKNOWN_MEMBER_ID.
const UNKNOWN_MEMBER_ID: i16 = 25;
/// REBALANCE_IN_PROGRESS.
const REBALANCE_IN_PROGRESS: i16 = 27;
/// UNSUPPORTED_VERSION: the coordinator does not speak the consumer protocol.
const UNSUPPORTED_VERSION: i16 = 35;
/// FENCED_MEMBER_EPOCH: the coordinator moved on without us.
const FENCED_MEMBER_EPOCH: i16 = 110;
/// STALE_MEMBER_EPOCH: a commit carried an epoch the member has since left behind.
const STALE_MEMBER_EPOCH: i16 = 113;
/// The member epoch of a heartbeat that leaves the group.
const LEAVE_EPOCH: i32 = -1;

/// A partition assignment by topic id.
type ById = BTreeMap<Uuid, BTreeSet<i32>>;

/// A new member id: a random UUID in base64url without padding, as Java's
/// `Uuid.randomUuid().toString()`, which also never starts one with '-' (it would read as an
/// option on a command line).
pub fn new_member_id() -> String {
    loop {
        let bytes: [u8; 16] = rand::random();
        let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        if !id.starts_with('-') && bytes != [0; 16] {
            return id;
        }
    }
}

/// This process's membership of one consumer-protocol group.
#[derive(Debug)]
pub struct ConsumerMember {
    settings: MemberSettings,
    config: ClientConfig,
    /// The consumer thread's own connection to the coordinator, for commits and offsets.
    link: CoordinatorLink,
    member_id: String,
    /// Owned partitions by topic name.
    owned: Partitions,
    /// The ids of the topics we were assigned, by name.
    ids: BTreeMap<String, Uuid>,
    /// Whether a heartbeat was ever sent (then leaving is worth a heartbeat).
    joined: bool,
    heartbeat: Heartbeat,
}

impl ConsumerMember {
    /// A member that has not joined yet; the first [`ConsumerMember::poll`] joins.
    pub fn new(settings: MemberSettings, config: &ClientConfig) -> ConsumerMember {
        let member_id = new_member_id();
        let heartbeat = Heartbeat::start(
            settings.clone(),
            member_id.clone(),
            settings.heartbeat_interval,
            config.clone(),
        );
        let link = CoordinatorLink::new(&settings.group_id, config.clone(), settings.retry_backoff);
        ConsumerMember {
            settings,
            config: config.clone(),
            link,
            member_id,
            owned: Partitions::new(),
            ids: BTreeMap::new(),
            joined: false,
            heartbeat,
        }
    }

    /// Joins on the first call; afterwards follows what the heartbeats brought back: drops
    /// every partition when fenced, finds the coordinator again when it moved, reconciles a new
    /// target assignment. `positions` are the next offsets to read of the partitions owned
    /// now, committed before they are given up when `commit` is set.
    pub async fn poll(
        &mut self,
        fetcher: &mut Fetcher,
        subscription: &BTreeMap<String, u32>,
        positions: &BTreeMap<TopicPartition, i64>,
        commit: bool,
    ) -> Result<Change> {
        let mut change = Change::default();
        let (fenced, rediscover) = {
            let mut s = self.heartbeat.state();
            if let Some((code, message)) = s.failure.take() {
                return Err(self.group_error(code, message.as_deref()));
            }
            let names: Vec<String> = subscription.keys().cloned().collect();
            if s.subscription != names {
                s.subscription = names;
                s.beat_now = true;
            }
            (
                std::mem::take(&mut s.fenced),
                s.target.is_none() || std::mem::take(&mut s.rediscover),
            )
        };
        if fenced {
            // Lost, not revoked: another member may own them already, so no commit.
            change.revoked = flatten(&self.owned);
            self.owned.clear();
            let mut s = self.heartbeat.state();
            s.owned.clear();
            s.beat_now = true;
        }
        if rediscover {
            self.rediscover(fetcher).await?;
        }
        self.heartbeat.wake();
        if !self.joined {
            self.joined = true;
            self.await_first_answer().await?;
        }
        let assignment = self.heartbeat.state().assignment.take();
        let Some(assignment) = assignment else {
            return Ok(change);
        };
        let Some(target) = self.name(fetcher, &assignment).await? else {
            // A topic we cannot name yet (just created): try again at the next poll, unless a
            // newer assignment arrived meanwhile.
            self.heartbeat.state().assignment.get_or_insert(assignment);
            return Ok(change);
        };
        let revoked: Vec<TopicPartition> = flatten(&self.owned)
            .into_iter()
            .filter(|(t, p)| !target.get(t).is_some_and(|ps| ps.contains(&(*p as i32))))
            .collect();
        let mut acquired = Partitions::new();
        for (t, ps) in &target {
            for p in ps {
                if !self.owned.get(t).is_some_and(|o| o.contains(p)) {
                    acquired.entry(t.clone()).or_default().insert(*p);
                }
            }
        }
        if commit && !revoked.is_empty() {
            let theirs: BTreeMap<TopicPartition, i64> = positions
                .iter()
                .filter(|(tp, _)| revoked.contains(tp))
                .map(|(tp, o)| (tp.clone(), *o))
                .collect();
            self.commit(fetcher, &theirs).await?;
        }
        let committed = self.committed(fetcher, &acquired).await?;
        change.revoked.extend(revoked);
        change.acquired = flatten(&acquired)
            .into_iter()
            .map(|tp| {
                let offset = committed.get(&tp).copied();
                (tp, offset)
            })
            .collect();
        self.owned = target;
        let by_id: ById = self
            .owned
            .iter()
            .filter_map(|(t, ps)| Some((*self.ids.get(t)?, ps.clone())))
            .collect();
        {
            let mut s = self.heartbeat.state();
            s.owned = by_id;
            s.beat_now = true;
        }
        self.heartbeat.wake();
        Ok(change)
    }

    /// Finds the coordinator again and aims the heartbeat thread at it.
    async fn rediscover(&mut self, fetcher: &mut Fetcher) -> Result<()> {
        self.link.forget();
        let coordinator = self.coordinator(fetcher).await?;
        let target = Target {
            node_id: coordinator.node_id,
            host: coordinator.host.clone(),
            port: coordinator.port,
        };
        let mut s = self.heartbeat.state();
        s.target = Some(target);
        s.beat_now = true;
        Ok(())
    }

    /// Commits `positions` (next offsets to read) at our member epoch. A commit refused
    /// because our epoch is stale or we were fenced is dropped, as Kafka's auto-commit drops
    /// it: the next poll catches up, and a partition's next owner starts from the last commit.
    pub async fn commit(
        &mut self,
        fetcher: &mut Fetcher,
        positions: &BTreeMap<TopicPartition, i64>,
    ) -> Result<()> {
        let epoch = self.heartbeat.state().epoch;
        if epoch <= 0 || positions.is_empty() {
            return Ok(());
        }
        let code = self
            .link
            .commit(fetcher.bootstrap(), epoch, &self.member_id, positions)
            .await?;
        match code {
            0 => Ok(()),
            // Our epoch moved on, or we were fenced: the next poll catches up.
            STALE_MEMBER_EPOCH
            | FENCED_MEMBER_EPOCH
            | UNKNOWN_MEMBER_ID
            | ILLEGAL_GENERATION
            | REBALANCE_IN_PROGRESS => Ok(()),
            c => Err(self.group_error(c, None)),
        }
    }

    /// Commits `positions` when asked, then leaves the group with a heartbeat at epoch -1, so
    /// that the others get our partitions at once instead of after the session timeout.
    pub async fn leave(
        mut self,
        fetcher: &mut Fetcher,
        positions: &BTreeMap<TopicPartition, i64>,
        commit: bool,
    ) -> Result<()> {
        self.heartbeat.stop();
        if !self.joined {
            return Ok(());
        }
        if commit {
            self.commit(fetcher, positions).await?;
        }
        let request = ConsumerGroupHeartbeatRequest::default()
            .with_group_id(group_id(&self.settings.group_id))
            .with_member_id(StrBytes::from_string(self.member_id.clone()))
            .with_member_epoch(LEAVE_EPOCH);
        // Leaving is a courtesy: if the coordinator has already forgotten us, so much the better.
        let _ = self.link.send(fetcher.bootstrap(), &request).await;
        Ok(())
    }

    /// Waits until the coordinator answered our first heartbeat (or refused it), so that the
    /// first poll of a consumer alone in its group already has its partitions.
    async fn await_first_answer(&mut self) -> Result<()> {
        let deadline = tokio::time::Instant::now() + self.config.request_timeout;
        loop {
            {
                let mut s = self.heartbeat.state();
                if let Some((code, message)) = s.failure.take() {
                    drop(s);
                    return Err(self.group_error(code, message.as_deref()));
                }
                if s.answered || s.target.is_none() {
                    return Ok(());
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The assignment by topic name, or `None` while a topic id is unknown to the cluster's
    /// metadata.
    async fn name(
        &mut self,
        fetcher: &mut Fetcher,
        assignment: &ById,
    ) -> Result<Option<Partitions>> {
        let known = |ids: &BTreeMap<String, Uuid>| {
            assignment.keys().all(|id| ids.values().any(|v| v == id))
        };
        if !known(&self.ids) {
            // After a lost connection (a broker restart) this connects again, or fails with why.
            fetcher.bootstrap().live_connection().await?;
            let meta = fetcher.bootstrap().metadata(None).await?;
            for t in meta.topics {
                let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&t.id)
                else {
                    continue;
                };
                if let Ok(id) = Uuid::from_slice(&bytes) {
                    self.ids.insert(t.name, id);
                }
            }
            if !known(&self.ids) {
                return Ok(None);
            }
        }
        let mut out = Partitions::new();
        for (name, id) in &self.ids {
            if let Some(ps) = assignment.get(id).filter(|ps| !ps.is_empty()) {
                out.insert(name.clone(), ps.clone());
            }
        }
        Ok(Some(out))
    }

    /// The group's committed offsets of `partitions` (stable ones).
    async fn committed(
        &mut self,
        fetcher: &mut Fetcher,
        partitions: &Partitions,
    ) -> Result<BTreeMap<TopicPartition, i64>> {
        match self.link.committed(fetcher.bootstrap(), partitions).await? {
            Ok(offsets) => Ok(offsets),
            Err(code) => Err(self.group_error(code, None)),
        }
    }

    /// The coordinator, found first when needed; refused when it cannot speak the consumer
    /// protocol.
    async fn coordinator(&mut self, fetcher: &mut Fetcher) -> Result<&Coordinator> {
        let boot = fetcher.bootstrap();
        let speaks = self
            .link
            .get(boot)
            .await?
            .conn
            .version::<ConsumerGroupHeartbeatRequest>()
            .is_ok();
        if !speaks {
            let addr = self.link.addr();
            self.link.forget();
            return Err(unsupported(&addr, None));
        }
        Ok(self.link.current().expect("found above"))
    }

    /// A group error the member cannot recover from, in one line naming the group.
    fn group_error(&self, code: i16, message: Option<&str>) -> RemoteError {
        if code == UNSUPPORTED_VERSION {
            return unsupported(&self.link.addr(), message);
        }
        let e = RemoteError::broker(code, message);
        RemoteError::Broker {
            code,
            message: format!(
                "consumer group {} refused member {}: {e}",
                self.settings.group_id, self.member_id
            ),
        }
    }
}

impl Drop for ConsumerMember {
    fn drop(&mut self) {
        self.heartbeat.stop();
    }
}

/// The coordinator at `addr` does not speak the consumer group protocol.
fn unsupported(addr: &str, message: Option<&str>) -> RemoteError {
    let why = message.map(|m| format!(" ({m})")).unwrap_or_default();
    RemoteError::Broker {
        code: UNSUPPORTED_VERSION,
        message: format!(
            "the group coordinator {addr} does not support group.protocol=consumer (KIP-848: Kafka 4.0 or later with 'consumer' in group.coordinator.rebalance.protocols){why}; use --command-property group.protocol=classic"
        ),
    }
}

/// The coordinator the heartbeat thread beats to.
#[derive(Debug, Clone, PartialEq)]
struct Target {
    node_id: i32,
    host: String,
    port: i32,
}

/// What the consumer thread and the heartbeat thread share.
#[derive(Debug, Default)]
struct Beat {
    /// `None` until the consumer thread found the coordinator (again).
    target: Option<Target>,
    /// The member epoch: 0 to (re)join.
    epoch: i32,
    /// The subscribed topic names.
    subscription: Vec<String>,
    /// The partitions the consumer thread owns, acknowledged in every heartbeat.
    owned: ById,
    /// The latest target assignment from the coordinator, not reconciled yet.
    assignment: Option<ById>,
    /// Set by the heartbeat thread: we were fenced; it waits until the consumer thread has
    /// dropped its partitions before rejoining.
    fenced: bool,
    /// The coordinator moved or went away: the consumer thread finds it again.
    rediscover: bool,
    /// A refusal the member cannot recover from: (error code, the broker's message).
    failure: Option<(i16, Option<String>)>,
    /// The coordinator answered a heartbeat.
    answered: bool,
    /// Send the next heartbeat now rather than at the interval.
    beat_now: bool,
    stop: bool,
}

/// The heartbeat thread and its shared state.
#[derive(Debug)]
struct Heartbeat {
    shared: Arc<(Mutex<Beat>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

/// What the heartbeat thread needs to know of the member, fixed for its life.
struct Identity {
    group: String,
    member_id: String,
    rebalance_timeout: Duration,
}

impl Heartbeat {
    fn start(
        settings: MemberSettings,
        member_id: String,
        interval: Duration,
        config: ClientConfig,
    ) -> Heartbeat {
        let shared = Arc::new((Mutex::new(Beat::default()), Condvar::new()));
        let theirs = Arc::clone(&shared);
        let identity = Identity {
            group: settings.group_id,
            member_id,
            rebalance_timeout: settings.rebalance_timeout,
        };
        let thread = std::thread::Builder::new()
            .name("heartbeat".to_string())
            .spawn(move || beat_until_stopped(&theirs, &identity, interval, &config))
            .ok();
        Heartbeat { shared, thread }
    }

    fn state(&self) -> MutexGuard<'_, Beat> {
        // The thread never panics while holding the lock; a poisoned lock still holds a Beat.
        self.shared.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wake(&self) {
        self.shared.1.notify_all();
    }

    fn stop(&mut self) {
        self.state().stop = true;
        self.wake();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The heartbeat thread: a ConsumerGroupHeartbeat per interval (or at once when asked) while
/// the coordinator is known and we are not fenced.
fn beat_until_stopped(
    shared: &(Mutex<Beat>, Condvar),
    identity: &Identity,
    interval: Duration,
    config: &ClientConfig,
) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let mut interval = interval;
    let mut conn: Option<(i32, Connection)> = None;
    loop {
        let (target, request) = {
            let guard = shared.0.lock().unwrap_or_else(|e| e.into_inner());
            let (mut beat, _) = shared
                .1
                .wait_timeout_while(guard, interval, |b| !b.stop && !b.beat_now)
                .unwrap_or_else(|e| e.into_inner());
            if beat.stop {
                return;
            }
            beat.beat_now = false;
            let Some(target) = beat.target.clone() else {
                continue;
            };
            if beat.fenced || beat.failure.is_some() {
                continue;
            }
            (target, heartbeat_request(&beat, identity))
        };
        let epoch = request.member_epoch;
        let answer = runtime.block_on(async {
            if conn.as_ref().is_none_or(|(id, _)| *id != target.node_id) {
                let opened =
                    connect_broker(target.node_id, &target.host, target.port, config).await;
                conn = opened.ok().map(|c| (target.node_id, c));
            }
            let (_, c) = conn.as_mut()?;
            let version = c.version::<ConsumerGroupHeartbeatRequest>().ok()?;
            c.send(&request, version).await.ok()
        });
        let mut beat = shared.0.lock().unwrap_or_else(|e| e.into_inner());
        let Some(response) = answer else {
            // No answer: the consumer thread finds the coordinator again (it may have moved
            // or restarted); the session timeout decides whether we are still a member.
            conn = None;
            beat.target = None;
            beat.rediscover = true;
            continue;
        };
        apply(&mut beat, response, epoch, &mut interval);
        if beat.target.is_none() {
            conn = None;
        }
    }
}

/// The next heartbeat: the full state every time (the coordinator accepts unchanged fields).
fn heartbeat_request(beat: &Beat, identity: &Identity) -> ConsumerGroupHeartbeatRequest {
    let owned = if beat.epoch == 0 {
        // Joining: the coordinator requires an empty list.
        Vec::new()
    } else {
        beat.owned
            .iter()
            .map(|(id, ps)| {
                TopicPartitions::default()
                    .with_topic_id(*id)
                    .with_partitions(ps.iter().copied().collect())
            })
            .collect()
    };
    ConsumerGroupHeartbeatRequest::default()
        .with_group_id(group_id(&identity.group))
        .with_member_id(StrBytes::from_string(identity.member_id.clone()))
        .with_member_epoch(beat.epoch)
        .with_rebalance_timeout_ms(millis(identity.rebalance_timeout))
        .with_subscribed_topic_names(Some(
            beat.subscription
                .iter()
                .map(|t| TopicName(StrBytes::from_string(t.clone())))
                .collect(),
        ))
        .with_server_assignor(None)
        .with_topic_partitions(Some(owned))
}

/// Applies the coordinator's answer to a heartbeat sent at `epoch`.
fn apply(
    beat: &mut Beat,
    response: ConsumerGroupHeartbeatResponse,
    epoch: i32,
    interval: &mut Duration,
) {
    match response.error_code {
        0 => {
            beat.answered = true;
            beat.epoch = response.member_epoch;
            if response.heartbeat_interval_ms > 0 {
                *interval = Duration::from_millis(response.heartbeat_interval_ms as u64);
            }
            if let Some(a) = response.assignment {
                beat.assignment = Some(
                    a.topic_partitions
                        .into_iter()
                        .map(|t| (t.topic_id, t.partitions.into_iter().collect()))
                        .collect(),
                );
            }
        }
        FENCED_MEMBER_EPOCH | UNKNOWN_MEMBER_ID => {
            // Only if the answer is about the membership we still have.
            if beat.epoch == epoch {
                beat.fenced = true;
                beat.epoch = 0;
                beat.assignment = None;
                beat.beat_now = true;
            }
        }
        c if is_coordinator_error(c) => {
            beat.target = None;
            beat.rediscover = true;
        }
        c => {
            beat.answered = true;
            beat.failure = Some((c, response.error_message.map(|m| m.to_string())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_ids_look_like_javas_uuids() {
        for _ in 0..200 {
            let id = new_member_id();
            assert_eq!(id.len(), 22, "{id}");
            assert!(!id.starts_with('-'), "{id}");
            assert!(
                id.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                "{id}"
            );
        }
        assert_ne!(new_member_id(), new_member_id());
    }
}
