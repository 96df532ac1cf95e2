//! Compacted topics through the server: its cleaner thread cleans what clients that are not
//! ours (kcat) write, while they write, and keyless records are refused with Kafka's error.

use std::time::Duration;

use crate::clients::kcat;
use crate::common::server::{Server, wait_until};
use crate::common::{Kafkit, text};

#[test]
fn the_servers_cleaner_keeps_each_keys_last_record() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &["log.cleaner.backoff.ms=100"]);
    let b = server.bootstrap.as_str();
    k.ok(
        "kafka-topics",
        &[
            "--bootstrap-server",
            b,
            "--create",
            "--topic",
            "c",
            "--partitions",
            "1",
            "--config",
            "cleanup.policy=compact",
            "--config",
            "segment.ms=100",
            "--config",
            "min.cleanable.dirty.ratio=0.01",
        ],
        None,
    );
    // Each round is appended more than segment.ms after the one before, so it rolls.
    for round in 0..4 {
        let input: String = (0..50).map(|i| format!("k{i}:r{round}\n")).collect();
        kcat(
            &["-P", "-b", b, "-t", "c", "-K:", "-X", "acks=all"],
            Some(&input),
        );
        std::thread::sleep(Duration::from_millis(150));
    }
    kcat(&["-P", "-b", b, "-t", "c", "-K:"], Some("last:roll\n"));
    let read = || {
        kcat(
            &[
                "-C",
                "-b",
                b,
                "-t",
                "c",
                "-e",
                "-o",
                "beginning",
                "-f",
                "%o %k=%s\n",
            ],
            None,
        )
    };
    let expected: String = (0..50)
        .map(|i| format!("{} k{i}=r3\n", 150 + i))
        .chain(["200 last=roll\n".to_string()])
        .collect();
    wait_until(
        Duration::from_secs(30),
        || read() == expected,
        || {
            format!(
                "read {}\nserver log: {:?}",
                read(),
                server.log.lock().unwrap()
            )
        },
    );
    assert!(
        server
            .log
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("Cleaned c-0 up to offset 200")),
        "{:?}",
        server.log.lock().unwrap()
    );
    // The same through the directory, while the server runs.
    let local = k.consume("c", 51, &["--property", "print.offset=true"]);
    assert!(local.starts_with("Offset:150\tr3\n"), "{local}");

    // A record without a key is refused, and nothing of its batch is stored.
    let out = k.run(
        "kafka-console-producer",
        &["--bootstrap-server", b, "--topic", "c"],
        Some(b"keyless\n"),
    );
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Compacted topic cannot accept message without key in topic partition c-0"),
        "{stderr}"
    );
    // A refusal is a clear answer: nothing of the batch may have been written.
    assert!(
        stderr.contains("(0 of them sent without a clear answer"),
        "{stderr}"
    );
    assert_eq!(
        k.ok(
            "kafka-get-offsets",
            &["--bootstrap-server", b, "--topic", "c"],
            None
        ),
        "c:0:201\n"
    );
}
