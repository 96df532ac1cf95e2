//! Share groups (KIP-932) on the embedded log, across processes with no coordinator: the
//! group's files are the coordinator, as for consumer groups (`super::group`).
//!
//! A share group `g` lives in `<log dir>/groups/<encoded g>/share/`:
//! - `lock`: every change of the group's state is made under this exclusive lock (read the
//!   windows, change them, write them back), so two members never take the same record;
//! - `<encoded topic>-<partition>.window`: each partition's in-flight window
//!   ([`window::ShareWindow`]), replaced atomically; fsync'ed whenever an acknowledgement is in
//!   it (so an acknowledged record is never delivered again, even after a crash), not when only
//!   deliveries changed (Kafka does not persist those either: after a crash an unacknowledged
//!   record is delivered again);
//! - `members/<encoded member id>`: a live member holds an exclusive `flock` on its file, so
//!   the records of a member that died (kill -9 included) go back to the others at once, as a
//!   broker releases them when a member's connection closes. A member that lives but stalls
//!   loses its records when their lock expires.
//!
//! The group's configs (`share.*`, set with `kafka-configs --entity-type groups`) are in
//! `<log dir>/groups/<encoded g>/configs.json`, changed under `configs.lock` beside it: a
//! config makes no share group.

pub mod admin;
mod member;
pub mod window;

use std::collections::BTreeMap;
use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use kafka_protocol::ResponseError;

use super::LogDir;
use super::error::{LocalError, Result};
use super::group::encode_name;
use super::group::store::{GROUPS_DIR, GroupDir};
use super::lock::{FileLock, LockMode};
use super::logdir::sync_dir;
use super::txn::read_state_file;
use crate::kafka::configs::ConfigChange;
use crate::kafka::share::{CONFIG_NAMES, ShareGroupConfig, validate_config};
pub use member::{ShareExchange, ShareMember, SharePartitionExchange};
use window::{ShareWindow, WindowFile};

const SHARE_DIR: &str = "share";
const LOCK_FILE: &str = "lock";
const MEMBERS_DIR: &str = "members";
const WINDOW_SUFFIX: &str = ".window";
const CONFIGS_FILE: &str = "configs.json";
const CONFIGS_LOCK_FILE: &str = "configs.lock";
/// The largest window file kafkit writes is well below this (4000 offsets in flight, each
/// its own run with a member id).
const MAX_WINDOW_FILE: u64 = 4 << 20;
/// A group's configs are a few short names and values.
const MAX_CONFIGS_FILE: u64 = 64 << 10;
/// The most offsets a window file may hold: Kafka's highest in-flight limit.
const MAX_WINDOW_ENTRIES: usize = 4_000;
/// Longest encoded group or member id (the consumer groups' limit).
const MAX_ENCODED_NAME: usize = 200;

/// Whether the group whose directory is `group_dir` (`<log dir>/groups/<encoded id>`) is a
/// share group: it has a share directory, made by its first member or reset (what
/// `kafka-share-groups --list` lists). Group configs live beside it, so setting one makes no
/// share group (Kafka keeps a group's configs apart from its type).
pub fn is_share_group(group_dir: &Path) -> bool {
    group_dir.join(SHARE_DIR).is_dir()
}

/// One share group's files in a log dir.
#[derive(Clone, Debug)]
pub struct ShareGroupDir {
    group: String,
    /// `<log dir>/groups/<encoded group>`.
    group_dir: PathBuf,
}

impl ShareGroupDir {
    /// The files of group `group` in the log dir at `root` (nothing is created yet).
    pub fn new(root: &Path, group: &str) -> Result<ShareGroupDir> {
        if group.is_empty() {
            return Err(LocalError::kafka(
                ResponseError::InvalidGroupId,
                "The configured groupId is invalid: a group id must not be empty",
            ));
        }
        if encode_name(group).len() > MAX_ENCODED_NAME {
            return Err(LocalError::Invalid(format!(
                "group id '{group}' is too long for the embedded log (at most {MAX_ENCODED_NAME} bytes once special characters are percent-encoded)"
            )));
        }
        Ok(ShareGroupDir {
            group: group.to_string(),
            group_dir: root.join(GROUPS_DIR).join(encode_name(group)),
        })
    }

    pub fn group(&self) -> &str {
        &self.group
    }

    /// Refuses a group id that a consumer group has (committed offsets or a live member), as
    /// Kafka keeps the two kinds apart, with its coordinator's answer.
    fn refuse_consumer_group(&self) -> Result<()> {
        let Some(root) = self.group_dir.ancestors().nth(2) else {
            return Ok(());
        };
        if !is_share_group(&self.group_dir)
            && super::group::store::GroupStore::new(root).is_consumer_group(&self.group)?
        {
            return Err(LocalError::kafka(
                ResponseError::GroupIdNotFound,
                format!("Group {} is not a share group.", self.group),
            ));
        }
        Ok(())
    }

    fn share_dir(&self) -> PathBuf {
        self.group_dir.join(SHARE_DIR)
    }

    fn members_dir(&self) -> PathBuf {
        self.share_dir().join(MEMBERS_DIR)
    }

    /// Creates the group's directories if they are missing (and the log dir's format marker,
    /// if the log dir is new), durably, unless a consumer group has the id. That is checked and
    /// the directories made under the consumer group's lock, under which a consumer joins: so
    /// a first share member and a first consumer never both get in.
    fn create(&self) -> Result<()> {
        if self.members_dir().is_dir() {
            return Ok(());
        }
        self.create_dir(&self.group_dir)?;
        let consumer_group = GroupDir {
            group: self.group.clone(),
            dir: self.group_dir.clone(),
        };
        let _consumers_out = consumer_group.lock(LockMode::Exclusive)?;
        self.refuse_consumer_group()?;
        self.create_dir(&self.members_dir())
    }

    /// Creates `dir` (the group's directory or one in it) if it is missing, with the log dir's
    /// format marker if the log dir is new, durably: each new entry's parent is synced, up to
    /// the log dir (`groups/` itself may be new).
    fn create_dir(&self, dir: &Path) -> Result<()> {
        if dir.is_dir() {
            return Ok(());
        }
        let log_dir = self.group_dir.ancestors().nth(2);
        if let Some(log_dir) = log_dir {
            LogDir::initialize(log_dir)?;
        }
        fs::create_dir_all(dir)
            .map_err(|e| LocalError::io(format!("cannot create {}", dir.display()), e))?;
        for parent in dir.ancestors().skip(1) {
            sync_dir(parent)?;
            if Some(parent) == log_dir {
                break;
            }
        }
        Ok(())
    }

    /// Takes the lock of the group id's configs, which any kind of group (or none yet) may
    /// have: beside them, outside the share directory.
    fn configs_lock(&self) -> Result<FileLock> {
        self.create_dir(&self.group_dir)?;
        FileLock::acquire(&self.group_dir.join(CONFIGS_LOCK_FILE), LockMode::Exclusive)
    }

    /// Takes the group's lock, under which its state changes.
    fn lock(&self) -> Result<FileLock> {
        self.create()?;
        FileLock::acquire(&self.share_dir().join(LOCK_FILE), LockMode::Exclusive)
    }

    fn window_path(&self, topic: &str, partition: i32) -> PathBuf {
        self.share_dir()
            .join(format!("{}-{partition}{WINDOW_SUFFIX}", encode_name(topic)))
    }

    /// The window of a partition (uninitialized when the group never read it).
    fn load_window(&self, topic: &str, partition: i32) -> Result<ShareWindow> {
        let path = self.window_path(topic, partition);
        let Some(bytes) = read_state_file(&path, MAX_WINDOW_FILE)? else {
            return Ok(ShareWindow::uninitialized());
        };
        serde_json::from_slice::<WindowFile>(&bytes)
            .ok()
            .and_then(|file| ShareWindow::from_file(&file, MAX_WINDOW_ENTRIES))
            .ok_or_else(|| {
                LocalError::Invalid(format!(
                    "{} is not a share group state kafkit wrote; delete it to start the group's reading of the partition over (share.auto.offset.reset applies)",
                    path.display()
                ))
            })
    }

    /// Writes a partition's window; `durable`: fsync'ed before this returns.
    fn save_window(
        &self,
        topic: &str,
        partition: i32,
        window: &ShareWindow,
        durable: bool,
    ) -> Result<()> {
        let bytes = serde_json::to_vec(&window.to_file()).expect("a window serializes");
        replace_file(&self.window_path(topic, partition), &bytes, durable)
    }

    /// The member file of `member`.
    fn member_path(&self, member: &str) -> PathBuf {
        self.members_dir().join(encode_name(member))
    }

    /// Whether `member` has gone: its file is missing or no process holds its lock (a file
    /// left by a dead member is removed). Called under the group's lock.
    fn member_gone(&self, member: &str) -> Result<bool> {
        let path = self.member_path(member);
        if !path.exists() {
            return Ok(true);
        }
        match FileLock::try_acquire(&path, LockMode::Exclusive)? {
            Some(_lock) => {
                let _ = fs::remove_file(&path);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The group's configs (`share.*` names and their values).
    pub fn configs(&self) -> Result<BTreeMap<String, String>> {
        let path = self.group_dir.join(CONFIGS_FILE);
        let Some(bytes) = read_state_file(&path, MAX_CONFIGS_FILE)? else {
            return Ok(BTreeMap::new());
        };
        serde_json::from_slice(&bytes).map_err(|_| {
            LocalError::Invalid(format!(
                "{} is not a group config file kafkit wrote; delete it to go back to the defaults",
                path.display()
            ))
        })
    }

    /// The group's settings: its configs over Kafka's defaults.
    pub fn config(&self) -> Result<ShareGroupConfig> {
        Ok(ShareGroupConfig::from_configs(&self.configs()?))
    }

    /// Applies config changes, all or none; every value is checked first.
    pub fn alter_configs(&self, changes: &[ConfigChange]) -> Result<()> {
        for change in changes {
            let name = change.name();
            if !CONFIG_NAMES.contains(&name) {
                let message = if name.starts_with("consumer.") || name.starts_with("streams.") {
                    format!(
                        "the embedded log has no group config {name} (its consumer groups use fixed session and heartbeat settings); it takes the share group configs {}; give --bootstrap-server to configure a cluster's groups",
                        CONFIG_NAMES.join(", ")
                    )
                } else {
                    format!("Unknown group config name: {name}")
                };
                return Err(LocalError::kafka(ResponseError::InvalidConfig, message));
            }
            if let ConfigChange::Set { name, value } = change {
                validate_config(name, value)
                    .map_err(|e| LocalError::kafka(ResponseError::InvalidConfig, e))?;
            }
        }
        let _lock = self.configs_lock()?;
        let mut configs = self.configs()?;
        for change in changes {
            match change {
                ConfigChange::Set { name, value } => {
                    configs.insert(name.clone(), value.clone());
                }
                ConfigChange::Delete { name } => {
                    configs.remove(name);
                }
            }
        }
        let bytes = serde_json::to_vec_pretty(&configs).expect("configs serialize");
        replace_file(&self.group_dir.join(CONFIGS_FILE), &bytes, true)
    }
}

/// Replaces `path` with `data` by a rename (a reader sees the old or the new file, whole);
/// `durable`: the data and the rename reach the disk before this returns.
fn replace_file(path: &Path, data: &[u8], durable: bool) -> Result<()> {
    let tmp = path.with_file_name(format!(".{:016x}.tmp", rand::random::<u64>()));
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(data)?;
        if durable {
            f.sync_all()?;
        }
        fs::rename(&tmp, path)
    };
    if let Err(e) = write() {
        let _ = fs::remove_file(&tmp);
        if e.kind() == ErrorKind::NotFound {
            return Err(LocalError::io(
                format!(
                    "cannot write {}: its directory is gone (the group was deleted meanwhile)",
                    path.display()
                ),
                e,
            ));
        }
        return Err(LocalError::io(
            format!("cannot write {}", path.display()),
            e,
        ));
    }
    if durable {
        sync_dir(path.parent().unwrap_or(Path::new(".")))?;
    }
    Ok(())
}
