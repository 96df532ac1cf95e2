//! Clients that are not ours against the server (kcat, the Java tools), and our own tools over
//! the network and through `--log-dir` on the same directory at the same time.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::broker::{CONSOLE_CONSUMER, CONSOLE_PRODUCER, TOPIC_COMMAND, java_tool};
use crate::common::server::Server;
use crate::common::{Kafkit, Lines, sorted, text};

/// Runs kcat with `args` and `stdin`; its stdout (it must succeed).
pub fn kcat(args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new("kcat")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kcat is installed (apt-get install kcat)");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "kcat {args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn kcat_in_every_codec_with_keys_and_headers_read_back_both_ways() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let topic = format!("kcat-{codec}");
        let input: String = (0..200).map(|i| format!("k{i}:v{i}\n")).collect();
        kcat(
            &[
                "-P", "-b", b, "-t", &topic, "-K:", "-z", codec, "-H", "h=x", "-X", "acks=all",
            ],
            Some(&input),
        );
        // Over the network, by kcat.
        let back = kcat(
            &[
                "-C",
                "-b",
                b,
                "-t",
                &topic,
                "-e",
                "-o",
                "beginning",
                "-f",
                "%k=%s %h\n",
            ],
            None,
        );
        let expected: Vec<String> = (0..200).map(|i| format!("k{i}=v{i} h=x")).collect();
        assert_eq!(sorted(&back), sorted(&expected.join("\n")), "{codec}");
        // From the directory, by our consumer, while the server runs.
        let local = k.consume(
            &topic,
            200,
            &[
                "--property",
                "print.key=true",
                "--property",
                "print.headers=true",
            ],
        );
        assert_eq!(local.lines().count(), 200, "{codec}: {local}");
        assert!(
            local.lines().all(|l| l.starts_with("h:x\tk")),
            "{codec}: {local}"
        );
    }
}

#[test]
fn java_console_tools_and_topic_command() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    let created = java_tool(
        TOPIC_COMMAND,
        &[
            "--bootstrap-server",
            b,
            "--create",
            "--topic",
            "java",
            "--partitions",
            "3",
        ],
    );
    assert!(created.status.success(), "{}", text(&created.stderr));
    assert_eq!(text(&created.stdout), "Created topic java.\n");
    // The Java producer is idempotent by default: InitProducerId and sequence numbers.
    let mut producer = Command::new("bash")
        .arg(crate::common::broker::script())
        .args([
            "tool",
            CONSOLE_PRODUCER,
            "--bootstrap-server",
            b,
            "--topic",
            "java",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines: String = (0..300).map(|i| format!("line {i}\n")).collect();
    producer
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    let out = producer.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    // All 300, read from the directory by our consumer.
    let local = k.consume("java", 300, &[]);
    assert_eq!(sorted(&local), sorted(&lines));
    // And by the Java consumer, one partition at a time (no group: assign mode).
    let mut seen = String::new();
    for p in ["0", "1", "2"] {
        let out = java_tool(
            CONSOLE_CONSUMER,
            &[
                "--bootstrap-server",
                b,
                "--topic",
                "java",
                "--partition",
                p,
                "--offset",
                "earliest",
                "--timeout-ms",
                "5000",
            ],
        );
        seen.push_str(&text(&out.stdout));
    }
    assert_eq!(sorted(&seen), sorted(&lines));
    // The Java tool describes the topic as our tool does, through the server.
    let java = java_tool(
        TOPIC_COMMAND,
        &["--bootstrap-server", b, "--describe", "--topic", "java"],
    );
    let ours = k.ok(
        "kafka-topics",
        &["--bootstrap-server", b, "--describe", "--topic", "java"],
        None,
    );
    assert_eq!(text(&java.stdout), ours);
}

#[test]
fn one_log_two_ways_in() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let b = server.bootstrap.as_str();
    // Through the directory, seen over the network...
    k.produce("both", &[], b"a\nb\nc\n");
    let net = k.ok(
        "kafka-console-consumer",
        &[
            "--bootstrap-server",
            b,
            "--topic",
            "both",
            "--from-beginning",
            "--max-messages",
            "3",
        ],
        None,
    );
    assert_eq!(net, "a\nb\nc\n");
    // ...over the network, seen in the directory, appended after the first three.
    k.ok(
        "kafka-console-producer",
        &["--bootstrap-server", b, "--topic", "both"],
        Some(b"d\ne\n"),
    );
    assert_eq!(k.consume("both", 5, &[]), "a\nb\nc\nd\ne\n");
    assert_eq!(
        k.ok(
            "kafka-get-offsets",
            &["--bootstrap-server", b, "--topic", "both"],
            None
        ),
        "both:0:5\n"
    );
    // Admin over the network shows in the directory.
    k.ok(
        "kafka-topics",
        &[
            "--bootstrap-server",
            b,
            "--create",
            "--topic",
            "made",
            "--partitions",
            "2",
        ],
        None,
    );
    assert_eq!(k.ok("kafka-topics", &["--list"], None), "both\nmade\n");
    k.ok(
        "kafka-configs",
        &[
            "--bootstrap-server",
            b,
            "--alter",
            "--topic",
            "made",
            "--add-config",
            "retention.ms=1000",
        ],
        None,
    );
    let described = k.ok("kafka-configs", &["--describe", "--topic", "made"], None);
    assert!(described.contains("retention.ms=1000"), "{described}");
    k.ok(
        "kafka-topics",
        &["--bootstrap-server", b, "--delete", "--topic", "made"],
        None,
    );
    assert_eq!(k.ok("kafka-topics", &["--list"], None), "both\n");
}

/// The server answers a waiting fetch as soon as another process (a `--log-dir` producer)
/// writes, not when the fetch's wait runs out. The wait is made 100 s so that "at once" can
/// be a bound a loaded machine always meets and still tell the two apart.
#[test]
fn a_waiting_fetch_sees_a_write_by_another_process_at_once() {
    const AT_ONCE: Duration = Duration::from_secs(50);
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    k.ok("kafka-topics", &["--create", "--topic", "live"], None);
    let mut consumer = Command::new("kcat")
        .args([
            "-C",
            "-b",
            &server.bootstrap,
            "-t",
            "live",
            "-o",
            "end",
            "-c",
            "1",
            "-X",
            "fetch.wait.max.ms=100000",
            "-X",
            "socket.timeout.ms=120000",
            // librdkafka's log of each fetch it sends, on stderr.
            "-d",
            "fetch",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once kcat sent its fetch from the end, write through the directory.
    let stderr = Lines::read(consumer.stderr.take().unwrap());
    stderr.until("Fetch topic live [0] at offset 0");
    let written = Instant::now();
    k.produce("live", &[], b"hello\n");
    let out = consumer.wait_with_output().unwrap();
    let took = written.elapsed();
    assert_eq!(text(&out.stdout), "hello\n", "{:?}", stderr.rest());
    assert!(took < AT_ONCE, "{took:?}");
}
