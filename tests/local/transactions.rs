//! `kafka-transactions --log-dir`: what it says about a directory without transactions, a
//! transactional id it fences, and bad invocations (one line, non-zero, nothing changed). The
//! transactions written by real producers are tested through the server (`tests/server`).

use crate::common::{Kafkit, text};

const HEADER_LIST: &str = "TransactionalId\tCoordinator\tProducerId\tTransactionState\t\n";

#[test]
fn a_directory_without_transactions_lists_none() {
    let k = Kafkit::new();
    let version = k.ok("kafka-transactions", &["--version"], None);
    assert!(version.starts_with("4.3"), "{version}");
    assert_eq!(k.ok("kafka-transactions", &["list"], None), HEADER_LIST);
    // Options may also follow the command.
    let dir = k.log_dir().to_str().unwrap().to_string();
    assert_eq!(
        k.ok("kafka-transactions", &["list", "--log-dir", &dir], None),
        HEADER_LIST
    );
    let out = k.run(
        "kafka-transactions",
        &["describe", "--transactional-id", "nosuch"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "Failed to describe transaction state of transactional-id `nosuch`: DescribeTransactions request for transactionalId `nosuch` failed because the ID could not be found. Enable debug logging for additional detail.\n"
    );
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    assert_eq!(
        k.ok(
            "kafka-transactions",
            &["describe-producers", "--topic", "t", "--partition", "0"],
            None
        ),
        "ProducerId\tProducerEpoch\tLatestCoordinatorEpoch\tLastSequence\tLastTimestamp\tCurrentTransactionStartOffset\t\n"
    );
    assert_eq!(
        k.ok(
            "kafka-transactions",
            &["find-hanging", "--broker-id", "0"],
            None
        ),
        "Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\tLastTimestamp\tDuration(min)\t\n"
    );
}

/// As Kafka's coordinator, fencing an id it does not know creates it, and each fence moves its
/// epoch up.
#[test]
fn force_terminate_creates_and_then_fences_an_id() {
    let k = Kafkit::new();
    let fence = || {
        k.ok(
            "kafka-transactions",
            &["forceTerminateTransaction", "--transactionalId", "app-1"],
            None,
        )
    };
    assert_eq!(fence(), "");
    let epoch = || {
        let out = k.ok(
            "kafka-transactions",
            &["describe", "--transactional-id", "app-1"],
            None,
        );
        let row: Vec<String> = out
            .lines()
            .nth(1)
            .unwrap()
            .split('\t')
            .map(|c| c.trim().to_string())
            .collect();
        assert_eq!(row[4..8], ["Empty", "30000", "None", "None"], "{out}");
        row[3].clone()
    };
    assert_eq!(epoch(), "0");
    fence();
    assert_eq!(epoch(), "1");
    let list = k.ok("kafka-transactions", &["list"], None);
    assert!(
        list.lines().nth(1).is_some_and(|l| l.starts_with("app-1 ")),
        "{list}"
    );
}

#[test]
fn bad_invocations_fail_with_one_line_and_change_nothing() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    let cases: &[(&[&str], i32, &str)] = &[
        (&["frob"], 2, "frob"),
        (&["describe"], 2, "--transactional-id"),
        (&["describe-producers", "--topic", "t"], 2, "--partition"),
        (
            &["describe-producers", "--topic", "t", "--partition", "x"],
            2,
            "argument --partition: could not convert 'x' to Integer",
        ),
        (
            &["abort", "--topic", "t", "--partition", "0"],
            2,
            "The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)",
        ),
        (
            &[
                "abort",
                "--topic",
                "t",
                "--partition",
                "0",
                "--producer-id",
                "5",
            ],
            2,
            "Missing required argument --producer-epoch",
        ),
        (
            &[
                "abort",
                "--topic",
                "t",
                "--partition",
                "0",
                "--start-offset",
                "0",
            ],
            1,
            "Could not find any open transactions starting at offset 0 on partition t-0",
        ),
        (
            &["find-hanging"],
            2,
            "The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search",
        ),
        (
            &["find-hanging", "--partition", "0"],
            2,
            "The `find-hanging` command requires either --topic or --broker-id",
        ),
        (
            &[
                "describe-producers",
                "--topic",
                "nosuch",
                "--partition",
                "0",
            ],
            1,
            "Failed to describe producers for partition nosuch-0 on leader: This server does not host this topic-partition.",
        ),
        (
            &["list", "--transactional-id-pattern", "("],
            1,
            "Failed to list transactions: the transactional id pattern '(' is not a regular expression",
        ),
        (
            &["list", "--duration-filter", "soon"],
            2,
            "could not convert 'soon' to Long",
        ),
        (&["--bootstrap-server", "nohost", "list"], 2, "host:port"),
        (&[], 2, ""),
        (&["--log-dir", "/nonexistent/x"], 2, "too few arguments"),
        (
            &["describe-producers", "--topic", "t", "--partition", "-1"],
            1,
            "Failed to describe producers for partition t--1 on leader",
        ),
    ];
    for (args, code, message) in cases {
        let out = k.run("kafka-transactions", args, None);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(text(&out.stdout), "", "{args:?}");
    }
    // Nothing was created.
    assert_eq!(k.ok("kafka-transactions", &["list"], None), HEADER_LIST);
    assert!(!k.log_dir().join("transactions").exists());
}

/// kill -9 of a transactional producer on the embedded log at random moments, fifteen times,
/// each run into a topic of its own under the same transactional id: every next run aborts
/// (or finishes committing) what the killed one left, so that a `read_committed` read of each
/// topic is exactly its records 0 to N-1 (whole transactions, in the order sent), never a
/// transaction in part.
#[test]
fn kill_9_of_a_transactional_producer_leaves_whole_transactions() {
    use std::process::{Command, Stdio};
    let k = Kafkit::new();
    let perf = |topic: &str, records: &str| {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("kafka-producer-perf-test"));
        cmd.args([
            "--topic",
            topic,
            "--num-records",
            records,
            "--payload-monotonic",
        ])
        .args(["--throughput", "20000", "--transactional-id", "killed"])
        .args([
            "--transaction-duration-ms",
            "15",
            "--reporting-interval",
            "100000",
        ])
        .env("KAFKIT_LOG_DIR", k.log_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        cmd
    };
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    for round in 0..15 {
        let topic = format!("k{round}");
        k.ok(
            "kafka-topics",
            &["--create", "--topic", &topic, "--partitions", "3"],
            None,
        );
        let mut child = perf(&topic, "100000").spawn().unwrap();
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        std::thread::sleep(std::time::Duration::from_millis(150 + (seed >> 33) % 500));
        let _ = child.kill();
        child.wait().unwrap();
    }
    // A last producer of the id ends what the last kill left open.
    k.ok("kafka-topics", &["--create", "--topic", "end"], None);
    assert!(perf("end", "1").status().unwrap().success());
    let mut committed_total = 0;
    for round in 0..15 {
        let topic = format!("k{round}");
        let read = k.ok(
            "kafka-console-consumer",
            &[
                "--topic",
                &topic,
                "--from-beginning",
                "--until-end",
                "--isolation-level",
                "read_committed",
            ],
            None,
        );
        let mut values: Vec<u64> = read.lines().map(|l| l.parse().unwrap()).collect();
        values.sort_unstable();
        let n = values.len() as u64;
        assert!(
            values.iter().copied().eq(0..n),
            "round {round}: the committed records are not 0 to {}: {:?}",
            n.saturating_sub(1),
            values.windows(2).find(|w| w[1] != w[0] + 1)
        );
        committed_total += n;
    }
    assert!(
        committed_total > 0,
        "no transaction was committed before a kill"
    );
}

/// The library's transactional producer on the embedded log, with a consumer group's offsets:
/// a committed transaction's records and offsets land together, an aborted one's neither.
#[test]
fn offsets_sent_in_a_transaction_commit_with_it() {
    use crate::common::producer::{send, transactional};
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    let mut producer = transactional(None, Some(k.log_dir()), "t", "lib-tx");
    producer.init_transactions().unwrap();
    producer.begin_transaction().unwrap();
    send(&mut producer, "kept");
    producer
        .send_offsets_to_transaction("g", &[(("t".to_string(), 0), 42)])
        .unwrap();
    producer.commit_transaction().unwrap();
    send(&mut producer, "dropped");
    producer
        .send_offsets_to_transaction("g", &[(("t".to_string(), 0), 50)])
        .unwrap();
    producer.abort_transaction().unwrap();
    producer.close().unwrap();
    let described = k.ok(
        "kafka-consumer-groups",
        &["--describe", "--group", "g"],
        None,
    );
    let row = described
        .lines()
        .find(|l| l.starts_with("g "))
        .unwrap_or_else(|| panic!("{described}"));
    assert_eq!(row.split_whitespace().nth(3), Some("42"), "{described}");
    let committed = k.ok(
        "kafka-console-consumer",
        &[
            "--topic",
            "t",
            "--from-beginning",
            "--until-end",
            "--isolation-level",
            "read_committed",
        ],
        None,
    );
    assert_eq!(committed, "kept\n");
}

/// A transaction whose producer was killed is aborted, once its `transaction.timeout.ms` has
/// passed, by the next transactional producer of another id on the directory (there is no
/// server to do it): `read_committed` readers then pass it.
#[test]
fn an_expired_transaction_is_aborted_by_the_next_transactional_producer() {
    use std::process::{Command, Stdio};
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "left"], None);
    let mut left = Command::new(assert_cmd::cargo::cargo_bin("kafka-producer-perf-test"))
        .args([
            "--topic",
            "left",
            "--num-records",
            "1000000",
            "--record-size",
            "10",
        ])
        .args(["--throughput", "1000", "--transactional-id", "gone"])
        .args(["--transaction-duration-ms", "100000"])
        .args(["--command-property", "transaction.timeout.ms=1000"])
        .env("KAFKIT_LOG_DIR", k.log_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let describe = || {
        k.ok(
            "kafka-transactions",
            &["describe", "--transactional-id", "gone"],
            None,
        )
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !k
        .run(
            "kafka-transactions",
            &["describe", "--transactional-id", "gone"],
            None,
        )
        .status
        .success()
        || !describe().contains("Ongoing")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the transaction did not open"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let _ = left.kill();
    left.wait().unwrap();
    let end = || k.ok("kafka-get-offsets", &["--topic", "left"], None);
    let written = end();
    assert_ne!(written, "left:0:0\n");
    // Past the timeout, another id's producer starts.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    k.ok("kafka-topics", &["--create", "--topic", "other"], None);
    k.ok(
        "kafka-producer-perf-test",
        &[
            "--topic",
            "other",
            "--num-records",
            "1",
            "--record-size",
            "1",
            "--throughput",
            "-1",
            "--transactional-id",
            "next",
        ],
        None,
    );
    let row: Vec<String> = describe()
        .lines()
        .nth(1)
        .unwrap()
        .split('\t')
        .map(|c| c.trim().to_string())
        .collect();
    assert_eq!(row[3..5], ["1", "CompleteAbort"], "{row:?}");
    // Nothing of it is read, and nothing holds readers back.
    assert_eq!(
        k.ok(
            "kafka-console-consumer",
            &[
                "--topic",
                "left",
                "--from-beginning",
                "--until-end",
                "--isolation-level",
                "read_committed"
            ],
            None,
        ),
        ""
    );
    assert_ne!(end(), written, "an ABORT marker was appended");
}
