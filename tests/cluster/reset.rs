//! `kafka-consumer-groups --reset-offsets --execute` and `--describe` on three nodes while the
//! group's coordinator moves (its node killed a moment before). Java's tool on the same state
//! is the oracle.

use crate::common::broker::GROUP_COMMAND;
use crate::common::{sorted, text};
use crate::harness::{Session, unique};

const G: &str = "kafka-consumer-groups";

/// Produces 30 keyed records to `topic`: keys `k0` to `k29`, which land on every partition of
/// a three-partition topic (Kafka's murmur2 of the key, so the same as Java's producer).
fn produce_keyed(c: &Session, topic: &str) {
    let input: String = (0..30).map(|i| format!("k{i}:v{i}\n")).collect();
    let out = c.ours_at(
        c.bootstrap(),
        "kafka-console-producer",
        &[
            "--topic",
            topic,
            "--reader-property",
            "parse.key=true",
            "--reader-property",
            "key.separator=:",
        ],
        Some(input.as_bytes()),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn reset_and_describe_ride_out_a_coordinator_that_moves() {
    let Some(c) = Session::begin() else {
        return;
    };
    let topic = unique("moving");
    let (reset, described) = (unique("moving-reset"), unique("moving-describe"));
    c.ours_ok(
        "kafka-topics",
        &[
            "--create",
            "--topic",
            &topic,
            "--partitions",
            "3",
            "--replication-factor",
            "3",
        ],
    );
    produce_keyed(&c, &topic);
    for group in [&reset, &described] {
        c.ours_ok(
            G,
            &[
                "--reset-offsets",
                "--group",
                group,
                "--topic",
                &topic,
                "--to-latest",
                "--execute",
            ],
        );
    }
    let from = c.coordinator(&reset);
    c.kill(from);
    // Both at once, the moment the node is gone: they wait for the group to move.
    let describing = {
        let bootstrap = c.bootstrap().to_string();
        let group = described.clone();
        std::thread::spawn(move || {
            crate::common::broker::kafkit_at(G, &bootstrap)
                .args(["--describe", "--group", &group])
                .timeout(std::time::Duration::from_secs(300))
                .output()
                .expect("kafka-consumer-groups runs")
        })
    };
    let reset_args = [
        "--reset-offsets",
        "--group",
        &reset,
        "--topic",
        &topic,
        "--to-earliest",
        "--execute",
    ];
    let ours = c.ours_ok(G, &reset_args);
    let ours_described = crate::harness::ok(G, &[], describing.join().expect("describe thread"));
    assert_ne!(c.coordinator(&reset), from, "the group moved");

    // Java's, on the state the cluster settled in: the same reset (again) and the same view.
    let java = c.java_ok(GROUP_COMMAND, &reset_args);
    assert_eq!(
        sorted(&ours),
        sorted(&java),
        "reset, up to Java's hash-map order"
    );
    assert_eq!(
        ours.lines().filter(|l| l.ends_with(" 0")).count(),
        3,
        "{ours}"
    );
    let java_described = c.java_ok(GROUP_COMMAND, &["--describe", "--group", &described]);
    assert_eq!(ours_described, java_described);
    c.same_as_java(
        G,
        GROUP_COMMAND,
        &["--describe", "--group", &reset],
        str::to_string,
    );
}
