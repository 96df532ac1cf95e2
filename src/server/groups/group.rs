//! One classic consumer group as the coordinator holds it in memory: its members, its
//! generation and the state machine of Kafka's classic protocol (Empty, PreparingRebalance,
//! CompletingRebalance, Stable). Pure and synchronous: the handlers hold it under a mutex and
//! do the waiting themselves.
//!
//! A rebalance is a round: it starts when a member joins, leaves or times out; every member
//! must join again; it completes when all have (or when the rebalance timeout has passed, and
//! those that did not are removed). Then the generation is bumped, the leader gets the
//! members' metadata, and its SyncGroup hands out the assignments.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::ResponseError;

use crate::kafka::groups::GroupState;

/// One networked member.
#[derive(Clone, Debug)]
pub struct GroupMember {
    pub client_id: String,
    pub host: String,
    pub instance_id: Option<String>,
    pub session_timeout: Duration,
    pub rebalance_timeout: Duration,
    /// Its protocols (assignor names) with their metadata, in its order of preference.
    pub protocols: Vec<(String, Bytes)>,
    pub assignment: Bytes,
    /// Whether it has joined in the current round.
    pub joined: bool,
    pub last_seen: Instant,
}

/// What a JoinGroup asks for, decoded.
#[derive(Clone, Debug)]
pub struct JoinRequest {
    pub member_id: String,
    pub client_id: String,
    pub host: String,
    pub instance_id: Option<String>,
    pub session_timeout: Duration,
    pub rebalance_timeout: Duration,
    pub protocol_type: String,
    pub protocols: Vec<(String, Bytes)>,
    /// v4+: a member without an id gets one and must join again with it.
    pub require_member_id: bool,
}

/// The outcome of a join step.
#[derive(Debug, PartialEq, Eq)]
pub enum Joined {
    /// Wait for the round after `round` to complete.
    Waiting { member_id: String, round: u64 },
    /// MEMBER_ID_REQUIRED with this id.
    NeedsId(String),
}

/// A classic group.
#[derive(Debug)]
pub struct Group {
    /// Kafka's state for it, one of the classic ones only: Empty, PreparingRebalance,
    /// CompletingRebalance, Stable (a group is never held Dead: it is dropped instead).
    pub state: GroupState,
    pub generation: i32,
    pub protocol_type: String,
    pub protocol: Option<String>,
    pub leader: Option<String>,
    pub members: BTreeMap<String, GroupMember>,
    /// Ids handed out with MEMBER_ID_REQUIRED, not yet joined.
    pending: BTreeSet<String>,
    /// Completed rounds; waiters compare it with the round they joined in.
    pub rounds: u64,
    deadline: Option<Instant>,
}

impl Default for Group {
    fn default() -> Self {
        Group {
            state: GroupState::Empty,
            generation: 0,
            protocol_type: String::new(),
            protocol: None,
            leader: None,
            members: BTreeMap::new(),
            pending: BTreeSet::new(),
            rounds: 0,
            deadline: None,
        }
    }
}

fn err(e: ResponseError) -> i16 {
    e.code()
}

impl Group {
    /// A member joins (or rejoins): starts a round if none is under way.
    pub fn join(&mut self, req: JoinRequest, now: Instant) -> Result<Joined, i16> {
        if req.protocol_type.is_empty() || req.protocols.is_empty() {
            return Err(err(ResponseError::InconsistentGroupProtocol));
        }
        if !self.members.is_empty() && req.protocol_type != self.protocol_type {
            return Err(err(ResponseError::InconsistentGroupProtocol));
        }
        let supported = |name: &str| {
            self.members
                .values()
                .all(|m| m.protocols.iter().any(|(n, _)| n == name))
        };
        if !req.protocols.iter().any(|(n, _)| supported(n)) {
            return Err(err(ResponseError::InconsistentGroupProtocol));
        }
        let member_id = if req.member_id.is_empty() {
            let id = format!(
                "{}-{}",
                req.client_id,
                uuid::Builder::from_random_bytes(rand::random()).into_uuid()
            );
            if req.require_member_id {
                self.pending.insert(id.clone());
                return Ok(Joined::NeedsId(id));
            }
            id
        } else if self.members.contains_key(&req.member_id) || self.pending.remove(&req.member_id) {
            req.member_id.clone()
        } else {
            return Err(err(ResponseError::UnknownMemberId));
        };
        if self.members.is_empty() {
            self.protocol_type = req.protocol_type.clone();
        }
        self.members.insert(
            member_id.clone(),
            GroupMember {
                client_id: req.client_id,
                host: req.host,
                instance_id: req.instance_id,
                session_timeout: req.session_timeout,
                rebalance_timeout: req.rebalance_timeout,
                protocols: req.protocols,
                assignment: Bytes::new(),
                joined: true,
                last_seen: now,
            },
        );
        if self.state != GroupState::PreparingRebalance {
            self.start_round(now, Some(&member_id));
        }
        let round = self.rounds;
        self.try_complete(now);
        Ok(Joined::Waiting { member_id, round })
    }

    /// Starts a round: every member but `joined` must join again.
    fn start_round(&mut self, now: Instant, joined: Option<&str>) {
        self.state = GroupState::PreparingRebalance;
        for (id, m) in &mut self.members {
            m.joined = Some(id.as_str()) == joined;
        }
        let timeout = self.members.values().map(|m| m.rebalance_timeout).max();
        self.deadline = Some(now + timeout.unwrap_or_default());
    }

    /// When the round may end: all members joined, else the rebalance timeout.
    pub fn deadline(&self) -> Option<Instant> {
        (self.state == GroupState::PreparingRebalance)
            .then_some(self.deadline)
            .flatten()
    }

    /// Completes the round if every member joined or its time is up; true if it completed.
    pub fn try_complete(&mut self, now: Instant) -> bool {
        if self.state != GroupState::PreparingRebalance {
            return false;
        }
        let all = self.members.values().all(|m| m.joined);
        if !all && self.deadline.is_some_and(|d| now < d) {
            return false;
        }
        self.members.retain(|_, m| m.joined);
        self.generation += 1;
        self.rounds += 1;
        self.deadline = None;
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            self.leader = None;
            self.protocol = None;
            return true;
        }
        if !self
            .leader
            .as_ref()
            .is_some_and(|l| self.members.contains_key(l))
        {
            self.leader = self.members.keys().next().cloned();
        }
        self.protocol = self.choose_protocol();
        self.state = GroupState::CompletingRebalance;
        for m in self.members.values_mut() {
            m.assignment = Bytes::new();
            m.last_seen = now;
        }
        true
    }

    /// The leader's most preferred protocol that every member supports.
    fn choose_protocol(&self) -> Option<String> {
        let leader = self.members.get(self.leader.as_ref()?)?;
        leader
            .protocols
            .iter()
            .map(|(n, _)| n)
            .find(|n| {
                self.members
                    .values()
                    .all(|m| m.protocols.iter().any(|(p, _)| &p == n))
            })
            .cloned()
    }

    /// The metadata of a member for the chosen protocol.
    pub fn metadata(&self, member: &GroupMember) -> Bytes {
        let protocol = self.protocol.as_deref().unwrap_or("");
        member
            .protocols
            .iter()
            .find(|(n, _)| n == protocol)
            .map(|(_, m)| m.clone())
            .unwrap_or_default()
    }

    /// Checks a member and its generation (Heartbeat, SyncGroup, OffsetCommit).
    pub fn check(&mut self, member_id: &str, generation: i32, now: Instant) -> Result<(), i16> {
        let Some(m) = self.members.get_mut(member_id) else {
            return Err(err(ResponseError::UnknownMemberId));
        };
        m.last_seen = now;
        if generation != self.generation {
            return Err(err(ResponseError::IllegalGeneration));
        }
        Ok(())
    }

    /// Heartbeat: REBALANCE_IN_PROGRESS tells the member to join again.
    pub fn heartbeat(&mut self, member_id: &str, generation: i32, now: Instant) -> i16 {
        if let Err(code) = self.check(member_id, generation, now) {
            return code;
        }
        match self.state {
            GroupState::PreparingRebalance => err(ResponseError::RebalanceInProgress),
            _ => 0,
        }
    }

    /// The leader's SyncGroup: stores the assignments and makes the group Stable.
    pub fn assign(&mut self, assignments: BTreeMap<String, Bytes>) {
        for (id, m) in &mut self.members {
            m.assignment = assignments.get(id).cloned().unwrap_or_default();
        }
        self.state = GroupState::Stable;
    }

    /// Removes members (LeaveGroup, session timeout), then rebalances the others.
    pub fn remove(&mut self, ids: &[String], now: Instant) {
        let before = self.members.len();
        for id in ids {
            self.members.remove(id);
        }
        if self.members.len() == before {
            return;
        }
        match self.state {
            GroupState::PreparingRebalance => {}
            _ => self.start_round(now, None),
        }
        if self.members.is_empty() {
            // Nobody is left to join: the round ends at once.
            self.deadline = Some(now);
        }
        self.try_complete(now);
    }

    /// Members silent for longer than their session timeout; members waiting in a JoinGroup
    /// are exempt (the rebalance timeout covers them).
    pub fn expired(&self, now: Instant) -> Vec<String> {
        self.members
            .iter()
            .filter(|(_, m)| !(self.state == GroupState::PreparingRebalance && m.joined))
            .filter(|(_, m)| now.duration_since(m.last_seen) > m.session_timeout)
            .map(|(id, _)| id.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(id: &str) -> JoinRequest {
        JoinRequest {
            member_id: id.to_string(),
            client_id: "c".to_string(),
            host: "/127.0.0.1".to_string(),
            instance_id: None,
            session_timeout: Duration::from_secs(10),
            rebalance_timeout: Duration::from_secs(30),
            protocol_type: "consumer".to_string(),
            protocols: vec![("range".to_string(), Bytes::from_static(b"m"))],
            require_member_id: true,
        }
    }

    fn join_new(g: &mut Group, now: Instant) -> String {
        let Ok(Joined::NeedsId(id)) = g.join(req(""), now) else {
            panic!("member id required")
        };
        assert!(matches!(g.join(req(&id), now), Ok(Joined::Waiting { .. })));
        id
    }

    #[test]
    fn first_member_completes_at_once_and_leads() {
        let now = Instant::now();
        let mut g = Group::default();
        let a = join_new(&mut g, now);
        assert_eq!(g.state, GroupState::CompletingRebalance);
        assert_eq!((g.generation, g.leader.as_deref()), (1, Some(a.as_str())));
        assert_eq!(g.protocol.as_deref(), Some("range"));
        g.assign(BTreeMap::from([(a.clone(), Bytes::from_static(b"x"))]));
        assert_eq!(g.state, GroupState::Stable);
        assert_eq!(g.heartbeat(&a, 1, now), 0);
        assert_eq!(g.heartbeat(&a, 0, now), 22);
        assert_eq!(g.heartbeat("nobody", 1, now), 25);
    }

    #[test]
    fn a_second_member_rebalances_everyone_and_stragglers_are_removed() {
        let now = Instant::now();
        let mut g = Group::default();
        let a = join_new(&mut g, now);
        g.assign(BTreeMap::new());
        let b = join_new(&mut g, now);
        assert_eq!(g.state, GroupState::PreparingRebalance);
        assert_eq!(g.heartbeat(&a, 1, now), 27, "a must join again");
        assert!(!g.try_complete(now));
        // a never rejoins: after the rebalance timeout it is gone.
        assert!(g.try_complete(now + Duration::from_secs(31)));
        assert_eq!(g.members.keys().collect::<Vec<_>>(), vec![&b]);
        assert_eq!((g.generation, g.leader.as_deref()), (2, Some(b.as_str())));
    }

    #[test]
    fn leaving_and_expiry_rebalance_and_the_last_leaves_it_empty() {
        let now = Instant::now();
        let mut g = Group::default();
        let a = join_new(&mut g, now);
        let b = join_new(&mut g, now);
        assert!(matches!(g.join(req(&a), now), Ok(Joined::Waiting { .. })));
        assert_eq!(g.state, GroupState::CompletingRebalance);
        g.assign(BTreeMap::new());
        let later = now + Duration::from_secs(11);
        g.heartbeat(&b, g.generation, later);
        assert_eq!(g.expired(later), vec![a.clone()]);
        g.remove(&[a], later);
        assert_eq!(g.state, GroupState::PreparingRebalance);
        g.remove(&[b], later);
        assert_eq!(g.state, GroupState::Empty);
        assert!(g.members.is_empty());
    }

    #[test]
    fn unknown_ids_and_other_protocols_are_refused() {
        let now = Instant::now();
        let mut g = Group::default();
        assert_eq!(g.join(req("made-up"), now), Err(25));
        join_new(&mut g, now);
        let mut other = req("");
        other.protocols = vec![("roundrobin".to_string(), Bytes::new())];
        assert_eq!(g.join(other, now), Err(23));
    }
}
