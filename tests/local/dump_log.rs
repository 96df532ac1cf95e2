//! `kafka-dump-log` on the embedded log's files, without Java: what it prints of our producer's
//! segments, that it writes nothing (a read-only log dir dumps fine), and its answers to bad
//! invocations (Kafka's messages; `tests/remote/dump_log` checks them against Kafka's tool).

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{Kafkit, text};

const TOOL: &str = "kafka-dump-log";

/// A topic `t` with one batch per codec, keyed with headers.
fn written() -> Kafkit {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let args = [
            "--compression-codec",
            codec,
            "--property",
            "parse.key=true",
            "--property",
            "parse.headers=true",
        ];
        k.produce("t", &args, format!("h:1\tk\t{codec}\n").as_bytes());
    }
    k
}

fn segment(k: &Kafkit, suffix: &str) -> String {
    k.path(&format!("t-0/00000000000000000000{suffix}"))
        .to_string_lossy()
        .into_owned()
}

#[test]
fn prints_batches_and_records_of_every_codec() {
    let k = written();
    let log = segment(&k, ".log");
    let out = k.ok(TOOL, &["--files", &log, "--print-data-log"], None);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("Dumping {log}"));
    assert_eq!(lines[1], "Log starting offset: 0");
    for (i, codec) in ["none", "gzip", "snappy", "lz4", "zstd"].iter().enumerate() {
        let batch = lines[2 + 2 * i];
        assert!(
            batch.starts_with(&format!(
                "baseOffset: {i} lastOffset: {i} count: 1 baseSequence: -1 lastSequence: -1 \
                 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false \
                 isControl: false deleteHorizonMs: OptionalLong.empty position: "
            )),
            "{batch}"
        );
        assert!(
            batch.contains(&format!("magic: 2 compresscodec: {codec} crc: ")),
            "{batch}"
        );
        assert!(batch.ends_with(" isvalid: true"), "{batch}");
        let record = lines[3 + 2 * i];
        assert!(
            record.starts_with(&format!("| offset: {i} CreateTime: ")),
            "{record}"
        );
        assert!(
            record.ends_with(&format!(
                "keySize: 1 valueSize: {} sequence: -1 headerKeys: [h] key: k payload: {codec}",
                codec.len()
            )),
            "{record}"
        );
    }
    assert_eq!(lines.len(), 12, "{out}");
}

/// Makes every file and directory under `dir` read-only (or writable again).
fn set_read_only(dir: &Path, read_only: bool) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            set_read_only(&path, read_only);
        }
        let mode = match (path.is_dir(), read_only) {
            (true, true) => 0o555,
            (true, false) => 0o755,
            (false, true) => 0o444,
            (false, false) => 0o644,
        };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

#[test]
fn writes_nothing_and_reads_a_read_only_log_dir() {
    let k = written();
    let before = k.files();
    set_read_only(k.log_dir(), true);
    let files = [".log", ".index", ".timeindex"]
        .map(|s| segment(&k, s))
        .join(",");
    let out = k.run(TOOL, &["--files", &files, "--deep-iteration"], None);
    let index_sanity = k.run(TOOL, &["--files", &files, "--index-sanity-check"], None);
    set_read_only(k.log_dir(), false);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        index_sanity.status.success(),
        "{}",
        text(&index_sanity.stderr)
    );
    assert!(text(&index_sanity.stdout).contains(".timeindex passed sanity check."));
    assert_eq!(k.files(), before, "kafka-dump-log changed the log dir");
}

#[test]
fn bad_invocations_have_kafkas_messages() {
    let k = written();
    let log = segment(&k, ".log");
    let dir = k.path("t-0");
    let missing = dir.join("00000000000000000099.log");
    let missing = missing.to_str().unwrap();
    let odd = dir.join("segment.log");
    std::fs::write(&odd, b"").unwrap();
    let odd = odd.to_str().unwrap();
    // (arguments, exit code, stdout, first line of stderr)
    let cases: Vec<(Vec<&str>, i32, String, String)> = vec![
        (
            vec!["--deep-iteration"],
            2,
            String::new(),
            "Missing required argument \"[files]\" (see kafka-dump-log --help)".into(),
        ),
        (
            vec!["--files"],
            2,
            String::new(),
            "Option files requires an argument (see kafka-dump-log --help)".into(),
        ),
        (
            vec!["--files", &log, "--bogus"],
            2,
            String::new(),
            "bogus is not a recognized option (see kafka-dump-log --help)".into(),
        ),
        (
            vec!["--files", missing],
            1,
            format!("Dumping {missing}\nLog starting offset: 99\n"),
            format!("Exception in thread \"main\" java.nio.file.NoSuchFileException: {missing}"),
        ),
        (
            vec!["--files", odd],
            1,
            format!("Dumping {odd}\n"),
            "Exception in thread \"main\" java.lang.NumberFormatException: For input string: \
             \"segment\""
                .into(),
        ),
        (
            vec!["--files", "notes.txt"],
            0,
            "Dumping notes.txt\n".into(),
            "Ignoring unknown file notes.txt".into(),
        ),
        (
            vec!["--files", &log, "--max-bytes", "lots"],
            2,
            format!("Dumping {log}\n"),
            "Cannot parse argument 'lots' of option max-bytes (see kafka-dump-log --help)".into(),
        ),
        (
            vec!["--files", &log, "--value-decoder-class", "com.example.Nope"],
            1,
            format!("Dumping {log}\n"),
            "Exception in thread \"main\" java.lang.RuntimeException: Failed to load decoder \
             class"
                .into(),
        ),
        (
            vec!["--files", &log, "--remote-log-metadata-decoder"],
            2,
            format!("Dumping {log}\n"),
            "--remote-log-metadata-decoder is not supported by kafkit (Kafka prints Java objects \
             there); use --print-data-log (see kafka-dump-log --help)"
                .into(),
        ),
    ];
    for (args, code, stdout, stderr) in cases {
        let out = k.run(TOOL, &args, None);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), stdout, "{args:?}");
        let err = text(&out.stderr);
        assert_eq!(err.lines().next().unwrap_or_default(), stderr, "{args:?}");
        assert_eq!(err.lines().count(), 1, "one line on stderr: {err}");
    }
}

#[test]
fn damage_is_reported_as_kafka_reports_it() {
    let k = written();
    let log = std::fs::read(segment(&k, ".log")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let torn = dir.path().join("00000000000000000000.log");
    std::fs::write(&torn, &log[..log.len() - 10]).unwrap();
    let torn = torn.to_str().unwrap();
    let out = k.ok(TOOL, &["--files", torn], None);
    let mut whole = kafkit::record::BatchIter::new(&log[..log.len() - 10]);
    for batch in whole.by_ref() {
        batch.unwrap();
    }
    let trailing = log.len() - 10 - whole.position();
    assert_eq!(
        out.lines().last().unwrap(),
        format!("Found {trailing} invalid bytes at the end of 00000000000000000000.log"),
        "{out}"
    );
    let zeros = dir.path().join("00000000000000000005.log");
    let mut padded = log.clone();
    padded.extend([0u8; 64]);
    std::fs::write(&zeros, &padded).unwrap();
    let zeros = zeros.to_str().unwrap();
    let err = k.fails(TOOL, &["--files", zeros], None, 1);
    assert_eq!(
        err.trim_end(),
        format!(
            "Exception in thread \"main\" org.apache.kafka.common.errors.CorruptRecordException: \
             Found record size 0 smaller than minimum record overhead (14) in file {zeros}."
        )
    );
}
