//! The per-partition log against its contract: round trips across rolls, torn tails at every
//! byte, bit flips, damaged indexes, retention, timestamp lookup and concurrent writers/readers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use kafkit::local::{LocalError, PartitionConfig, PartitionLog, Snapshot};
use kafkit::record::{BatchBuilder, BatchHeader, BatchIter, Compression, decode_batch};

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// One batch of `n` records `"{tag}-{i}"`, all with timestamp `ts`, base offset 1234 (the log
/// must rewrite it).
fn batch(tag: &str, n: usize, ts: i64) -> Vec<u8> {
    let mut b = BatchBuilder::new(Compression::None);
    for i in 0..n {
        let v = format!("{tag}-{i}");
        b.append(ts, None, Some(v.as_bytes()), &[]);
    }
    b.build(1234).unwrap()
}

fn new_log(root: &Path) -> (PathBuf, PartitionLog) {
    let dir = root.join("t-0");
    PartitionLog::create(&dir).unwrap();
    let log = PartitionLog::open(&dir).unwrap();
    (dir, log)
}

fn seg_path(dir: &Path, base: i64, suffix: &str) -> PathBuf {
    dir.join(format!("{base:020}{suffix}"))
}

fn segment_bases(dir: &Path) -> Vec<i64> {
    let mut v: Vec<i64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".log").map(|s| s.parse().unwrap())
        })
        .collect();
    v.sort();
    v
}

/// Every record from `from` to the snapshot's end as (offset, value), checking batch framing.
fn read_all(
    log: &PartitionLog,
    snap: &Snapshot,
    from: i64,
    max_bytes: usize,
) -> Vec<(i64, String)> {
    let mut out = Vec::new();
    let mut next = from;
    while next < snap.log_end_offset {
        let bytes = log.read(snap, next, max_bytes).unwrap();
        assert!(
            !bytes.is_empty(),
            "no data at {next} below the end {}",
            snap.log_end_offset
        );
        let mut it = BatchIter::new(&bytes);
        for b in it.by_ref() {
            let (_, records) = decode_batch(b.unwrap()).unwrap();
            for r in records {
                if r.offset >= next {
                    assert_eq!(r.offset, next, "offsets must be dense");
                    out.push((r.offset, String::from_utf8(r.value.unwrap()).unwrap()));
                    next += 1;
                }
            }
        }
        assert_eq!(it.position(), bytes.len(), "read returned a partial batch");
    }
    out
}

fn small_segments() -> PartitionConfig {
    PartitionConfig {
        segment_bytes: 1000,
        index_interval_bytes: 150,
        ..PartitionConfig::default()
    }
}

#[test]
fn round_trip_across_rolls_with_dense_offsets_and_a_correct_index() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, log) = new_log(tmp.path());
    let cfg = small_segments();
    let ts = now_ms();
    let mut expected = Vec::new();
    for call in 0..40 {
        let mut buf = Vec::new();
        for j in 0..(call % 3 + 1) {
            let tag = format!("c{call}b{j}");
            let n = (call + j) % 5 + 1;
            buf.extend(batch(&tag, n, ts));
            expected.extend((0..n).map(|i| format!("{tag}-{i}")));
        }
        let before = expected.len() as i64;
        let r = log.append(&mut buf, &cfg).unwrap();
        assert!(r.retention_error.is_none());
        assert_eq!(r.next_offset, expected.len() as i64);
        assert!(r.base_offset <= before);
    }
    let bases = segment_bases(&dir);
    assert!(bases.len() >= 5, "expected several rolls, got {bases:?}");
    assert_eq!(bases[0], 0);

    let snap = log.snapshot().unwrap();
    assert_eq!(snap.log_start_offset, 0);
    assert_eq!(snap.log_end_offset, expected.len() as i64);
    let all = read_all(&log, &snap, 0, 1 << 20);
    let values: Vec<String> = all.iter().map(|(_, v)| v.clone()).collect();
    assert_eq!(values, expected);
    // Small reads: one batch at a time, still whole batches.
    assert_eq!(read_all(&log, &snap, 0, 1), all);
    // From every offset: the first batch returned contains it.
    for off in 0..snap.log_end_offset {
        let bytes = log.read(&snap, off, 1).unwrap();
        let h = BatchHeader::parse(&bytes).unwrap();
        assert!(
            h.base_offset <= off && off <= h.last_offset(),
            "offset {off}"
        );
        assert_eq!(h.total_size(), bytes.len());
    }
    assert!(
        log.read(&snap, snap.log_end_offset, 100)
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        log.read(&snap, snap.log_end_offset + 1, 100),
        Err(LocalError::OffsetOutOfRange { .. })
    ));

    // Each segment: batches start at its base offset; its index entries point at batch starts
    // whose last offset is the entry's offset, strictly increasing.
    let mut indexed = 0;
    for (i, &base) in bases.iter().enumerate() {
        let data = std::fs::read(seg_path(&dir, base, ".log")).unwrap();
        assert!(data.len() as u64 <= cfg.segment_bytes);
        let mut starts = HashMap::new();
        let mut pos = 0;
        for b in BatchIter::new(&data) {
            let b = b.unwrap();
            let h = BatchHeader::parse(b).unwrap();
            assert_eq!(h.partition_leader_epoch, 0);
            starts.insert(pos as u32, h.last_offset());
            pos += b.len();
        }
        assert_eq!(pos, data.len());
        let first = BatchHeader::parse(&data).unwrap();
        assert_eq!(first.base_offset, base);
        let index = std::fs::read(seg_path(&dir, base, ".index")).unwrap();
        assert_eq!(index.len() % 8, 0);
        let mut prev = -1;
        for e in index.chunks(8) {
            let rel = i32::from_be_bytes(e[0..4].try_into().unwrap()) as i64;
            let p = u32::from_be_bytes(e[4..8].try_into().unwrap());
            assert_eq!(starts.get(&p), Some(&(base + rel)), "index entry {rel}@{p}");
            assert!(rel > prev);
            prev = rel;
            indexed += 1;
        }
        let tindex = std::fs::read(seg_path(&dir, base, ".timeindex")).unwrap();
        assert_eq!(tindex.len() % 12, 0);
        if i + 1 < bases.len() {
            // Closed segments end with a time entry holding their max timestamp.
            let last = &tindex[tindex.len() - 12..];
            assert_eq!(i64::from_be_bytes(last[0..8].try_into().unwrap()), ts);
        }
    }
    assert!(indexed > 10, "the index should have entries ({indexed})");

    // Reopening changes nothing.
    let again = PartitionLog::open(&dir).unwrap();
    let snap2 = again.snapshot().unwrap();
    assert_eq!(snap2.log_end_offset, snap.log_end_offset);
    assert_eq!(read_all(&again, &snap2, 0, 4096), all);
}

/// A log of `n` batches (of 1..=3 records) in one segment, plus its bytes and batch starts.
fn small_log(root: &Path, n: usize) -> (PathBuf, PartitionLog, Vec<u8>, Vec<usize>) {
    let (dir, log) = new_log(root);
    let ts = now_ms();
    for i in 0..n {
        log.append(
            &mut batch(&format!("b{i}"), i % 3 + 1, ts),
            &PartitionConfig::default(),
        )
        .unwrap();
    }
    let data = std::fs::read(seg_path(&dir, 0, ".log")).unwrap();
    let mut starts = vec![0];
    for b in BatchIter::new(&data) {
        starts.push(starts.last().unwrap() + b.unwrap().len());
    }
    starts.pop();
    (dir, log, data, starts)
}

/// Offsets held by the first `k` batches of `small_log`.
fn offsets_in(k: usize) -> i64 {
    (0..k).map(|i| (i % 3 + 1) as i64).sum()
}

/// Replaces the segment with `bytes` (indexes are empty for these small logs).
fn put_segment(dir: &Path, bytes: &[u8]) {
    std::fs::write(seg_path(dir, 0, ".log"), bytes).unwrap();
}

/// Recovery after a torn tail: snapshot excludes it, the next append cuts it and continues.
/// A torn tail is what an append killed before it was acknowledged leaves, so the recovery
/// point (moved only after an append's fdatasync) is still at the good prefix's end; damage
/// below it is an error instead (see `tests/local/durability.rs`).
fn check_recovers(dir: &Path, log: &PartitionLog, good: &[u8], good_offsets: i64, what: &str) {
    std::fs::write(
        dir.join(kafkit::local::partition::RECOVERY_POINT_FILE),
        format!("0\n{good_offsets}\n"),
    )
    .unwrap();
    let snap = log.snapshot().unwrap();
    assert_eq!(snap.log_end_offset, good_offsets, "{what}: snapshot end");
    assert_eq!(
        snap.segments()[0].size,
        good.len() as u64,
        "{what}: valid size"
    );
    let seen = read_all(log, &snap, 0, 1 << 20);
    assert_eq!(seen.len() as i64, good_offsets, "{what}: read");
    let r = log
        .append(&mut batch("new", 2, now_ms()), &PartitionConfig::default())
        .unwrap();
    assert_eq!(
        r.base_offset, good_offsets,
        "{what}: continues at the right offset"
    );
    let data = std::fs::read(seg_path(dir, 0, ".log")).unwrap();
    assert_eq!(&data[..good.len()], good, "{what}: good batches untouched");
    let snap = log.snapshot().unwrap();
    let all = read_all(log, &snap, 0, 1 << 20);
    assert_eq!(all.len() as i64, good_offsets + 2, "{what}");
    assert_eq!(all[all.len() - 1].1, "new-1");
}

#[test]
fn torn_tail_at_every_byte_of_the_last_batch_is_cut_back() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, log, data, starts) = small_log(tmp.path(), 4);
    let last = starts[3];
    for cut in last..data.len() {
        put_segment(&dir, &data[..cut]);
        check_recovers(
            &dir,
            &log,
            &data[..last],
            offsets_in(3),
            &format!("cut at {cut}"),
        );
    }
}

#[test]
fn zero_pages_and_garbage_after_the_last_batch_are_cut_back() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, log, data, starts) = small_log(tmp.path(), 4);
    let end = offsets_in(4);
    let last_batch = &data[starts[3]..];
    let mut tails: Vec<(String, Vec<u8>)> = vec![
        ("one zero page".into(), vec![0; 4096]),
        ("two zero pages".into(), vec![0; 8192]),
        ("a few zeros".into(), vec![0; 20]),
    ];
    // A header that looks valid (right base offset, magic, epoch) over random bytes.
    let mut fake = last_batch[..61].to_vec();
    fake[..8].copy_from_slice(&end.to_be_bytes());
    let mut x: u32 = 12345;
    fake.extend((0..500).map(|_| {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        (x >> 16) as u8
    }));
    let fake_len = (fake.len() - 12) as i32;
    fake[8..12].copy_from_slice(&fake_len.to_be_bytes());
    tails.push(("valid-looking header over garbage".into(), fake.clone()));
    // The same header claiming more bytes than the file has, and a huge length field.
    let mut long = fake.clone();
    long[8..12].copy_from_slice(&100_000i32.to_be_bytes());
    tails.push(("length past end of file".into(), long));
    let mut huge = fake;
    huge[8..12].copy_from_slice(&i32::MAX.to_be_bytes());
    tails.push(("huge length".into(), huge));
    // A whole copy of the last batch with one record byte changed (CRC mismatch).
    let mut copy = last_batch.to_vec();
    copy[..8].copy_from_slice(&end.to_be_bytes());
    let n = copy.len();
    copy[n - 2] ^= 0x40;
    tails.push(("batch with a CRC mismatch".into(), copy));
    for (what, tail) in tails {
        let mut bytes = data.clone();
        bytes.extend(&tail);
        put_segment(&dir, &bytes);
        check_recovers(&dir, &log, &data, end, &what);
    }
}

#[test]
fn bit_flips_in_a_middle_batch_fail_stop_and_in_the_last_batch_are_cut() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, log, data, starts) = small_log(tmp.path(), 5);
    let seg = seg_path(&dir, 0, ".log");
    let before = log.snapshot().unwrap();
    let (mid, mid_end) = (starts[2], starts[3]);
    for at in mid..mid_end {
        let mut bytes = data.clone();
        bytes[at] ^= 1 << (at % 8);
        put_segment(&dir, &bytes);
        let is_corrupt_here = |e: LocalError| match e {
            LocalError::Corrupt { path, position, .. } => {
                assert_eq!(path, seg);
                assert_eq!(position, mid as u64, "flip at {at}");
            }
            e => panic!("flip at {at}: expected Corrupt, got {e}"),
        };
        // A reader with a snapshot from before the damage.
        let mut err = None;
        for off in 0..before.log_end_offset {
            match log.read(&before, off, 1 << 20) {
                Ok(b) => {
                    for batch in BatchIter::new(&b) {
                        decode_batch(batch.unwrap()).unwrap();
                    }
                }
                Err(e) => {
                    err = Some(e);
                    break;
                }
            }
        }
        is_corrupt_here(err.expect("the damage must be reported"));
        // A fresh snapshot ends before the damage and fails a read that reaches it.
        let now = log.snapshot().unwrap();
        assert!(now.log_end_offset < before.log_end_offset, "flip at {at}");
        is_corrupt_here(now.damage().expect("the snapshot keeps the damage"));
        is_corrupt_here(log.read(&now, now.log_end_offset, 1 << 20).unwrap_err());
        is_corrupt_here(
            log.append(&mut batch("x", 1, 0), &PartitionConfig::default())
                .unwrap_err(),
        );
        assert_eq!(
            std::fs::read(&seg).unwrap(),
            bytes,
            "nothing written or cut"
        );
    }
    let last = starts[4];
    for at in (last..data.len()).step_by(3) {
        let mut bytes = data.clone();
        bytes[at] ^= 0x80 >> (at % 8);
        put_segment(&dir, &bytes);
        check_recovers(
            &dir,
            &log,
            &data[..last],
            offsets_in(4),
            &format!("flip at {at}"),
        );
    }
}

/// A multi-segment log with an index entry for almost every batch.
fn indexed_log(root: &Path) -> (PathBuf, PartitionLog, PartitionConfig, Vec<(i64, String)>) {
    let (dir, log) = new_log(root);
    let cfg = PartitionConfig {
        segment_bytes: 2000,
        index_interval_bytes: 0,
        ..PartitionConfig::default()
    };
    let ts = now_ms();
    for i in 0..60 {
        log.append(&mut batch(&format!("b{i}"), i % 4 + 1, ts + i as i64), &cfg)
            .unwrap();
    }
    let snap = log.snapshot().unwrap();
    let all = read_all(&log, &snap, 0, 1 << 20);
    (dir, log, cfg, all)
}

fn check_reads(log: &PartitionLog, all: &[(i64, String)], what: &str) {
    let snap = log.snapshot().unwrap();
    assert_eq!(snap.log_end_offset, all.len() as i64, "{what}");
    for (off, value) in all {
        let bytes = log.read(&snap, *off, 1).unwrap();
        let (h, recs) = decode_batch(&bytes).unwrap();
        assert!(
            h.base_offset <= *off && *off <= h.last_offset(),
            "{what}: offset {off}"
        );
        let rec = recs.iter().find(|r| r.offset == *off).unwrap();
        assert_eq!(rec.value.as_deref(), Some(value.as_bytes()), "{what}");
    }
    assert_eq!(read_all(log, &snap, 0, 300), all, "{what}");
}

#[test]
fn damaged_indexes_are_ignored_by_readers_and_rebuilt_by_writers() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, log, cfg, mut all) = indexed_log(tmp.path());
    let bases = segment_bases(&dir);
    assert!(bases.len() >= 3);
    let originals: Vec<Vec<u8>> = bases
        .iter()
        .map(|&b| std::fs::read(seg_path(&dir, b, ".index")).unwrap())
        .collect();
    assert!(originals.iter().all(|i| i.len() >= 16));
    type Damage = fn(&Path, &[u8]);
    let damages: Vec<(&str, Damage)> = vec![
        ("deleted", |p, _| std::fs::remove_file(p).unwrap()),
        ("truncated to a non-multiple of 8", |p, o| {
            std::fs::write(p, &o[..o.len() - 3]).unwrap()
        }),
        ("zero-filled", |p, o| {
            std::fs::write(p, vec![0; o.len()]).unwrap()
        }),
        ("pointing past EOF", |p, o| {
            let mut o = o.to_vec();
            for e in o.chunks_mut(8) {
                e[4..8].copy_from_slice(&0x7fff_0000u32.to_be_bytes());
            }
            std::fs::write(p, o).unwrap()
        }),
        ("pointing inside batches", |p, o| {
            let mut o = o.to_vec();
            for e in o.chunks_mut(8) {
                let pos = u32::from_be_bytes(e[4..8].try_into().unwrap()) + 7;
                e[4..8].copy_from_slice(&pos.to_be_bytes());
            }
            std::fs::write(p, o).unwrap()
        }),
        ("stale offsets", |p, o| {
            let mut o = o.to_vec();
            for e in o.chunks_mut(8) {
                let rel = i32::from_be_bytes(e[0..4].try_into().unwrap()) + 1;
                e[0..4].copy_from_slice(&rel.to_be_bytes());
            }
            std::fs::write(p, o).unwrap()
        }),
    ];
    for (what, damage) in damages {
        for (i, &b) in bases.iter().enumerate() {
            damage(&seg_path(&dir, b, ".index"), &originals[i]);
        }
        check_reads(&log, &all, what);
        // The writer rebuilds the active segment's index and appends correctly.
        let r = log.append(&mut batch(what, 1, now_ms()), &cfg).unwrap();
        assert_eq!(r.base_offset, all.len() as i64, "{what}");
        all.push((r.base_offset, format!("{what}-0")));
        check_reads(&log, &all, what);
        let active = *segment_bases(&dir).last().unwrap();
        let index = std::fs::read(seg_path(&dir, active, ".index")).unwrap();
        assert_eq!(index.len() % 8, 0, "{what}: active index rebuilt");
        // Restore the closed segments' indexes for the next round (the active one may differ).
        for (i, &b) in bases.iter().enumerate() {
            if b != active {
                std::fs::write(seg_path(&dir, b, ".index"), &originals[i]).unwrap();
            }
        }
    }
}

#[test]
fn offset_for_timestamp_matches_a_full_scan_even_with_damaged_time_indexes() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, log, _cfg, _) = indexed_log(tmp.path());
    let snap = log.snapshot().unwrap();
    // Brute force: (offset, timestamp) of every record.
    let mut recs = Vec::new();
    let mut next = 0;
    while next < snap.log_end_offset {
        let bytes = log.read(&snap, next, 1).unwrap();
        let (_, rs) = decode_batch(&bytes).unwrap();
        for r in rs.iter().filter(|r| r.offset >= next) {
            recs.push((r.offset, r.timestamp));
        }
        next = rs.last().unwrap().offset + 1;
    }
    let (t0, t1) = (recs[0].1, recs.last().unwrap().1);
    let expect = |ts: i64| recs.iter().find(|r| r.1 >= ts).map(|r| r.0);
    let check = |what: &str| {
        for ts in (t0 - 2)..=(t1 + 2) {
            assert_eq!(
                log.offset_for_timestamp(&snap, ts).unwrap(),
                expect(ts),
                "{what}: ts {ts}"
            );
        }
    };
    check("intact");
    assert_eq!(expect(t1 + 1), None);
    for b in segment_bases(&dir) {
        let p = seg_path(&dir, b, ".timeindex");
        let len = std::fs::metadata(&p).unwrap().len() as usize;
        std::fs::write(&p, vec![0; len]).unwrap();
        std::fs::remove_file(seg_path(&dir, b, ".index")).unwrap();
    }
    check("zeroed time index, no offset index");
    for b in segment_bases(&dir) {
        std::fs::write(seg_path(&dir, b, ".timeindex"), [1, 2, 3]).unwrap();
    }
    check("truncated time index");
}

#[test]
fn a_damaged_active_time_index_is_rebuilt_by_the_next_append() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, log) = new_log(tmp.path());
    let cfg = PartitionConfig {
        index_interval_bytes: 0,
        ..PartitionConfig::default()
    };
    let t = now_ms();
    for i in 0..10 {
        log.append(&mut batch("a", 1, t + i * 10), &cfg).unwrap();
    }
    let p = seg_path(&dir, 0, ".timeindex");
    let len = std::fs::metadata(&p).unwrap().len() as usize;
    std::fs::write(&p, vec![0; len]).unwrap();
    log.append(&mut batch("a", 1, t + 100), &cfg).unwrap();
    let ti = std::fs::read(&p).unwrap();
    assert_eq!(&ti[..8], &(t + 10).to_be_bytes(), "rebuilt from the log");
    let snap = log.snapshot().unwrap();
    assert_eq!(log.offset_for_timestamp(&snap, t + 35).unwrap(), Some(4));
    assert_eq!(log.offset_for_timestamp(&snap, t + 100).unwrap(), Some(10));
    assert_eq!(log.offset_for_timestamp(&snap, t + 101).unwrap(), None);
}

#[test]
fn retention_by_bytes_deletes_old_segments_and_the_start_persists() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, log) = new_log(tmp.path());
    let mut cfg = small_segments();
    for i in 0..80 {
        log.append(&mut batch(&format!("b{i}"), 3, now_ms()), &cfg)
            .unwrap();
    }
    let bases = segment_bases(&dir);
    assert!(bases.len() > 4, "{bases:?}");
    let total = log.size_bytes().unwrap();
    cfg.retention_bytes = 2500;
    log.apply_retention(&cfg).unwrap();
    let kept = segment_bases(&dir);
    assert!(kept.len() < bases.len() && kept.len() >= 2, "{kept:?}");
    assert_eq!(kept.last(), bases.last(), "the active segment stays");
    // Kafka's rule: delete the oldest segment while the log stays at or above retention.bytes
    // without it, so what is left exceeds the limit by less than its oldest segment.
    let size = log.size_bytes().unwrap();
    let first = std::fs::metadata(seg_path(&dir, kept[0], ".log"))
        .unwrap()
        .len();
    assert!(
        size < total && size - first < 2500 && size >= 2500,
        "{size}"
    );
    let snap = log.snapshot().unwrap();
    assert_eq!(snap.log_start_offset, kept[0]);
    assert_eq!(snap.segments()[0].base_offset, kept[0]);
    let start_file = std::fs::read_to_string(dir.join("log-start-offset")).unwrap();
    assert_eq!(start_file, format!("0\n{}\n", kept[0]));
    // Reopen: the start persists; below it is out of range; the rest reads back.
    let log = PartitionLog::open(&dir).unwrap();
    let snap = log.snapshot().unwrap();
    assert_eq!(snap.log_start_offset, kept[0]);
    assert!(matches!(
        log.read(&snap, kept[0] - 1, 100),
        Err(LocalError::OffsetOutOfRange { offset, log_start, .. }) if offset == kept[0] - 1 && log_start == kept[0]
    ));
    assert_eq!(
        read_all(&log, &snap, kept[0], 1 << 20).len() as i64,
        240 - kept[0]
    );
    // Appends apply retention too.
    let r = log.append(&mut batch("more", 50, now_ms()), &cfg).unwrap();
    assert!(r.retention_error.is_none());
    assert!(log.size_bytes().unwrap() < 2500 + 1000);
    // A reader whose snapshot predates a deletion gets OffsetOutOfRange with the new start.
    let old_snap = log.snapshot().unwrap();
    cfg.retention_bytes = 0;
    log.apply_retention(&cfg).unwrap();
    match log.read(&old_snap, old_snap.log_start_offset, 100) {
        Err(LocalError::OffsetOutOfRange {
            log_start, log_end, ..
        }) => {
            assert_eq!(log_start, old_snap.log_end_offset);
            assert_eq!(log_end, old_snap.log_end_offset);
        }
        other => panic!("expected OffsetOutOfRange, got {other:?}"),
    }
    // Everything breached: one empty segment remains at the log end, and appends continue.
    assert_eq!(segment_bases(&dir), vec![old_snap.log_end_offset]);
    let r = log
        .append(
            &mut batch("after", 1, now_ms()),
            &PartitionConfig::default(),
        )
        .unwrap();
    assert_eq!(r.base_offset, old_snap.log_end_offset);
    // An empty active segment is never deleted.
    log.apply_retention(&cfg).unwrap();
    log.apply_retention(&cfg).unwrap();
    assert_eq!(segment_bases(&dir).len(), 1);
}

#[test]
fn retention_by_time_uses_the_max_timestamp_and_segment_ms_rolls() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, log) = new_log(tmp.path());
    let day = 86_400_000;
    let old = now_ms() - 10 * day;
    let mut cfg = PartitionConfig {
        segment_ms: 1000,
        retention_ms: -1,
        ..PartitionConfig::default()
    };
    // segment.ms rolls by record timestamps: +0, +500 stay, +1500 rolls (more than 1000 later).
    for dt in [0, 500, 1500, 2000, 2400, 10 * day - 1000] {
        log.append(&mut batch("x", 1, old + dt), &cfg).unwrap();
    }
    assert_eq!(segment_bases(&dir), vec![0, 2, 5]);
    // A recent record in a segment keeps it; old segments go.
    cfg.retention_ms = 7 * day;
    log.apply_retention(&cfg).unwrap();
    assert_eq!(segment_bases(&dir), vec![5]);
    let snap = log.snapshot().unwrap();
    assert_eq!((snap.log_start_offset, snap.log_end_offset), (5, 6));
    // Once the active segment is old too, Kafka rolls first and deletes it.
    cfg.retention_ms = 1;
    std::thread::sleep(std::time::Duration::from_millis(1100));
    log.apply_retention(&cfg).unwrap();
    assert_eq!(segment_bases(&dir), vec![6]);
    assert_eq!(log.snapshot().unwrap().log_start_offset, 6);
}

#[test]
fn a_zeroed_time_index_does_not_make_retention_delete_recent_data() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, log) = new_log(tmp.path());
    let cfg = small_segments();
    for i in 0..20 {
        log.append(&mut batch(&format!("b{i}"), 3, now_ms()), &cfg)
            .unwrap();
    }
    let bases = segment_bases(&dir);
    for &b in &bases {
        let p = seg_path(&dir, b, ".timeindex");
        let len = std::fs::metadata(&p).unwrap().len() as usize;
        std::fs::write(&p, vec![0; len]).unwrap();
    }
    log.apply_retention(&cfg).unwrap();
    assert_eq!(segment_bases(&dir), bases);
}

#[test]
fn invalid_input_and_unknown_files() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, log) = new_log(tmp.path());
    std::fs::write(
        dir.join("partition.metadata"),
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n",
    )
    .unwrap();
    log.append(&mut batch("ok", 2, 0), &PartitionConfig::default())
        .unwrap();
    let mut bad = batch("bad", 2, 0);
    let n = bad.len();
    bad[n - 1] ^= 1;
    let mut input = batch("good", 1, 0);
    input.extend(&bad);
    assert!(matches!(
        log.append(&mut input, &PartitionConfig::default()),
        Err(LocalError::Invalid(_))
    ));
    let mut torn = batch("t", 1, 0);
    torn.pop();
    assert!(log.append(&mut torn, &PartitionConfig::default()).is_err());
    let snap = log.snapshot().unwrap();
    assert_eq!(
        snap.log_end_offset, 2,
        "nothing of a rejected input was written"
    );
    std::fs::write(dir.join("stray.log"), b"").unwrap();
    let err = log.snapshot().unwrap_err().to_string();
    assert!(err.contains("stray.log"), "{err}");
    assert!(
        PartitionLog::open(tmp.path()).is_err(),
        "not a partition directory"
    );
}

#[test]
fn concurrent_writers_and_readers_see_no_loss_duplication_or_interleaving() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, _) = new_log(tmp.path());
    let cfg = PartitionConfig {
        segment_bytes: 5_000,
        index_interval_bytes: 500,
        ..PartitionConfig::default()
    };
    const WRITERS: usize = 4;
    const APPENDS: usize = 40;
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (dir, done) = (dir.clone(), done.clone());
            std::thread::spawn(move || {
                let log = PartitionLog::open(&dir).unwrap();
                let mut seen = Vec::new();
                loop {
                    let finished = done.load(Ordering::SeqCst);
                    let snap = log.snapshot().unwrap();
                    let got = read_all(&log, &snap, seen.len() as i64, 4096);
                    seen.extend(got);
                    if finished {
                        return seen;
                    }
                    // Consumers poll; a reader spinning on the shared lock would starve writers,
                    // whose exclusive lock is taken by polling try_lock.
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            })
        })
        .collect();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (dir, cfg) = (dir.clone(), cfg.clone());
            std::thread::spawn(move || {
                let log = PartitionLog::open(&dir).unwrap();
                let mut acked = Vec::new();
                for s in 0..APPENDS {
                    let mut buf = batch(&format!("w{w}:{s}:a"), s % 3 + 1, now_ms());
                    buf.extend(batch(&format!("w{w}:{s}:b"), 2, now_ms()));
                    let r = log.append(&mut buf, &cfg).unwrap();
                    assert_eq!(r.next_offset - r.base_offset, (s % 3 + 1 + 2) as i64);
                    acked.push((w, s, r.base_offset));
                }
                acked
            })
        })
        .collect();
    let acked: Vec<_> = writers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    done.store(true, Ordering::SeqCst);
    let log = PartitionLog::open(&dir).unwrap();
    let snap = log.snapshot().unwrap();
    let all = read_all(&log, &snap, 0, 1 << 20);
    let total: usize = (0..APPENDS).map(|s| s % 3 + 3).sum::<usize>() * WRITERS;
    assert_eq!(all.len(), total);
    // Every append's records sit at its acked offsets, contiguous and in order.
    for (w, s, base) in acked {
        let n = s % 3 + 1;
        let mut want: Vec<String> = (0..n).map(|i| format!("w{w}:{s}:a-{i}")).collect();
        want.extend((0..2).map(|i| format!("w{w}:{s}:b-{i}")));
        let got: Vec<&String> = all[base as usize..base as usize + want.len()]
            .iter()
            .map(|(_, v)| v)
            .collect();
        assert_eq!(got, want.iter().collect::<Vec<_>>());
    }
    for r in readers {
        let seen = r.join().unwrap();
        assert_eq!(seen, all, "a reader saw exactly the final log, in order");
    }
    assert!(segment_bases(&dir).len() > 2);
}

/// Throughput check (run with `cargo test --release -- --ignored throughput --nocapture`):
/// 100 MB of 16 KiB batches appended in 4 MiB calls, then read back.
#[test]
#[ignore]
fn throughput_of_bulk_appends() {
    let tmp =
        tempfile::tempdir_in(std::env::var("KAFKIT_BENCH_DIR").unwrap_or(".".into())).unwrap();
    let (_dir, log) = new_log(tmp.path());
    let cfg = PartitionConfig::default();
    let mut one = BatchBuilder::new(Compression::None);
    let value = vec![b'x'; 1000];
    while one.size() < 16 * 1024 - 1100 {
        one.append(now_ms(), None, Some(&value), &[]);
    }
    let batch = one.build(0).unwrap();
    let per_call = 4 * 1024 * 1024 / batch.len();
    let calls = 100 * 1024 * 1024 / (per_call * batch.len());
    let start = std::time::Instant::now();
    for _ in 0..calls {
        let mut buf = batch.repeat(per_call);
        log.append(&mut buf, &cfg).unwrap();
    }
    let secs = start.elapsed().as_secs_f64();
    let mb = (calls * per_call * batch.len()) as f64 / 1e6;
    println!("append: {mb:.0} MB in {secs:.2} s = {:.0} MB/s", mb / secs);
    let start = std::time::Instant::now();
    let snap = log.snapshot().unwrap();
    let (mut next, mut bytes) = (0, 0);
    while next < snap.log_end_offset {
        let b = log.read(&snap, next, 1 << 20).unwrap();
        bytes += b.len();
        let mut it = BatchIter::new(&b);
        let mut last = None;
        for x in it.by_ref() {
            last = Some(BatchHeader::parse(x.unwrap()).unwrap());
        }
        next = last.unwrap().next_offset();
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "read: {:.0} MB in {secs:.2} s = {:.0} MB/s",
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / secs
    );
}

/// A topic's new partition has its `partition.metadata` and first `.log` but no `.lock` (made
/// by the first lock taken, to keep creating many partitions fast); it opens, takes appends
/// and then has its lock. A directory of an older kafkit, with a `.lock` and no
/// `partition.metadata`, still opens; one with neither is refused.
#[test]
fn a_partition_is_known_by_its_metadata_or_its_lock() {
    let root = tempfile::tempdir().unwrap();
    let dir = kafkit::local::LogDir::open(root.path()).unwrap();
    let meta = dir.create_topic("t", 3, Default::default()).unwrap();
    let p0 = root.path().join("t-0");
    assert!(p0.join("partition.metadata").is_file());
    assert!(p0.join("00000000000000000000.log").is_file());
    assert!(!p0.join(".lock").exists());
    let log = dir.partition_of(&meta, 0).unwrap();
    log.append(&mut batch("a", 2, now_ms()), &PartitionConfig::default())
        .unwrap();
    assert!(p0.join(".lock").is_file());

    let older = root.path().join("older");
    PartitionLog::create(&older).unwrap();
    assert!(!older.join("partition.metadata").exists());
    PartitionLog::open(&older).expect("a directory with a .lock");

    let neither = root.path().join("t-1");
    std::fs::remove_file(neither.join("partition.metadata")).unwrap();
    let err = PartitionLog::open(&neither).unwrap_err().to_string();
    assert!(
        err.contains("is not a partition directory (it has neither partition.metadata nor .lock)"),
        "{err}"
    );
}
