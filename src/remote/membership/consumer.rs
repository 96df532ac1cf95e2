//! A consumer's membership of a group with KIP-848's consumer group protocol
//! (`group.protocol=consumer`, Kafka 4.0+): one request, ConsumerGroupHeartbeat, both joins and
//! keeps the membership, and the coordinator (not a leader member) computes the assignment.
//!
//! The member id is ours, a random UUID as Java prints it (22 characters of base64url), sent
//! from the first heartbeat at member epoch 0. The `heartbeat` thread beats every
//! `heartbeat_interval_ms` (the broker decides), telling the coordinator our subscription and
//! the partitions we own; the answers carry our member epoch and, when it changed, our target
//! assignment by topic id.
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
use std::time::Duration;

use kafka_protocol::messages::consumer_group_heartbeat_request::TopicPartitions;
use kafka_protocol::messages::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::heartbeat::{Beats, Heartbeat, Link, Node};
use super::{
    AssignmentChange, Consuming, ILLEGAL_GENERATION, MemberSettings, Partitions, Positions,
    REBALANCE_IN_PROGRESS, Session, TopicPartition, UNKNOWN_MEMBER_ID, flatten, millis,
};
use crate::kafka::uuid::{random_uuid_string, uuid_from_string};
use crate::remote::coordinator::{Coordinator, group_id, is_coordinator_error};
use crate::remote::error::{RemoteError, Result};
use crate::remote::fetch::Fetcher;
use crate::remote::net::connection::ClientConfig;

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

/// This process's membership of one consumer-protocol group.
#[derive(Debug)]
pub struct ConsumerMember {
    session: Session,
    config: ClientConfig,
    /// The ids of the topics we were assigned, by name.
    ids: BTreeMap<String, Uuid>,
    /// Whether a heartbeat was ever sent (then leaving is worth a heartbeat).
    joined: bool,
    heartbeat: Heartbeat<ConsumerBeats>,
}

impl ConsumerMember {
    /// A member that has not joined yet; the first [`ConsumerMember::poll`] joins.
    pub fn new(settings: MemberSettings, config: &ClientConfig) -> ConsumerMember {
        let member_id = random_uuid_string();
        let beats = ConsumerBeats {
            group: settings.group_id.clone(),
            member_id: member_id.clone(),
            rebalance_timeout: settings.rebalance_timeout,
            interval: settings.heartbeat_interval,
            target: None,
            epoch: 0,
            subscription: Vec::new(),
            owned: ById::new(),
            assignment: None,
            fenced: false,
            rediscover: false,
            failure: None,
            answered: false,
            beat_now: false,
        };
        ConsumerMember {
            session: Session::new(settings, config.clone(), member_id),
            config: config.clone(),
            ids: BTreeMap::new(),
            joined: false,
            heartbeat: Heartbeat::start(beats, config.clone()),
        }
    }

    /// Joins on the first call; afterwards follows what the heartbeats brought back: drops
    /// every partition when fenced, finds the coordinator again when it moved, reconciles a new
    /// target assignment.
    pub async fn poll(
        &mut self,
        fetcher: &mut Fetcher,
        now: Consuming<'_>,
    ) -> Result<AssignmentChange> {
        let lost = self.follow(fetcher, now.subscription).await?;
        let mut change = AssignmentChange {
            fenced: lost.is_some(),
            revoked: lost.unwrap_or_default(),
            ..AssignmentChange::default()
        };
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
        let owned = &self.session.owned;
        let revoked: Vec<TopicPartition> = flatten(owned)
            .into_iter()
            .filter(|(t, p)| !target.get(t).is_some_and(|ps| ps.contains(p)))
            .collect();
        let mut acquired = Partitions::new();
        for (t, ps) in &target {
            for p in ps {
                if !owned.get(t).is_some_and(|o| o.contains(p)) {
                    acquired.entry(t.clone()).or_default().insert(*p);
                }
            }
        }
        if self.session.settings.auto_commit && !revoked.is_empty() {
            let theirs: Positions = now
                .positions
                .iter()
                .filter(|(tp, _)| revoked.contains(tp))
                .map(|(tp, o)| (tp.clone(), *o))
                .collect();
            self.commit(fetcher, &theirs).await?;
        }
        change.acquired = self
            .session
            .with_committed(fetcher, &acquired, |s, code| group_error(s, code, None))
            .await?;
        change.revoked.extend(revoked);
        self.session.owned = target;
        let by_id: ById = self
            .session
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

    /// Follows what the heartbeats brought back, before reconciling: a refusal, a new
    /// subscription to send, a fencing (every partition dropped, returned), a coordinator to
    /// find again; the first call waits for the first answer.
    async fn follow(
        &mut self,
        fetcher: &mut Fetcher,
        subscription: &BTreeMap<String, u32>,
    ) -> Result<Option<Vec<TopicPartition>>> {
        let (fenced, rediscover) = {
            let mut s = self.heartbeat.state();
            if let Some((code, message)) = s.failure.take() {
                drop(s);
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
        let mut lost = None;
        if fenced {
            // Lost, not revoked: another member may own them already, so no commit.
            lost = Some(self.session.give_up_all());
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
        Ok(lost)
    }

    /// Finds the coordinator again and aims the heartbeat thread at it.
    async fn rediscover(&mut self, fetcher: &mut Fetcher) -> Result<()> {
        self.session.link.forget();
        let joined = self.joined;
        let node = match self.coordinator(fetcher).await {
            Ok(link) => Node::from(link),
            // No coordinator within reach now: once in the group, the partitions on live
            // brokers are still read this round, and the next poll asks again.
            Err(e) if e.is_connection() && joined => {
                self.heartbeat.state().rediscover = true;
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let mut s = self.heartbeat.state();
        s.target = Some(node);
        s.beat_now = true;
        Ok(())
    }

    /// Commits `positions` (next offsets to read) at our member epoch. A commit refused
    /// because our epoch is stale or we were fenced is dropped, as Kafka's auto-commit drops
    /// it: the next poll catches up, and a partition's next owner starts from the last commit.
    pub async fn commit(&mut self, fetcher: &mut Fetcher, positions: &Positions) -> Result<()> {
        let epoch = self.heartbeat.state().epoch;
        if epoch <= 0 || positions.is_empty() {
            return Ok(());
        }
        match self.session.commit(fetcher, epoch, positions).await? {
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

    /// Commits `positions` with auto-commit, then leaves the group with a heartbeat at epoch
    /// -1, so that the others get our partitions at once instead of after the session timeout.
    pub async fn leave(mut self, fetcher: &mut Fetcher, positions: &Positions) -> Result<()> {
        self.heartbeat.stop();
        if !self.joined {
            return Ok(());
        }
        if self.session.settings.auto_commit {
            self.commit(fetcher, positions).await?;
        }
        let request = ConsumerGroupHeartbeatRequest::default()
            .with_group_id(group_id(&self.session.settings.group_id))
            .with_member_id(StrBytes::from_string(self.session.member_id.clone()))
            .with_member_epoch(LEAVE_EPOCH);
        self.session.leave(fetcher, &request).await;
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
                // A topic whose id does not read is one no assignment can name.
                if let Ok(bytes) = uuid_from_string(&t.id) {
                    self.ids.insert(t.name, Uuid::from_bytes(bytes));
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

    /// The coordinator, found first when needed; refused when it cannot speak the consumer
    /// protocol.
    async fn coordinator(&mut self, fetcher: &mut Fetcher) -> Result<&Coordinator> {
        let link = &mut self.session.link;
        let speaks = link
            .get(fetcher.bootstrap())
            .await?
            .conn
            .version::<ConsumerGroupHeartbeatRequest>()
            .is_ok();
        if !speaks {
            let addr = link.addr();
            link.forget();
            return Err(unsupported(&addr, None));
        }
        Ok(link.current().expect("found above"))
    }

    /// A group error the member cannot recover from, in one line naming the group.
    fn group_error(&self, code: i16, message: Option<&str>) -> RemoteError {
        group_error(&self.session, code, message)
    }
}

/// A group error the member of `session` cannot recover from, in one line naming the group.
fn group_error(session: &Session, code: i16, message: Option<&str>) -> RemoteError {
    if code == UNSUPPORTED_VERSION {
        return unsupported(&session.link.addr(), message);
    }
    session.refused(code, message, &format!("member {}", session.member_id))
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

/// What the consumer thread and the heartbeat thread share.
#[derive(Debug)]
struct ConsumerBeats {
    group: String,
    member_id: String,
    rebalance_timeout: Duration,
    /// Between heartbeats: `heartbeat.interval.ms` until the coordinator says.
    interval: Duration,
    /// `None` until the consumer thread found the coordinator (again).
    target: Option<Node>,
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
}

impl Beats for ConsumerBeats {
    type Request = ConsumerGroupHeartbeatRequest;

    fn interval(&self) -> Duration {
        self.interval
    }

    fn urgent(&self) -> bool {
        self.beat_now
    }

    /// While the coordinator is known and we are not fenced: the full state every time (the
    /// coordinator accepts unchanged fields).
    fn next(&mut self) -> Option<(Node, ConsumerGroupHeartbeatRequest)> {
        self.beat_now = false;
        let target = self.target.clone()?;
        if self.fenced || self.failure.is_some() {
            return None;
        }
        let owned = if self.epoch == 0 {
            // Joining: the coordinator requires an empty list.
            Vec::new()
        } else {
            self.owned
                .iter()
                .map(|(id, ps)| {
                    TopicPartitions::default()
                        .with_topic_id(*id)
                        .with_partitions(ps.iter().copied().collect())
                })
                .collect()
        };
        let request = ConsumerGroupHeartbeatRequest::default()
            .with_group_id(group_id(&self.group))
            .with_member_id(StrBytes::from_string(self.member_id.clone()))
            .with_member_epoch(self.epoch)
            .with_rebalance_timeout_ms(millis(self.rebalance_timeout))
            .with_subscribed_topic_names(Some(
                self.subscription
                    .iter()
                    .map(|t| TopicName(StrBytes::from_string(t.clone())))
                    .collect(),
            ))
            .with_server_assignor(None)
            .with_topic_partitions(Some(owned));
        Some((target, request))
    }

    fn answer(
        &mut self,
        _node: &Node,
        request: &ConsumerGroupHeartbeatRequest,
        answer: Option<ConsumerGroupHeartbeatResponse>,
    ) -> Link {
        match answer {
            Some(response) => self.apply(response, request.member_epoch),
            None => {
                // No answer: the consumer thread finds the coordinator again (it may have
                // moved or restarted); the session timeout decides whether we are still a
                // member.
                self.target = None;
                self.rediscover = true;
            }
        }
        if self.target.is_none() {
            Link::Drop
        } else {
            Link::Keep
        }
    }
}

impl ConsumerBeats {
    /// Applies the coordinator's answer to a heartbeat sent at `epoch`.
    fn apply(&mut self, response: ConsumerGroupHeartbeatResponse, epoch: i32) {
        match response.error_code {
            0 => {
                self.answered = true;
                self.epoch = response.member_epoch;
                if response.heartbeat_interval_ms > 0 {
                    self.interval = Duration::from_millis(response.heartbeat_interval_ms as u64);
                }
                if let Some(a) = response.assignment {
                    self.assignment = Some(
                        a.topic_partitions
                            .into_iter()
                            .map(|t| (t.topic_id, t.partitions.into_iter().collect()))
                            .collect(),
                    );
                }
            }
            FENCED_MEMBER_EPOCH | UNKNOWN_MEMBER_ID => {
                // Only if the answer is about the membership we still have.
                if self.epoch == epoch {
                    self.fenced = true;
                    self.epoch = 0;
                    self.assignment = None;
                    self.beat_now = true;
                }
            }
            c if is_coordinator_error(c) => {
                self.target = None;
                self.rediscover = true;
            }
            c => {
                self.answered = true;
                self.failure = Some((c, response.error_message.map(|m| m.to_string())));
            }
        }
    }
}
