//! `kafka-configs --bootstrap-server` against a real Kafka 4.3.1 broker, with Kafka's
//! `ConfigCommand` from the same jars as the oracle: on the same state both tools print the
//! same lines. An alter is made by each tool on a twin entity of its own (topic `<p>-ours` and
//! `<p>-java`), so that their answers and the states they leave can be compared.
//!
//! The broker is shared: only this test's topics are named. Group and broker configs are in
//! `configs_kafka_only`.
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracles (see `tests/served/main.rs`).

use std::process::Output;

use crate::common::broker;
use crate::common::text;

pub(crate) const TOOL: &str = "kafka-configs";
const CONFIG_COMMAND: &str = "kafka.admin.ConfigCommand";

fn java(args: &[&str]) -> Output {
    let bootstrap = broker::bootstrap();
    let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
    all.extend_from_slice(args);
    broker::java_tool(CONFIG_COMMAND, &all)
}

/// Runs both tools with `args` (`{}` in an argument is the tool's own twin name, when given)
/// and checks the same exit code and stdout, up to the twin names; our stdout.
pub(crate) fn same(args: &[&str], twins: Option<&str>) -> String {
    let with = |suffix: &str| -> Vec<String> {
        args.iter()
            .map(|a| match twins {
                Some(p) => a.replace("{}", &format!("{p}-{suffix}")),
                None => a.to_string(),
            })
            .collect()
    };
    let ours_args = with("ours");
    let java_args = with("java");
    let ours = broker::run(
        TOOL,
        &ours_args.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    );
    let theirs = java(&java_args.iter().map(String::as_str).collect::<Vec<_>>());
    let normalize = |out: &[u8], suffix: &str| match twins {
        Some(p) => text(out).replace(&format!("{p}-{suffix}"), "{}"),
        None => text(out),
    };
    assert_eq!(
        normalize(&ours.stdout, "ours"),
        normalize(&theirs.stdout, "java"),
        "{args:?}: stdout differs (ours, then Java's)\nour stderr: {}\nJava's stderr: {}",
        text(&ours.stderr),
        text(&theirs.stderr)
    );
    assert_eq!(
        ours.status.code(),
        theirs.status.code(),
        "{args:?}: exit codes"
    );
    text(&ours.stdout)
}

/// Our one error line for `args` carries the message of Java's exception.
pub(crate) fn same_error(args: &[&str], twins: &str) {
    let ours_args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{}", &format!("{twins}-ours")))
        .collect();
    let java_args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{}", &format!("{twins}-java")))
        .collect();
    let ours = broker::run(
        TOOL,
        &ours_args.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    );
    let theirs = java(&java_args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        ours.status.code(),
        Some(1),
        "{args:?}: {}",
        text(&ours.stderr)
    );
    assert_eq!(
        theirs.status.code(),
        Some(1),
        "{args:?}: {}",
        text(&theirs.stderr)
    );
    let java_err = text(&theirs.stderr);
    let cause = java_err
        .lines()
        .find_map(|l| l.strip_prefix("Caused by: "))
        .unwrap_or_else(|| panic!("Java's cause: {java_err}"));
    let message = cause.split_once(": ").map_or(cause, |(_, m)| m);
    let message = message.replace(&format!("{twins}-java"), &format!("{twins}-ours"));
    let our_err = text(&ours.stderr);
    assert_eq!(our_err.lines().count(), 1, "{our_err}");
    assert!(
        our_err.starts_with("Error while executing config command with args '")
            && our_err.trim_end().ends_with(&message),
        "{args:?}: ours {our_err:?}, Java's cause {cause:?}"
    );
}

#[test]
fn topic_configs_match_kafkas_tool() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let p = broker::unique_topic("configs");
    for suffix in ["ours", "java"] {
        let topic = format!("{p}-{suffix}");
        broker::java_ok(
            "org.apache.kafka.tools.TopicCommand",
            &[
                "--create",
                "--topic",
                &topic,
                "--partitions",
                "2",
                "--config",
                "retention.ms=1000000",
            ],
        );
    }
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), "flush.ms=5\nsegment.ms = 100000\n").unwrap();
    let file = file.path().to_str().unwrap();
    same(&["--describe", "--topic", "{}"], Some(&p));
    same(
        &[
            "--describe",
            "--entity-type",
            "topics",
            "--entity-name",
            "{}",
            "--all",
        ],
        Some(&p),
    );
    same(
        &[
            "--alter",
            "--topic",
            "{}",
            "--add-config",
            "retention.ms=5000,segment.bytes=2000000,leader.replication.throttled.replicas=[0:1,1:1]",
        ],
        Some(&p),
    );
    same(&["--describe", "--topic", "{}"], Some(&p));
    same(
        &[
            "--alter",
            "--entity-type",
            "topics",
            "--entity-name",
            "{}",
            "--delete-config",
            "segment.bytes,leader.replication.throttled.replicas",
        ],
        Some(&p),
    );
    same(
        &["--alter", "--topic", "{}", "--add-config-file", file],
        Some(&p),
    );
    same(&["--describe", "--topic", "{}", "--all"], Some(&p));
    same(&["--describe", "--topic", &format!("{p}-missing")], None);
    same_error(
        &["--alter", "--topic", "{}", "--add-config", "foo.bar=1"],
        &p,
    );
    same_error(
        &[
            "--alter",
            "--topic",
            "{}",
            "--add-config",
            "retention.ms=abc",
        ],
        &p,
    );
    same_error(
        &[
            "--alter",
            "--topic",
            "{}",
            "--add-config",
            "retention.ms=1",
            "--delete-config",
            "retention.ms",
        ],
        &p,
    );
    same_error(
        &[
            "--alter",
            "--topic",
            "{}-missing",
            "--add-config",
            "retention.ms=1",
        ],
        &p,
    );
}

#[test]
fn embedded_log_describes_in_kafkas_layout() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let p = broker::unique_topic("configs-layout");
    broker::java_ok(
        "org.apache.kafka.tools.TopicCommand",
        &[
            "--create",
            "--topic",
            &p,
            "--config",
            "retention.ms=1000000",
            "--config",
            "segment.bytes=2000000",
        ],
    );
    let java_out = text(&java(&["--describe", "--topic", &p, "--all"]).stdout);
    let k = crate::common::Kafkit::new();
    k.ok(
        "kafka-topics",
        &[
            "--create",
            "--topic",
            &p,
            "--config",
            "retention.ms=1000000",
            "--config",
            "segment.bytes=2000000",
        ],
        None,
    );
    let ours = k.ok(TOOL, &["--describe", "--topic", &p, "--all"], None);
    // The test broker sets min.insync.replicas as a dynamic broker default; the embedded log
    // has no such setting.
    let without_broker_settings = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| !l.starts_with("  min.insync.replicas="))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        without_broker_settings(&ours),
        without_broker_settings(&java_out)
    );
    assert!(ours.lines().count() > 30, "{ours}");
}
