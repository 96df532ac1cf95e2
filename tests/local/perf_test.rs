//! `kafka-producer-perf-test` and `kafka-consumer-perf-test` on the embedded log: Kafka's line
//! formats (`common::perf`, checked against the Java tools in `tests/remote/perf_test.rs`),
//! exact counts (what the producer says it sent is what `kafka-get-offsets` finds, and the
//! consumer reads exactly what is there), and a table of bad invocations per tool.

use crate::common;

use common::perf::{self, CONSUMER_DETAILED_HEADER, CONSUMER_HEADER};
use common::{Kafkit, text};

const PRODUCER: &str = "kafka-producer-perf-test";
const CONSUMER: &str = "kafka-consumer-perf-test";

/// The records the topic's partitions hold, added up (`kafka-get-offsets`).
fn total(k: &Kafkit, topic: &str) -> u64 {
    k.ok("kafka-get-offsets", &["--topic", topic], None)
        .lines()
        .map(|l| l.rsplit(':').next().unwrap().parse::<u64>().unwrap())
        .sum()
}

fn create(k: &Kafkit, topic: &str, partitions: u32) {
    let partitions = partitions.to_string();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", topic, "--partitions", &partitions],
        None,
    );
}

#[test]
fn producer_sends_exactly_the_records_asked_in_kafkas_format() {
    let k = Kafkit::new();
    create(&k, "perf", 3);
    let out = k.ok(
        PRODUCER,
        &[
            "--topic",
            "perf",
            "--num-records",
            "1000",
            "--record-size",
            "100",
            "--throughput",
            "-1",
        ],
        None,
    );
    let lines: Vec<&str> = out.lines().collect();
    let last = lines.last().expect("a summary line");
    assert_eq!(perf::count(&perf::producer_total(false), last), 1000);
    for line in &lines[..lines.len() - 1] {
        assert!(perf::producer_window().is_match(line), "{line:?}");
    }
    assert_eq!(total(&k, "perf"), 1000);
    // Every value is 100 random capital letters, as Kafka's tool makes them.
    let values = k.consume("perf", 1000, &[]);
    assert_eq!(values.lines().count(), 1000);
    for v in values.lines() {
        assert!(
            v.len() == 100 && v.bytes().all(|b| b.is_ascii_uppercase()),
            "{v:?}"
        );
    }
}

#[test]
fn throttled_producer_reports_windows_and_numbers_its_records() {
    let k = Kafkit::new();
    // The topic is created on first use, as a broker with auto.create.topics.enable does.
    let out = k.ok(
        PRODUCER,
        &[
            "--topic",
            "mono",
            "--num-records",
            "300",
            "--payload-monotonic",
            "--throughput",
            "400",
            "--reporting-interval",
            "200",
            "--warmup-records",
            "50",
        ],
        None,
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "Warmup first 50 records. Steady state results will print after the complete test summary."
    );
    let n = lines.len();
    assert_eq!(perf::count(&perf::producer_total(false), lines[n - 2]), 300);
    assert_eq!(perf::count(&perf::producer_total(true), lines[n - 1]), 250);
    let windows = lines[1..n - 2]
        .iter()
        .filter(|l| **l != "In steady state.")
        .inspect(|l| assert!(perf::producer_window().is_match(l), "{l:?}"))
        .count();
    assert!(
        windows >= 1,
        "0.75 s at 400 records/s reports every 200 ms: {out}"
    );
    assert!(out.contains("In steady state.\n"), "{out}");
    let mut values: Vec<u64> = k
        .consume("mono", 300, &[])
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    values.sort_unstable();
    assert_eq!(values, (0..300).collect::<Vec<u64>>());
}

#[test]
fn producer_payload_file_and_metrics() {
    let k = Kafkit::new();
    create(&k, "lines", 1);
    let file = k.path("payloads.txt");
    std::fs::write(&file, "alpha,beta,,gamma,").unwrap();
    let out = k.ok(
        PRODUCER,
        &[
            "--topic",
            "lines",
            "--num-records",
            "50",
            "--payload-file",
            file.to_str().unwrap(),
            "--payload-delimiter",
            ",",
            "--throughput",
            "-1",
            "--print-metrics",
            "--command-property",
            "acks=1",
            "linger.ms=0",
        ],
        None,
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        format!("Reading payloads from: {}", file.display())
    );
    assert_eq!(lines[1], "Number of records read: 3");
    assert_eq!(perf::count(&perf::producer_total(false), lines[2]), 50);
    assert_eq!(lines[3], "");
    assert!(lines[4].starts_with("Metric Name "), "{out}");
    assert!(lines[4].ends_with("   Value"), "{out}");
    for row in &lines[5..] {
        assert!(perf::metric_row().is_match(row), "{row:?}");
    }
    assert!(out.contains("producer-metrics:record-send-total:{client-id=perf-producer-client}"));
    assert!(out.contains(" : 50.000\n"), "{out}");
    for v in k.consume("lines", 50, &[]).lines() {
        assert!(["alpha", "beta", "gamma"].contains(&v), "{v:?}");
    }
}

#[test]
fn consumer_reads_exactly_what_is_there() {
    let k = Kafkit::new();
    create(&k, "c", 2);
    let input: String = (0..500).map(|i| format!("k{i}\tvalue-{i}\n")).collect();
    k.produce(
        "c",
        &["--reader-property", "parse.key=true"],
        input.as_bytes(),
    );
    let bytes: u64 = (0..500)
        .map(|i: u32| format!("k{i}value-{i}").len() as u64)
        .sum();
    let out = k.ok(
        CONSUMER,
        &["--topic", "c", "--num-records", "500", "--group", "g1"],
        None,
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], CONSUMER_HEADER);
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(perf::count(&perf::consumer_totals(), lines[1]), 500);
    let mb: f64 = lines[1].split(", ").nth(2).unwrap().parse().unwrap();
    assert_eq!(
        format!("{mb:.4}"),
        format!("{:.4}", bytes as f64 / 1048576.0)
    );
    // The group committed what it read: nothing is left for it.
    let lag = k.ok(
        "kafka-consumer-groups",
        &["--describe", "--group", "g1"],
        None,
    );
    assert!(
        lag.lines()
            .skip(2)
            .all(|l| l.split_whitespace().nth(5) == Some("0")),
        "{lag}"
    );

    // Asked for more than there is: all of it, then the warning after --timeout.
    let run = k.run(
        CONSUMER,
        &[
            "--include",
            "c|other",
            "--num-records",
            "900",
            "--timeout",
            "500",
            "--hide-header",
            "--date-format",
            "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
        ],
        None,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let stdout = text(&run.stdout);
    let line = stdout.trim_end();
    let time = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{4}";
    let re = regex::Regex::new(&format!(r"^{time}, {time}, [\d.]+, [\d.]+, (\d+), ")).unwrap();
    assert_eq!(perf::count(&re, line), 500, "{stdout}");
    assert_eq!(
        text(&run.stderr),
        "WARNING: Exiting before consuming the expected number of records: timeout (500 ms) exceeded. You can use the --timeout option to increase the timeout.\n"
    );
}

#[test]
fn consumer_detailed_stats_and_deprecated_options() {
    let k = Kafkit::new();
    create(&k, "d", 1);
    let input: String = (0..200).map(|i| format!("{i}\n")).collect();
    k.produce("d", &[], input.as_bytes());
    let config = k.path("consumer.properties");
    std::fs::write(&config, "client.id=mine\n").unwrap();
    let run = k.run(
        CONSUMER,
        &[
            "--topic",
            "d",
            "--messages",
            "200",
            "--consumer.config",
            config.to_str().unwrap(),
            "--show-detailed-stats",
            "--reporting-interval",
            "1",
            "--print-metrics",
        ],
        None,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(
        text(&run.stderr),
        "Warning: --messages is deprecated. Use --num-records instead.\nWarning: --consumer.config is deprecated. Use --command-config instead.\n"
    );
    let out = text(&run.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], CONSUMER_DETAILED_HEADER);
    let metrics = lines
        .iter()
        .position(|l| l.is_empty())
        .expect("the metrics");
    for line in &lines[1..metrics] {
        assert!(perf::consumer_detailed().is_match(line), "{line:?}");
    }
    assert!(
        out.contains(
            "consumer-fetch-manager-metrics:records-consumed-total:{client-id=mine} : 200.000"
        ),
        "{out}"
    );
}

/// Every bad invocation: one line on stderr, exit 2, nothing written to the log dir.
#[test]
fn bad_invocations_change_nothing() {
    let k = Kafkit::new();
    create(&k, "t", 1);
    let before = k.files();
    let base = ["--topic", "t", "--num-records", "10", "--throughput", "-1"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        args
    };
    let producer: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--topic", "t"], "argument --throughput is required"),
        (
            with(&[]),
            "one of the arguments --record-size --payload-file --payload-monotonic is required",
        ),
        (
            with(&["--record-size", "0"]),
            "--record-size should be greater than zero.",
        ),
        (
            with(&["--record-size", "10", "--payload-monotonic"]),
            "argument --payload-monotonic: not allowed with argument --record-size",
        ),
        (
            with(&["--record-size", "x"]),
            "argument --record-size: could not convert 'x' to Integer (For input string: \"x\")",
        ),
        (
            vec![
                "--topic",
                "t",
                "--num-records",
                "0",
                "--throughput",
                "-1",
                "--record-size",
                "1",
            ],
            "--num-records should be greater than zero.",
        ),
        (
            with(&["--record-size", "1", "--warmup-records", "10"]),
            "The value for --warmup-records must be strictly fewer than the number of records in the test, --num-records.",
        ),
        (
            with(&["--record-size", "1", "--reporting-interval", "0"]),
            "--reporting-interval should be greater than zero.",
        ),
        (
            with(&["--record-size", "1", "--transaction-duration-ms", "0"]),
            "--transaction-duration-ms should be greater than zero.",
        ),
        (
            with(&[
                "--record-size",
                "1",
                "--command-property",
                "a=1",
                "--producer-props",
                "b=2",
            ]),
            "--command-property and --producer-props cannot be specified together.",
        ),
        (
            with(&["--record-size", "1", "--command-property", "novalue"]),
            "Invalid property: novalue",
        ),
        (
            with(&["--record-size", "1", "--command-property", "acks=7"]),
            "Invalid value 7 for configuration acks: String must be one of: all, -1, 0, 1",
        ),
        (
            with(&[
                "--record-size",
                "1",
                "--transactional-id",
                "x",
                "--command-property",
                "transaction.timeout.ms=soon",
            ]),
            "Invalid value soon for configuration transaction.timeout.ms: Not a number of type INT",
        ),
        (
            with(&["--record-size", "1", "--transactional-id", ""]),
            "The transactional id must not be empty.",
        ),
        (
            with(&[
                "--record-size",
                "1",
                "--transactional-id",
                "x",
                "--command-property",
                "enable.idempotence=false",
            ]),
            "Cannot set a transactional.id without also enabling idempotence.",
        ),
        (
            with(&["--record-size", "1", "--bogus"]),
            "unrecognized arguments: '--bogus'",
        ),
        (
            vec!["--topic", "--num-records", "1"],
            "argument --topic: expected one argument",
        ),
    ];
    for (args, message) in producer {
        let stderr = k.fails(PRODUCER, &args, None, 2);
        assert_eq!(
            stderr,
            format!("{message} (see {PRODUCER} --help)\n"),
            "{args:?}"
        );
    }
    let consumer: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--num-records", "1"],
            "Exactly one of the following arguments is required: [topic], [include]",
        ),
        (
            vec!["--topic", "t", "--include", "t", "--num-records", "1"],
            "Exactly one of the following arguments is required: [topic], [include]",
        ),
        (
            vec!["--topic", "t"],
            "Exactly one of the following arguments is required: [messages], [num-records]",
        ),
        (
            vec!["--topic", "t", "--num-records", "1", "--messages", "1"],
            "Exactly one of the following arguments is required: [messages], [num-records]",
        ),
        (
            vec![
                "--topic",
                "t",
                "--num-records",
                "1",
                "--consumer.config",
                "a",
                "--command-config",
                "b",
            ],
            "Option \"[consumer.config]\" can't be used with option \"[command-config]\"",
        ),
        (
            vec!["--topic", "t", "--num-records", "x"],
            "Cannot parse argument 'x' of option num-records",
        ),
        (
            vec!["--topic", "t", "--num-records", "1", "--fetch-size", "x"],
            "Cannot parse argument 'x' of option fetch-size",
        ),
        (
            vec![
                "--topic",
                "t",
                "--num-records",
                "1",
                "--reporting-interval",
                "0",
            ],
            "Reporting interval must be greater than 0.",
        ),
        (
            vec![
                "--topic",
                "t",
                "--num-records",
                "1",
                "--reporting-interval",
                "-5",
            ],
            "Cannot parse argument '-5' of option reporting-interval",
        ),
        (
            vec![
                "--topic",
                "t",
                "--num-records",
                "1",
                "--date-format",
                "yyyy-bb",
            ],
            "Illegal pattern character 'b'",
        ),
        (
            vec!["--topic", "t", "--num-records", "1", "--bogus"],
            "bogus is not a recognized option",
        ),
        (
            vec!["--include", "(", "--num-records", "1"],
            "( is an invalid regex. (Opening parenthesis without closing parenthesis)",
        ),
    ];
    for (args, message) in consumer {
        let stderr = k.fails(CONSUMER, &args, None, 2);
        assert_eq!(
            stderr,
            format!("{message} (see {CONSUMER} --help)\n"),
            "{args:?}"
        );
    }
    assert_eq!(k.files(), before, "a bad invocation changed the log dir");
}

/// A topic name Kafka refuses fails the consumer test before it joins its group (issue 24,
/// item 11): the failed command leaves no group directory behind.
#[test]
fn an_invalid_topic_name_leaves_no_group_behind() {
    let k = Kafkit::new();
    k.ok("kafka-topics", &["--create", "--topic", "t"], None);
    let err = k.fails(
        CONSUMER,
        &["--topic", "bad/x", "--num-records", "10"],
        None,
        1,
    );
    assert!(err.contains("Topic name is invalid: 'bad/x'"), "{err}");
    let groups = k.log_dir().join("groups");
    let left: Vec<_> = std::fs::read_dir(&groups)
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

/// `--transactional-id` on the embedded log: the records go in transactions of about
/// `--transaction-duration-ms` each, committed, and a `read_committed` reader sees every one;
/// the id is left Empty at its next epoch. A second run of the same id goes on from there.
#[test]
fn transactions_on_the_embedded_log() {
    let k = Kafkit::new();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "tx", "--partitions", "2"],
        None,
    );
    let run = || {
        k.ok(
            PRODUCER,
            &[
                "--topic",
                "tx",
                "--num-records",
                "3000",
                "--throughput",
                "10000",
                "--record-size",
                "10",
                "--transactional-id",
                "perf-tx",
                "--transaction-duration-ms",
                "20",
            ],
            None,
        )
    };
    let out = run();
    assert!(out.contains("3000 records sent"), "{out}");
    let committed = k.ok(
        "kafka-console-consumer",
        &[
            "--topic",
            "tx",
            "--from-beginning",
            "--until-end",
            "--isolation-level",
            "read_committed",
        ],
        None,
    );
    assert_eq!(committed.lines().count(), 3000);
    let describe = k.ok(
        "kafka-transactions",
        &["describe", "--transactional-id", "perf-tx"],
        None,
    );
    let row: Vec<&str> = describe
        .lines()
        .nth(1)
        .unwrap()
        .split('\t')
        .map(str::trim)
        .collect();
    assert_eq!(row[3..5], ["0", "CompleteCommit"], "{describe}");
    // Markers: more offsets than records, two transactions' worth at least.
    let ends = k.ok("kafka-get-offsets", &["--topic", "tx"], None);
    let end: i64 = ends
        .lines()
        .map(|l| l.rsplit(':').next().unwrap().parse::<i64>().unwrap())
        .sum();
    assert!(end >= 3000 + 2 * 2, "{ends}");
    run();
    let describe = k.ok(
        "kafka-transactions",
        &["describe", "--transactional-id", "perf-tx"],
        None,
    );
    let row: Vec<&str> = describe
        .lines()
        .nth(1)
        .unwrap()
        .split('\t')
        .map(str::trim)
        .collect();
    assert_eq!(row[3..5], ["1", "CompleteCommit"], "{describe}");
}
