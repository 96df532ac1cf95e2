//! The `segment_recovery` target: a partition directory whose segment, index and
//! `log-start-offset` files hold the fuzzer's bytes, read the way a consumer reads it
//! (snapshot, reads of every batch, offset by timestamp) and recovered the way a writer does
//! (tail check, torn-tail cut, index rebuild), then appended to.
//!
//! Properties checked: a reader and a writer that both accept the log agree on where it ends;
//! after a writer recovered it, a reader accepts it and finds the same end; a batch appended
//! then reads back whole at the offset the append gave it.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use super::Input;
use crate::local::segment::MAX_BASE_OFFSET;
use crate::local::{PartitionConfig, PartitionLog, Snapshot};
use crate::record::{BatchBuilder, BatchIter, Compression, decode_batch};

/// Base offsets of the first segment, chosen by the input: zero, small, at the edges of a
/// segment's int32 relative offsets, and at the end of the offset range (the last one is past
/// the largest base offset, which makes every operation refuse the partition).
const BASES: [i64; 8] = [
    0,
    0,
    1,
    4096,
    i32::MAX as i64,
    MAX_BASE_OFFSET - 100,
    MAX_BASE_OFFSET,
    i64::MAX - 1,
];

thread_local! {
    /// The partition directory, made once per process and refilled for each input.
    static DIR: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
}

/// Input: flags, base offset choice, the length (bytes) of the offset index, of the time index
/// and of the checkpoint, the timestamp asked for, an `index.interval.bytes` choice, then the
/// segment bytes.
///
/// Flags: bit 0, make the length and CRC of every batch valid (to get past the CRC), then bit 1
/// flip one byte (the position is the next two input bytes, after the CRC fix: damage a
/// fuzzer could not reach otherwise); bit 2, split the bytes into a closed segment and the
/// active one (at the position in the next two bytes, the second segment's base an input byte
/// beyond the first's); bit 3, write a `log-start-offset` file; bit 4, apply retention (it
/// deletes by the batches' timestamps); bit 5, roll at 1 KiB.
pub fn segment_recovery(data: &[u8]) {
    let mut input = Input::new(data);
    let flags = input.byte();
    let base = BASES[input.byte() as usize % BASES.len()];
    let index_len = usize::from(input.byte());
    let timeindex_len = usize::from(input.byte());
    let checkpoint_len = usize::from(input.byte() % 32);
    let ts = input.i64();
    let interval = [1u64, 64, 4096][usize::from(input.byte() % 3)];
    let flip = u16::from_be_bytes(input.bytes());
    let split = u16::from_be_bytes(input.bytes());
    let second_base = base.saturating_add(i64::from(input.byte()) + 1);
    let index = input.take(index_len).to_vec();
    let timeindex = input.take(timeindex_len).to_vec();
    let checkpoint = input.take(checkpoint_len).to_vec();
    let mut log = input.rest().to_vec();
    if flags & 1 != 0 {
        fix_batches(&mut log);
        if flags & 2 != 0 && !log.is_empty() {
            let at = usize::from(flip) % log.len();
            log[at] ^= 0x5a;
        }
    }
    let segments: Vec<(i64, &[u8])> = if flags & 4 != 0 {
        let (first, second) = log.split_at(usize::from(split).min(log.len()));
        vec![(base, first), (second_base, second)]
    } else {
        vec![(base, &log[..])]
    };
    let config = PartitionConfig {
        retention_ms: if flags & 16 != 0 { 604_800_000 } else { -1 },
        index_interval_bytes: interval,
        segment_bytes: if flags & 32 != 0 { 1024 } else { 1 << 30 },
        ..PartitionConfig::default()
    };
    DIR.with_borrow_mut(|slot| {
        let dir = slot.get_or_insert_with(|| super::scratch_dir("segment").join("t-0"));
        let _ = std::fs::remove_dir_all(&*dir);
        PartitionLog::create(dir).expect("a partition directory");
        // The empty first segment `create` makes (a `.log`; its indexes come with the first
        // append) is replaced by the input's.
        std::fs::remove_file(dir.join(format!("{:020}.log", 0))).expect("a new segment");
        for (base, bytes) in &segments {
            write(dir, *base, ".log", bytes);
        }
        let active = segments[segments.len() - 1].0;
        write(dir, active, ".index", &index);
        write(dir, active, ".timeindex", &timeindex);
        if flags & 8 != 0 {
            write_file(&dir.join("log-start-offset"), &checkpoint);
        }
        check(dir, ts, &config);
    });
}

fn write(dir: &Path, base: i64, suffix: &str, bytes: &[u8]) {
    write_file(&dir.join(format!("{base:020}{suffix}")), bytes);
}

fn write_file(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).expect("a file in the scratch directory");
}

/// Gives every batch, walked by its length field, a valid length (when it runs past the end)
/// and CRC, leaving everything else as the fuzzer made it.
fn fix_batches(log: &mut [u8]) {
    let mut at = 0;
    while log.len() - at >= 61 {
        let batch = &mut log[at..];
        let length = i32::from_be_bytes(batch[8..12].try_into().expect("4 bytes"));
        let size = match usize::try_from(length) {
            Ok(n) if n >= 49 && n + 12 <= batch.len() => n + 12,
            _ => {
                let n = i32::try_from(batch.len() - 12).unwrap_or(i32::MAX);
                batch[8..12].copy_from_slice(&n.to_be_bytes());
                batch.len()
            }
        };
        let crc = crc32c::crc32c(&batch[21..size]);
        batch[17..21].copy_from_slice(&crc.to_be_bytes());
        at += size;
    }
}

fn check(dir: &Path, ts: i64, config: &PartitionConfig) {
    let log = PartitionLog::open(dir).expect("the partition opens");
    let read = log.snapshot();
    if let Ok(snap) = &read {
        read_everything(&log, snap);
        let _ = log.offset_for_timestamp(snap, ts);
    }
    // An empty append only recovers the tail, as every writer does first.
    let recovered = log.append(&mut [], config);
    if let Ok(snap) = &read
        && snap.damage().is_some()
    {
        // Damage a reader stops at is never a torn tail a writer may cut.
        assert!(
            recovered.is_err(),
            "a writer recovered past a reader's damage"
        );
    }
    let (Ok(snap), Ok(recovered)) = (read, recovered) else {
        return;
    };
    assert_eq!(
        snap.log_end_offset, recovered.next_offset,
        "a reader and a writer disagree on the end"
    );
    let after = log.snapshot().expect("a recovered log reads");
    assert_eq!(after.log_end_offset, recovered.next_offset);
    read_everything(&log, &after);

    let mut builder = BatchBuilder::new(Compression::None);
    builder.append(ts, Some(b"k"), Some(b"v"), &[]);
    builder.append(ts, None, Some(b"w"), &[("h", None)]);
    let mut batch = builder.build(0).expect("two records build");
    let Ok(appended) = log.append(&mut batch, config) else {
        return;
    };
    if config.retention_ms >= 0 {
        // Retention may have deleted what was just appended, by its timestamp.
        return;
    }
    let snap = log.snapshot().expect("a log just appended to reads");
    assert_eq!(snap.log_end_offset, appended.next_offset);
    assert_eq!(appended.next_offset, appended.base_offset + 2);
    let bytes = log
        .read(&snap, appended.base_offset, 1 << 20)
        .expect("what was appended reads back");
    let ours = BatchIter::new(&bytes)
        .filter_map(Result::ok)
        .filter_map(|b| decode_batch(b).ok())
        .find(|(h, _)| h.base_offset == appended.base_offset)
        .expect("the appended batch is read back");
    let values: Vec<_> = ours.1.iter().map(|r| r.value.as_deref()).collect();
    assert_eq!(values, [Some(&b"v"[..]), Some(&b"w"[..])]);
}

/// Reads the snapshot from its start to its end, batch after batch: each read makes progress
/// until the end, or fails (damage the snapshot did not look at).
fn read_everything(log: &PartitionLog, snap: &Snapshot) {
    let mut offset = snap.log_start_offset;
    let mut buf = Vec::new();
    while offset < snap.log_end_offset {
        if log.read_into(snap, offset, 4096, &mut buf).is_err() || buf.is_empty() {
            return;
        }
        let mut next = offset;
        for batch in BatchIter::new(&buf) {
            let Ok(batch) = batch else { return };
            let (h, _) = match decode_batch(batch) {
                Ok(decoded) => decoded,
                Err(_) => return,
            };
            next = next.max(h.next_offset());
        }
        assert!(next > offset, "a read at {offset} made no progress");
        offset = next;
    }
}
