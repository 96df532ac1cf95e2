//! Transactions on the embedded log without a server: `kafka-transactions`, answering as a
//! one-broker cluster ([`LOCAL_NODE_ID`] coordinates every transactional id and leads every
//! partition), and [`LocalTransactions`], a producer coordinating its own transactional id.
//!
//! The tool lists the transactional ids of the log dir's transaction store and a partition's
//! producers from its producer state, appends ABORT markers, and fences a transactional id's
//! producers.
//!
//! What writes (an abort, a fence, a transactional producer) is refused while
//! `kafka-server-start` serves the directory: the server coordinates its transactions in memory
//! as well, so it must make the change (`--bootstrap-server`). A transactional producer holds
//! the server lock shared for its whole run (so no server starts under it) and its id's lock
//! exclusively (so one process at a time uses an id, and no fence changes it meanwhile).

use kafka_protocol::ResponseError;

use super::lock::{FileLock, LockMode};
use super::logdir::{LOCAL_NODE_ID, SERVER_LOCK};
use super::partition::txn::{ABORT, COMMIT};
use super::txn::{
    MAX_TIMEOUT_MS, TxnMetadata, TxnOffset, TxnState, TxnStore, producer_ids_of_millisecond,
};
use super::{LocalError, LogDir, Result};
use crate::kafka::TopicPartition;
use crate::kafka::now_ms;
use crate::kafka::transactions::{
    AbortSpec, ProducerDescription, TransactionDescription, TransactionFilter, TransactionListing,
};
use crate::record::encode_marker;

/// The transactional ids that pass `filter` (`pattern` already compiled by the caller, as a
/// full-match test).
pub fn list_transactions(
    dir: &LogDir,
    filter: &TransactionFilter,
    matches: impl Fn(&str) -> bool,
) -> Result<Vec<TransactionListing>> {
    let now = now_ms();
    Ok(TxnStore::new(dir.root())
        .list()?
        .into_iter()
        .filter(|m| filter.producer_ids.is_empty() || filter.producer_ids.contains(&m.producer_id))
        .filter(|m| filter.duration_ms < 0 || now - m.start_ms >= filter.duration_ms)
        .filter(|m| matches(&m.transactional_id))
        .map(|m| TransactionListing {
            transactional_id: m.transactional_id,
            coordinator: LOCAL_NODE_ID,
            producer_id: m.producer_id,
            state: m.state.name().to_string(),
        })
        .collect())
}

/// Transactional id `id`'s state; `None` if it was never initialized.
pub fn describe_transaction(dir: &LogDir, id: &str) -> Result<Option<TransactionDescription>> {
    Ok(TxnStore::new(dir.root())
        .load(id)?
        .map(|m| TransactionDescription {
            coordinator: LOCAL_NODE_ID,
            transactional_id: m.transactional_id,
            producer_id: m.producer_id,
            producer_epoch: m.producer_epoch,
            state: m.state.name().to_string(),
            timeout_ms: m.timeout_ms,
            start_ms: m.start_ms,
            partitions: m.partitions,
        }))
}

/// The partition, or UNKNOWN_TOPIC_OR_PARTITION as a broker words it.
fn partition(dir: &LogDir, tp: &TopicPartition) -> Result<(super::TopicMeta, super::PartitionLog)> {
    let meta = dir
        .topic(&tp.0)?
        .filter(|m| u32::try_from(tp.1).is_ok_and(|p| p < m.partitions))
        .ok_or_else(|| {
            LocalError::kafka(
                ResponseError::UnknownTopicOrPartition,
                "This server does not host this topic-partition.",
            )
        })?;
    let log = dir.partition(&tp.0, tp.1 as u32)?;
    Ok((meta, log))
}

/// The producers that wrote transactions to the partition.
pub fn describe_producers(dir: &LogDir, tp: &TopicPartition) -> Result<Vec<ProducerDescription>> {
    let (_, log) = partition(dir, tp)?;
    Ok(log
        .producer_states()?
        .producers()
        .map(|p| ProducerDescription {
            producer_id: p.producer_id,
            producer_epoch: i32::from(p.epoch),
            coordinator_epoch: p.coordinator_epoch,
            last_sequence: p.last_sequence,
            last_timestamp: p.timestamp,
            current_txn_start_offset: p.current_txn_first_offset,
        })
        .collect())
}

/// Refuses a change while `kafka-server-start` serves the directory; the lock returned
/// (shared) keeps a server from starting until it is dropped.
fn not_served(dir: &LogDir, what: &str) -> Result<FileLock> {
    // Formats a new directory (the server lock lives in it).
    drop(dir.lock(LockMode::Shared)?);
    let path = dir.root().join(SERVER_LOCK);
    match FileLock::try_acquire(&path, LockMode::Shared)? {
        Some(lock) => Ok(lock),
        None => Err(LocalError::Invalid(format!(
            "kafka-server-start is serving {}: {what} through it, with --bootstrap-server",
            dir.root().display()
        ))),
    }
}

/// Appends a marker of `kind` for a producer to one partition.
fn write_marker(
    dir: &LogDir,
    tp: &TopicPartition,
    (producer_id, epoch, coordinator_epoch): (i64, i16, i32),
    kind: i16,
) -> Result<()> {
    let _lock = dir.lock(LockMode::Shared)?;
    let (meta, log) = partition(dir, tp)?;
    let mut marker = encode_marker(producer_id, epoch, kind, coordinator_epoch, now_ms());
    log.append(&mut marker, &meta.partition_config())?;
    Ok(())
}

/// Writes an ABORT marker for the producer's transaction on the partition.
pub fn abort_transaction(dir: &LogDir, spec: &AbortSpec) -> Result<()> {
    let _served = not_served(dir, "abort the transaction")?;
    let tp = (spec.topic.clone(), spec.partition);
    let who = (
        spec.producer_id,
        spec.producer_epoch,
        spec.coordinator_epoch,
    );
    write_marker(dir, &tp, who, ABORT)
}

/// Fences transactional id `id`'s producers, as a new producer of the id would: its epoch
/// goes up, and an open transaction is aborted on each of its partitions first. An id never
/// seen is created, as Kafka's coordinator does.
pub fn fence_producers(dir: &LogDir, id: &str, timeout_ms: i32) -> Result<()> {
    let _served = not_served(dir, "fence the producers")?;
    let store = TxnStore::new(dir.root());
    let _in_use = lock_id(&store, id)?;
    fence(dir, &store, id, timeout_ms).map(drop)
}

/// Takes transactional id `id`'s lock: one process at a time works with an id.
fn lock_id(store: &TxnStore, id: &str) -> Result<FileLock> {
    let path = store.lock_path(id)?;
    match FileLock::try_acquire(&path, LockMode::Exclusive)? {
        Some(lock) => Ok(lock),
        None => Err(LocalError::Invalid(format!(
            "transactional id '{id}' is in use by a producer on this log directory; stop it first"
        ))),
    }
}

/// The fence itself (the id's lock held): the id's state afterwards, Empty at a new epoch.
fn fence(dir: &LogDir, store: &TxnStore, id: &str, timeout_ms: i32) -> Result<TxnMetadata> {
    let mut meta = match store.load(id)? {
        Some(meta) => meta,
        None => TxnMetadata::new(id, new_producer_id(), timeout_ms, now_ms()),
    };
    if meta.state == TxnState::Ongoing {
        meta.bump_epoch(new_producer_id);
        meta.state = TxnState::PrepareAbort;
        save(store, &mut meta)?;
    }
    if meta.state.is_prepared() {
        complete(dir, store, &mut meta)?;
    }
    meta.bump_epoch(new_producer_id);
    meta.state = TxnState::Empty;
    meta.timeout_ms = timeout_ms;
    meta.start_ms = -1;
    save(store, &mut meta)?;
    Ok(meta)
}

/// A producer's transactions on the embedded log, coordinated by the producer itself: its
/// transactional id's state is saved in the log dir's transaction store before each step is
/// taken, so that a producer killed at any moment leaves its transaction to be finished (a
/// decision) or aborted (an open one) by the next producer of the id, by
/// `kafka-transactions forceTerminateTransaction`, or, once its timeout has passed, by the
/// next transactional producer of any id (or a server) on the directory.
#[derive(Debug)]
pub struct LocalTransactions {
    dir: LogDir,
    store: TxnStore,
    meta: TxnMetadata,
    _server: FileLock,
    _id: FileLock,
}

impl LocalTransactions {
    /// Takes transactional id `id` for this process: a transaction its last producer left
    /// open is aborted (one it decided is finished), and the id gets its next epoch.
    pub fn init(dir: &LogDir, id: &str, timeout_ms: i32) -> Result<LocalTransactions> {
        if id.is_empty() {
            return Err(LocalError::Invalid("the transactional id is empty".into()));
        }
        if !(1..=MAX_TIMEOUT_MS).contains(&timeout_ms) {
            return Err(LocalError::kafka(
                ResponseError::InvalidTransactionTimeout,
                format!("transaction.timeout.ms {timeout_ms} is not within 1 and {MAX_TIMEOUT_MS}"),
            ));
        }
        let server = not_served(dir, "produce transactions")?;
        let store = TxnStore::new(dir.root());
        let id_lock = lock_id(&store, id)?;
        let meta = fence(dir, &store, id, timeout_ms)?;
        abort_expired(dir, &store, id)?;
        Ok(LocalTransactions {
            dir: dir.clone(),
            store,
            meta,
            _server: server,
            _id: id_lock,
        })
    }

    /// The producer id and epoch the transactions' batches carry.
    pub fn producer(&self) -> (i64, i16) {
        (self.meta.producer_id, self.meta.producer_epoch)
    }

    /// Opens a transaction over `partitions`, saved before any of its data is written. A
    /// decision a failure interrupted is carried out first.
    pub fn begin(&mut self, partitions: &[TopicPartition]) -> Result<()> {
        if self.meta.state.is_prepared() {
            complete(&self.dir, &self.store, &mut self.meta)?;
        }
        self.change(|meta| {
            meta.state = TxnState::Ongoing;
            meta.start_ms = now_ms();
            meta.partitions = partitions.to_vec();
            meta.partitions.sort();
            meta.offsets.clear();
        })
    }

    /// Changes the id's state durably: the change is acted on only once it is saved, so a
    /// failed save leaves the state as it was (a decision never saved is never carried out).
    fn change(&mut self, edit: impl FnOnce(&mut TxnMetadata)) -> Result<()> {
        let mut changed = self.meta.clone();
        edit(&mut changed);
        save(&self.store, &mut changed)?;
        self.meta = changed;
        Ok(())
    }

    /// Holds a consumer group's offsets in the open transaction: the group gets them when it
    /// commits.
    pub fn add_offsets(&mut self, group: &str, offsets: &[(TopicPartition, i64)]) -> Result<()> {
        self.change(|meta| {
            for ((topic, partition), offset) in offsets {
                meta.put_offset(TxnOffset {
                    group: group.to_string(),
                    topic: topic.clone(),
                    partition: *partition,
                    offset: *offset,
                    leader_epoch: -1,
                });
            }
        })
    }

    /// Ends the open transaction (its data written and durable): the decision is saved, then
    /// the markers are written to each of its partitions, then the end is saved.
    pub fn end(&mut self, commit: bool) -> Result<()> {
        // A decision a failure interrupted (a marker not written): carried out again.
        if self.meta.state.is_prepared() {
            let decided = self.meta.state == TxnState::PrepareCommit;
            complete(&self.dir, &self.store, &mut self.meta)?;
            if decided != commit {
                return Err(LocalError::Invalid(format!(
                    "the transaction was already {} and cannot be {} now",
                    if decided { "committed" } else { "aborted" },
                    if commit { "committed" } else { "aborted" }
                )));
            }
            return Ok(());
        }
        if self.meta.state != TxnState::Ongoing {
            return Ok(());
        }
        self.change(|meta| {
            meta.state = match commit {
                true => TxnState::PrepareCommit,
                false => TxnState::PrepareAbort,
            };
        })?;
        complete(&self.dir, &self.store, &mut self.meta)
    }
}

/// Aborts the transactions of other ids left open past their `transaction.timeout.ms` by a
/// producer that is gone (its id's lock is free), fencing them, as a server's coordinator
/// would: without a server, each transactional producer's start does it. An id in use is
/// left to its producer.
fn abort_expired(dir: &LogDir, store: &TxnStore, except: &str) -> Result<()> {
    let now = now_ms();
    for meta in store.list()? {
        let expired = meta.state == TxnState::Ongoing
            && meta.start_ms >= 0
            && meta.start_ms.saturating_add(i64::from(meta.timeout_ms)) < now;
        if !expired || meta.transactional_id == except {
            continue;
        }
        let Some(_in_use) = FileLock::try_acquire(
            &store.lock_path(&meta.transactional_id)?,
            LockMode::Exclusive,
        )?
        else {
            continue;
        };
        // Read again under the id's lock: its producer may have ended it meanwhile.
        let Some(mut meta) = store.load(&meta.transactional_id)? else {
            continue;
        };
        if meta.state != TxnState::Ongoing {
            continue;
        }
        meta.bump_epoch(new_producer_id);
        meta.state = TxnState::PrepareAbort;
        save(store, &mut meta)?;
        complete(dir, store, &mut meta)?;
    }
    Ok(())
}

/// A producer id no server of this directory hands out: one of the current millisecond's last
/// 1024 (see [`producer_ids_of_millisecond`]).
fn new_producer_id() -> i64 {
    producer_ids_of_millisecond(now_ms())
        | ((1 << 20) - 1024)
        | (rand::random::<u64>() as i64 & 1023)
}

fn save(store: &TxnStore, meta: &mut TxnMetadata) -> Result<()> {
    meta.last_update_ms = now_ms();
    store.save(meta)
}

/// Carries out a decided transaction: its markers, its offsets (on commit), its end state.
fn complete(dir: &LogDir, store: &TxnStore, meta: &mut TxnMetadata) -> Result<()> {
    let commit = meta.state == TxnState::PrepareCommit;
    let kind = if commit { COMMIT } else { ABORT };
    for tp in &meta.partitions {
        match write_marker(dir, tp, (meta.producer_id, meta.producer_epoch, 0), kind) {
            // A topic deleted since needs no marker.
            Err(e) if e.kind() == Some(ResponseError::UnknownTopicOrPartition) => {}
            other => other?,
        }
    }
    if commit {
        let groups = dir.groups();
        for (group, offsets) in meta.offsets_by_group() {
            groups.commit_transactional(&group, &offsets)?;
        }
    }
    meta.completed();
    save(store, meta)
}
