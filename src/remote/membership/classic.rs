//! A consumer's membership of a group with the classic group protocol that Java consumers
//! speak: FindCoordinator, JoinGroup (twice on first join: the coordinator answers
//! MEMBER_ID_REQUIRED with our id), SyncGroup (the leader brings everyone's assignment, computed
//! with Kafka's range assignor), OffsetFetch for where to start, OffsetCommit, LeaveGroup.
//!
//! Rebalances are eager, as with Java's `RangeAssignor`: before rejoining, a member commits its
//! positions and gives up every partition, so that no two members ever read the same partition
//! and a partition's next owner starts where the last one stopped printing.
//!
//! Heartbeat requests come from the `heartbeat` thread, which only reports what the
//! coordinator says (a rebalance started, we were evicted, it went away or moved); the
//! consumer's own thread acts on it in [`GroupMember::poll`]. A coordinator that went away is
//! found again (FindCoordinator) and heartbeats go on to the new one in the same generation, as
//! Java's consumer does: the group's new coordinator knows the member from the group's log, and
//! evicts it after `session.timeout.ms` without a heartbeat.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as AssignedTopic;
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::{
    ConsumerProtocolAssignment, ConsumerProtocolSubscription, HeartbeatRequest, HeartbeatResponse,
    JoinGroupRequest, LeaveGroupRequest, SyncGroupRequest,
};
use kafka_protocol::protocol::StrBytes;

use super::heartbeat::{Beats, Heartbeat, Link, Node};
use super::{
    AssignmentChange, Consuming, ILLEGAL_GENERATION, MemberSettings, Partitions, Positions,
    REBALANCE_IN_PROGRESS, Session, UNKNOWN_MEMBER_ID, millis,
};
use crate::remote::admin::topic_name;
use crate::remote::coordinator::{group_id, is_coordinator_error};
use crate::remote::error::{RemoteError, Result};
use crate::remote::fetch::Fetcher;
use crate::remote::net::connection::ClientConfig;
use crate::wire::consumer_protocol;

/// MEMBER_ID_REQUIRED: the first JoinGroup's answer, carrying our member id.
const MEMBER_ID_REQUIRED: i16 = 79;
/// FENCED_INSTANCE_ID.
const FENCED_INSTANCE_ID: i16 = 82;
/// The assignor we offer, known to every Java consumer (in its default list since 3.0).
const RANGE: &str = "range";
/// The consumer-protocol version we write: v1 is understood by every 2.x+ client.
const PROTOCOL_VERSION: i16 = 1;

/// Whether an error code means the group moved on without this member (a rebalance, or we were
/// evicted): rejoin.
fn must_rejoin(code: i16) -> bool {
    matches!(
        code,
        REBALANCE_IN_PROGRESS | ILLEGAL_GENERATION | UNKNOWN_MEMBER_ID | FENCED_INSTANCE_ID
    )
}

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

/// This process's membership of one group.
#[derive(Debug)]
pub struct GroupMember {
    /// Its coordinator link has a request timeout that covers a JoinGroup waiting for the
    /// whole group to rejoin.
    session: Session,
    /// -1 until the first SyncGroup succeeds.
    generation: i32,
    /// The subscription (topic -> partition count) of the last join: a change means rejoin.
    joined_with: BTreeMap<String, u32>,
    heartbeat: Heartbeat<ClassicBeats>,
}

impl GroupMember {
    /// A member that has not joined yet; the first [`GroupMember::poll`] joins.
    pub fn new(settings: MemberSettings, config: &ClientConfig) -> GroupMember {
        let mut config = config.clone();
        config.request_timeout = config
            .request_timeout
            .max(settings.rebalance_timeout + Duration::from_secs(5));
        // A heartbeat must come back well within the session timeout to be of any use.
        let mut beat_config = config.clone();
        beat_config.request_timeout = settings.heartbeat_interval.max(Duration::from_secs(1)) * 3;
        let beats = ClassicBeats {
            interval: settings.heartbeat_interval,
            target: None,
            rejoin: false,
            lost: false,
        };
        GroupMember {
            session: Session::new(settings, config, String::new()),
            generation: -1,
            joined_with: BTreeMap::new(),
            heartbeat: Heartbeat::start(beats, beat_config),
        }
    }

    /// Joins the group, or rejoins when a rebalance started, we were evicted, or the
    /// subscription changed; otherwise changes nothing.
    pub async fn poll(
        &mut self,
        fetcher: &mut Fetcher,
        now: Consuming<'_>,
    ) -> Result<AssignmentChange> {
        let subscription = now.subscription;
        let (rejoin, lost) = {
            let mut beats = self.heartbeat.state();
            (std::mem::take(&mut beats.rejoin), beats.lost)
        };
        if self.generation >= 0 && !rejoin && *subscription == self.joined_with {
            if lost {
                self.rediscover(fetcher).await?;
            }
            return Ok(AssignmentChange::default());
        }
        let mut change = AssignmentChange::default();
        if self.generation >= 0 && self.session.settings.auto_commit {
            self.commit(fetcher, now.positions).await?;
        }
        change.revoked = self.session.give_up_all();
        self.aim(None);
        let assigned = self.join(fetcher, subscription).await?;
        self.joined_with = subscription.clone();
        change.acquired = self
            .session
            .with_committed(fetcher, &assigned, |s, code| {
                s.refused(code, None, "us while reading committed offsets")
            })
            .await?;
        self.session.owned = assigned;
        Ok(change)
    }

    /// Commits `positions` (next offsets to read). A commit refused because the group is
    /// rebalancing or moved on without us is dropped, as Kafka's auto-commit drops it: the
    /// next poll rejoins, and the partitions' next owner starts from the last commit.
    pub async fn commit(&mut self, fetcher: &mut Fetcher, positions: &Positions) -> Result<()> {
        if self.generation < 0 || positions.is_empty() {
            return Ok(());
        }
        match self
            .session
            .commit(fetcher, self.generation, positions)
            .await?
        {
            0 => Ok(()),
            c if must_rejoin(c) => {
                self.heartbeat.state().rejoin = true;
                Ok(())
            }
            c => Err(self.group_error(c, "committing offsets")),
        }
    }

    /// Commits `positions` with auto-commit, then leaves the group, so that the others
    /// rebalance at once instead of after `session.timeout.ms`.
    pub async fn leave(mut self, fetcher: &mut Fetcher, positions: &Positions) -> Result<()> {
        self.heartbeat.stop();
        if self.generation < 0 && self.session.member_id.is_empty() {
            return Ok(());
        }
        if self.session.settings.auto_commit {
            self.commit(fetcher, positions).await?;
        }
        let request = LeaveGroupRequest::default()
            .with_group_id(group_id(&self.session.settings.group_id))
            .with_members(vec![
                MemberIdentity::default()
                    .with_member_id(StrBytes::from_string(self.session.member_id.clone()))
                    .with_reason(Some(StrBytes::from_static_str(
                        "the consumer is being closed",
                    ))),
            ]);
        self.session.leave(fetcher, &request).await;
        Ok(())
    }

    /// Beats for `target` from now on (`None`: stop beating); a rejoin asked for before is
    /// moot.
    fn aim(&self, target: Option<Target>) {
        let mut beats = self.heartbeat.state();
        beats.target = target;
        beats.rejoin = false;
        beats.lost = false;
    }

    /// The coordinator went away or moved: finds it again (FindCoordinator names the old one
    /// until the cluster has moved the group, and a connection error then says to try again at
    /// the next poll) and aims the heartbeats at it, in the same generation.
    async fn rediscover(&mut self, fetcher: &mut Fetcher) -> Result<()> {
        self.session.link.forget();
        let link = match self.session.link.get(fetcher.bootstrap()).await {
            Ok(link) => link,
            // No coordinator within reach now: the partitions on live brokers are still read
            // this round, and the next poll asks again (the heartbeat stays lost until then).
            Err(e) if e.is_connection() => return Ok(()),
            Err(e) => return Err(e),
        };
        let node = Node::from(&*link);
        let mut beats = self.heartbeat.state();
        if let Some(target) = beats.target.as_mut() {
            target.node = node;
        }
        beats.lost = false;
        self.heartbeat.wake();
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
                .with_group_id(group_id(&self.session.settings.group_id))
                .with_session_timeout_ms(millis(self.session.settings.session_timeout))
                .with_rebalance_timeout_ms(millis(self.session.settings.rebalance_timeout))
                .with_member_id(StrBytes::from_string(self.session.member_id.clone()))
                .with_protocol_type(StrBytes::from_static_str("consumer"))
                .with_protocols(vec![
                    JoinGroupRequestProtocol::default()
                        .with_name(StrBytes::from_static_str(RANGE))
                        .with_metadata(metadata.clone()),
                ])
                .with_reason(Some(StrBytes::from_static_str("kafkit consumer joining")));
            let Some(joined) = self.session.send(fetcher, &request).await? else {
                continue;
            };
            match joined.error_code {
                0 => {}
                MEMBER_ID_REQUIRED => {
                    self.session.member_id = joined.member_id.to_string();
                    continue;
                }
                UNKNOWN_MEMBER_ID | ILLEGAL_GENERATION | FENCED_INSTANCE_ID => {
                    self.session.member_id.clear();
                    continue;
                }
                REBALANCE_IN_PROGRESS => continue,
                c if is_coordinator_error(c) => {
                    self.session.coordinator_moved().await;
                    continue;
                }
                c => return Err(self.group_error(c, "joining the group")),
            }
            self.session.member_id = joined.member_id.to_string();
            let generation = joined.generation_id;
            let protocol = joined.protocol_name.clone();
            let assignments = if joined.leader == joined.member_id {
                self.assign(fetcher, subscription, &joined.members).await?
            } else {
                Vec::new()
            };
            let request = SyncGroupRequest::default()
                .with_group_id(group_id(&self.session.settings.group_id))
                .with_generation_id(generation)
                .with_member_id(StrBytes::from_string(self.session.member_id.clone()))
                .with_protocol_type(Some(StrBytes::from_static_str("consumer")))
                .with_protocol_name(protocol)
                .with_assignments(assignments);
            let Some(synced) = self.session.send(fetcher, &request).await? else {
                continue;
            };
            match synced.error_code {
                0 => {}
                UNKNOWN_MEMBER_ID | FENCED_INSTANCE_ID => {
                    self.session.member_id.clear();
                    continue;
                }
                REBALANCE_IN_PROGRESS | ILLEGAL_GENERATION => continue,
                c if is_coordinator_error(c) => {
                    self.session.coordinator_moved().await;
                    continue;
                }
                c => return Err(self.group_error(c, "joining the group")),
            }
            let assigned = self.decode_assignment(&synced.assignment)?;
            self.generation = generation;
            let coordinator = self.session.link.current().expect("answered above");
            self.aim(Some(Target {
                node: Node::from(coordinator),
                group: self.session.settings.group_id.clone(),
                generation,
                member_id: self.session.member_id.clone(),
            }));
            return Ok(assigned);
        }
    }

    /// Our partitions, from the ConsumerProtocol assignment bytes SyncGroup returned.
    fn decode_assignment(&self, bytes: &[u8]) -> Result<Partitions> {
        let assignment =
            consumer_protocol::decode_assignment(bytes).map_err(|e| RemoteError::Protocol {
                addr: self.session.link.addr(),
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
            counts.extend(fetcher.topics(Some(&missing), false).await?);
        }
        let plan = crate::assignor::range(&counts, &subscriptions);
        plan.into_iter()
            .map(|(member, tps)| {
                let mut partitions = Partitions::new();
                for (t, p) in tps {
                    partitions.entry(t).or_default().insert(p);
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

    /// A group error the member cannot recover from, naming the group and what it was doing.
    fn group_error(&self, code: i16, doing: &str) -> RemoteError {
        // JoinGroup carries no message: say what this code means for a consumer.
        let hint = (code == kafka_protocol::ResponseError::InconsistentGroupProtocol.code())
            .then_some(
                "its members use another group protocol (group.protocol=consumer) or assignor, \
             or read it through --log-dir; join it as they do, or use another group",
            );
        self.session
            .refused(code, hint, &format!("us while {doing}"))
    }
}

/// Whom the heartbeat thread beats for.
#[derive(Debug, Clone, PartialEq)]
struct Target {
    node: Node,
    group: String,
    generation: i32,
    member_id: String,
}

/// What the consumer thread and the heartbeat thread share.
#[derive(Debug)]
struct ClassicBeats {
    /// `heartbeat.interval.ms`.
    interval: Duration,
    /// `None` while not a member (before the first join, during a rejoin).
    target: Option<Target>,
    /// The coordinator said to rejoin (a rebalance, or we were evicted).
    rejoin: bool,
    /// The coordinator did not answer, or said it no longer coordinates the group: the
    /// consumer's thread finds it again at its next poll.
    lost: bool,
}

impl Beats for ClassicBeats {
    type Request = HeartbeatRequest;

    fn interval(&self) -> Duration {
        self.interval
    }

    fn next(&mut self) -> Option<(Node, HeartbeatRequest)> {
        // Still to the last coordinator known while the consumer's thread looks for the new
        // one (it may be blocked on a slow standard output): the old one may be back.
        let target = self.target.as_ref()?;
        let request = HeartbeatRequest::default()
            .with_group_id(group_id(&target.group))
            .with_generation_id(target.generation)
            .with_member_id(StrBytes::from_string(target.member_id.clone()));
        Some((target.node.clone(), request))
    }

    fn answer(
        &mut self,
        node: &Node,
        request: &HeartbeatRequest,
        answer: Option<HeartbeatResponse>,
    ) -> Link {
        // No answer (the coordinator's node died, say) or "not the coordinator": find it
        // again, still a member; the session timeout decides whether we stay one.
        let (rejoin, lost) = match answer.map(|r| r.error_code) {
            None => (false, true),
            Some(c) if must_rejoin(c) => (true, false),
            Some(c) if is_coordinator_error(c) => (false, true),
            Some(_) => (false, false),
        };
        // Only if the answer is about the generation we still belong to.
        let current = self.target.as_ref().is_some_and(|t| {
            t.node == *node
                && t.generation == request.generation_id
                && t.member_id == request.member_id.as_str()
        });
        if current {
            self.rejoin |= rejoin;
            self.lost |= lost;
        }
        if lost { Link::Drop } else { Link::Keep }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beats() -> ClassicBeats {
        ClassicBeats {
            interval: Duration::from_secs(3),
            target: Some(Target {
                node: Node {
                    node_id: 3,
                    host: "127.0.0.1".to_string(),
                    port: 9092,
                },
                group: "g".to_string(),
                generation: 4,
                member_id: "m".to_string(),
            }),
            rejoin: false,
            lost: false,
        }
    }

    fn answer(beats: &mut ClassicBeats, code: Option<i16>) -> Link {
        let (node, request) = beats.next().expect("a member beats");
        let response = code.map(|c| HeartbeatResponse::default().with_error_code(c));
        beats.answer(&node, &request, response)
    }

    #[test]
    fn a_coordinator_gone_or_moved_is_found_again_without_rejoining() {
        // NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE.
        for code in [None, Some(16), Some(15)] {
            let mut b = beats();
            assert_eq!(answer(&mut b, code), Link::Drop, "{code:?}");
            assert!(b.lost && !b.rejoin, "{code:?}");
            // Heartbeats go on to the last coordinator known meanwhile.
            assert!(b.next().is_some());
        }
    }

    #[test]
    fn a_rebalance_means_rejoining_and_an_answer_about_another_generation_nothing() {
        let mut b = beats();
        assert_eq!(answer(&mut b, Some(REBALANCE_IN_PROGRESS)), Link::Keep);
        assert!(b.rejoin && !b.lost);
        let mut b = beats();
        let (node, request) = b.next().expect("a member beats");
        b.target.as_mut().expect("target").generation = 5;
        b.answer(&node, &request, None);
        assert!(!b.rejoin && !b.lost);
        let mut b = beats();
        assert_eq!(answer(&mut b, Some(0)), Link::Keep);
        assert!(!b.rejoin && !b.lost);
    }
}
