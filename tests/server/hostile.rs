//! Requests no client sends: each closes its own connection (with a WARN line) and the server
//! keeps serving everyone else.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::common::Kafkit;
use crate::common::server::Server;

/// A request frame: size, then api key, version, correlation id, client id "x", then `rest`.
fn frame(key: i16, version: i16, rest: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&key.to_be_bytes());
    body.extend_from_slice(&version.to_be_bytes());
    body.extend_from_slice(&1i32.to_be_bytes());
    body.extend_from_slice(&1i16.to_be_bytes());
    body.push(b'x');
    body.extend_from_slice(rest);
    let mut out = (body.len() as i32).to_be_bytes().to_vec();
    out.extend_from_slice(&body);
    out
}

#[test]
fn hostile_requests_close_their_connection_only() {
    let k = Kafkit::new();
    let server = Server::start(k.log_dir(), &[]);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        // Metadata v1 claiming 2^31 - 1 topics: the decoder sizes its Vec by the claim.
        ("array count bomb", frame(3, 1, &i32::MAX.to_be_bytes())),
        // Metadata v9 (flexible): header tagged fields, then a compact array of 2^32 - 2.
        (
            "compact array bomb",
            frame(3, 9, &[0, 0xff, 0xff, 0xff, 0xff, 0x0f]),
        ),
        ("unknown api key", frame(999, 0, &[])),
        ("unserved version", frame(0, 99, &[])),
        (
            "truncated header",
            4i32.to_be_bytes()
                .iter()
                .chain(&[0, 3, 0, 1])
                .copied()
                .collect(),
        ),
        ("negative size", (-5i32).to_be_bytes().to_vec()),
        (
            "a web browser",
            b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".to_vec(),
        ),
    ];
    for (name, bytes) in cases {
        let mut stream = TcpStream::connect(&server.bootstrap).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.write_all(&bytes).unwrap();
        let mut answer = Vec::new();
        // The server closes the connection (end of file, or a reset).
        let _ = stream.read_to_end(&mut answer);
        assert!(answer.is_empty(), "{name}: answered {answer:?}");
        // And still serves.
        let listed = k.ok(
            "kafka-topics",
            &["--bootstrap-server", &server.bootstrap, "--list"],
            None,
        );
        assert_eq!(listed, "\n", "{name}");
    }
    assert!(server.stderr().contains("WARN"), "{}", server.stderr());
}
