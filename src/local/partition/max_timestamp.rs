//! The offset of the record with the greatest timestamp: Kafka's ListOffsets `MAX_TIMESTAMP`
//! (-3, `kafka-get-offsets --time max-timestamp`). Kafka answers with the first record, in offset
//! order, whose timestamp is the largest in the partition, and with no offset for a partition
//! that holds no record.
//!
//! Kafka keeps each segment's max timestamp in memory; here it comes from the time index. A
//! closed segment's last time-index entry holds its max timestamp (written at close), and every
//! batch before an entry's batch has a smaller one (the entry names the first batch that reached
//! it), so a closed segment is read no further than the entry, and the active segment only from
//! its last entry on. Entries are used only once they check out against the log; without one
//! the segment is scanned whole. Only the winning segment's records are then decoded.

use std::fs::File;
use std::path::Path;

use super::hints::{last_time_entry, reader_position_for, time_entry_checks_out};
use super::read::first_record_where;
use super::{PartitionLog, SegmentInfo, Snapshot, corrupt};
use crate::local::error::Result;
use crate::local::index::TimeEntry;
use crate::local::segment::{LOG_SUFFIX, SCAN_CHUNK, Scanner, Step, segment_path};

/// A segment's greatest batch max timestamp, and where to start looking for its first batch.
struct SegmentMax {
    timestamp: i64,
    scan_from: u64,
}

impl PartitionLog {
    /// The offset of the first record with the partition's greatest timestamp, among the
    /// snapshot's records; `None` when it holds none. Segments deleted by retention since the
    /// snapshot, or replaced by the cleaner, make it run again on a new snapshot.
    pub fn offset_of_max_timestamp(&self, snapshot: &Snapshot) -> Result<Option<i64>> {
        self.on_fresh_snapshots(snapshot, |current| self.max_timestamp_in(current))
    }

    /// [`PartitionLog::offset_of_max_timestamp`] on one snapshot; `None` when it is stale.
    fn max_timestamp_in(&self, snapshot: &Snapshot) -> Result<Option<Option<i64>>> {
        let segs = snapshot.segments();
        let start = snapshot.log_start_offset;
        // The first segment holding the greatest timestamp wins a tie: it has the lower offsets.
        // Its file stays open, so retention deleting it meanwhile cannot hide its records.
        let mut best: Option<(SegmentMax, usize, File)> = None;
        for (i, seg) in segs.iter().enumerate() {
            let next_base = segs.get(i + 1).map(|s| s.base_offset);
            let path = segment_path(&self.dir, seg.base_offset, LOG_SUFFIX);
            let Some(log) = self.open_segment(seg)? else {
                return Ok(None);
            };
            let Some(max) = self.segment_max(seg, next_base, &log, &path, start)? else {
                continue;
            };
            if best
                .as_ref()
                .is_none_or(|(b, _, _)| max.timestamp > b.timestamp)
            {
                best = Some((max, i, log));
            }
        }
        let Some((max, i, log)) = best else {
            return Ok(Some(None));
        };
        let seg = &segs[i];
        let path = segment_path(&self.dir, seg.base_offset, LOG_SUFFIX);
        first_record_with(&log, &path, seg, &max, start).map(Some)
    }

    /// The greatest max timestamp of a segment's batches that hold offsets at or past `start`;
    /// `None` for a segment without such a batch.
    fn segment_max(
        &self,
        seg: &SegmentInfo,
        next_base: Option<i64>,
        log: &File,
        path: &Path,
        start: i64,
    ) -> Result<Option<SegmentMax>> {
        let base = seg.base_offset;
        // Below the log start an entry may describe records no longer served: scan instead.
        let entry = (base >= start)
            .then(|| last_time_entry(&self.dir, base))
            .flatten()
            .filter(|e| self.entry_holds(seg, next_base, log, path, *e));
        let scan_from = entry.map_or(0, |e| {
            reader_position_for(
                &self.dir,
                base,
                log,
                seg.size,
                base + e.relative_offset as i64,
            )
        });
        if let (Some(e), Some(_)) = (entry, next_base) {
            return Ok(Some(SegmentMax {
                timestamp: e.timestamp,
                scan_from,
            }));
        }
        let mut scanner = Scanner::new(log, path, base, scan_from, seg.size, SCAN_CHUNK);
        let mut max: Option<i64> = None;
        loop {
            match scanner.next()? {
                Step::End => break,
                Step::Bad { position, reason } => return Err(corrupt(path, position, reason)),
                Step::Batch(b) if b.header.last_offset() < start => {}
                Step::Batch(b) => {
                    if max.is_none_or(|m| b.header.max_timestamp > m) {
                        max = Some(b.header.max_timestamp);
                    }
                }
            }
        }
        Ok(max.map(|timestamp| SegmentMax {
            timestamp,
            scan_from,
        }))
    }

    /// Whether a time-index entry lies inside the segment and agrees with its log.
    fn entry_holds(
        &self,
        seg: &SegmentInfo,
        next_base: Option<i64>,
        log: &File,
        path: &Path,
        e: TimeEntry,
    ) -> bool {
        let base = seg.base_offset;
        e.relative_offset >= 0
            && next_base.is_none_or(|nb| base + (e.relative_offset as i64) < nb)
            && time_entry_checks_out(&self.dir, base, log, path, seg.size, e)
    }
}

/// The first record at or past `start` whose timestamp is `max.timestamp`, in the batches whose
/// max timestamp it is (Kafka's `offsetOfMaxTimestamp`). A record's timestamp is the batch's
/// under LogAppendTime, which the decoder applies.
fn first_record_with(
    log: &File,
    path: &Path,
    seg: &SegmentInfo,
    max: &SegmentMax,
    start: i64,
) -> Result<Option<i64>> {
    let scanner = Scanner::new(
        log,
        path,
        seg.base_offset,
        max.scan_from,
        seg.size,
        SCAN_CHUNK,
    );
    first_record_where(
        log,
        path,
        scanner,
        |h| h.max_timestamp == max.timestamp && h.last_offset() >= start,
        |timestamp, offset| timestamp == max.timestamp && offset >= start,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::PartitionConfig;
    use crate::record::{BatchBuilder, Compression};

    /// Old timestamps must survive retention.
    fn keep_all() -> PartitionConfig {
        PartitionConfig {
            retention_ms: -1,
            ..PartitionConfig::default()
        }
    }

    /// Appends one batch per slice, each record with the given timestamp.
    fn log_with(batches: &[&[i64]], config: &PartitionConfig) -> (tempfile::TempDir, PartitionLog) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t-0");
        PartitionLog::create(&dir).unwrap();
        let log = PartitionLog::open(&dir).unwrap();
        for timestamps in batches {
            let mut b = BatchBuilder::new(Compression::None);
            for ts in *timestamps {
                b.append(*ts, None, Some(b"v"), &[]);
            }
            let mut batch = b.build(0).unwrap();
            log.append(&mut batch, config).unwrap();
        }
        (tmp, log)
    }

    fn max_offset(log: &PartitionLog) -> Option<i64> {
        let snapshot = log.snapshot().unwrap();
        log.offset_of_max_timestamp(&snapshot).unwrap()
    }

    #[test]
    fn the_first_record_with_the_greatest_timestamp() {
        let config = keep_all();
        // Offsets 0..=2, 3..=4, 5: the max (3000) first at offset 1, again at 4.
        let (_tmp, log) = log_with(&[&[1000, 3000, 2000], &[500, 3000], &[2500]], &config);
        assert_eq!(max_offset(&log), Some(1));
    }

    #[test]
    fn an_empty_partition_has_none() {
        let (_tmp, log) = log_with(&[], &keep_all());
        assert_eq!(max_offset(&log), None);
    }

    #[test]
    fn across_segments_with_and_without_their_time_indexes() {
        // One batch per segment: every append after the first rolls.
        let config = PartitionConfig {
            segment_bytes: 1,
            ..keep_all()
        };
        let (_tmp, log) = log_with(&[&[10, 20], &[90, 30], &[90], &[40, 50]], &config);
        let timeindexes: Vec<_> = std::fs::read_dir(log.dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "timeindex"))
            .collect();
        assert_eq!(timeindexes.len(), 4);
        // Closed at the roll, the first three hold their max: the answer comes from them.
        let with_entry = timeindexes
            .iter()
            .filter(|p| std::fs::metadata(p).unwrap().len() == 12)
            .count();
        assert_eq!(with_entry, 3);
        assert_eq!(max_offset(&log), Some(2));
        // The indexes are hints: without them the answer is the same, from a scan.
        for path in &timeindexes {
            std::fs::write(path, b"garbage").unwrap();
        }
        assert_eq!(max_offset(&log), Some(2));
    }
}
