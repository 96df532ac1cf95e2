//! Kafka's DeleteRecords on one partition: the log start offset moves up to a given offset (or
//! to the high watermark), readers no longer see the records below it, and the segments wholly
//! below it are deleted as retention deletes them.
//!
//! The new start goes to the `log-start-offset` checkpoint (see `checkpoint`), which every
//! snapshot reads, so readers, `earliest` lookups and group resets respect it from the next
//! snapshot on; the change renames a file in the partition directory, which an idle reader's
//! stamp notices.

use super::active::Active;
use super::checkpoint::{
    read_log_start, read_recovery_point, write_log_start, write_recovery_point,
};
use super::{PartitionConfig, PartitionLog};
use crate::local::error::{LocalError, Result};
use crate::local::lock::LockMode;

/// The offset a DeleteRecords request gives to mean "the high watermark".
pub const HIGH_WATERMARK: i64 = -1;

impl PartitionLog {
    /// Deletes the records below `offset` ([`HIGH_WATERMARK`]: below the log end), as Kafka's
    /// DeleteRecords: the log start offset becomes `offset` unless it is already past it, the
    /// segments wholly below the new start are deleted, and retention is applied as by any
    /// writer. Returns the log start offset afterwards (Kafka's low watermark).
    ///
    /// An offset past the log end, or negative other than [`HIGH_WATERMARK`], is
    /// [`LocalError::OffsetOutOfRange`] (Kafka's OFFSET_OUT_OF_RANGE), and nothing changes.
    ///
    /// Takes the exclusive lock writers take, and recovers the tail first as they do, so the
    /// log end it checks against is the one the next append would continue from.
    pub fn delete_records(&self, offset: i64, config: &PartitionConfig) -> Result<i64> {
        config.validate()?;
        let _lock = self.lock(LockMode::Exclusive)?;
        let bases = self.segment_bases()?;
        let mut active = Active::recover(&self.dir, bases[bases.len() - 1], config)?;
        let log_end = active.next_offset;
        let current = read_log_start(&self.dir)?.unwrap_or(bases[0]).max(bases[0]);
        let target = if offset == HIGH_WATERMARK {
            log_end
        } else {
            offset
        };
        if !(0..=log_end).contains(&target) {
            return Err(LocalError::OffsetOutOfRange {
                offset,
                log_start: current.min(log_end),
                log_end,
            });
        }
        if target > current {
            // A writer killed between its write and its fdatasync may have left records at
            // the end that are not durable yet: make them so before the start may pass them,
            // or a crash could leave a start past the end (which readers refuse as damage).
            if log_end > read_recovery_point(&self.dir) {
                active.sync_log()?;
                write_recovery_point(&self.dir, log_end)?;
            }
            write_log_start(&self.dir, target)?;
        }
        // Deletes the segments now wholly below the start (and whatever retention removes).
        self.retention_locked(config, &mut active)?;
        // Retention writes the checkpoint whenever it deletes a segment, so without one the
        // start is still `current`.
        Ok(read_log_start(&self.dir)?.unwrap_or(current).max(current))
    }
}

#[cfg(test)]
mod tests {
    use super::super::Snapshot;
    use super::*;
    use crate::local::segment::list_segments;
    use crate::record::{BatchBuilder, Compression};

    /// A batch of `n` records dated now.
    fn batch(n: usize) -> Vec<u8> {
        let mut b = BatchBuilder::new(Compression::None);
        for i in 0..n {
            b.append(
                super::super::now_ms(),
                None,
                Some(format!("v{i}").as_bytes()),
                &[],
            );
        }
        b.build(0).unwrap()
    }

    /// A partition of 3 segments (0..4, 4..8, 8..10) in a temporary directory.
    fn partition() -> (tempfile::TempDir, PartitionLog, PartitionConfig) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t-0");
        PartitionLog::create(&dir).unwrap();
        let log = PartitionLog::open(&dir).unwrap();
        let config = PartitionConfig {
            // Two 4-record batches never share a segment.
            segment_bytes: batch(4).len() as u64 + 1,
            ..PartitionConfig::default()
        };
        for n in [4, 4, 2] {
            log.append(&mut batch(n), &config).unwrap();
        }
        (tmp, log, config)
    }

    fn bounds(s: &Snapshot) -> (i64, i64) {
        (s.log_start_offset, s.log_end_offset)
    }

    #[test]
    fn the_start_moves_and_segments_wholly_below_it_go() {
        let (_tmp, log, config) = partition();
        assert_eq!(list_segments(log.dir()).unwrap(), vec![0, 4, 8]);
        assert_eq!(log.delete_records(3, &config).unwrap(), 3);
        assert_eq!(bounds(&log.snapshot().unwrap()), (3, 10));
        assert_eq!(list_segments(log.dir()).unwrap(), vec![0, 4, 8]);
        assert_eq!(log.delete_records(5, &config).unwrap(), 5);
        assert_eq!(list_segments(log.dir()).unwrap(), vec![4, 8]);
        // Below the start: nothing moves back.
        assert_eq!(log.delete_records(1, &config).unwrap(), 5);
        assert_eq!(bounds(&log.snapshot().unwrap()), (5, 10));
        // The high watermark: every closed segment goes, the active one stays.
        assert_eq!(log.delete_records(HIGH_WATERMARK, &config).unwrap(), 10);
        assert_eq!(list_segments(log.dir()).unwrap(), vec![8]);
        assert_eq!(bounds(&log.snapshot().unwrap()), (10, 10));
        // Appends go on after it.
        log.append(&mut batch(1), &config).unwrap();
        assert_eq!(bounds(&log.snapshot().unwrap()), (10, 11));
    }

    #[test]
    fn an_offset_past_the_end_or_negative_changes_nothing() {
        let (_tmp, log, config) = partition();
        for offset in [11, -2, i64::MIN, i64::MAX] {
            match log.delete_records(offset, &config) {
                Err(LocalError::OffsetOutOfRange {
                    log_start: 0,
                    log_end: 10,
                    ..
                }) => {}
                other => panic!("{offset}: {other:?}"),
            }
        }
        assert_eq!(bounds(&log.snapshot().unwrap()), (0, 10));
        assert!(!log.dir().join(super::super::LOG_START_FILE).exists());
        assert_eq!(log.delete_records(10, &config).unwrap(), 10);
    }

    #[test]
    fn reads_start_at_the_new_start() {
        let (_tmp, log, config) = partition();
        log.delete_records(6, &config).unwrap();
        let snap = log.snapshot().unwrap();
        assert!(matches!(
            log.read(&snap, 5, 1 << 20),
            Err(LocalError::OffsetOutOfRange { log_start: 6, .. })
        ));
        // The batch holding offset 6 starts at 4: the reader skips the records below.
        let bytes = log.read(&snap, 6, 1 << 20).unwrap();
        assert_eq!(
            crate::record::BatchHeader::parse(&bytes)
                .unwrap()
                .base_offset,
            4
        );
    }
}
