//! The transaction coordinator: Kafka's state machine for each `transactional.id`, kept durably
//! in the log dir's transaction store (`local::txn`), with the markers it writes to every
//! partition of a transaction when the transaction ends.
//!
//! The protocol served is Kafka's "transaction version 1": partitions and groups join a
//! transaction by AddPartitionsToTxn and AddOffsetsToTxn (or implicitly, by a produce or an
//! offset commit of a producer whose transaction is open), and the epoch stays the same from
//! one transaction to the next. Java clients use it when the server does not advertise
//! `transaction.version` 2, and librdkafka always does.
//!
//! Requests for one id are handled one at a time (a per-id lock). EndTxn answers once the
//! transaction is complete: its decision saved (PrepareCommit/PrepareAbort), its markers
//! written and fdatasync'ed to every partition, its offsets committed to their groups, and
//! CompleteCommit/CompleteAbort saved. A crash in between is finished at the next start, the
//! way it was decided; a transaction left open is aborted at its timeout, and by the next
//! InitProducerId of its id (which fences the old producer with a new epoch).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kafka_protocol::ResponseError;

use super::appender;
use super::broker::Broker;
use super::handlers::{blocking, served_partition};
use crate::kafka::now_ms;
use crate::local::LocalError;
use crate::local::partition::txn::{ABORT, COMMIT};
use crate::local::txn::{MAX_TIMEOUT_MS, TxnMetadata, TxnOffset, TxnState, TxnStore};
use crate::record::{BatchHeader, encode_marker};

/// How often open transactions are checked against their timeout (Kafka's
/// `transaction.abort.timed.out.transaction.cleanup.interval.ms` is 10 s; a shorter scan
/// costs nothing here and ends a dead producer's transaction closer to its timeout).
const TIMEOUT_SCAN: Duration = Duration::from_secs(1);

/// An error code with the message to log or send.
pub type Refused = (ResponseError, String);

/// One id's state: loaded from the store at first use.
#[derive(Debug, Default)]
struct Slot {
    loaded: bool,
    meta: Option<TxnMetadata>,
}

/// The coordinator of every transactional id of the server's log dir.
#[derive(Debug)]
pub struct Transactions {
    store: TxnStore,
    slots: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Slot>>>>,
    /// The partitions with offsets sent in an open transaction, per group, for OffsetFetch's
    /// `require_stable` (UNSTABLE_OFFSET_COMMIT until the transaction ends).
    pending_offsets: Mutex<HashMap<String, Vec<TxnOffset>>>,
}

fn storage(e: LocalError) -> Refused {
    (ResponseError::KafkaStorageError, e.to_string())
}

/// Checks that a request's producer id and epoch are the id's current ones.
fn check_producer(meta: &TxnMetadata, producer_id: i64, epoch: i16) -> Result<(), Refused> {
    if meta.producer_id != producer_id {
        return Err((
            ResponseError::InvalidProducerIdMapping,
            format!(
                "transactional id '{}' has producer id {}, not {producer_id}",
                meta.transactional_id, meta.producer_id
            ),
        ));
    }
    if meta.producer_epoch != epoch {
        return Err((
            ResponseError::ProducerFenced,
            format!(
                "producer {producer_id} of transactional id '{}' is at epoch {}, not {epoch}: \
                 a newer producer with the same transactional id fenced it",
                meta.transactional_id, meta.producer_epoch
            ),
        ));
    }
    Ok(())
}

impl Transactions {
    pub fn new(store: TxnStore) -> Transactions {
        Transactions {
            store,
            slots: Mutex::new(HashMap::new()),
            pending_offsets: Mutex::new(HashMap::new()),
        }
    }

    fn slot(&self, id: &str) -> Arc<tokio::sync::Mutex<Slot>> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(slots.entry(id.to_string()).or_default())
    }

    /// The id's state, loaded from the store at first use.
    async fn load<'a>(
        &self,
        slot: &'a mut Slot,
        id: &str,
    ) -> Result<&'a mut Option<TxnMetadata>, Refused> {
        // A state whose change could not be saved is read again: the disk's is the truth.
        if !slot.loaded || slot.meta.as_ref().is_some_and(|m| m.unsaved) {
            let store = self.store.clone();
            let id = id.to_string();
            slot.meta = blocking(move || store.load(&id)).await.map_err(storage)?;
            slot.loaded = true;
        }
        Ok(&mut slot.meta)
    }

    async fn save(&self, meta: &mut TxnMetadata) -> Result<(), Refused> {
        meta.last_update_ms = now_ms();
        let (store, copy) = (self.store.clone(), meta.clone());
        let saved = blocking(move || store.save(&copy)).await.map_err(storage);
        // Not acted on: the request fails, and the next one reads the saved state again.
        meta.unsaved = saved.is_err();
        saved
    }

    /// InitProducerId with a transactional id: the id's producer id with its next epoch. An
    /// open transaction of the id is aborted first (its producer is fenced).
    pub async fn init_producer_id(
        &self,
        broker: &Arc<Broker>,
        id: &str,
        timeout_ms: i32,
        asked: (i64, i16),
    ) -> Result<(i64, i16), Refused> {
        if id.is_empty() {
            return Err((
                ResponseError::InvalidRequest,
                "the transactional id is empty".into(),
            ));
        }
        if timeout_ms <= 0 || timeout_ms > MAX_TIMEOUT_MS {
            return Err((
                ResponseError::InvalidTransactionTimeout,
                format!(
                    "transaction.timeout.ms {timeout_ms} is not within 1 and {MAX_TIMEOUT_MS} \
                     (the server's transaction.max.timeout.ms)"
                ),
            ));
        }
        if (asked.0 < 0) != (asked.1 < 0) {
            return Err((
                ResponseError::InvalidRequest,
                "producer id and epoch must both be given or both be -1".into(),
            ));
        }
        let slot = self.slot(id);
        let mut slot = slot.lock().await;
        let meta = self.load(&mut slot, id).await?;
        let meta = match meta {
            Some(meta) => meta,
            None => meta.insert(TxnMetadata::new(
                id,
                broker.new_producer_id(),
                timeout_ms,
                now_ms(),
            )),
        };
        if asked.0 >= 0
            && (asked.0 != meta.producer_id
                || (asked.1 != meta.producer_epoch && asked.1 != meta.last_producer_epoch))
        {
            return Err((
                ResponseError::ProducerFenced,
                format!(
                    "producer {} at epoch {} is not the current producer of transactional id \
                     '{id}'",
                    asked.0, asked.1
                ),
            ));
        }
        if meta.state == TxnState::Ongoing {
            // A new producer of the id: the old one's transaction is aborted at a new epoch,
            // which fences it.
            meta.bump_epoch(|| broker.new_producer_id());
            meta.state = TxnState::PrepareAbort;
            self.save(meta).await?;
        }
        if meta.state.is_prepared() {
            self.complete(broker, meta).await?;
        }
        meta.bump_epoch(|| broker.new_producer_id());
        meta.state = TxnState::Empty;
        meta.timeout_ms = timeout_ms;
        meta.start_ms = -1;
        self.save(meta).await?;
        Ok((meta.producer_id, meta.producer_epoch))
    }

    /// AddPartitionsToTxn: the partitions join the id's transaction, which opens if needed.
    /// One answer for all, or per partition: an unknown partition fails alone, the others are
    /// not attempted. `verify_only`: nothing is added; an absent partition is
    /// TRANSACTION_ABORTABLE.
    pub async fn add_partitions(
        &self,
        broker: &Arc<Broker>,
        (id, producer_id, epoch): (&str, i64, i16),
        partitions: &[(String, i32)],
        verify_only: bool,
    ) -> Result<Vec<Result<(), ResponseError>>, Refused> {
        // Unknown partitions first, as Kafka checks them before the transaction.
        let b = Arc::clone(broker);
        let wanted = partitions.to_vec();
        let known: Vec<bool> = blocking(move || {
            wanted
                .iter()
                .map(|(t, p)| served_partition(&b, t, *p).is_ok())
                .collect()
        })
        .await;
        if known.iter().any(|k| !k) {
            return Ok(known
                .iter()
                .map(|&k| match k {
                    true => Err(ResponseError::OperationNotAttempted),
                    false => Err(ResponseError::UnknownTopicOrPartition),
                })
                .collect());
        }
        let slot = self.slot(id);
        let mut slot = slot.lock().await;
        let meta = self
            .open_transaction(&mut slot, id, producer_id, epoch)
            .await?;
        if verify_only {
            return Ok(partitions
                .iter()
                .map(|(t, p)| match meta.has_partition(t, *p) {
                    true => Ok(()),
                    false => Err(ResponseError::TransactionAbortable),
                })
                .collect());
        }
        let mut changed = begin(meta);
        for (t, p) in partitions {
            changed |= meta.add_partition(t, *p);
        }
        if changed {
            self.save(meta).await?;
        }
        Ok(vec![Ok(()); partitions.len()])
    }

    /// The id's metadata, checked for a request of its current producer that may add to its
    /// transaction: the producer is current and no decision is being carried out.
    async fn open_transaction<'a>(
        &self,
        slot: &'a mut Slot,
        id: &str,
        producer_id: i64,
        epoch: i16,
    ) -> Result<&'a mut TxnMetadata, Refused> {
        let meta = self.load(slot, id).await?;
        let Some(meta) = meta.as_mut() else {
            return Err((
                ResponseError::InvalidProducerIdMapping,
                format!("transactional id '{id}' was never initialized (InitProducerId)"),
            ));
        };
        check_producer(meta, producer_id, epoch)?;
        if meta.state.is_prepared() {
            return Err((
                ResponseError::ConcurrentTransactions,
                format!("the last transaction of '{id}' is still being completed"),
            ));
        }
        Ok(meta)
    }

    /// AddOffsetsToTxn: opens the id's transaction (the offsets name their group).
    pub async fn add_offsets(
        &self,
        (id, producer_id, epoch): (&str, i64, i16),
    ) -> Result<(), Refused> {
        let slot = self.slot(id);
        let mut slot = slot.lock().await;
        let meta = self
            .open_transaction(&mut slot, id, producer_id, epoch)
            .await?;
        // The group's offsets come with TxnOffsetCommit (each names its group): adding the
        // group only opens the transaction.
        if begin(meta) {
            self.save(meta).await?;
        }
        Ok(())
    }

    /// TxnOffsetCommit: offsets held in the id's transaction, committed to `group` with it.
    pub async fn commit_offsets(
        &self,
        (id, producer_id, epoch): (&str, i64, i16),
        offsets: Vec<TxnOffset>,
    ) -> Result<(), Refused> {
        let slot = self.slot(id);
        let mut slot = slot.lock().await;
        let meta = self
            .open_transaction(&mut slot, id, producer_id, epoch)
            .await?;
        if meta.state != TxnState::Ongoing {
            return Err((
                ResponseError::InvalidTxnState,
                format!("transactional id '{id}' has no open transaction to add offsets to"),
            ));
        }
        for o in offsets {
            meta.put_offset(o);
        }
        self.save(meta).await?;
        self.note_pending(meta);
        Ok(())
    }

    fn note_pending(&self, meta: &TxnMetadata) {
        let mut pending = self
            .pending_offsets
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if meta.offsets.is_empty() {
            pending.remove(&meta.transactional_id);
        } else {
            pending.insert(meta.transactional_id.clone(), meta.offsets.clone());
        }
    }

    /// Whether an open transaction holds offsets of `group` for the partition (OffsetFetch
    /// with `require_stable` then answers UNSTABLE_OFFSET_COMMIT).
    pub fn has_pending_offset(&self, group: &str, topic: &str, partition: i32) -> bool {
        let pending = self
            .pending_offsets
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        pending
            .values()
            .flatten()
            .any(|o| o.group == group && o.topic == topic && o.partition == partition)
    }

    /// Checks a transactional produce to a partition: its producer is the id's current one
    /// with an open transaction, which the partition joins if it is not in it yet.
    pub async fn verify_produce(
        &self,
        (id, producer_id, epoch): (&str, i64, i16),
        topic: &str,
        partition: i32,
        produce_version: i16,
    ) -> Result<(), Refused> {
        let slot = self.slot(id);
        let mut slot = slot.lock().await;
        let meta = self
            .open_transaction(&mut slot, id, producer_id, epoch)
            .await
            .map_err(|(code, message)| match code {
                // Produce reports a fenced producer by the older code.
                ResponseError::ProducerFenced => (ResponseError::InvalidProducerEpoch, message),
                _ => (code, message),
            })?;
        if meta.state != TxnState::Ongoing {
            let code = match produce_version >= 11 {
                true => ResponseError::TransactionAbortable,
                false => ResponseError::InvalidTxnState,
            };
            return Err((
                code,
                format!(
                    "Partition was not added to the transaction: '{id}' has no open transaction"
                ),
            ));
        }
        if meta.add_partition(topic, partition) {
            self.save(meta).await?;
        }
        Ok(())
    }

    /// EndTxn: commits or aborts the id's open transaction and answers once it is complete.
    pub async fn end_transaction(
        &self,
        broker: &Arc<Broker>,
        (id, producer_id, epoch): (&str, i64, i16),
        commit: bool,
    ) -> Result<(i64, i16), Refused> {
        let slot = self.slot(id);
        let mut slot = slot.lock().await;
        let meta = self.load(&mut slot, id).await?;
        let Some(meta) = meta.as_mut() else {
            return Err((
                ResponseError::InvalidProducerIdMapping,
                format!("transactional id '{id}' was never initialized (InitProducerId)"),
            ));
        };
        check_producer(meta, producer_id, epoch)?;
        let decided = match commit {
            true => TxnState::PrepareCommit,
            false => TxnState::PrepareAbort,
        };
        match meta.state {
            TxnState::Ongoing => {
                meta.state = decided;
                self.save(meta).await?;
                self.complete(broker, meta).await?;
            }
            state if state == decided => self.complete(broker, meta).await?,
            TxnState::CompleteCommit if commit => {}
            TxnState::CompleteAbort if !commit => {}
            state => {
                return Err((
                    ResponseError::InvalidTxnState,
                    format!(
                        "cannot {} the transaction of '{id}': it is {}",
                        if commit { "commit" } else { "abort" },
                        state.name()
                    ),
                ));
            }
        }
        Ok((meta.producer_id, meta.producer_epoch))
    }

    /// Carries out a saved decision: the markers, then the offsets (on commit), then the
    /// complete state, saved.
    async fn complete(&self, broker: &Arc<Broker>, meta: &mut TxnMetadata) -> Result<(), Refused> {
        let commit = meta.state == TxnState::PrepareCommit;
        write_markers(broker, meta, commit).await?;
        if commit && !meta.offsets.is_empty() {
            let store = broker.groups.store.clone();
            let by_group = meta.offsets_by_group();
            blocking(move || {
                by_group
                    .iter()
                    .try_for_each(|(group, offsets)| store.commit_transactional(group, offsets))
            })
            .await
            .map_err(storage)?;
        }
        meta.completed();
        self.save(meta).await?;
        self.note_pending(meta);
        Ok(())
    }

    /// Aborts the open transactions past their timeout, fencing their producers (a new
    /// epoch), as Kafka's coordinator does.
    pub async fn abort_timed_out(&self, broker: &Arc<Broker>) {
        // Ids asked about but never initialized leave empty slots: dropped when idle, so that
        // requests naming random ids do not make the map grow.
        {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            slots.retain(|_, s| {
                Arc::strong_count(s) > 1 || s.try_lock().map_or(true, |g| g.meta.is_some())
            });
        }
        let now = now_ms();
        let slots: Vec<(String, Arc<tokio::sync::Mutex<Slot>>)> = {
            let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            slots
                .iter()
                .map(|(id, s)| (id.clone(), Arc::clone(s)))
                .collect()
        };
        for (id, slot) in slots {
            let Ok(mut slot) = slot.try_lock() else {
                continue; // busy: a request of its producer is being handled
            };
            let Some(meta) = slot.meta.as_mut() else {
                continue;
            };
            // A decision whose markers could not all be written: tried again.
            if meta.state.is_prepared() {
                if let Err((_, e)) = self.complete(broker, meta).await {
                    broker.log.warn(&format!(
                        "Cannot finish the transaction of '{id}' decided before: {e}"
                    ));
                }
                continue;
            }
            let expired = meta.state == TxnState::Ongoing
                && meta.start_ms >= 0
                && meta.start_ms.saturating_add(i64::from(meta.timeout_ms)) < now;
            if !expired {
                continue;
            }
            broker.log.info(&format!(
                "Aborting the transaction of '{id}' (producer {} epoch {}): it stayed open past its transaction.timeout.ms of {} ms",
                meta.producer_id, meta.producer_epoch, meta.timeout_ms
            ));
            meta.bump_epoch(|| broker.new_producer_id());
            meta.state = TxnState::PrepareAbort;
            let result = match self.save(meta).await {
                Ok(()) => self.complete(broker, meta).await,
                Err(e) => Err(e),
            };
            if let Err((_, e)) = result {
                broker
                    .log
                    .warn(&format!("Cannot abort the transaction of '{id}': {e}"));
            }
        }
    }

    /// An id's state (`None`: never initialized), as DescribeTransactions shows it.
    pub async fn describe(&self, id: &str) -> Result<Option<TxnMetadata>, Refused> {
        let slot = self.slot(id);
        let mut slot = slot.lock().await;
        Ok(self.load(&mut slot, id).await?.clone())
    }

    /// Every id's state, sorted by id, as ListTransactions lists them (each is saved before
    /// it is answered, so the store is up to date).
    pub async fn list(&self) -> Result<Vec<TxnMetadata>, Refused> {
        let store = self.store.clone();
        blocking(move || store.list()).await.map_err(storage)
    }

    /// At start: loads every id, finishes the decisions a crash interrupted and keeps the
    /// open transactions for their timeout.
    pub async fn recover(&self, broker: &Arc<Broker>) -> Result<(), Refused> {
        let store = self.store.clone();
        let all = blocking(move || store.list()).await.map_err(storage)?;
        // Every id gets its slot first, so that the timeout scan sees every open transaction
        // even when finishing one decision fails.
        let mut prepared = Vec::new();
        for meta in all {
            let id = meta.transactional_id.clone();
            let slot = self.slot(&id);
            let mut slot = slot.lock().await;
            slot.loaded = true;
            let meta = slot.meta.insert(meta);
            self.note_pending(meta);
            if meta.state.is_prepared() {
                prepared.push(id);
            }
        }
        let mut failed = None;
        for id in prepared {
            let slot = self.slot(&id);
            let mut slot = slot.lock().await;
            if let Some(meta) = slot.meta.as_mut()
                && let Err((code, e)) = self.complete(broker, meta).await
            {
                // Tried again by the scan (see `abort_timed_out`).
                failed = Some((code, format!("transactional id '{id}': {e}")));
            }
        }
        failed.map_or(Ok(()), Err)
    }
}

/// Moves a transaction out of Empty or a complete state into Ongoing; whether it did.
fn begin(meta: &mut TxnMetadata) -> bool {
    if meta.state == TxnState::Ongoing {
        return false;
    }
    meta.state = TxnState::Ongoing;
    meta.start_ms = now_ms();
    meta.partitions.clear();
    meta.offsets.clear();
    true
}

/// Writes the transaction's marker to each of its partitions (at once, through their append
/// queues) and waits until all are durable. A partition whose topic was deleted since needs
/// none.
async fn write_markers(
    broker: &Arc<Broker>,
    meta: &TxnMetadata,
    commit: bool,
) -> Result<(), Refused> {
    let kind = if commit { COMMIT } else { ABORT };
    let marker = Marker::new(meta.producer_id, meta.producer_epoch, kind, 0);
    let waits: Vec<_> = meta
        .partitions
        .iter()
        .map(|(topic, partition)| {
            let (b, m, t, p) = (
                Arc::clone(broker),
                marker.clone(),
                topic.clone(),
                *partition,
            );
            tokio::spawn(async move { m.append_to(&b, &t, p).await })
        })
        .collect();
    for wait in waits {
        match wait.await {
            Ok(Ok(())) | Ok(Err((ResponseError::UnknownTopicOrPartition, _))) => {}
            Ok(Err(e)) => return Err(e),
            Err(e) => return Err((ResponseError::UnknownServerError, e.to_string())),
        }
    }
    Ok(())
}

/// A transaction marker batch, ready to append.
#[derive(Clone, Debug)]
pub struct Marker {
    batch: Vec<u8>,
    header: BatchHeader,
}

impl Marker {
    /// A marker of `kind` (ABORT or COMMIT) for a producer at an epoch.
    pub fn new(producer_id: i64, epoch: i16, kind: i16, coordinator_epoch: i32) -> Marker {
        let batch = encode_marker(producer_id, epoch, kind, coordinator_epoch, now_ms());
        let header = BatchHeader::parse(&batch).expect("a marker we built parses");
        Marker { batch, header }
    }

    /// Appends it to a partition through the partition's append queue, once durable; a
    /// partition that does not exist (a topic deleted since) is UNKNOWN_TOPIC_OR_PARTITION.
    pub async fn append_to(
        &self,
        broker: &Arc<Broker>,
        topic: &str,
        partition: i32,
    ) -> Result<(), Refused> {
        let (b, t) = (Arc::clone(broker), topic.to_string());
        let (_, served) = blocking(move || served_partition(&b, &t, partition)).await?;
        appender::append(
            broker,
            &served,
            self.batch.clone(),
            vec![self.header.clone()],
        )
        .await
        .map(drop)
    }
}

/// Aborts timed-out transactions while the server runs.
pub async fn maintain(broker: Arc<Broker>) {
    loop {
        tokio::time::sleep(TIMEOUT_SCAN).await;
        broker.txns.abort_timed_out(&broker).await;
    }
}
