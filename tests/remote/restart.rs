//! The console producer (and a group consumer) survive their broker restarting mid-stream: a long stream of numbered
//! lines is piped in slowly while the broker is killed (SIGKILL) and restarted on the same port,
//! then stopped cleanly and restarted again. The producer (acks=all, idempotent, the console
//! producer's defaults but a longer request timeout) must end with status 0, and reading the
//! topic back must give every line exactly once, in order within each partition.
//!
//! This test runs its own broker (`kafka-broker.sh start DIR` / `restart DIR`), not the shared
//! one. It cannot leak: a guard kills it on drop (a failed assertion included), and the script's
//! owner watcher (`KAFKIT_BROKER_OWNER`) kills it once this process is gone, however it ended.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::broker::{self, OwnBroker};
use crate::common::{DefaultSignals, signal, text, wait_for};

/// Lines produced; about 60 bytes each, so a 16 KiB batch fills every ~270 lines.
const LINES: usize = 200_000;
/// Lines written per chunk, and the pause between chunks (about 10 s of input in all when the
/// producer keeps up).
const CHUNK: usize = 2_000;
const PAUSE: Duration = Duration::from_millis(100);

fn line(i: usize) -> String {
    format!("{i:07} {}", "r".repeat(52))
}

#[test]
fn producer_survives_broker_kill_and_restart_without_loss_or_duplicates() {
    let Some(own) = OwnBroker::start("kafkit-restart-", "") else {
        return;
    };
    let bootstrap = own.bootstrap.clone();
    let topic = broker::unique_topic("restart");
    let out = broker::java_tool(
        broker::TOPIC_COMMAND,
        &[
            "--bootstrap-server",
            &bootstrap,
            "--create",
            "--topic",
            &topic,
            "--partitions",
            "3",
        ],
    );
    assert!(out.status.success(), "create: {}", text(&out.stderr));

    // Every setting at its default but one: the console producer's 1.5 s request timeout makes
    // a cold, just-restarted broker on a busy two-core machine look dead, and each timeout
    // costs one of the 3 retries, as in Kafka. The restarts themselves cost one retry each.
    let mut producer = Command::new(assert_cmd::cargo::cargo_bin("kafka-console-producer"))
        .args(["--bootstrap-server", &bootstrap, "--topic", &topic])
        .args(["--request-timeout-ms", "10000"])
        // Retries are a setting, not the point here: a slow CI machine may time out a request
        // to the just-restarted broker more often than the console's default of 3 allows.
        .args(["--message-send-max-retries", "10"])
        .env_remove("KAFKIT_LOG_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("producer starts");
    let mut stdin = producer.stdin.take().expect("stdin");
    let written = Arc::new(AtomicUsize::new(0));
    let feeder = {
        let written = Arc::clone(&written);
        std::thread::spawn(move || -> std::io::Result<()> {
            for start in (0..LINES).step_by(CHUNK) {
                let mut chunk = String::new();
                for i in start..(start + CHUNK).min(LINES) {
                    chunk.push_str(&line(i));
                    chunk.push('\n');
                }
                // Blocks while the producer waits for the broker: the pipe fills up.
                stdin.write_all(chunk.as_bytes())?;
                written.store((start + CHUNK).min(LINES), Ordering::SeqCst);
                std::thread::sleep(PAUSE);
            }
            Ok(())
        })
    };
    // Waits until the feeder has written `lines`; if the producer stops taking input (it ended,
    // or no progress for longer than delivery.timeout.ms), fails with what it said.
    let wait_for = |lines: usize, producer: &mut std::process::Child| {
        let deadline = Instant::now() + Duration::from_secs(180);
        while written.load(Ordering::SeqCst) < lines {
            let ended = producer.try_wait().expect("wait").is_some();
            if ended || Instant::now() >= deadline {
                let _ = producer.kill();
                let mut err = String::new();
                if let Some(mut stderr) = producer.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut stderr, &mut err);
                }
                panic!(
                    "the producer {} after {} of {lines} lines: {err}",
                    if ended {
                        "ended"
                    } else {
                        "stopped taking input"
                    },
                    written.load(Ordering::SeqCst)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };

    // Mid-stream: SIGKILL, back on the same port as soon as it can be.
    wait_for(LINES / 4, &mut producer);
    own.kill();
    own.restart();
    // Again later: a clean shutdown this time.
    wait_for(LINES * 5 / 8, &mut producer);
    own.stop();
    own.restart();

    let fed = feeder.join().expect("feeder thread");
    let out = producer.wait_with_output().expect("producer ends");
    assert!(
        out.status.success(),
        "the producer failed across the restarts: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    fed.expect("the producer took all input");

    // Read back with our consumer up to the end, with each record's partition.
    let read = Command::new(assert_cmd::cargo::cargo_bin("kafka-console-consumer"))
        .args([
            "--bootstrap-server",
            &bootstrap,
            "--topic",
            &topic,
            "--from-beginning",
            "--until-end",
            "--property",
            "print.partition=true",
        ])
        .env_remove("KAFKIT_LOG_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("consumer runs");
    assert!(read.status.success(), "consumer: {}", text(&read.stderr));
    let mut by_partition: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut seen = vec![0u32; LINES];
    for l in text(&read.stdout).lines() {
        let (partition, value) = l.split_once('\t').expect("Partition:N<TAB>value");
        let n: usize = value[..7].parse().expect("a numbered line");
        assert_eq!(value, line(n), "a record was altered");
        seen[n] += 1;
        by_partition
            .entry(partition.to_string())
            .or_default()
            .push(n);
    }
    let missing: Vec<usize> = (0..LINES).filter(|i| seen[*i] == 0).collect();
    let duplicated: Vec<usize> = (0..LINES).filter(|i| seen[*i] > 1).collect();
    assert!(
        missing.is_empty(),
        "{} lines lost, first {:?}",
        missing.len(),
        &missing[..missing.len().min(10)]
    );
    assert!(
        duplicated.is_empty(),
        "{} lines duplicated, first {:?}",
        duplicated.len(),
        &duplicated[..duplicated.len().min(10)]
    );
    for (partition, numbers) in &by_partition {
        assert!(
            numbers.windows(2).all(|w| w[0] < w[1]),
            "{partition}: records out of order"
        );
    }
    assert!(
        by_partition.len() > 1,
        "the lines went to one partition only: {:?}",
        by_partition.keys().collect::<Vec<_>>()
    );
}

/// Waits until `path` holds at least `n` lines (at most a minute).
fn wait_for_lines(path: &Path, n: usize) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got = std::fs::read_to_string(path).unwrap_or_default();
        if got.lines().count() >= n {
            return got;
        }
        assert!(
            Instant::now() < deadline,
            "only {} of {n} lines arrived",
            got.lines().count()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn group_consumer_waits_out_a_broker_restart() {
    let Some(own) = OwnBroker::start("kafkit-restart-", "") else {
        return;
    };
    let bootstrap = own.bootstrap.clone();
    let topic = broker::unique_topic("restart-consume");
    let produce = |from: usize, to: usize| {
        let input: String = (from..to).map(|i| format!("{i}\n")).collect();
        let out = Command::new(assert_cmd::cargo::cargo_bin("kafka-console-producer"))
            .args(["--bootstrap-server", &bootstrap, "--topic", &topic])
            .env_remove("KAFKIT_LOG_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                child
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(input.as_bytes())?;
                child.wait_with_output()
            })
            .expect("producer runs");
        assert!(out.status.success(), "produce: {}", text(&out.stderr));
    };
    let created = Command::new(assert_cmd::cargo::cargo_bin("kafka-topics"))
        .args([
            "--bootstrap-server",
            &bootstrap,
            "--create",
            "--topic",
            &topic,
        ])
        .args(["--partitions", "3"])
        .env_remove("KAFKIT_LOG_DIR")
        .output()
        .expect("kafka-topics runs");
    assert!(created.status.success(), "{}", text(&created.stderr));
    produce(0, 100);

    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out");
    let err_path = dir.path().join("err");
    let mut consumer = Command::new(assert_cmd::cargo::cargo_bin("kafka-console-consumer"))
        .default_signals()
        .args(["--bootstrap-server", &bootstrap, "--topic", &topic])
        .args(["--group", "restart-group", "--from-beginning"])
        .env_remove("KAFKIT_LOG_DIR")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("consumer starts");
    wait_for_lines(&out_path, 100);
    own.kill();
    // Down until the consumer noticed (its one warning), however long that takes.
    wait_for("the consumer's warning", || {
        std::fs::read_to_string(&err_path).is_ok_and(|e| e.contains("WARN: lost the cluster"))
    });
    own.restart();
    produce(100, 200);
    let got = wait_for_lines(&out_path, 200);
    signal(&consumer, "-INT");
    let ended = consumer.wait().unwrap();
    let err = std::fs::read_to_string(&err_path).unwrap();
    assert_eq!(ended.code(), Some(130), "{err}");
    let mut numbers: Vec<usize> = got.lines().map(|l| l.parse().unwrap()).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (0..200).collect::<Vec<_>>(), "each record once");
    // One warning for the outage, not one per retry; the last line is Kafka's count.
    assert_eq!(err.matches("WARN: lost the cluster").count(), 1, "{err}");
    assert!(
        err.ends_with("Processed a total of 200 messages\n"),
        "{err}"
    );
}

/// A broker killed after writing batches whose answers never arrived remembers, once restarted
/// from its unclean stop, only the last of them as a duplicate: the others, sent again, are
/// refused as out of order although they are in the log. The producer must find them there
/// and count them delivered, not fail (as Kafka's own producer does) and not write them twice.
/// The answers are lost on the way by a proxy that the broker advertises as its address.
#[test]
fn batches_written_but_unanswered_before_a_kill_are_delivered_once() {
    use crate::common::producer::{idempotent, send_alone};
    use crate::common::proxy::Proxy;

    let Some(own) = OwnBroker::start("kafkit-gap-", "") else {
        return;
    };
    let proxy = Proxy::start(&own.bootstrap);
    own.advertise(&proxy.addr);
    let topic = broker::unique_topic("gap");
    let out = broker::java_tool(
        broker::TOPIC_COMMAND,
        &[
            "--bootstrap-server",
            &own.bootstrap,
            "--create",
            "--topic",
            &topic,
            "--partitions",
            "1",
        ],
    );
    assert!(out.status.success(), "create: {}", text(&out.stderr));
    // Metadata names the proxy: every connection of the producer goes through it.
    let mut producer = idempotent(&proxy.addr, &topic);
    // One record per batch: three acknowledged, then five sent with their answers unread.
    let send = |producer: &mut kafkit::client::Producer, n: usize| {
        send_alone(producer, &format!("record {n}"));
    };
    for n in 0..3 {
        send(&mut producer, n);
    }
    producer.flush().expect("the first three are acknowledged");
    proxy.drop_answers(true);
    for n in 3..8 {
        send(&mut producer, n);
    }
    // The broker writes them in well under this; their answers are lost. No sign of the writes
    // reaches the test (every client connection goes through the proxy, which drops answers),
    // so this is a wait, but a safe one: a batch not yet written when the broker dies is sent
    // again and written then, and the checks below hold either way; the wait only makes the
    // case under test (written, unanswered) the likely one.
    std::thread::sleep(Duration::from_secs(2));
    own.kill();
    proxy.drop_answers(false);
    own.restart();
    producer
        .flush()
        .expect("the batches written before the kill count as delivered");
    producer.close().expect("close");

    let read = Command::new(assert_cmd::cargo::cargo_bin("kafka-console-consumer"))
        .args(["--bootstrap-server", &own.bootstrap, "--topic", &topic])
        .args(["--from-beginning", "--until-end"])
        .env_remove("KAFKIT_LOG_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("consumer runs");
    assert!(read.status.success(), "consumer: {}", text(&read.stderr));
    let expected: Vec<String> = (0..8).map(|n| format!("record {n}")).collect();
    assert_eq!(text(&read.stdout).lines().collect::<Vec<_>>(), expected);
}
