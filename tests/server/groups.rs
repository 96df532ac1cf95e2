//! The group coordinator: Java consumers, kcat -G and our own consumer in groups served by
//! `kafka-server-start`, with their offsets in the directory's group store, and the refusals
//! that keep networked and `--log-dir` consumers out of each other's groups.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::common::broker::{GROUP_COMMAND, java_tool};
use crate::common::server::{Background, Server, wait_until};
use crate::common::{Kafkit, committed, text};

fn kcat_produce(bootstrap: &str, topic: &str, lines: std::ops::Range<u32>) {
    use std::io::Write;
    let mut child = std::process::Command::new("kcat")
        .args([
            "-P",
            "-b",
            bootstrap,
            "-t",
            topic,
            "-X",
            "topic.partitioner=random",
        ])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("kcat is installed");
    let input: String = lines.map(|i| format!("r{i}\n")).collect();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

/// Every line the consumers printed, and whether any was printed twice.
fn union(consumers: &[&Background]) -> (BTreeSet<String>, usize) {
    let all: Vec<String> = consumers
        .iter()
        .flat_map(|c| {
            // The records only (the Java tool starts its output with an empty line).
            let out = c.stdout();
            let records: Vec<String> = out
                .lines()
                .filter(|l| l.starts_with('r'))
                .map(str::to_string)
                .collect();
            records
        })
        .collect();
    let set: BTreeSet<String> = all.iter().cloned().collect();
    (set.clone(), all.len() - set.len())
}

#[test]
fn three_java_consumers_split_six_partitions_and_rebalance_when_one_leaves() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "six", "--partitions", "6"],
        None,
    );
    kcat_produce(b, "six", 0..600);
    let dir = k.path("out");
    std::fs::create_dir_all(&dir).unwrap();
    let c: Vec<Background> = (0..3)
        .map(|i| Background::java_consumer(&dir, &format!("c{i}"), b, "six", "java"))
        .collect();
    let all: Vec<&Background> = c.iter().collect();
    // All three end up in the group, each with two partitions, and read everything once.
    let members = || {
        let out = java_tool(
            GROUP_COMMAND,
            &[
                "--bootstrap-server",
                b,
                "--describe",
                "--group",
                "java",
                "--members",
            ],
        );
        text(&out.stdout)
    };
    wait_until(
        Duration::from_secs(90),
        || {
            union(&all).0.len() == 600
                && members()
                    .lines()
                    .filter(|l| l.starts_with("java ") && l.split_whitespace().last() == Some("2"))
                    .count()
                    == 3
        },
        || {
            format!(
                "{} of 600: {} {}",
                union(&all).0.len(),
                members(),
                server.stderr()
            )
        },
    );
    assert_eq!(union(&all).1, 0, "a record was read twice");
    // One leaves (SIGTERM: the Java consumer commits and leaves the group); the other two
    // take its partitions over from its commit.
    c[0].signal("-TERM");
    kcat_produce(b, "six", 600..1200);
    wait_until(
        Duration::from_secs(60),
        || union(&all).0.len() == 1200,
        || format!("{} of 1200: {}", union(&all).0.len(), server.stderr()),
    );
    let (set, twice) = union(&all);
    assert_eq!(twice, 0, "a record was read twice");
    let expected: BTreeSet<String> = (0..1200).map(|i| format!("r{i}")).collect();
    assert_eq!(set, expected);
    assert!(
        server.stderr().contains("left group java"),
        "{}",
        server.stderr()
    );
}

#[test]
fn kcat_group_commits_are_what_the_log_dir_tools_show_and_the_reverse() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "kc", "--partitions", "2"],
        None,
    );
    kcat_produce(b, "kc", 0..50);
    let out = std::process::Command::new("kcat")
        .args([
            "-b",
            b,
            "-G",
            "kg",
            "kc",
            "-e",
            "-q",
            "-X",
            "auto.offset.reset=earliest",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 50);
    let offsets = committed(&k, "kg");
    assert_eq!(offsets.iter().map(|o| o.2).sum::<i64>(), 50, "{offsets:?}");
    // The reverse: a reset on the directory is what the server answers.
    k.ok(
        "kafka-consumer-groups",
        &[
            "--reset-offsets",
            "--group",
            "kg",
            "--topic",
            "kc",
            "--to-earliest",
            "--execute",
        ],
        None,
    );
    let java = java_tool(
        GROUP_COMMAND,
        &["--bootstrap-server", b, "--describe", "--group", "kg"],
    );
    let rows: Vec<String> = text(&java.stdout)
        .lines()
        .filter(|l| l.starts_with("kg "))
        .map(|l| l.split_whitespace().take(4).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(rows, ["kg kc 0 0", "kg kc 1 0"], "{}", text(&java.stderr));
}

#[test]
fn our_networked_consumer_commits_for_kafka_consumer_groups_on_the_directory() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    k.produce("ours", &[], b"a\nb\nc\nd\n");
    let out = k.ok(
        "kafka-console-consumer",
        &[
            "--bootstrap-server",
            b,
            "--topic",
            "ours",
            "--group",
            "G",
            "--from-beginning",
            "--max-messages",
            "3",
        ],
        None,
    );
    assert_eq!(out, "a\nb\nc\n");
    let local = k.ok(
        "kafka-consumer-groups",
        &["--describe", "--group", "G"],
        None,
    );
    let row = local
        .lines()
        .find(|l| l.starts_with("G "))
        .unwrap_or_default()
        .to_string();
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols[..6], ["G", "ours", "0", "3", "4", "1"], "{local}");
    // The Java tool through the server says the same.
    let java = java_tool(
        GROUP_COMMAND,
        &["--bootstrap-server", b, "--describe", "--group", "G"],
    );
    let jrow = text(&java.stdout)
        .lines()
        .find(|l| l.starts_with("G "))
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        jrow.split_whitespace().take(6).collect::<Vec<_>>(),
        cols[..6],
        "{}",
        text(&java.stderr)
    );
    // And so does our tool over the network, with the group listed on both sides.
    let ours = k.ok(
        "kafka-consumer-groups",
        &["--bootstrap-server", b, "--list"],
        None,
    );
    assert_eq!(ours, "G\n");
}

#[test]
fn a_group_with_networked_members_is_live_for_the_directory_until_they_time_out() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    k.produce("net", &[], b"x\ny\n");
    let dir = k.path("out");
    std::fs::create_dir_all(&dir).unwrap();
    let kc = Background::spawn(
        &dir,
        "kcat",
        "kcat",
        &[
            "-b",
            b,
            "-u",
            "-G",
            "ng",
            "net",
            "-X",
            "auto.offset.reset=earliest",
            "-X",
            "session.timeout.ms=6000",
        ],
    );
    wait_until(
        Duration::from_secs(30),
        || kc.stdout().lines().count() == 2,
        || kc.stderr(),
    );
    let reset = [
        "--reset-offsets",
        "--group",
        "ng",
        "--topic",
        "net",
        "--to-earliest",
        "--execute",
    ];
    let err = k.fails("kafka-consumer-groups", &reset, None, 1);
    assert!(err.contains("inactive"), "{err}");
    let err = k.fails(
        "kafka-consumer-groups",
        &["--delete", "--group", "ng"],
        None,
        1,
    );
    assert!(err.contains("not empty"), "{err}");
    let out = k.run(
        "kafka-console-consumer",
        &[
            "--topic",
            "net",
            "--group",
            "ng",
            "--from-beginning",
            "--timeout-ms",
            "3000",
        ],
        None,
    );
    assert!(!out.status.success());
    assert_eq!(
        text(&out.stdout),
        "",
        "a --log-dir consumer read what the networked one reads"
    );
    assert!(
        text(&out.stderr).contains("connected to kafka-server-start"),
        "{}",
        text(&out.stderr)
    );
    // kill -9: the server removes the member after its session timeout, and the group is
    // the directory's again.
    kc.signal("-KILL");
    wait_until(
        Duration::from_secs(30),
        || {
            k.run("kafka-consumer-groups", &reset, None)
                .status
                .success()
        },
        || server.stderr(),
    );
    assert!(
        server.stderr().contains("session timeout"),
        "{}",
        server.stderr()
    );
    k.ok(
        "kafka-consumer-groups",
        &["--delete", "--group", "ng"],
        None,
    );
}

#[test]
fn a_group_with_log_dir_members_is_refused_by_the_server() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    k.produce("loc", &[], b"1\n2\n");
    let dir = k.path("out");
    std::fs::create_dir_all(&dir).unwrap();
    let bin = env!("CARGO_BIN_EXE_kafka-console-consumer");
    let log_dir = k.log_dir().to_str().unwrap().to_string();
    let local = Background::spawn(
        &dir,
        "local",
        bin,
        &[
            "--log-dir",
            &log_dir,
            "--topic",
            "loc",
            "--group",
            "lg",
            "--from-beginning",
        ],
    );
    wait_until(
        Duration::from_secs(30),
        || local.stdout().lines().count() == 2,
        || local.stderr(),
    );
    // A networked consumer is refused: it never reads what the local one reads.
    let out = std::process::Command::new("timeout")
        .args([
            "20",
            "kcat",
            "-b",
            b,
            "-G",
            "lg",
            "loc",
            "-e",
            "-X",
            "auto.offset.reset=earliest",
        ])
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), "");
    assert!(
        text(&out.stderr).contains("Inconsistent group protocol"),
        "{}",
        text(&out.stderr)
    );
    wait_until(
        Duration::from_secs(60),
        || {
            server
                .stderr()
                .contains("has live consumers using --log-dir")
        },
        || server.stderr(),
    );
    // Deletes and resets through the server are refused.
    let err = k.fails(
        "kafka-consumer-groups",
        &["--bootstrap-server", b, "--delete", "--group", "lg"],
        None,
        1,
    );
    assert!(err.contains("not empty"), "{err}");
    let java = java_tool(
        GROUP_COMMAND,
        &[
            "--bootstrap-server",
            b,
            "--reset-offsets",
            "--group",
            "lg",
            "--topic",
            "loc",
            "--to-earliest",
            "--execute",
        ],
    );
    assert!(
        text(&java.stdout).contains("inactive") || text(&java.stderr).contains("inactive"),
        "{}",
        text(&java.stderr)
    );
    // The Java tool sees the local member through the server.
    let java = java_tool(
        GROUP_COMMAND,
        &[
            "--bootstrap-server",
            b,
            "--describe",
            "--group",
            "lg",
            "--members",
        ],
    );
    let members = text(&java.stdout);
    assert!(
        members
            .lines()
            .any(|l| l.starts_with("lg ") && l.contains("console-consumer")),
        "{members}"
    );
}
