//! The Kafka quickstart, exactly as a tutorial writes it, against a real Kafka 4.3.1 broker with
//! `--bootstrap-server`: our four tools only, with the Java tools as the oracle for output.
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracles (see `tests/served/main.rs`).

use crate::common::broker::{self, GROUP_COMMAND};
use crate::common::{sorted, text};

fn ours(tool: &str, args: &[&str], stdin: &str) -> String {
    broker::ok(tool, args, Some(stdin.as_bytes()))
}

#[test]
fn quickstart_on_a_cluster() {
    let Some(bootstrap) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("orders-demo");
    let t = topic.as_str();
    let created = ours(
        "kafka-topics",
        &[
            "--create",
            "--if-not-exists",
            "--topic",
            t,
            "--partitions",
            "3",
            "--replication-factor",
            "1",
        ],
        "",
    );
    assert_eq!(created, format!("Created topic {t}.\n"));
    ours(
        "kafka-console-producer",
        &["--topic", t],
        "order-101\norder-102\norder-103\n",
    );
    assert!(
        ours("kafka-topics", &["--list"], "")
            .lines()
            .any(|l| l == t)
    );
    let described = ours("kafka-topics", &["--describe", "--topic", t], "");
    let java = broker::java_topics(&["--describe", "--topic", t]);
    assert!(java.status.success(), "{}", text(&java.stderr));
    assert_eq!(sorted(&described), sorted(&text(&java.stdout)));
    let consumed = ours(
        "kafka-console-consumer",
        &["--topic", t, "--from-beginning", "--max-messages", "3"],
        "",
    );
    assert_eq!(
        sorted(&consumed),
        vec!["order-101", "order-102", "order-103"]
    );
    // Then in a group, as the tutorial's next step: the group reads everything once, then
    // nothing, and kafka-consumer-groups (Java here) sees its offsets at the end.
    let group = format!("{t}-group");
    let first = ours(
        "kafka-console-consumer",
        &[
            "--topic",
            t,
            "--group",
            &group,
            "--from-beginning",
            "--timeout-ms",
            "3000",
        ],
        "",
    );
    assert_eq!(sorted(&first).len(), 3);
    let again = ours(
        "kafka-console-consumer",
        &["--topic", t, "--group", &group, "--timeout-ms", "2000"],
        "",
    );
    assert_eq!(again, "");
    let described = broker::java_tool(
        GROUP_COMMAND,
        &[
            "--bootstrap-server",
            &bootstrap,
            "--describe",
            "--group",
            &group,
        ],
    );
    let lag: Vec<String> = text(&described.stdout)
        .lines()
        .filter(|l| l.contains(t))
        .map(|l| l.split_whitespace().nth(5).unwrap_or("?").to_string())
        .collect();
    assert_eq!(lag, vec!["0", "0", "0"], "{}", text(&described.stdout));
}
