//! Connection failures of our tools (`kafka-topics --list`) against a closed port and fake
//! servers on loopback: no broker involved, so these run in the `remote` binary only.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Output;
use std::time::{Duration, Instant};

use crate::common::{closed_port, text};

const T: &str = "kafka-topics";

/// "At once" for a failure that must not wait for a timeout: generous for a loaded machine,
/// yet clearly below the 30 s default request.timeout.ms a tool could otherwise be waiting out.
const WITHOUT_WAITING: Duration = Duration::from_secs(20);

/// Our tool's one-line error (exit 1, no panic).
fn our_error(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "stdout: {}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr.trim_end().to_string()
}

/// Our tool against a fake server; returns its stderr and how long it took.
fn against(addr: &str, extra: &[&str]) -> (String, Duration) {
    let start = Instant::now();
    let out = assert_cmd::Command::cargo_bin(T)
        .unwrap()
        .args(["--list", "--bootstrap-server", addr])
        .args(extra)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    (our_error(&out), elapsed)
}

#[test]
fn refused_connection_fails_fast_naming_the_address() {
    let addr = format!("127.0.0.1:{}", closed_port());
    let (err, elapsed) = against(&addr, &[]);
    assert_eq!(
        err,
        format!(
            "Error while executing topic command : cannot connect to {addr} (connection refused); omit --bootstrap-server to use the embedded log instead"
        )
    );
    assert!(elapsed < WITHOUT_WAITING, "{elapsed:?}");
    let second = format!("127.0.0.1:{}", closed_port());
    let (err, _) = against(&format!("{addr},{second}"), &[]);
    assert!(
        err.contains(&format!(
            "cannot connect to {addr} (connection refused), {second} (connection refused); omit"
        )),
        "{err}"
    );
}

/// Reads from `s` until the client closes the connection (the tool exited): the server keeps
/// it open meanwhile, however long the client takes to read what it was sent.
fn until_client_leaves(s: &mut std::net::TcpStream) {
    let mut buf = [0u8; 1024];
    while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
}

/// A server that accepts one connection and hands it to `serve`.
fn fake_server(serve: impl FnOnce(std::net::TcpStream) + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            serve(stream);
        }
    });
    addr
}

#[test]
fn a_server_that_hangs_up_is_named() {
    let addr = fake_server(|mut s| {
        let mut buf = [0u8; 64];
        let _ = s.read(&mut buf);
    });
    let (err, _) = against(&addr, &[]);
    assert!(
        err.contains(&format!("{addr} closed the connection during ApiVersions")),
        "{err}"
    );
}

#[test]
fn an_http_server_hits_the_frame_limit() {
    let addr = fake_server(|mut s| {
        let mut buf = [0u8; 64];
        let _ = s.read(&mut buf);
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        until_client_leaves(&mut s);
    });
    let (err, _) = against(&addr, &[]);
    assert!(
        err.contains(&format!(
            "{addr} sent a 1213486160-byte response to ApiVersions, over the 104857600-byte limit"
        )),
        "{err}"
    );
}

#[test]
fn a_silent_server_times_out_after_request_timeout_ms() {
    // Silent, and never hanging up first: only the tool's own timeout can end the wait.
    let addr = fake_server(|mut s| until_client_leaves(&mut s));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("client.properties");
    std::fs::write(&config, "request.timeout.ms=700\n").unwrap();
    let (err, elapsed) = against(&addr, &["--command-config", config.to_str().unwrap()]);
    assert_eq!(
        err,
        format!(
            "Error while executing topic command : {addr} did not answer ApiVersions within 700 ms (request.timeout.ms); omit --bootstrap-server to use the embedded log instead"
        )
    );
    // The configured 700 ms, not the 30 s default.
    assert!(elapsed < WITHOUT_WAITING, "{elapsed:?}");
}
