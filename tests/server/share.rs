//! Share groups through the server, with members that are not all ours: Kafka's Java
//! ConsoleShareConsumer, a Java `KafkaShareConsumer` with explicit acknowledgement
//! (`tests/server/apps/ShareClient.java`) and our `kafka-console-share-consumer --log-dir` on
//! the server's own directory are members of one share group and split a topic, each record
//! once. Java's ShareGroupCommand describes the group through the server.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::apps::{Jvm, apps, create_topic, server_tail};
use crate::common::server::{Background, Server};
use crate::common::{Kafkit, text};

const SHARE_CONSUMER: &str = "org.apache.kafka.tools.consumer.ConsoleShareConsumer";
const SHARE_GROUP_COMMAND: &str = "org.apache.kafka.tools.consumer.group.ShareGroupCommand";

#[test]
fn java_consumers_and_a_log_dir_consumer_split_a_topic_each_record_once() {
    let Some(apps) = apps() else { return };
    let k = Kafkit::new();
    let work = tempfile::tempdir().unwrap();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    create_topic(&k, &server, "jobs", 3);
    k.ok(
        "kafka-configs",
        &[
            "--entity-type",
            "groups",
            "--entity-name",
            "workers",
            "--alter",
            "--add-config",
            "share.auto.offset.reset=earliest",
        ],
        None,
    );
    let script = crate::common::broker::script();
    let script = script.to_str().unwrap();
    let mut console = Background::spawn(
        work.path(),
        "java-console",
        "bash",
        &[
            script,
            "tool",
            SHARE_CONSUMER,
            "--bootstrap-server",
            b,
            "--topic",
            "jobs",
            "--group",
            "workers",
            "--timeout-ms",
            "10000",
            "--command-property",
            "max.poll.records=5",
        ],
    );
    let mut client = Jvm::start(
        apps,
        work.path(),
        "java-client",
        "ShareClient",
        &[b, "workers", "jobs", "6000"],
    );
    let mut ours = Background::spawn(
        work.path(),
        "ours",
        env!("CARGO_BIN_EXE_kafka-console-share-consumer"),
        &[
            "--log-dir",
            k.log_dir().to_str().unwrap(),
            "--topic",
            "jobs",
            "--group",
            "workers",
            "--timeout-ms",
            "10000",
            "--command-property",
            "max.poll.records=5",
        ],
    );
    // Records once all three are members (Java's tool, through the server, says so).
    let start = Instant::now();
    loop {
        let out = crate::common::broker::java_tool(
            SHARE_GROUP_COMMAND,
            &[
                "--bootstrap-server",
                b,
                "--describe",
                "--group",
                "workers",
                "--members",
            ],
        );
        let members = text(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("workers "))
            .count();
        if members == 3 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "not three members: {}\n{}\n{}",
            text(&out.stdout),
            client.report(),
            server_tail(&server)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let input: String = (0..600).map(|i| format!("r{i}\n")).collect();
    for chunk in input.lines().collect::<Vec<_>>().chunks(100) {
        let lines: String = chunk.iter().map(|l| format!("{l}\n")).collect();
        k.produce("jobs", &[], lines.as_bytes());
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    let deadline = Duration::from_secs(120);
    assert!(
        console.wait(deadline).is_some(),
        "Java's console share consumer did not end"
    );
    assert!(ours.wait(deadline).is_some(), "ours did not end");
    let start = Instant::now();
    while client.child.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < deadline,
            "ShareClient did not end\n{}",
            client.report()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    for (name, out) in [
        ("java console", console.stdout()),
        ("java client", client.stdout()),
        ("ours", ours.stdout()),
    ] {
        assert!(
            !out.is_empty(),
            "{name} got nothing\n{}",
            server_tail(&server)
        );
        for value in out.lines() {
            assert!(
                value.starts_with('r') && value[1..].parse::<u32>().is_ok(),
                "{name} printed {value:?}"
            );
            if let Some(other) = seen.insert(value.to_string(), name) {
                panic!("{value} went to {other} and to {name}");
            }
        }
    }
    let expected: Vec<String> = (0..600).map(|i| format!("r{i}")).collect();
    let mut got: Vec<String> = seen.into_keys().collect();
    got.sort_by_key(|v| v[1..].parse::<u32>().unwrap());
    assert_eq!(got, expected);
    // Nothing left for the group.
    let out = k.ok(
        "kafka-console-share-consumer",
        &[
            "--topic",
            "jobs",
            "--group",
            "workers",
            "--timeout-ms",
            "300",
        ],
        None,
    );
    assert_eq!(out, "");
}
