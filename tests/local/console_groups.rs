//! `kafka-console-consumer --group` on the embedded log: committed offsets, members sharing
//! partitions, takeover from a killed member.

use crate::common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command as StdCommand, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{DefaultSignals, Kafkit, PATIENCE, committed, signal, unread_bytes, wait_for};
use kafkit::local::LogDir;
use kafkit::local::group::GroupState;

const C: &str = "kafka-console-consumer";
const T: &str = "kafka-topics";

/// A consumer process whose stdout lines arrive on a channel.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
}

fn spawn_consumer(k: &Kafkit, args: &[&str]) -> Running {
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin(C))
        .default_signals()
        .args(args)
        .env("KAFKIT_LOG_DIR", k.log_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    Running { child, lines }
}

impl Running {
    /// The next `n` lines it prints (see [`gather`]).
    fn take(&self, n: usize) -> Vec<String> {
        gather(&[self], n).remove(0)
    }
}

/// What each of `members` prints until they printed `total` lines together; panics with what
/// they printed if that takes longer than [`PATIENCE`]. Waits for a count, never for a time,
/// so a slow machine only makes it wait longer.
fn gather(members: &[&Running], total: usize) -> Vec<Vec<String>> {
    let mut got = vec![Vec::new(); members.len()];
    let deadline = Instant::now() + PATIENCE;
    while got.iter().map(Vec::len).sum::<usize>() < total {
        assert!(Instant::now() < deadline, "{total} lines expected: {got:?}");
        let mut quiet = true;
        for (m, out) in members.iter().zip(&mut got) {
            while let Ok(line) = m.lines.try_recv() {
                out.push(line);
                quiet = false;
            }
        }
        if quiet {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    got
}

/// Waits until `group` is Stable with `n` live members that own all `partitions` between
/// them, each some: every member joined and the assignment settled.
fn wait_for_members(k: &Kafkit, group: &str, n: usize, partitions: usize) {
    let store = LogDir::open(k.log_dir()).unwrap().groups();
    wait_for(&format!("{group}: {n} members owning {partitions}"), || {
        store.describe(group).ok().flatten().is_some_and(|d| {
            d.state == GroupState::Stable
                && d.members.len() == n
                && d.members.iter().all(|m| !m.assignment.is_empty())
                && d.members.iter().map(|m| m.assignment.len()).sum::<usize>() == partitions
        })
    });
}

/// Waits until the offsets `group` committed add up to `total`: every member's commits cover
/// what it printed.
fn wait_for_commits(k: &Kafkit, group: &str, total: i64) {
    wait_for(&format!("{group}: commits of {total} records"), || {
        committed(k, group).iter().map(|(_, _, o)| o).sum::<i64>() == total
    });
}

#[test]
fn group_commits_and_resumes_from_committed_offsets() {
    let k = Kafkit::new();
    k.produce("orders", &[], b"1\n2\n3\n4\n5\n");
    // Without --group nothing is committed.
    k.consume("orders", 5, &[]);
    assert!(
        !k.path("groups").exists() || std::fs::read_dir(k.path("groups")).unwrap().count() == 0
    );
    let out = k.ok(
        C,
        &[
            "--topic",
            "orders",
            "--group",
            "g1",
            "--from-beginning",
            "--max-messages",
            "2",
        ],
        None,
    );
    assert_eq!(out, "1\n2\n");
    assert_eq!(committed(&k, "g1"), vec![("orders".into(), 0, 2)]);
    // The committed offset wins over --from-beginning (as auto.offset.reset does in Kafka).
    let out = k.ok(
        C,
        &[
            "--topic",
            "orders",
            "--group",
            "g1",
            "--from-beginning",
            "--timeout-ms",
            "500",
        ],
        None,
    );
    assert_eq!(out, "3\n4\n5\n");
    assert_eq!(committed(&k, "g1"), vec![("orders".into(), 0, 5)]);
    // enable.auto.commit=false: nothing is committed.
    let out = k.ok(
        C,
        &[
            "--topic",
            "orders",
            "--command-property",
            "group.id=g2",
            "--from-beginning",
            "--timeout-ms",
            "300",
            "--command-property",
            "enable.auto.commit=false",
        ],
        None,
    );
    assert_eq!(out, "1\n2\n3\n4\n5\n");
    assert!(committed(&k, "g2").is_empty());
    // A new group without --from-beginning starts at the end.
    assert_eq!(
        k.ok(
            C,
            &["--topic", "orders", "--group", "g3", "--timeout-ms", "300"],
            None
        ),
        ""
    );
    assert_eq!(committed(&k, "g3"), vec![("orders".into(), 0, 5)]);
}

#[test]
fn group_id_rules() {
    let k = Kafkit::new();
    let err = k.fails(
        C,
        &["--topic", "t", "--group", "a", "--partition", "0"],
        None,
        2,
    );
    assert!(
        err.contains("Options group and partition cannot be specified together."),
        "{err}"
    );
    let err = k.fails(
        C,
        &[
            "--topic",
            "t",
            "--group",
            "a",
            "--command-property",
            "group.id=b",
        ],
        None,
        2,
    );
    assert!(
        err.contains("The group ids provided in different places"),
        "{err}"
    );
    assert!(err.contains("Detected group ids: 'a', 'b'"), "{err}");
    // The same id given twice is fine.
    k.produce("t", &[], b"x\n");
    let out = k.ok(
        C,
        &[
            "--topic",
            "t",
            "--group",
            "a",
            "--command-property",
            "group.id=a",
            "--from-beginning",
            "--max-messages",
            "1",
        ],
        None,
    );
    assert_eq!(out, "x\n");
}

#[test]
fn ctrl_c_commits_what_was_printed() {
    let k = Kafkit::new();
    k.produce("c", &[], b"a\nb\n");
    let consumer = spawn_consumer(&k, &["--topic", "c", "--group", "cg", "--from-beginning"]);
    let lines = consumer.take(2);
    assert_eq!(lines, ["a", "b"]);
    let mut child = consumer.child;
    signal(&child, "-INT");
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert_eq!(consumer.lines.iter().count(), 0, "nothing more printed");
    assert_eq!(committed(&k, "cg"), vec![("c".into(), 0, 2)]);
}

#[test]
fn members_share_partitions_and_take_over_from_a_killed_member() {
    let k = Kafkit::new();
    k.ok(
        T,
        &["--create", "--topic", "shared", "--partitions", "4"],
        None,
    );
    let args = [
        "--topic",
        "shared",
        "--group",
        "team",
        "--from-beginning",
        "--command-property",
        "auto.commit.interval.ms=200",
    ];
    // a first, then b joins it: both own partitions before any record exists.
    let a = spawn_consumer(&k, &args);
    wait_for_members(&k, "team", 1, 4);
    let b = spawn_consumer(&k, &args);
    wait_for_members(&k, "team", 2, 4);
    // 40 keyed records over the 4 partitions.
    let input: String = (0..40).map(|i| format!("key-{i}\tv{i}\n")).collect();
    k.produce(
        "shared",
        &["--reader-property", "parse.key=true"],
        input.as_bytes(),
    );
    let [got_a, got_b] = <[_; 2]>::try_from(gather(&[&a, &b], 40)).unwrap();
    assert!(
        !got_a.is_empty() && !got_b.is_empty(),
        "both members consume: {got_a:?} {got_b:?}"
    );
    let set_a: BTreeSet<_> = got_a.iter().cloned().collect();
    let set_b: BTreeSet<_> = got_b.iter().cloned().collect();
    assert!(set_a.is_disjoint(&set_b), "no record read twice");
    assert_eq!(got_a.len() + got_b.len(), 40);
    // Kill -9 member b after its last auto-commit; a takes over b's partitions from b's commit.
    wait_for_commits(&k, "team", 40);
    let mut b_child = b.child;
    b_child.kill().unwrap();
    b_child.wait().unwrap();
    let more: String = (40..80).map(|i| format!("key-{i}\tv{i}\n")).collect();
    k.produce(
        "shared",
        &["--reader-property", "parse.key=true"],
        more.as_bytes(),
    );
    let got = a.take(40);
    let mut expected: Vec<String> = (40..80).map(|i| format!("v{i}")).collect();
    let mut got_sorted = got.clone();
    got_sorted.sort();
    expected.sort();
    assert_eq!(
        got_sorted, expected,
        "the survivor reads every new record once"
    );
    let mut a_child = a.child;
    signal(&a_child, "-INT");
    assert_eq!(a_child.wait().unwrap().code(), Some(130));
    assert_eq!(a.lines.iter().collect::<Vec<_>>(), Vec::<String>::new());
    let total: i64 = committed(&k, "team").iter().map(|(_, _, o)| o).sum();
    assert_eq!(total, 80, "commits cover exactly the 80 printed records");
}

#[test]
fn three_members_split_then_a_hung_member_is_evicted() {
    let k = Kafkit::new();
    k.ok(
        T,
        &["--create", "--topic", "six", "--partitions", "6"],
        None,
    );
    let args = [
        "--topic",
        "six",
        "--group",
        "trio",
        "--from-beginning",
        // Short enough to wait out, long enough that a live member on a loaded machine is
        // never taken for a hung one.
        "--command-property",
        "session.timeout.ms=6000",
        "--command-property",
        "heartbeat.interval.ms=300",
        "--command-property",
        "auto.commit.interval.ms=200",
    ];
    // One after the other, each joining the group the previous ones formed.
    let members: Vec<Running> = (1..=3)
        .map(|n| {
            let m = spawn_consumer(&k, &args);
            wait_for_members(&k, "trio", n, 6);
            m
        })
        .collect();
    let input: String = (0..60).map(|i| format!("key-{i}\tv{i}\n")).collect();
    k.produce(
        "six",
        &["--reader-property", "parse.key=true"],
        input.as_bytes(),
    );
    let got = gather(&members.iter().collect::<Vec<_>>(), 60);
    assert!(
        got.iter().all(|g| !g.is_empty()),
        "every member gets partitions: {got:?}"
    );
    let mut all: Vec<&String> = got.iter().flatten().collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 60);
    assert_eq!(
        got.iter().map(Vec::len).sum::<usize>(),
        60,
        "nothing read twice"
    );
    // Stop (hang) the third member once its commits cover what it printed: after its session
    // timeout the others take its partitions.
    wait_for_commits(&k, "trio", 60);
    // Stopped while it holds the group lock, a member would stall the others until it is
    // continued (the lock is the coordinator): stop it while the test holds that lock.
    let group_lock = std::fs::File::open(k.path("groups/trio/.lock")).unwrap();
    group_lock.lock().unwrap();
    signal(&members[2].child, "-STOP");
    drop(group_lock);
    wait_for_members(&k, "trio", 2, 6);
    let more: String = (60..120).map(|i| format!("key-{i}\tv{i}\n")).collect();
    k.produce(
        "six",
        &["--reader-property", "parse.key=true"],
        more.as_bytes(),
    );
    let [a, b] = <[_; 2]>::try_from(gather(&[&members[0], &members[1]], 60)).unwrap();
    let mut survivors: Vec<String> = a.into_iter().chain(b).collect();
    survivors.sort();
    let mut expected: Vec<String> = (60..120).map(|i| format!("v{i}")).collect();
    expected.sort();
    assert_eq!(
        survivors, expected,
        "the live members read every new record once"
    );
    for m in members {
        signal(&m.child, "-KILL");
        signal(&m.child, "-CONT");
        let mut child = m.child;
        child.wait().unwrap();
    }
}

/// The reader of a group consumer's stdout goes away after a few lines (`| head -5`): the
/// group's committed offset covers at most what the reader took, not what the (grown) pipe
/// accepted, and the next member starts right after it.
#[test]
fn closed_stdout_commits_only_what_the_reader_took() {
    let k = Kafkit::new();
    let input: String = (0..100_000).map(|i| format!("r{i:06}\n")).collect();
    k.produce("q", &[], input.as_bytes());
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin(C))
        .default_signals()
        .args(["--topic", "q", "--group", "G", "--from-beginning"])
        .env("KAFKIT_LOG_DIR", k.log_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut read = 0;
    for _ in 0..5 {
        let mut line = String::new();
        read += reader.read_line(&mut line).unwrap();
    }
    // What the reader took beyond its five lines sits in its buffer.
    read += reader.buffer().len();
    // The consumer grows its stdout pipe (to 1 MiB where the kernel allows): write(2) accepts
    // that much more before the reader takes it.
    let pipe = rustix::pipe::fcntl_getpipe_size(reader.get_ref()).unwrap();
    drop(reader);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.starts_with("Unable to write to standard out, closing consumer.\n"),
        "{stderr}"
    );
    let processed: i64 = stderr
        .trim_end()
        .strip_prefix("Unable to write to standard out, closing consumer.\nProcessed a total of ")
        .and_then(|rest| rest.strip_suffix(" messages"))
        .unwrap_or_else(|| panic!("{stderr}"))
        .parse()
        .unwrap();
    // Each line is 8 bytes: the pipe accepted more than the reader took, and the count says
    // what it accepted ...
    assert!(
        processed > read as i64 / 8 && processed <= (read + pipe) as i64 / 8,
        "processed {processed}, the reader took {read} bytes, the pipe holds {pipe}"
    );
    // ... but the commit covers only what the reader took.
    let offsets = committed(&k, "G");
    let [(topic, 0, offset)] = &offsets[..] else {
        panic!("{offsets:?}")
    };
    assert_eq!(topic, "q");
    assert!(
        (5..=read as i64 / 8).contains(offset),
        "committed {offset}, the reader took {read} bytes"
    );
    // The next member of the group starts right after the last record committed.
    let next = k.ok(
        C,
        &[
            "--topic",
            "q",
            "--group",
            "G",
            "--max-messages",
            "1",
            "--timeout-ms",
            "5000",
        ],
        None,
    );
    assert_eq!(next, format!("r{offset:06}\n"));
}

/// `| head -5` and `| head -1` as a user types them: head reads once (8 KiB at most) and exits,
/// the consumer's grown pipe still holds most of what it accepted, and the group's commit
/// covers at most what head read.
#[test]
fn head_commits_at_most_what_head_read() {
    let k = Kafkit::new();
    let input: String = (0..100_000).map(|i| format!("r{i:06}\n")).collect();
    k.produce("q", &[], input.as_bytes());
    let consumer = assert_cmd::cargo::cargo_bin(C);
    for n in [5, 1] {
        let group = format!("head-{n}");
        let out = StdCommand::new("bash")
            .arg("-c")
            .arg(format!(
                "'{}' --topic q --group {group} --from-beginning 2>/dev/null | head -{n}",
                consumer.display()
            ))
            .env("KAFKIT_LOG_DIR", k.log_dir())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let expected: String = (0..n).map(|i| format!("r{i:06}\n")).collect();
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
        let offsets = committed(&k, &group);
        // Eight bytes a line; head's one read takes at most 8 KiB.
        assert!(
            offsets.len() == 1 && offsets[0].2 <= 8192 / 8,
            "head -{n}: committed {offsets:?}"
        );
    }
}

/// Stdout is a full disk: nothing was written, so nothing is committed, and the consumer
/// fails with Kafka's line and the cause.
#[test]
fn full_stdout_fails_and_commits_nothing() {
    let k = Kafkit::new();
    let input: String = (0..10_000).map(|i| format!("r{i:06}\n")).collect();
    k.produce("q", &[], input.as_bytes());
    let out = StdCommand::new(assert_cmd::cargo::cargo_bin(C))
        .args(["--topic", "q", "--group", "G", "--from-beginning"])
        .env("KAFKIT_LOG_DIR", k.log_dir())
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert_eq!(
        lines[0],
        "Unable to write to standard out, closing consumer."
    );
    // The failure, then the count (Kafka's order: its count comes from a `finally`).
    assert!(lines[1].contains("No space left on device"), "{stderr}");
    assert_eq!(lines[2], "Processed a total of 0 messages");
    let offsets = committed(&k, "G");
    assert!(
        offsets.iter().all(|(_, _, o)| *o == 0),
        "committed {offsets:?}"
    );
}

/// `--max-messages` as Kafka's loop reads it (`while (count < max || max == -1)`): 0 and
/// other negative numbers print and commit nothing, -1 is no limit.
#[test]
fn max_messages_zero_and_negative_as_kafka() {
    let k = Kafkit::new();
    k.produce("m", &[], b"a\nb\nc\n");
    for max in ["0", "-5"] {
        let out = k.run(
            C,
            &[
                "--topic",
                "m",
                "--group",
                "G",
                "--from-beginning",
                "--max-messages",
                max,
            ],
            None,
        );
        assert!(out.status.success(), "{max}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "",
            "--max-messages {max}"
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "Processed a total of 0 messages\n"
        );
        assert!(committed(&k, "G").iter().all(|(_, _, o)| *o == 0), "{max}");
    }
    let all = k.ok(
        C,
        &[
            "--topic",
            "m",
            "--group",
            "G",
            "--from-beginning",
            "--max-messages",
            "-1",
            "--timeout-ms",
            "1000",
        ],
        None,
    );
    assert_eq!(all, "a\nb\nc\n");
    assert_eq!(committed(&k, "G"), vec![("m".to_string(), 0, 3)]);
}

/// `timeout` signals its child and then the child's process group, so the consumer gets the
/// one request twice at once: it must still exit in order, printing its count, committing and
/// leaving the group (issue 24, item 6), as Java's tools ignore repeats during their shutdown.
#[test]
fn a_signal_sent_twice_at_once_still_exits_in_order() {
    use std::os::unix::process::CommandExt;
    let k = Kafkit::new();
    k.produce("twice", &[], b"1\n2\n3\n");
    for (sig, status) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let group = format!("twice-{sig}");
        let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin(C))
            .default_signals()
            .process_group(0)
            .args(["--topic", "twice", "--group", &group, "--from-beginning"])
            .env("KAFKIT_LOG_DIR", k.log_dir())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        for expected in ["1\n", "2\n", "3\n"] {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            assert_eq!(line, expected);
        }
        // As `timeout` does it: the child, then its process group (which is the child alone).
        let pid = child.id() as libc::pid_t;
        // SAFETY: plain kill(2) calls on our own child.
        unsafe {
            assert_eq!(libc::kill(pid, sig), 0);
            assert_eq!(libc::kill(-pid, sig), 0);
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "{stderr}");
        assert_eq!(stderr, "Processed a total of 3 messages\n");
        assert_eq!(committed(&k, &group), [("twice".to_string(), 0, 3)]);
        let state = k.ok(
            "kafka-consumer-groups",
            &["--describe", "--group", &group, "--state"],
            None,
        );
        assert!(state.contains("Empty"), "{sig}: left the group: {state}");
    }
}

/// SIGTERM and SIGHUP end a group consumer in order, as Ctrl-C does: it commits what it wrote
/// and exits with 128 plus the signal's number (143 and 129), as Kafka's tools do; the
/// producer flushes what it read before exiting 143 (issue 11, item 10).
#[test]
fn sigterm_and_sighup_commit_then_exit_with_the_signal_status() {
    let k = Kafkit::new();
    k.produce("sig", &[], b"1\n2\n3\n");
    for (sig, status, group) in [("-TERM", 143, "term"), ("-HUP", 129, "hup")] {
        let mut running = spawn_consumer(
            &k,
            &["--topic", "sig", "--group", group, "--from-beginning"],
        );
        assert_eq!(running.take(3), ["1", "2", "3"]);
        signal(&running.child, sig);
        assert_eq!(running.child.wait().unwrap().code(), Some(status), "{sig}");
        assert_eq!(committed(&k, group), [("sig".to_string(), 0, 3)], "{sig}");
    }

    let mut producer = StdCommand::new(assert_cmd::cargo::cargo_bin("kafka-console-producer"))
        .default_signals()
        .args(["--topic", "sig", "--timeout", "600000"])
        .env("KAFKIT_LOG_DIR", k.log_dir())
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = producer.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"4\n").unwrap();
    // TERM once the producer has read the line (it reads only once its handler is installed),
    // while its 10-minute linger holds it: what it read is what it must flush.
    wait_for("the producer to read its input", || {
        unread_bytes(&stdin) == 0
    });
    signal(&producer, "-TERM");
    assert_eq!(producer.wait().unwrap().code(), Some(143));
    drop(stdin);
    assert_eq!(k.consume("sig", 4, &[]), "1\n2\n3\n4\n");
}

/// Deleting a topic drops the groups' committed offsets for it, as a broker does: a topic
/// created again under the name is read from its start, not from the old topic's positions.
#[test]
fn a_topic_created_again_is_not_read_from_the_deleted_ones_offsets() {
    let k = Kafkit::new();
    k.produce("orders", &[], b"old1\nold2\nold3\n");
    let read = [
        "--topic",
        "orders",
        "--group",
        "g",
        "--from-beginning",
        "--timeout-ms",
        "500",
    ];
    assert_eq!(k.ok(C, &read, None), "old1\nold2\nold3\n");
    k.ok(T, &["--delete", "--topic", "orders"], None);
    // The group held nothing else, so it is gone with them.
    let describe = k.run(
        "kafka-consumer-groups",
        &["--describe", "--group", "g"],
        None,
    );
    let stderr = String::from_utf8_lossy(&describe.stderr);
    assert!(stderr.contains("Group g not found"), "{stderr}");
    k.ok(T, &["--create", "--topic", "orders"], None);
    k.produce("orders", &[], b"new1\nnew2\nnew3\nnew4\n");
    assert_eq!(k.ok(C, &read, None), "new1\nnew2\nnew3\nnew4\n");
}

/// A group consumer whose reader stopped reading sits on a full pipe: Ctrl-C still ends it in
/// order (it used to wait inside write(2) until the reader read again). It waits its 10 s for
/// the reader, prints its count, and commits nothing, since the reader took nothing.
#[test]
fn ctrl_c_reaches_a_consumer_whose_pipe_is_full() {
    let k = Kafkit::new();
    let input: String = (0..300_000).map(|i| format!("r{i:06}\n")).collect();
    k.produce("full", &[], input.as_bytes());
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin(C))
        .default_signals()
        .args(["--topic", "full", "--group", "G", "--from-beginning"])
        .env("KAFKIT_LOG_DIR", k.log_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    // 2.4 MB of output: the pipe fills, and the consumer waits for room: its next write could
    // only wait in the kernel. (The consumer grows the pipe to 1 MiB before it writes, unless
    // the user's pipe pages are spent by other tests: its size is read once it holds output.)
    wait_for("the consumer's pipe to fill", || {
        let unread = unread_bytes(&stdout);
        unread > 0 && unread + 4096 >= rustix::pipe::fcntl_getpipe_size(&stdout).unwrap()
    });
    common::wait_for_handler(&child, libc::SIGINT);
    signal(&child, "-INT");
    let mut status = None;
    wait_for("the consumer to exit after Ctrl-C", || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.unwrap().code(), Some(130), "{err}");
    assert!(err.starts_with("Processed a total of "), "{err}");
    assert!(
        committed(&k, "G").iter().all(|(_, _, o)| *o == 0),
        "{:?}",
        committed(&k, "G")
    );
    drop(stdout);
}
