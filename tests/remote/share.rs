//! `kafka-console-share-consumer --bootstrap-server` against a real Kafka 4.3.1 broker, whose
//! share groups (KIP-932) are the reference: two of ours in one group split a topic, each
//! record once, while both run; what ours prints is what Java's ConsoleShareConsumer prints;
//! release, reject and the delivery count limit behave as Kafka's.

use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::broker::{self, java_ok, java_produce};
use crate::common::text;

const TOOL: &str = "kafka-console-share-consumer";
const SHARE_CONSUMER: &str = "org.apache.kafka.tools.consumer.ConsoleShareConsumer";
const SHARE_GROUP_COMMAND: &str = "org.apache.kafka.tools.consumer.group.ShareGroupCommand";

/// The group reads from the earliest record (Kafka's default is the latest), with `more`
/// configs.
fn from_earliest(group: &str, more: &str) {
    let config = format!("share.auto.offset.reset=earliest{more}");
    let out = broker::ok(
        "kafka-configs",
        &[
            "--entity-type",
            "groups",
            "--entity-name",
            group,
            "--alter",
            "--add-config",
            &config,
        ],
        None,
    );
    assert_eq!(
        out,
        format!("Completed updating config for group {group}.\n")
    );
}

fn spawn_ours(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_kafka-console-share-consumer"))
        .args(["--bootstrap-server", &broker::bootstrap()])
        .args(args)
        .env_remove("KAFKIT_LOG_DIR")
        .env_remove("KAFKIT_PROFILE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the share consumer starts")
}

const PRINT: [&str; 8] = [
    "--formatter-property",
    "print.partition=true",
    "--formatter-property",
    "print.offset=true",
    "--formatter-property",
    "print.delivery=true",
    "--formatter-property",
    "print.key=true",
];

#[test]
fn two_members_split_a_topic_each_record_once() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("share-split");
    let group = format!("{topic}-workers");
    broker::java_create_topic(&topic, 2);
    from_earliest(&group, "");
    let mut args = vec!["--topic", topic.as_str(), "--group", group.as_str()];
    args.extend([
        "--timeout-ms",
        "6000",
        "--command-property",
        "max.poll.records=10",
    ]);
    args.extend(PRINT);
    let members: Vec<Child> = (0..2).map(|_| spawn_ours(&args)).collect();
    // Both members have their partition (Java's tool says) before any record exists.
    let start = Instant::now();
    loop {
        let described = java_ok(
            SHARE_GROUP_COMMAND,
            &["--describe", "--group", &group, "--members"],
        );
        let assigned = described
            .lines()
            .filter(|l| l.starts_with(&group) && l.contains(&format!("{topic}:")))
            .count();
        if assigned == 2 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the two members were never both assigned: {described}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let lines: Vec<String> = (0..400).map(|i| format!("k{i}\tv{i}")).collect();
    java_produce(&topic, &lines, &["--property", "parse.key=true"]);
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for member in members {
        let out = member.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let printed = text(&out.stdout);
        assert!(!printed.is_empty(), "each member reads while both run");
        for line in printed.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields[2], "Delivery:1", "{line}");
            assert!(seen.insert(fields[3].to_string()), "{line} printed twice");
        }
    }
    let all: BTreeSet<String> = (0..400).map(|i| format!("k{i}")).collect();
    assert_eq!(seen, all);
}

#[test]
fn ours_prints_what_javas_console_share_consumer_prints() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("share-print");
    broker::java_create_topic(&topic, 1);
    let lines: Vec<String> = (0..5).map(|i| format!("k{i}\tv{i}")).collect();
    java_produce(&topic, &lines, &["--property", "parse.key=true"]);
    let read = |group: &str, java: bool| -> String {
        from_earliest(group, ",share.delivery.count.limit=2");
        let mut args = vec!["--topic", topic.as_str(), "--group", group, "--release"];
        args.extend(PRINT);
        args.extend(["--max-messages", "10", "--timeout-ms", "20000"]);
        if java {
            java_ok(SHARE_CONSUMER, &args)
        } else {
            broker::ok(TOOL, &args, None)
        }
    };
    // Released twice each, then archived at the delivery count limit.
    let ours = read(&format!("{topic}-ours"), false);
    let java = read(&format!("{topic}-java"), true);
    assert_eq!(ours, java);
    let expected: String = (1..=2)
        .flat_map(|d| {
            (0..5).map(move |i| format!("Partition:0\tOffset:{i}\tDelivery:{d}\tk{i}\tv{i}\n"))
        })
        .collect();
    assert_eq!(ours, expected);
    // Archived: nothing is left for the group.
    let out = broker::run(
        TOOL,
        &[
            "--topic",
            &topic,
            "--group",
            &format!("{topic}-ours"),
            "--timeout-ms",
            "2000",
        ],
        None,
    );
    assert_eq!(text(&out.stdout), "");
    assert_eq!(text(&out.stderr), "Processed a total of 0 messages\n");
}

#[test]
fn rejected_records_are_archived_and_accepted_ones_done() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("share-reject");
    broker::java_create_topic(&topic, 1);
    java_produce(&topic, &["a", "b", "c"], &[]);
    let group = format!("{topic}-g");
    from_earliest(&group, "");
    // Long enough for a first join (the group initializes the partition's state first); the
    // reads that stop at --max-messages end sooner.
    let read = |timeout: &str, extra: &[&str]| {
        let mut args = vec![
            "--topic",
            topic.as_str(),
            "--group",
            group.as_str(),
            "--timeout-ms",
            timeout,
        ];
        args.extend(extra);
        broker::ok(TOOL, &args, None)
    };
    assert_eq!(read("15000", &["--reject", "--max-messages", "1"]), "a\n");
    // b and c were acquired with a and released at the close: delivered again.
    assert_eq!(read("15000", &["--max-messages", "2"]), "b\nc\n");
    assert_eq!(read("3000", &[]), "");
    // Java's consumer in the group sees nothing either.
    let java = broker::java_tool(
        SHARE_CONSUMER,
        &[
            "--bootstrap-server",
            &broker::bootstrap(),
            "--topic",
            &topic,
            "--group",
            &group,
            "--timeout-ms",
            "3000",
        ],
    );
    assert_eq!(text(&java.stdout), "");
}

/// Ours and Java's ShareGroupCommand, on the same group at the same moment: the same stdout.
fn same_as_java(args: &[&str]) -> String {
    let (ours, java) = both(args);
    assert_eq!(ours, java, "{args:?}");
    ours
}

/// [`same_as_java`] for a table whose rows Java prints in hash-map order (ours are sorted).
fn same_rows_as_java(args: &[&str]) {
    let (ours, java) = both(args);
    assert_eq!(
        crate::common::sorted(&ours),
        crate::common::sorted(&java),
        "{args:?}"
    );
}

fn both(args: &[&str]) -> (String, String) {
    let ours = broker::run("kafka-share-groups", args, None);
    assert!(ours.status.success(), "{args:?}: {}", text(&ours.stderr));
    let java = broker::java_tool(
        SHARE_GROUP_COMMAND,
        &[&["--bootstrap-server", &broker::bootstrap()], args].concat(),
    );
    (text(&ours.stdout), text(&java.stdout))
}

#[test]
fn kafka_share_groups_prints_what_javas_share_group_command_prints() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("share-admin");
    let group = format!("{topic}-g");
    broker::java_create_topic(&topic, 2);
    from_earliest(&group, "");
    let lines: Vec<String> = (0..10).map(|i| format!("k{i}\tv{i}")).collect();
    java_produce(&topic, &lines, &["--property", "parse.key=true"]);
    broker::ok(
        TOOL,
        &[
            "--topic",
            &topic,
            "--group",
            &group,
            "--max-messages",
            "4",
            "--timeout-ms",
            "15000",
        ],
        None,
    );
    for view in [
        &[][..],
        &["--verbose"],
        &["--offsets", "--verbose"],
        &["--state"],
        &["--state", "--verbose"],
    ] {
        let args = [&["--describe", "--group", group.as_str()][..], view].concat();
        let out = same_as_java(&args);
        assert!(out.contains(&group), "{out}");
    }
    // A live member: its id, host, client id and assignment as Java shows them.
    let mut member = spawn_ours(&[
        "--topic",
        &topic,
        "--group",
        &group,
        "--timeout-ms",
        "60000",
    ]);
    let start = Instant::now();
    while !broker::ok(
        "kafka-share-groups",
        &["--describe", "--group", &group, "--members"],
        None,
    )
    .contains(&format!("{topic}:"))
    {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the member was never assigned"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    same_as_java(&["--describe", "--group", &group, "--members"]);
    same_as_java(&["--describe", "--group", &group, "--members", "--verbose"]);
    same_as_java(&["--describe", "--group", &group, "--state", "--verbose"]);
    // Refused while it lives.
    let out = broker::run(
        "kafka-share-groups",
        &[
            "--reset-offsets",
            "--group",
            &group,
            "--topic",
            &topic,
            "--to-earliest",
            "--execute",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("Error: Share group '{group}' is not empty.\n")
    );
    // Ended as Ctrl-C ends it: it leaves the group at once.
    crate::common::signal(&member, "-TERM");
    member.wait().unwrap();
    let start = Instant::now();
    while broker::ok(
        "kafka-share-groups",
        &["--describe", "--group", &group, "--state"],
        None,
    )
    .contains("Stable")
    {
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "the killed member never left"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    same_rows_as_java(&[
        "--reset-offsets",
        "--group",
        &group,
        "--topic",
        &topic,
        "--to-earliest",
        "--dry-run",
    ]);
    let plan = broker::ok(
        "kafka-share-groups",
        &[
            "--reset-offsets",
            "--group",
            &group,
            "--topic",
            &format!("{topic}:1"),
            "--to-latest",
            "--execute",
        ],
        None,
    );
    let rows: Vec<&str> = plan.lines().collect();
    assert_eq!(rows.len(), 3, "{plan}");
    assert!(
        rows[1].ends_with("NEW-OFFSET") && rows[2].starts_with(&group),
        "{plan}"
    );
    same_as_java(&["--describe", "--group", &group]);
    let out = broker::ok(
        "kafka-share-groups",
        &["--delete-offsets", "--group", &group, "--topic", &topic],
        None,
    );
    assert_eq!(
        out,
        format!(
            "\nTOPIC{}STATUS\n{topic} Successful\n",
            " ".repeat(topic.len() - 4)
        )
    );
    // Nothing is left to delete: both say so alike.
    same_as_java(&["--delete-offsets", "--group", &group, "--topic", &topic]);
    same_as_java(&["--describe", "--group", &group]);
    let out = broker::ok("kafka-share-groups", &["--delete", "--group", &group], None);
    assert_eq!(
        out,
        format!("Deletion of requested share groups ('{group}') was successful.\n")
    );
    let out = broker::run(
        "kafka-share-groups",
        &["--describe", "--group", &group],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("GroupIdNotFoundException"),
        "{}",
        text(&out.stderr)
    );
}

/// Ours and Java's ShareConsumerPerformance read the same records through their own groups:
/// the same header and counts.
#[test]
fn share_consumer_perf_test_reads_what_javas_reads() {
    let Some(_) = broker::try_bootstrap() else {
        return;
    };
    let topic = broker::unique_topic("share-perf");
    broker::java_create_topic(&topic, 2);
    let lines: Vec<String> = (0..500).map(|i| format!("value-{i:04}")).collect();
    java_produce(&topic, &lines, &[]);
    let mut outputs = Vec::new();
    for who in ["ours", "java"] {
        let group = format!("{topic}-{who}");
        from_earliest(&group, "");
        let args = [
            "--topic",
            topic.as_str(),
            "--group",
            group.as_str(),
            "--num-records",
            "500",
            "--timeout",
            "30000",
        ];
        let out = if who == "java" {
            java_ok("org.apache.kafka.tools.ShareConsumerPerformance", &args)
        } else {
            broker::ok("kafka-share-consumer-perf-test", &args, None)
        };
        let rows: Vec<String> = out.lines().map(str::to_string).collect();
        assert_eq!(rows.len(), 2, "{who}: {out}");
        let fields: Vec<String> = rows[1].split(", ").map(str::to_string).collect();
        // The MB and record counts; times and rates differ.
        outputs.push((rows[0].clone(), fields[2].clone(), fields[5].clone()));
    }
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(outputs[0].2, "500");
}
