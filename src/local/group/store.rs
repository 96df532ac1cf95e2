//! [`GroupStore`]: the groups directory of a log dir, committed offsets, and the admin operations
//! (`list`, `describe`, `reset_offsets`, `delete_group`, `delete_offsets`).
//!
//! Also holds `GroupDir`, the paths and file operations of one group that [`super::member`]
//! shares: the generation counter, member scanning and reaping, offsets files.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, TryLockError};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use kafka_protocol::ResponseError;
use serde::{Deserialize, Serialize};

use super::super::error::{IoContext, LocalError, Result};
use super::super::lock::{FileLock, LOCK_TIMEOUT, LockMode};
use super::super::logdir::{sync_dir, write_atomically};
use super::member::{Member, MemberConfig, SERVER_CLIENT_ID};
use super::{
    CommittedOffset, GROUP_SUBSCRIBED_TO_TOPIC, GroupDescription, GroupState, MemberDescription,
    RANGE_PROTOCOL, ServedMember, TopicPartition, decode_name, encode_name,
};

/// The directory under the log dir that holds every group.
pub const GROUPS_DIR: &str = "groups";
const OFFSETS_FILE: &str = "offsets";
const GENERATION_FILE: &str = "generation";
const MEMBERS_DIR: &str = "members";
const MEMBER_SUFFIX: &str = ".member";
const STATE_SUFFIX: &str = ".state";
/// Longest encoded group or member id: leaves room for suffixes and temporary names within the
/// usual 255-byte file-name limit.
const MAX_ENCODED_NAME: usize = 200;

/// The consumer groups of one log directory (`<log dir>/groups`).
#[derive(Clone, Debug)]
pub struct GroupStore {
    root: PathBuf,
}

impl GroupStore {
    /// The groups of the log directory at `log_dir_root`. Nothing is created until a group is.
    pub fn new(log_dir_root: &Path) -> GroupStore {
        GroupStore {
            root: log_dir_root.join(GROUPS_DIR),
        }
    }

    /// The directory that holds every group.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The ids of the groups that exist (have committed offsets or live members), sorted.
    pub fn list(&self) -> Result<Vec<String>> {
        let entries = match fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(read_error(&self.root, e)),
        };
        let mut groups = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| read_error(&self.root, e))?;
            let Some(id) = entry.file_name().to_str().and_then(decode_name) else {
                continue;
            };
            if self.is_consumer_group(&id)? {
                groups.push(id);
            }
        }
        groups.sort();
        Ok(groups)
    }

    /// Describes a group: its state, live members and committed offsets; `None` if it does not
    /// exist. Dead and hung members are left out (the next member poll or admin change removes
    /// them).
    pub fn describe(&self, group: &str) -> Result<Option<GroupDescription>> {
        let dir = self.group_dir(group)?;
        if !dir.dir.is_dir() {
            return Ok(None);
        }
        // Shared: a consistent snapshot of offsets and ownership, while changes wait.
        let _lock = dir.lock(LockMode::Shared)?;
        let live: Vec<Peer> = dir
            .scan(None, true)?
            .into_iter()
            .filter(|p| p.liveness == Liveness::Live)
            .collect();
        let offsets = dir.read_offsets()?;
        if live.is_empty() && offsets.is_empty() {
            return Ok(None);
        }
        let state = group_state(&live);
        let targets = targets(&live);
        let mut members: Vec<MemberDescription> = Vec::new();
        for p in live {
            if p.info.client_id == SERVER_CLIENT_ID && !p.state.served.is_empty() {
                // The server's stand-in: the networked members it stands for.
                members.extend(p.state.served.into_iter().map(MemberDescription::from));
                continue;
            }
            members.push(MemberDescription {
                target_assignment: targets.get(&p.id).cloned().unwrap_or_default(),
                member_id: p.id,
                client_id: p.info.client_id,
                host: p.info.host,
                subscribed_topics: p.state.subscription.into_keys().collect(),
                assignment: p.state.owned.into_iter().collect(),
            });
        }
        members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
        Ok(Some(GroupDescription {
            group_id: group.to_string(),
            state,
            protocol: RANGE_PROTOCOL,
            members,
            offsets,
        }))
    }

    /// The group's committed offsets (empty if it has none or does not exist).
    pub fn committed(&self, group: &str) -> Result<BTreeMap<TopicPartition, CommittedOffset>> {
        self.group_dir(group)?.read_offsets()
    }

    /// Reset: atomically writes these offsets (other partitions' offsets are kept), only if the
    /// group has no live members, checked under the group lock in the same critical section as
    /// the write. Otherwise [`LocalError::GroupNotEmpty`]. Creates the group if needed.
    pub fn reset_offsets(
        &self,
        group: &str,
        offsets: &BTreeMap<TopicPartition, i64>,
    ) -> Result<()> {
        let dir = self.group_dir(group)?;
        dir.create()?;
        let _lock = dir.lock(LockMode::Exclusive)?;
        refuse_share_group(&dir)?;
        dir.require_inactive(&dir.reap(None)?)?;
        let mut committed = dir.read_offsets()?;
        let mut changed = false;
        for ((topic, partition), &offset) in offsets {
            let new = CommittedOffset {
                offset,
                leader_epoch: None,
            };
            let old = committed.insert((topic.clone(), *partition), new);
            changed |= old.as_ref() != Some(&new);
        }
        if changed {
            dir.write_offsets(&committed)?;
        }
        Ok(())
    }

    /// Commits the offsets of a committed transaction (checked when they were sent), whoever
    /// the group's members are now, under the group lock. Creates the group if needed.
    pub fn commit_transactional(
        &self,
        group: &str,
        offsets: &BTreeMap<TopicPartition, CommittedOffset>,
    ) -> Result<()> {
        let dir = self.group_dir(group)?;
        dir.create()?;
        let _lock = dir.lock(LockMode::Exclusive)?;
        refuse_share_group(&dir)?;
        let mut committed = dir.read_offsets()?;
        committed.extend(offsets.iter().map(|(k, v)| (k.clone(), *v)));
        dir.write_offsets(&committed)
    }

    /// Deletes a group's committed offsets, so that it no longer exists.
    /// [`LocalError::GroupNotEmpty`] if it has live members, [`LocalError::GroupNotFound`] if it
    /// does not exist. The directory and its permanent lock file stay (lock files are never
    /// removed, see [`FileLock`]); an empty directory does not count as a group.
    pub fn delete_group(&self, group: &str) -> Result<()> {
        let dir = self.group_dir(group)?;
        if !dir.dir.is_dir() {
            return Err(LocalError::GroupNotFound(group.to_string()));
        }
        let _lock = dir.lock(LockMode::Exclusive)?;
        dir.require_inactive(&dir.reap(None)?)?;
        let path = dir.offsets_path();
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(LocalError::GroupNotFound(group.to_string()));
            }
            Err(e) => {
                return Err(LocalError::io(
                    format!("cannot remove {}", path.display()),
                    e,
                ));
            }
        }
        dir.remove_temp_files()?;
        sync_dir(&dir.dir)
    }

    /// Drops every group's committed offsets for `topic`, as a broker does when a topic is
    /// deleted: a topic created again under the name starts afresh, instead of being read from
    /// the old topic's positions (which skipped its first records). Live members keep their
    /// own positions; their consumers notice the deletion themselves.
    pub fn forget_topic(&self, topic: &str) -> Result<()> {
        for group in self.list()? {
            let dir = self.group_dir(&group)?;
            let _lock = dir.lock(LockMode::Exclusive)?;
            let mut committed = dir.read_offsets()?;
            let before = committed.len();
            committed.retain(|(t, _), _| t != topic);
            if committed.len() != before {
                dir.write_offsets(&committed)?;
            }
        }
        Ok(())
    }

    /// Deletes the committed offsets of these partitions. A partition of a topic that a live
    /// member subscribes to is refused (Kafka's `GROUP_SUBSCRIBED_TO_TOPIC`) with the message
    /// [`GROUP_SUBSCRIBED_TO_TOPIC`]; the others are deleted in one atomic write (a partition
    /// with nothing committed counts as deleted). Results come in the order given.
    /// [`LocalError::GroupNotFound`] if the group does not exist.
    pub fn delete_offsets(
        &self,
        group: &str,
        partitions: &[TopicPartition],
    ) -> Result<Vec<(TopicPartition, Result<(), String>)>> {
        let dir = self.group_dir(group)?;
        if !dir.dir.is_dir() {
            return Err(LocalError::GroupNotFound(group.to_string()));
        }
        let _lock = dir.lock(LockMode::Exclusive)?;
        let live = dir.reap(None)?;
        let mut committed = dir.read_offsets()?;
        if live.is_empty() && committed.is_empty() {
            return Err(LocalError::GroupNotFound(group.to_string()));
        }
        let subscribed: BTreeSet<&String> = live
            .iter()
            .flat_map(|p| p.state.subscription.keys())
            .collect();
        let mut results = Vec::with_capacity(partitions.len());
        let mut changed = false;
        for tp in partitions {
            if subscribed.contains(&tp.0) {
                results.push((tp.clone(), Err(GROUP_SUBSCRIBED_TO_TOPIC.to_string())));
            } else {
                changed |= committed.remove(tp).is_some();
                results.push((tp.clone(), Ok(())));
            }
        }
        if changed {
            dir.write_offsets(&committed)?;
        }
        Ok(results)
    }

    /// Whether `group` is a consumer group here: it has committed offsets or a live member
    /// (what [`GroupStore::list`] lists).
    pub fn is_consumer_group(&self, group: &str) -> Result<bool> {
        let dir = GroupDir::at(&self.root, group);
        Ok(!dir.read_offsets()?.is_empty()
            || dir
                .scan(None, false)?
                .iter()
                .any(|p| p.liveness == Liveness::Live))
    }

    /// Joins the group as a new member (creating the group if needed). The member owns nothing
    /// until its first [`Member::poll`].
    pub fn join(&self, group: &str, client_id: &str, config: MemberConfig) -> Result<Member> {
        let dir = self.group_dir(group)?;
        Member::join(dir, client_id, config, false)
    }

    /// Joins as the stand-in of `kafka-server-start`'s networked members (client id
    /// [`super::member::SERVER_CLIENT_ID`]): refused while the group has live `--log-dir`
    /// members, and it refuses them while it lives.
    pub fn join_for_server(&self, group: &str, config: MemberConfig) -> Result<Member> {
        let dir = self.group_dir(group)?;
        Member::join(dir, super::member::SERVER_CLIENT_ID, config, true)
    }

    fn group_dir(&self, group: &str) -> Result<GroupDir> {
        if group.is_empty() {
            return Err(LocalError::Invalid(
                "The configured groupId is invalid: a group id must not be empty".to_string(),
            ));
        }
        if encode_name(group).len() > MAX_ENCODED_NAME {
            return Err(LocalError::Invalid(format!(
                "group id '{group}' is too long for the embedded log (at most {MAX_ENCODED_NAME} bytes once special characters are percent-encoded)"
            )));
        }
        Ok(GroupDir::at(&self.root, group))
    }
}

/// Whether a member's process is alive, judged by its member file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Liveness {
    /// Its lock is held and its heartbeat is recent.
    Live,
    /// Its lock could be taken: the process is gone.
    Dead,
    /// Its lock is held but it has not heartbeated within its session timeout.
    Hung,
}

/// The immutable content of a member file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct MemberInfo {
    pub member_id: String,
    pub client_id: String,
    pub host: String,
    pub session_timeout_ms: u64,
}

/// The mutable part of a member, published in its state file under the group lock.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MemberState {
    /// Topic -> partition count, as this member sees the topics it subscribes to.
    pub subscription: BTreeMap<String, u32>,
    /// The partitions it owns.
    pub owned: BTreeSet<TopicPartition>,
    /// The stand-in of `kafka-server-start`: the networked members it stands for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub served: Vec<ServedMember>,
}

/// A member found in the members directory.
#[derive(Clone, Debug)]
pub(crate) struct Peer {
    pub id: String,
    pub liveness: Liveness,
    /// Default for dead members (never read).
    pub info: MemberInfo,
    /// Default unless the scan was asked to read states.
    pub state: MemberState,
}

/// Refuses to give committed offsets to a share group's id, which would make it a consumer
/// group too (Kafka keeps the kinds apart), with its coordinator's answer. Called under the
/// group lock, under which a share group is first made.
fn refuse_share_group(dir: &GroupDir) -> Result<()> {
    if crate::local::share::is_share_group(&dir.dir) {
        return Err(LocalError::kafka(
            ResponseError::GroupIdNotFound,
            format!("Group {} is not a consumer group.", dir.group),
        ));
    }
    Ok(())
}

/// One group's directory and the file operations on it.
#[derive(Clone, Debug)]
pub(crate) struct GroupDir {
    pub group: String,
    pub dir: PathBuf,
}

impl GroupDir {
    pub fn at(root: &Path, group: &str) -> GroupDir {
        GroupDir {
            group: group.to_string(),
            dir: root.join(encode_name(group)),
        }
    }

    pub fn offsets_path(&self) -> PathBuf {
        self.dir.join(OFFSETS_FILE)
    }

    pub fn members_dir(&self) -> PathBuf {
        self.dir.join(MEMBERS_DIR)
    }

    pub fn member_path(&self, member_id: &str) -> PathBuf {
        self.members_dir()
            .join(format!("{}{MEMBER_SUFFIX}", encode_name(member_id)))
    }

    pub fn state_path(&self, member_id: &str) -> PathBuf {
        self.members_dir()
            .join(format!("{}{STATE_SUFFIX}", encode_name(member_id)))
    }

    /// Whether `member_id` fits in a file name.
    pub fn valid_member_id(member_id: &str) -> bool {
        encode_name(member_id).len() <= MAX_ENCODED_NAME
    }

    /// Creates the group and members directories (idempotent).
    pub fn create(&self) -> Result<()> {
        let members = self.members_dir();
        if members.is_dir() {
            return Ok(());
        }
        // The log dir itself may be new: it gets its format marker first.
        if let Some(log_dir) = self.dir.ancestors().nth(2) {
            crate::local::LogDir::initialize(log_dir)?;
        }
        fs::create_dir_all(&members).context(|| format!("cannot create {}", members.display()))?;
        // Durable directory entries (members, the group, `groups` in the log dir), so that a
        // committed offset never sits in a directory that a crash makes disappear.
        for dir in self.dir.ancestors().take(3) {
            sync_dir(dir)?;
        }
        Ok(())
    }

    /// Takes the group lock.
    pub fn lock(&self, mode: LockMode) -> Result<FileLock> {
        FileLock::acquire(&self.dir.join(".lock"), mode)
    }

    /// Takes the group lock, calling `waiting` while another holds it.
    pub fn lock_waiting(
        &self,
        mode: LockMode,
        waiting: impl FnMut() -> Result<()>,
    ) -> Result<FileLock> {
        FileLock::acquire_waiting(&self.dir.join(".lock"), mode, LOCK_TIMEOUT, waiting)
    }

    /// The generation counter (0 if never written).
    pub fn read_generation(&self) -> Result<u64> {
        let path = self.dir.join(GENERATION_FILE);
        match fs::read_to_string(&path) {
            Ok(text) => Ok(text.trim().parse().unwrap_or(0)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(0),
            Err(e) => Err(read_error(&path, e)),
        }
    }

    /// Bumps the generation counter; call under the group lock. Returns the new value.
    pub fn bump_generation(&self) -> Result<u64> {
        let next = self.read_generation()?.wrapping_add(1);
        replace_file(&self.dir.join(GENERATION_FILE), next.to_string().as_bytes())?;
        Ok(next)
    }

    /// The committed offsets (empty if none).
    pub fn read_offsets(&self) -> Result<BTreeMap<TopicPartition, CommittedOffset>> {
        let path = self.offsets_path();
        match fs::read_to_string(&path) {
            Ok(text) => parse_offsets(&text).map_err(|why| {
                LocalError::Invalid(format!(
                    "committed offsets file {} is damaged ({why}); restore it or delete the group",
                    path.display()
                ))
            }),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(read_error(&path, e)),
        }
    }

    /// Replaces the committed offsets atomically (tmp, fsync, rename, directory fsync); call
    /// under the group lock.
    pub fn write_offsets(&self, offsets: &BTreeMap<TopicPartition, CommittedOffset>) -> Result<()> {
        let text = format_offsets(offsets)?;
        write_atomically(&self.offsets_path(), text.as_bytes())
    }

    /// Replaces a member's state file; call under the group lock.
    pub fn write_state(&self, member_id: &str, state: &MemberState) -> Result<()> {
        let json = serde_json::to_vec(state)
            .map_err(|e| LocalError::Invalid(format!("cannot encode member state: {e}")))?;
        replace_file(&self.state_path(member_id), &json)
    }

    /// Removes a member's state and member files; call under the group lock.
    pub fn remove_member(&self, member_id: &str) -> Result<()> {
        // State first: a crash in between leaves a member file whose lock is free (removed as
        // dead later), never a live-looking member without its state.
        for path in [self.state_path(member_id), self.member_path(member_id)] {
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(LocalError::io(
                        format!("cannot remove {}", path.display()),
                        e,
                    ));
                }
            }
        }
        Ok(())
    }

    /// Lists the members and judges their liveness; `me` is taken as live without a check (its
    /// own lock is held through another file description, and it is polling right now). Reads
    /// the state files of live members when `with_state`.
    pub fn scan(&self, me: Option<&str>, with_state: bool) -> Result<Vec<Peer>> {
        let dir = self.members_dir();
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(read_error(&dir, e)),
        };
        let mut peers = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| read_error(&dir, e))?;
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(MEMBER_SUFFIX))
                .and_then(decode_name)
            else {
                continue;
            };
            let Some((liveness, info)) = self.judge(&id, me == Some(id.as_str()))? else {
                continue; // left or was removed since the listing
            };
            let state = if with_state && liveness == Liveness::Live {
                self.read_state(&id)?
            } else {
                MemberState::default()
            };
            peers.push(Peer {
                id,
                liveness,
                info,
                state,
            });
        }
        peers.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(peers)
    }

    /// Judges one member file; `None` if it no longer exists.
    fn judge(&self, id: &str, is_me: bool) -> Result<Option<(Liveness, MemberInfo)>> {
        let path = self.member_path(id);
        let mut file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(read_error(&path, e)),
        };
        if !is_me {
            match file.try_lock() {
                // The lock is released when `file` is dropped at the end of this function; the
                // file is removed only by a reaper holding the group lock.
                Ok(()) => return Ok(Some((Liveness::Dead, dead_info(id)))),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(e)) => {
                    return Err(LocalError::io(format!("cannot lock {}", path.display()), e));
                }
            }
        }
        let mut text = String::new();
        file.read_to_string(&mut text)
            .map_err(|e| read_error(&path, e))?;
        let info: MemberInfo = serde_json::from_str(&text).map_err(|e| {
            LocalError::Invalid(format!("member file {} is damaged: {e}", path.display()))
        })?;
        let modified = file
            .metadata()
            .and_then(|m| m.modified())
            .map_err(|e| read_error(&path, e))?;
        let silent = SystemTime::now()
            .duration_since(modified)
            .unwrap_or(Duration::ZERO);
        let hung = !is_me && silent > Duration::from_millis(info.session_timeout_ms);
        Ok(Some((
            if hung { Liveness::Hung } else { Liveness::Live },
            info,
        )))
    }

    fn read_state(&self, id: &str) -> Result<MemberState> {
        let path = self.state_path(id);
        match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                LocalError::Invalid(format!(
                    "member state file {} is damaged: {e}",
                    path.display()
                ))
            }),
            // A member that crashed while joining; it owns nothing.
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(MemberState::default()),
            Err(e) => Err(read_error(&path, e)),
        }
    }

    /// Under the group lock: removes dead and hung members (and leftovers of crashed joins and
    /// writes), bumping the generation if any member was removed. Returns the live members with
    /// their states, sorted by id.
    pub fn reap(&self, me: Option<&str>) -> Result<Vec<Peer>> {
        let peers = self.scan(me, true)?;
        let mut removed = false;
        let mut live = Vec::with_capacity(peers.len());
        for peer in peers {
            if peer.liveness == Liveness::Live {
                live.push(peer);
            } else {
                self.remove_member(&peer.id)?;
                removed = true;
            }
        }
        self.remove_temp_files()?;
        self.remove_orphan_states(&live)?;
        if removed {
            self.bump_generation()?;
        }
        Ok(live)
    }

    /// Under the group lock every writer is done, so temporary files are leftovers of crashes.
    pub fn remove_temp_files(&self) -> Result<()> {
        for dir in [self.dir.clone(), self.members_dir()] {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(name) = name.to_str() else { continue };
                // Encoded ids never start with '.', so only our own temporary names do (plus
                // the offsets file's, named by `write_atomically`).
                let temp = (name.starts_with('.') && name != ".lock")
                    || name.starts_with(&format!("{OFFSETS_FILE}.tmp-"));
                if temp {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        Ok(())
    }

    fn remove_orphan_states(&self, live: &[Peer]) -> Result<()> {
        let Ok(entries) = fs::read_dir(self.members_dir()) else {
            return Ok(());
        };
        let live: BTreeSet<&str> = live.iter().map(|p| p.id.as_str()).collect();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(STATE_SUFFIX))
                .and_then(decode_name)
            else {
                continue;
            };
            // A state without a member file: its member left or was removed mid-way.
            if !live.contains(id.as_str()) && !self.member_path(&id).exists() {
                let _ = fs::remove_file(entry.path());
            }
        }
        Ok(())
    }

    /// [`LocalError::GroupNotEmpty`] unless `live` is empty.
    pub fn require_inactive(&self, live: &[Peer]) -> Result<()> {
        if live.is_empty() {
            Ok(())
        } else {
            Err(LocalError::GroupNotEmpty {
                group: self.group.clone(),
                state: group_state(live),
            })
        }
    }
}

fn dead_info(id: &str) -> MemberInfo {
    MemberInfo {
        member_id: id.to_string(),
        client_id: String::new(),
        host: String::new(),
        session_timeout_ms: 0,
    }
}

/// The target assignment of each live member, from their published subscriptions. A topic's
/// partition count is the largest any member reports, so that all members compute the same
/// assignment even while their metadata briefly disagrees (after partitions were added).
pub(crate) fn targets(live: &[Peer]) -> BTreeMap<String, Vec<TopicPartition>> {
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    for peer in live {
        for (topic, &n) in &peer.state.subscription {
            let count = counts.entry(topic.clone()).or_insert(0);
            *count = (*count).max(n);
        }
    }
    let subscriptions = live
        .iter()
        .map(|p| {
            (
                p.id.clone(),
                p.state
                    .subscription
                    .keys()
                    .cloned()
                    .collect::<BTreeSet<_>>(),
            )
        })
        .collect();
    crate::assignor::range(&counts, &subscriptions)
}

/// Empty without live members; Stable if each owns exactly its target; else PreparingRebalance.
pub(crate) fn group_state(live: &[Peer]) -> GroupState {
    if live.is_empty() {
        return GroupState::Empty;
    }
    let targets = targets(live);
    let settled = live.iter().all(|p| {
        let target = targets.get(&p.id).map(Vec::as_slice).unwrap_or(&[]);
        p.state.owned.len() == target.len() && target.iter().all(|tp| p.state.owned.contains(tp))
    });
    if settled {
        GroupState::Stable
    } else {
        GroupState::PreparingRebalance
    }
}

/// Replaces a small coordination file with tmp + rename, so readers see the old or the new
/// content. Not fsynced: these files mean nothing after a machine crash (every member is dead).
fn replace_file(path: &Path, data: &[u8]) -> Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = path.with_file_name(format!(".tmp-{:08x}-{name}", rand::random::<u32>()));
    let write = || -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(data)?;
        fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        LocalError::io(format!("cannot write {}", path.display()), e)
    })
}

fn read_error(path: &Path, e: std::io::Error) -> LocalError {
    LocalError::io(format!("cannot read {}", path.display()), e)
}

/// Kafka's CheckpointFile text: `0`, the entry count, then `<topic> <partition> <offset>` lines
/// (with a fourth column, the leader epoch, when known).
fn format_offsets(offsets: &BTreeMap<TopicPartition, CommittedOffset>) -> Result<String> {
    let mut text = format!("0\n{}\n", offsets.len());
    for ((topic, partition), committed) in offsets {
        if topic.is_empty() || topic.chars().any(char::is_whitespace) {
            return Err(LocalError::Invalid(format!(
                "cannot commit an offset for topic '{topic}': a topic name cannot be empty or contain whitespace"
            )));
        }
        text.push_str(&format!("{topic} {partition} {}", committed.offset));
        if let Some(epoch) = committed.leader_epoch {
            text.push_str(&format!(" {epoch}"));
        }
        text.push('\n');
    }
    Ok(text)
}

fn parse_offsets(
    text: &str,
) -> std::result::Result<BTreeMap<TopicPartition, CommittedOffset>, String> {
    let mut lines = text.lines();
    match lines.next() {
        Some("0") => {}
        other => return Err(format!("unknown version line {other:?}")),
    }
    let count: usize = lines
        .next()
        .and_then(|l| l.parse().ok())
        .ok_or("bad entry count")?;
    let mut offsets = BTreeMap::new();
    for i in 0..count {
        let line = lines
            .next()
            .ok_or(format!("{count} entries announced, {i} found"))?;
        let fields: Vec<&str> = line.split(' ').collect();
        let bad = || format!("bad entry {line:?}");
        if fields.len() != 3 && fields.len() != 4 {
            return Err(bad());
        }
        // Kafka's partition numbers: an int, never negative.
        let partition: i32 = fields[1].parse().ok().filter(|p| *p >= 0).ok_or_else(bad)?;
        let offset: i64 = fields[2].parse().map_err(|_| bad())?;
        let leader_epoch = match fields.get(3) {
            Some(e) => Some(e.parse::<i32>().map_err(|_| bad())?),
            None => None,
        };
        offsets.insert(
            (fields[0].to_string(), partition),
            CommittedOffset {
                offset,
                leader_epoch,
            },
        );
    }
    if lines.next().is_some() {
        return Err("more entries than announced".to_string());
    }
    Ok(offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(t: &str, p: i32) -> TopicPartition {
        (t.to_string(), p)
    }

    #[test]
    fn offsets_text_round_trips() {
        let mut map = BTreeMap::new();
        map.insert(
            tp("a", 0),
            CommittedOffset {
                offset: 5,
                leader_epoch: None,
            },
        );
        map.insert(
            tp("b.c_d-e", 12),
            CommittedOffset {
                offset: 0,
                leader_epoch: Some(3),
            },
        );
        let text = format_offsets(&map).unwrap();
        assert_eq!(text, "0\n2\na 0 5\nb.c_d-e 12 0 3\n");
        assert_eq!(parse_offsets(&text).unwrap(), map);
        assert_eq!(parse_offsets("0\n0\n").unwrap(), BTreeMap::new());
        for bad in [
            "",
            "1\n0\n",
            "0\nx\n",
            "0\n2\na 0 5\n",
            "0\n1\na x 5\n",
            "0\n0\na 0 1\n",
        ] {
            assert!(parse_offsets(bad).is_err(), "{bad:?}");
        }
        assert!(
            format_offsets(&BTreeMap::from([(
                tp("a b", 0),
                CommittedOffset {
                    offset: 1,
                    leader_epoch: None
                }
            )]))
            .is_err()
        );
    }

    #[test]
    fn store_round_trips_and_lists() {
        let dir = tempfile::tempdir().unwrap();
        let store = GroupStore::new(dir.path());
        assert_eq!(store.list().unwrap(), Vec::<String>::new());
        assert!(store.describe("g").unwrap().is_none());
        assert!(store.committed("g").unwrap().is_empty());

        let ids = ["g", "a/b", "with space", "ünïcødé グループ", ".", ".."];
        for (i, id) in ids.iter().enumerate() {
            let offsets = BTreeMap::from([(tp("t", 0), i as i64), (tp("t", 1), 100)]);
            store.reset_offsets(id, &offsets).unwrap();
            let committed = store.committed(id).unwrap();
            assert_eq!(committed[&tp("t", 0)].offset, i as i64);
            assert_eq!(committed[&tp("t", 1)].offset, 100);
            let d = store.describe(id).unwrap().unwrap();
            assert_eq!(d.group_id, *id);
            assert_eq!(d.state, GroupState::Empty);
            assert!(d.members.is_empty());
            assert_eq!(d.offsets, committed);
        }
        let mut sorted: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        sorted.sort();
        assert_eq!(store.list().unwrap(), sorted);
        // Nothing escaped the groups directory (beside it: the log dir's own marker and lock,
        // written when the first group made it a log dir).
        let mut top: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        top.sort();
        assert_eq!(top, [".lock", "groups", "kafkit-format", "topics"]);

        // A reset keeps the other partitions' offsets.
        store
            .reset_offsets("g", &BTreeMap::from([(tp("t", 1), 7), (tp("u", 3), 9)]))
            .unwrap();
        let committed = store.committed("g").unwrap();
        let flat: Vec<(TopicPartition, i64)> =
            committed.into_iter().map(|(k, v)| (k, v.offset)).collect();
        assert_eq!(
            flat,
            vec![(tp("t", 0), 0), (tp("t", 1), 7), (tp("u", 3), 9)]
        );

        assert!(matches!(store.committed(""), Err(LocalError::Invalid(_))));
    }

    #[test]
    fn delete_group_and_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let store = GroupStore::new(dir.path());
        assert!(matches!(store.delete_group("g"), Err(LocalError::GroupNotFound(g)) if g == "g"));
        assert!(matches!(
            store.delete_offsets("g", &[tp("t", 0)]),
            Err(LocalError::GroupNotFound(_))
        ));
        store
            .reset_offsets(
                "g",
                &BTreeMap::from([(tp("t", 0), 1), (tp("t", 1), 2), (tp("u", 0), 3)]),
            )
            .unwrap();
        let results = store
            .delete_offsets("g", &[tp("t", 1), tp("x", 0)])
            .unwrap();
        assert_eq!(results, vec![(tp("t", 1), Ok(())), (tp("x", 0), Ok(()))]);
        assert_eq!(
            store
                .committed("g")
                .unwrap()
                .into_keys()
                .collect::<Vec<_>>(),
            vec![tp("t", 0), tp("u", 0)]
        );
        store.delete_group("g").unwrap();
        assert!(store.describe("g").unwrap().is_none());
        assert!(store.list().unwrap().is_empty());
        assert!(matches!(
            store.delete_group("g"),
            Err(LocalError::GroupNotFound(_))
        ));
        // The group can be created again.
        store
            .reset_offsets("g", &BTreeMap::from([(tp("t", 0), 4)]))
            .unwrap();
        assert_eq!(store.committed("g").unwrap()[&tp("t", 0)].offset, 4);
    }

    #[test]
    fn leftover_temp_files_do_not_matter() {
        let dir = tempfile::tempdir().unwrap();
        let store = GroupStore::new(dir.path());
        store
            .reset_offsets("g", &BTreeMap::from([(tp("t", 0), 1)]))
            .unwrap();
        let gdir = GroupDir::at(store.root(), "g");
        // What a process killed in the middle of a write or a join leaves behind.
        fs::write(gdir.dir.join("offsets.tmp-1234"), "0\n1\nt 0 999\n").unwrap();
        fs::write(gdir.dir.join("offsets.tmp-99"), "0\n5\nt 0").unwrap();
        fs::write(gdir.members_dir().join(".join-abc"), "{").unwrap();
        fs::write(gdir.members_dir().join(".tmp-1-x.state"), "{").unwrap();
        assert_eq!(store.committed("g").unwrap()[&tp("t", 0)].offset, 1);
        assert_eq!(store.list().unwrap(), vec!["g".to_string()]);
        assert_eq!(store.describe("g").unwrap().unwrap().members.len(), 0);
        store
            .reset_offsets("g", &BTreeMap::from([(tp("t", 0), 2)]))
            .unwrap();
        assert_eq!(store.committed("g").unwrap()[&tp("t", 0)].offset, 2);
        // The reset ran under the group lock and cleaned up.
        let mut names: Vec<String> = fs::read_dir(&gdir.dir)
            .unwrap()
            .chain(fs::read_dir(gdir.members_dir()).unwrap())
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, vec![".lock", "members", "offsets"]);
    }

    #[test]
    fn a_thousand_partitions_reset_and_describe() {
        // How fast is measured by `bench/groups.py`, not here (a timed test fails under load).
        let dir = tempfile::tempdir().unwrap();
        let store = GroupStore::new(dir.path());
        let offsets: BTreeMap<TopicPartition, i64> =
            (0..1000).map(|p| (tp("t", p), 7 + i64::from(p))).collect();
        store.reset_offsets("g", &offsets).unwrap();
        let d = store.describe("g").unwrap().unwrap();
        assert_eq!(d.offsets.len(), 1000);
        let committed = store.committed("g").unwrap();
        let read: BTreeMap<TopicPartition, i64> = committed
            .into_iter()
            .map(|(tp, c)| (tp, c.offset))
            .collect();
        assert_eq!(read, offsets);
    }

    #[test]
    fn damaged_offsets_file_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let store = GroupStore::new(dir.path());
        store
            .reset_offsets("g", &BTreeMap::from([(tp("t", 0), 1)]))
            .unwrap();
        fs::write(
            GroupDir::at(store.root(), "g").offsets_path(),
            "0\n3\nt 0 1\n",
        )
        .unwrap();
        let err = store.committed("g").unwrap_err().to_string();
        assert!(err.contains("is damaged"), "{err}");
    }

    #[test]
    fn networked_and_log_dir_members_never_share_a_group() {
        let dir = tempfile::tempdir().unwrap();
        let store = GroupStore::new(dir.path());
        let config = MemberConfig::default();
        let standin = store.join_for_server("net", config).unwrap();
        let err = store.join("net", "local", config).unwrap_err().to_string();
        assert!(err.contains("connected to kafka-server-start"), "{err}");
        // The stand-in makes the group live for resets and deletes.
        let reset = BTreeMap::from([(tp("t", 0), 0)]);
        assert!(matches!(
            store.reset_offsets("net", &reset),
            Err(LocalError::GroupNotEmpty { .. })
        ));
        standin.leave(&BTreeMap::new()).unwrap();
        store
            .join("net", "local", config)
            .unwrap()
            .leave(&BTreeMap::new())
            .unwrap();
        let local = store.join("loc", "local", config).unwrap();
        let err = store
            .join_for_server("loc", config)
            .unwrap_err()
            .to_string();
        assert!(err.contains("using --log-dir"), "{err}");
        drop(local);
    }
}
