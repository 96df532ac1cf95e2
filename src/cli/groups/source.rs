//! Where the group commands get their data: the embedded log or a cluster, behind one face.
//!
//! [`Source`] lists, describes, resets and deletes groups and reads partition counts and log
//! offsets, caching what it read for the run; [`Group`] is a described group in the shape the
//! views print, whichever backend it came from. Failures the Java tool reports per group or per
//! partition come back as its exception text (`org.apache.kafka.common.errors.X: message`).

use std::collections::{BTreeMap, HashMap};

use super::logs::{Logs, Tp};
use crate::cli::CliError;
use crate::local::group::{CommittedOffset, GroupDescription, TopicPartition};
use crate::local::logdir::LOCAL_NODE_ID;
use crate::local::{LocalError, LogDir};
use crate::remote::{Cluster, GroupInfo, RemoteError};

/// GROUP_ID_NOT_FOUND.
const GROUP_ID_NOT_FOUND: i16 = 69;
/// ListOffsets' timestamps for the log start and end.
const EARLIEST: i64 = -2;
const LATEST: i64 = -1;

/// A group listed by `--list`.
pub(super) struct Listed {
    pub group: String,
    /// `Classic` or `Consumer`.
    pub kind: &'static str,
    pub state: String,
}

/// One member of a described group.
pub(super) struct Member {
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

/// A described group, as the views print it.
pub(super) struct Group {
    pub group_id: String,
    /// Kafka's state name: `Stable`, `Empty`, `PreparingRebalance`, ...
    pub state: String,
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

/// The outcome of `--delete-offsets` for the partitions that exist.
pub(super) enum OffsetDeletion {
    /// Each partition's result (the exception text when it failed).
    Done(Vec<(TopicPartition, Result<(), String>)>),
    /// The whole request failed: Kafka's message for the top-level error, and the exception
    /// text every partition gets.
    Failed { message: String, exception: String },
}

/// The embedded log or a cluster, with per-run caches.
pub(super) enum Source<'a> {
    Local {
        dir: &'a LogDir,
        logs: Logs<'a>,
    },
    Remote {
        cluster: &'a mut Cluster,
        counts: HashMap<String, Option<u32>>,
        offsets: HashMap<(Tp, i64), Option<i64>>,
    },
}

fn remote(e: RemoteError) -> CliError {
    CliError::Runtime(e.into())
}

/// Java's `toString()` of the exception for a Kafka error code.
pub(super) fn exception(code: i16) -> String {
    let (class, message) = match code {
        3 => (
            "UnknownTopicOrPartitionException",
            "This server does not host this topic-partition.",
        ),
        24 => (
            "InvalidGroupIdException",
            "The configured groupId is invalid.",
        ),
        29 => ("TopicAuthorizationException", "Topic authorization failed."),
        30 => ("GroupAuthorizationException", "Group authorization failed."),
        68 => ("GroupNotEmptyException", "The group is not empty."),
        69 => ("GroupIdNotFoundException", "The group id does not exist."),
        86 => (
            "GroupSubscribedToTopicException",
            crate::local::group::GROUP_SUBSCRIBED_TO_TOPIC,
        ),
        _ => return RemoteError::broker(code, None).to_string(),
    };
    format!("org.apache.kafka.common.errors.{class}: {message}")
}

/// Kafka's message for a top-level error code (the exception's message).
fn message(code: i16) -> String {
    let text = exception(code);
    match text.split_once(": ") {
        Some((_, m)) if text.starts_with("org.apache") => m.to_string(),
        _ => text,
    }
}

fn to_u32(tp: &crate::remote::Tp) -> Option<TopicPartition> {
    Some((tp.0.clone(), u32::try_from(tp.1).ok()?))
}

impl<'a> Source<'a> {
    pub(super) fn local(dir: &'a LogDir) -> Self {
        Source::Local {
            dir,
            logs: Logs::new(dir),
        }
    }

    pub(super) fn remote(cluster: &'a mut Cluster) -> Self {
        Source::Remote {
            cluster,
            counts: HashMap::new(),
            offsets: HashMap::new(),
        }
    }

    /// Every consumer group (classic or new protocol) with its type and state, sorted by id.
    pub(super) fn list(&mut self) -> Result<Vec<Listed>, CliError> {
        match self {
            Source::Local { dir, .. } => {
                let store = dir.groups();
                let mut out = Vec::new();
                for group in store.list()? {
                    let Some(d) = store.describe(&group)? else {
                        continue; // deleted since the listing
                    };
                    out.push(Listed {
                        group,
                        kind: "Classic",
                        state: d.state.name().to_string(),
                    });
                }
                Ok(out)
            }
            Source::Remote { cluster, .. } => {
                let groups = cluster.list_groups(&[], &[]).map_err(remote)?;
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
    pub(super) fn group_ids(&mut self) -> Result<Vec<String>, CliError> {
        Ok(self.list()?.into_iter().map(|l| l.group).collect())
    }

    /// Describes a group with its committed offsets; `None` if it does not exist.
    pub(super) fn describe(&mut self, group: &str) -> Result<Option<Group>, CliError> {
        match self {
            Source::Local { dir, .. } => {
                let coordinator = (LOCAL_NODE_ID, dir.root().display().to_string());
                Ok(dir
                    .groups()
                    .describe(group)?
                    .map(|d| from_local(d, coordinator)))
            }
            Source::Remote { cluster, .. } => {
                let Some(info) = cluster.describe_group(group).map_err(remote)? else {
                    return Ok(None);
                };
                let committed = cluster.committed_offsets(group).map_err(remote)?;
                let offsets = committed
                    .iter()
                    .filter_map(|(tp, c)| {
                        Some((
                            to_u32(tp)?,
                            CommittedOffset {
                                offset: c.offset,
                                leader_epoch: c.leader_epoch,
                            },
                        ))
                    })
                    .collect();
                Ok(Some(from_remote(info, offsets)))
            }
        }
    }

    /// The topic's partition count, `None` if it does not exist.
    pub(super) fn partitions(&mut self, topic: &str) -> Result<Option<u32>, CliError> {
        match self {
            Source::Local { logs, .. } => Ok(logs.partitions(topic)?),
            Source::Remote {
                cluster, counts, ..
            } => {
                if let Some(n) = counts.get(topic) {
                    return Ok(*n);
                }
                let meta = cluster
                    .metadata(Some(&[topic.to_string()]))
                    .map_err(remote)?;
                let n = meta
                    .topics
                    .iter()
                    .find(|t| t.name == topic && t.error_code == 0)
                    .map(|t| t.partitions.len() as u32);
                counts.insert(topic.to_string(), n);
                Ok(n)
            }
        }
    }

    /// Whether the partition exists.
    pub(super) fn exists(&mut self, tp: &Tp) -> Result<bool, CliError> {
        Ok(self
            .partitions(&tp.0)?
            .is_some_and(|n| tp.1 >= 0 && tp.1 < i64::from(n)))
    }

    /// Reads the offsets for `spec` (a timestamp, [`EARLIEST`] or [`LATEST`]) of many partitions
    /// at once into the cache (one ListOffsets per leader on a cluster).
    fn load(&mut self, tps: &[Tp], spec: i64) -> Result<(), CliError> {
        let Source::Remote {
            cluster, offsets, ..
        } = self
        else {
            return Ok(());
        };
        let wanted: Vec<crate::remote::Tp> = tps
            .iter()
            .filter(|tp| !offsets.contains_key(&((*tp).clone(), spec)))
            .filter_map(|(t, p)| Some((t.clone(), i32::try_from(*p).ok()?)))
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let found = cluster.list_offsets(&wanted, spec).map_err(remote)?;
        for tp in wanted {
            // A partition without a leader (or an unknown one) has no offset to show.
            let v = found
                .get(&tp)
                .and_then(|r| r.as_ref().ok().copied().flatten());
            offsets.insert(((tp.0, i64::from(tp.1)), spec), v);
        }
        Ok(())
    }

    /// Reads the log end offsets of many partitions into the cache.
    pub(super) fn load_ends(&mut self, tps: &[Tp]) -> Result<(), CliError> {
        self.load(tps, LATEST)
    }

    fn offset(&mut self, tp: &Tp, spec: i64) -> Result<Option<i64>, CliError> {
        if matches!(self, Source::Remote { .. }) && !self.exists(tp)? {
            return Ok(None);
        }
        self.load(std::slice::from_ref(tp), spec)?;
        match self {
            Source::Local { logs, .. } => Ok(match spec {
                EARLIEST => logs.start(tp)?,
                LATEST => logs.end(tp)?,
                ts => logs.offset_for_time(tp, ts)?,
            }),
            Source::Remote { offsets, .. } => {
                Ok(offsets.get(&(tp.clone(), spec)).copied().flatten())
            }
        }
    }

    /// The log end offset (ListOffsets latest), `None` if unknown.
    pub(super) fn end(&mut self, tp: &Tp) -> Result<Option<i64>, CliError> {
        self.offset(tp, LATEST)
    }

    /// The log start offset (ListOffsets earliest), `None` if unknown.
    pub(super) fn start(&mut self, tp: &Tp) -> Result<Option<i64>, CliError> {
        self.offset(tp, EARLIEST)
    }

    /// The first offset whose timestamp is `>= ts`, `None` if there is none.
    pub(super) fn offset_for_time(&mut self, tp: &Tp, ts: i64) -> Result<Option<i64>, CliError> {
        self.offset(tp, ts.max(0))
    }

    /// Commits `offsets` for an inactive group (the embedded log or the coordinator refuses
    /// a group that has live members).
    pub(super) fn reset_offsets(
        &mut self,
        group: &str,
        offsets: &BTreeMap<TopicPartition, i64>,
    ) -> Result<(), CliError> {
        match self {
            Source::Local { dir, .. } => Ok(dir.groups().reset_offsets(group, offsets)?),
            Source::Remote { cluster, .. } => {
                let offsets: BTreeMap<crate::remote::Tp, i64> = offsets
                    .iter()
                    .map(|((t, p), o)| ((t.clone(), *p as i32), *o))
                    .collect();
                let results = cluster.commit_offsets(group, &offsets).map_err(remote)?;
                match results.into_iter().find(|(_, code)| *code != 0) {
                    None => Ok(()),
                    Some(((t, p), code)) => Err(super::failed(format!(
                        "{} (committing the offset of {t}-{p} for group {group})",
                        exception(code)
                    ))),
                }
            }
        }
    }

    /// Deletes a group: `Err` holds the exception text Kafka prints for it.
    pub(super) fn delete_group(&mut self, group: &str) -> Result<Result<(), String>, CliError> {
        match self {
            Source::Local { dir, .. } => match dir.groups().delete_group(group) {
                Ok(()) => Ok(Ok(())),
                Err(LocalError::GroupNotFound(_)) => Ok(Err(exception(69))),
                Err(LocalError::GroupNotEmpty { .. }) => Ok(Err(exception(68))),
                Err(LocalError::Invalid(msg)) => Ok(Err(format!(
                    "org.apache.kafka.common.errors.InvalidGroupIdException: {msg}"
                ))),
                Err(e) => Err(e.into()),
            },
            Source::Remote { cluster, .. } => match cluster.delete_group(group).map_err(remote)? {
                0 => Ok(Ok(())),
                code => Ok(Err(exception(code))),
            },
        }
    }

    /// Deletes the committed offsets of existing partitions `tps` of `group`.
    pub(super) fn delete_offsets(
        &mut self,
        group: &str,
        tps: &[TopicPartition],
    ) -> Result<OffsetDeletion, CliError> {
        match self {
            Source::Local { dir, .. } => match dir.groups().delete_offsets(group, tps) {
                Ok(results) => Ok(OffsetDeletion::Done(
                    results
                        .into_iter()
                        .map(|(tp, r)| (tp, r.map_err(|msg| format!("{}: {msg}", class(86)))))
                        .collect(),
                )),
                Err(LocalError::GroupNotFound(_)) => Ok(OffsetDeletion::Failed {
                    message: message(GROUP_ID_NOT_FOUND),
                    exception: exception(GROUP_ID_NOT_FOUND),
                }),
                Err(e) => Err(e.into()),
            },
            Source::Remote { cluster, .. } => {
                let wire: Vec<crate::remote::Tp> =
                    tps.iter().map(|(t, p)| (t.clone(), *p as i32)).collect();
                let (top, partitions) = cluster.delete_offsets(group, &wire).map_err(remote)?;
                // A partition-level code at the top (GROUP_SUBSCRIBED_TO_TOPIC, ...) is
                // reported per partition, as Kafka's admin client does.
                if top != 0 && !matches!(top, 3 | 29 | 86) {
                    return Ok(OffsetDeletion::Failed {
                        message: message(top),
                        exception: exception(top),
                    });
                }
                Ok(OffsetDeletion::Done(
                    partitions
                        .iter()
                        .filter_map(|(tp, code)| {
                            let r = if *code == 0 {
                                Ok(())
                            } else {
                                Err(exception(*code))
                            };
                            Some((to_u32(tp)?, r))
                        })
                        .collect(),
                ))
            }
        }
    }
}

/// The exception class of a code, as [`exception`] names it.
fn class(code: i16) -> String {
    let text = exception(code);
    text.split_once(": ")
        .map_or(text.clone(), |(c, _)| c.to_string())
}

fn from_local(d: GroupDescription, coordinator: (i32, String)) -> Group {
    Group {
        group_id: d.group_id,
        state: d.state.name().to_string(),
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
    let tps = |v: &[crate::remote::Tp]| v.iter().filter_map(to_u32).collect::<Vec<_>>();
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
                assignment: tps(&m.assignment),
                epoch: m.epoch,
                target: m.target.as_deref().map(tps),
            })
            .collect(),
        offsets,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exceptions_are_javas() {
        assert_eq!(
            exception(69),
            "org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist."
        );
        assert_eq!(message(68), "The group is not empty.");
        assert_eq!(
            class(86),
            "org.apache.kafka.common.errors.GroupSubscribedToTopicException"
        );
    }
}
