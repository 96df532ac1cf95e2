//! Segments our producer wrote to the embedded log: every codec, keys, headers, UTF-8 and
//! binary values, batches big enough for index entries.

use super::{available, files, same_as_kafka, snapshot};
use crate::common::Kafkit;

/// A partition written by our producer: each codec, keyed with headers and not.
fn written() -> Kafkit {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let keyed =
            format!("h1:v1,h2:v2\tk-{codec}\tvalue-{codec}-é\nh3:\tk2\tv2\nh4:x\t\tempty key\n");
        let args = [
            "--compression-codec",
            codec,
            "--property",
            "parse.key=true",
            "--property",
            "parse.headers=true",
        ];
        k.produce("t", &args, keyed.as_bytes());
        k.produce("t", &["--compression-codec", codec], b"x\n\ny\xff\xfe\n");
    }
    // Batches past the index interval (4096 bytes), so that the indexes have entries.
    for n in 0..4 {
        let big = format!("{}\n", char::from(b'a' + n).to_string().repeat(3000));
        k.produce("t", &[], big.repeat(2).as_bytes());
    }
    k
}

#[test]
fn our_segments_dump_as_kafkas_do() {
    if !available() {
        return;
    }
    let k = written();
    let dir = k.path("t-0");
    let seg = |suffix: &str| dir.join(format!("00000000000000000000{suffix}"));
    let (log, index, time) = (seg(".log"), seg(".index"), seg(".timeindex"));
    let all = files(&[&log, &index, &time]);
    let before = snapshot(k.log_dir());
    let shallow = same_as_kafka(&["--files", &all]);
    assert!(shallow.contains("compresscodec: zstd"), "{shallow}");
    assert!(
        shallow.contains("offset: "),
        "the index has entries: {shallow}"
    );
    let deep = same_as_kafka(&["--files", &all, "--print-data-log"]);
    assert!(deep.contains("headerKeys: [h1,h2] key: k-lz4 payload: value-lz4-é"));
    let log = files(&[&log]);
    for args in [
        &["--deep-iteration"][..],
        &["--print-data-log", "--skip-record-metadata"],
        &["--deep-iteration", "--skip-record-metadata"],
        &["--max-bytes", "500", "--print-data-log"],
        &["--key-decoder-class", "--print-data-log"],
        // Values shorter than eight bytes end the dump with Java's BufferUnderflowException.
        &[
            "--value-decoder-class",
            "org.apache.kafka.tools.api.LongDecoder",
        ],
    ] {
        let mut all_args = vec!["--files", log.as_str()];
        all_args.extend_from_slice(args);
        same_as_kafka(&all_args);
    }
    for args in [["--verify-index-only"], ["--index-sanity-check"]] {
        same_as_kafka(&["--files", &all, args[0]]);
    }
    // Offsets decoders on data that is not theirs: Kafka's per-record messages, then its
    // exception at the first record without a key.
    same_as_kafka(&["--files", &log, "--offsets-decoder"]);
    same_as_kafka(&["--files", &log, "--cluster-metadata-decoder"]);
    assert_eq!(snapshot(k.log_dir()), before, "a dump changes nothing");
}

#[test]
fn dumps_read_a_partition_while_a_writer_holds_its_lock() {
    if !available() {
        return;
    }
    let k = written();
    let dir = k.path("t-0");
    // The embedded log's writers lock `.lock` exclusively; a dump takes no lock at all.
    let lock = std::fs::File::open(dir.join(".lock")).unwrap();
    lock.lock().unwrap();
    let log = dir.join("00000000000000000000.log");
    same_as_kafka(&["--files", log.to_str().unwrap(), "--print-data-log"]);
}

/// A segment the cleaner wrote (records dropped from batches, a tombstone's batch with its
/// delete horizon, merged segments, rebuilt indexes) dumps as Kafka's DumpLogSegments dumps
/// it, and its indexes pass Kafka's checks.
#[test]
fn cleaned_segments_dump_as_kafkas_do() {
    if !available() {
        return;
    }
    let k = Kafkit::new();
    k.create_compacted("c", &["segment.ms=100", "min.cleanable.dirty.ratio=0.9"]);
    let keyed = [
        "--property",
        "parse.key=true",
        "--property",
        "null.marker=NULL",
    ];
    let big = "v".repeat(3000);
    for round in 0..3 {
        let input: String = (0..6)
            .map(|i| format!("k{i}\t{round}-{big}\n"))
            .chain(["solo\tNULL\n".to_string()])
            .collect();
        k.produce("c", &keyed, input.as_bytes());
        std::thread::sleep(std::time::Duration::from_millis(150));
    }
    k.produce("c", &keyed, b"last\troll\n");
    k.alter_topic("c", "min.cleanable.dirty.ratio=0.01");
    let dir = k.path("c-0");
    let seg = |suffix: &str| dir.join(format!("00000000000000000000{suffix}"));
    let (log, index, time) = (seg(".log"), seg(".index"), seg(".timeindex"));
    let all = files(&[&log, &index, &time]);
    let deep = same_as_kafka(&["--files", &all, "--print-data-log"]);
    assert!(deep.contains("deleteHorizonMs: OptionalLong["), "{deep}");
    assert!(deep.contains("offset: "), "the index has entries: {deep}");
    for args in [["--verify-index-only"], ["--index-sanity-check"]] {
        same_as_kafka(&["--files", &all, args[0]]);
    }
    same_as_kafka(&["--files", &files(&[&log]), "--deep-iteration"]);
}

/// A partition written by transactions on the embedded log (the library's transactional
/// producer: one committed, one aborted, one left open): its segment with the markers, its
/// `.txnindex` and its producer-state `.snapshot` dump as Kafka's DumpLogSegments dumps them.
#[test]
fn transactional_segments_and_state_dump_as_kafkas_do() {
    use crate::common::producer::{send, transactional};
    if !available() {
        return;
    }
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "tx"], None);
    let mut producer = transactional(None, Some(k.log_dir()), "tx", "dump-tx");
    send(&mut producer, "committed");
    producer.commit_transaction().unwrap();
    send(&mut producer, "aborted");
    producer.flush().unwrap();
    producer.abort_transaction().unwrap();
    send(&mut producer, "open");
    producer.flush().unwrap();
    drop(producer);
    let dir = k.path("tx-0");
    let mut state: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".snapshot") || p.ends_with(".txnindex"))
        .collect();
    state.sort();
    assert_eq!(state.len(), 2, "{state:?}");
    let log = dir.join("00000000000000000000.log").display().to_string();
    let shallow = same_as_kafka(&["--files", &log]);
    assert!(shallow.contains("isControl: true"), "{shallow}");
    same_as_kafka(&["--files", &log, "--print-data-log"]);
    for file in &state {
        same_as_kafka(&["--files", file]);
    }
}
