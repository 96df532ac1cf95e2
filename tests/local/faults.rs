//! Injected I/O faults on the embedded log (issue 11, item 17): the real binaries run with an
//! `LD_PRELOAD` shim (`tests/faults/shim.c`, compiled here with `cc`) that fails the Nth
//! `fsync`/`fdatasync`, regular-file `write`/`pwrite`/`writev` or `rename` with EIO (that call
//! only) or ENOSPC (that call and every later one of its kind, a disk that stays full; the Nth
//! `write`/`pwrite` then stores half its bytes and returns short, as a filling disk does).
//!
//! Each scenario prepares a log whose content was all acknowledged, runs its command once
//! without faults (to learn the calls it makes and the state it leads to), then once for every
//! call kind x errno x N in 1..=min(50, calls made), each on a fresh copy of the prepared log.
//! After each faulted run, with no faults, it checks what a user relies on:
//!
//! - a producer hit by any fault exits non-zero (every call it makes serves durability, so an
//!   exit 0 would acknowledge data that was not made durable: the fsyncgate lesson);
//! - everything acknowledged before is still readable, in order; what the faulted producer
//!   left is a prefix of its input per partition, and all of it when it exited 0;
//! - the next producer appends after it and the consumer reads everything, in order;
//! - committed group offsets, topic metadata and partition counts are the old ones or the new
//!   ones (the new ones when the command exited 0), and the next command works on them.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use common::{Kafkit, committed, json_records, text};
use kafkit::local::LogDir;

const P: &str = "kafka-console-producer";
const C: &str = "kafka-console-consumer";
const G: &str = "kafka-consumer-groups";
const T: &str = "kafka-topics";
/// The highest N tried for each call kind.
const MAX_N: u64 = 50;

/// The shared library, compiled once per test process into Cargo's per-test scratch directory
/// (tmp name, then rename: other test processes may compile it at the same time).
fn shim() -> &'static Path {
    static SHIM: OnceLock<PathBuf> = OnceLock::new();
    SHIM.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/faults/shim.c");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let out = dir.join("fault-shim.so");
        let tmp = dir.join(format!("fault-shim-{}.so", std::process::id()));
        let status = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o"])
            .arg(&tmp)
            .arg(&source)
            .arg("-ldl")
            .status()
            .unwrap_or_else(|e| {
                panic!("the fault tests need a C compiler, cc ({e}); install gcc and libc6-dev")
            });
        assert!(
            status.success(),
            "cc could not compile {}",
            source.display()
        );
        std::fs::rename(&tmp, &out).unwrap();
        out
    })
}

/// The kinds of call the shim can fail.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Call {
    Sync,
    Write,
    Rename,
}

const CALLS: [Call; 3] = [Call::Sync, Call::Write, Call::Rename];

/// How many calls of a kind one small append to one partition makes: the data's pwrite and
/// fdatasync, and the write and rename of the partition's recovery point after them.
fn calls_per_append(call: Call) -> usize {
    match call {
        Call::Write => 2,
        Call::Sync | Call::Rename => 1,
    }
}

/// How the fault behaves: a transient error, or a disk that stays full.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// The Nth call fails with EIO; later calls succeed (a retry would "work").
    EioOnce,
    /// The Nth call and every later one of its kind fail with ENOSPC (a write: the Nth is
    /// cut short, the later ones fail).
    EnospcFromThenOn,
}

const MODES: [Mode; 2] = [Mode::EioOnce, Mode::EnospcFromThenOn];

#[derive(Clone, Copy, Debug)]
struct Fault {
    call: Call,
    at: u64,
    mode: Mode,
}

/// What the shim saw: calls of each kind, and how many it failed.
#[derive(Debug, Default)]
struct Report {
    sync: u64,
    write: u64,
    rename: u64,
    injected: u64,
}

impl Report {
    fn calls(&self, call: Call) -> u64 {
        match call {
            Call::Sync => self.sync,
            Call::Write => self.write,
            Call::Rename => self.rename,
        }
    }

    fn parse(text: &str) -> Report {
        let mut r = Report::default();
        for field in text.split_whitespace() {
            let (name, value) = field.split_once('=').expect("name=value");
            let value: u64 = value.parse().expect("a count");
            match name {
                "sync" => r.sync = value,
                "write" => r.write = value,
                "rename" => r.rename = value,
                "injected" => r.injected = value,
                other => panic!("unknown report field {other}"),
            }
        }
        r
    }
}

/// A tool's run under the shim.
struct Run {
    out: Output,
    report: Report,
}

impl Run {
    fn ok(&self) -> bool {
        self.out.status.success()
    }
}

/// Runs `tool` on `k`'s log under the shim, failing calls as `fault` says (only counting
/// them without one).
fn run_under(k: &Kafkit, fault: Option<Fault>, tool: &str, args: &[&str], stdin: &[u8]) -> Run {
    let report = tempfile::NamedTempFile::new().unwrap();
    let mut cmd = k.cmd(tool);
    cmd.args(args)
        .env("LD_PRELOAD", shim())
        .env("KAFKIT_FAULT_REPORT", report.path())
        .write_stdin(stdin.to_vec());
    match fault {
        Some(f) => {
            let call = match f.call {
                Call::Sync => "sync",
                Call::Write => "write",
                Call::Rename => "rename",
            };
            let (errno, sticky) = match f.mode {
                Mode::EioOnce => ("EIO", "0"),
                Mode::EnospcFromThenOn => ("ENOSPC", "1"),
            };
            cmd.env("KAFKIT_FAULT_CALL", call)
                .env("KAFKIT_FAULT_AT", f.at.to_string())
                .env("KAFKIT_FAULT_ERRNO", errno)
                .env("KAFKIT_FAULT_STICKY", sticky);
        }
        None => {
            cmd.env_remove("KAFKIT_FAULT_CALL");
        }
    }
    let out = cmd.output().expect("tool runs");
    let written = std::fs::read_to_string(report.path()).unwrap();
    assert!(
        !written.is_empty(),
        "{tool} {args:?} ended without the shim's report (killed?): {:?}\nstderr: {}",
        out.status,
        text(&out.stderr)
    );
    Run {
        out,
        report: Report::parse(&written),
    }
}

/// A fresh log dir: on tmpfs when there is one, since the shim, not the disk, decides whether
/// a call fails, and real fsyncs would only slow the matrix down.
fn fresh() -> Kafkit {
    let shm = Path::new("/dev/shm");
    let writable = shm.is_dir() && tempfile::tempdir_in(shm).is_ok();
    if writable {
        Kafkit::new_in(shm)
    } else {
        Kafkit::new()
    }
}

/// A fresh log dir holding a copy of `template`'s files.
fn copy_of(template: &Kafkit) -> Kafkit {
    fn copy(from: &Path, to: &Path) {
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let dest = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                std::fs::create_dir(&dest).unwrap();
                copy(&entry.path(), &dest);
            } else {
                std::fs::copy(entry.path(), &dest).unwrap();
            }
        }
    }
    let k = fresh();
    copy(template.log_dir(), k.log_dir());
    k
}

/// One faulted run, for the scenario's checks.
struct Case<'a, S> {
    /// The state before the command (all of it acknowledged).
    before: &'a S,
    /// The state the command leads to without faults.
    after: &'a S,
    run: &'a Run,
    fault: Fault,
    /// Names the run in failure messages.
    label: String,
}

/// Runs the matrix for one scenario: `prepare` builds the acknowledged starting log, `run`
/// is the command, `observe` reads the state it changes, `check` judges a faulted run.
/// Returns how many faulted runs were made.
fn matrix<S: std::fmt::Debug + PartialEq>(
    name: &str,
    prepare: impl Fn(&Kafkit),
    run: impl Fn(&Kafkit, Option<Fault>) -> Run,
    observe: impl Fn(&Kafkit) -> S,
    check: impl Fn(&Kafkit, &Case<S>),
) -> u64 {
    let template = fresh();
    prepare(&template);
    let before = observe(&template);
    let clean = copy_of(&template);
    let counted = run(&clean, None);
    assert!(
        counted.ok(),
        "{name} without faults failed: {}",
        text(&counted.out.stderr)
    );
    assert_eq!(counted.report.injected, 0);
    assert!(
        counted.report.sync > 0,
        "{name}: the shim saw no fsync: is it loaded? {:?}",
        counted.report
    );
    let after = observe(&clean);
    assert_ne!(before, after, "{name}: the command changes nothing");
    let mut runs = 0;
    for call in CALLS {
        for mode in MODES {
            for at in 1..=counted.report.calls(call).min(MAX_N) {
                let fault = Fault { call, at, mode };
                let k = copy_of(&template);
                let faulted = run(&k, Some(fault));
                let label = format!("{name} with {fault:?}");
                judge_exit(&label, &faulted);
                let case = Case {
                    before: &before,
                    after: &after,
                    run: &faulted,
                    fault,
                    label,
                };
                check(&k, &case);
                runs += 1;
            }
        }
    }
    eprintln!(
        "{name}: {runs} faulted runs, clean run made {:?}",
        counted.report
    );
    runs
}

/// What holds for every faulted run: the fault happened (the calls before the Nth are the
/// clean run's), the tool did not panic or die of a signal, and a failure says why.
fn judge_exit(label: &str, run: &Run) {
    let stderr = text(&run.out.stderr);
    assert!(
        run.report.injected >= 1,
        "{label}: no fault injected: {:?}",
        run.report
    );
    assert!(!stderr.contains("panicked"), "{label}: panicked: {stderr}");
    assert!(
        run.out.status.code().is_some(),
        "{label}: killed by a signal: {:?}",
        run.out.status
    );
    if !run.ok() {
        assert!(!stderr.trim().is_empty(), "{label}: failed without a word");
    }
}

/// Each partition's record values, read by the consumer from the beginning to the end (which
/// must succeed: the log is readable), with offsets checked to be dense from 0.
fn log_state(k: &Kafkit, topic: &str) -> Vec<Vec<String>> {
    let partitions = LogDir::open(k.log_dir())
        .unwrap()
        .require_topic(topic)
        .unwrap()
        .partitions as usize;
    let out = k.ok(
        C,
        &[
            "--topic",
            topic,
            "--from-beginning",
            "--until-end",
            "--output",
            "json",
        ],
        None,
    );
    let mut state = vec![Vec::new(); partitions];
    for r in json_records(out.as_bytes()) {
        let p = r["partition"].as_u64().unwrap() as usize;
        assert_eq!(r["offset"].as_u64(), Some(state[p].len() as u64), "{r}");
        state[p].push(r["value"].as_str().unwrap().to_string());
    }
    state
}

/// Appends one record to every partition with the next producer, then checks that the log
/// reads as `state` plus those records.
fn next_producer_appends(k: &Kafkit, topic: &str, state: &[Vec<String>], label: &str) {
    let input: String = (0..state.len())
        .map(|p| format!("{{\"partition\":{p},\"value\":\"next-{p}\"}}\n"))
        .collect();
    let out = k.run(
        P,
        &["--topic", topic, "--input", "json"],
        Some(input.as_bytes()),
    );
    assert!(
        out.status.success(),
        "{label}: the next producer failed: {}",
        text(&out.stderr)
    );
    let mut expected = state.to_vec();
    for (p, records) in expected.iter_mut().enumerate() {
        records.push(format!("next-{p}"));
    }
    assert_eq!(
        log_state(k, topic),
        expected,
        "{label}: after the next producer"
    );
}

/// The producer scenarios' check: the producer failed; the log holds exactly `expected`,
/// which each scenario derives from where the fault hit: the appends that completed before it,
/// nothing of the failed one (it is undone, and not tried again after a failed write or fsync)
/// and nothing after it; then the log takes the next producer.
fn check_produce(k: &Kafkit, topic: &str, case: &Case<Vec<Vec<String>>>, expected: &[Vec<String>]) {
    let label = &case.label;
    assert!(
        !case.run.ok(),
        "{label}: the producer exited 0 although a call it made to store the data failed"
    );
    let now = log_state(k, topic);
    for (p, records) in now.iter().enumerate() {
        assert!(
            records.starts_with(&case.before[p]),
            "{label}: partition {p} lost acknowledged records: {records:?}, expected {:?} first",
            case.before[p]
        );
    }
    assert_eq!(
        now,
        expected,
        "{label}: the log is not what the appends before the fault left\nstderr: {}",
        text(&case.run.out.stderr)
    );
    next_producer_appends(k, topic, &now, label);
}

/// `n` keyed lines `k<i>:<prefix><i>`, for a producer with `parse.key=true`.
fn keyed_lines(prefix: &str, n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| format!("k{i}:{prefix}{i}\n"))
        .collect::<String>()
        .into_bytes()
}

fn produce_keyed(k: &Kafkit, topic: &str, lines: &[u8]) {
    let props = [
        "--property",
        "parse.key=true",
        "--property",
        "key.separator=:",
    ];
    k.produce(topic, &props, lines);
}

/// Bulk input to three partitions: one write and one fdatasync per partition at the end.
#[test]
fn producer_flush_to_three_partitions() {
    matrix(
        "producer to 3 partitions",
        |k| {
            k.ok(T, &["--create", "--topic", "t", "--partitions", "3"], None);
            produce_keyed(k, "t", &keyed_lines("old", 9));
        },
        |k, fault| {
            let args = [
                "--topic",
                "t",
                "--property",
                "parse.key=true",
                "--property",
                "key.separator=:",
            ];
            run_under(k, fault, P, &args, &keyed_lines("new", 30))
        },
        |k| log_state(k, "t"),
        |k, case| {
            // Each partition's append is, in partition order, one pwrite and one fdatasync of
            // the data, then one write and one rename of its recovery point: the Nth call of a
            // kind fails the append of the partition that makes it.
            let failed = (case.fault.at as usize - 1) / calls_per_append(case.fault.call);
            let expected: Vec<Vec<String>> = (0..3)
                .map(|p| {
                    let state = if p < failed { case.after } else { case.before };
                    state[p].clone()
                })
                .collect();
            check_produce(k, "t", case, &expected);
        },
    );
}

/// `--sync`: one write and one fdatasync per line; the lines before the fault stay.
#[test]
fn producer_sync_per_line() {
    matrix(
        "producer --sync",
        |k| {
            k.ok(T, &["--create", "--topic", "t", "--partitions", "1"], None);
            k.produce("t", &[], b"old0\nold1\nold2\n");
        },
        |k, fault| {
            let input: String = (0..12).map(|i| format!("new{i}\n")).collect();
            run_under(k, fault, P, &["--topic", "t", "--sync"], input.as_bytes())
        },
        |k| log_state(k, "t"),
        |k, case| {
            // Each line is one append (see calls_per_append): the lines before the failed one
            // stay.
            let failed = (case.fault.at as usize - 1) / calls_per_append(case.fault.call);
            let kept = case.before[0].len() + failed;
            check_produce(k, "t", case, &[case.after[0][..kept].to_vec()]);
        },
    );
}

/// One flush of many small batches that rolls several 300-byte segments: a failed append
/// must remove the segments it created and cut the old one back.
#[test]
fn producer_across_segment_rolls() {
    matrix(
        "producer across segment rolls",
        |k| {
            k.ok(
                T,
                &[
                    "--create",
                    "--topic",
                    "t",
                    "--partitions",
                    "1",
                    "--config",
                    "internal.segment.bytes=300",
                ],
                None,
            );
            k.produce("t", &[], b"old0\nold1\nold2\n");
        },
        |k, fault| {
            let input: String = (0..40).map(|i| format!("new-record-{i:02}\n")).collect();
            let args = ["--topic", "t", "--batch-size", "60"];
            run_under(k, fault, P, &args, input.as_bytes())
        },
        |k| log_state(k, "t"),
        // The input is one append: whatever fails, all of it is undone.
        |k, case| check_produce(k, "t", case, case.before),
    );
}

/// Two partitions of keyed records and group `g`, for the group scenarios.
fn prepare_group(k: &Kafkit, consumed: &[&str]) {
    k.ok(T, &["--create", "--topic", "t", "--partitions", "2"], None);
    produce_keyed(k, "t", &keyed_lines("v", 20));
    let mut args = vec!["--topic", "t", "--group", "g", "--from-beginning"];
    args.extend_from_slice(consumed);
    k.ok(C, &args, None);
}

/// The group's committed offsets, which must parse (never a torn file).
fn offsets(k: &Kafkit) -> Vec<(String, u32, i64)> {
    committed(k, "g")
}

/// Committed offsets are the old or the new ones (the new ones after exit 0), the group can
/// be described, and it has no member left behind: a reset succeeds.
fn check_offsets(k: &Kafkit, case: &Case<Vec<(String, u32, i64)>>) {
    let label = &case.label;
    let describe = k.run(G, &["--describe", "--group", "g"], None);
    assert!(
        describe.status.success(),
        "{label}: --describe failed: {}",
        text(&describe.stderr)
    );
    let now = offsets(k);
    if case.run.ok() {
        assert_eq!(&now, case.after, "{label}: exit 0 but not the new offsets");
    } else {
        assert!(
            &now == case.before || &now == case.after,
            "{label}: offsets {now:?} are neither the old {:?} nor the new {:?}",
            case.before,
            case.after
        );
    }
    let reset = [
        "--group",
        "g",
        "--topic",
        "t",
        "--reset-offsets",
        "--to-offset",
        "1",
        "--execute",
    ];
    let out = k.run(G, &reset, None);
    assert!(
        out.status.success(),
        "{label}: the next reset failed: {}",
        text(&out.stderr)
    );
    let ones: Vec<i64> = offsets(k).iter().map(|o| o.2).collect();
    assert_eq!(ones, [1, 1], "{label}: the next reset");
}

/// A group member reads to the end and commits on close.
#[test]
fn group_consumer_commit() {
    matrix(
        "consumer --group",
        |k| prepare_group(k, &["--max-messages", "5"]),
        |k, fault| {
            let args = [
                "--topic",
                "t",
                "--group",
                "g",
                "--from-beginning",
                "--until-end",
            ];
            run_under(k, fault, C, &args, b"")
        },
        offsets,
        |k, case| {
            // The next member resumes where the committed offsets say, and reads the rest.
            let label = &case.label;
            let now = offsets(k);
            let ends: Vec<usize> = log_state(k, "t").iter().map(Vec::len).collect();
            let rest: usize = (0..2)
                .map(|p| {
                    let done = now.iter().find(|o| o.1 == p as u32).map_or(0, |o| o.2);
                    ends[p] - done as usize
                })
                .sum();
            let args = [
                "--topic",
                "t",
                "--group",
                "g",
                "--from-beginning",
                "--until-end",
            ];
            let out = k.run(C, &args, None);
            assert!(
                out.status.success(),
                "{label}: the next member failed: {}",
                text(&out.stderr)
            );
            assert_eq!(
                text(&out.stdout).lines().count(),
                rest,
                "{label}: next member"
            );
            check_offsets(k, case);
        },
    );
}

/// `kafka-consumer-groups --reset-offsets --execute` replaces the offsets file.
#[test]
fn group_offset_reset() {
    matrix(
        "reset-offsets --execute",
        |k| prepare_group(k, &["--until-end"]),
        |k, fault| {
            let args = [
                "--group",
                "g",
                "--topic",
                "t",
                "--reset-offsets",
                "--to-earliest",
                "--execute",
            ];
            run_under(k, fault, G, &args, b"")
        },
        offsets,
        check_offsets,
    );
}

/// The topic names and, for `topic`, its partition count and config overrides.
type Topics = (Vec<String>, Option<(u32, Vec<(String, String)>)>);

fn topics(k: &Kafkit, topic: &str) -> Topics {
    let dir = LogDir::open(k.log_dir()).unwrap();
    let meta = dir.topic(topic).unwrap().map(|m| {
        let configs = m.configs.into_iter().collect();
        (m.partitions, configs)
    });
    (dir.topic_names().unwrap(), meta)
}

/// Topic metadata is the old or the new (the new after exit 0); listing works; the command
/// succeeds when repeated if it had no effect; every partition then takes a record, and the
/// records there before are intact.
fn check_topics(k: &Kafkit, topic: &str, redo: &[&str], case: &Case<Topics>) {
    let label = &case.label;
    let list = k.run(T, &["--list"], None);
    assert!(
        list.status.success(),
        "{label}: --list: {}",
        text(&list.stderr)
    );
    let now = topics(k, topic);
    let listed: Vec<String> = text(&list.stdout).lines().map(str::to_string).collect();
    assert_eq!(listed, now.0, "{label}: --list");
    if case.run.ok() {
        assert_eq!(&now, case.after, "{label}: exit 0 but not the new metadata");
    } else {
        assert!(
            &now == case.before || &now == case.after,
            "{label}: metadata {now:?} is neither the old {:?} nor the new {:?}",
            case.before,
            case.after
        );
    }
    if &now == case.before {
        let out = k.run(T, redo, None);
        assert!(
            out.status.success(),
            "{label}: {redo:?} again failed: {}",
            text(&out.stderr)
        );
    }
    let describe = k.run(T, &["--describe", "--topic", topic], None);
    assert!(
        describe.status.success(),
        "{label}: {}",
        text(&describe.stderr)
    );
    assert_eq!(topics(k, topic), *case.after, "{label}: after the retry");
    let state = log_state(k, topic);
    let old = log_state(k, "old");
    assert_eq!(
        old[..2],
        [vec!["a", "b"], vec!["c", "d"]],
        "{label}: topic old"
    );
    next_producer_appends(k, topic, &state, label);
}

/// A topic `old` with two records in each of its two partitions.
fn prepare_old_topic(k: &Kafkit) {
    k.ok(
        T,
        &["--create", "--topic", "old", "--partitions", "2"],
        None,
    );
    let input = b"{\"partition\":0,\"value\":\"a\"}\n{\"partition\":0,\"value\":\"b\"}\n\
        {\"partition\":1,\"value\":\"c\"}\n{\"partition\":1,\"value\":\"d\"}\n";
    k.produce("old", &["--input", "json"], input);
}

const CREATE: [&str; 8] = [
    "--create",
    "--topic",
    "fresh",
    "--partitions",
    "3",
    "--config",
    "retention.ms=86400000",
    "--if-not-exists",
];

/// `kafka-topics --create` with a config: partition directories, then the metadata file.
#[test]
fn topic_create_with_config() {
    matrix(
        "kafka-topics --create",
        prepare_old_topic,
        |k, fault| run_under(k, fault, T, &CREATE, b""),
        |k| topics(k, "fresh"),
        |k, case| check_topics(k, "fresh", &CREATE, case),
    );
}

const ALTER: [&str; 5] = ["--alter", "--topic", "old", "--partitions", "4"];

/// `kafka-topics --alter --partitions`: new partition directories, then the metadata file.
#[test]
fn topic_add_partitions() {
    matrix(
        "kafka-topics --alter --partitions",
        prepare_old_topic,
        |k, fault| run_under(k, fault, T, &ALTER, b""),
        |k| topics(k, "old"),
        |k, case| check_topics(k, "old", &ALTER, case),
    );
}
