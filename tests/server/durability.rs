//! kill -9 of the server loses nothing it acknowledged: every produce is answered only after
//! its data is fdatasync'ed.

use crate::common::server::Server;
use crate::common::{Kafkit, sorted};

#[test]
fn kill_9_after_acknowledged_produce_loses_nothing() {
    let k = Kafkit::new();
    let mut server = Server::start(k.log_dir(), &[]);
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
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    // What the directory holds after the kill, read directly.
    assert_eq!(sorted(&k.consume("durable", 20_000, &[])), sorted(&input));
    // And through a new server on the same directory.
    let server = Server::start(k.log_dir(), &[]);
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
