//! kill -9 of the server loses nothing it acknowledged: every produce is answered only after
//! its data is fdatasync'ed.

use crate::common::server::Server;
use crate::common::{DAMAGED_OFFSET, Kafkit, Segment, sorted, wait_for};

#[test]
fn kill_9_after_acknowledged_produce_loses_nothing() {
    let k = Kafkit::new();
    let mut server = Server::process(k.log_dir(), &[]);
    let b = server.bootstrap.clone();
    let input: String = (0..20_000).map(|i| format!("record-{i}\n")).collect();
    // Our producer exits 0 only when every record was acknowledged (acks=all).
    k.ok(
        "kafka-console-producer",
        &[
            "--bootstrap-server",
            &b,
            "--topic",
            "durable",
            "--request-required-acks",
            "all",
        ],
        Some(input.as_bytes()),
    );
    server.child().kill().unwrap();
    server.child().wait().unwrap();
    // What the directory holds after the kill, read directly.
    assert_eq!(sorted(&k.consume("durable", 20_000, &[])), sorted(&input));
    // And through a new server on the same directory.
    let server = Server::process(k.log_dir(), &[]);
    let out = k.ok(
        "kafka-console-consumer",
        &[
            "--bootstrap-server",
            &server.bootstrap,
            "--topic",
            "durable",
            "--from-beginning",
            "--max-messages",
            "20000",
        ],
        None,
    );
    assert_eq!(out.lines().count(), 20_000);
}

/// Batches the server wrote but whose answers never arrived (lost by a proxy the server
/// advertises as its address), sent again after the server was killed and started anew, are
/// answered as duplicates: the producer ends well and each record is in the log once.
#[test]
fn batches_sent_again_after_a_kill_are_written_once() {
    use crate::common::closed_port;
    use crate::common::producer::{idempotent, send_alone};
    use crate::common::proxy::Proxy;

    let k = Kafkit::new();
    let address = format!("127.0.0.1:{}", closed_port());
    let proxy = Proxy::start(&address);
    let advertised = format!("advertised.listeners=PLAINTEXT://{}", proxy.addr);
    let mut server = Server::process_on(k.log_dir(), &address, &[&advertised]);
    k.ok("kafka-topics", &["--create", "--topic", "again"], None);
    let mut producer = idempotent(&proxy.addr, "again");
    for n in 0..3 {
        send_alone(&mut producer, &format!("record {n}"));
    }
    producer.flush().expect("the first three are acknowledged");
    proxy.drop_answers(true);
    for n in 3..8 {
        send_alone(&mut producer, &format!("record {n}"));
    }
    // Killed once the server wrote them (their answers are lost): 8 records in the log.
    let end = || k.ok("kafka-get-offsets", &["--topic", "again"], None);
    wait_for("the 5 unanswered batches written", || {
        end() == "again:0:8\n"
    });
    server.child().kill().unwrap();
    server.child().wait().unwrap();
    proxy.drop_answers(false);
    let _server = Server::process_on(k.log_dir(), &address, &[&advertised]);
    producer
        .flush()
        .expect("the batches sent again are answered as duplicates");
    producer.close().expect("close");
    let expected: String = (0..8).map(|n| format!("record {n}\n")).collect();
    assert_eq!(k.consume("again", 100, &[]), expected);
}

/// Damage, in an older segment or in the active one, read through the server (issue 24, item
/// 7): the records before it are served, then the fetch at the damage is answered
/// CORRUPT_MESSAGE and logged, and our consumer stops on it as Kafka's does, naming the offset
/// (it retried forever, silently).
#[test]
fn damage_is_served_up_to_the_bad_batch_then_refused() {
    for segment in [Segment::Older, Segment::Active] {
        let k = Kafkit::new();
        k.damage_a_batch("d", segment);

        let server = Server::start(k.log_dir(), &[]);
        let out = k.run(
            "kafka-console-consumer",
            &[
                "--bootstrap-server",
                &server.bootstrap,
                "--topic",
                "d",
                "--from-beginning",
                "--timeout-ms",
                "60000",
            ],
            None,
        );
        let printed = String::from_utf8_lossy(&out.stdout).lines().count();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{segment:?}: {err}");
        assert_eq!(printed, DAMAGED_OFFSET, "{segment:?}: {err}");
        assert!(
            err.contains(&format!(
                "Encountered corrupt message when fetching offset {printed} for topic-partition d-0"
            )),
            "{err}"
        );
        wait_for("the server to log the damage", || {
            server.stderr().contains("00000000000000000000.log at byte")
        });
    }
}
