//! Files built byte by byte: transactions with their markers, damaged segments (each kind of
//! damage Kafka's tool meets at a different point), damaged indexes, producer snapshots and
//! transaction indexes.

use std::path::{Path, PathBuf};

use kafkit::log_files::ProducerEntry;
use kafkit::record::{BatchBuilder, Compression};

use super::{available, files, ours, same_as_kafka};
use crate::common::text;

const CRC_AT: usize = 17;
const ATTRIBUTES_AT: usize = 21;

/// Rewrites a batch's CRC-32C after a change to the bytes it covers.
fn reseal(batch: &mut [u8]) {
    let crc = crc32c::crc32c(&batch[ATTRIBUTES_AT..]);
    batch[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_be_bytes());
}

/// A batch of `values` (keyed `k<i>`, one header each) at `base`.
fn batch(base: i64, codec: Compression, values: &[&str]) -> Vec<u8> {
    let mut b = BatchBuilder::new(codec);
    for (i, v) in values.iter().enumerate() {
        let key = format!("k{i}");
        b.append(
            1_700_000_000_000 + i as i64,
            Some(key.as_bytes()),
            Some(v.as_bytes()),
            &[("h", Some(b"x"))],
        );
    }
    b.build(base).unwrap()
}

/// A transactional batch of a producer, sequences from `sequence`.
fn transactional(base: i64, producer: i64, sequence: i32, n: usize) -> Vec<u8> {
    let mut b = BatchBuilder::new(Compression::None);
    b.set_producer(producer, 3, sequence);
    b.set_transactional(true);
    for i in 0..n {
        b.append(
            1_700_000_000_100,
            None,
            Some(format!("t{i}").as_bytes()),
            &[],
        );
    }
    b.build(base).unwrap()
}

/// A control batch: one record, key (version 0, `type_id`), value (version 0, epoch 7).
fn control(base: i64, producer: i64, type_id: i16) -> Vec<u8> {
    let mut key = 0i16.to_be_bytes().to_vec();
    key.extend(type_id.to_be_bytes());
    let value = [0, 0, 0, 0, 0, 7];
    let mut b = BatchBuilder::new(Compression::None);
    b.set_producer(producer, 3, -1);
    b.set_transactional(true);
    b.append(1_700_000_000_200, Some(&key), Some(&value), &[]);
    let mut out = b.build(base).unwrap();
    out[ATTRIBUTES_AT + 1] |= 0x20;
    reseal(&mut out);
    out
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn transactions_and_markers_dump_as_kafkas_do() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut seg = transactional(0, 42, 0, 3);
    seg.extend(control(3, 42, 1));
    seg.extend(transactional(4, 42, 3, 2));
    seg.extend(control(6, 42, 0));
    seg.extend(control(7, 42, 9));
    // Log-append time and a delete horizon (set by compaction) change what Kafka prints.
    let mut appended = batch(8, Compression::Gzip, &["a", "b"]);
    appended[ATTRIBUTES_AT + 1] |= 0x48;
    reseal(&mut appended);
    seg.extend(appended);
    let log = write(dir.path(), "00000000000000000000.log", &seg);
    let log = files(&[&log]);
    for extra in [
        &["--print-data-log"][..],
        &["--print-data-log", "--skip-record-metadata"],
    ] {
        let mut args = vec!["--files", log.as_str()];
        args.extend_from_slice(extra);
        let out = same_as_kafka(&args);
        assert!(
            extra.len() > 1 || out.contains("endTxnMarker: COMMIT coordinatorEpoch: 7"),
            "{out}"
        );
    }
    same_as_kafka(&["--files", &log, "--transaction-log-decoder"]);
}

/// A segment of four batches, uncompressed and compressed, to damage.
fn sound() -> (Vec<u8>, Vec<usize>) {
    let mut seg = Vec::new();
    let mut starts = Vec::new();
    let mut base = 0;
    for codec in [
        Compression::None,
        Compression::Gzip,
        Compression::None,
        Compression::Zstd,
    ] {
        starts.push(seg.len());
        seg.extend(batch(base, codec, &["first value", "second", "third é"]));
        base += 3;
    }
    (seg, starts)
}

fn set(seg: &mut [u8], at: usize, bytes: &[u8]) {
    seg[at..at + bytes.len()].copy_from_slice(bytes);
}

/// Each kind of damage, named, and whether it breaks a batch's framing or header (which ends
/// any dump) rather than what is inside a batch (which only deep iteration meets).
fn damaged() -> Vec<(&'static str, Vec<u8>, bool)> {
    let (seg, s) = sound();
    let with = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut copy = seg.clone();
        f(&mut copy);
        copy
    };
    vec![
        ("truncated", seg[..seg.len() - 10].to_vec(), false),
        ("flipped value", with(&|b| b[s[1] - 3] ^= 0x20), false),
        ("zeros after", with(&|b| b.extend([0u8; 100])), true),
        (
            "short length",
            with(&|b| set(b, s[1] + 8, &5i32.to_be_bytes())),
            true,
        ),
        (
            "compressed flip",
            with(&|b| set(b, s[1] + 70, &[0xff, 0xee])),
            false,
        ),
        ("magic 3", with(&|b| b[s[2] + 16] = 3), false),
        (
            "count plus one",
            with(&|b| set(b, s[0] + 57, &4i32.to_be_bytes())),
            false,
        ),
        (
            "count minus one",
            with(&|b| set(b, s[2] + 57, &2i32.to_be_bytes())),
            false,
        ),
        (
            "negative count",
            with(&|b| set(b, s[0] + 57, &(-1i32).to_be_bytes())),
            false,
        ),
        (
            "compressed count",
            with(&|b| set(b, s[3] + 57, &9i32.to_be_bytes())),
            false,
        ),
        ("codec 5", with(&|b| b[s[1] + 22] = 5), true),
        ("record length", with(&|b| b[s[0] + 61] = 0x7f), false),
        (
            "offset gap",
            with(&|b| set(b, s[2], &20i64.to_be_bytes())),
            false,
        ),
        ("cut in a header", seg[..s[3] + 40].to_vec(), false),
        (
            "short batch at the end",
            {
                let mut b = seg.clone();
                b.extend(100i64.to_be_bytes());
                b.extend(30i32.to_be_bytes());
                b.extend([0, 0, 0, 0, 2]);
                b
            },
            true,
        ),
    ]
}

#[test]
fn damaged_segments_fail_where_kafkas_tool_fails() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut shallow = Vec::new();
    for (i, (what, bytes, framing)) in damaged().into_iter().enumerate() {
        let path = write(dir.path(), &format!("{:020}.log", i * 100), &bytes);
        let out = same_as_kafka(&["--files", &files(&[&path]), "--print-data-log"]);
        assert!(out.contains("Log starting offset"), "{what}: {out}");
        if !framing {
            shallow.push(path);
        }
    }
    // Without deep iteration the damage inside batches goes unnoticed: one run for those.
    let shallow: Vec<&Path> = shallow.iter().map(PathBuf::as_path).collect();
    same_as_kafka(&["--files", &files(&shallow)]);
    // A pre-0.11 message set (magic 1 here): its line as Kafka prints it; its records are not
    // read (Kafka's reader fails on these bytes anyway, with an IndexOutOfBoundsException).
    let (mut seg, s) = sound();
    seg[s[2] + 16] = 1;
    let path = write(dir.path(), "00000000000000009000.log", &seg);
    let path = files(&[&path]);
    same_as_kafka(&["--files", &path]);
    let out = ours(&["--files", &path, "--print-data-log"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("predates Kafka 0.11"),
        "{}",
        text(&out.stderr)
    );
}

/// An offset-index entry and a time-index entry.
fn offset_entry(relative: i32, position: i32) -> Vec<u8> {
    [relative.to_be_bytes(), position.to_be_bytes()].concat()
}

fn time_entry(timestamp: i64, relative: i32) -> Vec<u8> {
    [&timestamp.to_be_bytes()[..], &relative.to_be_bytes()].concat()
}

#[test]
fn damaged_indexes_are_reported_as_kafka_reports_them() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (seg, s) = sound();
    let mut names = Vec::new();
    // Several segments, so that the summaries come in Kafka's hash-map order.
    for base in [0u64, 3, 5, 17, 100] {
        let name = |suffix| format!("{base:020}{suffix}");
        let mut copy = seg.clone();
        for (i, &at) in s.iter().enumerate() {
            set(&mut copy, at, &(base as i64 + 3 * i as i64).to_be_bytes());
        }
        write(dir.path(), &name(".log"), &copy);
        // One right entry, one naming the wrong offset, then a preallocated zero tail.
        let index = [
            offset_entry(5, s[1] as i32),
            offset_entry(7, s[2] as i32),
            vec![0; 16],
        ];
        write(dir.path(), &name(".index"), &index.concat());
        // Right, then a timestamp too low, out of order, an offset no batch ends at.
        let time = [
            time_entry(1_700_000_000_002, 5),
            time_entry(1_700_000_000_001, 8),
            time_entry(1_699_000_000_000, 11),
            time_entry(1_700_000_000_002, 4),
            vec![0; 24],
        ];
        write(dir.path(), &name(".timeindex"), &time.concat());
        names.push(dir.path().join(name(".index")));
        names.push(dir.path().join(name(".timeindex")));
    }
    let all: Vec<&Path> = names.iter().map(PathBuf::as_path).collect();
    let all = files(&all);
    same_as_kafka(&["--files", &all]);
    same_as_kafka(&["--files", &all, "--verify-index-only"]);
    same_as_kafka(&["--files", &all, "--max-message-size", "100"]);
    // Kafka's startup checks: a torn entry, offsets below the base, timestamps going back.
    let checks = [
        (".index", [offset_entry(1, 0), vec![1, 2, 3]].concat()),
        (".index", offset_entry(-5, 0)),
        (".timeindex", [time_entry(10, 1), time_entry(5, 2)].concat()),
        (".timeindex", time_entry(10, -3)),
        (".timeindex", [time_entry(10, 1), vec![0; 5]].concat()),
        (".index", offset_entry(1, 99_999)),
        (".index", offset_entry(1, 5)),
    ];
    // A log with zeros after its batches: Kafka's time-index dump lists every batch after an
    // entry's position before it looks, so the first entry already meets them.
    let mut zero_tail = seg.clone();
    zero_tail.extend([0u8; 64]);
    write(dir.path(), "00000000000000002000.log", &zero_tail);
    write(
        dir.path(),
        "00000000000000002000.index",
        &offset_entry(5, s[1] as i32),
    );
    let time = write(
        dir.path(),
        "00000000000000002000.timeindex",
        &time_entry(1, 5),
    );
    same_as_kafka(&["--files", &files(&[&time])]);
    for (i, (suffix, bytes)) in checks.into_iter().enumerate() {
        let base = format!("{:020}", 1000 + i);
        write(dir.path(), &format!("{base}.log"), &seg);
        write(dir.path(), &format!("{base}.index"), &offset_entry(2, 0));
        let path = write(dir.path(), &format!("{base}{suffix}"), &bytes);
        let path = files(&[&path]);
        same_as_kafka(&["--files", &path, "--index-sanity-check"]);
        same_as_kafka(&["--files", &path]);
    }
}

/// A producer snapshot (version 1, CRC-32C, entries) of `entries`.
fn producer_snapshot(entries: &[ProducerEntry]) -> Vec<u8> {
    let mut body = (entries.len() as i32).to_be_bytes().to_vec();
    for e in entries {
        body.extend(e.producer_id.to_be_bytes());
        body.extend(e.epoch.to_be_bytes());
        body.extend(e.last_sequence.to_be_bytes());
        body.extend(e.last_offset.to_be_bytes());
        body.extend(e.offset_delta.to_be_bytes());
        body.extend(e.timestamp.to_be_bytes());
        body.extend(e.coordinator_epoch.to_be_bytes());
        body.extend(e.current_txn_first_offset.to_be_bytes());
    }
    let mut out = 1i16.to_be_bytes().to_vec();
    out.extend(crc32c::crc32c(&body).to_be_bytes());
    out.extend(body);
    out
}

/// A producer's entry: id, last sequence and offset, and an ongoing transaction's first
/// offset (-1: none).
fn producer(
    producer_id: i64,
    last_sequence: i32,
    last_offset: i64,
    txn_first: i64,
) -> ProducerEntry {
    ProducerEntry {
        producer_id,
        epoch: 2,
        last_sequence,
        last_offset,
        offset_delta: 3,
        timestamp: 1_700_000_000_000 + producer_id,
        coordinator_epoch: if txn_first < 0 { -1 } else { 5 },
        current_txn_first_offset: txn_first,
    }
}

fn aborted(version: i16, pid: i64, first: i64, last: i64, stable: i64) -> Vec<u8> {
    let mut out = version.to_be_bytes().to_vec();
    for v in [pid, first, last, stable] {
        out.extend(v.to_be_bytes());
    }
    out
}

#[test]
fn snapshots_and_transaction_indexes_dump_as_kafkas_do() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A sequence that wraps below 0, an open transaction, a producer with no batch.
    let good = producer_snapshot(&[
        producer(7, 9, 41, -1),
        producer(8, 1, 50, 48),
        producer(9, 0, -1, -1),
    ]);
    let mut variants = vec![good.clone()];
    let mut bad_crc = good.clone();
    *bad_crc.last_mut().unwrap() ^= 1;
    variants.push(bad_crc);
    let mut bad_version = good.clone();
    bad_version[1] = 2;
    variants.push(bad_version);
    for cut in [1, 5, 8, good.len() - 3] {
        variants.push(good[..cut].to_vec());
    }
    let mut paths = Vec::new();
    for (i, bytes) in variants.iter().enumerate() {
        paths.push(write(dir.path(), &format!("{:020}.snapshot", i + 1), bytes));
    }
    let txn = [
        aborted(0, 5, 1, 2, 3),
        aborted(0, 6, 10, 20, 30),
        vec![1, 2],
    ]
    .concat();
    paths.push(write(dir.path(), "00000000000000000001.txnindex", &txn));
    let all: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let out = same_as_kafka(&["--files", &files(&all)]);
    assert!(
        out.contains("currentTxnFirstOffset: OptionalLong[48]"),
        "{out}"
    );
    let newer = [aborted(0, 5, 1, 2, 3), aborted(256, 6, 10, 20, 30)].concat();
    let path = write(dir.path(), "00000000000000000002.txnindex", &newer);
    same_as_kafka(&["--files", &files(&[&path])]);
}

#[test]
fn the_reference_vectors_of_every_codec_dump_as_kafka_dumps_them() {
    if !available() {
        return;
    }
    let path = format!(
        "{}/tests/vectors/record-batches.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let vectors: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let unhex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    // The five batches (one per codec, 44 records each, written by another client) one after
    // the other.
    let mut seg = Vec::new();
    for (i, batch) in vectors["batches"].as_array().unwrap().iter().enumerate() {
        let mut bytes = unhex(batch["batch_hex"].as_str().unwrap());
        kafkit::record::set_base_offset(&mut bytes, 44 * i as i64);
        seg.extend(bytes);
    }
    let dir = tempfile::tempdir().unwrap();
    let log = write(dir.path(), "00000000000000000000.log", &seg);
    let log = files(&[&log]);
    let out = same_as_kafka(&["--files", &log, "--print-data-log"]);
    assert_eq!(out.matches("isvalid: true").count(), 5, "{out}");
    same_as_kafka(&[
        "--files",
        &log,
        "--deep-iteration",
        "--skip-record-metadata",
    ]);
}
