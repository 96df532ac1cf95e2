//! Our own tools give the same answers through the server as on the directory it serves:
//! every read-only command below is run both ways on the same state and must print the same.

use crate::common::server::Server;
use crate::common::{Kafkit, text};

#[test]
fn our_tools_print_the_same_over_the_network_and_on_the_directory() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    k.ok(
        "kafka-topics",
        &[
            "--create",
            "--topic",
            "orders",
            "--partitions",
            "3",
            "--config",
            "retention.ms=86400000",
        ],
        None,
    );
    k.ok(
        "kafka-topics",
        &["--bootstrap-server", b, "--create", "--topic", "audit"],
        None,
    );
    let keyed: String = (0..300).map(|i| format!("k{}:v{i}\n", i % 7)).collect();
    k.ok(
        "kafka-console-producer",
        &[
            "--bootstrap-server",
            b,
            "--topic",
            "orders",
            "--property",
            "parse.key=true",
            "--property",
            "key.separator=:",
            "--compression-codec",
            "zstd",
        ],
        Some(keyed.as_bytes()),
    );
    k.produce("audit", &[], b"one\ntwo\n");
    let commands: &[(&str, &[&str])] = &[
        ("kafka-topics", &["--list"]),
        ("kafka-topics", &["--describe"]),
        ("kafka-topics", &["--describe", "--topic", "orders"]),
        ("kafka-get-offsets", &["--time", "-1"]),
        ("kafka-get-offsets", &["--time", "-2"]),
        ("kafka-get-offsets", &["--time", "-3"]),
        ("kafka-get-offsets", &["--time", "0"]),
        ("kafka-get-offsets", &["--topic-partitions", "orders:1-2"]),
        ("kafka-configs", &["--describe", "--topic", "orders"]),
        ("kafka-configs", &["--describe", "--entity-type", "topics"]),
        (
            "kafka-console-consumer",
            &[
                "--topic",
                "orders",
                "--from-beginning",
                "--max-messages",
                "300",
                "--property",
                "print.key=true",
                "--property",
                "print.partition=true",
                "--property",
                "print.offset=true",
            ],
        ),
        (
            "kafka-console-consumer",
            &[
                "--topic",
                "orders",
                "--partition",
                "2",
                "--offset",
                "5",
                "--max-messages",
                "3",
            ],
        ),
    ];
    for (tool, args) in commands {
        let local = k.run(tool, args, None);
        let mut remote_args = vec!["--bootstrap-server", b];
        remote_args.extend_from_slice(args);
        let remote = k.run(tool, &remote_args, None);
        assert!(
            local.status.success(),
            "{tool} {args:?}: {}",
            text(&local.stderr)
        );
        assert!(
            remote.status.success(),
            "{tool} {args:?} via the server: {}",
            text(&remote.stderr)
        );
        let (mut l, mut r) = (text(&local.stdout), text(&remote.stdout));
        if *tool == "kafka-console-consumer" {
            // Partitions are read in a different order over the network; records per partition
            // keep theirs.
            let sort = |s: &str| {
                let mut v: Vec<&str> = s.lines().collect();
                v.sort();
                v.join("\n")
            };
            (l, r) = (sort(&l), sort(&r));
        }
        assert_eq!(l, r, "{tool} {args:?}");
    }
}

#[test]
fn delete_records_through_the_server_moves_the_start_the_directory_sees() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    k.ok(
        "kafka-topics",
        &["--create", "--topic", "trim", "--partitions", "2"],
        None,
    );
    let lines: String = (0..100).map(|i| format!("{}:v{i}\n", i % 2)).collect();
    k.ok(
        "kafka-console-producer",
        &[
            "--topic",
            "trim",
            "--property",
            "parse.key=true",
            "--property",
            "key.separator=:",
        ],
        Some(lines.as_bytes()),
    );
    let plan = k.path("trim.json");
    std::fs::write(
        &plan,
        r#"{"partitions":[{"topic":"trim","partition":0,"offset":10},{"topic":"trim","partition":1,"offset":-1}],"version":1}"#,
    )
    .unwrap();
    let plan = plan.display().to_string();
    let ours = k.ok(
        "kafka-delete-records",
        &["--bootstrap-server", b, "--offset-json-file", &plan],
        None,
    );
    let java = crate::common::broker::java_tool(
        "org.apache.kafka.tools.DeleteRecordsCommand",
        &["--bootstrap-server", b, "--offset-json-file", &plan],
    );
    // Java's run repeats ours: the same starts, in its hash order.
    let mut java_lines: Vec<String> = text(&java.stdout).lines().map(str::to_string).collect();
    let mut our_lines: Vec<String> = ours.lines().map(str::to_string).collect();
    java_lines.sort();
    our_lines.sort();
    assert_eq!(java_lines, our_lines, "{}", text(&java.stderr));
    assert!(
        ours.contains("partition: trim-0\tlow_watermark: 10"),
        "{ours}"
    );
    let ends = k.ok(
        "kafka-get-offsets",
        &["--topic", "trim", "--time", "-1"],
        None,
    );
    let starts = k.ok(
        "kafka-get-offsets",
        &["--topic", "trim", "--time", "-2"],
        None,
    );
    let end1 = ends.lines().nth(1).unwrap().rsplit(':').next().unwrap();
    assert_eq!(starts, format!("trim:0:10\ntrim:1:{end1}\n"));
}
