//! One consumer group of the new protocol (KIP-848) as the coordinator holds it: its members,
//! the group epoch, the target assignment the server computed for it, and each member's
//! reconciliation towards that target. Pure and synchronous, as [`super::group`] is for the
//! classic protocol; the ConsumerGroupHeartbeat handler feeds it.
//!
//! The group epoch is bumped when a member joins, leaves or changes its subscription, or when
//! a subscribed topic's partition count changes; the target assignment is recomputed at once
//! (the `uniform` or `range` assignor). A member then moves to the new epoch in steps: first it
//! is told to give up the partitions it must lose and keeps its epoch until a heartbeat shows it
//! no longer owns them; then it gets the new epoch and every partition of its target that no
//! other member still owns; the rest come in later heartbeats, once their owners let go. So a
//! partition never has two owners.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use kafka_protocol::ResponseError;

use crate::assignor;
use crate::kafka::TopicPartition;
use crate::kafka::groups::GroupState;

/// The assignors served, the first the default (Kafka's `group.consumer.assignors`).
pub const ASSIGNORS: [&str; 2] = ["uniform", "range"];

/// One member.
#[derive(Clone, Debug)]
pub struct Member {
    pub epoch: i32,
    previous_epoch: i32,
    pub client_id: String,
    pub host: String,
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub subscribed: Vec<String>,
    pub assignor: Option<String>,
    rebalance_timeout: Duration,
    last_seen: Instant,
    /// What the member was told it owns.
    pub assigned: BTreeSet<TopicPartition>,
    /// Taken away, not yet acknowledged: still the member's, for everyone else.
    revoking: BTreeSet<TopicPartition>,
    revoking_since: Option<Instant>,
    /// Where the assignor wants it.
    pub target: BTreeSet<TopicPartition>,
}

/// A ConsumerGroupHeartbeat, decoded (topic ids already turned into names).
#[derive(Clone, Debug, Default)]
pub struct Beat {
    pub member_id: String,
    pub member_epoch: i32,
    pub client_id: String,
    pub host: String,
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    /// `None`: unchanged since the last heartbeat.
    pub rebalance_timeout: Option<Duration>,
    pub subscribed: Option<Vec<String>>,
    pub assignor: Option<String>,
    /// The partitions the member owns, `None` when unchanged.
    pub owned: Option<BTreeSet<TopicPartition>>,
}

/// The answer to a heartbeat: the member's epoch, and its assignment when it changed (or the
/// member joined or sent a full request).
#[derive(Debug, PartialEq, Eq)]
pub struct Reply {
    pub epoch: i32,
    pub assignment: Option<BTreeSet<TopicPartition>>,
}

/// A refusal: an error code and its message.
pub type Refusal = (i16, String);

/// A consumer group.
#[derive(Debug, Default)]
pub struct ConsumerGroup {
    pub epoch: i32,
    pub assignment_epoch: i32,
    pub members: BTreeMap<String, Member>,
    /// The partition counts of the subscribed topics the target was computed for.
    topics: BTreeMap<String, u32>,
}

fn refuse(e: ResponseError, message: String) -> Refusal {
    (e.code(), message)
}

impl ConsumerGroup {
    /// Every topic some member subscribes to.
    pub fn subscribed(&self) -> BTreeSet<String> {
        self.members
            .values()
            .flat_map(|m| m.subscribed.iter().cloned())
            .collect()
    }

    /// The assignor in use: the one the members ask for (the lowest member id's), else uniform.
    pub fn assignor(&self) -> &str {
        self.members
            .values()
            .find_map(|m| m.assignor.as_deref())
            .unwrap_or(ASSIGNORS[0])
    }

    /// Kafka's state of a consumer-protocol group: Empty, Assigning, Reconciling or Stable.
    pub fn state(&self) -> GroupState {
        if self.members.is_empty() {
            GroupState::Empty
        } else if self.assignment_epoch < self.epoch {
            GroupState::Assigning
        } else if self.members.values().all(|m| {
            m.epoch == self.assignment_epoch && m.revoking.is_empty() && m.assigned == m.target
        }) {
            GroupState::Stable
        } else {
            GroupState::Reconciling
        }
    }

    /// One heartbeat; `topics` has the partition count of every existing topic that a member
    /// (this one included) subscribes to.
    pub fn heartbeat(
        &mut self,
        beat: Beat,
        topics: &BTreeMap<String, u32>,
        now: Instant,
    ) -> Result<Reply, Refusal> {
        if beat.member_epoch < 0 {
            // -1 leaves; -2 leaves for now as a static member (it comes back with epoch 0).
            self.remove(&[beat.member_id], now);
            return Ok(Reply {
                epoch: beat.member_epoch,
                assignment: None,
            });
        }
        let joining = beat.member_epoch == 0;
        let full =
            beat.rebalance_timeout.is_some() && beat.subscribed.is_some() && beat.owned.is_some();
        if joining {
            self.join(&beat, now)?;
        } else {
            self.check_epoch(&beat)?;
        }
        let member = self
            .members
            .get_mut(&beat.member_id)
            .expect("joined or checked");
        member.last_seen = now;
        if let Some(t) = beat.rebalance_timeout {
            member.rebalance_timeout = t;
        }
        let mut bump = joining;
        if let Some(s) = beat.subscribed.clone() {
            let mut s = s;
            s.sort();
            s.dedup();
            bump |= s != member.subscribed;
            member.subscribed = s;
        }
        if beat.assignor.is_some() && beat.assignor != member.assignor {
            member.assignor = beat.assignor.clone();
            bump = true;
        }
        let wanted: BTreeMap<String, u32> = self
            .subscribed()
            .into_iter()
            .filter_map(|t| topics.get(&t).map(|&n| (t, n)))
            .collect();
        if wanted != self.topics {
            self.topics = wanted;
            bump = true;
        }
        if bump {
            self.bump();
        }
        let changed = self.reconcile(&beat.member_id, beat.owned.as_ref(), now);
        let member = &self.members[&beat.member_id];
        Ok(Reply {
            epoch: member.epoch,
            assignment: (joining || full || changed).then(|| member.assigned.clone()),
        })
    }

    fn join(&mut self, beat: &Beat, now: Instant) -> Result<(), Refusal> {
        let Some(subscribed) = &beat.subscribed else {
            return Err(refuse(
                ResponseError::InvalidRequest,
                "SubscribedTopicNames must be set in first request.".to_string(),
            ));
        };
        let timeout = beat.rebalance_timeout.ok_or_else(|| {
            refuse(
                ResponseError::InvalidRequest,
                "RebalanceTimeoutMs must be provided in first request.".to_string(),
            )
        })?;
        // A member joining again (after it was fenced) starts from nothing.
        self.members.insert(
            beat.member_id.clone(),
            Member {
                epoch: 0,
                previous_epoch: -1,
                client_id: beat.client_id.clone(),
                host: beat.host.clone(),
                instance_id: beat.instance_id.clone(),
                rack_id: beat.rack_id.clone(),
                subscribed: subscribed.clone(),
                assignor: beat.assignor.clone(),
                rebalance_timeout: timeout,
                last_seen: now,
                assigned: BTreeSet::new(),
                revoking: BTreeSet::new(),
                revoking_since: None,
                target: BTreeSet::new(),
            },
        );
        Ok(())
    }

    /// A heartbeat must carry the member's epoch, or its previous one with no more partitions
    /// than it was given (a response that was lost).
    fn check_epoch(&self, beat: &Beat) -> Result<(), Refusal> {
        let Some(m) = self.members.get(&beat.member_id) else {
            return Err(refuse(
                ResponseError::UnknownMemberId,
                format!("Member {} is not a member of the group.", beat.member_id),
            ));
        };
        let lost_reply = beat.member_epoch == m.previous_epoch
            && beat
                .owned
                .as_ref()
                .is_some_and(|o| o.is_subset(&m.assigned));
        if beat.member_epoch == m.epoch || lost_reply {
            return Ok(());
        }
        Err(refuse(
            ResponseError::FencedMemberEpoch,
            format!(
                "The consumer group member has a smaller member epoch ({}) than the one known by the group coordinator ({}). The member must abandon all its partitions and rejoin.",
                beat.member_epoch, m.epoch
            ),
        ))
    }

    /// A new group epoch, and its target assignment.
    fn bump(&mut self) {
        self.epoch += 1;
        let subscriptions: BTreeMap<String, BTreeSet<String>> = self
            .members
            .iter()
            .map(|(id, m)| (id.clone(), m.subscribed.iter().cloned().collect()))
            .collect();
        let previous: BTreeMap<String, BTreeSet<TopicPartition>> = self
            .members
            .iter()
            .map(|(id, m)| (id.clone(), m.target.clone()))
            .collect();
        let targets = if self.assignor() == "range" {
            assignor::range(&self.topics, &subscriptions)
        } else {
            assignor::uniform(&self.topics, &subscriptions, &previous)
        };
        for (id, m) in &mut self.members {
            m.target = targets.get(id).into_iter().flatten().cloned().collect();
        }
        self.assignment_epoch = self.epoch;
    }

    /// Moves a member towards its target; true if what it was told it owns changed.
    fn reconcile(
        &mut self,
        id: &str,
        owned: Option<&BTreeSet<TopicPartition>>,
        now: Instant,
    ) -> bool {
        let held_by_others: BTreeSet<TopicPartition> = self
            .members
            .iter()
            .filter(|(other, _)| other.as_str() != id)
            .flat_map(|(_, m)| m.assigned.iter().chain(&m.revoking).cloned())
            .collect();
        let epoch = self.assignment_epoch;
        let m = self.members.get_mut(id).expect("a member");
        if !m.revoking.is_empty() {
            match owned {
                Some(o) if o.is_disjoint(&m.revoking) => {
                    m.revoking.clear();
                    m.revoking_since = None;
                }
                _ => return false,
            }
        }
        let revoke: BTreeSet<TopicPartition> = m.assigned.difference(&m.target).cloned().collect();
        if !revoke.is_empty() {
            m.assigned.retain(|tp| !revoke.contains(tp));
            m.revoking = revoke;
            m.revoking_since = Some(now);
            return true;
        }
        let add: Vec<TopicPartition> = m
            .target
            .difference(&m.assigned)
            .filter(|tp| !held_by_others.contains(*tp))
            .cloned()
            .collect();
        if m.epoch != epoch {
            m.previous_epoch = m.epoch;
            m.epoch = epoch;
        }
        m.assigned.extend(add.iter().cloned());
        !add.is_empty()
    }

    /// Members leave (a heartbeat with epoch -1, a session or rebalance timeout); the others
    /// get a new target.
    pub fn remove(&mut self, ids: &[String], _now: Instant) {
        let before = self.members.len();
        for id in ids {
            self.members.remove(id);
        }
        if self.members.len() != before {
            if self.members.is_empty() {
                self.topics.clear();
            }
            self.bump();
        }
    }

    /// Members silent past `session_timeout`, or that did not give up partitions within their
    /// rebalance timeout.
    pub fn expired(&self, now: Instant, session_timeout: Duration) -> Vec<String> {
        self.members
            .iter()
            .filter(|(_, m)| {
                now.duration_since(m.last_seen) > session_timeout
                    || m.revoking_since
                        .is_some_and(|s| now.duration_since(s) > m.rebalance_timeout)
            })
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// An OffsetCommit from a member: its epoch must be current (or the one before, for a
    /// commit sent just before the new epoch arrived). One from the future is fenced, as by
    /// Kafka; an older one is stale.
    pub fn check_commit(&self, member_id: &str, epoch: i32) -> Result<(), i16> {
        let Some(m) = self.members.get(member_id) else {
            return Err(ResponseError::UnknownMemberId.code());
        };
        if epoch == m.epoch || epoch == m.previous_epoch {
            Ok(())
        } else if epoch > m.epoch {
            Err(ResponseError::FencedMemberEpoch.code())
        } else {
            Err(ResponseError::StaleMemberEpoch.code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beat(id: &str, epoch: i32) -> Beat {
        Beat {
            member_id: id.to_string(),
            member_epoch: epoch,
            client_id: "c".to_string(),
            host: "/127.0.0.1".to_string(),
            rebalance_timeout: Some(Duration::from_secs(30)),
            subscribed: Some(vec!["t".to_string()]),
            owned: Some(BTreeSet::new()),
            ..Beat::default()
        }
    }

    fn light(id: &str, epoch: i32, owned: Option<&BTreeSet<TopicPartition>>) -> Beat {
        Beat {
            member_id: id.to_string(),
            member_epoch: epoch,
            owned: owned.cloned(),
            ..Beat::default()
        }
    }

    fn tps(ps: &[i32]) -> BTreeSet<TopicPartition> {
        ps.iter().map(|&p| ("t".to_string(), p)).collect()
    }

    fn six() -> BTreeMap<String, u32> {
        BTreeMap::from([("t".to_string(), 6)])
    }

    #[test]
    fn the_first_member_gets_everything_at_once() {
        let now = Instant::now();
        let mut g = ConsumerGroup::default();
        let r = g.heartbeat(beat("a", 0), &six(), now).unwrap();
        assert_eq!(
            r,
            Reply {
                epoch: 1,
                assignment: Some(tps(&[0, 1, 2, 3, 4, 5]))
            }
        );
        assert_eq!(g.state(), GroupState::Stable);
        // Nothing changed: no assignment in the answer.
        let r = g.heartbeat(light("a", 1, None), &six(), now).unwrap();
        assert_eq!(
            r,
            Reply {
                epoch: 1,
                assignment: None
            }
        );
    }

    #[test]
    fn a_partition_moves_only_after_its_owner_let_it_go() {
        let now = Instant::now();
        let mut g = ConsumerGroup::default();
        g.heartbeat(beat("a", 0), &six(), now).unwrap();
        // b joins: epoch 2, but a still owns everything, so b gets nothing yet.
        let r = g.heartbeat(beat("b", 0), &six(), now).unwrap();
        assert_eq!(
            r,
            Reply {
                epoch: 2,
                assignment: Some(tps(&[]))
            }
        );
        assert_eq!(g.state(), GroupState::Reconciling);
        // a is told to keep half, and stays at epoch 1 until it acknowledges.
        let r = g.heartbeat(light("a", 1, None), &six(), now).unwrap();
        let kept = r.assignment.clone().unwrap();
        assert_eq!((r.epoch, kept.len()), (1, 3));
        let r = g.heartbeat(light("b", 2, None), &six(), now).unwrap();
        assert_eq!(
            r,
            Reply {
                epoch: 2,
                assignment: None
            },
            "still owned by a"
        );
        // a acknowledges: it moves to epoch 2; b gets the other half.
        let r = g
            .heartbeat(light("a", 1, Some(&kept)), &six(), now)
            .unwrap();
        assert_eq!((r.epoch, r.assignment), (2, None));
        let r = g.heartbeat(light("b", 2, None), &six(), now).unwrap();
        let given = r.assignment.unwrap();
        assert_eq!(given.len(), 3);
        assert!(given.is_disjoint(&kept));
        assert_eq!(g.state(), GroupState::Stable);
    }

    #[test]
    fn stale_and_unknown_members_are_fenced_and_leaving_rebalances() {
        let now = Instant::now();
        let mut g = ConsumerGroup::default();
        g.heartbeat(beat("a", 0), &six(), now).unwrap();
        assert_eq!(
            g.heartbeat(light("a", 7, None), &six(), now).unwrap_err().0,
            110
        );
        assert_eq!(
            g.heartbeat(light("x", 1, None), &six(), now).unwrap_err().0,
            25
        );
        assert_eq!(g.check_commit("a", 1), Ok(()));
        // From the future: FENCED_MEMBER_EPOCH.
        assert_eq!(g.check_commit("a", 5), Err(110));
        g.heartbeat(beat("b", 0), &six(), now).unwrap();
        let r = g.heartbeat(light("a", -1, None), &six(), now).unwrap();
        assert_eq!(r.epoch, -1);
        let r = g.heartbeat(light("b", 2, None), &six(), now).unwrap();
        assert_eq!((r.epoch, r.assignment.map(|a| a.len())), (3, Some(6)));
        let later = now + Duration::from_secs(46);
        assert_eq!(
            g.expired(later, Duration::from_secs(45)),
            vec!["b".to_string()]
        );
    }
}
