//! A partition the cleaner has compacted, marked by its `cleaner-checkpoint`, has gaps in its
//! offsets: inside batches (records removed), between batches (batches removed) and between
//! segments, and empty batches that keep a producer's or a round's last offset. The tools read
//! it as Kafka's read a compacted log, skipping the gaps; the same files without the mark are
//! damage, since a log that was never compacted has dense offsets.

use std::process::{Command as StdCommand, Stdio};
use std::time::Instant;

use crate::common::{Kafkit, text};

use kafkit::record::{
    BatchBuilder, BatchHeader, Compression, empty_batch, rewrite_batch, set_partition_leader_epoch,
};

/// A dense batch at `base`, one record per key, each valued `v<offset>`, with the leader epoch
/// this log writes (0).
fn batch(base: i64, keys: &[&str]) -> Vec<u8> {
    // Now: older records would go by the topic's retention.ms.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let mut b = BatchBuilder::new(Compression::None);
    for (i, key) in keys.iter().enumerate() {
        let value = format!("v{}", base + i as i64);
        b.append(now, Some(key.as_bytes()), Some(value.as_bytes()), &[]);
    }
    let mut out = b.build(base).unwrap();
    set_partition_leader_epoch(&mut out, 0);
    out
}

/// `original` with only the records at `keep`, as the cleaner writes it.
fn keeping(original: &[u8], keep: &[i64]) -> Vec<u8> {
    let mut out = Vec::new();
    rewrite_batch(original, None, &mut Vec::new(), &mut out, |r| {
        keep.contains(&r.offset)
    })
    .unwrap();
    out
}

/// Topic `t` (one partition) as a cleaning would leave it: in the closed segment 0, offsets 1
/// and 3 of batch 0..=3, an empty batch 4..=5, nothing at 6 and 7, then 8 and 9; the closed
/// segment 12 (10 and 11 gone with their segment) holding 12; and the active segment 13
/// holding 13 and 14, as written. Marked compacted when `marked`.
fn compacted_topic(marked: bool) -> Kafkit {
    let k = Kafkit::new();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "t", "--partitions", "1"],
        None,
    );
    let dir = k.path("t-0");
    let mut first = keeping(&batch(0, &["a", "b", "a", "c"]), &[1, 3]);
    first.extend(empty_batch(
        &BatchHeader::parse(&batch(4, &["a", "b"])).unwrap(),
    ));
    first.extend(batch(8, &["a", "d"]));
    std::fs::write(dir.join("00000000000000000000.log"), first).unwrap();
    std::fs::write(dir.join("00000000000000000012.log"), batch(12, &["e"])).unwrap();
    std::fs::write(dir.join("00000000000000000013.log"), batch(13, &["f", "g"])).unwrap();
    for name in [
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
    ] {
        let _ = std::fs::remove_file(dir.join(name));
    }
    if marked {
        std::fs::write(dir.join("cleaner-checkpoint"), "0\n13\n").unwrap();
    }
    k
}

#[test]
fn consumers_skip_the_gaps_of_a_compacted_log() {
    let k = compacted_topic(true);
    let out = k.consume(
        "t",
        6,
        &[
            "--property",
            "print.offset=true",
            "--property",
            "print.key=true",
        ],
    );
    assert_eq!(
        out,
        "Offset:1\tb\tv1\nOffset:3\tc\tv3\nOffset:8\ta\tv8\nOffset:9\td\tv9\nOffset:12\te\tv12\nOffset:13\tf\tv13\n"
    );
    // From an offset inside a gap, reading starts at the next record there is.
    let out = k.ok(
        "kafka-console-consumer",
        &[
            "--topic",
            "t",
            "--partition",
            "0",
            "--offset",
            "5",
            "--max-messages",
            "2",
            "--timeout-ms",
            "5000",
            "--property",
            "print.offset=true",
        ],
        None,
    );
    assert_eq!(out, "Offset:8\tv8\nOffset:9\tv9\n");
}

#[test]
fn offsets_and_dumps_of_a_compacted_log() {
    let k = compacted_topic(true);
    assert_eq!(
        k.ok("kafka-get-offsets", &["--topic", "t"], None),
        "t:0:15\n"
    );
    assert_eq!(
        k.ok("kafka-get-offsets", &["--topic", "t", "--time", "-2"], None),
        "t:0:0\n"
    );
    let segment = k.path("t-0/00000000000000000000.log");
    let dump = k.ok(
        "kafka-dump-log",
        &["--files", segment.to_str().unwrap(), "--print-data-log"],
        None,
    );
    assert!(
        dump.contains("baseOffset: 0 lastOffset: 3 count: 2"),
        "{dump}"
    );
    assert!(
        dump.contains("baseOffset: 4 lastOffset: 5 count: 0"),
        "{dump}"
    );
    assert!(dump.contains("| offset: 3 "), "{dump}");
}

#[test]
fn the_same_gaps_in_a_log_never_compacted_are_damage() {
    let k = compacted_topic(false);
    let out = k.run(
        "kafka-console-consumer",
        &[
            "--topic",
            "t",
            "--from-beginning",
            "--max-messages",
            "6",
            "--timeout-ms",
            "5000",
        ],
        None,
    );
    assert!(!out.status.success(), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("00000000000000000000.log"), "{stderr}");
    assert!(
        stderr.contains("base offset 8 where 6 was expected"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A compacted topic made with the tools: each producer run rolls a segment (`segment.ms`),
/// and its exit cleans what is dirty; readers then get each key's last value at its offset,
/// tombstones included until their horizon, and keyless records are refused with Kafka's text.
#[test]
fn producers_clean_a_compacted_topic_as_they_exit() {
    let k = Kafkit::new();
    k.create_compacted("c", &["segment.ms=100", "min.cleanable.dirty.ratio=0.01"]);
    let keyed = [
        "--property",
        "parse.key=true",
        "--property",
        "null.marker=NULL",
    ];
    for (round, input) in ["a\t1\nb\t1\nc\t1\n", "a\t2\nb\tNULL\n", "c\t3\n", "d\t4\n"]
        .iter()
        .enumerate()
    {
        if round > 0 {
            // The next append rolls the segment: it is more than segment.ms younger.
            std::thread::sleep(std::time::Duration::from_millis(150));
        }
        k.produce("c", &keyed, input.as_bytes());
    }
    let out = k.consume(
        "c",
        4,
        &[
            "--property",
            "print.offset=true",
            "--property",
            "print.key=true",
        ],
    );
    assert_eq!(
        out,
        "Offset:3\ta\t2\nOffset:4\tb\tnull\nOffset:5\tc\t3\nOffset:6\td\t4\n"
    );
    assert_eq!(
        k.ok("kafka-get-offsets", &["--topic", "c"], None),
        "c:0:7\n"
    );
    assert_eq!(
        std::fs::read_to_string(k.path("c-0/cleaner-checkpoint")).unwrap(),
        "0\n6\n"
    );

    let stderr = k.fails(
        "kafka-console-producer",
        &["--topic", "c"],
        Some(b"no key\n"),
        1,
    );
    assert!(
        stderr.contains(
            "line 1: Compacted topic cannot accept message without key in topic partition c-0"
        ),
        "{stderr}"
    );
    assert_eq!(
        k.ok("kafka-get-offsets", &["--topic", "c"], None),
        "c:0:7\n"
    );

    let describe = k.ok("kafka-topics", &["--describe", "--topic", "c"], None);
    assert!(describe.contains("cleanup.policy=compact"), "{describe}");

    // A log that only compacts has no records deleted from its start, as Kafka's broker
    // refuses it.
    let offsets = k.path("offsets.json");
    std::fs::write(
        &offsets,
        r#"{"partitions":[{"topic":"c","partition":0,"offset":4}],"version":1}"#,
    )
    .unwrap();
    let out = k.run(
        "kafka-delete-records",
        &["--offset-json-file", offsets.to_str().unwrap()],
        None,
    );
    assert!(
        text(&out.stdout).contains(
            "partition: c-0\terror: org.apache.kafka.common.errors.PolicyViolationException: Records of partition c-0 can not be deleted due to the configured policy"
        ),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        k.ok("kafka-get-offsets", &["--topic", "c", "--time", "-2"], None),
        "c:0:0\n"
    );
}

/// Every record from the start of topic `c`, as (offset, key, value), in the order read.
fn read_compacted(k: &Kafkit) -> Vec<(i64, String, String)> {
    let out = k.ok(
        "kafka-console-consumer",
        &[
            "--topic",
            "c",
            "--from-beginning",
            "--until-end",
            "--property",
            "print.offset=true",
            "--property",
            "print.key=true",
        ],
        None,
    );
    out.lines()
        .map(|l| {
            let mut f = l.splitn(3, '\t');
            let offset = f.next().unwrap().strip_prefix("Offset:").unwrap();
            (
                offset.parse().unwrap(),
                f.next().unwrap().to_string(),
                f.next().unwrap().to_string(),
            )
        })
        .collect()
}

/// kill -9 at random moments of cleaning runs (a `kafka-configs --alter` cleans the topic):
/// after each, the next command settles any swap the kill interrupted, every key's latest
/// value is still there, offsets are read once each and in order, and no half-written file
/// is left.
#[test]
fn kill_9_during_cleaning_loses_and_duplicates_nothing() {
    use std::collections::BTreeMap;
    let k = Kafkit::new();
    // Only the alters below clean: the producers' own rounds would leave the kills little to
    // interrupt.
    k.create_compacted(
        "c",
        &["segment.bytes=1048576", "min.cleanable.dirty.ratio=0.99"],
    );
    let keyed = ["--property", "parse.key=true"];
    let mut latest: BTreeMap<String, String> = BTreeMap::new();
    let produce = |k: &Kafkit, round: usize, latest: &mut BTreeMap<String, String>| {
        let pad = "x".repeat(80);
        let input: String = (0..20_000)
            .map(|i| {
                let key = format!("k{}", (i * 7 + round) % 1000);
                let value = format!("r{round}-{i}-{pad}");
                latest.insert(key.clone(), value.clone());
                format!("{key}\t{value}\n")
            })
            .collect();
        k.produce("c", &keyed, input.as_bytes());
    };
    let alter = |ratio: usize| {
        let ratio = format!("min.cleanable.dirty.ratio=0.{ratio:02}");
        StdCommand::new(assert_cmd::cargo::cargo_bin("kafka-configs"))
            .args(["--alter", "--entity-type", "topics", "--entity-name", "c"])
            .args(["--add-config", &ratio])
            .env("KAFKIT_LOG_DIR", k.log_dir())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    // How long a whole cleaning run takes here: the kills land within it. (The first
    // producer's exit cleans the new log; the alter cleans the second round.)
    produce(&k, 0, &mut latest);
    produce(&k, 1, &mut latest);
    // Empty while there is none: a producer's own round may not have finished in its 100 ms.
    let checkpoint =
        || std::fs::read_to_string(k.path("c-0/cleaner-checkpoint")).unwrap_or_default();
    let before = checkpoint();
    let started = Instant::now();
    assert!(alter(1).wait().unwrap().success());
    let full = started.elapsed();
    assert_ne!(checkpoint(), before, "the alter cleaned");
    let mut interrupted = 0;
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("kill -9 rounds: a whole run takes {full:?}; seed {seed}");
    for round in 2..=25 {
        produce(&k, round, &mut latest);
        let before = checkpoint();
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let delay = full.mul_f64((seed >> 11) as f64 / (1u64 << 53) as f64);
        let mut child = alter(round % 90 + 2);
        std::thread::sleep(delay);
        let _ = child.kill();
        child.wait().unwrap();
        if checkpoint() == before {
            interrupted += 1;
        }
        let records = read_compacted(&k);
        let mut last: BTreeMap<String, String> = BTreeMap::new();
        for pair in records.windows(2) {
            assert!(
                pair[0].0 < pair[1].0,
                "round {round}: offsets out of order or read twice: {pair:?}"
            );
        }
        for (_, key, value) in records {
            last.insert(key, value);
        }
        let wrong: Vec<&String> = latest
            .iter()
            .filter(|(key, value)| last.get(*key) != Some(value))
            .map(|(key, _)| key)
            .take(5)
            .collect();
        assert!(
            wrong.is_empty() && last.len() == latest.len(),
            "round {round} (killed after {delay:?}): {} keys read of {}, wrong or missing: {wrong:?}",
            last.len(),
            latest.len()
        );
        let leftovers: Vec<String> = std::fs::read_dir(k.path("c-0"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".swap") || n == "cleaner-swap")
            .collect();
        assert!(leftovers.is_empty(), "round {round}: {leftovers:?}");
    }
    assert!(
        interrupted >= 5,
        "only {interrupted} of 24 kills interrupted a run"
    );
    // A last run cleans it all: one record per key outside the active segment.
    assert!(alter(1).wait().unwrap().success());
    let records = read_compacted(&k);
    assert!(records.len() < 2 * 1000 + 20_000, "{}", records.len());
}
