//! Repair: the explicit fix (`kafka-topics --repair`) for damage that readers and writers
//! refuse to pass, as Kafka's recovery after an unclean shutdown does it: every batch of every
//! segment is checked, and the log is cut back to just before the first damaged batch or
//! missing segment. Nothing is deleted: the cut-off bytes and the later segments are renamed to
//! `*.damaged-<ms>` files beside the log, which readers ignore and a user can inspect or remove.

use std::path::{Path, PathBuf};

use super::active::Active;
use super::checkpoint::{
    read_cleaner_checkpoint, read_log_start, read_recovery_point, write_cleaner_checkpoint,
    write_log_start, write_recovery_point,
};
use super::{PartitionConfig, PartitionLog, file_len, now_ms, open_rw};
use crate::kafka::repair::{Cut, RepairReport};
use crate::local::error::{IoContext, Result};
use crate::local::lock::LockMode;
use crate::local::segment::{
    INDEX_SUFFIX, LOG_SUFFIX, SCAN_CHUNK, Scanner, Step, TIMEINDEX_SUFFIX, may_have_gaps,
    segment_path, sync_dir,
};

/// The first damage a full scan met: in segment number `index`, at `position`.
struct Damage {
    index: usize,
    position: u64,
    offset: i64,
    reason: String,
}

impl PartitionLog {
    /// Checks every batch under the exclusive lock and cuts the log back before the first
    /// damaged batch or missing segment (see the module docs). The recovery point and, if it
    /// lay past the new end, the log start offset move back to the cut.
    pub fn repair(&self, config: &PartitionConfig) -> Result<RepairReport> {
        let _lock = self.lock(LockMode::Exclusive)?;
        let bases = self.segment_bases()?;
        let Some(damage) = self.first_damage(&bases)? else {
            return Ok(RepairReport {
                cut: None,
                set_aside: Vec::new(),
            });
        };
        let stamp = now_ms();
        let mut set_aside = Vec::new();
        let log_path = segment_path(&self.dir, bases[damage.index], LOG_SUFFIX);
        // A segment damaged past its start keeps its good batches (its whole bytes are copied
        // aside first); one damaged at its start goes aside whole, as every later one does.
        let first_aside = if damage.position > 0 {
            let copy = aside_path(&log_path, stamp);
            // Durable before the original is cut: a crash must not lose both.
            std::fs::copy(&log_path, &copy)
                .and_then(|_| std::fs::File::open(&copy)?.sync_all())
                .context(|| format!("cannot copy {} aside", log_path.display()))?;
            sync_dir(&self.dir)?;
            set_aside.push(copy);
            let log = open_rw(&log_path)?;
            log.set_len(damage.position)
                .and_then(|()| log.sync_data())
                .context(|| format!("cannot truncate {}", log_path.display()))?;
            damage.index + 1
        } else {
            damage.index
        };
        for &base in &bases[first_aside..] {
            for suffix in [LOG_SUFFIX, INDEX_SUFFIX, TIMEINDEX_SUFFIX] {
                set_aside.extend(rename_aside(&segment_path(&self.dir, base, suffix), stamp)?);
            }
        }
        if first_aside == 0 {
            // Nothing valid is left: an empty first segment where the damage began.
            Active::create(&self.dir, damage.offset, config)?;
        } else {
            // The segment now last gets indexes that match its (possibly shorter) bytes.
            let last = bases[first_aside - 1];
            let path = segment_path(&self.dir, last, LOG_SUFFIX);
            let log = open_rw(&path)?;
            let len = file_len(&log, &path)?;
            Active::rebuild(&self.dir, last, config, log, path, len, false)?;
        }
        sync_dir(&self.dir)?;
        if read_log_start(&self.dir)?.is_some_and(|start| start > damage.offset) {
            write_log_start(&self.dir, damage.offset)?;
        }
        // Records appended after the cut are dirty, whatever the cleaner had reached before.
        if read_cleaner_checkpoint(&self.dir)?.is_some_and(|c| c > damage.offset) {
            write_cleaner_checkpoint(&self.dir, damage.offset)?;
        }
        // Never a higher claim than before: the segments kept were not all fdatasync'ed here.
        let recovery_point = read_recovery_point(&self.dir).min(damage.offset);
        write_recovery_point(&self.dir, recovery_point)?;
        Ok(RepairReport {
            cut: Some(Cut {
                offset: damage.offset,
                path: log_path,
                position: damage.position,
                reason: damage.reason,
            }),
            set_aside,
        })
    }

    /// Scans every segment in order; the first bad batch, or the first segment that does not
    /// start where the one before it ended.
    fn first_damage(&self, bases: &[i64]) -> Result<Option<Damage>> {
        let mut expected: Option<i64> = None;
        for (index, &base) in bases.iter().enumerate() {
            // Compaction may have removed the offsets between two segments.
            if let Some(next) = expected
                && base > next
                && !may_have_gaps(&self.dir)
            {
                return Ok(Some(Damage {
                    index,
                    position: 0,
                    offset: next,
                    reason: format!(
                        "offsets {next} to {} are missing (a segment file was removed or lost)",
                        base - 1
                    ),
                }));
            }
            let path = segment_path(&self.dir, base, LOG_SUFFIX);
            let log = open_rw(&path)?;
            let len = file_len(&log, &path)?;
            let mut scanner = Scanner::new(&log, &path, base, 0, len, SCAN_CHUNK);
            loop {
                match scanner.next()? {
                    Step::Batch(_) => {}
                    Step::End => break,
                    Step::Bad { position, reason } => {
                        let offset = scanner.next_offset().unwrap_or(base);
                        return Ok(Some(Damage {
                            index,
                            position,
                            offset,
                            reason,
                        }));
                    }
                }
            }
            expected = Some(scanner.next_offset().unwrap_or(base));
        }
        Ok(None)
    }
}

fn aside_path(path: &Path, stamp: i64) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(format!(".damaged-{stamp}"));
    PathBuf::from(name)
}

/// Renames `path` aside; `None` when it does not exist (an index may be missing).
fn rename_aside(path: &Path, stamp: i64) -> Result<Option<PathBuf>> {
    let aside = aside_path(path, stamp);
    match std::fs::rename(path, &aside) {
        Ok(()) => Ok(Some(aside)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(crate::local::LocalError::io(
            format!("cannot move {} aside", path.display()),
            e,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::error::LocalError;
    use crate::record::{BatchBuilder, Compression};

    fn batch(value: &[u8]) -> Vec<u8> {
        let mut b = BatchBuilder::new(Compression::None);
        b.append(super::now_ms(), None, Some(value), &[]);
        b.build(0).unwrap()
    }

    #[test]
    fn damage_at_the_first_byte_leaves_an_empty_log_and_keeps_everything_aside() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().join("t-0");
        PartitionLog::create(&dir).unwrap();
        let log = PartitionLog::open(&dir).unwrap();
        let config = PartitionConfig::default();
        log.append(&mut batch(b"a"), &config).unwrap();
        log.append(&mut batch(b"b"), &config).unwrap();
        let path = segment_path(&dir, 0, LOG_SUFFIX);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[17] ^= 0xff; // the magic byte of the first batch
        std::fs::write(&path, &bytes).unwrap();
        let damaged = log.snapshot().unwrap();
        assert_eq!(
            damaged.log_end_offset, 0,
            "the readable extent ends at the damage"
        );
        assert!(damaged.damage().is_some());
        let refused = log.read(&damaged, 0, 1 << 20).unwrap_err();
        assert!(
            matches!(refused, LocalError::Corrupt { position: 0, .. }),
            "{refused}"
        );

        let report = log.repair(&config).unwrap();
        let cut = report.cut.unwrap();
        assert_eq!((cut.offset, cut.position), (0, 0));
        assert_eq!(report.set_aside.len(), 3, "{:?}", report.set_aside);
        assert_eq!(std::fs::read(&report.set_aside[0]).unwrap(), bytes);
        let snapshot = log.snapshot().unwrap();
        assert_eq!((snapshot.log_start_offset, snapshot.log_end_offset), (0, 0));
        assert_eq!(
            log.append(&mut batch(b"c"), &config).unwrap().base_offset,
            0
        );
        // Nothing more to do the second time.
        assert_eq!(log.repair(&config).unwrap().cut, None);
    }
}
