//! Consumer-group admin on either backend: list, describe (members and committed offsets),
//! reset offsets, delete groups and offsets, and the partition counts and log offsets that go
//! with them, cached for one [`GroupAdmin`].
//!
//! [`Group`] is a described group in one shape whichever backend it came from.
//! What Kafka reports per group or per partition comes back as a [`Refusal`] with Kafka's
//! error code, for the tool to word as Kafka's tool does.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::offsets::{self, OffsetSpec};
use super::{Backend, Client, Result};
pub use crate::kafka::TopicPartition;
pub use crate::kafka::groups::{CommittedOffset, GROUP_SUBSCRIBED_TO_TOPIC, GroupState};
use crate::local::group::GroupDescription as LocalGroup;
use crate::local::logdir::LOCAL_NODE_ID;
use crate::local::{LocalError, LogDir};
use crate::remote::{Cluster, GroupInfo};

/// GROUP_ID_NOT_FOUND.
const GROUP_ID_NOT_FOUND: i16 = 69;
/// GROUP_SUBSCRIBED_TO_TOPIC.
const GROUP_SUBSCRIBED_TO_TOPIC_CODE: i16 = 86;

/// What Kafka refused for one group or partition: its error code, and the backend's own text
/// when it has one (else Kafka's standard text for the code applies).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: i16,
    pub message: Option<String>,
}

impl Refusal {
    fn code(code: i16) -> Refusal {
        Refusal {
            code,
            message: None,
        }
    }
}

/// A group in a listing.
pub struct Listed {
    pub group: String,
    /// `Classic` or `Consumer`.
    pub kind: &'static str,
    pub state: GroupState,
}

/// One member of a described group.
pub struct Member {
    pub member_id: String,
    pub instance_id: Option<String>,
    /// The host without the `/` Kafka's text puts before it.
    pub host: String,
    pub client_id: String,
    /// The partitions it owns.
    pub assignment: Vec<TopicPartition>,
    /// New-protocol groups only: the member epoch and the target assignment.
    pub epoch: Option<i32>,
    pub target: Option<Vec<TopicPartition>>,
}

/// A described group.
pub struct Group {
    pub group_id: String,
    pub state: GroupState,
    /// The assignor, when the group has one.
    pub protocol: Option<String>,
    /// The coordinator's id and its text: `host:port`, or the log dir.
    pub coordinator: (i32, String),
    /// New-protocol groups only: the group epoch and the target assignment epoch.
    pub group_epoch: Option<i32>,
    pub target_epoch: Option<i32>,
    pub members: Vec<Member>,
    pub offsets: BTreeMap<TopicPartition, CommittedOffset>,
}

/// The outcome of deleting the committed offsets of existing partitions.
pub enum OffsetDeletion {
    /// Each partition's result.
    Done(Vec<(TopicPartition, std::result::Result<(), Refusal>)>),
    /// The whole request failed with this error code.
    Failed(i16),
}

/// Group admin on the embedded log or a cluster, with caches for one command.
pub struct GroupAdmin<'a> {
    admin: Admin<'a>,
    /// Partition counts by topic, `None` for a topic that does not exist.
    counts: HashMap<String, Option<u32>>,
    /// The partitions without a leader (a cluster's, whose replicas are all down), by topic.
    leaderless: HashMap<String, BTreeSet<i32>>,
    /// Log offsets read so far, `None` where the partition has none to show.
    offsets: HashMap<(TopicPartition, OffsetSpec), Option<i64>>,
}

/// The backend behind a [`GroupAdmin`].
enum Admin<'a> {
    Local(&'a LogDir),
    Remote(&'a mut Cluster),
}

impl Client {
    /// Group admin for one command (it caches partition counts and offsets as it reads them).
    pub fn group_admin(&mut self) -> GroupAdmin<'_> {
        let admin = match &mut self.backend {
            Backend::Local(dir) => Admin::Local(dir),
            Backend::Remote(cluster) => Admin::Remote(cluster),
        };
        GroupAdmin {
            admin,
            counts: HashMap::new(),
            leaderless: HashMap::new(),
            offsets: HashMap::new(),
        }
    }
}

impl GroupAdmin<'_> {
    /// Every consumer group (classic or new protocol) with its type and state, sorted by id.
    pub fn list(&mut self) -> Result<Vec<Listed>> {
        match &mut self.admin {
            Admin::Local(dir) => {
                let store = dir.groups();
                let mut out = Vec::new();
                for group in store.list()? {
                    let Some(d) = store.describe(&group)? else {
                        continue; // deleted since the listing
                    };
                    out.push(Listed {
                        group,
                        kind: "Classic",
                        state: d.state,
                    });
                }
                Ok(out)
            }
            Admin::Remote(cluster) => {
                let groups = cluster.list_groups(&[], &[])?;
                Ok(groups
                    .into_iter()
                    // What the admin client's consumer-group listing keeps: consumer groups of
                    // either protocol, and groups that only hold committed offsets.
                    .filter(|g| matches!(g.protocol_type.as_str(), "" | "consumer"))
                    .filter(|g| matches!(g.group_type.as_str(), "" | "classic" | "consumer"))
                    .map(|g| Listed {
                        kind: if g.group_type == "consumer" {
                            "Consumer"
                        } else {
                            "Classic"
                        },
                        group: g.group_id,
                        state: g.state,
                    })
                    .collect())
            }
        }
    }

    /// The group ids, sorted.
    pub fn group_ids(&mut self) -> Result<Vec<String>> {
        Ok(self.list()?.into_iter().map(|l| l.group).collect())
    }

    /// Describes a group with its committed offsets; `None` if it does not exist.
    pub fn describe(&mut self, group: &str) -> Result<Option<Group>> {
        match &mut self.admin {
            Admin::Local(dir) => {
                let coordinator = (LOCAL_NODE_ID, dir.root().display().to_string());
                Ok(dir
                    .groups()
                    .describe(group)?
                    .map(|d| from_local(d, coordinator)))
            }
            Admin::Remote(cluster) => {
                let Some(info) = cluster.describe_group(group)? else {
                    return Ok(None);
                };
                let committed = cluster.committed_offsets(group)?;
                Ok(Some(from_remote(info, committed)))
            }
        }
    }

    /// The topic's partition count, `None` if it does not exist.
    pub fn partitions(&mut self, topic: &str) -> Result<Option<u32>> {
        if let Some(n) = self.counts.get(topic) {
            return Ok(*n);
        }
        let n = match &mut self.admin {
            Admin::Local(dir) => dir.topic(topic)?.map(|t| t.partitions),
            Admin::Remote(cluster) => {
                let meta = cluster.metadata(Some(&[topic.to_string()]))?;
                let found = meta
                    .topics
                    .iter()
                    .find(|t| t.name == topic && t.error_code == 0);
                if let Some(t) = found {
                    let without: BTreeSet<i32> = t
                        .partitions
                        .iter()
                        .filter(|p| p.leader < 0)
                        .map(|p| p.partition)
                        .collect();
                    self.leaderless.insert(topic.to_string(), without);
                }
                found.map(|t| t.partitions.len() as u32)
            }
        };
        self.counts.insert(topic.to_string(), n);
        Ok(n)
    }

    /// Whether the partition, which exists, has a leader: on a cluster, not when every replica
    /// is down; on the embedded log, always.
    pub fn has_leader(&mut self, tp: &TopicPartition) -> Result<bool> {
        self.partitions(&tp.0)?;
        let without = self.leaderless.get(&tp.0);
        Ok(!without.is_some_and(|w| w.contains(&tp.1)))
    }

    /// Whether the partition exists.
    pub fn exists(&mut self, tp: &TopicPartition) -> Result<bool> {
        Ok(self
            .partitions(&tp.0)?
            .is_some_and(|n| u32::try_from(tp.1).is_ok_and(|p| p < n)))
    }

    /// Reads the offsets for `spec` of many partitions at once into the cache (one
    /// ListOffsets per leader on a cluster).
    fn load(&mut self, tps: &[TopicPartition], spec: OffsetSpec) -> Result<()> {
        let mut wanted = Vec::new();
        for tp in tps {
            if self.offsets.contains_key(&(tp.clone(), spec)) {
                continue;
            }
            if self.exists(tp)? {
                wanted.push(tp.clone());
            } else {
                // A partition that does not exist has no offset to show.
                self.offsets.insert((tp.clone(), spec), None);
            }
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let found = match &mut self.admin {
            Admin::Local(dir) => offsets::local(dir, &wanted, spec),
            Admin::Remote(cluster) => offsets::remote(cluster, &wanted, spec)?,
        };
        for (tp, answer) in found {
            // A partition without a leader has no offset to show either.
            self.offsets.insert((tp, spec), answer.ok().flatten());
        }
        Ok(())
    }

    /// Reads the log end offsets of many partitions into the cache.
    pub fn load_ends(&mut self, tps: &[TopicPartition]) -> Result<()> {
        self.load(tps, OffsetSpec::Latest)
    }

    fn offset(&mut self, tp: &TopicPartition, spec: OffsetSpec) -> Result<Option<i64>> {
        self.load(std::slice::from_ref(tp), spec)?;
        Ok(self.offsets.get(&(tp.clone(), spec)).copied().flatten())
    }

    /// The log end offset (ListOffsets latest), `None` if unknown.
    pub fn end(&mut self, tp: &TopicPartition) -> Result<Option<i64>> {
        self.offset(tp, OffsetSpec::Latest)
    }

    /// The log start offset (ListOffsets earliest), `None` if unknown.
    pub fn start(&mut self, tp: &TopicPartition) -> Result<Option<i64>> {
        self.offset(tp, OffsetSpec::Earliest)
    }

    /// The first offset whose timestamp is `>= ts`, `None` if there is none.
    pub fn offset_for_time(&mut self, tp: &TopicPartition, ts: i64) -> Result<Option<i64>> {
        self.offset(tp, OffsetSpec::Timestamp(ts.max(0)))
    }

    /// Commits `offsets` for an inactive group (the embedded log or the coordinator refuses
    /// a group that has live members). A cluster may refuse single partitions: the first
    /// refused one comes back with its error code.
    pub fn reset_offsets(
        &mut self,
        group: &str,
        offsets: &BTreeMap<TopicPartition, i64>,
    ) -> Result<Option<(TopicPartition, i16)>> {
        match &mut self.admin {
            Admin::Local(dir) => {
                dir.groups().reset_offsets(group, offsets)?;
                Ok(None)
            }
            Admin::Remote(cluster) => {
                let results = cluster.commit_offsets(group, offsets)?;
                Ok(results.into_iter().find(|(_, code)| *code != 0))
            }
        }
    }

    /// Deletes a group; `Err` inside says why Kafka refused it.
    pub fn delete_group(&mut self, group: &str) -> Result<std::result::Result<(), Refusal>> {
        match &mut self.admin {
            Admin::Local(dir) => match dir.groups().delete_group(group) {
                Ok(()) => Ok(Ok(())),
                Err(LocalError::GroupNotFound(_)) => Ok(Err(Refusal::code(GROUP_ID_NOT_FOUND))),
                Err(LocalError::GroupNotEmpty { .. }) => Ok(Err(Refusal::code(68))),
                Err(LocalError::Invalid(msg)) => Ok(Err(Refusal {
                    code: 24,
                    message: Some(msg),
                })),
                Err(e) => Err(e.into()),
            },
            Admin::Remote(cluster) => match cluster.delete_group(group)? {
                0 => Ok(Ok(())),
                code => Ok(Err(Refusal::code(code))),
            },
        }
    }

    /// Deletes the committed offsets of existing partitions `tps` of `group`.
    pub fn delete_offsets(
        &mut self,
        group: &str,
        tps: &[TopicPartition],
    ) -> Result<OffsetDeletion> {
        match &mut self.admin {
            Admin::Local(dir) => match dir.groups().delete_offsets(group, tps) {
                Ok(results) => Ok(OffsetDeletion::Done(
                    results
                        .into_iter()
                        .map(|(tp, r)| {
                            let r = r.map_err(|msg| Refusal {
                                code: GROUP_SUBSCRIBED_TO_TOPIC_CODE,
                                message: Some(msg),
                            });
                            (tp, r)
                        })
                        .collect(),
                )),
                Err(LocalError::GroupNotFound(_)) => Ok(OffsetDeletion::Failed(GROUP_ID_NOT_FOUND)),
                Err(e) => Err(e.into()),
            },
            Admin::Remote(cluster) => {
                let (top, partitions) = cluster.delete_offsets(group, tps)?;
                // A partition-level code at the top (GROUP_SUBSCRIBED_TO_TOPIC, ...) is
                // reported per partition, as Kafka's admin client does.
                if top != 0 && !matches!(top, 3 | 29 | GROUP_SUBSCRIBED_TO_TOPIC_CODE) {
                    return Ok(OffsetDeletion::Failed(top));
                }
                Ok(OffsetDeletion::Done(
                    partitions
                        .into_iter()
                        .map(|(tp, code)| {
                            let r = if code == 0 {
                                Ok(())
                            } else {
                                Err(Refusal::code(code))
                            };
                            (tp, r)
                        })
                        .collect(),
                ))
            }
        }
    }
}

fn from_local(d: LocalGroup, coordinator: (i32, String)) -> Group {
    Group {
        group_id: d.group_id,
        state: d.state,
        protocol: (!d.members.is_empty()).then(|| d.protocol.to_string()),
        coordinator,
        group_epoch: None,
        target_epoch: None,
        members: d
            .members
            .into_iter()
            .map(|m| Member {
                member_id: m.member_id,
                instance_id: None,
                host: m.host,
                client_id: m.client_id,
                assignment: m.assignment,
                epoch: None,
                target: None,
            })
            .collect(),
        offsets: d.offsets,
    }
}

fn from_remote(g: GroupInfo, offsets: BTreeMap<TopicPartition, CommittedOffset>) -> Group {
    let (id, host, port) = &g.coordinator;
    let host = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    Group {
        group_id: g.group_id,
        state: g.state,
        protocol: (!g.assignor.is_empty()).then_some(g.assignor),
        coordinator: (*id, host),
        group_epoch: g.group_epoch,
        target_epoch: g.assignment_epoch,
        members: g
            .members
            .iter()
            .map(|m| Member {
                member_id: m.member_id.clone(),
                instance_id: m.instance_id.clone(),
                host: m.host.strip_prefix('/').unwrap_or(&m.host).to_string(),
                client_id: m.client_id.clone(),
                assignment: m.assignment.clone(),
                epoch: m.epoch,
                target: m.target.clone(),
            })
            .collect(),
        offsets,
    }
}
