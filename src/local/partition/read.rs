//! Reading: a [`Snapshot`] of the readable extent under a brief shared lock, then reads of
//! whole, CRC-checked batches without the lock, and the offset for a timestamp (Kafka's
//! ListOffsets by timestamp). Readers never write or delete.

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

use super::checkpoint::{read_log_start, read_recovery_point};
use super::hints::{reader_last_entry, reader_position_for, time_entry_checks_out};
use super::stamp::Stamp;
use super::txn::ProducerStates;
use super::{Damage, PartitionLog, SegmentInfo, Snapshot, corrupt, open_optional};
use crate::local::error::{IoContext, LocalError, Result};
use crate::local::index::{TIME_ENTRY_SIZE, TimeEntry, lookup_time_before, read_time_entry};
use crate::local::lock::LockMode;
use crate::local::segment::{
    LOG_SUFFIX, SCAN_CHUNK, Scanner, Step, TIMEINDEX_SUFFIX, find_valid_batch_after, may_have_gaps,
    segment_path,
};
use crate::record::{BatchHeader, for_each_record};

/// How many times a read takes a new snapshot when the cleaner keeps replacing segments
/// under it before it gives up.
const STALE_RETRIES: usize = 5;

/// Offsets run on from one segment to the next: a later segment that starts past where the
/// previous one ended means a segment is missing, whose records must not be skipped silently.
fn no_gap(previous: &std::path::Path, next: i64, path: &std::path::Path, base: i64) -> Result<()> {
    // Compaction may have removed the offsets between two segments.
    if base <= next || path.parent().is_some_and(may_have_gaps) {
        return Ok(());
    }
    Err(corrupt(
        path,
        0,
        format!(
            "offsets {next} to {} are missing: {} ends before offset {next} and this segment starts at {base}; a segment file was removed or lost",
            base - 1,
            previous.display(),
        ),
    ))
}

impl PartitionLog {
    /// Records the readable extent under a brief shared lock: the log start offset, the log end
    /// (after the last complete, CRC-valid batch of the active segment) and each segment's valid
    /// size. A torn tail is excluded, not repaired. Damage in the active segment that is not a
    /// torn tail (valid data follows it, or it lies below the recovery point) ends the readable
    /// extent too, but is kept: a read that reaches it fails ([`Snapshot::damage`]), so the
    /// records before it stay readable.
    pub fn snapshot(&self) -> Result<Snapshot> {
        let lock = self.lock(LockMode::Shared)?;
        let listing = self.listing()?;
        let bases = listing.bases;
        let states = ProducerStates::load(&self.dir, listing.producer_state)?;
        let checkpoint = read_log_start(&self.dir)?;
        let n = bases.len();
        let mut segments = Vec::with_capacity(n);
        for &base in &bases[..n - 1] {
            let path = segment_path(&self.dir, base, LOG_SUFFIX);
            let meta =
                std::fs::metadata(&path).context(|| format!("cannot stat {}", path.display()))?;
            segments.push(SegmentInfo {
                base_offset: base,
                size: meta.len(),
                inode: meta.ino(),
            });
        }
        let (tail, log_end, active, damage) = self.reader_tail(bases[n - 1])?;
        let stamp = Stamp::take(&self.dir, bases[n - 1]);
        drop(lock);
        // Bytes a writer wrote but did not fdatasync before it was killed may be about to be
        // served; make them durable first so a reader never sees data that can vanish. Done
        // after unlocking (writers never cut below a valid end) to keep the shared lock short.
        // Below the recovery point everything is durable already: no fdatasync, which costs a
        // disk cache flush even on a clean file (most of an idle consumer's time on a topic of
        // many partitions).
        if log_end > read_recovery_point(&self.dir) {
            active.sync_data().context(|| {
                format!(
                    "cannot fdatasync {}",
                    segment_path(&self.dir, bases[n - 1], LOG_SUFFIX).display()
                )
            })?;
        }
        segments.push(tail);
        // Retention only ever moves the start up to a segment's base, never past the end: a
        // start past it is damage, and clamping it would hide every record appended below it
        // (found by the segment_recovery fuzz target).
        if let Some(start) = checkpoint
            && start > log_end
        {
            return Err(LocalError::Invalid(format!(
                "{} says the log starts at offset {start}, past its end {log_end}; the file is \
                 damaged (delete it to read from the first segment)",
                self.dir.join(super::LOG_START_FILE).display()
            )));
        }
        let log_start = checkpoint.unwrap_or(bases[0]).max(bases[0]).min(log_end);
        // Skip segments left wholly below the start by an interrupted retention pass.
        let first_kept = (0..n - 1)
            .find(|&i| bases[i + 1] > log_start)
            .unwrap_or(n - 1);
        segments.drain(..first_kept);
        Ok(Snapshot {
            log_start_offset: log_start,
            log_end_offset: log_end,
            last_stable_offset: states
                .first_unstable_offset()
                .map_or(log_end, |o| o.clamp(log_start, log_end)),
            has_transactions: listing.producer_state.is_some(),
            segments,
            stamp,
            damage,
        })
    }

    /// The active segment as a reader sees it (its valid size, no repair) and its next offset,
    /// and the damage that ends it when that is not a torn tail.
    fn reader_tail(&self, base: i64) -> Result<(SegmentInfo, i64, File, Option<Damage>)> {
        let path = segment_path(&self.dir, base, LOG_SUFFIX);
        let log = File::open(&path).context(|| format!("cannot open {}", path.display()))?;
        let meta = log
            .metadata()
            .context(|| format!("cannot stat {}", path.display()))?;
        let (len, inode) = (meta.len(), meta.ino());
        let tail = |size| SegmentInfo {
            base_offset: base,
            size,
            inode,
        };
        let hint = reader_last_entry(&self.dir, base, &log, len).map(|e| e.position as u64);
        for start in hint.into_iter().chain([0]) {
            let mut scanner = Scanner::new(&log, &path, base, start, len, SCAN_CHUNK);
            let bad = loop {
                match scanner.next()? {
                    Step::Batch(_) => {}
                    Step::End => break None,
                    Step::Bad { position, reason } => break Some((position, reason)),
                }
            };
            let next = match scanner.next_offset() {
                Some(next) => next,
                // The indexed batch itself is bad: scan from the start instead.
                None if start > 0 => continue,
                None => base,
            };
            let damage = match bad {
                Some(bad) => self.damage_at(&log, &path, base, len, next, bad)?,
                None => None,
            };
            return Ok((tail(scanner.position()), next, log, damage));
        }
        Ok((tail(0), base, log, None)) // not reached: the scan from position 0 always returns
    }

    /// Whether the bad batch at `position` (offset `next`) is damage rather than a writer's torn
    /// tail: valid data follows it, or it lies below the recovery point, so it was acknowledged.
    /// Either way it is never served as if the log ended there.
    fn damage_at(
        &self,
        log: &File,
        path: &Path,
        base: i64,
        len: u64,
        next: i64,
        (position, reason): (u64, String),
    ) -> Result<Option<Damage>> {
        let reason = if let Some(good) =
            find_valid_batch_after(log, path, base, position + 1, len, next)?
        {
            format!("{reason}; a valid batch follows at byte {good}")
        } else {
            let recovery_point = read_recovery_point(&self.dir);
            if next >= recovery_point {
                return Ok(None);
            }
            format!(
                "{reason}; the batch at offset {next} lies below the recovery point {recovery_point}, so it was acknowledged and has been damaged since"
            )
        };
        Ok(Some(Damage {
            path: path.to_path_buf(),
            position,
            reason,
        }))
    }

    /// Reads whole batches starting with the batch that contains `offset`, up to `max_bytes`
    /// (at least one whole batch when there is one), never past the snapshot's end, continuing
    /// into later segments while there is room. Returns an empty buffer at the log end.
    ///
    /// The first batch may start before `offset` (as in Kafka's Fetch); callers skip records
    /// below it. Every batch's CRC, framing and offset continuity is checked; a bad batch inside
    /// the snapshot is [`LocalError::Corrupt`]. An offset below the snapshot's log start or past
    /// its end, or in a segment deleted by retention since the snapshot, is
    /// [`LocalError::OffsetOutOfRange`] (with the current start and end, freshly snapshotted in
    /// the retention case): take a new snapshot and reset, like Kafka's `auto.offset.reset`.
    pub fn read(&self, snapshot: &Snapshot, offset: i64, max_bytes: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.read_into(snapshot, offset, max_bytes, &mut out)?;
        Ok(out)
    }

    /// [`PartitionLog::read`] into `out` (cleared first), reusing its allocation.
    ///
    /// Damage (a bad batch, a missing segment) after some whole batches were read ends the read
    /// with those batches: the records before the damage are served, and the next read, which
    /// starts at the damage, fails there naming the file and position. Kafka serves a damaged
    /// log the same way, its clients' CRC checks then naming the bad offset.
    pub fn read_into(
        &self,
        snapshot: &Snapshot,
        offset: i64,
        max_bytes: usize,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        self.read_into_upto(snapshot, offset, max_bytes, snapshot.log_end_offset, out)
    }

    /// [`PartitionLog::read_into`] of no batch at or past `end` (at most the snapshot's log
    /// end): a `read_committed` read stops at [`Snapshot::last_stable_offset`].
    pub fn read_into_upto(
        &self,
        snapshot: &Snapshot,
        offset: i64,
        max_bytes: usize,
        end: i64,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        // A snapshot the cleaner made stale (it replaced segments since) is taken again, and
        // the read goes on in the cleaned files, no further than the caller's snapshot: the
        // same records, less what the cleaner removed.
        let end = end.min(snapshot.log_end_offset);
        self.on_fresh_snapshots(snapshot, |current| {
            match self.read_batches_into(current, offset, max_bytes, end, out) {
                Ok(true) => Ok(Some(())),
                Ok(false) => Ok(None),
                Err(LocalError::Corrupt { .. }) if !out.is_empty() => Ok(Some(())),
                Err(e) => Err(e),
            }
        })
    }

    /// `attempt` on `snapshot`, then on new snapshots while it finds the one it got stale
    /// (`None`: a segment it names was deleted or replaced since), up to [`STALE_RETRIES`]
    /// times.
    pub(super) fn on_fresh_snapshots<T>(
        &self,
        snapshot: &Snapshot,
        mut attempt: impl FnMut(&Snapshot) -> Result<Option<T>>,
    ) -> Result<T> {
        if let Some(done) = attempt(snapshot)? {
            return Ok(done);
        }
        for _ in 1..STALE_RETRIES {
            if let Some(done) = attempt(&self.snapshot()?)? {
                return Ok(done);
            }
        }
        Err(LocalError::Invalid(format!(
            "the segments of {} kept changing while they were read; try again",
            self.dir.display()
        )))
    }

    /// [`PartitionLog::read_into`] up to the first damage, which fails the whole read, and no
    /// batch at or past `end`. `out` holds only whole, checked batches at any point. `false`
    /// (and nothing read) when the snapshot is stale: a segment it names was deleted or
    /// replaced since.
    fn read_batches_into(
        &self,
        snapshot: &Snapshot,
        offset: i64,
        max_bytes: usize,
        end: i64,
        out: &mut Vec<u8>,
    ) -> Result<bool> {
        out.clear();
        if offset < snapshot.log_start_offset || offset > snapshot.log_end_offset {
            return Err(LocalError::OffsetOutOfRange {
                offset,
                log_start: snapshot.log_start_offset,
                log_end: snapshot.log_end_offset,
            });
        }
        if offset >= end && offset < snapshot.log_end_offset {
            return Ok(true); // held back: a transaction is open there
        }
        if offset == snapshot.log_end_offset {
            return match snapshot.damage() {
                Some(damage) => Err(damage),
                None => Ok(true),
            };
        }
        let mut scratch = match self.scratch.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let segs = &snapshot.segments;
        let first = segs
            .partition_point(|s| s.base_offset <= offset)
            .saturating_sub(1);
        let chunk = max_bytes.clamp(64 * 1024, SCAN_CHUNK);
        // Where the previous segment ended: the next segment must start exactly there.
        let mut expected: Option<(i64, std::path::PathBuf)> = None;
        for (k, seg) in segs[first..].iter().enumerate() {
            let path = segment_path(&self.dir, seg.base_offset, LOG_SUFFIX);
            if let Some((next, previous)) = expected.take() {
                no_gap(&previous, next, &path, seg.base_offset)?;
            }
            let Some(log) = self.open_segment(seg)? else {
                // What was read stands: the next read starts after it, with a new snapshot.
                return Ok(!out.is_empty());
            };
            let start = if k == 0 {
                reader_position_for(&self.dir, seg.base_offset, &log, seg.size, offset)
            } else {
                0
            };
            let mut scanner = Scanner::new(&log, &path, seg.base_offset, start, seg.size, chunk)
                .with_buffer(std::mem::take(&mut *scratch));
            let full = loop {
                // A batch that would not fit is not read whole, nor its CRC summed, only to be
                // read again by the next call.
                if !out.is_empty()
                    && let Some(total) = scanner.peek_size()?
                    && out.len() as u64 + total > max_bytes as u64
                {
                    break true;
                }
                match scanner.next()? {
                    Step::End => break false,
                    Step::Bad { position, reason } => return Err(corrupt(&path, position, reason)),
                    Step::Batch(b) => {
                        if b.header.last_offset() < offset {
                            continue;
                        }
                        if b.header.base_offset >= end {
                            break true;
                        }
                        let total = b.header.total_size();
                        if !out.is_empty() && out.len() + total > max_bytes {
                            break true;
                        }
                        match b.bytes {
                            Some(bytes) => out.extend_from_slice(bytes),
                            None => {
                                let at = out.len();
                                out.resize(at + total, 0);
                                log.read_exact_at(&mut out[at..], b.position)
                                    .context(|| format!("cannot read {}", path.display()))?;
                            }
                        }
                        if out.len() >= max_bytes {
                            break true;
                        }
                    }
                }
            };
            expected = scanner.next_offset().map(|next| (next, path.clone()));
            *scratch = scanner.into_buffer();
            if full {
                return Ok(true);
            }
        }
        Ok(true)
    }

    /// The first offset whose record timestamp is `>= ts` (Kafka's ListOffsets by timestamp),
    /// or `None` if no record in the snapshot has one. Closed segments whose last time-index
    /// entry (their max timestamp) is below `ts` are skipped; otherwise the search starts at the
    /// time index's greatest entry below `ts` (validated through the offset index) and scans.
    /// When segments were deleted or replaced since the snapshot, the search runs again on a
    /// new one.
    pub fn offset_for_timestamp(&self, snapshot: &Snapshot, ts: i64) -> Result<Option<i64>> {
        self.on_fresh_snapshots(snapshot, |current| {
            self.offset_for_timestamp_in(current, ts)
        })
    }

    /// [`PartitionLog::offset_for_timestamp`] on one snapshot; `None` when it is stale.
    fn offset_for_timestamp_in(&self, snapshot: &Snapshot, ts: i64) -> Result<Option<Option<i64>>> {
        let segs = &snapshot.segments;
        for (i, seg) in segs.iter().enumerate() {
            let base = seg.base_offset;
            let next_base = segs.get(i + 1).map(|s| s.base_offset);
            let path = segment_path(&self.dir, base, LOG_SUFFIX);
            let Some(log) = self.open_segment(seg)? else {
                return Ok(None);
            };
            let time_hint = || -> Option<(Option<TimeEntry>, Option<TimeEntry>)> {
                let f = open_optional(&segment_path(&self.dir, base, TIMEINDEX_SUFFIX), false)
                    .ok()??;
                let len = f.metadata().ok()?.len();
                if len % TIME_ENTRY_SIZE != 0 {
                    return None;
                }
                let entries = len / TIME_ENTRY_SIZE;
                let last = entries
                    .checked_sub(1)
                    .and_then(|i| read_time_entry(&f, i).ok());
                let before = lookup_time_before(&f, entries, ts).ok()?;
                Some((last, before))
            };
            let (last, before) = time_hint().unwrap_or((None, None));
            let in_segment = |e: &TimeEntry| {
                e.relative_offset >= 0
                    && next_base.is_none_or(|nb| base + (e.relative_offset as i64) < nb)
                    && time_entry_checks_out(&self.dir, base, &log, &path, seg.size, *e)
            };
            // A closed segment's last time entry is its max timestamp (written at close).
            if let (Some(_), Some(last)) = (next_base, last)
                && in_segment(&last)
                && last.timestamp < ts
            {
                continue;
            }
            let start = match before.filter(in_segment) {
                Some(e) => reader_position_for(
                    &self.dir,
                    base,
                    &log,
                    seg.size,
                    base + e.relative_offset as i64,
                ),
                None => 0,
            };
            let scanner = Scanner::new(&log, &path, base, start, seg.size, SCAN_CHUNK);
            let log_start = snapshot.log_start_offset;
            let found = first_record_where(
                &log,
                &path,
                scanner,
                |h| h.max_timestamp >= ts && h.last_offset() >= log_start,
                |timestamp, offset| timestamp >= ts && offset >= log_start,
            )?;
            if found.is_some() {
                return Ok(Some(found));
            }
        }
        Ok(Some(None))
    }
}

/// The offset of the first record the scan reaches that `wanted` accepts (by its timestamp
/// and offset), looking into the batches `may_hold` accepts by their header. Batches are read
/// whole and CRC-checked; damage is [`LocalError::Corrupt`].
pub(super) fn first_record_where(
    log: &File,
    path: &Path,
    mut scanner: Scanner<'_>,
    may_hold: impl Fn(&BatchHeader) -> bool,
    wanted: impl Fn(i64, i64) -> bool,
) -> Result<Option<i64>> {
    let (mut scratch, mut batch_buf) = (Vec::new(), Vec::new());
    loop {
        let (position, header, bytes) = match scanner.next()? {
            Step::End => return Ok(None),
            Step::Bad { position, reason } => return Err(corrupt(path, position, reason)),
            Step::Batch(b) => (b.position, b.header, b.bytes),
        };
        if !may_hold(&header) {
            continue;
        }
        let bytes = match bytes {
            Some(b) => b,
            None => {
                batch_buf.resize(header.total_size(), 0);
                log.read_exact_at(&mut batch_buf, position)
                    .context(|| format!("cannot read {}", path.display()))?;
                &batch_buf[..]
            }
        };
        let mut found = None;
        for_each_record(bytes, &mut scratch, |r| {
            if found.is_none() && wanted(r.timestamp, r.offset) {
                found = Some(r.offset);
            }
            Ok(())
        })
        .map_err(|e| corrupt(path, position, e.to_string()))?;
        if found.is_some() {
            return Ok(found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::PartitionConfig;
    use crate::record::{BatchBuilder, Compression};

    #[test]
    fn a_log_start_past_the_end_is_damage_not_a_start() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().join("t-0");
        PartitionLog::create(&dir).unwrap();
        let log = PartitionLog::open(&dir).unwrap();
        let mut b = BatchBuilder::new(Compression::None);
        b.append(0, None, Some(b"a"), &[]);
        b.append(0, None, Some(b"b"), &[]);
        let mut batch = b.build(0).unwrap();
        log.append(&mut batch, &PartitionConfig::default()).unwrap();
        let start_file = dir.join(super::super::LOG_START_FILE);
        std::fs::write(&start_file, "0\n2\n").unwrap();
        let snap = log.snapshot().unwrap();
        assert_eq!((snap.log_start_offset, snap.log_end_offset), (2, 2));
        // Clamped to the end, it used to hide the records appended after it.
        std::fs::write(&start_file, "0\n5\n").unwrap();
        let err = log.snapshot().unwrap_err().to_string();
        assert!(err.contains("offset 5, past its end 2"), "{err}");
    }
}
