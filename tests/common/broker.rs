//! A real Apache Kafka 4.3.1 broker for the tests, started by `tests/broker/kafka-broker.sh` from
//! Maven Central jars: one per test binary, started by the first test that asks for it and
//! shared by the others (each test uses its own topic names).
//!
//! The broker runs under the script's `run` watchdog, whose stdin is a pipe from this process.
//! Nothing ever writes to it: when this process exits, however it exits (end of the test run,
//! a panic, SIGKILL), the kernel closes the pipe, the watchdog reads end of file and kills the
//! broker. So no broker outlives `cargo test`, and no destructor has to run (statics never drop).
//!
//! Without Java 17 and Maven, or if the broker cannot start, the real-broker tests print a loud
//! SKIPPED line and pass, unless `KAFKIT_REQUIRE_BROKER=1` (set by `.ci/run`), which makes them
//! fail with the reason.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

/// The shared broker, or why there is none.
static BROKER: OnceLock<Result<Broker, String>> = OnceLock::new();

struct Broker {
    bootstrap: String,
    /// The run directory the script printed on its second line (listeners file, certificates).
    dir: PathBuf,
    /// Held, never written: closing it (at process exit) stops the broker.
    _stdin: Mutex<ChildStdin>,
    _child: Mutex<Child>,
}

/// The watchdog script.
pub fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/broker/kafka-broker.sh")
}

fn required() -> bool {
    std::env::var("KAFKIT_REQUIRE_BROKER").is_ok_and(|v| v == "1")
}

fn start() -> Result<Broker, String> {
    let mut child = Command::new("bash")
        .arg(script())
        .arg("run")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", script().display()))?;
    let stdin = child.stdin.take().ok_or("no stdin pipe")?;
    let stdout = child.stdout.take().ok_or("no stdout pipe")?;
    let mut stderr = child.stderr.take().ok_or("no stderr pipe")?;
    // Drained on a thread so that a chatty script can never block on a full pipe.
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut line = String::new();
    let mut stdout = BufReader::new(stdout);
    let _ = stdout.read_line(&mut line);
    let bootstrap = line.trim().to_string();
    let mut dir = String::new();
    let _ = stdout.read_line(&mut dir);
    if bootstrap.is_empty() {
        let status = child.wait().map(|s| s.code());
        let errors = errors.join().unwrap_or_default();
        let why = match status {
            Ok(Some(3)) => "Java 17+ or Maven is missing",
            _ => "the broker did not start",
        };
        return Err(format!(
            "{why} ({} run exited with {status:?}):\n{errors}",
            script().display()
        ));
    }
    Ok(Broker {
        bootstrap,
        dir: PathBuf::from(dir.trim()),
        _stdin: Mutex::new(stdin),
        _child: Mutex::new(child),
    })
}

/// The shared broker's bootstrap address (`127.0.0.1:port`), starting it on first use; `None`
/// when real-broker tests are skipped on this machine (after saying so loudly). Panics instead
/// of skipping when `KAFKIT_REQUIRE_BROKER=1`.
pub fn try_bootstrap() -> Option<String> {
    let broker = BROKER.get_or_init(|| {
        let started = start();
        if let Err(why) = &started
            && !required()
        {
            // Straight to the stderr handle: libtest captures `eprintln!` of passing tests.
            let _ = writeln!(
                std::io::stderr(),
                "\n=====\nSKIPPED: real-broker tests need Java 17 + Maven (set KAFKIT_REQUIRE_BROKER=1 to make this a failure): {why}\n====="
            );
        }
        started
    });
    match broker {
        Ok(b) => Some(b.bootstrap.clone()),
        Err(why) if required() => {
            panic!("KAFKIT_REQUIRE_BROKER=1 but no real Kafka broker could be started: {why}")
        }
        Err(_) => {
            let name = std::thread::current().name().unwrap_or("?").to_string();
            let _ = writeln!(std::io::stderr(), "SKIPPED (no Kafka broker): {name}");
            None
        }
    }
}

/// The shared broker's bootstrap address; for tests that already know it is available.
pub fn bootstrap() -> String {
    try_bootstrap().expect("a real Kafka broker (check try_bootstrap() first)")
}

/// A topic name no other test (or earlier run against the same broker) uses.
pub fn unique_topic(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Runs a Java tool's main class from the broker's jars, e.g.
/// `java_tool("org.apache.kafka.tools.TopicCommand", &["--bootstrap-server", b, "--list"])`:
/// the oracle for output (its log lines go to stderr, so stdout is the tool's own).
pub fn java_tool(class: &str, args: &[&str]) -> Output {
    Command::new("bash")
        .arg(script())
        .arg("tool")
        .arg(class)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the broker script runs")
}

/// The Java `kafka-topics` (TopicCommand) against the shared broker.
pub fn java_topics(args: &[&str]) -> Output {
    let bootstrap = bootstrap();
    let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
    all.extend_from_slice(args);
    java_tool("org.apache.kafka.tools.TopicCommand", &all)
}

/// One of our tools against the shared broker, with `--bootstrap-server` already given.
pub fn kafkit(tool: &str) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin(tool).expect("binary built");
    cmd.arg("--bootstrap-server")
        .arg(bootstrap())
        .env_remove("KAFKIT_LOG_DIR")
        .timeout(std::time::Duration::from_secs(60));
    cmd
}

/// The shared broker's secured listeners (see "Secured listeners" in kafka-broker.sh): SSL with
/// client certificates required, SASL_SSL and SASL_PLAINTEXT, one user for PLAIN and both SCRAMs,
/// and the per-run PEM files.
#[derive(Debug, Clone)]
pub struct Secured {
    /// `127.0.0.1:port` of each listener.
    pub ssl: String,
    pub sasl_ssl: String,
    pub sasl_plaintext: String,
    pub user: String,
    pub password: String,
    /// The CA that signed the broker's and the client's certificates.
    pub ca: PathBuf,
    /// A CA that signed nothing the broker has.
    pub other_ca: PathBuf,
    /// The client's unencrypted key followed by its certificate (a PEM key store).
    pub client_pem: PathBuf,
    pub client_key: PathBuf,
    pub client_cert: PathBuf,
}

/// The shared broker's secured listeners; `None` when real-broker tests are skipped (as for
/// [`try_bootstrap`]).
pub fn try_secured() -> Option<Secured> {
    try_bootstrap()?;
    let Some(Ok(broker)) = BROKER.get() else {
        return None;
    };
    let listeners = std::fs::read_to_string(broker.dir.join("listeners")).unwrap_or_else(|e| {
        panic!(
            "{}/listeners (written by kafka-broker.sh): {e}",
            broker.dir.display()
        )
    });
    let value = |key: &str| {
        listeners
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or_else(|| panic!("no {key}= in {}/listeners", broker.dir.display()))
            .to_string()
    };
    let tls = broker.dir.join("tls");
    Some(Secured {
        ssl: value("SSL"),
        sasl_ssl: value("SASL_SSL"),
        sasl_plaintext: value("SASL_PLAINTEXT"),
        user: value("USER"),
        password: value("PASSWORD"),
        ca: tls.join("ca.pem"),
        other_ca: tls.join("other-ca.pem"),
        client_pem: tls.join("client.pem"),
        client_key: tls.join("client.key"),
        client_cert: tls.join("client.crt"),
    })
}
