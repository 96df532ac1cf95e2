//! `kafka-transactions --bootstrap-server` against a real Kafka 4.3.1 broker, with Kafka's
//! `TransactionsCommand` from the same jars as the oracle. librdkafka's transactional producer
//! (confluent-kafka, `tests/server/clients/transactions.py`) commits one transaction over three
//! partitions and leaves a second one open; both tools then describe the same state.
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracle (see `tests/served/main.rs`).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common::broker;
use crate::common::text;

const TRANSACTIONS_COMMAND: &str = "org.apache.kafka.tools.TransactionsCommand";

/// The clients' Python (with confluent-kafka), installed once per run by
/// `tests/server/clients/setup.sh`.
fn python() -> &'static PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let setup = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/server/clients/setup.sh");
        let out = Command::new("bash")
            .arg(&setup)
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "installing the clients failed (python3, npm and go are needed): {}",
            text(&out.stderr)
        );
        PathBuf::from(text(&out.stdout).trim()).join("venv/bin/python")
    })
}

/// One committed transaction over partitions 0-2 of `topic` (`p-t0-p<K>`), then a second one
/// (`p-t1-p<K>`) left open by a producer that exits.
fn commit_one_and_leave_one_open(bootstrap: &str, id: &str, topic: &str) {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/server/clients/transactions.py");
    let out = Command::new(python())
        .arg(script)
        .args([bootstrap, id, topic, "p", "1", "hang"])
        .stdin(Stdio::null())
        .output()
        .expect("python runs");
    assert_eq!(
        text(&out.stdout),
        "committed 0\nopen 1\n",
        "{}",
        text(&out.stderr)
    );
}

fn ours(args: &[&str]) -> String {
    broker::ok("kafka-transactions", args, None)
}

fn java(args: &[&str]) -> String {
    broker::java_ok(TRANSACTIONS_COMMAND, args)
}

/// A table's rows with every cell trimmed, the column at `skip` (a time) left out.
fn cells(table: &str, skip: Option<usize>) -> Vec<Vec<String>> {
    table
        .lines()
        .map(|l| {
            l.split('\t')
                .enumerate()
                .filter(|(i, _)| Some(*i) != skip)
                .map(|(_, c)| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn list_describe_producers_and_find_hanging_print_what_java_prints() {
    let Some(bootstrap) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("txn-tool");
    broker::java_create_topic(&topic, 3);
    let id = format!("{topic}-tx");
    commit_one_and_leave_one_open(&bootstrap, &id, &topic);

    let list = ["list", "--transactional-id-pattern", &id];
    let listed = ours(&list);
    assert_eq!(listed, java(&list));
    assert!(
        listed.lines().nth(1).is_some_and(|l| l.contains("Ongoing")),
        "{listed}"
    );

    // The same but the duration, which the clock moves between the two runs, and the order
    // of the partitions: Java prints its hash set's, kafkit sorts them.
    let describe = ["describe", "--transactional-id", &id];
    let described = ours(&describe);
    let sorted_partitions = |table: &str| {
        let mut rows = cells(table, Some(7));
        let mut partitions: Vec<&str> = rows[1][7].split(',').collect();
        partitions.sort();
        rows[1][7] = partitions.join(",");
        rows
    };
    assert_eq!(
        sorted_partitions(&described),
        sorted_partitions(&java(&describe))
    );
    assert_eq!(
        cells(&described, None)[1][8],
        (0..3)
            .map(|p| format!("{topic}-{p}"))
            .collect::<Vec<_>>()
            .join(",")
    );

    for p in ["0", "1", "2"] {
        let args = ["describe-producers", "--topic", &topic, "--partition", p];
        let producers = ours(&args);
        // Java's tool once (each run is a JVM start): the partitions are alike.
        if p == "0" {
            assert_eq!(producers, java(&args));
        }
        // Transaction 0 and its marker, then the open one at offset 2.
        assert!(
            producers.lines().nth(1).is_some_and(|l| l.contains("\t2 ")),
            "{producers}"
        );
    }

    // Open but not hanging: its coordinator knows the partitions are in it.
    let hanging = [
        "find-hanging",
        "--topic",
        &topic,
        "--max-transaction-timeout",
        "0",
    ];
    let found = ours(&hanging);
    assert_eq!(found, java(&hanging));
    assert_eq!(found.lines().count(), 1, "{found}");

    let describe_missing = broker::run(
        "kafka-transactions",
        &["describe", "--transactional-id", &format!("{id}-none")],
        None,
    );
    assert_eq!(describe_missing.status.code(), Some(1));
    assert_eq!(
        text(&describe_missing.stderr),
        format!(
            "Failed to describe transaction state of transactional-id `{id}-none`: DescribeTransactions request for transactionalId `{id}-none` failed because the ID could not be found. Enable debug logging for additional detail.\n"
        )
    );
}

/// `abort --start-offset` of ours ends the open transaction on one partition, whose
/// `read_committed` readers then go past it; `forceTerminateTransaction` ends it everywhere.
#[test]
fn abort_and_force_terminate_end_an_open_transaction() {
    let Some(bootstrap) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("txn-abort");
    broker::java_create_topic(&topic, 3);
    let id = format!("{topic}-tx");
    commit_one_and_leave_one_open(&bootstrap, &id, &topic);
    let read = |p: &str| {
        broker::ok(
            "kafka-console-consumer",
            &[
                "--topic",
                &topic,
                "--partition",
                p,
                "--offset",
                "earliest",
                "--until-end",
                "--isolation-level",
                "read_committed",
            ],
            None,
        )
    };
    ours(&[
        "abort",
        "--topic",
        &topic,
        "--partition",
        "0",
        "--start-offset",
        "2",
    ]);
    assert_eq!(read("0"), "p-t0-p0\n");
    let producers = ours(&["describe-producers", "--topic", &topic, "--partition", "0"]);
    assert!(
        producers
            .lines()
            .nth(1)
            .is_some_and(|l| l.trim_end().ends_with("None")),
        "{producers}"
    );

    ours(&["forceTerminateTransaction", "--transactionalId", &id]);
    // The coordinator writes its markers after answering: wait until it is done.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let described = java(&["describe", "--transactional-id", &id]);
        let state = cells(&described, None)[1][4].clone();
        if state == "Empty" || state == "CompleteAbort" {
            break;
        }
        assert!(Instant::now() < deadline, "{described}");
        std::thread::sleep(Duration::from_millis(200));
    }
    for p in ["1", "2"] {
        assert_eq!(read(p), format!("p-t0-p{p}\n"));
    }
}

/// The library's transactional producer with a consumer group's offsets
/// (`send_offsets_to_transaction`): a committed transaction's records and offsets land
/// together, an aborted one's neither.
#[test]
fn offsets_sent_in_a_transaction_commit_with_it() {
    use crate::common::producer::{send, transactional};
    let Some(bootstrap) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("txn-offsets");
    broker::java_create_topic(&topic, 1);
    let group = format!("{topic}-group");
    let mut producer = transactional(Some(&bootstrap), None, &topic, &format!("{topic}-tx"));
    send(&mut producer, "kept");
    producer
        .send_offsets_to_transaction(&group, &[((topic.clone(), 0), 42)])
        .unwrap();
    producer.commit_transaction().unwrap();
    send(&mut producer, "dropped");
    producer
        .send_offsets_to_transaction(&group, &[((topic.clone(), 0), 50)])
        .unwrap();
    producer.abort_transaction().unwrap();
    producer.close().unwrap();
    let described = broker::ok(
        "kafka-consumer-groups",
        &["--describe", "--group", &group],
        None,
    );
    let row = described
        .lines()
        .find(|l| l.contains(&topic))
        .unwrap_or_else(|| panic!("{described}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[3], "42", "{described}");
    let committed = broker::ok(
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
    assert_eq!(committed, "kept\n");
}
