//! `kafka-dump-log` against Kafka's own `DumpLogSegments` from the broker's jars, the oracle
//! (it needs no broker, only the jars): on segments our producer wrote to the embedded log
//! (`embedded`), on files built or damaged by hand (`crafted`), and on the shared broker's own
//! files (`broker_files`). Both tools read the same files: stdout must be identical, exit codes
//! equal, and our stderr equal to Kafka's without its stack traces.

mod broker_files;
mod crafted;
mod embedded;
mod invocations;

use std::path::Path;
use std::process::Output;

use crate::common::broker::{self, DUMP_LOG_SEGMENTS};
use crate::common::text;

/// Whether the oracle can run here (Java and the jars, as for the broker tests).
fn available() -> bool {
    broker::try_bootstrap().is_some()
}

/// Kafka's tool, in the tool server, whose stdout is UTF-8 whatever the test's locale.
fn java(args: &[&str]) -> Output {
    broker::java_tool(DUMP_LOG_SEGMENTS, args)
}

/// Our tool.
fn ours(args: &[&str]) -> Output {
    assert_cmd::Command::cargo_bin("kafka-dump-log")
        .expect("binary built")
        .args(args)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("kafka-dump-log runs")
}

/// Kafka's stderr without what the JVM and log4j add: stack frames, causes, log lines.
fn without_stack_traces(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| {
            !(l.starts_with("\tat ")
                || l.starts_with("\t... ")
                || l.starts_with("Caused by: ")
                || l.starts_with('[') && l[1..].starts_with(|c: char| c.is_ascii_digit()))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Runs both tools on `args`; they must agree. Returns our stdout.
///
/// Ours runs first: Kafka's tool trims the `.index` files it dumps to whole entries when it
/// closes them (a preallocated index loses its zero tail), so it must see the files after us.
fn same_as_kafka(args: &[&str]) -> String {
    let kafkit = ours(args);
    let kafka = java(args);
    let (k_out, o_out) = (text(&kafka.stdout), text(&kafkit.stdout));
    if k_out != o_out {
        let line = k_out
            .lines()
            .zip(o_out.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(k_out.lines().count().min(o_out.lines().count()));
        panic!(
            "{args:?}: stdout differs from line {}:\nkafka:  {:?}\nkafkit: {:?}\n(kafka's \
             stderr: {})",
            line + 1,
            k_out.lines().nth(line),
            o_out.lines().nth(line),
            text(&kafka.stderr)
        );
    }
    let k_err = without_stack_traces(&text(&kafka.stderr));
    assert_eq!(text(&kafkit.stderr), k_err, "{args:?}: stderr");
    assert_eq!(
        kafkit.status.code(),
        kafka.status.code(),
        "{args:?}: exit code"
    );
    o_out
}

/// `--files` of these paths.
fn files(paths: &[&Path]) -> String {
    paths
        .iter()
        .map(|p| p.to_str().expect("UTF-8 temp path"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Every file under `dir` with its bytes, to prove a dump changed nothing.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(snapshot(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}
