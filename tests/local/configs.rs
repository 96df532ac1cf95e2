//! `kafka-configs` on the embedded log: describe and alter of topic configs with Kafka's output
//! (`tests/remote/configs.rs` checks the same layout against Kafka's `ConfigCommand`), retention
//! removing expired segments as soon as it is altered, the broker defaults in
//! `config.properties`, 249-character topic names, and a table of bad invocations, each of
//! which changes nothing.

use crate::common;

use common::{Kafkit, text};

const TOOL: &str = "kafka-configs";
const DAY_MS: i64 = 86_400_000;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn create(k: &Kafkit, topic: &str, configs: &[&str]) {
    let mut args = vec!["--create", "--topic", topic];
    for c in configs {
        args.extend(["--config", c]);
    }
    k.ok("kafka-topics", &args, None);
}

#[test]
fn describe_and_alter_topic_configs() {
    let k = Kafkit::new();
    create(&k, "t1", &["retention.ms=1000000"]);
    create(&k, "t2", &[]);
    assert_eq!(
        k.ok(TOOL, &["--describe", "--topic", "t1"], None),
        "Dynamic configs for topic t1 are:\n  retention.ms=1000000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000000}\n"
    );
    assert_eq!(
        k.ok(
            TOOL,
            &[
                "--alter",
                "--entity-type",
                "topics",
                "--entity-name",
                "t1",
                "--add-config",
                "segment.bytes=2000000,leader.replication.throttled.replicas=[0:0,1:0]"
            ],
            None
        ),
        "Completed updating config for topic t1.\n"
    );
    assert_eq!(
        k.ok(TOOL, &["--describe", "--topic", "t1"], None),
        "Dynamic configs for topic t1 are:\n  leader.replication.throttled.replicas=0:0,1:0 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:leader.replication.throttled.replicas=0:0,1:0}\n  retention.ms=1000000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000000}\n  segment.bytes=2000000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.bytes=2000000, DEFAULT_CONFIG:log.segment.bytes=1073741824}\n"
    );
    k.ok(
        TOOL,
        &[
            "--alter",
            "--topic",
            "t1",
            "--delete-config",
            "leader.replication.throttled.replicas,segment.bytes",
        ],
        None,
    );
    let file = k.path("add.properties");
    std::fs::write(&file, "# from a file\nflush.ms = 5\n").unwrap();
    k.ok(
        TOOL,
        &[
            "--alter",
            "--topic",
            "t2",
            "--add-config-file",
            file.to_str().unwrap(),
        ],
        None,
    );
    // Every topic, in name order.
    assert_eq!(
        k.ok(TOOL, &["--describe", "--entity-type", "topics"], None),
        "Dynamic configs for topic t1 are:\n  retention.ms=1000000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000000}\nDynamic configs for topic t2 are:\n  flush.ms=5 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:flush.ms=5}\n"
    );
    assert_eq!(
        k.ok(TOOL, &["--describe", "--topic", "nope"], None),
        "The topic 'nope' doesn't exist and doesn't have dynamic config.\n"
    );
}

#[test]
fn describe_all_prints_defaults_with_their_sources() {
    let k = Kafkit::new();
    create(&k, "t", &["retention.ms=1000000"]);
    let out = k.ok(TOOL, &["--describe", "--topic", "t", "--all"], None);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "All configs for topic t are:");
    // Kafka's 33 documented topic configs, sorted.
    assert_eq!(lines.len(), 34, "{out}");
    for line in [
        "  cleanup.policy=delete sensitive=false synonyms={DEFAULT_CONFIG:log.cleanup.policy=delete}",
        "  flush.ms=9223372036854775807 sensitive=false synonyms={}",
        "  follower.replication.throttled.replicas= sensitive=false synonyms={}",
        "  retention.ms=1000000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000000}",
        "  segment.bytes=1073741824 sensitive=false synonyms={DEFAULT_CONFIG:log.segment.bytes=1073741824}",
    ] {
        assert!(lines.contains(&line), "{line} missing from\n{out}");
    }
    let mut sorted = lines[1..].to_vec();
    sorted.sort();
    assert_eq!(sorted, lines[1..]);
}

#[test]
fn altering_retention_removes_expired_segments_at_once() {
    let k = Kafkit::new();
    // Small segments (Kafka's internal override, without segment.bytes' 1 MiB floor), so that
    // the old records fill segments of their own; no retention while producing.
    create(&k, "r", &["retention.ms=-1", "internal.segment.bytes=1000"]);
    let old = now_ms() - 10 * DAY_MS;
    let pad = "x".repeat(200);
    let old_records: String = (0..8)
        .map(|i| format!("{{\"value\":\"old{i}-{pad}\",\"timestamp\":{old}}}\n"))
        .collect();
    k.produce("r", &["--input", "json"], old_records.as_bytes());
    let now = now_ms();
    let new_records = format!(
        "{{\"value\":\"new1\",\"timestamp\":{now}}}\n{{\"value\":\"new2\",\"timestamp\":{now}}}\n"
    );
    k.produce("r", &["--input", "json"], new_records.as_bytes());
    let logs = || {
        let mut names: Vec<String> = std::fs::read_dir(k.path("r-0"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".log"))
            .collect();
        names.sort();
        names
    };
    assert!(
        logs().len() > 1,
        "the old records fill segments: {:?}",
        logs()
    );
    assert!(logs().contains(&"00000000000000000000.log".to_string()));
    k.ok(
        TOOL,
        &[
            "--alter",
            "--topic",
            "r",
            "--add-config",
            "retention.ms=86400000",
        ],
        None,
    );
    assert_eq!(logs(), vec!["00000000000000000008.log".to_string()]);
    let out = k.ok(
        "kafka-console-consumer",
        &[
            "--topic",
            "r",
            "--from-beginning",
            "--timeout-ms",
            "500",
            "--formatter-property",
            "print.offset=true",
        ],
        None,
    );
    assert_eq!(out, "Offset:8\tnew1\nOffset:9\tnew2\n");
    // retention.bytes too: one byte keeps only the active segment.
    k.produce("r", &["--input", "json"], old_records.as_bytes());
    assert!(logs().len() > 1);
    k.ok(
        TOOL,
        &[
            "--alter",
            "--topic",
            "r",
            "--add-config",
            "retention.bytes=1,retention.ms=-1",
        ],
        None,
    );
    assert_eq!(logs().len(), 1, "{:?}", logs());
}

#[test]
fn topics_with_249_character_names() {
    let k = Kafkit::new();
    let name = "n".repeat(249);
    create(&k, &name, &[]);
    k.ok(
        TOOL,
        &[
            "--alter",
            "--topic",
            &name,
            "--add-config",
            "retention.ms=1234",
        ],
        None,
    );
    assert_eq!(
        k.ok(TOOL, &["--describe", "--topic", &name], None),
        format!(
            "Dynamic configs for topic {name} are:\n  retention.ms=1234 sensitive=false synonyms={{DYNAMIC_TOPIC_CONFIG:retention.ms=1234}}\n"
        )
    );
}

#[test]
fn broker_defaults_live_in_config_properties() {
    let k = Kafkit::new();
    assert_eq!(
        k.ok(TOOL, &["--describe", "--entity-type", "brokers"], None),
        "Dynamic configs for broker 0 are:\nDefault configs for brokers in the cluster are:\n"
    );
    assert_eq!(
        k.ok(
            TOOL,
            &[
                "--alter",
                "--entity-type",
                "brokers",
                "--entity-default",
                "--add-config",
                "num.partitions=3"
            ],
            None
        ),
        "Completed updating default config for brokers in the cluster.\n"
    );
    assert_eq!(
        k.ok(TOOL, &["--describe", "--broker-defaults"], None),
        "Default configs for brokers in the cluster are:\n  num.partitions=3 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:num.partitions=3}\n"
    );
    let settings = std::fs::read_to_string(k.path("config.properties")).unwrap();
    assert!(settings.contains("num.partitions=3\n"), "{settings}");
    k.ok("kafka-topics", &["--create", "--topic", "three"], None);
    let out = k.ok("kafka-topics", &["--describe", "--topic", "three"], None);
    assert!(out.contains("PartitionCount: 3"), "{out}");
    k.ok(
        TOOL,
        &[
            "--alter",
            "--broker-defaults",
            "--delete-config",
            "num.partitions",
        ],
        None,
    );
    assert_eq!(
        k.ok(TOOL, &["--describe", "--broker-defaults"], None),
        "Default configs for brokers in the cluster are:\n"
    );
    assert_eq!(
        k.ok(TOOL, &["--describe", "--group", "g"], None),
        "The group 'g' doesn't exist and doesn't have dynamic config.\n"
    );
}

/// Every file of the log dir with its contents, to show that a refusal changed nothing.
fn snapshot(k: &Kafkit) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut dirs = vec![k.log_dir().to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_none_or(|e| e != "lock") {
                files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn bad_invocations_change_nothing() {
    let k = Kafkit::new();
    create(&k, "t", &["retention.ms=1000000"]);
    let long = "a".repeat(250);
    #[rustfmt::skip]
    let table: &[(&[&str], i32, &str)] = &[
        (&["--topic", "t"], 2, "Command must include exactly one action: --describe, --alter"),
        (&["--describe", "--alter", "--topic", "t"], 2, "Command must include exactly one action: --describe, --alter"),
        (&["--alter", "--topic", "t"], 2, "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter"),
        (&["--alter", "--entity-type", "topics", "--add-config", "retention.ms=1"], 2, "An entity name must be specified with --alter of topics"),
        (&["--alter", "--entity-type", "brokers", "--add-config", "num.partitions=2"], 2, "An entity-name or default entity must be specified with --alter of users, clients, brokers or ips"),
        (&["--describe", "--entity-type", "foo"], 2, "Invalid entity type foo, the entity type must be one of topics, clients, users, brokers, ips, client-metrics, groups, broker-loggers with a --bootstrap-server or --bootstrap-controller argument"),
        (&["--describe", "--entity-type", "clients"], 2, "--entity-type clients is not supported by kafkit's kafka-configs"),
        (&["--describe", "--entity-name", "t"], 2, "At least one entity type must be specified"),
        (&["--describe", "--entity-type", "topics", "--entity-default"], 2, "--entity-default must not be specified with --describe of topics"),
        (&["--describe", "--broker", "x"], 2, "The entity name for brokers must be a valid integer broker id, but it is: x"),
        (&["--describe", "--broker", "0", "--topic", "t"], 2, "Only 'users' and 'clients' entity types may be specified together"),
        (&["--describe", "--broker", "0", "--broker-defaults"], 2, "Duplicate entity type(s) specified: brokers"),
        (&["--describe", "--topic", "t", "--entity-name", "u"], 2, "--entity-{type,name,default} should not be used in conjunction with specific entity flags"),
        (&["--describe", "--topic", "t", "--add-config", "a=b"], 2, "Option \"[describe]\" can't be used with option \"[add-config]\""),
        (&["--describe", "--topic", &long], 2, "Topic name is invalid: the length of"),
        (&["--describe", "--topic", "bad name"], 2, "Topic name is invalid: 'bad name' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"),
        (&["--alter", "--topic", "t", "--add-config", "retention.ms"], 2, "requirement failed: Invalid entity config: all configs to be added must be in the format \"key=val\""),
        (&["--alter", "--topic", "t", "--add-config", "a=1", "--add-config-file", "f"], 2, "Only one of --add-config or --add-config-file must be specified"),
        (&["--alter", "--topic", "t", "--add-config", "foo.bar=1"], 1, "Unknown topic config name: foo.bar"),
        (&["--alter", "--topic", "t", "--add-config", "retention.ms=1,segment.bytes=abc"], 1, "Invalid value abc for configuration segment.bytes: Not a number of type INT"),
        (&["--alter", "--topic", "t", "--add-config", "retention.ms=-5"], 1, "Invalid value -5 for configuration retention.ms: Value must be at least -1"),
        (&["--alter", "--topic", "t", "--add-config", "retention.ms=1", "--delete-config", "retention.ms"], 1, "Error due to duplicate config keys"),
        (&["--alter", "--topic", "nope", "--add-config", "retention.ms=1"], 1, "The topic 'nope' does not exist."),
        (&["--alter", "--topic", "t", "--add-config-file", "/nonexistent/file"], 1, "cannot read properties file /nonexistent/file"),
        (&["--alter", "--broker-defaults", "--add-config", "log.retention.ms=5"], 1, "log.retention.ms is not a setting of the embedded log"),
        (&["--alter", "--broker-defaults", "--add-config", "num.partitions=0"], 1, "Invalid value 0 for configuration num.partitions: Value must be at least 1"),
        (&["--alter", "--broker", "0", "--add-config", "num.partitions=2"], 1, "the embedded log has no per-broker dynamic configs"),
        (&["--alter", "--broker", "3", "--add-config", "num.partitions=2"], 1, "the embedded log has only broker 0, not broker 3"),
        (&["--alter", "--group", "g", "--add-config", "consumer.session.timeout.ms=50000"], 1, "the embedded log has no group config consumer.session.timeout.ms"),
        (&["--alter", "--group", "g", "--add-config", "share.delivery.count.limit=1"], 1, "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2"),
        (&["--describe", "--topic", "t", "--bootstrap-server", "nohost"], 2, "Please provide valid host:port like host1:9091,host2:9092"),
    ];
    let before = snapshot(&k);
    for (args, code, message) in table {
        let stderr = k.fails(TOOL, args, None, *code);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(snapshot(&k), before, "{args:?} changed the log dir");
    }
    // The refused alters above left the topic's config as it was.
    let out = k.ok(TOOL, &["--describe", "--topic", "t"], None);
    assert_eq!(text(out.as_bytes()).lines().count(), 2, "{out}");
}

/// Altering the broker defaults edits `config.properties` in place: comments and other
/// settings stay. A value is stored as it was checked, trimmed: a line break around it once
/// split the entry in the topic's metadata and made every later alter fail.
#[test]
fn config_files_are_edited_in_place_and_never_split() {
    let k = Kafkit::new();
    create(&k, "t", &[]);
    let settings = k.path("config.properties");
    std::fs::write(&settings, "# my defaults\nauto.create.topics.enable=true\n").unwrap();
    let alter = [
        "--alter",
        "--broker-defaults",
        "--add-config",
        "num.partitions=2",
    ];
    k.ok(TOOL, &alter, None);
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "# my defaults\nauto.create.topics.enable=true\nnum.partitions=2\n"
    );

    let file = k.path("newline.properties");
    std::fs::write(&file, "retention.ms=\\n5000\n").unwrap();
    let args = [
        "--alter",
        "--topic",
        "t",
        "--add-config-file",
        file.to_str().unwrap(),
    ];
    k.ok(TOOL, &args, None);
    let out = k.ok(TOOL, &["--describe", "--topic", "t"], None);
    assert!(out.contains("  retention.ms=5000 "), "{out}");
    k.ok(
        TOOL,
        &[
            "--alter",
            "--topic",
            "t",
            "--add-config",
            "segment.ms=100000",
        ],
        None,
    );
}

/// A key in `config.properties` that the embedded log does not read (a misspelling) is named
/// in one warning, once per command (issue 24, item 11: it was ignored without a word); the
/// settings it does read still apply.
#[test]
fn a_misspelt_setting_is_named_in_a_warning() {
    let k = Kafkit::new();
    std::fs::create_dir_all(k.log_dir()).unwrap();
    std::fs::write(
        k.path("config.properties"),
        "num.partition=3\nnum.partitions=2\n",
    )
    .unwrap();
    let out = k.run("kafka-topics", &["--create", "--topic", "t"], None);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("WARN: ").count(), 1, "{err}");
    assert!(
        err.contains("config.properties holds 'num.partition' that the embedded log does not read"),
        "{err}"
    );
    let described = k.ok("kafka-topics", &["--describe", "--topic", "t"], None);
    assert!(described.contains("PartitionCount: 2"), "{described}");
}
