//! What a cleaning round keeps of one batch (Kafka's `Cleaner.shouldRetainRecord` and
//! `MemoryRecords.filterTo`), given the round's map of each key's last offset.
//!
//! A record past the map's last offset is kept (the next round judges it). Otherwise a record
//! without a key is dropped (a compacted topic refuses them, but a topic made compacted later
//! may hold some), and a keyed record is kept when it is its key's last and is not a tombstone
//! whose delete horizon has passed. A tombstone kept for the first time gets a horizon: the
//! round's start plus `delete.retention.ms`, after which a later round drops it.
//!
//! A batch that loses nothing and needs no horizon is kept byte for byte. One that loses all
//! its records, or was emptied by an earlier round, is dropped, unless it ends the round's
//! cleaned range or is an active producer's last batch: then it stays as an empty batch, so
//! that the log's last offset and the producer's last sequence survive. Control batches
//! (transaction markers) are kept as they are; the records of aborted transactions go.

use std::collections::HashSet;

use super::offset_map::OffsetMap;
use crate::local::partition::txn::AbortedRanges;
use crate::record::{BatchHeader, RecordError, empty_batch, for_each_record_crc, rewrite_batch};

/// What a round goes by, the same for every batch it cleans.
#[derive(Debug)]
pub struct RoundRules<'a> {
    pub map: &'a OffsetMap,
    /// When the round started (ms since the epoch): a delete horizon at or before it has
    /// passed.
    pub now_ms: i64,
    /// `delete.retention.ms`.
    pub delete_retention_ms: i64,
    /// The offset after the round's cleaned range: the batch that ends right before it stays,
    /// even empty.
    pub end_offset: i64,
    /// The last offsets of the batches that are their producers' last: they stay, even empty.
    pub producers_last: &'a HashSet<i64>,
    /// Aborted transactions, whose records go (Kafka's cleaner discards them too).
    pub aborted: &'a AbortedRanges,
}

/// What becomes of a batch.
#[derive(Debug, PartialEq, Eq)]
pub enum Retained {
    /// Kept byte for byte.
    Whole,
    /// Kept with fewer records, or with a delete horizon: the new batch.
    Rewritten(Vec<u8>),
    /// Every record gone, but the batch stays as a bare header.
    Empty(Vec<u8>),
    /// Every record gone, and the batch with them.
    Dropped,
}

/// Records a round kept and dropped, for its report.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RetainCounts {
    pub kept: u64,
    pub dropped: u64,
    /// Dropped for having no key (Kafka's "invalid messages during compaction").
    pub keyless: u64,
}

impl std::ops::AddAssign for RetainCounts {
    fn add_assign(&mut self, other: RetainCounts) {
        self.kept += other.kept;
        self.dropped += other.dropped;
        self.keyless += other.keyless;
    }
}

/// Why a record goes, or that it stays.
enum Verdict {
    Keep,
    Drop,
    Keyless,
}

impl RoundRules<'_> {
    fn verdict(
        &self,
        offset: i64,
        key: Option<&[u8]>,
        tombstone: bool,
        horizon_passed: bool,
    ) -> Verdict {
        if offset > self.map.latest_offset() {
            return Verdict::Keep;
        }
        let Some(key) = key else {
            return Verdict::Keyless;
        };
        let last = self.map.get(key).unwrap_or(-1);
        if offset < last || (tombstone && horizon_passed) {
            Verdict::Drop
        } else {
            Verdict::Keep
        }
    }

    fn must_stay(&self, header: &BatchHeader) -> bool {
        header.next_offset() == self.end_offset
            || (header.producer_id >= 0 && self.producers_last.contains(&header.last_offset()))
    }
}

/// Decides what the round keeps of `batch` (one whole batch, whose CRC is checked first:
/// damage must not be written again under a new CRC).
pub fn retain_batch(
    batch: &[u8],
    rules: &RoundRules<'_>,
    scratch: &mut Vec<u8>,
) -> Result<(Retained, RetainCounts), RecordError> {
    let header = BatchHeader::parse(batch)?;
    if header.is_control() {
        crate::record::verify_crc(&batch[..header.total_size().min(batch.len())])?;
        return Ok((Retained::Whole, RetainCounts::default()));
    }
    let horizon_passed = header.has_delete_horizon() && header.base_timestamp <= rules.now_ms;
    let aborted = header.is_transactional()
        && rules
            .aborted
            .contains(header.producer_id, header.base_offset);
    let mut keep = Vec::new();
    let mut counts = RetainCounts::default();
    let mut tombstone_kept = false;
    for_each_record_crc(batch, scratch, true, |r| {
        let tombstone = r.value.is_none();
        let verdict = match aborted {
            true => Verdict::Drop,
            false => rules.verdict(r.offset, r.key, tombstone, horizon_passed),
        };
        let kept = matches!(verdict, Verdict::Keep);
        match verdict {
            Verdict::Keep => counts.kept += 1,
            Verdict::Drop => counts.dropped += 1,
            Verdict::Keyless => {
                counts.dropped += 1;
                counts.keyless += 1;
            }
        }
        tombstone_kept |= kept && tombstone;
        keep.push(kept);
        Ok(())
    })?;
    let needs_horizon = tombstone_kept && !header.has_delete_horizon();
    if counts.kept == 0 {
        // Batches emptied by earlier rounds go too, as in Kafka, unless they must stay.
        let retained = match (rules.must_stay(&header), counts.dropped) {
            (false, _) => Retained::Dropped,
            (true, 0) => Retained::Whole,
            (true, _) => Retained::Empty(empty_batch(&header)),
        };
        return Ok((retained, counts));
    }
    if counts.dropped == 0 && !needs_horizon {
        return Ok((Retained::Whole, counts));
    }
    let horizon = if needs_horizon {
        Some(rules.now_ms.saturating_add(rules.delete_retention_ms))
    } else if header.has_delete_horizon() && tombstone_kept {
        Some(header.base_timestamp)
    } else {
        None
    };
    let mut out = Vec::with_capacity(batch.len());
    let mut verdicts = keep.iter();
    rewrite_batch(batch, horizon, scratch, &mut out, |_| {
        verdicts.next().copied().unwrap_or(false)
    })?;
    Ok((Retained::Rewritten(out), counts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{BatchBuilder, Compression, decode_batch};

    /// One batch at `base` of (key, value) records with timestamps 1000, 1001, ...
    fn batch(base: i64, records: &[(Option<&str>, Option<&str>)]) -> Vec<u8> {
        let mut b = BatchBuilder::new(Compression::Lz4);
        b.set_producer(5, 0, 0);
        for (i, (k, v)) in records.iter().enumerate() {
            b.append(
                1000 + i as i64,
                k.map(str::as_bytes),
                v.map(str::as_bytes),
                &[],
            );
        }
        b.build(base).unwrap()
    }

    fn map(entries: &[(&str, i64)], latest: i64) -> OffsetMap {
        let mut map = OffsetMap::with_memory(1 << 20, 0.9);
        for (k, o) in entries {
            map.put(k.as_bytes(), *o);
        }
        map.cover_up_to(latest);
        map
    }

    static NO_ABORTS: std::sync::LazyLock<AbortedRanges> =
        std::sync::LazyLock::new(AbortedRanges::default);

    fn rules<'a>(map: &'a OffsetMap, producers_last: &'a HashSet<i64>) -> RoundRules<'a> {
        RoundRules {
            map,
            now_ms: 10_000,
            delete_retention_ms: 500,
            end_offset: 1_000,
            producers_last,
            aborted: &NO_ABORTS,
        }
    }

    fn kept(retained: &Retained) -> Vec<(i64, Option<String>, Option<String>)> {
        let Retained::Rewritten(bytes) = retained else {
            panic!("not rewritten: {retained:?}");
        };
        let text = |b: &Option<Vec<u8>>| b.as_ref().map(|b| String::from_utf8_lossy(b).into());
        decode_batch(bytes)
            .unwrap()
            .1
            .iter()
            .map(|r| (r.offset, text(&r.key), text(&r.value)))
            .collect()
    }

    #[test]
    fn only_each_keys_last_record_stays() {
        let b = batch(
            10,
            &[
                (Some("a"), Some("1")),
                (Some("b"), Some("2")),
                (Some("a"), Some("3")),
            ],
        );
        let m = map(&[("a", 12), ("b", 20)], 20);
        let none = HashSet::new();
        let (retained, counts) = retain_batch(&b, &rules(&m, &none), &mut Vec::new()).unwrap();
        assert_eq!(kept(&retained), [(12, Some("a".into()), Some("3".into()))]);
        assert_eq!(
            counts,
            RetainCounts {
                kept: 1,
                dropped: 2,
                keyless: 0
            }
        );
    }

    #[test]
    fn a_batch_that_loses_nothing_is_kept_as_it_is() {
        let b = batch(10, &[(Some("a"), Some("1")), (Some("b"), Some("2"))]);
        let m = map(&[("a", 10), ("b", 11)], 11);
        let none = HashSet::new();
        let (retained, _) = retain_batch(&b, &rules(&m, &none), &mut Vec::new()).unwrap();
        assert_eq!(retained, Retained::Whole);
    }

    #[test]
    fn records_past_the_map_stay_and_keyless_ones_before_it_go() {
        let b = batch(
            10,
            &[(None, Some("x")), (Some("a"), Some("1")), (None, Some("y"))],
        );
        let m = map(&[("a", 11)], 11);
        let none = HashSet::new();
        let (retained, counts) = retain_batch(&b, &rules(&m, &none), &mut Vec::new()).unwrap();
        assert_eq!(
            kept(&retained),
            [
                (11, Some("a".into()), Some("1".into())),
                (12, None, Some("y".into()))
            ]
        );
        assert_eq!(counts.keyless, 1);
    }

    #[test]
    fn a_tombstone_gets_a_horizon_and_goes_once_it_has_passed() {
        let b = batch(10, &[(Some("a"), None)]);
        let m = map(&[("a", 10)], 10);
        let none = HashSet::new();
        let first = rules(&m, &none);
        let (retained, _) = retain_batch(&b, &first, &mut Vec::new()).unwrap();
        let Retained::Rewritten(stamped) = retained else {
            panic!("{retained:?}")
        };
        let header = BatchHeader::parse(&stamped).unwrap();
        assert!(header.has_delete_horizon());
        assert_eq!(header.base_timestamp, 10_500);
        // Before the horizon, it stays as it is.
        let (again, _) = retain_batch(&stamped, &first, &mut Vec::new()).unwrap();
        assert_eq!(again, Retained::Whole);
        // After it, the tombstone goes, and the batch with it.
        let later = RoundRules {
            now_ms: 10_500,
            ..rules(&m, &none)
        };
        let (gone, counts) = retain_batch(&stamped, &later, &mut Vec::new()).unwrap();
        assert_eq!(gone, Retained::Dropped);
        assert_eq!(counts.dropped, 1);
    }

    #[test]
    fn an_emptied_batch_stays_when_it_ends_the_round_or_a_producer() {
        let b = batch(10, &[(Some("a"), Some("1")), (Some("a"), Some("2"))]);
        let m = map(&[("a", 50)], 50);
        let none = HashSet::new();
        let (dropped, _) = retain_batch(&b, &rules(&m, &none), &mut Vec::new()).unwrap();
        assert_eq!(dropped, Retained::Dropped);
        let ends_round = RoundRules {
            end_offset: 12,
            ..rules(&m, &none)
        };
        let (empty, _) = retain_batch(&b, &ends_round, &mut Vec::new()).unwrap();
        let Retained::Empty(bytes) = empty else {
            panic!("{empty:?}")
        };
        let header = BatchHeader::parse(&bytes).unwrap();
        assert_eq!((header.base_offset, header.last_offset()), (10, 11));
        assert_eq!(header.records_count, 0);
        let last = HashSet::from([11]);
        let (empty, _) = retain_batch(&b, &rules(&m, &last), &mut Vec::new()).unwrap();
        assert!(matches!(empty, Retained::Empty(_)));
        // An emptied batch in a later round: it goes, unless it still must stay.
        let (again, _) = retain_batch(&bytes, &rules(&m, &none), &mut Vec::new()).unwrap();
        assert_eq!(again, Retained::Dropped);
        let (again, _) = retain_batch(&bytes, &ends_round, &mut Vec::new()).unwrap();
        assert_eq!(again, Retained::Whole);
    }

    #[test]
    fn damage_is_not_written_again_under_a_new_crc() {
        let mut b = batch(10, &[(Some("a"), Some("1")), (Some("a"), Some("2"))]);
        let last = b.len() - 1;
        b[last] ^= 0xff;
        let m = map(&[("a", 11)], 11);
        let none = HashSet::new();
        assert!(retain_batch(&b, &rules(&m, &none), &mut Vec::new()).is_err());
    }
}
