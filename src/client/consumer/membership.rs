//! A consumer's group membership, one interface over its three kinds: a member of a group on
//! the embedded log (flock-based, [`crate::local::group::Member`]), and a member of a group on a
//! cluster with the classic protocol or KIP-848's ([`crate::remote::membership`]).
//!
//! The engine in [`super`] joins once, asks at every round what changed in its assignment,
//! commits and leaves through [`Membership`], and never asks which kind it holds. The kind
//! follows the consumer's backend and, on a cluster, `group.protocol`.

use std::collections::BTreeMap;

use super::source::Source;
use super::{GroupProtocol, GroupSettings};
use crate::client::Result;
pub use crate::kafka::groups::AssignmentChange;
use crate::local::LocalError;
use crate::local::group::{Member, MemberConfig};
use crate::remote::fetch::Fetcher;
use crate::remote::membership::classic::GroupMember;
use crate::remote::membership::consumer::ConsumerMember;
use crate::remote::membership::{Consuming, MemberSettings, Positions};

/// A consumer's membership of one group, on either backend.
#[derive(Debug)]
pub(super) enum Membership {
    /// On the embedded log. `auto_commit`: `enable.auto.commit`, which decides whether
    /// leaving commits.
    Local {
        member: Box<Member>,
        auto_commit: bool,
    },
    /// On a cluster, `group.protocol=classic`.
    Classic(Box<GroupMember>),
    /// On a cluster, `group.protocol=consumer`.
    Consumer(Box<ConsumerMember>),
}

impl Membership {
    /// Joins the group `settings` names on `source`'s backend: on the embedded log at once, on
    /// a cluster at the first [`Membership::poll`].
    pub fn join(source: &Source, settings: &GroupSettings) -> Result<Membership> {
        let config = match source {
            Source::Local(local) => {
                let timing = MemberConfig {
                    session_timeout: settings.session_timeout,
                    heartbeat_interval: settings.heartbeat_interval,
                };
                let member = local
                    .dir
                    .groups()
                    .join(&settings.id, &settings.client_id, timing)?;
                return Ok(Membership::Local {
                    member: Box::new(member),
                    auto_commit: settings.auto_commit,
                });
            }
            Source::Remote(c) => c.config(),
        };
        let member = MemberSettings {
            group_id: settings.id.clone(),
            session_timeout: settings.session_timeout,
            rebalance_timeout: settings.rebalance_timeout,
            heartbeat_interval: settings.heartbeat_interval,
            retry_backoff: settings.retry_backoff,
            auto_commit: settings.auto_commit,
        };
        Ok(match settings.protocol {
            GroupProtocol::Classic => {
                Membership::Classic(Box::new(GroupMember::new(member, config)))
            }
            GroupProtocol::Consumer => {
                Membership::Consumer(Box::new(ConsumerMember::new(member, config)))
            }
        })
    }

    /// Heartbeats (where the member has no thread of its own for it) and follows the group's
    /// assignment. `subscription`: the subscribed topics that exist, with their partition
    /// counts; `positions`: makes the next offsets to read of the owned partitions, committed
    /// before a partition is given up (on a cluster only with auto-commit; the embedded log
    /// always commits them).
    pub fn poll(
        &mut self,
        source: &mut Source,
        subscription: &BTreeMap<String, u32>,
        positions: impl FnOnce() -> Positions,
    ) -> Result<AssignmentChange> {
        let member = match self {
            Membership::Local { member, .. } => {
                return Ok(member.poll_lazily(subscription, positions)?);
            }
            member => member,
        };
        let positions = positions();
        let now = Consuming {
            subscription,
            positions: &positions,
        };
        match member {
            Membership::Local { .. } => unreachable!("answered above"),
            Membership::Classic(m) => on_cluster(source, async |f| m.poll(f, now).await),
            Membership::Consumer(m) => on_cluster(source, async |f| m.poll(f, now).await),
        }
    }

    /// Commits `positions` of owned partitions. A commit refused because the member was
    /// evicted or the group moved on is dropped, as Kafka's auto-commit drops it: the next
    /// poll rejoins.
    pub fn commit(&mut self, source: &mut Source, positions: &Positions) -> Result<()> {
        match self {
            Membership::Local { member, .. } => match member.commit(positions) {
                Ok(()) | Err(LocalError::MemberFenced { .. }) => Ok(()),
                Err(e) => Err(e.into()),
            },
            Membership::Classic(m) => on_cluster(source, async |f| m.commit(f, positions).await),
            Membership::Consumer(m) => on_cluster(source, async |f| m.commit(f, positions).await),
        }
    }

    /// Commits `positions` with auto-commit, then leaves the group, so that the others take
    /// its partitions over at once. An evicted member just goes.
    pub fn leave(self, source: &mut Source, positions: &Positions) -> Result<()> {
        match self {
            Membership::Local {
                member,
                auto_commit,
            } => {
                let commit = if auto_commit {
                    positions
                } else {
                    &Positions::new()
                };
                match member.leave(commit) {
                    Ok(()) | Err(LocalError::MemberFenced { .. }) => Ok(()),
                    Err(e) => Err(e.into()),
                }
            }
            Membership::Classic(m) => on_cluster(source, async |f| m.leave(f, positions).await),
            Membership::Consumer(m) => on_cluster(source, async |f| m.leave(f, positions).await),
        }
    }
}

/// Runs a cluster group member's `f` on the cluster the consumer reads from.
fn on_cluster<T>(
    source: &mut Source,
    f: impl AsyncFnOnce(&mut Fetcher) -> crate::remote::error::Result<T>,
) -> Result<T> {
    match source {
        Source::Remote(c) => Ok(c.run(f)?),
        Source::Local(_) => {
            unreachable!("a member of a cluster's group consumes from that cluster")
        }
    }
}
