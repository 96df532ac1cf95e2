//! Idempotent producers' sequence numbers per partition, as a broker checks them: a batch must
//! continue its producer's sequence, a retried batch (one of the last five) is answered with
//! the offset it was first written at instead of being written twice, and an older producer
//! epoch is fenced.
//!
//! The state lives in memory. After a restart, a producer from before it (its id is older
//! than this run's first) is looked up in the partition's last two segments the first time it
//! writes, as Kafka rebuilds its producer state from the log: a batch written just before the
//! restart and sent again is then answered as a duplicate instead of being written twice.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::local::{LocalError, PartitionLog};
use crate::record::{BatchIter, next_sequence};

use kafka_protocol::ResponseError;

use crate::record::BatchHeader;

/// How many recent batches per producer are remembered for duplicate detection (Kafka's
/// producers keep at most five requests in flight).
const RECENT: usize = 5;
/// A producer's last sequence when only its epoch is known (from a transaction marker): its
/// next batch at that epoch may carry any sequence.
const ANY_SEQUENCE: i32 = i32::MIN;

/// What to do with a batch.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Write it.
    Append,
    /// Already written at this base offset: answer with it, write nothing.
    Duplicate(i64),
    /// Refuse it.
    Refuse(ResponseError, String),
}

/// One written batch of a producer.
#[derive(Debug, Clone, Copy)]
struct Written {
    first_seq: i32,
    last_seq: i32,
    base_offset: i64,
}

#[derive(Debug, Default)]
struct Producer {
    epoch: i16,
    last_seq: i32,
    recent: VecDeque<Written>,
}

/// The producers of one partition.
#[derive(Debug, Default)]
pub struct Sequences {
    producers: HashMap<i64, Producer>,
    /// Producers from before this run already looked up in the log (found or not).
    looked_up: HashSet<i64>,
}

/// Where the producers of batches checked but not yet written stand, so that several requests
/// appended together are checked in order.
pub type Staged = HashMap<i64, (i16, i32)>;

impl Sequences {
    /// Checks a batch against what was written and what is staged; an accepted batch is staged.
    pub fn check(&self, staged: &mut Staged, h: &BatchHeader) -> Verdict {
        if h.producer_id < 0 {
            return Verdict::Append;
        }
        // Markers come from the coordinator and carry no sequence; one at a new epoch (a
        // fenced producer's abort) refuses that producer's later data of older epochs.
        if h.is_control() {
            let current = staged.get(&h.producer_id).copied().or_else(|| {
                self.producers
                    .get(&h.producer_id)
                    .map(|p| (p.epoch, p.last_seq))
            });
            match current {
                Some((epoch, seq)) if epoch >= h.producer_epoch => {
                    staged.insert(h.producer_id, (epoch, seq));
                }
                _ => {
                    staged.insert(h.producer_id, (h.producer_epoch, ANY_SEQUENCE));
                }
            }
            return Verdict::Append;
        }
        let last_seq = h.last_sequence();
        let known = self.producers.get(&h.producer_id);
        if let Some(p) = known
            && p.epoch == h.producer_epoch
            && let Some(w) = p
                .recent
                .iter()
                .find(|w| w.first_seq == h.base_sequence && w.last_seq == last_seq)
        {
            return Verdict::Duplicate(w.base_offset);
        }
        let current = staged
            .get(&h.producer_id)
            .copied()
            .or_else(|| known.map(|p| (p.epoch, p.last_seq)));
        if let Some((epoch, seq)) = current {
            if h.producer_epoch < epoch {
                return Verdict::Refuse(
                    ResponseError::InvalidProducerEpoch,
                    format!(
                        "producer {} epoch {} is older than the current epoch {epoch}",
                        h.producer_id, h.producer_epoch
                    ),
                );
            }
            let expected = if h.producer_epoch > epoch {
                0
            } else {
                next_sequence(seq)
            };
            if h.base_sequence != expected && !(h.producer_epoch == epoch && seq == ANY_SEQUENCE) {
                return Verdict::Refuse(
                    ResponseError::OutOfOrderSequenceNumber,
                    format!(
                        "out of order sequence number for producer {} at epoch {}: expected {expected}, got {}",
                        h.producer_id, h.producer_epoch, h.base_sequence
                    ),
                );
            }
        }
        staged.insert(h.producer_id, (h.producer_epoch, last_seq));
        Verdict::Append
    }

    /// Records a batch written at `base_offset`.
    pub fn written(&mut self, h: &BatchHeader, base_offset: i64) {
        if h.producer_id < 0 {
            return;
        }
        if h.is_control() {
            // A marker at a newer epoch fences the older ones (see `check`).
            match self.producers.get_mut(&h.producer_id) {
                Some(p) if p.epoch >= h.producer_epoch => {}
                Some(p) => {
                    p.epoch = h.producer_epoch;
                    p.last_seq = ANY_SEQUENCE;
                    p.recent.clear();
                }
                None => {
                    let p = Producer {
                        epoch: h.producer_epoch,
                        last_seq: ANY_SEQUENCE,
                        recent: VecDeque::new(),
                    };
                    self.producers.insert(h.producer_id, p);
                }
            }
            return;
        }
        let p = self.producers.entry(h.producer_id).or_default();
        if p.epoch != h.producer_epoch {
            p.recent.clear();
        }
        p.epoch = h.producer_epoch;
        p.last_seq = h.last_sequence();
        if p.recent.len() == RECENT {
            p.recent.pop_front();
        }
        p.recent.push_back(Written {
            first_seq: h.base_sequence,
            last_seq: p.last_seq,
            base_offset,
        });
    }

    /// Rebuilds the state of `producer`, from before this run, out of the last two segments of
    /// `log` (once per producer; a producer not found there is taken as it comes).
    pub fn look_up(&mut self, producer: i64, log: &PartitionLog) -> Result<(), LocalError> {
        if self.producers.contains_key(&producer) || !self.looked_up.insert(producer) {
            return Ok(());
        }
        let snapshot = log.snapshot()?;
        let segments = snapshot.segments();
        let Some(first) = segments.get(segments.len().saturating_sub(2)) else {
            return Ok(());
        };
        let mut offset = first.base_offset.max(snapshot.log_start_offset);
        let mut buffer = Vec::new();
        while offset < snapshot.log_end_offset {
            log.read_into(&snapshot, offset, 8 << 20, &mut buffer)?;
            let before = offset;
            // The read checked every batch: an error here is a defect, reported as such.
            let defect = |e: crate::record::RecordError| {
                LocalError::Invalid(format!(
                    "a batch read from {} is unreadable: {e}",
                    log.dir().display()
                ))
            };
            for batch in BatchIter::new(&buffer) {
                let h = BatchHeader::parse(batch.map_err(defect)?).map_err(defect)?;
                if h.producer_id == producer {
                    self.written(&h, h.base_offset);
                }
                offset = h.next_offset();
            }
            if offset == before {
                break;
            }
        }
        Ok(())
    }

    /// Forgets the producers of batches whose append failed: what was written is unknown, so
    /// their next batches are accepted as they come.
    pub fn forget(&mut self, producer_ids: impl IntoIterator<Item = i64>) {
        for id in producer_ids {
            self.producers.remove(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(pid: i64, epoch: i16, seq: i32, count: i32) -> BatchHeader {
        BatchHeader {
            base_offset: 0,
            length: 0,
            partition_leader_epoch: 0,
            magic: 2,
            crc: 0,
            attributes: 0,
            last_offset_delta: count - 1,
            base_timestamp: 0,
            max_timestamp: 0,
            producer_id: pid,
            producer_epoch: epoch,
            base_sequence: seq,
            records_count: count,
        }
    }

    #[test]
    fn continues_detects_duplicates_and_gaps() {
        let mut s = Sequences::default();
        let mut staged = Staged::new();
        let first = batch(7, 0, 0, 10);
        assert_eq!(s.check(&mut staged, &first), Verdict::Append);
        s.written(&first, 100);
        staged.clear();
        // The same batch again (a retry): its first offset, nothing written.
        assert_eq!(s.check(&mut staged, &first), Verdict::Duplicate(100));
        // A gap.
        assert!(matches!(
            s.check(&mut staged, &batch(7, 0, 11, 1)),
            Verdict::Refuse(ResponseError::OutOfOrderSequenceNumber, _)
        ));
        // The next one, then one staged after it in the same group.
        assert_eq!(s.check(&mut staged, &batch(7, 0, 10, 5)), Verdict::Append);
        assert_eq!(s.check(&mut staged, &batch(7, 0, 15, 1)), Verdict::Append);
        // A new epoch starts at 0; an old one is fenced.
        assert_eq!(s.check(&mut staged, &batch(7, 1, 0, 1)), Verdict::Append);
        assert!(matches!(
            s.check(&mut staged, &batch(7, 0, 16, 1)),
            Verdict::Refuse(ResponseError::InvalidProducerEpoch, _)
        ));
        // No producer id: never checked.
        assert_eq!(s.check(&mut staged, &batch(-1, -1, -1, 3)), Verdict::Append);
    }

    #[test]
    fn sequences_wrap() {
        let mut s = Sequences::default();
        let mut staged = Staged::new();
        let near_end = batch(1, 0, i32::MAX - 1, 3);
        assert_eq!(s.check(&mut staged, &near_end), Verdict::Append);
        s.written(&near_end, 0);
        assert_eq!(s.check(&mut staged, &batch(1, 0, 1, 1)), Verdict::Append);
    }

    #[test]
    fn unknown_producer_is_accepted_and_tracked() {
        let mut s = Sequences::default();
        let mut staged = Staged::new();
        let b = batch(9, 3, 42, 1);
        assert_eq!(s.check(&mut staged, &b), Verdict::Append);
        s.written(&b, 5);
        s.forget([9]);
        assert_eq!(
            s.check(&mut Staged::new(), &batch(9, 3, 99, 1)),
            Verdict::Append
        );
    }

    fn marker(pid: i64, epoch: i16) -> BatchHeader {
        BatchHeader {
            attributes: 0x30,
            base_sequence: -1,
            ..batch(pid, epoch, -1, 1)
        }
    }

    /// A marker at a new epoch (the coordinator fencing a producer) refuses that producer's
    /// data of older epochs, queued behind it or sent after; a marker of a producer not seen
    /// before lets its next batch carry any sequence.
    #[test]
    fn a_fencing_marker_refuses_older_epochs() {
        let mut s = Sequences::default();
        let mut staged = Staged::new();
        assert_eq!(s.check(&mut staged, &batch(7, 0, 0, 2)), Verdict::Append);
        s.written(&batch(7, 0, 0, 2), 0);
        let mut staged = Staged::new();
        assert_eq!(s.check(&mut staged, &marker(7, 1)), Verdict::Append);
        assert!(matches!(
            s.check(&mut staged, &batch(7, 0, 2, 1)),
            Verdict::Refuse(ResponseError::InvalidProducerEpoch, _)
        ));
        s.written(&marker(7, 1), 2);
        let mut staged = Staged::new();
        assert!(matches!(
            s.check(&mut staged, &batch(7, 0, 2, 1)),
            Verdict::Refuse(ResponseError::InvalidProducerEpoch, _)
        ));
        assert_eq!(s.check(&mut staged, &batch(7, 2, 0, 1)), Verdict::Append);
        // Known from a marker only: any sequence at its epoch.
        s.written(&marker(9, 3), 5);
        let mut staged = Staged::new();
        assert_eq!(s.check(&mut staged, &batch(9, 3, 41, 1)), Verdict::Append);
    }
}
