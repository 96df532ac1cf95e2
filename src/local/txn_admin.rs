//! `kafka-transactions` on the embedded log, answering as a one-broker cluster
//! ([`LOCAL_NODE_ID`] coordinates every transactional id and leads every partition): the
//! transactional ids from the log dir's transaction store, a partition's producers from its
//! producer state, an ABORT marker appended to a partition, and the fencing of a
//! transactional id's producers.
//!
//! What writes (an abort, a fence) is refused while `kafka-server-start` serves the directory:
//! the server coordinates its transactions in memory as well, so it must make the change
//! (`--bootstrap-server`).

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use kafka_protocol::ResponseError;

use super::group::{CommittedOffset, TopicPartition as GroupPartition};
use super::lock::{FileLock, LockMode};
use super::logdir::{LOCAL_NODE_ID, SERVER_LOCK};
use super::partition::txn::{ABORT, COMMIT};
use super::txn::{TxnMetadata, TxnState, TxnStore};
use super::{LocalError, LogDir, Result};
use crate::kafka::TopicPartition;
use crate::kafka::transactions::{
    AbortSpec, ProducerDescription, TransactionDescription, TransactionFilter, TransactionListing,
};
use crate::record::encode_marker;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

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

/// Refuses a change while `kafka-server-start` serves the directory.
fn not_served(dir: &LogDir, what: &str) -> Result<FileLock> {
    let path = dir.root().join(SERVER_LOCK);
    match FileLock::try_acquire(&path, LockMode::Exclusive)? {
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
    // Formats a new directory (the server lock lives in it).
    drop(dir.lock(LockMode::Shared)?);
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
    // Formats a new directory (the server lock lives in it).
    drop(dir.lock(LockMode::Shared)?);
    let _served = not_served(dir, "fence the producers")?;
    let store = TxnStore::new(dir.root());
    let mut meta = match store.load(id)? {
        Some(meta) => meta,
        None => TxnMetadata::new(id, new_producer_id(), timeout_ms, now_ms()),
    };
    if meta.state == TxnState::Ongoing {
        bump(&mut meta);
        meta.state = TxnState::PrepareAbort;
        save(&store, &mut meta)?;
    }
    if meta.state.is_prepared() {
        complete(dir, &store, &mut meta)?;
    }
    bump(&mut meta);
    meta.state = TxnState::Empty;
    meta.timeout_ms = timeout_ms;
    meta.start_ms = -1;
    save(&store, &mut meta)
}

/// A producer id no server of this directory hands out: from the clock, as the server's are
/// (2^20 per millisecond), in the millisecond's last 1024 ids, which a server (counting up
/// from the millisecond it started) does not reach.
fn new_producer_id() -> i64 {
    ((now_ms() & ((1 << 42) - 1)) << 20)
        | ((1 << 20) - 1024)
        | (rand::random::<u64>() as i64 & 1023)
}

fn bump(meta: &mut TxnMetadata) {
    meta.last_producer_epoch = meta.producer_epoch;
    if meta.producer_epoch >= i16::MAX - 1 {
        meta.producer_id = new_producer_id();
        meta.producer_epoch = 0;
        meta.last_producer_epoch = -1;
    } else {
        meta.producer_epoch += 1;
    }
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
            let offsets: BTreeMap<GroupPartition, CommittedOffset> = offsets
                .into_iter()
                .map(|o| {
                    let committed = CommittedOffset {
                        offset: o.offset,
                        leader_epoch: (o.leader_epoch >= 0).then_some(o.leader_epoch),
                    };
                    ((o.topic.clone(), o.partition), committed)
                })
                .collect();
            groups.commit_transactional(group, &offsets)?;
        }
    }
    meta.state = match commit {
        true => TxnState::CompleteCommit,
        false => TxnState::CompleteAbort,
    };
    meta.partitions.clear();
    meta.groups.clear();
    meta.offsets.clear();
    save(store, meta)
}
