//! The transaction coordinator's durable state in a log dir: for each `transactional.id`, its
//! producer id and epoch, its state (Kafka's Empty, Ongoing, PrepareCommit, PrepareAbort,
//! CompleteCommit, CompleteAbort), the partitions and group offsets of its open transaction,
//! its timeout and start time.
//!
//! One JSON file per id, `<log dir>/transactions/<encoded id>.json`, replaced atomically (tmp,
//! fsync, rename) at every change of state, before the change is acted on or answered: so
//! after a crash a transaction in PrepareCommit or PrepareAbort is finished the way it was
//! decided, and one still Ongoing is aborted at its timeout. Kafka keeps the same record in
//! its `__transaction_state` topic.
//!
//! The rules of the transitions live in the server's coordinator (`server::txn`); this module
//! only stores and lists.

use std::collections::BTreeMap;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{IoContext, LocalError, Result};
use super::group::{CommittedOffset, TopicPartition, decode_name, encode_name};
use super::logdir::write_atomically;

/// The first of the producer ids of millisecond `now_ms` (2^20 a millisecond): a server hands
/// out ids counting up from those of the millisecond it started, so that ids do not repeat
/// across restarts; a producer coordinating itself on the embedded log takes one of the
/// millisecond's last 1024, which a server does not reach.
pub fn producer_ids_of_millisecond(now_ms: i64) -> i64 {
    (now_ms & ((1 << 42) - 1)) << 20
}

/// The directory under the log dir that holds every transactional id.
pub const TRANSACTIONS_DIR: &str = "transactions";
/// Kafka's `transaction.max.timeout.ms` default: the longest `transaction.timeout.ms` a
/// producer may ask for.
pub const MAX_TIMEOUT_MS: i32 = 900_000;
/// An epoch this high is exhausted: the id gets a new producer id at epoch 0 (as Kafka).
const LAST_EPOCH: i16 = i16::MAX - 1;
const SUFFIX: &str = ".json";
/// A state file larger than this is not one kafkit wrote (a transaction of a million
/// partitions takes about 30 MB).
const MAX_FILE: u64 = 64 << 20;

/// A transaction's state, as Kafka names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TxnState {
    Empty,
    Ongoing,
    PrepareCommit,
    PrepareAbort,
    CompleteCommit,
    CompleteAbort,
}

impl TxnState {
    /// Kafka's name, as ListTransactions and `kafka-transactions` print it.
    pub fn name(self) -> &'static str {
        match self {
            TxnState::Empty => "Empty",
            TxnState::Ongoing => "Ongoing",
            TxnState::PrepareCommit => "PrepareCommit",
            TxnState::PrepareAbort => "PrepareAbort",
            TxnState::CompleteCommit => "CompleteCommit",
            TxnState::CompleteAbort => "CompleteAbort",
        }
    }

    /// A decision was made and its markers may not all be written yet.
    pub fn is_prepared(self) -> bool {
        matches!(self, TxnState::PrepareCommit | TxnState::PrepareAbort)
    }
}

/// Offsets a transaction commits for a group, held until it ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnOffset {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub leader_epoch: i32,
}

/// One transactional id's state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnMetadata {
    pub transactional_id: String,
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// The epoch before the last bump (-1 none): a retried InitProducerId carrying it gets
    /// the same answer.
    pub last_producer_epoch: i16,
    pub timeout_ms: i32,
    pub state: TxnState,
    /// The partitions of the open (or deciding) transaction, sorted.
    pub partitions: Vec<(String, i32)>,
    /// The offsets sent (TxnOffsetCommit), committed to their groups with the transaction.
    pub offsets: Vec<TxnOffset>,
    /// When the open transaction began (-1 none).
    pub start_ms: i64,
    pub last_update_ms: i64,
    /// In memory only: a change of this state could not be saved, so the state on disk is the
    /// one to go by (the server reads it again before the next request).
    #[serde(skip)]
    pub unsaved: bool,
}

impl TxnMetadata {
    /// A new id: no epoch yet (the first InitProducerId makes it 0).
    pub fn new(transactional_id: &str, producer_id: i64, timeout_ms: i32, now: i64) -> Self {
        TxnMetadata {
            transactional_id: transactional_id.to_string(),
            producer_id,
            producer_epoch: -1,
            last_producer_epoch: -1,
            timeout_ms,
            state: TxnState::Empty,
            partitions: Vec::new(),
            offsets: Vec::new(),
            start_ms: -1,
            last_update_ms: now,
            unsaved: false,
        }
    }

    /// Adds a partition; whether it was new.
    pub fn add_partition(&mut self, topic: &str, partition: i32) -> bool {
        let key = (topic.to_string(), partition);
        match self.partitions.binary_search(&key) {
            Ok(_) => false,
            Err(at) => {
                self.partitions.insert(at, key);
                true
            }
        }
    }

    /// Whether the transaction holds a partition.
    pub fn has_partition(&self, topic: &str, partition: i32) -> bool {
        self.partitions
            .iter()
            .any(|(t, p)| t == topic && *p == partition)
    }

    /// Sets a pending offset (a later one for the same group and partition replaces it).
    pub fn put_offset(&mut self, offset: TxnOffset) {
        match self.offsets.iter_mut().find(|o| {
            o.group == offset.group && o.topic == offset.topic && o.partition == offset.partition
        }) {
            Some(o) => *o = offset,
            None => self.offsets.push(offset),
        }
    }

    /// The pending offsets per group, as the group store commits them.
    pub fn offsets_by_group(&self) -> BTreeMap<String, BTreeMap<TopicPartition, CommittedOffset>> {
        let mut out: BTreeMap<String, BTreeMap<TopicPartition, CommittedOffset>> = BTreeMap::new();
        for o in &self.offsets {
            let committed = CommittedOffset {
                offset: o.offset,
                leader_epoch: (o.leader_epoch >= 0).then_some(o.leader_epoch),
            };
            out.entry(o.group.clone())
                .or_default()
                .insert((o.topic.clone(), o.partition), committed);
        }
        out
    }

    /// The next epoch, or `new_producer_id()` at epoch 0 once the epoch is exhausted (as
    /// Kafka's coordinator does at 32766).
    pub fn bump_epoch(&mut self, new_producer_id: impl FnOnce() -> i64) {
        self.last_producer_epoch = self.producer_epoch;
        if self.producer_epoch >= LAST_EPOCH {
            self.producer_id = new_producer_id();
            self.producer_epoch = 0;
            self.last_producer_epoch = -1;
        } else {
            self.producer_epoch += 1;
        }
    }

    /// The decided transaction is complete: its markers and offsets are written.
    pub fn completed(&mut self) {
        self.state = match self.state {
            TxnState::PrepareCommit => TxnState::CompleteCommit,
            _ => TxnState::CompleteAbort,
        };
        self.partitions.clear();
        self.offsets.clear();
    }
}

/// The transactional ids of one log directory (`<log dir>/transactions`).
#[derive(Clone, Debug)]
pub struct TxnStore {
    root: PathBuf,
}

impl TxnStore {
    /// The store of the log directory at `log_dir_root`; nothing is created until an id is.
    pub fn new(log_dir_root: &Path) -> TxnStore {
        TxnStore {
            root: log_dir_root.join(TRANSACTIONS_DIR),
        }
    }

    fn path(&self, transactional_id: &str) -> Result<PathBuf> {
        let name = encode_name(transactional_id);
        if name.len() > 200 {
            return Err(LocalError::Invalid(format!(
                "transactional id '{transactional_id}' is too long to keep in the log directory"
            )));
        }
        Ok(self.root.join(format!("{name}{SUFFIX}")))
    }

    /// The lock file of an id (its directory created if needed), held by the one process
    /// working with the id on the embedded log.
    pub fn lock_path(&self, transactional_id: &str) -> Result<PathBuf> {
        fs::create_dir_all(&self.root)
            .context(|| format!("cannot create {}", self.root.display()))?;
        Ok(self.path(transactional_id)?.with_extension("lock"))
    }

    /// An id's state; `None` if it was never initialized.
    pub fn load(&self, transactional_id: &str) -> Result<Option<TxnMetadata>> {
        let path = self.path(transactional_id)?;
        read_state(&path)
    }

    /// Replaces an id's state durably.
    pub fn save(&self, meta: &TxnMetadata) -> Result<()> {
        let path = self.path(&meta.transactional_id)?;
        fs::create_dir_all(&self.root)
            .context(|| format!("cannot create {}", self.root.display()))?;
        let json = serde_json::to_vec(meta)
            .map_err(|e| LocalError::Invalid(format!("cannot encode transaction state: {e}")))?;
        write_atomically(&path, &json)
    }

    /// Every id's state, sorted by id.
    pub fn list(&self) -> Result<Vec<TxnMetadata>> {
        let entries = match fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(LocalError::io(
                    format!("cannot list {}", self.root.display()),
                    e,
                ));
            }
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.context(|| format!("cannot list {}", self.root.display()))?;
            let name = entry.file_name();
            let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(SUFFIX)) else {
                continue;
            };
            if decode_name(stem).is_none() {
                continue;
            }
            if let Some(meta) = read_state(&entry.path())? {
                out.push(meta);
            }
        }
        out.sort_by(|a, b| a.transactional_id.cmp(&b.transactional_id));
        Ok(out)
    }
}

fn read_state(path: &Path) -> Result<Option<TxnMetadata>> {
    let Some(bytes) = read_state_file(path, MAX_FILE)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        LocalError::Invalid(format!(
            "{} does not hold a transaction's state ({e}); move it away to forget that \
             transactional id",
            path.display()
        ))
    })
}

/// A state file the embedded log wrote, read whole ([`crate::files::read_limited`]); `None`
/// when there is none. One past `limit` is not a file kafkit wrote.
pub(crate) fn read_state_file(path: &Path, limit: u64) -> Result<Option<Vec<u8>>> {
    use crate::files::ReadError;
    match crate::files::read_limited(path, limit) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(ReadError::Io(e)) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(ReadError::Io(e)) => Err(LocalError::io(format!("cannot read {}", path.display()), e)),
        Err(e @ ReadError::TooLarge { .. }) => Err(LocalError::Invalid(format!(
            "{}: {e}; it is not a file kafkit wrote",
            path.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_and_list_in_id_order() {
        let root = tempfile::tempdir().unwrap();
        let store = TxnStore::new(root.path());
        assert_eq!(store.list().unwrap(), vec![]);
        assert_eq!(store.load("a/b").unwrap(), None);
        let mut meta = TxnMetadata::new("a/b", 7, 60_000, 1);
        assert!(meta.add_partition("t", 1));
        assert!(!meta.add_partition("t", 1));
        meta.add_partition("s", 0);
        meta.put_offset(TxnOffset {
            group: "g".into(),
            topic: "t".into(),
            partition: 0,
            offset: 5,
            leader_epoch: -1,
        });
        store.save(&meta).unwrap();
        store.save(&TxnMetadata::new("0", 8, 10, 2)).unwrap();
        assert_eq!(store.load("a/b").unwrap(), Some(meta.clone()));
        let ids: Vec<String> = store
            .list()
            .unwrap()
            .into_iter()
            .map(|m| m.transactional_id)
            .collect();
        assert_eq!(ids, vec!["0", "a/b"]);
        assert_eq!(meta.partitions, vec![("s".into(), 0), ("t".into(), 1)]);
    }
}
