//! Transactions through the server, with producers that are not ours: Kafka's Java producer
//! (kafka-clients 4.3.1, `tests/server/apps/TxnClient.java`), librdkafka (confluent-kafka,
//! `tests/server/clients/transactions.py`) and a Kafka Streams 4.3.1 word count with
//! `exactly_once_v2`. What they commit is read with `read_committed` by Java, by our consumer
//! through the server and by our consumer on the directory itself; what they abort is not.
//! kill -9 of the server at any moment leaves every transaction whole or absent.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::apps::{Jvm, apps, create_topic, server_tail, wait_for, words};
use crate::common::server::Server;
use crate::common::{DefaultSignals, Kafkit, closed_port, text};
use crate::languages::{clients, scripts};

/// Runs TxnClient to its end; its stdout.
fn txn_client(apps: &Path, work: &Path, name: &str, args: &[&str]) -> String {
    let mut jvm = Jvm::start(apps, work, name, "TxnClient", args);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(Some(status)) = jvm.child.try_wait() {
            assert!(
                status.success(),
                "{name} failed ({status})\n{}",
                jvm.report()
            );
            return jvm.stdout();
        }
        assert!(
            Instant::now() < deadline,
            "{name} did not end\n{}",
            jvm.report()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every value of `topic` up to its end, `read_committed`, sorted; through the server when
/// `bootstrap` is given, else from the directory.
fn committed(k: &Kafkit, bootstrap: Option<&str>, topic: &str) -> Vec<String> {
    let mut args = vec!["--topic", topic, "--from-beginning", "--until-end"];
    args.extend(["--isolation-level", "read_committed"]);
    if let Some(b) = bootstrap {
        args.extend(["--bootstrap-server", b]);
    }
    let mut values: Vec<String> = k
        .ok("kafka-console-consumer", &args, None)
        .lines()
        .map(str::to_string)
        .collect();
    values.sort();
    values
}

/// 200 transactions of Java's producer over three partitions of one topic and one of
/// another, every other one aborted, each with the offset of a group: `read_committed`
/// readers (Java's, ours through the server, ours on the directory) see exactly the records
/// of the 100 committed ones, and the group's offset is the last committed transaction's.
#[test]
fn java_transactions_commit_and_abort_across_topics_with_offsets() {
    let Some(apps) = apps() else { return };
    let k = Kafkit::new();
    let work = tempfile::tempdir().unwrap();
    let server = Server::start(k.log_dir(), &[]);
    create_topic(&k, &server, "ta", 3);
    create_topic(&k, &server, "tb", 1);
    let b = server.bootstrap.as_str();
    let out = txn_client(
        apps,
        work.path(),
        "producer",
        &["produce", b, "java-tx", "200", "ta", "tb", "txg"],
    );
    assert_eq!(out, "done\n", "{}", server_tail(&server));

    let mut expected: Vec<String> = (0..200)
        .step_by(2)
        .flat_map(|round| (0..4).map(move |n| format!("c-{round}-{n}")))
        .collect();
    expected.sort();
    let java = txn_client(
        apps,
        work.path(),
        "consumer",
        &["consume", b, "400", "ta", "tb"],
    );
    assert_eq!(java.lines().collect::<Vec<_>>(), expected);
    let mut ours = committed(&k, Some(b), "ta");
    ours.extend(committed(&k, Some(b), "tb"));
    ours.sort();
    assert_eq!(ours, expected);
    let mut local = committed(&k, None, "ta");
    local.extend(committed(&k, None, "tb"));
    local.sort();
    assert_eq!(local, expected);
    // Uncommitted reads see the aborted records Java did send.
    let all = k.ok(
        "kafka-console-consumer",
        &["--topic", "tb", "--from-beginning", "--until-end"],
        None,
    );
    assert!(all.lines().any(|l| l.starts_with("a-")), "{all}");
    // The offset of the last committed transaction (round 198 commits 199).
    let groups = k.ok(
        "kafka-consumer-groups",
        &["--describe", "--group", "txg"],
        None,
    );
    assert!(
        groups
            .lines()
            .any(|l| l.split_whitespace().take(4).collect::<Vec<_>>() == ["txg", "ta", "0", "199"]),
        "{groups}"
    );
}

/// A second producer with the same transactional id fences the first: the first one's commit
/// fails as fenced, its open transaction is aborted, and the second one's record is committed.
#[test]
fn a_new_producer_with_the_same_transactional_id_fences_the_old_one() {
    let Some(apps) = apps() else { return };
    let k = Kafkit::new();
    let work = tempfile::tempdir().unwrap();
    let server = Server::start(k.log_dir(), &[]);
    create_topic(&k, &server, "tz", 1);
    let out = txn_client(
        apps,
        work.path(),
        "zombie",
        &["zombie", &server.bootstrap, "zombie-tx", "tz"],
    );
    assert_eq!(out, "fenced\n", "{}", server_tail(&server));
    assert_eq!(committed(&k, None, "tz"), ["fresh"]);
    let all = k.consume("tz", 2, &[]);
    assert_eq!(all, "zombie\nfresh\n");
}

/// Starts transactions.py (librdkafka) for `count` transactions (-1: until stopped).
fn rdkafka(bootstrap: &str, id: &str, topic: &str, prefix: &str, count: i32) -> Child {
    rdkafka_with(bootstrap, id, topic, prefix, &[&count.to_string()])
}

fn rdkafka_with(bootstrap: &str, id: &str, topic: &str, prefix: &str, rest: &[&str]) -> Child {
    Command::new(clients().join("venv/bin/python"))
        .default_signals()
        .arg(scripts().join("transactions.py"))
        .args([bootstrap, id, topic, prefix])
        .args(rest)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the clients' python runs")
}

/// What transactions.py's lines say: transaction number -> committed.
fn outcomes(stdout: &str) -> BTreeMap<u32, bool> {
    stdout
        .lines()
        .filter_map(|l| {
            let (what, n) = l.split_once(' ')?;
            Some((n.parse().ok()?, what == "committed"))
        })
        .collect()
}

#[test]
fn librdkafka_transactions_commit_and_abort() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "rd", "--partitions", "3"],
        None,
    );
    let out = rdkafka(&server.bootstrap, "rd-tx", "rd", "rd", 30)
        .wait_with_output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stderr),
        server.stderr()
    );
    let done = outcomes(&text(&out.stdout));
    assert_eq!(done.len(), 30);
    let mut expected: Vec<String> = done
        .iter()
        .filter(|(_, committed)| **committed)
        .flat_map(|(n, _)| (0..3).map(move |p| format!("rd-t{n}-p{p}")))
        .collect();
    expected.sort();
    assert_eq!(expected.len(), 60);
    assert_eq!(committed(&k, Some(&server.bootstrap), "rd"), expected);
    assert_eq!(committed(&k, None, "rd"), expected);
}

/// kill -9 of the server at a random moment of a stream of librdkafka transactions, 20
/// times: after each restart the next producer of the same transactional id fences the
/// transaction left open, and in the end every transaction is in a `read_committed` read with
/// all three of its records or with none, and every one the server said it committed is there.
#[test]
fn kill_9_mid_transactions_leaves_each_whole_or_absent() {
    let k = Kafkit::new();
    let address = format!("127.0.0.1:{}", closed_port());
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "kill", "--partitions", "3"],
        None,
    );
    let mut acknowledged = Vec::new();
    for round in 0..20 {
        let mut server = Server::process_on(k.log_dir(), &address, &[]);
        let prefix = format!("r{round}");
        let mut producer = rdkafka(&server.bootstrap, "kill-tx", "kill", &prefix, -1);
        std::thread::sleep(Duration::from_millis(300 + rand::random::<u64>() % 600));
        server.child().kill().unwrap();
        server.child().wait().unwrap();
        let _ = producer.kill();
        let out = producer.wait_with_output().unwrap();
        for (n, committed) in outcomes(&text(&out.stdout)) {
            if committed {
                acknowledged.push(format!("{prefix}-t{n}"));
            }
        }
    }
    // A last producer of the id ends what the last kill left open.
    let server = Server::process_on(k.log_dir(), &address, &[]);
    let out = rdkafka(&server.bootstrap, "kill-tx", "kill", "end", 1)
        .wait_with_output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    drop(server);
    let values = committed(&k, None, "kill");
    let mut per_transaction: BTreeMap<String, usize> = BTreeMap::new();
    for v in &values {
        let (transaction, _) = v.rsplit_once('-').expect("PREFIX-tN-pK");
        *per_transaction.entry(transaction.to_string()).or_default() += 1;
    }
    let torn: Vec<_> = per_transaction.iter().filter(|(_, n)| **n != 3).collect();
    assert!(torn.is_empty(), "transactions read in part: {torn:?}");
    let lost: Vec<_> = acknowledged
        .iter()
        .filter(|t| !per_transaction.contains_key(*t))
        .collect();
    assert!(lost.is_empty(), "committed but not read: {lost:?}");
    assert!(
        acknowledged.len() >= 20,
        "too few transactions committed to show anything: {acknowledged:?}"
    );
}

/// The word count's exactly-once settings: commits every 200 ms, every update sent (no cache).
const EXACTLY_ONCE: [&str; 3] = [
    "processing.guarantee=exactly_once_v2",
    "commit.interval.ms=200",
    "statestore.cache.max.bytes=0",
];

/// Kafka Streams 4.3.1 word count with `exactly_once_v2` through the server, which is killed
/// with SIGKILL mid-run and started again on the same port: the application recovers, and a
/// `read_committed` read of its output has each word's counts 1, 2, 3, ... in order, none twice
/// and none missing, up to the number of times the word was fed.
#[test]
fn kafka_streams_exactly_once_survives_a_server_kill() {
    let Some(apps) = apps() else { return };
    let k = Kafkit::new();
    let work = tempfile::tempdir().unwrap();
    let address = format!("127.0.0.1:{}", closed_port());
    let mut server = Server::process_on(k.log_dir(), &address, &[]);
    create_topic(&k, &server, "lines", 2);
    create_topic(&k, &server, "counts", 2);
    let state = work.path().join("state");
    let mut args = vec![
        server.bootstrap.as_str(),
        "eos",
        state.to_str().unwrap(),
        "lines",
        "counts",
    ];
    args.extend_from_slice(&EXACTLY_ONCE);
    let mut app = Jvm::start(apps, work.path(), "eos", "WordCount", &args);
    wait_for(|| {
        app.assert_running("before it was RUNNING");
        match app.stdout().contains("-> RUNNING") {
            true => Ok(()),
            false => Err(format!("not RUNNING\n{}", app.report())),
        }
    });
    let mut fed: BTreeMap<String, i64> = BTreeMap::new();
    let mut feed = |k: &Kafkit, bootstrap: &str, lines: &[String]| {
        for w in lines.iter().flat_map(|l| words(l)) {
            *fed.entry(w).or_default() += 1;
        }
        let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
        k.ok(
            "kafka-console-producer",
            &["--bootstrap-server", bootstrap, "--topic", "lines"],
            Some(input.as_bytes()),
        );
    };
    let batch = |n: usize| -> Vec<String> {
        (0..20)
            .map(|i| format!("w{} w{} shared", (n * 20 + i) % 7, i % 3))
            .collect()
    };
    for n in 0..5 {
        feed(&k, &server.bootstrap, &batch(n));
        std::thread::sleep(Duration::from_millis(150));
    }
    server.child().kill().unwrap();
    server.child().wait().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let server = Server::process_on(k.log_dir(), &address, &[]);
    for n in 5..10 {
        feed(&k, &server.bootstrap, &batch(n));
    }
    let expected = fed.clone();
    let counts = || -> BTreeMap<String, Vec<i64>> {
        let out = k.ok(
            "kafka-console-consumer",
            &[
                "--bootstrap-server",
                &server.bootstrap,
                "--topic",
                "counts",
                "--from-beginning",
                "--until-end",
                "--isolation-level",
                "read_committed",
                "--formatter-property",
                "print.key=true",
                "--value-deserializer",
                "org.apache.kafka.common.serialization.LongDeserializer",
            ],
            None,
        );
        let mut seen: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for l in out.lines() {
            if let Some((w, c)) = l.split_once('\t') {
                seen.entry(w.to_string())
                    .or_default()
                    .push(c.parse().unwrap());
            }
        }
        seen
    };
    let seen = wait_for(|| {
        app.assert_running("after the server was killed");
        let seen = counts();
        let last: BTreeMap<String, i64> = seen
            .iter()
            .map(|(w, c)| (w.clone(), *c.last().unwrap()))
            .collect();
        match last == expected {
            true => Ok(seen),
            false => Err(format!(
                "latest counts {last:?}, fed {expected:?}\n{}\n{}",
                app.report(),
                server_tail(&server)
            )),
        }
    });
    for (word, counts) in &seen {
        let want: Vec<i64> = (1..=expected[word]).collect();
        assert_eq!(
            counts,
            &want,
            "the counts of {word} have duplicates or gaps\n{}",
            app.report()
        );
    }
    app.stop();
}

/// Java's `kafka-transactions` (TransactionsCommand) against the server: it lists and
/// describes a transaction left open by a producer that died, shows its producer on each
/// partition with the offset its transaction starts at, and `abort --start-offset` ends it on
/// one partition (which `read_committed` readers then pass) but not on the others.
#[test]
fn java_kafka_transactions_describes_and_aborts_an_open_transaction() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "hang", "--partitions", "3"],
        None,
    );
    let out = rdkafka_with(b, "hang-tx", "hang", "h", &["2", "hang"])
        .wait_with_output()
        .unwrap();
    assert_eq!(
        text(&out.stdout),
        "committed 0\ncommitted 1\nopen 2\n",
        "{}",
        text(&out.stderr)
    );
    let java = |args: &[&str]| -> String {
        let mut all = vec!["--bootstrap-server", b];
        all.extend_from_slice(args);
        let out =
            crate::common::broker::java_tool("org.apache.kafka.tools.TransactionsCommand", &all);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    let cells = |line: &str| -> Vec<String> {
        line.split('\t')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()
    };
    let list = java(&["list"]);
    let rows: Vec<Vec<String>> = list.lines().map(cells).collect();
    assert_eq!(
        rows[0],
        [
            "TransactionalId",
            "Coordinator",
            "ProducerId",
            "TransactionState"
        ]
    );
    assert_eq!(rows.len(), 2, "{list}");
    assert_eq!(
        (rows[1][0].as_str(), rows[1][3].as_str()),
        ("hang-tx", "Ongoing")
    );
    let producer_id = rows[1][2].clone();
    let describe = java(&["describe", "--transactional-id", "hang-tx"]);
    let row = cells(describe.lines().nth(1).unwrap_or_default());
    assert_eq!(
        row[1..5],
        ["hang-tx", producer_id.as_str(), "0", "Ongoing"],
        "{describe}"
    );
    assert_eq!(row[5], "60000", "{describe}");
    // Java prints them in its hash set's order.
    let mut partitions: Vec<&str> = row.last().unwrap().split(',').collect();
    partitions.sort();
    assert_eq!(partitions, ["hang-0", "hang-1", "hang-2"], "{describe}");
    // Partition 0 holds transactions 0 and 1 (a record and a marker each), then the open one.
    let producers = java(&["describe-producers", "--topic", "hang", "--partition", "0"]);
    let row = cells(producers.lines().nth(1).unwrap_or_default());
    assert_eq!(row[0], producer_id, "{producers}");
    assert_eq!(row.last().unwrap(), "4", "{producers}");
    assert_eq!(committed(&k, None, "hang").len(), 6);
    java(&[
        "abort",
        "--topic",
        "hang",
        "--partition",
        "0",
        "--start-offset",
        "4",
    ]);
    // Partition 0's open transaction is aborted: its record stays unread and later records
    // are readable; partitions 1 and 2 still wait for theirs.
    let kcat = Command::new("kcat")
        .args(["-P", "-b", b, "-t", "hang", "-p", "0"])
        .stdin(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(b"after\n")?;
            c.wait()
        })
        .expect("kcat runs");
    assert!(kcat.success());
    let read = |p: &str| {
        k.ok(
            "kafka-console-consumer",
            &[
                "--topic",
                "hang",
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
    assert_eq!(read("0"), "h-t0-p0\nh-t1-p0\nafter\n");
    assert_eq!(read("1"), "h-t0-p1\nh-t1-p1\n");
    let producers = java(&["describe-producers", "--topic", "hang", "--partition", "0"]);
    let row = cells(producers.lines().nth(1).unwrap_or_default());
    assert_eq!(row.last().unwrap(), "None", "{producers}");
}

/// `kafka-transactions --log-dir` on a directory a server left with a transaction open (its
/// producer died): `list`, `describe` and `describe-producers` show it as Kafka's tool does,
/// `abort --start-offset` ends it on one partition, and `forceTerminateTransaction` ends it
/// everywhere else, fencing the id (two epochs up, as Kafka's coordinator leaves it). While a
/// server serves the directory, changes are refused and pointed at the server.
#[test]
fn kafka_transactions_on_the_directory_aborts_and_fences() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "left", "--partitions", "3"],
        None,
    );
    let out = rdkafka_with(&server.bootstrap, "left-tx", "left", "l", &["1", "hang"])
        .wait_with_output()
        .unwrap();
    assert_eq!(
        text(&out.stdout),
        "committed 0\nopen 1\n",
        "{}",
        text(&out.stderr)
    );
    let refused = k.run(
        "kafka-transactions",
        &["forceTerminateTransaction", "--transactionalId", "left-tx"],
        None,
    );
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).contains("kafka-server-start is serving"),
        "{}",
        text(&refused.stderr)
    );
    drop(server);

    let cells = |line: &str| -> Vec<String> {
        line.split('\t')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()
    };
    let list = k.ok("kafka-transactions", &["list"], None);
    let row = cells(list.lines().nth(1).unwrap_or_default());
    assert_eq!(
        (row[0].as_str(), row[1].as_str(), row[3].as_str()),
        ("left-tx", "0", "Ongoing")
    );
    let producer_id = row[2].clone();
    let describe = k.ok(
        "kafka-transactions",
        &["describe", "--transactional-id", "left-tx"],
        None,
    );
    let row = cells(describe.lines().nth(1).unwrap_or_default());
    assert_eq!(
        row[..5],
        ["0", "left-tx", producer_id.as_str(), "0", "Ongoing"]
    );
    assert_eq!(row.last().unwrap(), "left-0,left-1,left-2", "{describe}");
    let producers = k.ok(
        "kafka-transactions",
        &["describe-producers", "--topic", "left", "--partition", "0"],
        None,
    );
    assert_eq!(
        cells(producers.lines().next().unwrap()),
        [
            "ProducerId",
            "ProducerEpoch",
            "LatestCoordinatorEpoch",
            "LastSequence",
            "LastTimestamp",
            "CurrentTransactionStartOffset"
        ]
    );
    let row = cells(producers.lines().nth(1).unwrap_or_default());
    assert_eq!(
        (row[0].as_str(), row[5].as_str()),
        (producer_id.as_str(), "2")
    );

    let read = |p: &str| {
        k.ok(
            "kafka-console-consumer",
            &[
                "--topic",
                "left",
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
    let missing = k.run(
        "kafka-transactions",
        &[
            "abort",
            "--topic",
            "left",
            "--partition",
            "0",
            "--start-offset",
            "1",
        ],
        None,
    );
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        text(&missing.stderr),
        "Could not find any open transactions starting at offset 1 on partition left-0\n"
    );
    k.ok(
        "kafka-transactions",
        &[
            "abort",
            "--topic",
            "left",
            "--partition",
            "0",
            "--start-offset",
            "2",
        ],
        None,
    );
    assert_eq!(read("0"), "l-t0-p0\n");
    let producers = k.ok(
        "kafka-transactions",
        &["describe-producers", "--topic", "left", "--partition", "0"],
        None,
    );
    assert_eq!(
        cells(producers.lines().nth(1).unwrap()).last().unwrap(),
        "None"
    );

    k.ok(
        "kafka-transactions",
        &["forceTerminateTransaction", "--transactionalId", "left-tx"],
        None,
    );
    let describe = k.ok(
        "kafka-transactions",
        &["describe", "--transactional-id", "left-tx"],
        None,
    );
    let row = cells(describe.lines().nth(1).unwrap_or_default());
    assert_eq!(
        row[..7],
        [
            "0",
            "left-tx",
            producer_id.as_str(),
            "2",
            "Empty",
            "30000",
            "None"
        ]
    );
    assert_eq!(
        committed(&k, None, "left"),
        ["l-t0-p0", "l-t0-p1", "l-t0-p2"]
    );
    // Nothing is left open: every partition reads to its end.
    let end = k.ok("kafka-get-offsets", &["--topic", "left"], None);
    for p in ["1", "2"] {
        assert_eq!(read(p), format!("l-t0-p{p}\n"), "{end}");
    }
}

/// A transaction whose producer died is aborted by the server once its
/// `transaction.timeout.ms` has passed, fencing the id: `read_committed` readers then pass it.
#[test]
fn a_transaction_left_open_is_aborted_at_its_timeout() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "late", "--partitions", "3"],
        None,
    );
    let out = rdkafka_with(
        &server.bootstrap,
        "late-tx",
        "late",
        "t",
        &["1", "hang", "1500"],
    )
    .wait_with_output()
    .unwrap();
    assert_eq!(
        text(&out.stdout),
        "committed 0\nopen 1\n",
        "{}",
        text(&out.stderr)
    );
    let describe = || {
        k.ok(
            "kafka-transactions",
            &[
                "--bootstrap-server",
                &server.bootstrap,
                "describe",
                "--transactional-id",
                "late-tx",
            ],
            None,
        )
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !describe().contains("CompleteAbort") {
        assert!(
            Instant::now() < deadline,
            "{}\n{}",
            describe(),
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let row: Vec<String> = describe()
        .lines()
        .nth(1)
        .unwrap()
        .split('\t')
        .map(|c| c.trim().to_string())
        .collect();
    // Fenced: one epoch up.
    assert_eq!(row[3], "1", "{row:?}");
    assert_eq!(
        committed(&k, None, "late"),
        ["t-t0-p0", "t-t0-p1", "t-t0-p2"]
    );
    assert!(
        server
            .stderr()
            .contains("stayed open past its transaction.timeout.ms")
    );
}
