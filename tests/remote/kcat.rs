//! Interop with an independent client, kcat (librdkafka), against the real broker: kcat reads
//! what our producer wrote and we read what kcat wrote, in every codec, keys and headers included.
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracles (see `tests/served/main.rs`).

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::broker::{self, create_topic};
use crate::common::sorted;

/// kcat, or `None` (loudly) where it is not installed; CI installs it and requires it.
fn kcat() -> Option<&'static str> {
    let found = Command::new("kcat")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("KAFKIT_REQUIRE_BROKER").is_none(),
            "kcat is required when KAFKIT_REQUIRE_BROKER=1 (apt-get install kcat)"
        );
        eprintln!("SKIPPED: kcat is not installed");
        return None;
    }
    Some("kcat")
}

#[test]
fn kcat_reads_ours_and_we_read_kcats_in_every_codec() {
    let Some(kcat) = kcat() else { return };
    if broker::try_bootstrap().is_none() {
        return;
    }
    let bootstrap = broker::bootstrap();
    let expected: Vec<String> = (0..50).map(|i| format!("k{i}|v{i}|h=x{i}")).collect();
    let mut expected_sorted = expected.clone();
    expected_sorted.sort();
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        // Ours -> kcat.
        let topic = broker::unique_topic(&format!("kcat-in-{codec}"));
        create_topic(&topic, 2);
        let input: String = (0..50).map(|i| format!("h:x{i}\tk{i}\tv{i}\n")).collect();
        let out = broker::kafkit("kafka-console-producer")
            .args(["--topic", &topic, "--compression-codec", codec])
            .args([
                "--reader-property",
                "parse.key=true",
                "--reader-property",
                "parse.headers=true",
            ])
            .write_stdin(input)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{codec}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = Command::new(kcat)
            .args([
                "-C",
                "-b",
                &bootstrap,
                "-t",
                &topic,
                "-o",
                "beginning",
                "-e",
                "-q",
            ])
            .args(["-f", "%k|%s|%h\n"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{codec}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            sorted(&String::from_utf8_lossy(&out.stdout)),
            expected_sorted,
            "{codec}: kcat reads ours"
        );

        // kcat -> ours.
        let topic = broker::unique_topic(&format!("kcat-out-{codec}"));
        create_topic(&topic, 2);
        let mut child = Command::new(kcat)
            .args([
                "-P", "-b", &bootstrap, "-t", &topic, "-K", ":", "-H", "h=fixed", "-z", codec,
            ])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        {
            let mut stdin = child.stdin.take().unwrap();
            for i in 0..50 {
                writeln!(stdin, "k{i}:v{i}").unwrap();
            }
        }
        let status = child.wait_with_output().unwrap();
        assert!(
            status.status.success(),
            "{codec}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
        let out = broker::kafkit("kafka-console-consumer")
            .args(["--topic", &topic, "--from-beginning", "--until-end"])
            .args([
                "--formatter-property",
                "print.key=true",
                "--formatter-property",
                "key.separator=|",
            ])
            .args(["--formatter-property", "print.headers=true"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{codec}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want: Vec<String> = {
            let mut v: Vec<String> = (0..50).map(|i| format!("h:fixed|k{i}|v{i}")).collect();
            v.sort();
            v
        };
        assert_eq!(
            sorted(&String::from_utf8_lossy(&out.stdout)),
            want,
            "{codec}: we read kcat's"
        );
    }
}
