//! The shared broker's own files: segments its producers filled (Java's and ours, every codec,
//! keys and headers), transactions with aborts and their markers, rolled segments with producer
//! snapshots, `__consumer_offsets` with classic, consumer-protocol and share groups,
//! `__transaction_state`, `__share_group_state` and `__cluster_metadata` with its snapshots.
//!
//! The broker keeps writing some of these (other tests share it), so each test first copies
//! what it dumps; both tools then read the same copy.

use std::path::{Path, PathBuf};

use super::{available, files, same_as_kafka};
use crate::common::broker::{
    self, CONSOLE_CONSUMER, java_create_topic, java_ok, java_produce, java_tool,
};
use crate::common::text;

/// Copies the broker's directory `name` (a partition) into `to`; the copy's path.
fn copy_partition(name: &str, to: &Path) -> PathBuf {
    let from = broker::try_log_dir().expect("a broker").join(name);
    let dest = to.join(name);
    std::fs::create_dir_all(&dest).unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, dest.join(path.file_name().unwrap())).unwrap();
        }
    }
    dest
}

/// The segment files of a copied partition with these suffixes, sorted.
fn segment_files(dir: &Path, suffixes: &[&str]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            suffixes.iter().any(|s| name.ends_with(s))
        })
        .collect();
    out.sort();
    out
}

fn all(paths: &[PathBuf]) -> String {
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    files(&refs)
}

/// The broker's partitions of `topic` (an internal topic) that hold data.
fn non_empty_partitions(topic: &str) -> Vec<String> {
    let dir = broker::try_log_dir().expect("a broker");
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.strip_prefix(topic).is_some_and(|p| p.starts_with('-')))
        .filter(|n| {
            let log = broker::try_log_dir()
                .unwrap()
                .join(n)
                .join("00000000000000000000.log");
            std::fs::metadata(log).is_ok_and(|m| m.len() > 0)
        })
        .collect();
    out.sort();
    out
}

/// Java's producer: each codec, keys and headers; then ours, each codec.
fn produce_every_way(topic: &str) {
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let lines = [
            format!("h1:v1,h2:v2\tk-{codec}\tjava {codec} é"),
            "h3:\tk2\tsecond".to_string(),
        ];
        let props = [
            "--compression-codec",
            codec,
            "--reader-property",
            "parse.key=true",
            "--reader-property",
            "parse.headers=true",
        ];
        java_produce(topic, &lines, &props);
        let out = broker::run(
            "kafka-console-producer",
            &["--topic", topic, "--compression-codec", codec],
            Some(format!("ours {codec}\nmore\n").as_bytes()),
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
}

#[test]
fn broker_segments_groups_and_transactions_dump_as_kafkas_do() {
    if !available() {
        return;
    }
    let (topic, copied) = (
        broker::unique_topic("dl-src"),
        broker::unique_topic("dl-txn"),
    );
    java_create_topic(&topic, 1);
    java_create_topic(&copied, 1);
    produce_every_way(&topic);
    // A classic group (our consumer) and a consumer-protocol group (Java's) commit offsets.
    let group = format!("{topic}-classic");
    let out = broker::run(
        "kafka-console-consumer",
        &[
            "--topic",
            &topic,
            "--group",
            &group,
            "--from-beginning",
            "--max-messages",
            "20",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    java_ok(
        CONSOLE_CONSUMER,
        &[
            "--topic",
            &topic,
            "--group",
            &format!("{topic}-new"),
            "--from-beginning",
            "--max-messages",
            "20",
            "--timeout-ms",
            "30000",
            "--consumer-property",
            "group.protocol=consumer",
        ],
    );
    // Transactions, some aborted: markers in the output, entries in its .txnindex.
    let bootstrap = broker::bootstrap();
    let out = java_tool(
        "org.apache.kafka.tools.TransactionalMessageCopier",
        &[
            "--broker-list",
            &bootstrap,
            "--input-topic",
            &topic,
            "--input-partition",
            "0",
            "--output-topic",
            &copied,
            "--transactional-id",
            &copied,
            "--transaction-size",
            "3",
            "--enable-random-aborts",
            "--consumer-group",
            &copied,
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = tempfile::tempdir().unwrap();
    let src = copy_partition(&format!("{topic}-0"), dir.path());
    let segs = all(&segment_files(&src, &[".log", ".index", ".timeindex"]));
    same_as_kafka(&["--files", &segs]);
    let out = same_as_kafka(&["--files", &segs, "--print-data-log"]);
    assert!(out.contains("key: k-zstd payload: java zstd é"), "{out}");
    let txn = copy_partition(&format!("{copied}-0"), dir.path());
    let txn_files = all(&segment_files(&txn, &[".log", ".txnindex"]));
    let out = same_as_kafka(&["--files", &txn_files, "--print-data-log"]);
    assert!(out.contains("endTxnMarker: COMMIT"), "{out}");
    let offsets = copy_partition("__consumer_offsets-0", dir.path());
    let offsets = all(&segment_files(&offsets, &[".log"]));
    let out = same_as_kafka(&["--files", &offsets, "--offsets-decoder"]);
    assert!(out.contains(&format!("\"group\":\"{group}\"")), "{out}");
    same_as_kafka(&["--files", &offsets, "--print-data-log"]);
    for partition in non_empty_partitions("__transaction_state") {
        let state = copy_partition(&partition, dir.path());
        let state = all(&segment_files(&state, &[".log"]));
        same_as_kafka(&["--files", &state, "--transaction-log-decoder"]);
    }
}

#[test]
fn rolled_segments_snapshots_and_cluster_metadata_dump_as_kafkas_do() {
    if !available() {
        return;
    }
    let topic = broker::unique_topic("dl-roll");
    let out = broker::java_topics(&[
        "--create",
        "--topic",
        &topic,
        "--partitions",
        "1",
        "--config",
        "segment.ms=300",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // A segment rolls at the first append after segment.ms: each roll writes a snapshot.
    for burst in 0..3 {
        java_produce(&topic, &[format!("a{burst}"), format!("b{burst}")], &[]);
        std::thread::sleep(std::time::Duration::from_millis(700));
    }
    let dir = tempfile::tempdir().unwrap();
    let part = copy_partition(&format!("{topic}-0"), dir.path());
    let snapshots = segment_files(&part, &[".snapshot"]);
    assert!(
        !snapshots.is_empty(),
        "no producer snapshot in {}",
        part.display()
    );
    let everything = all(&segment_files(
        &part,
        &[".log", ".index", ".timeindex", ".snapshot"],
    ));
    let out = same_as_kafka(&["--files", &everything, "--deep-iteration"]);
    assert!(out.contains("producerId: "), "{out}");
    same_as_kafka(&["--files", &everything, "--verify-index-only"]);
    same_as_kafka(&["--files", &everything, "--index-sanity-check"]);
    let metadata = copy_partition("__cluster_metadata-0", dir.path());
    let logs = all(&segment_files(&metadata, &[".log", ".checkpoint"]));
    let out = same_as_kafka(&["--files", &logs, "--deep-iteration"]);
    assert!(out.contains("KRaftVoters {"), "{out}");
    let out = same_as_kafka(&["--files", &logs, "--cluster-metadata-decoder"]);
    assert!(out.contains("\"type\":\"TOPIC_RECORD\""), "{out}");
    let bootstrap = broker::try_log_dir().unwrap().join("bootstrap.checkpoint");
    std::fs::copy(&bootstrap, dir.path().join("bootstrap.checkpoint")).unwrap();
    let bootstrap = dir.path().join("bootstrap.checkpoint");
    same_as_kafka(&[
        "--files",
        &files(&[&bootstrap]),
        "--cluster-metadata-decoder",
    ]);
}

#[test]
fn share_group_state_dumps_as_kafkas_does() {
    if !available() {
        return;
    }
    let topic = broker::unique_topic("dl-share");
    java_create_topic(&topic, 1);
    java_produce(&topic, &["one", "two", "three"], &[]);
    let group = format!("{topic}-share");
    let bootstrap = broker::bootstrap();
    let out = java_tool(
        "kafka.admin.ConfigCommand",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--alter",
            "--entity-type",
            "groups",
            "--entity-name",
            &group,
            "--add-config",
            "share.auto.offset.reset=earliest",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = java_tool(
        "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--topic",
            &topic,
            "--group",
            &group,
            "--max-messages",
            "3",
            "--timeout-ms",
            "30000",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = tempfile::tempdir().unwrap();
    let partitions = non_empty_partitions("__share_group_state");
    assert!(!partitions.is_empty(), "no share group state was written");
    for partition in partitions {
        let state = copy_partition(&partition, dir.path());
        let state = all(&segment_files(&state, &[".log"]));
        same_as_kafka(&["--files", &state, "--share-group-state-decoder"]);
    }
    let offsets = copy_partition("__consumer_offsets-0", dir.path());
    let offsets = all(&segment_files(&offsets, &[".log"]));
    let out = same_as_kafka(&["--files", &offsets, "--offsets-decoder"]);
    assert!(out.contains(&format!("\"groupId\":\"{group}\"")), "{out}");
}
