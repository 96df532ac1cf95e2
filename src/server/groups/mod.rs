//! The group coordinator of `kafka-server-start`: Kafka's classic consumer group protocol for
//! networked consumers, with committed offsets in the log directory's group store (the files
//! `kafka-consumer-groups --log-dir` reads and writes).
//!
//! One log, two ways in: while a group has networked members, the server holds a stand-in
//! member in the group store (client id `kafka-server-start`), so the tools on the directory
//! see the group as live and refuse resets and deletes, and `--log-dir` consumers are refused
//! from joining it; the stand-in itself is refused while `--log-dir` consumers are in the
//! group. So the two kinds never share a group, and never read the same records.
//!
//! - [`group`]: one classic group's state machine;
//! - [`consumer`]: one group of the new consumer protocol (KIP-848), assigned by the server;
//! - [`heartbeat`]: ConsumerGroupHeartbeat and ConsumerGroupDescribe;
//! - [`join`]: JoinGroup and SyncGroup (the waiting parts of a rebalance);
//! - [`membership`]: Heartbeat, LeaveGroup, and session timeouts;
//! - [`offsets`]: OffsetCommit, OffsetFetch, OffsetDelete;
//! - [`admin`]: FindCoordinator, ListGroups, DescribeGroups, DeleteGroups.

pub mod admin;
pub mod consumer;
pub mod group;
pub mod heartbeat;
pub mod join;
pub mod membership;
pub mod offsets;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::watch;

use crate::kafka::groups::GroupState;
use crate::local::LocalError;
use crate::local::group::{GroupStore, Member, MemberConfig, ServedMember};
use consumer::ConsumerGroup;
use group::Group;

/// How often session timeouts are checked and the stand-ins heartbeat.
const TICK: Duration = Duration::from_millis(500);

/// One group: its state (classic, or of the consumer protocol: at most one of them has members),
/// a signal bumped on every change (waiters in JoinGroup and SyncGroup look again), and the
/// stand-in member in the group store.
#[derive(Debug, Default)]
pub struct Entry {
    state: Mutex<Group>,
    /// Locked after `state` when both are needed.
    consumer: Mutex<ConsumerGroup>,
    changed: watch::Sender<u64>,
    /// Locked before `state` when both are needed.
    standin: Mutex<Option<Member>>,
}

impl Entry {
    pub fn group(&self) -> MutexGuard<'_, Group> {
        // Group steps leave the state consistent at every return.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn consumer(&self) -> MutexGuard<'_, ConsumerGroup> {
        self.consumer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the group has networked members, of either protocol.
    pub fn is_live(&self) -> bool {
        !self.group().members.is_empty() || !self.consumer().members.is_empty()
    }

    pub fn standin(&self) -> MutexGuard<'_, Option<Member>> {
        self.standin.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes the waiters.
    pub fn notify(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    pub fn watch(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Under the stand-in lock: joins the group store if not yet in it. `Err` with a message
    /// for the log when `--log-dir` members are live.
    pub fn ensure_standin(
        standin: &mut Option<Member>,
        store: &GroupStore,
        group: &str,
    ) -> Result<(), LocalError> {
        if standin.is_none() {
            *standin = Some(store.join_for_server(group, MemberConfig::default())?);
        }
        Ok(())
    }

    /// The networked members, of either protocol, as the stand-in publishes them for the
    /// `--log-dir` tools ([`Member::publish_served`]).
    pub fn served_members(&self) -> Vec<ServedMember> {
        // The server keeps Kafka's `/<address>`; the group store keeps the bare address.
        let host = |h: &str| h.strip_prefix('/').unwrap_or(h).to_string();
        let mut served: Vec<ServedMember> = {
            let group = self.group();
            // Only a consumer's bytes say what it subscribes to and was given.
            let consumer = group.protocol_type == "consumer";
            let stable = group.state == GroupState::Stable;
            group
                .members
                .iter()
                .map(|(id, m)| ServedMember {
                    member_id: id.clone(),
                    client_id: m.client_id.clone(),
                    host: host(&m.host),
                    subscribed_topics: match consumer {
                        true => offsets::subscribed_topics(&group.metadata(m)),
                        false => Vec::new(),
                    },
                    assignment: match consumer && stable {
                        true => offsets::assigned_partitions(&m.assignment),
                        false => Vec::new(),
                    },
                })
                .collect()
        };
        served.extend(self.consumer().members.iter().map(|(id, m)| ServedMember {
            member_id: id.clone(),
            client_id: m.client_id.clone(),
            host: host(&m.host),
            subscribed_topics: m.subscribed.clone(),
            assignment: m.assigned.iter().cloned().collect(),
        }));
        served
    }

    /// Leaves the group store once no networked member is left.
    pub fn release_standin_if_empty(&self) -> Result<(), LocalError> {
        let mut standin = self.standin();
        if self.is_live() {
            return Ok(());
        }
        match standin.take() {
            Some(member) => member.leave(&Default::default()),
            None => Ok(()),
        }
    }
}

/// Every group the server has seen since it started.
#[derive(Debug)]
pub struct Coordinator {
    pub store: GroupStore,
    groups: Mutex<HashMap<String, Arc<Entry>>>,
}

impl Coordinator {
    pub fn new(store: GroupStore) -> Coordinator {
        Coordinator {
            store,
            groups: Mutex::new(HashMap::new()),
        }
    }

    /// The group's entry, made on first use.
    pub fn entry(&self, group: &str) -> Arc<Entry> {
        let mut groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(groups.entry(group.to_string()).or_default())
    }

    /// The group's entry if it was ever used.
    pub fn existing(&self, group: &str) -> Option<Arc<Entry>> {
        let groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        groups.get(group).cloned()
    }

    /// Every group with an entry.
    pub fn entries(&self) -> Vec<(String, Arc<Entry>)> {
        let groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        groups
            .iter()
            .map(|(k, v)| (k.clone(), Arc::clone(v)))
            .collect()
    }

    /// Whether the group has networked members now.
    pub fn has_members(&self, group: &str) -> bool {
        self.existing(group).is_some_and(|e| e.is_live())
    }
}

/// How often the server looks for deleted topics whose files it still holds open.
const CLEANUP_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// Runs until the server stops: removes members whose session timed out, ends rounds whose
/// rebalance timeout passed, and heartbeats the stand-ins; now and then, also closes the files
/// of topics deleted by a tool on the directory.
pub async fn maintain(broker: Arc<crate::server::broker::Broker>) {
    let mut tick = tokio::time::interval(TICK);
    let mut last_cleanup = std::time::Instant::now();
    loop {
        tick.tick().await;
        let now = std::time::Instant::now();
        if now.duration_since(last_cleanup) >= CLEANUP_EVERY {
            last_cleanup = now;
            let b = Arc::clone(&broker);
            let _ = tokio::task::spawn_blocking(move || b.forget_deleted_topics()).await;
        }
        let b = Arc::clone(&broker);
        let _ = tokio::task::spawn_blocking(move || b.shares.expire(&b.dir)).await;
        for (name, entry) in broker.groups.entries() {
            let (expired, completed) = {
                let mut g = entry.group();
                let expired = g.expired(now);
                if !expired.is_empty() {
                    g.remove(&expired, now);
                }
                (expired, g.try_complete(now))
            };
            let timed_out = {
                let mut g = entry.consumer();
                let session = broker.config.consumer_session_timeout();
                let timed_out = g.expired(now, session);
                if !timed_out.is_empty() {
                    g.remove(&timed_out, now);
                }
                timed_out
            };
            for ids in [&expired, &timed_out] {
                if !ids.is_empty() {
                    broker.log.info(&format!(
                        "Member(s) {} of group {name} left: session timeout; rebalancing",
                        ids.join(", ")
                    ));
                }
            }
            if !expired.is_empty() || !timed_out.is_empty() || completed {
                entry.notify();
            }
            let e = Arc::clone(&entry);
            let log = broker.log.clone();
            let store = broker.groups.store.clone();
            super::handlers::blocking(move || {
                if let Err(err) = e.release_standin_if_empty() {
                    log.warn(&format!(
                        "Group {name}: cannot leave the group store: {err}"
                    ));
                }
                let served = e.served_members();
                let mut standin = e.standin();
                if let Some(m) = standin.as_mut()
                    && let Err(err) = m.heartbeat()
                {
                    log.warn(&format!("Group {name}: cannot heartbeat: {err}"));
                }
                // What `kafka-consumer-groups --log-dir` shows of the networked members.
                let mut published = standin
                    .as_mut()
                    .map_or(Ok(()), |m| m.publish_served(served.clone()));
                // The stand-in was evicted (the server stalled past its session timeout): it
                // joins again, unless `--log-dir` members took the group meanwhile.
                if let Err(LocalError::MemberFenced { .. }) = published {
                    *standin = None;
                    published = Entry::ensure_standin(&mut standin, &store, &name).and_then(|()| {
                        standin
                            .as_mut()
                            .map_or(Ok(()), |m| m.publish_served(served))
                    });
                }
                if let Err(err) = published {
                    log.warn(&format!(
                        "Group {name}: cannot publish its members to the group store: {err}"
                    ));
                }
            })
            .await;
        }
    }
}
