//! Transactions on one partition: which producers have a transaction open here and from which
//! offset (the last stable offset follows from that), and the aborted transactions that each
//! segment's `.txnindex` lists, in Kafka's file formats.
//!
//! # Files
//!
//! - `<20 digits>.snapshot`: Kafka's producer-state snapshot (`ProducerSnapshot` v1) of the
//!   producers that wrote transactional batches here. Only the newest counts. Its number grows
//!   with every save: the log end at the time, or one more than the previous number when that
//!   is higher. Kafka's `DumpLogSegments` and `kafka-dump-log` decode it.
//! - `<segment base>.txnindex`: one 34-byte entry per aborted transaction that had data here,
//!   in the segment that holds its ABORT marker (Kafka's `TransactionIndex`).
//!
//! Partitions that never saw a transactional batch have neither file, and their appends and
//! reads do no work for transactions at all.
//!
//! # Crash safety
//!
//! An append that opens a transaction saves the state naming it *before* its data is written:
//! a crash in between leaves an open transaction without data, which holds the last stable
//! offset back until its coordinator ends it (every transaction a coordinator knows of ends,
//! at the latest at its timeout), never data that `read_committed` readers take as committed.
//! An append of markers writes their index entries and then the state that closes them *after*
//! the data: a crash in between leaves the transaction open, and the coordinator, which
//! completes a transaction only once every marker was written, writes its marker again.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use super::{PartitionLog, Snapshot};
use crate::local::error::{IoContext, LocalError, Result};
use crate::local::logdir::write_atomically;
use crate::local::segment::{SNAPSHOT_SUFFIX, TXNINDEX_SUFFIX, offset_name, segment_path};
use crate::local::txn::read_state_file;
use crate::log_files::{
    ABORTED_TXN_SIZE, AbortedTxn, ProducerEntry, aborted_txn, encode_aborted_txn,
    encode_producer_snapshot, producer_snapshot,
};
use crate::record::{BatchHeader, for_each_record_crc};

/// The largest producer-state snapshot or `.txnindex` read whole (a damaged or hostile file
/// must not make a reader allocate without bound): about a million producers or entries.
const MAX_STATE_FILE: u64 = 64 << 20;
/// Producers without an open transaction are forgotten after this long (Kafka's
/// `producer.id.expiration.ms` default), so the snapshot does not grow with every producer
/// that ever wrote here.
const PRODUCER_EXPIRATION_MS: i64 = 86_400_000;
/// The most producers without an open transaction a snapshot keeps.
const MAX_IDLE_PRODUCERS: usize = 10_000;

/// A control record's type: what a marker ends its transaction with.
pub const ABORT: i16 = 0;
pub const COMMIT: i16 = 1;

/// The transactional producers of a partition, as its newest snapshot file holds them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProducerStates {
    /// The snapshot file's number; `None` when there is none.
    number: Option<i64>,
    producers: BTreeMap<i64, ProducerEntry>,
}

impl ProducerStates {
    /// Reads snapshot `number` of the partition at `dir` (none: the empty state).
    pub(crate) fn load(dir: &Path, number: Option<i64>) -> Result<ProducerStates> {
        let Some(number) = number else {
            return Ok(ProducerStates::default());
        };
        let path = segment_path(dir, number, SNAPSHOT_SUFFIX);
        let bytes = read_state_file(&path, MAX_STATE_FILE)?.ok_or_else(|| {
            LocalError::Invalid(format!("{} disappeared while it was read", path.display()))
        })?;
        let entries = producer_snapshot(&bytes)
            .map_err(|e| super::corrupt(&path, 0, format!("{e}; the producer state is lost")))?;
        Ok(ProducerStates {
            number: Some(number),
            producers: entries.into_iter().map(|e| (e.producer_id, e)).collect(),
        })
    }

    /// The producers, by id.
    pub fn producers(&self) -> impl Iterator<Item = &ProducerEntry> {
        self.producers.values()
    }

    /// The first offset of the oldest open transaction, if any: the last stable offset.
    pub fn first_unstable_offset(&self) -> Option<i64> {
        self.producers
            .values()
            .filter(|p| p.current_txn_first_offset >= 0)
            .map(|p| p.current_txn_first_offset)
            .min()
    }

    /// The first offset of `producer_id`'s open transaction, if it has one here.
    pub fn open_transaction(&self, producer_id: i64) -> Option<i64> {
        self.producers
            .get(&producer_id)
            .map(|p| p.current_txn_first_offset)
            .filter(|&o| o >= 0)
    }

    /// Takes in one transactional batch: data opens its producer's transaction (when none is
    /// open), a marker closes it. Returns the aborted transaction a marker ended, if it had
    /// data here (an ABORT with nothing open adds no index entry, as in Kafka).
    fn apply(&mut self, change: &Change) -> Option<AbortedTxn> {
        let h = &change.header;
        let entry = self
            .producers
            .entry(h.producer_id)
            .or_insert_with(|| ProducerEntry {
                producer_id: h.producer_id,
                epoch: h.producer_epoch,
                last_sequence: -1,
                last_offset: -1,
                offset_delta: 0,
                timestamp: -1,
                coordinator_epoch: -1,
                current_txn_first_offset: -1,
            });
        entry.epoch = entry.epoch.max(h.producer_epoch);
        entry.last_offset = h.last_offset();
        entry.offset_delta = h.last_offset_delta;
        entry.timestamp = h.max_timestamp;
        let Some(marker) = change.marker else {
            entry.last_sequence = h.last_sequence();
            if entry.current_txn_first_offset < 0 {
                entry.current_txn_first_offset = h.base_offset;
            }
            return None;
        };
        entry.coordinator_epoch = marker.coordinator_epoch;
        let first = std::mem::replace(&mut entry.current_txn_first_offset, -1);
        (marker.kind == ABORT && first >= 0).then(|| AbortedTxn {
            version: 0,
            producer_id: h.producer_id,
            first_offset: first,
            last_offset: h.base_offset,
            last_stable_offset: self.first_unstable_offset().unwrap_or(h.next_offset()),
        })
    }

    /// Writes the state as a new snapshot numbered past the old one and `log_end`, then
    /// removes the older snapshots.
    fn save(&mut self, dir: &Path, log_end: i64, now: i64) -> Result<()> {
        self.producers.retain(|_, p| {
            p.current_txn_first_offset >= 0
                || now.saturating_sub(p.timestamp) < PRODUCER_EXPIRATION_MS
        });
        // Timestamps are the producers' own (a clock ahead keeps them): past a bound, the
        // producers with no open transaction that wrote longest ago go first.
        if self.producers.len() > MAX_IDLE_PRODUCERS {
            let mut idle: Vec<(i64, i64)> = self
                .producers
                .values()
                .filter(|p| p.current_txn_first_offset < 0)
                .map(|p| (p.timestamp, p.producer_id))
                .collect();
            idle.sort_unstable();
            let excess = self.producers.len() - MAX_IDLE_PRODUCERS;
            for (_, id) in idle.into_iter().take(excess) {
                self.producers.remove(&id);
            }
        }
        let number = self.number.map_or(log_end, |n| log_end.max(n + 1));
        let entries: Vec<ProducerEntry> = self.producers.values().copied().collect();
        write_atomically(
            &segment_path(dir, number, SNAPSHOT_SUFFIX),
            &encode_producer_snapshot(&entries),
        )?;
        self.number = Some(number);
        remove_snapshots_before(dir, number)
    }
}

/// Aborted transactions by producer: the offsets from their first record to their marker.
#[derive(Debug, Default)]
pub struct AbortedRanges {
    by_producer: std::collections::HashMap<i64, Vec<(i64, i64)>>,
}

impl AbortedRanges {
    /// Whether a transactional batch of `producer_id` at `offset` belongs to an aborted
    /// transaction.
    pub fn contains(&self, producer_id: i64, offset: i64) -> bool {
        self.by_producer.get(&producer_id).is_some_and(|ranges| {
            ranges
                .iter()
                .any(|&(first, last)| first <= offset && offset <= last)
        })
    }
}

/// A marker's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marker {
    /// [`ABORT`] or [`COMMIT`].
    pub kind: i16,
    pub coordinator_epoch: i32,
}

/// A transactional batch of an append, with its offsets assigned.
#[derive(Clone, Debug)]
pub(crate) struct Change {
    header: BatchHeader,
    /// The batch is a marker (a control batch).
    marker: Option<Marker>,
}

/// The transactional batches among `spans` of `batches` (base offsets already assigned): empty
/// for an append of plain batches, which costs a flag test per batch.
pub(crate) fn changes(batches: &[u8], spans: &[(usize, usize)]) -> Result<Vec<Change>> {
    let mut out = Vec::new();
    for &(start, len) in spans {
        let batch = &batches[start..start + len];
        let header = BatchHeader::parse(batch).map_err(|e| LocalError::Invalid(e.to_string()))?;
        if !header.is_transactional() && !header.is_control() {
            continue;
        }
        let marker = if header.is_control() {
            Some(read_marker(batch)?)
        } else {
            None
        };
        out.push(Change { header, marker });
    }
    Ok(out)
}

/// The marker a control batch holds: its one record's key is int16 version, int16 type; its
/// value int16 version, int32 coordinator epoch.
pub fn read_marker(batch: &[u8]) -> Result<Marker> {
    let mut found = None;
    let mut scratch = Vec::new();
    for_each_record_crc(batch, &mut scratch, false, |r| {
        let key = r.key.unwrap_or_default();
        let value = r.value.unwrap_or_default();
        if found.is_none() && key.len() >= 4 && value.len() >= 6 {
            found = Some(Marker {
                kind: i16::from_be_bytes([key[2], key[3]]),
                coordinator_epoch: i32::from_be_bytes([value[2], value[3], value[4], value[5]]),
            });
        }
        Ok(())
    })
    .map_err(|e| LocalError::Invalid(format!("a control batch does not read: {e}")))?;
    match found {
        Some(m) if m.kind == ABORT || m.kind == COMMIT => Ok(m),
        _ => Err(LocalError::Invalid(
            "a control batch holds no transaction marker (ABORT or COMMIT)".into(),
        )),
    }
}

/// The transaction side of one append: the state before it, and the state with its opens saved
/// ahead of the data.
pub(crate) struct TxnAppend {
    before: ProducerStates,
    /// The opens were saved (so a failed append must save `before` again).
    saved_opens: bool,
}

impl TxnAppend {
    /// Loads the state and, if `changes` open a transaction, saves it with them before the
    /// data is written. `log_end` is the log end after the append.
    pub(crate) fn begin(
        dir: &Path,
        number: Option<i64>,
        changes: &[Change],
        log_end: i64,
    ) -> Result<TxnAppend> {
        let before = ProducerStates::load(dir, number)?;
        let mut opened = before.clone();
        let mut saved_opens = false;
        for change in changes.iter().filter(|c| c.marker.is_none()) {
            if opened.open_transaction(change.header.producer_id).is_none() {
                opened.apply(change);
                saved_opens = true;
            }
        }
        if saved_opens {
            opened.save(dir, log_end, super::now_ms())?;
        }
        Ok(TxnAppend {
            before: ProducerStates {
                number: opened.number,
                ..before
            },
            saved_opens,
        })
    }

    /// After the data is durable: indexes the aborted transactions in the segments holding
    /// their markers (`segment_of` maps an offset to its segment's base) and saves the state.
    /// Without markers there is nothing to do (the opens were saved ahead), so an append of
    /// transactional data never fails once its data is durable; one with markers may, and its
    /// writer (the coordinator) writes them again.
    pub(crate) fn finish(
        self,
        dir: &Path,
        changes: &[Change],
        log_end: i64,
        segment_of: impl Fn(i64) -> i64,
    ) -> Result<()> {
        if changes.iter().all(|c| c.marker.is_none()) {
            return Ok(());
        }
        let mut state = self.before;
        let mut aborted = Vec::new();
        for change in changes {
            aborted.extend(state.apply(change));
        }
        for txn in &aborted {
            append_index_entry(dir, segment_of(txn.last_offset), txn)?;
        }
        state.save(dir, log_end, super::now_ms())
    }

    /// A failed append: puts back the state from before it, if the opens were saved.
    pub(crate) fn undo(mut self, dir: &Path, log_end: i64) -> Result<()> {
        if !self.saved_opens {
            return Ok(());
        }
        self.before.save(dir, log_end, super::now_ms())
    }
}

fn append_index_entry(dir: &Path, segment: i64, txn: &AbortedTxn) -> Result<()> {
    let path = segment_path(dir, segment, TXNINDEX_SUFFIX);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .context(|| format!("cannot open {}", path.display()))?;
    // A torn entry left by a crash is cut off first: entries are read in whole 34-byte units.
    let len = file
        .metadata()
        .context(|| format!("cannot stat {}", path.display()))?
        .len();
    if len % ABORTED_TXN_SIZE as u64 != 0 {
        file.set_len(len - len % ABORTED_TXN_SIZE as u64)
            .context(|| format!("cannot truncate {}", path.display()))?;
    }
    file.write_all(&encode_aborted_txn(txn))
        .and_then(|()| file.sync_data())
        .context(|| format!("cannot write {}", path.display()))
}

fn remove_snapshots_before(dir: &Path, number: i64) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).context(|| format!("cannot list partition {}", dir.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(SNAPSHOT_SUFFIX)) else {
            continue;
        };
        if offset_name(stem).is_some_and(|n| n < number) {
            let path = entry.path();
            if let Err(e) = std::fs::remove_file(&path)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                return Err(LocalError::io(
                    format!("cannot delete {}", path.display()),
                    e,
                ));
            }
        }
    }
    Ok(())
}

/// The entries of the `.txnindex` of the segment at `base` (none without one).
fn index_entries(dir: &Path, base: i64) -> Result<Vec<AbortedTxn>> {
    let path = segment_path(dir, base, TXNINDEX_SUFFIX);
    Ok(read_state_file(&path, MAX_STATE_FILE)?
        .unwrap_or_default()
        .chunks_exact(ABORTED_TXN_SIZE)
        .map(|chunk| aborted_txn(chunk.try_into().expect("whole entries")))
        .collect())
}

impl PartitionLog {
    /// The partition's transactional producers: the newest snapshot, brought up to date with
    /// the batches written since.
    pub fn producer_states(&self) -> Result<ProducerStates> {
        let lock = self.lock(crate::local::lock::LockMode::Shared)?;
        let listing = self.listing()?;
        let mut states = ProducerStates::load(&self.dir, listing.producer_state)?;
        drop(lock);
        // The snapshot changes only when a transaction opens or closes: the batches since a
        // producer's last change there give its last sequence and timestamp (Kafka's
        // DescribeProducers shows its last batch's).
        let Some(from) = states.producers.values().map(|p| p.last_offset + 1).min() else {
            return Ok(states);
        };
        let snapshot = self.snapshot()?;
        let mut offset = from.max(snapshot.log_start_offset);
        let mut buffer = Vec::new();
        while offset < snapshot.log_end_offset {
            self.read_into(&snapshot, offset, 8 << 20, &mut buffer)?;
            let before = offset;
            for batch in crate::record::BatchIter::new(&buffer) {
                let Ok(h) = batch.and_then(BatchHeader::parse) else {
                    break;
                };
                offset = h.next_offset();
                if h.is_control() || !h.is_transactional() {
                    continue;
                }
                if let Some(p) = states.producers.get_mut(&h.producer_id)
                    && h.last_offset() > p.last_offset
                {
                    p.epoch = p.epoch.max(h.producer_epoch);
                    p.last_sequence = h.last_sequence();
                    p.last_offset = h.last_offset();
                    p.offset_delta = h.last_offset_delta;
                    p.timestamp = h.max_timestamp;
                }
            }
            if offset == before {
                break;
            }
        }
        Ok(states)
    }

    /// Every aborted transaction the snapshot's segments index, for the cleaner, which drops
    /// their records.
    pub fn aborted_ranges(&self, snapshot: &Snapshot) -> Result<AbortedRanges> {
        let mut out = AbortedRanges::default();
        if !snapshot.has_transactions {
            return Ok(out);
        }
        for seg in snapshot.segments() {
            for t in index_entries(&self.dir, seg.base_offset)? {
                out.by_producer
                    .entry(t.producer_id)
                    .or_default()
                    .push((t.first_offset, t.last_offset));
            }
        }
        Ok(out)
    }

    /// The aborted transactions a `read_committed` read from `from` up to `upper` must skip,
    /// as Kafka's Fetch lists them: (producer id, first offset) of every `.txnindex` entry of
    /// the snapshot's segments with its marker at or after `from` and its first offset below
    /// `upper`, in index order. An entry sits in the segment of its marker, which may come
    /// after `upper`: the segments are read on until one holds an entry written when the last
    /// stable offset had passed `upper` (no transaction begun below it was open any more).
    pub fn aborted_transactions(
        &self,
        snapshot: &Snapshot,
        from: i64,
        upper: i64,
    ) -> Result<Vec<(i64, i64)>> {
        if !snapshot.has_transactions {
            return Ok(Vec::new());
        }
        let segs = snapshot.segments();
        let first = segs
            .partition_point(|s| s.base_offset <= from)
            .saturating_sub(1);
        let mut out = Vec::new();
        for seg in &segs[first..] {
            let mut past = false;
            for t in index_entries(&self.dir, seg.base_offset)? {
                if t.last_offset >= from && t.first_offset < upper {
                    out.push((t.producer_id, t.first_offset));
                }
                past |= t.last_stable_offset >= upper;
            }
            if past {
                break;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::PartitionConfig;
    use crate::record::{BatchBuilder, Compression, decode_batch, encode_marker};

    fn data(producer: i64, epoch: i16, values: &[&str], transactional: bool) -> Vec<u8> {
        let mut b = BatchBuilder::new(Compression::None);
        b.set_producer(producer, epoch, 0);
        b.set_transactional(transactional);
        for v in values {
            b.append(super::super::now_ms(), None, Some(v.as_bytes()), &[]);
        }
        b.build(0).unwrap()
    }

    fn marker(producer: i64, epoch: i16, kind: i16) -> Vec<u8> {
        encode_marker(producer, epoch, kind, 0, super::super::now_ms())
    }

    fn values(log: &PartitionLog, upto_lso: bool) -> Vec<(i64, String)> {
        let snap = log.snapshot().unwrap();
        let end = if upto_lso {
            snap.last_stable_offset
        } else {
            snap.log_end_offset
        };
        let mut out = Vec::new();
        log.read_into_upto(&snap, 0, 1 << 20, end, &mut out)
            .unwrap();
        let mut got = Vec::new();
        for b in crate::record::BatchIter::new(&out) {
            let (h, records) = decode_batch(b.unwrap()).unwrap();
            if h.is_control() {
                continue;
            }
            for r in records {
                got.push((r.offset, String::from_utf8(r.value.unwrap()).unwrap()));
            }
        }
        got
    }

    fn new_log() -> (tempfile::TempDir, PartitionLog) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("t-0");
        PartitionLog::create(&dir).unwrap();
        let log = PartitionLog::open(&dir).unwrap();
        (root, log)
    }

    /// Kafka's own example (reference/transactions.md, 6.3): commit 0-2 + marker 3, abort
    /// 4-5 + 6, commit 7-8 + 9, open 10-11.
    #[test]
    fn the_lso_and_the_aborted_index_follow_the_markers() {
        let (_root, log) = new_log();
        let config = PartitionConfig::default();
        let append = |mut b: Vec<u8>| log.append(&mut b, &config).unwrap().base_offset;
        assert_eq!(append(data(1, 0, &["a", "b", "c"], true)), 0);
        assert_eq!(log.snapshot().unwrap().last_stable_offset, 0);
        assert_eq!(append(marker(1, 0, COMMIT)), 3);
        assert_eq!(log.snapshot().unwrap().last_stable_offset, 4);
        append(data(2, 0, &["d", "e"], true));
        assert_eq!(append(marker(2, 0, ABORT)), 6);
        append(data(1, 0, &["f", "g"], true));
        assert_eq!(append(marker(1, 0, COMMIT)), 9);
        append(data(3, 0, &["h", "i"], true));
        let snap = log.snapshot().unwrap();
        assert_eq!((snap.last_stable_offset, snap.log_end_offset), (10, 12));
        assert_eq!(
            log.aborted_transactions(&snap, 0, 10).unwrap(),
            vec![(2, 4)]
        );
        assert_eq!(log.aborted_transactions(&snap, 7, 10).unwrap(), vec![]);
        let committed: Vec<_> = values(&log, true).into_iter().map(|(o, _)| o).collect();
        // The aborted records are still there; the reader skips them by the index.
        assert_eq!(committed, vec![0, 1, 2, 4, 5, 7, 8]);
        assert_eq!(values(&log, false).len(), 9);
        // The index is Kafka's: version 0, producer, first, last (the marker), LSO after.
        let index = std::fs::read(segment_path(log.dir(), 0, TXNINDEX_SUFFIX)).unwrap();
        assert_eq!(
            aborted_txn(index.as_slice().try_into().unwrap()),
            AbortedTxn {
                version: 0,
                producer_id: 2,
                first_offset: 4,
                last_offset: 6,
                last_stable_offset: 7,
            }
        );
        let states = log.producer_states().unwrap();
        assert_eq!(states.open_transaction(3), Some(10));
        assert_eq!(states.open_transaction(1), None);
        // Plain batches between do not move the LSO off the open transaction.
        append(data(-1, -1, &["plain"], false));
        assert_eq!(log.snapshot().unwrap().last_stable_offset, 10);
        append(marker(3, 0, ABORT));
        let snap = log.snapshot().unwrap();
        assert_eq!(snap.last_stable_offset, snap.log_end_offset);
        assert_eq!(
            log.aborted_transactions(&snap, 0, snap.log_end_offset)
                .unwrap(),
            vec![(2, 4), (3, 10)]
        );
        // One snapshot file is kept.
        let snapshots = std::fs::read_dir(log.dir())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_str()
                    .unwrap()
                    .ends_with(SNAPSHOT_SUFFIX)
            })
            .count();
        assert_eq!(snapshots, 1);
    }

    /// The marker of an aborted transaction in a segment after the data: a read that ends
    /// before that segment still lists the transaction.
    #[test]
    fn an_abort_marker_in_a_later_segment_is_still_listed() {
        let (_root, log) = new_log();
        let rolling = PartitionConfig {
            segment_bytes: 100,
            ..PartitionConfig::default()
        };
        log.append(&mut data(4, 0, &["a", "b"], true), &rolling)
            .unwrap();
        log.append(&mut marker(4, 0, ABORT), &rolling).unwrap();
        let snap = log.snapshot().unwrap();
        assert!(snap.segments().len() >= 2, "{:?}", snap.segments());
        assert_eq!(log.aborted_transactions(&snap, 0, 2).unwrap(), vec![(4, 0)]);
    }

    /// The producer state shows a producer's last batch, not the one that opened its
    /// transaction (the only one the snapshot saw).
    #[test]
    fn producer_states_show_the_last_batch() {
        let (_root, log) = new_log();
        let config = PartitionConfig::default();
        log.append(&mut data(8, 0, &["a", "b"], true), &config)
            .unwrap();
        let mut later = BatchBuilder::new(Compression::None);
        later.set_producer(8, 0, 2);
        later.set_transactional(true);
        for v in ["c", "d", "e"] {
            later.append(super::super::now_ms(), None, Some(v.as_bytes()), &[]);
        }
        log.append(&mut later.build(0).unwrap(), &config).unwrap();
        let states = log.producer_states().unwrap();
        let p = states.producers().next().unwrap();
        assert_eq!(
            (p.last_sequence, p.last_offset, p.current_txn_first_offset),
            (4, 4, 0)
        );
    }

    #[test]
    fn a_log_without_transactions_has_no_state_files() {
        let (_root, log) = new_log();
        let mut b = data(-1, -1, &["x"], false);
        log.append(&mut b, &PartitionConfig::default()).unwrap();
        let snap = log.snapshot().unwrap();
        assert_eq!(snap.last_stable_offset, 1);
        assert!(!snap.has_transactions);
        let names: Vec<String> = std::fs::read_dir(log.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(
            !names
                .iter()
                .any(|n| n.ends_with(SNAPSHOT_SUFFIX) || n.ends_with(TXNINDEX_SUFFIX)),
            "{names:?}"
        );
    }

    /// A transaction's data, its marker and the next transaction in one append (as a server
    /// writes requests together) end up as if appended one by one.
    #[test]
    fn one_append_may_open_close_and_open_again() {
        let (_root, log) = new_log();
        let mut all = data(5, 0, &["a"], true);
        all.extend(marker(5, 0, ABORT));
        all.extend(data(5, 1, &["b"], true));
        log.append(&mut all, &PartitionConfig::default()).unwrap();
        let snap = log.snapshot().unwrap();
        assert_eq!(snap.last_stable_offset, 2);
        assert_eq!(log.aborted_transactions(&snap, 0, 3).unwrap(), vec![(5, 0)]);
    }

    /// A crash after the state naming a new transaction was saved but before its data was
    /// written leaves the transaction open at the log end: later records wait behind it
    /// until its marker, and none is taken as committed.
    #[test]
    fn an_open_saved_ahead_of_lost_data_holds_the_lso_until_its_marker() {
        let (_root, log) = new_log();
        let config = PartitionConfig::default();
        let b = data(7, 0, &["lost"], true);
        let spans = [(0, b.len())];
        let mut patched = b.clone();
        crate::record::set_base_offset(&mut patched, 0);
        let changes = changes(&patched, &spans).unwrap();
        TxnAppend::begin(log.dir(), None, &changes, 1).unwrap();
        // The crash: no data. Another producer writes plain records.
        log.append(&mut data(-1, -1, &["x", "y"], false), &config)
            .unwrap();
        let snap = log.snapshot().unwrap();
        assert_eq!((snap.last_stable_offset, snap.log_end_offset), (0, 2));
        log.append(&mut marker(7, 0, ABORT), &config).unwrap();
        let snap = log.snapshot().unwrap();
        assert_eq!(snap.last_stable_offset, 3);
        // Producer 7's abort covers offsets 0-2 but no record of it: x and y are read.
        assert_eq!(log.aborted_transactions(&snap, 0, 3).unwrap(), vec![(7, 0)]);
        assert_eq!(values(&log, true).len(), 2);
    }

    #[test]
    fn a_control_batch_without_a_marker_is_refused() {
        let (_root, log) = new_log();
        let mut m = marker(1, 0, 7);
        let err = log.append(&mut m, &PartitionConfig::default()).unwrap_err();
        assert!(err.to_string().contains("no transaction marker"), "{err}");
        assert_eq!(log.snapshot().unwrap().log_end_offset, 0);
    }
}
