//! `kafka-producer-perf-test` and `kafka-consumer-perf-test` against a real Kafka 4.3.1 broker,
//! beside Kafka's `ProducerPerformance` and `ConsumerPerformance` from the same jars on the same
//! topic: every line of both has the shape of `common::perf` (numbers differ by nature), the
//! records sent are exactly those asked for (`kafka-get-offsets`), and each consumer reads
//! exactly what is there. Bad invocations read as the Java tools word them.
//!
//! The `served` test binary also runs this module against our own `kafka-server-start`, with
//! the same oracles (see `tests/served/main.rs`).

use crate::common::perf::{self, CONSUMER_DETAILED_HEADER, CONSUMER_HEADER};
use crate::common::{broker, text};

const PRODUCER: &str = "kafka-producer-perf-test";
const CONSUMER: &str = "kafka-consumer-perf-test";
const JAVA_PRODUCER: &str = "org.apache.kafka.tools.ProducerPerformance";
const JAVA_CONSUMER: &str = "org.apache.kafka.tools.ConsumerPerformance";

/// The records of `topic`, added up over its partitions.
fn total(topic: &str) -> u64 {
    broker::ok("kafka-get-offsets", &["--topic", topic], None)
        .lines()
        .map(|l| l.rsplit(':').next().unwrap().parse::<u64>().unwrap())
        .sum()
}

/// A producer run's stdout: window lines, then the summary, which counts `records`.
fn check_producer_output(who: &str, out: &str, records: u64) {
    let lines: Vec<&str> = out.lines().collect();
    let (last, windows) = lines
        .split_last()
        .unwrap_or_else(|| panic!("{who}: no output"));
    assert_eq!(
        perf::count(&perf::producer_total(false), last),
        records,
        "{who}: {out}"
    );
    for line in windows {
        assert!(perf::producer_window().is_match(line), "{who}: {line:?}");
    }
}

/// A consumer run's stdout without `--show-detailed-stats`: the header and the totals, which
/// count `records`.
fn check_consumer_output(who: &str, out: &str, records: u64) {
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{who}: {out}");
    assert_eq!(lines[0], CONSUMER_HEADER, "{who}");
    assert_eq!(
        perf::count(&perf::consumer_totals(), lines[1]),
        records,
        "{who}"
    );
}

#[test]
fn perf_tests_match_javas_lines_and_counts() {
    let Some(bootstrap) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("perf");
    broker::java_create_topic(&topic, 3);
    let args = [
        "--topic",
        topic.as_str(),
        "--num-records",
        "1000",
        "--record-size",
        "100",
        "--throughput",
        "2500",
        "--reporting-interval",
        "100",
    ];
    let java = broker::java_ok(JAVA_PRODUCER, &args);
    check_producer_output("Java", &java, 1000);
    let ours = broker::ok(PRODUCER, &args, None);
    check_producer_output("kafkit", &ours, 1000);
    assert!(
        ours.lines().count() > 1,
        "0.4 s of sending reports every 100 ms: {ours}"
    );
    assert_eq!(total(&topic), 2000);

    // Unthrottled, with the deprecated spelling of the properties and a bootstrap in them.
    let servers = format!("bootstrap.servers={bootstrap}");
    let out = broker::run(
        PRODUCER,
        &[
            "--topic",
            &topic,
            "--num-records",
            "500",
            "--payload-monotonic",
            "--throughput",
            "-1",
            "--producer-props",
            &servers,
            "acks=1",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_producer_output("kafkit", &text(&out.stdout), 500);
    assert_eq!(
        text(&out.stderr),
        "Option --producer-props has been deprecated and will be removed in a future version. Use --command-property instead.\n"
    );
    assert_eq!(total(&topic), 2500);

    // Each consumer, in a group of its own, reads exactly what is there.
    let java_group = broker::unique_topic("perf-java");
    let java = broker::java_ok(
        JAVA_CONSUMER,
        &[
            "--topic",
            &topic,
            "--num-records",
            "2500",
            "--group",
            &java_group,
        ],
    );
    check_consumer_output("Java", &java, 2500);
    let group = broker::unique_topic("perf-ours");
    let ours = broker::ok(
        CONSUMER,
        &[
            "--topic",
            &topic,
            "--num-records",
            "2500",
            "--group",
            &group,
        ],
        None,
    );
    check_consumer_output("kafkit", &ours, 2500);

    // Detailed stats: the same header, then interval lines.
    for (who, out) in [
        (
            "Java",
            broker::java_ok(
                JAVA_CONSUMER,
                &[
                    "--topic",
                    &topic,
                    "--num-records",
                    "2500",
                    "--show-detailed-stats",
                    "--reporting-interval",
                    "1",
                ],
            ),
        ),
        (
            "kafkit",
            broker::ok(
                CONSUMER,
                &[
                    "--topic",
                    &topic,
                    "--num-records",
                    "2500",
                    "--show-detailed-stats",
                    "--reporting-interval",
                    "1",
                ],
                None,
            ),
        ),
    ] {
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some(CONSUMER_DETAILED_HEADER), "{who}");
        for line in lines {
            assert!(perf::consumer_detailed().is_match(line), "{who}: {line:?}");
        }
    }
}

/// argparse4j's error, as Kafka's producer perf test prints it wrapped: the text after
/// `error:`, unwrapped.
fn argparse_error(stderr: &str) -> String {
    let mut joined = String::new();
    for line in stderr
        .lines()
        .skip_while(|l| !l.starts_with("kafka-producer-perf-test:"))
    {
        // A line wrapped after an option's `--` goes on without a space.
        if !joined.is_empty() && !joined.ends_with('-') {
            joined.push(' ');
        }
        joined.push_str(line.trim());
    }
    let message = joined.split_once("error:").map_or("", |(_, m)| m);
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn bad_invocations_read_as_javas() {
    let Some(bootstrap) = broker::try_bootstrap() else {
        return;
    };
    let producer: &[&[&str]] = &[
        &["--topic", "t"],
        &["--topic", "t", "--num-records", "10", "--throughput", "-1"],
        &[
            "--topic",
            "t",
            "--num-records",
            "0",
            "--throughput",
            "-1",
            "--record-size",
            "1",
        ],
        &[
            "--topic",
            "t",
            "--num-records",
            "x",
            "--throughput",
            "-1",
            "--record-size",
            "1",
        ],
        &[
            "--topic",
            "t",
            "--num-records",
            "5",
            "--throughput",
            "-1",
            "--record-size",
            "1",
            "--payload-monotonic",
        ],
        &[
            "--topic",
            "t",
            "--num-records",
            "5",
            "--throughput",
            "-1",
            "--record-size",
            "1",
            "--bogus",
        ],
        &[
            "--topic",
            "t",
            "--num-records",
            "5",
            "--throughput",
            "-1",
            "--record-size",
            "1",
            "--warmup-records",
            "5",
        ],
    ];
    for args in producer {
        let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
        all.extend_from_slice(args);
        let java = broker::java_tool(JAVA_PRODUCER, &all);
        assert_eq!(java.status.code(), Some(1), "Java {args:?}");
        let expected = argparse_error(&text(&java.stderr));
        let ours = broker::run(PRODUCER, args, None);
        assert_eq!(ours.status.code(), Some(2), "{args:?}");
        assert_eq!(
            text(&ours.stderr),
            format!("{expected} (see {PRODUCER} --help)\n"),
            "{args:?}"
        );
    }
    let consumer: &[&[&str]] = &[
        &["--num-records", "1"],
        &["--topic", "t"],
        &[
            "--topic",
            "t",
            "--num-records",
            "1",
            "--consumer.config",
            "a",
            "--command-config",
            "b",
        ],
        &["--topic", "t", "--num-records", "1", "--bogus"],
    ];
    for args in consumer {
        let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
        all.extend_from_slice(args);
        let java = broker::java_tool(JAVA_CONSUMER, &all);
        assert_eq!(java.status.code(), Some(1), "Java {args:?}");
        let java_stderr = text(&java.stderr);
        let expected = java_stderr.lines().next().unwrap_or("");
        let ours = broker::run(CONSUMER, args, None);
        assert_eq!(ours.status.code(), Some(2), "{args:?}");
        assert_eq!(
            text(&ours.stderr),
            format!("{expected} (see {CONSUMER} --help)\n"),
            "{args:?}"
        );
    }
}

/// `--transactional-id` with `--transaction-duration-ms`, ours beside Java's: both commit
/// every record in transactions of the id, which a `read_committed` reader sees whole, and
/// both leave the id complete.
#[test]
fn transactional_runs_commit_every_record() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("perf-tx");
    broker::java_create_topic(&topic, 3);
    let id = format!("{topic}-id");
    let args = [
        "--topic",
        topic.as_str(),
        "--num-records",
        "5000",
        "--record-size",
        "50",
        "--throughput",
        "20000",
        "--transactional-id",
        id.as_str(),
        "--transaction-duration-ms",
        "50",
    ];
    let ours = broker::ok(PRODUCER, &args, None);
    check_producer_output("kafkit", &ours, 5000);
    let java = broker::java_ok(JAVA_PRODUCER, &args);
    check_producer_output("Java", &java, 5000);
    let committed = broker::ok(
        "kafka-console-consumer",
        &[
            "--topic",
            &topic,
            "--from-beginning",
            "--until-end",
            "--isolation-level",
            "read_committed",
        ],
        None,
    );
    assert_eq!(committed.lines().count(), 10_000);
    let described = broker::ok(
        "kafka-transactions",
        &["describe", "--transactional-id", &id],
        None,
    );
    assert!(
        described
            .lines()
            .nth(1)
            .is_some_and(|l| l.contains("CompleteCommit")),
        "{described}"
    );
}
