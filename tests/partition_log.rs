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
