//! A consumer's membership of a group on a cluster, in either of Kafka's group protocols
//! (`group.protocol`):
//!
//! - [`classic`]: JoinGroup/SyncGroup/Heartbeat, the assignment computed by the group's leader
//!   with the range assignor, eager rebalances;
//! - [`consumer`]: KIP-848's ConsumerGroupHeartbeat, the assignment computed by the coordinator.
//!
//! What both share lives here and in `heartbeat` (the heartbeat thread): the settings, the
//! consumer thread's link to the coordinator with the member id and owned partitions
//! (`Session`), OffsetFetch of newly owned partitions, leaving, the group error codes and the
//! errors that name the group.

pub mod classic;
pub mod consumer;
mod heartbeat;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::coordinator::CoordinatorLink;
use super::error::{RemoteError, Result};
use super::fetch::Fetcher;
use super::net::connection::ClientConfig;
use crate::wire::api::Api;

pub use crate::kafka::TopicPartition;
/// What a poll changed, and a topic and partition: the same types as on the embedded log.
pub use crate::kafka::groups::AssignmentChange;

/// ILLEGAL_GENERATION.
const ILLEGAL_GENERATION: i16 = 22;
/// UNKNOWN_MEMBER_ID.
const UNKNOWN_MEMBER_ID: i16 = 25;
/// REBALANCE_IN_PROGRESS.
const REBALANCE_IN_PROGRESS: i16 = 27;

/// Partitions by topic, sorted, as group requests carry them.
pub(crate) type Partitions = BTreeMap<String, BTreeSet<i32>>;

/// The next offsets to read of owned partitions: what a commit writes.
pub type Positions = BTreeMap<TopicPartition, i64>;

/// What the consumer has at a poll.
#[derive(Debug, Clone, Copy)]
pub struct Consuming<'a> {
    /// The subscribed topics that exist, with their partition counts: a change means
    /// telling the coordinator.
    pub subscription: &'a BTreeMap<String, u32>,
    /// The next offsets to read of the partitions owned now, committed before they are given
    /// up when auto-commit is on.
    pub positions: &'a Positions,
}

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
    /// `enable.auto.commit`: positions are committed before partitions are given up and when
    /// leaving.
    pub auto_commit: bool,
}

/// What a member of either protocol keeps on the consumer's thread.
#[derive(Debug)]
struct Session {
    settings: MemberSettings,
    /// The consumer thread's own link to the coordinator, for group requests, commits and
    /// committed offsets (the heartbeat thread has its own connection).
    link: CoordinatorLink,
    member_id: String,
    /// Owned partitions by topic name.
    owned: Partitions,
}

impl Session {
    fn new(settings: MemberSettings, config: ClientConfig, member_id: String) -> Session {
        let link = CoordinatorLink::new(&settings.group_id, config, settings.retry_backoff);
        Session {
            settings,
            link,
            member_id,
            owned: Partitions::new(),
        }
    }

    /// Gives up every owned partition; returns them.
    fn give_up_all(&mut self) -> Vec<TopicPartition> {
        flatten(&std::mem::take(&mut self.owned))
    }

    /// `partitions` with the group's committed offsets (stable ones), for a [`AssignmentChange`]'s
    /// `acquired`; a refusal is reported as `refused` says.
    async fn with_committed(
        &mut self,
        fetcher: &mut Fetcher,
        partitions: &Partitions,
        refused: impl FnOnce(&Session, i16) -> RemoteError,
    ) -> Result<Vec<(TopicPartition, Option<i64>)>> {
        let committed = match self.link.committed(fetcher.bootstrap(), partitions).await? {
            Ok(offsets) => offsets,
            Err(code) => return Err(refused(self, code)),
        };
        Ok(flatten(partitions)
            .into_iter()
            .map(|tp| {
                let offset = committed.get(&tp).copied();
                (tp, offset)
            })
            .collect())
    }

    /// Commits `positions` as this member at `generation` (the classic generation or the member
    /// epoch): the coordinator's error code, 0 when committed.
    async fn commit(
        &mut self,
        fetcher: &mut Fetcher,
        generation: i32,
        positions: &Positions,
    ) -> Result<i16> {
        self.link
            .commit(fetcher.bootstrap(), generation, &self.member_id, positions)
            .await
    }

    /// Sends a group request to the coordinator; `None` when the connection failed and the
    /// request should be sent again (see [`CoordinatorLink::send`]).
    async fn send<R: Api>(
        &mut self,
        fetcher: &mut Fetcher,
        request: &R,
    ) -> Result<Option<R::Response>> {
        self.link.send(fetcher.bootstrap(), request).await
    }

    /// The coordinator moved or is loading: find it again after `retry.backoff.ms`.
    async fn coordinator_moved(&mut self) {
        self.link.forget();
        tokio::time::sleep(self.settings.retry_backoff).await;
    }

    /// Sends the request that leaves the group.
    async fn leave<R: Api>(&mut self, fetcher: &mut Fetcher, request: &R) {
        // Leaving is a courtesy: if the coordinator has already forgotten us, so much the better.
        let _ = self.send(fetcher, request).await;
    }

    /// A group error the member cannot recover from, in one line naming the group and `whom`
    /// it refused (and what they were doing).
    fn refused(&self, code: i16, message: Option<&str>, whom: &str) -> RemoteError {
        let e = RemoteError::broker(code, message);
        RemoteError::Broker {
            code,
            message: format!(
                "consumer group {} refused {whom}: {e}",
                self.settings.group_id
            ),
        }
    }
}

/// Every partition of `partitions`, in order.
fn flatten(partitions: &Partitions) -> Vec<TopicPartition> {
    partitions
        .iter()
        .flat_map(|(t, ps)| ps.iter().map(move |p| (t.clone(), *p)))
        .collect()
}

/// A duration in a request's milliseconds field.
fn millis(d: Duration) -> i32 {
    i32::try_from(d.as_millis()).unwrap_or(i32::MAX)
}
