//! The share groups of a log dir as `kafka-share-groups` sees them: listing, describing (state,
//! members, each partition's start offset and lag), resetting the start offsets, deleting a
//! group or its offsets of some topics. Changes are made under the group's lock and only while
//! the group has no live member, as Kafka refuses them for a group that is not empty.

use std::collections::BTreeMap;
use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use kafka_protocol::ResponseError;

use super::window::ShareWindow;
use super::{MEMBERS_DIR, ShareGroupDir, WINDOW_SUFFIX};
use crate::kafka::TopicPartition;
use crate::kafka::share::{
    ShareGroupDescription, ShareMemberDescription, ShareOffset, ShareOffsetsDeletion,
};
use crate::local::LogDir;
use crate::local::error::{LocalError, Result};
use crate::local::group::decode_name;
use crate::local::group::store::GROUPS_DIR;
use crate::local::logdir::LOCAL_NODE_ID;

/// What a member writes into its member file when it joins, for `--describe --members`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct MemberInfo {
    pub client_id: String,
    pub host: String,
    pub topics: Vec<String>,
}

/// The share groups of the log dir with their states (`Stable` with a live member, else
/// `Empty`), sorted by id.
pub fn list(dir: &LogDir) -> Result<Vec<(String, String)>> {
    let groups = dir.root().join(GROUPS_DIR);
    let entries = match fs::read_dir(&groups) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(LocalError::io(
                format!("cannot read {}", groups.display()),
                e,
            ));
        }
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| LocalError::io(format!("cannot read {}", groups.display()), e))?;
        let Some(id) = entry.file_name().to_str().and_then(decode_name) else {
            continue;
        };
        if !super::is_share_group(&entry.path()) {
            continue;
        }
        let group = ShareGroupDir::new(dir.root(), &id)?;
        out.push((id, state(&group.live_members()?)));
    }
    out.sort();
    Ok(out)
}

fn state(members: &[ShareMemberDescription]) -> String {
    if members.is_empty() {
        "Empty"
    } else {
        "Stable"
    }
    .to_string()
}

/// The group's state and live members; `None` when there is no such share group.
pub fn describe(dir: &LogDir, group: &str) -> Result<Option<ShareGroupDescription>> {
    let share = ShareGroupDir::new(dir.root(), group)?;
    share.refuse_consumer_group()?;
    if !share.exists() {
        return Ok(None);
    }
    let members = share.live_members()?;
    Ok(Some(ShareGroupDescription {
        group_id: group.to_string(),
        state: state(&members),
        coordinator: (dir.root().display().to_string(), -1, LOCAL_NODE_ID),
        group_epoch: 0,
        assignment_epoch: 0,
        members,
    }))
}

/// Each partition the group has state for: its start offset and lag (records from there to
/// the end not done yet). Empty when there is no such group.
pub fn offsets(dir: &LogDir, group: &str) -> Result<BTreeMap<TopicPartition, ShareOffset>> {
    let share = ShareGroupDir::new(dir.root(), group)?;
    let mut out = BTreeMap::new();
    for (topic, partition) in share.windows()? {
        let window = share.load_window(&topic, partition)?;
        let end = u32::try_from(partition)
            .ok()
            .and_then(|p| dir.partition(&topic, p).ok())
            .and_then(|log| log.snapshot().ok())
            .map(|s| s.log_end_offset);
        let offset = if window.is_initialized() {
            ShareOffset {
                start_offset: Some(window.start_offset()),
                leader_epoch: Some(0),
                lag: end.map(|end| {
                    (end - window.start_offset() - window.delivery_complete_count()).max(0)
                }),
            }
        } else {
            ShareOffset {
                start_offset: None,
                leader_epoch: None,
                lag: None,
            }
        };
        out.insert((topic, partition), offset);
    }
    Ok(out)
}

/// Sets the start offsets of `offsets`' partitions (nothing in flight from there), creating the
/// group if needed; refused while the group has live members.
pub fn reset(dir: &LogDir, group: &str, offsets: &BTreeMap<TopicPartition, i64>) -> Result<()> {
    let share = ShareGroupDir::new(dir.root(), group)?;
    // Taking the lock makes the group, refusing a consumer group's id.
    let _lock = share.lock()?;
    share.refuse_live_members(|| format!("Share group '{group}' is not empty."))?;
    for ((topic, partition), offset) in offsets {
        share.save_window(topic, *partition, &ShareWindow::starting_at(*offset), true)?;
    }
    Ok(())
}

/// Deletes the share group (its state; its configs stay, as a cluster keeps a group's configs);
/// refused while it has live members, or when it is no share group.
pub fn delete(dir: &LogDir, group: &str) -> Result<()> {
    let share = ShareGroupDir::new(dir.root(), group)?;
    if !share.exists() {
        return Err(LocalError::kafka(
            ResponseError::GroupIdNotFound,
            format!("Group '{group}' is not a share group."),
        ));
    }
    let _lock = share.lock()?;
    share.refuse_live_members(|| format!("Share group '{group}' is not EMPTY."))?;
    // Everything but the lock, which is held: the group is gone once its windows are.
    let root = share.share_dir();
    for entry in fs::read_dir(&root)
        .map_err(|e| LocalError::io(format!("cannot read {}", root.display()), e))?
    {
        let entry =
            entry.map_err(|e| LocalError::io(format!("cannot read {}", root.display()), e))?;
        let path = entry.path();
        let removed = if path.is_dir() {
            fs::remove_dir_all(&path)
        } else if entry.file_name() == super::LOCK_FILE {
            continue;
        } else {
            fs::remove_file(&path)
        };
        removed.map_err(|e| LocalError::io(format!("cannot remove {}", path.display()), e))?;
    }
    let _ = fs::remove_file(root.join(super::LOCK_FILE));
    let _ = fs::remove_dir(&root);
    Ok(())
}

/// Deletes the group's state of `topics`; refused (as a whole) while it has live members.
pub fn delete_offsets(
    dir: &LogDir,
    group: &str,
    topics: &[String],
) -> Result<ShareOffsetsDeletion> {
    let share = ShareGroupDir::new(dir.root(), group)?;
    share.refuse_consumer_group()?;
    if !share.exists() {
        return Err(LocalError::kafka(
            ResponseError::GroupIdNotFound,
            format!("Group {group} not found."),
        ));
    }
    let _lock = share.lock()?;
    if !share.live_members()?.is_empty() {
        return Ok(ShareOffsetsDeletion {
            error: Some("The group is not empty.".to_string()),
            topics: Vec::new(),
        });
    }
    let windows = share.windows()?;
    let mut out = ShareOffsetsDeletion::default();
    for topic in topics {
        if dir.topic(topic)?.is_none() {
            out.topics.push((
                topic.clone(),
                Some("This server does not host this topic-partition.".to_string()),
            ));
            continue;
        }
        let mut deleted = false;
        for (t, partition) in windows.iter().filter(|(t, _)| t == topic) {
            let path = share.window_path(t, *partition);
            fs::remove_file(&path)
                .map_err(|e| LocalError::io(format!("cannot remove {}", path.display()), e))?;
            deleted = true;
        }
        let error = (!deleted).then(|| "There is no offset information to delete.".to_string());
        out.topics.push((topic.clone(), error));
    }
    Ok(out)
}

impl ShareGroupDir {
    /// Whether the group is a share group (see [`super::is_share_group`]).
    fn exists(&self) -> bool {
        super::is_share_group(&self.group_dir)
    }

    /// The partitions the group has a window file for, sorted.
    fn windows(&self) -> Result<Vec<TopicPartition>> {
        let dir = self.share_dir();
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(LocalError::io(format!("cannot read {}", dir.display()), e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry =
                entry.map_err(|e| LocalError::io(format!("cannot read {}", dir.display()), e))?;
            let name = entry.file_name();
            let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(WINDOW_SUFFIX)) else {
                continue;
            };
            let Some((topic, partition)) = stem.rsplit_once('-') else {
                continue;
            };
            if let (Some(topic), Ok(partition)) = (decode_name(topic), partition.parse::<i32>()) {
                out.push((topic, partition));
            }
        }
        out.sort();
        Ok(out)
    }

    /// The members whose process holds their member file's lock, sorted by id (the files of
    /// dead members are removed on the way).
    fn live_members(&self) -> Result<Vec<ShareMemberDescription>> {
        let dir = self.share_dir().join(MEMBERS_DIR);
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(LocalError::io(format!("cannot read {}", dir.display()), e)),
        };
        let mut members = Vec::new();
        for entry in entries {
            let entry =
                entry.map_err(|e| LocalError::io(format!("cannot read {}", dir.display()), e))?;
            let Some(id) = entry.file_name().to_str().and_then(decode_name) else {
                continue;
            };
            if self.member_gone(&id)? {
                continue;
            }
            members.push(member_description(&entry.path(), id));
        }
        members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
        Ok(members)
    }

    /// Refuses with `message` while the group has a live member.
    fn refuse_live_members(&self, message: impl FnOnce() -> String) -> Result<()> {
        if self.live_members()?.is_empty() {
            Ok(())
        } else {
            Err(LocalError::kafka(ResponseError::NonEmptyGroup, message()))
        }
    }
}

/// A live member as its file describes it; every member reads every partition of its topics.
fn member_description(path: &Path, member_id: String) -> ShareMemberDescription {
    let info: Option<MemberInfo> = crate::local::txn::read_state_file(path, 64 << 10)
        .ok()
        .flatten()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let (client_id, host, topics) = match info {
        Some(i) => (i.client_id, i.host, i.topics),
        None => (String::new(), String::new(), Vec::new()),
    };
    let root = path.ancestors().nth(5);
    let mut assignment = BTreeMap::new();
    if let Some(dir) = root.and_then(|r| LogDir::open(r).ok()) {
        for topic in topics {
            if let Ok(Some(meta)) = dir.topic(&topic) {
                assignment.insert(topic, (0..meta.partitions as i32).collect());
            }
        }
    }
    ShareMemberDescription {
        member_id,
        client_id,
        host,
        member_epoch: 0,
        assignment,
    }
}
