//! `kafka-console-consumer --group` against a real Kafka 4.3.1 broker, side by side with the Java
//! console consumer in the same group: the classic group protocol (join, range assignment by
//! whichever member leads, heartbeats, commits, leave) must interoperate so that the members
//! split the partitions and, together, print every record exactly once. The new consumer group
//! protocol (KIP-848) is in `consumer_group_kafka_only`.
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracles (see `tests/served/main.rs`).

use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::broker::{self, CONSOLE_CONSUMER, GROUP_COMMAND, java_create_topic};
use crate::common::{DefaultSignals, signal, text};

/// Produces `lines` with our producer (keyed `k<i>`, so they spread over the partitions).
pub(crate) fn produce(topic: &str, lines: &[String]) {
    let input: String = lines.iter().map(|l| format!("{l}\t{l}\n")).collect();
    broker::kafkit("kafka-console-producer")
        .args(["--topic", topic, "--property", "parse.key=true"])
        .write_stdin(input)
        .assert()
        .success();
}

/// A consumer process running in the background. Its stdout is read as it comes, as a shell
/// pipeline's reader would: a group member commits only what its reader has taken.
pub(crate) struct Running {
    child: Child,
    name: &'static str,
    stdout: Option<std::thread::JoinHandle<String>>,
}

impl Running {
    fn new(child: Child, name: &'static str) -> Running {
        let mut running = Running::unread(child, name);
        running.start_reading();
        running
    }

    /// A process whose stdout nobody reads until [`Running::start_reading`].
    fn unread(child: Child, name: &'static str) -> Running {
        Running {
            child,
            name,
            stdout: None,
        }
    }

    fn start_reading(&mut self) {
        let mut pipe = self
            .child
            .stdout
            .take()
            .expect("stdout is piped, read once");
        self.stdout = Some(std::thread::spawn(move || {
            let mut out = String::new();
            pipe.read_to_string(&mut out).expect("stdout is text");
            out
        }));
    }

    /// Everything the process printed (once it has exited).
    fn lines(&mut self) -> Vec<String> {
        let out = self.stdout.take().expect("read once").join().unwrap();
        out.lines().map(str::to_string).collect()
    }
}

impl Running {
    pub(crate) fn ours(topic: &str, group: &str, extra: &[&str]) -> Running {
        Running::new(Running::spawn_ours(topic, group, extra), "ours")
    }

    fn spawn_ours(topic: &str, group: &str, extra: &[&str]) -> Child {
        Command::new(assert_cmd::cargo::cargo_bin("kafka-console-consumer"))
            .default_signals()
            .args(["--bootstrap-server", &broker::bootstrap()])
            .args(["--topic", topic, "--group", group])
            .args(extra)
            .env_remove("KAFKIT_LOG_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("our consumer starts")
    }

    pub(crate) fn java(topic: &str, group: &str, extra: &[&str]) -> Running {
        let child = Command::new("bash")
            .default_signals()
            .arg(broker::script())
            .arg("tool")
            .arg(CONSOLE_CONSUMER)
            .args(["--bootstrap-server", &broker::bootstrap()])
            .args(["--topic", topic, "--group", group])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the Java consumer starts");
        Running::new(child, "java")
    }

    /// Interrupts the consumer as Ctrl-C would (it commits and leaves the group), returning
    /// what it printed.
    pub(crate) fn interrupt(mut self) -> Vec<String> {
        signal(&self.child, "-INT");
        let start = Instant::now();
        while self.child.try_wait().expect("wait").is_none() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{} consumer ignored SIGINT",
                self.name
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        self.lines()
    }

    /// Waits for the process to exit (at most `limit`), returning its stdout lines.
    pub(crate) fn finish(mut self, limit: Duration) -> Vec<String> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                let mut err = String::new();
                self.child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut err)
                    .unwrap();
                assert!(status.success(), "{} consumer failed: {err}", self.name);
                return self.lines();
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                panic!("{} consumer did not finish within {limit:?}", self.name);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// The group's members as the Java tool describes them: client id -> partition count; empty
/// while the group is rebalancing (the counts are then those of the last generation).
fn members(group: &str) -> BTreeMap<String, usize> {
    let out = broker::java_tool(
        GROUP_COMMAND,
        &[
            "--bootstrap-server",
            &broker::bootstrap(),
            "--describe",
            "--members",
            "--group",
            group,
        ],
    );
    let stdout = text(&out.stdout);
    let mut members = BTreeMap::new();
    if stdout.contains("rebalancing") || text(&out.stderr).contains("rebalancing") {
        return members;
    }
    for line in stdout
        .lines()
        .skip_while(|l| !l.starts_with("GROUP"))
        .skip(1)
    {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS
        if fields.len() >= 5 {
            let n: usize = fields[4].parse().unwrap_or(0);
            members.insert(format!("{}#{}", fields[3], fields[1]), n);
        }
    }
    members
}

/// The Java tool's `--describe --group`.
fn java_describe(group: &str) -> std::process::Output {
    broker::java_tool(
        GROUP_COMMAND,
        &[
            "--bootstrap-server",
            &broker::bootstrap(),
            "--describe",
            "--group",
            group,
        ],
    )
}

/// Waits until the group has committed `total` records' worth of offsets on `topic` (lag 0):
/// every record was printed by some member.
pub(crate) fn wait_for_commits(group: &str, topic: &str, total: i64) {
    let start = Instant::now();
    loop {
        let stdout = text(&java_describe(group).stdout);
        let committed: i64 = stdout
            .lines()
            .filter(|l| l.split_whitespace().nth(1) == Some(topic))
            .filter_map(|l| l.split_whitespace().nth(3)?.parse::<i64>().ok())
            .sum();
        if committed == total {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "group {group} committed {committed} of {total}: {stdout}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Waits until the group is stable with `count` members holding `partitions` in all.
pub(crate) fn wait_for_members(
    group: &str,
    count: usize,
    partitions: usize,
) -> BTreeMap<String, usize> {
    let start = Instant::now();
    loop {
        let m = members(group);
        let everyone_has_some = m.values().all(|n| *n > 0) || count > partitions;
        if m.len() == count && m.values().sum::<usize>() == partitions && everyone_has_some {
            return m;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "group {group} never had {count} members with {partitions} partitions: {m:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

pub(crate) fn assert_each_once(got: &[String], expected: &[String]) {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for line in got {
        *counts.entry(line.as_str()).or_default() += 1;
    }
    let dups: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(dups.is_empty(), "printed more than once: {dups:?}");
    let missing: Vec<_> = expected
        .iter()
        .filter(|l| !counts.contains_key(l.as_str()))
        .collect();
    assert!(missing.is_empty(), "never printed: {missing:?}");
    assert_eq!(got.len(), expected.len());
}

#[test]
fn ours_and_java_split_the_partitions_and_read_each_record_once() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("cg-split");
    let group = broker::unique_topic("cg-split-group");
    java_create_topic(&topic, 6);
    // Both join before any record exists, so the split is visible in what each prints.
    let ours = Running::ours(&topic, &group, &[]);
    let java = Running::java(&topic, &group, &[]);
    let split = wait_for_members(&group, 2, 6);
    assert!(
        split.values().all(|n| *n == 3),
        "range split 3+3: {split:?}"
    );
    let lines: Vec<String> = (0..600).map(|i| format!("r{i}")).collect();
    produce(&topic, &lines);
    wait_for_commits(&group, &topic, 600);
    let a = ours.interrupt();
    let b = java.interrupt();
    assert!(
        !a.is_empty() && !b.is_empty(),
        "ours {} java {}",
        a.len(),
        b.len()
    );
    let all: Vec<String> = a.into_iter().chain(b).collect();
    assert_each_once(&all, &lines);
}

#[test]
fn a_member_that_leaves_hands_over_at_its_committed_offsets() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("cg-handover");
    let group = broker::unique_topic("cg-handover-group");
    java_create_topic(&topic, 3);
    let lines: Vec<String> = (0..300).map(|i| format!("h{i}")).collect();
    produce(&topic, &lines);
    // Ours reads a part and leaves (committing what it printed); Java reads the next part;
    // ours again the rest: together every record once.
    let first = Running::ours(
        &topic,
        &group,
        &["--from-beginning", "--max-messages", "70"],
    )
    .finish(Duration::from_secs(60));
    assert_eq!(first.len(), 70);
    let second =
        Running::java(&topic, &group, &["--max-messages", "100"]).finish(Duration::from_secs(60));
    assert_eq!(second.len(), 100);
    let third =
        Running::ours(&topic, &group, &["--timeout-ms", "3000"]).finish(Duration::from_secs(60));
    let all: Vec<String> = first.into_iter().chain(second).chain(third).collect();
    assert_each_once(&all, &lines);
}

#[test]
fn a_member_joining_later_takes_partitions_without_duplicates() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("cg-join");
    let group = broker::unique_topic("cg-join-group");
    java_create_topic(&topic, 4);
    let first: Vec<String> = (0..200).map(|i| format!("a{i}")).collect();
    produce(&topic, &first);
    // Java alone first, then ours joins: a rebalance while both run.
    let java = Running::java(&topic, &group, &["--from-beginning"]);
    wait_for_members(&group, 1, 4);
    let ours = Running::ours(&topic, &group, &[]);
    wait_for_members(&group, 2, 4);
    let second: Vec<String> = (0..200).map(|i| format!("b{i}")).collect();
    produce(&topic, &second);
    wait_for_commits(&group, &topic, 400);
    let a = ours.interrupt();
    let b = java.interrupt();
    assert!(!a.is_empty(), "ours printed nothing after joining");
    let all: Vec<String> = a.into_iter().chain(b).collect();
    let expected: Vec<String> = first.into_iter().chain(second).collect();
    assert_each_once(&all, &expected);
}

#[test]
fn committed_offsets_are_what_java_describes() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("cg-commit");
    let group = broker::unique_topic("cg-commit-group");
    java_create_topic(&topic, 1);
    let lines: Vec<String> = (0..50).map(|i| format!("c{i}")).collect();
    produce(&topic, &lines);
    Running::ours(
        &topic,
        &group,
        &["--from-beginning", "--max-messages", "20"],
    )
    .finish(Duration::from_secs(60));
    let out = broker::java_tool(
        GROUP_COMMAND,
        &[
            "--bootstrap-server",
            &broker::bootstrap(),
            "--describe",
            "--group",
            &group,
        ],
    );
    let stdout = text(&out.stdout);
    let row = stdout
        .lines()
        .find(|l| l.contains(&topic))
        .unwrap_or_else(|| panic!("no row for {topic}: {stdout}"));
    let fields: Vec<&str> = row.split_whitespace().collect();
    // GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
    assert_eq!(&fields[2..6], &["0", "20", "50", "30"], "{stdout}");
}

#[test]
fn heartbeats_keep_a_member_whose_output_is_blocked() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("cg-blocked");
    let group = broker::unique_topic("cg-blocked-group");
    java_create_topic(&topic, 2);
    // Far more than a pipe holds: the consumer blocks writing while nobody reads its stdout.
    let lines: Vec<String> = (0..20_000).map(|i| format!("{i:0>100}")).collect();
    produce(&topic, &lines);
    let mut ours = Running::unread(
        Running::spawn_ours(
            &topic,
            &group,
            &[
                "--from-beginning",
                "--consumer-property",
                "session.timeout.ms=6000",
                "--consumer-property",
                "heartbeat.interval.ms=500",
            ],
        ),
        "ours",
    );
    wait_for_members(&group, 1, 2);
    // Twice the session timeout with the main thread stuck in write(2): still a member.
    std::thread::sleep(Duration::from_secs(12));
    let m = members(&group);
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(m.values().sum::<usize>(), 2, "{m:?}");
    // Drain its output on a thread, so that it can finish, then stop it.
    ours.start_reading();
    wait_for_commits(&group, &topic, 20_000);
    assert_each_once(&ours.interrupt(), &lines);
}

/// As on the embedded log: `| head -5` and `| head -1` commit at most what head read (one read
/// of 8 KiB at most), though the consumer's grown pipe accepted far more.
#[test]
fn head_commits_at_most_what_head_read() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("cg-head");
    java_create_topic(&topic, 1);
    let lines: Vec<String> = (0..30_000).map(|i| format!("r{i:06}")).collect();
    produce(&topic, &lines);
    let consumer = assert_cmd::cargo::cargo_bin("kafka-console-consumer");
    for n in [5, 1] {
        let group = broker::unique_topic(&format!("cg-head-{n}"));
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "'{}' --bootstrap-server {} --topic {topic} --group {group} --from-beginning \
                 2>/dev/null | head -{n}",
                consumer.display(),
                broker::bootstrap()
            ))
            .env_remove("KAFKIT_LOG_DIR")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), lines[..n].join("\n") + "\n");
        let current = java_current_offset(&topic, &group);
        assert!(
            current == "-" || current.parse::<u64>().is_ok_and(|c| c <= 8192 / 8),
            "head -{n}: committed {current}"
        );
    }
}

/// The current offset of a one-partition topic's group, as the Java tool describes it ("-"
/// when nothing is committed).
fn java_current_offset(topic: &str, group: &str) -> String {
    let out = java_describe(group);
    let stdout = text(&out.stdout);
    let row = stdout
        .lines()
        .find(|l| l.contains(topic))
        .unwrap_or_else(|| panic!("no row for {topic}: {stdout}{}", text(&out.stderr)));
    row.split_whitespace().nth(3).unwrap().to_string()
}

/// As on the embedded log: a member whose stdout fails commits nothing, and one whose reader
/// goes away commits at most what the reader took, though the pipe accepted more (the count on
/// stderr says what it accepted).
#[test]
fn failed_stdout_commits_only_what_the_reader_took() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("cg-stdout");
    java_create_topic(&topic, 1);
    let lines: Vec<String> = (0..30_000).map(|i| format!("r{i:06}")).collect();
    produce(&topic, &lines);

    // A full disk: nothing written, nothing committed, exit 1.
    let full = broker::unique_topic("cg-stdout-full");
    let out = Command::new(assert_cmd::cargo::cargo_bin("kafka-console-consumer"))
        .args(["--bootstrap-server", &broker::bootstrap()])
        .args(["--topic", &topic, "--group", &full, "--from-beginning"])
        .env_remove("KAFKIT_LOG_DIR")
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // The failure, then the count (Kafka's order: its count comes from a `finally`).
    assert!(
        stderr.starts_with(
            "Unable to write to standard out, closing consumer.\nwriting to standard out failed: No space left on device"
        ),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("\nProcessed a total of 0 messages\n"),
        "{stderr}"
    );
    let current = java_current_offset(&topic, &full);
    assert!(current == "0" || current == "-", "committed {current}");

    // The reader goes away after its first read (`| head -5` reads 8 KiB; this 16 KiB).
    let group = broker::unique_topic("cg-stdout-pipe");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("kafka-console-consumer"))
        .args(["--bootstrap-server", &broker::bootstrap()])
        .args(["--topic", &topic, "--group", &group, "--from-beginning"])
        .env_remove("KAFKIT_LOG_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = vec![0u8; 16 * 1024];
    stdout.read_exact(&mut first).unwrap();
    assert_eq!(&first[..8], b"r000000\n");
    let took = first.len() as u64 / 8;
    // The consumer grows its stdout pipe (to 1 MiB where the kernel allows): write(2) accepts
    // that much more before the reader takes it.
    let pipe = rustix::pipe::fcntl_getpipe_size(&stdout).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let processed: u64 = stderr
        .trim_end()
        .strip_prefix("Unable to write to standard out, closing consumer.\nProcessed a total of ")
        .and_then(|rest| rest.strip_suffix(" messages"))
        .unwrap_or_else(|| panic!("{stderr}"))
        .parse()
        .unwrap();
    // Eight bytes a line: the pipe accepted more than the reader took ...
    assert!(
        processed > took && processed <= took + pipe as u64 / 8,
        "processed {processed}, the reader took {took} lines"
    );
    // ... and the commit covers at most what it took, less than 4 KiB (512 lines) behind
    // (the engine keeps one position per 4 KiB of output).
    let current = java_current_offset(&topic, &group);
    assert!(
        current
            .parse::<u64>()
            .is_ok_and(|c| c <= took && c + 512 > took),
        "committed {current}, the reader took {took} lines"
    );
}
