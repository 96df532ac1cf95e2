//! A consumer group whose coordinator's node is killed (SIGKILL) while it reads: a kafkit
//! member on KIP-848's protocol, a kafkit member on the classic protocol and a Java console
//! consumer (classic) share one group and a stream of numbered records. The group must move to
//! another node with all three members, commits must go on until they reach the end of every
//! partition, and no record may be lost; records delivered twice are counted against Kafka's
//! at-least-once window and reported.
//!
//! A second group, one kafkit classic member that commits nothing, must still be a member a
//! session timeout after the move: only its heartbeats, sent to the new coordinator, keep it in.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::harness::{Session, report, unique};
use crate::common::broker::{CONSOLE_CONSUMER, GROUP_COMMAND, script};
use crate::common::{DefaultSignals, signal, sorted, text};

const G: &str = "kafka-consumer-groups";

/// Records produced, and the pace: 200 every 100 ms, so that the stream runs on through the
/// failover (about 15 s when nobody waits).
const RECORDS: usize = 30_000;
const CHUNK: usize = 200;
const PAUSE: Duration = Duration::from_millis(100);

/// The members' `auto.commit.interval.ms`: the at-least-once window is this much of input.
const COMMIT_INTERVAL_MS: i64 = 1000;
/// The members' `session.timeout.ms` (the classic protocol's; KIP-848's is the broker's).
const SESSION_TIMEOUT: Duration = Duration::from_secs(10);

/// One record as the members print it (timestamp, partition, offset, value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Seen {
    partition: u32,
    offset: i64,
    timestamp: i64,
    value: usize,
}

/// A console consumer of the group, printing into files.
struct Member {
    name: &'static str,
    child: Child,
    out: PathBuf,
    err: PathBuf,
    java: bool,
}

impl Member {
    /// Starts `name`: our consumer, or Java's (`java`), with `args` after the bootstrap list.
    fn start(c: &Session, dir: &Path, name: &'static str, java: bool, args: &[String]) -> Member {
        let out = dir.join(format!("{name}.out"));
        let err = dir.join(format!("{name}.err"));
        let mut cmd = if java {
            let mut cmd = Command::new("bash");
            cmd.arg(script()).args(["tool", CONSOLE_CONSUMER]);
            cmd
        } else {
            Command::new(assert_cmd::cargo::cargo_bin("kafka-console-consumer"))
        };
        let child = cmd
            .default_signals()
            .args(["--bootstrap-server", c.bootstrap()])
            .args(args)
            .env_remove("KAFKIT_LOG_DIR")
            .env_remove("KAFKIT_PROFILE")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).expect("output file"))
            .stderr(std::fs::File::create(&err).expect("error file"))
            .spawn()
            .expect("consumer starts");
        Member {
            name,
            child,
            out,
            err,
            java,
        }
    }

    /// The records printed so far: whole lines only, since a member still running may be in
    /// the middle of writing one (Java's console consumer writes a line in pieces).
    fn seen(&self) -> Vec<Seen> {
        let out = std::fs::read_to_string(&self.out).unwrap_or_default();
        let whole = out.rfind('\n').map_or("", |end| &out[..=end]);
        whole
            .lines()
            .filter(|l| l.ends_with(|c: char| c.is_ascii_digit()))
            .map(|l| {
                let fields: Vec<&str> = l.split('\t').collect();
                let number = |i: usize, prefix: &str| -> i64 {
                    fields
                        .get(i)
                        .and_then(|f| f.strip_prefix(prefix))
                        .and_then(|n| n.parse().ok())
                        .unwrap_or_else(|| panic!("{}: not a record line: {l:?}", self.name))
                };
                Seen {
                    timestamp: number(0, "CreateTime:"),
                    partition: number(1, "Partition:") as u32,
                    offset: number(2, "Offset:"),
                    value: number(3, "") as usize,
                }
            })
            .collect()
    }

    /// Stops the member as a user would (Ctrl-C for ours, SIGTERM for the JVM), which commits
    /// and leaves; its stderr.
    fn stop(mut self) -> String {
        signal(&self.child, if self.java { "-TERM" } else { "-INT" });
        let status = self.child.wait().expect("consumer ends");
        let err = std::fs::read_to_string(&self.err).unwrap_or_default();
        if !self.java {
            assert_eq!(status.code(), Some(130), "{}: {err}", self.name);
        }
        assert!(!err.contains("panicked"), "{}: {err}", self.name);
        err
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The consumer arguments every member of `group` shares.
fn member_args(topic: &str, group: &str, extra: &[&str]) -> Vec<String> {
    let session = format!("session.timeout.ms={}", SESSION_TIMEOUT.as_millis());
    let interval = format!("auto.commit.interval.ms={COMMIT_INTERVAL_MS}");
    let mut args = vec!["--topic", topic, "--group", group];
    for p in [
        "print.timestamp=true",
        "print.partition=true",
        "print.offset=true",
    ] {
        args.extend(["--formatter-property", p]);
    }
    args.extend([
        "--command-property",
        &session,
        "--command-property",
        &interval,
    ]);
    args.extend(extra);
    args.into_iter().map(String::from).collect()
}

/// Waits until `group` is stable with `n` members, each with a share of the partitions.
fn wait_for_members(c: &Session, group: &str, n: usize) {
    c.wait_for(&format!("{group} stable with {n} members"), || {
        let stable = c
            .group_state(group)
            .is_some_and(|s| s.state == "Stable" && s.members as usize == n);
        stable
            && member_partitions(c, group)
                .is_some_and(|ps| ps.len() == n && ps.iter().all(|p| *p > 0))
    });
}

/// `#PARTITIONS` of each member in `--describe --members`.
fn member_partitions(c: &Session, group: &str) -> Option<Vec<u32>> {
    let out = c.ours(
        "kafka-consumer-groups",
        &["--describe", "--group", group, "--members"],
    );
    if !out.status.success() {
        return None;
    }
    text(&out.stdout)
        .lines()
        .skip(2)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().last()?.parse().ok())
        .collect()
}

/// Whether every partition's committed offset is its log end (`--describe`).
fn committed_to_the_end(c: &Session, group: &str, partitions: usize) -> bool {
    let out = c.ours(G, &["--describe", "--group", group]);
    let rows: Vec<Vec<String>> = text(&out.stdout)
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().map(String::from).collect())
        .filter(|f: &Vec<String>| f.len() >= 5)
        .collect();
    out.status.success() && rows.len() == partitions && rows.iter().all(|f| f[3] == f[4])
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Feeds the numbered records to our producer at [`CHUNK`] per [`PAUSE`]; the lines written
/// so far are counted in the returned counter.
fn start_producer(
    c: &Session,
    topic: &str,
) -> (
    Child,
    Arc<AtomicUsize>,
    std::thread::JoinHandle<std::io::Result<()>>,
) {
    let mut producer = Command::new(assert_cmd::cargo::cargo_bin("kafka-console-producer"))
        .args(["--bootstrap-server", c.bootstrap(), "--topic", topic])
        .args([
            "--request-timeout-ms",
            "10000",
            "--message-send-max-retries",
            "100",
        ])
        .env_remove("KAFKIT_LOG_DIR")
        .env_remove("KAFKIT_PROFILE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("producer starts");
    let mut stdin = producer.stdin.take().expect("stdin");
    let written = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&written);
    let feeder = std::thread::spawn(move || -> std::io::Result<()> {
        for start in (0..RECORDS).step_by(CHUNK) {
            let chunk: String = (start..start + CHUNK).map(|i| format!("{i}\n")).collect();
            stdin.write_all(chunk.as_bytes())?;
            counter.store(start + CHUNK, Ordering::SeqCst);
            std::thread::sleep(PAUSE);
        }
        Ok(())
    });
    (producer, written, feeder)
}

/// The three members of `group`, one after the other, each waited for; then the lone member of
/// `idle`, which commits nothing.
fn start_members(
    c: &Session,
    dir: &Path,
    topic: &str,
    group: &str,
    idle: &str,
) -> (Vec<Member>, Member) {
    // KIP-848 first, so that the group is a consumer group from the start, which classic members
    // then join as they are. (A classic group that meets its first KIP-848 member is converted,
    // and Kafka 4.3.1 can fail that conversion in the middle of a rebalance with
    // UNKNOWN_SERVER_ERROR, which Java's consumer treats as fatal too.)
    let kip848 = ["--command-property", "group.protocol=consumer"];
    let mut members = Vec::new();
    for (name, java, extra) in [
        ("kafkit-kip848", false, &kip848[..]),
        ("kafkit-classic", false, &[][..]),
        ("java-classic", true, &[][..]),
    ] {
        members.push(Member::start(
            c,
            dir,
            name,
            java,
            &member_args(topic, group, extra),
        ));
        wait_for_members(c, group, members.len());
    }
    let no_commits = ["--command-property", "enable.auto.commit=false"];
    let lone = Member::start(
        c,
        dir,
        "kafkit-classic-idle",
        false,
        &member_args(topic, idle, &no_commits),
    );
    wait_for_members(c, idle, 1);
    (members, lone)
}

#[test]
pub fn a_mixed_group_reads_and_commits_on_while_its_coordinator_is_killed() {
    let Some(c) = Session::begin() else {
        return;
    };
    let topic = unique("failover");
    let group = unique("failover-group");
    let idle = unique("failover-idle");
    c.ours_ok(
        "kafka-topics",
        &[
            "--create",
            "--topic",
            &topic,
            "--partitions",
            "6",
            "--replication-factor",
            "3",
            "--config",
            "min.insync.replicas=2",
        ],
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let (members, lone) = start_members(&c, dir.path(), &topic, &group, &idle);

    let (producer, written, feeder) = start_producer(&c, &topic);
    c.wait_for("a quarter of the records written", || {
        written.load(Ordering::SeqCst) >= RECORDS / 4
    });
    let from = c.coordinator(&group);
    assert_eq!(
        c.coordinator(&idle),
        from,
        "one __consumer_offsets partition"
    );
    let killed_at = now_ms();
    c.kill(from);
    c.wait_for("the group stable on another coordinator", || {
        c.group_state(&group)
            .is_some_and(|s| s.coordinator != from && s.state == "Stable" && s.members == 3)
    });
    let moved_at = now_ms();
    feeder
        .join()
        .expect("feeder")
        .expect("the producer took every record");
    let out = producer.wait_with_output().expect("producer ends");
    assert!(out.status.success(), "producer: {}", text(&out.stderr));

    // Every record read, and the commits catch up with them.
    c.wait_for("every record read by a member", || {
        let values: BTreeSet<usize> = members
            .iter()
            .flat_map(|m| m.seen())
            .map(|s| s.value)
            .collect();
        values.len() == RECORDS
    });
    c.wait_for(
        "the committed offsets at the end of every partition",
        || committed_to_the_end(&c, &group, 6),
    );
    // The member that commits nothing is still in its group a session timeout after the move,
    // on ours and on Java's word.
    let since = Duration::from_millis((now_ms() - moved_at).max(0) as u64);
    std::thread::sleep((SESSION_TIMEOUT + Duration::from_secs(2)).saturating_sub(since));
    let lone_view = c.same_as_java(
        G,
        GROUP_COMMAND,
        &["--describe", "--group", &idle, "--members"],
        |s| sorted(s).join("\n"),
    );
    assert_eq!(
        lone_view.lines().filter(|l| l.starts_with(&idle)).count(),
        1,
        "{lone_view}"
    );
    wait_for_members(&c, &group, 3);

    let seen: Vec<(&'static str, Vec<Seen>)> = members.iter().map(|m| (m.name, m.seen())).collect();
    for m in members {
        m.stop();
    }
    lone.stop();
    let described = c.same_as_java(
        G,
        GROUP_COMMAND,
        &["--describe", "--group", &group],
        str::to_string,
    );
    assert!(
        described.contains("has no active members") || described.lines().count() == 8,
        "{described}"
    );
    check_deliveries(&seen, killed_at, moved_at);
}

/// No record lost (every offset of every partition read by some member, every value read), the
/// ones read twice within Kafka's at-least-once window; reports the count.
fn check_deliveries(seen: &[(&str, Vec<Seen>)], killed_at: i64, moved_at: i64) {
    let mut by_offset: BTreeMap<(u32, i64), (usize, i64, u32)> = BTreeMap::new();
    for (_, records) in seen {
        for r in records {
            let e = by_offset
                .entry((r.partition, r.offset))
                .or_insert((r.value, r.timestamp, 0));
            assert_eq!(
                e.0, r.value,
                "partition {} offset {} read as two values",
                r.partition, r.offset
            );
            e.2 += 1;
        }
    }
    let mut ends: BTreeMap<u32, i64> = BTreeMap::new();
    for (p, o) in by_offset.keys() {
        let end = ends.entry(*p).or_default();
        *end = (*end).max(o + 1);
    }
    for (p, end) in &ends {
        let read = by_offset.keys().filter(|(q, _)| q == p).count() as i64;
        assert_eq!(read, *end, "partition {p}: offsets missing below {end}");
    }
    let values: BTreeSet<usize> = by_offset.values().map(|v| v.0).collect();
    assert_eq!(values.len(), RECORDS, "records lost");
    let duplicates: u32 = by_offset.values().map(|v| v.2 - 1).sum();
    // A record is read twice only when its partition changed hands after it was read and
    // before a commit covered it: written at most one commit interval before the ownership
    // changes, which happen between the kill and the group's settling on the new coordinator.
    let window = by_offset
        .values()
        .filter(|v| v.1 >= killed_at - COMMIT_INTERVAL_MS && v.1 <= moved_at + COMMIT_INTERVAL_MS)
        .count();
    let per_member: Vec<String> = seen
        .iter()
        .map(|(n, r)| format!("{n} {}", r.len()))
        .collect();
    report(&format!(
        "coordinator failover: {duplicates} records delivered twice of {RECORDS}; at-least-once window {window} records (written from {COMMIT_INTERVAL_MS} ms before the kill to {COMMIT_INTERVAL_MS} ms after the group settled, {} ms after the kill); read: {}",
        moved_at - killed_at,
        per_member.join(", ")
    ));
    assert!(
        duplicates as usize <= window,
        "{duplicates} duplicates outside the window of {window}"
    );
}
