//! Bad invocations: where Kafka's tool throws, ours prints the exception's first line and exits
//! as it does; where Kafka's option parser refuses (jopt-simple), ours prints the same message
//! as a usage error (exit 2, as every kafkit tool).

use super::{available, java, ours, same_as_kafka};
use crate::common::text;

#[test]
fn runtime_failures_match_kafka() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("00000000000000000000.log");
    std::fs::write(&log, b"").unwrap();
    let log = log.to_str().unwrap();
    let missing = dir.path().join("00000000000000000007.log");
    let not_a_number = dir.path().join("segment.log");
    std::fs::write(&not_a_number, b"").unwrap();
    let cases: Vec<Vec<String>> = vec![
        vec!["--files".into(), missing.to_str().unwrap().into()],
        vec!["--files".into(), not_a_number.to_str().unwrap().into()],
        vec!["--files".into(), "notes.txt,README".into()],
        vec!["--files".into(), format!("{log},,")],
        vec![
            "--files".into(),
            log.into(),
            "--max-bytes".into(),
            "-1".into(),
        ],
        vec![
            "--files".into(),
            log.into(),
            "--value-decoder-class".into(),
            "com.example.Nope".into(),
        ],
        vec![
            "--files".into(),
            log.into(),
            "--max-message-size".into(),
            "x".into(),
        ],
        vec!["--files".into(), "00000000000000000000.snapshot".into()],
        vec!["--files".into(), "00000000000000000000.txnindex".into()],
    ];
    for args in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        same_as_kafka(&args);
    }
}

#[test]
fn usage_errors_have_kafkas_messages() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("00000000000000000000.log");
    std::fs::write(&log, b"").unwrap();
    let log = log.to_str().unwrap();
    for args in [
        &["--deep-iteration"][..],
        &["--files"],
        &["--files", log, "--no-such-option"],
        &["--files", log, "--files", log],
        &["--files", log, "--max-bytes", "many"],
    ] {
        let (kafka, kafkit) = (java(args), ours(args));
        assert_eq!(kafka.status.code(), Some(1), "{args:?}");
        assert_eq!(kafkit.status.code(), Some(2), "{args:?}");
        // jopt-simple's exception (or CommandLineUtils' first line), without the class.
        let expected = text(&kafka.stderr)
            .lines()
            .next()
            .unwrap_or_default()
            .rsplit("Exception: ")
            .next()
            .unwrap_or_default()
            .to_string();
        let ours = text(&kafkit.stderr);
        assert_eq!(
            ours.trim_end(),
            format!("{expected} (see kafka-dump-log --help)"),
            "{args:?}"
        );
        assert_eq!(text(&kafkit.stdout), text(&kafka.stdout), "{args:?}");
    }
}
