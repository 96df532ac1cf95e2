//! Real applications that are not ours, built on compacted topics, against the server: a Kafka
//! Streams 4.3.1 word count (`tests/server/apps/WordCount.java`) whose counts live in a store
//! with a compacted changelog, and a Kafka Connect 4.3.1 worker in distributed mode whose
//! configs, offsets and statuses live in compacted topics. Each is stopped and started again and
//! must carry on from what it stored in the server: the word count from its changelog (its local
//! state deleted), the worker's FileStreamSource from its stored offsets, sending no line twice.
//! The jars and the program are built into `target/apps` by `tests/server/apps/setup.sh` on first
//! use; without Java 17 (a JDK) and Maven the tests say SKIPPED, or fail under
//! `KAFKIT_REQUIRE_BROKER=1` as the real-broker tests do.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common::server::Server;
use crate::common::{DefaultSignals, Kafkit, broker, closed_port, text};

/// How long a test waits for an application to reach a state or to deliver what it was given:
/// generous, as a JVM on the loaded two-core CI machine can take its time.
const APP_PATIENCE: Duration = Duration::from_secs(120);

/// The directory `setup.sh` built the applications in, or `None` when this machine cannot build
/// them (no java, javac or mvn) and the tests are skipped.
pub(crate) fn apps() -> Option<&'static PathBuf> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = DIR.get_or_init(|| {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/server/apps/setup.sh");
        let out = Command::new("bash")
            .arg(&script)
            .stdin(Stdio::null())
            .output()
            .expect("bash runs");
        match out.status.code() {
            Some(0) => Ok(PathBuf::from(text(&out.stdout).trim())),
            // A prerequisite is missing.
            Some(3) => Err(text(&out.stderr).trim().to_string()),
            _ => panic!(
                "{} failed with {:?}: {}",
                script.display(),
                out.status.code(),
                text(&out.stderr)
            ),
        }
    });
    match built {
        Ok(dir) => Some(dir),
        Err(why) if broker::required() => {
            panic!(
                "KAFKIT_REQUIRE_BROKER=1 but the Kafka Streams and Connect apps cannot be built: {why}"
            )
        }
        Err(why) => {
            // Straight to the stderr handle: libtest captures `eprintln!` of passing tests.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED (Kafka Streams and Connect need Java 17, a JDK, and Maven): {why}"
            );
            None
        }
    }
}

/// Polls `check` every 200 ms until it gives `Ok`; after [`APP_PATIENCE`] panics with the last
/// `Err` it gave (what it saw, with the applications' and the server's logs).
pub(crate) fn wait_for<T>(mut check: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + APP_PATIENCE;
    loop {
        match check() {
            Ok(done) => return done,
            Err(seen) if Instant::now() >= deadline => {
                panic!("not within {APP_PATIENCE:?}: {seen}")
            }
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A JVM the test started, with stdout and stderr in files; killed (SIGKILL) when dropped, so
/// that no application outlives its test, however the test ends. It also gets SIGKILL when the
/// thread that started it ends without dropping it, or the whole test process is killed
/// (PR_SET_PDEATHSIG).
pub(crate) struct Jvm {
    name: String,
    pub(crate) child: Child,
    out: PathBuf,
    err: PathBuf,
}

impl Jvm {
    /// Starts `main_class args` on the applications' classpath, its output in `dir/name.*`.
    pub(crate) fn start(
        apps: &Path,
        dir: &Path,
        name: &str,
        main_class: &str,
        args: &[&str],
    ) -> Jvm {
        let out = dir.join(format!("{name}.out"));
        let err = dir.join(format!("{name}.err"));
        let classpath = format!(
            "{}:{}",
            apps.join("classes").display(),
            apps.join("libs/*").display()
        );
        let mut cmd = Command::new("java");
        cmd.default_signals()
            // A client's JVM: cheap to start and small.
            .args([
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-Xss512k",
                "-Xmx256m",
                "-Djava.awt.headless=true",
            ])
            .arg(format!(
                "-Dlog4j2.configurationFile={}",
                apps.join("log4j2.properties").display()
            ))
            .arg("-cp")
            .arg(classpath)
            .arg(main_class)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap());
        {
            use std::os::unix::process::CommandExt;
            // SAFETY: between fork and exec the closure calls only prctl(2), which is
            // async-signal-safe, and allocates nothing.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("java runs ({name}): {e}"));
        Jvm {
            name: name.to_string(),
            child,
            out,
            err,
        }
    }

    pub(crate) fn stdout(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    /// What a failure message shows of it: its stdout (if any) and the tail of its log.
    pub(crate) fn report(&self) -> String {
        let out = self.stdout();
        let out = if out.is_empty() {
            String::new()
        } else {
            format!("--- {} stdout:\n{}\n", self.name, tail(&out, 40))
        };
        format!(
            "{out}--- {} log (last 60 lines):\n{}",
            self.name,
            tail(&self.stderr(), 60)
        )
    }

    /// Panics with `what` and the app's output unless it is still running.
    pub(crate) fn assert_running(&mut self, what: &str) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("{} exited ({status}) {what}\n{}", self.name, self.report());
        }
    }

    /// SIGTERM, as a user stops it, and waits for the JVM to exit (its shutdown hooks run).
    pub(crate) fn stop(&mut self) {
        crate::common::signal(&self.child, "-TERM");
        let deadline = Instant::now() + APP_PATIENCE;
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not exit within {APP_PATIENCE:?} of SIGTERM\n{}",
                self.name,
                self.report()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Jvm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server's log lines so far, the last ones.
pub(crate) fn server_tail(server: &Server) -> String {
    format!(
        "--- server log (last 40 lines):\n{}",
        tail(&server.stderr(), 40)
    )
}

/// Creates `topic` with `partitions` through the server.
pub(crate) fn create_topic(k: &Kafkit, server: &Server, topic: &str, partitions: u32) {
    k.ok(
        "kafka-topics",
        &[
            "--bootstrap-server",
            &server.bootstrap,
            "--create",
            "--topic",
            topic,
            "--partitions",
            &partitions.to_string(),
        ],
        None,
    );
}

/// Everything in `topic` from the beginning to its end now, read by our consumer through the
/// server, one line a record (`extra`: formatter options).
fn read_topic(k: &Kafkit, server: &Server, topic: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "--bootstrap-server",
        &server.bootstrap,
        "--topic",
        topic,
        "--from-beginning",
        "--until-end",
    ];
    args.extend_from_slice(extra);
    k.ok("kafka-console-consumer", &args, None)
}

/// The number of records the cleaner dropped from the partitions of `topic`, summed over its
/// "Cleaned <topic>-<p> up to offset ...: ..., K records kept, R removed" log lines.
fn cleaned_away(server: &Server, topic: &str) -> u64 {
    let prefix = format!("Cleaned {topic}-");
    server
        .log
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains(&prefix))
        .filter_map(|l| {
            let before = l.split(" removed").next()?;
            before.rsplit(' ').next()?.parse::<u64>().ok()
        })
        .sum()
}

// ---------------------------------------------------------------------------------------------
// Kafka Streams

/// The words of a line as WordCount.java splits them (lower case, split on non-word characters).
pub(crate) fn words(line: &str) -> impl Iterator<Item = String> + '_ {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_ascii_lowercase())
}

/// Each word's last count in the output topic (a word's counts are all in one partition, in
/// order, so the last one read is its latest).
fn latest_counts(k: &Kafkit, server: &Server, topic: &str) -> BTreeMap<String, i64> {
    let out = read_topic(
        k,
        server,
        topic,
        &[
            "--formatter-property",
            "print.key=true",
            "--value-deserializer",
            "org.apache.kafka.common.serialization.LongDeserializer",
        ],
    );
    out.lines()
        .filter_map(|l| {
            let (word, count) = l.split_once('\t')?;
            Some((word.to_string(), count.parse().ok()?))
        })
        .collect()
}

/// The word count's settings besides its arguments: commits (and so its output) every half
/// second instead of every 30 s, and a changelog whose segments roll and get cleaned quickly.
const WORD_COUNT_SETTINGS: [&str; 3] = [
    "commit.interval.ms=500",
    "changelog.segment.ms=200",
    "changelog.min.cleanable.dirty.ratio=0.01",
];

/// Starts the word count of application `wc` from `lines` to `counts`; waits until it is
/// RUNNING, having restored both partitions of its store (empty, or from the changelog).
fn start_word_count(apps: &Path, work: &Path, name: &str, server: &Server) -> Jvm {
    let state = work.join("state");
    let mut args = vec![
        server.bootstrap.as_str(),
        "wc",
        state.to_str().unwrap(),
        "lines",
        "counts",
    ];
    args.extend_from_slice(&WORD_COUNT_SETTINGS);
    let mut app = Jvm::start(apps, work, name, "WordCount", &args);
    wait_for(|| {
        app.assert_running("before it was RUNNING");
        let out = app.stdout();
        if out.contains("-> RUNNING") && out.matches("restored counts ").count() == 2 {
            return Ok(());
        }
        Err(format!(
            "the word count is not RUNNING with both store partitions restored\n{}\n{}",
            app.report(),
            server_tail(server)
        ))
    });
    app
}

/// Produces `lines` to topic `lines` and waits until the output topic's latest counts are
/// `expected` (updated with these lines first).
fn feed(
    k: &Kafkit,
    server: &Server,
    app: &mut Jvm,
    expected: &mut BTreeMap<String, i64>,
    lines: &[&str],
) {
    for word in lines.iter().flat_map(|l| words(l)) {
        *expected.entry(word).or_default() += 1;
    }
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    k.ok(
        "kafka-console-producer",
        &["--bootstrap-server", &server.bootstrap, "--topic", "lines"],
        Some(input.as_bytes()),
    );
    wait_for(|| {
        app.assert_running("while counting");
        let seen = latest_counts(k, server, "counts");
        if seen == *expected {
            return Ok(());
        }
        Err(format!(
            "counts after {lines:?}\nexpected {expected:?}\nread     {seen:?}\n{}\n{}",
            app.report(),
            server_tail(server)
        ))
    });
}

/// Kafka Streams 4.3.1 with its default processing guarantee (at_least_once) and group protocol
/// (classic): the word count reaches RUNNING (its repartition and changelog topics created
/// through CreateTopics, the group joined), and its output has exactly the expected counts
/// after each round of lines. The server's cleaner compacts the changelog meanwhile. Stopped,
/// its state directory deleted and started again, it restores its store from the compacted
/// changelog and goes on counting from there: "fox", seen 3 times before and twice after,
/// reads 5.
#[test]
fn kafka_streams_word_count_restores_its_counts_from_the_compacted_changelog() {
    let Some(apps) = apps() else { return };
    let k = Kafkit::new();
    let work = tempfile::tempdir().unwrap();
    let server = Server::start(k.log_dir(), &["log.cleaner.backoff.ms=100"]);
    create_topic(&k, &server, "lines", 2);
    create_topic(&k, &server, "counts", 2);

    let mut app = start_word_count(apps, work.path(), "wordcount-1", &server);
    let mut expected = BTreeMap::new();
    // Rounds apart by at least a commit (500 ms): each round's changelog records roll the
    // changelog's segment (segment.ms 200), so the cleaner finds the earlier counts of words
    // that come back (the, fox, lazy, dog) superseded.
    feed(
        &k,
        &server,
        &mut app,
        &mut expected,
        &[
            "The quick brown fox",
            "jumps over the lazy dog",
            "the dog barks",
        ],
    );
    feed(
        &k,
        &server,
        &mut app,
        &mut expected,
        &["the fox runs", "a lazy cat"],
    );
    feed(
        &k,
        &server,
        &mut app,
        &mut expected,
        &["The end of the day, the fox and the dog"],
    );
    assert_eq!(expected["the"], 8);
    assert_eq!(expected["fox"], 3);
    wait_for(|| {
        if cleaned_away(&server, "wc-counts-changelog") > 0 {
            return Ok(());
        }
        Err(format!(
            "the cleaner removed nothing from wc-counts-changelog\n{}",
            server_tail(&server)
        ))
    });
    let topics = k.ok(
        "kafka-topics",
        &["--bootstrap-server", &server.bootstrap, "--describe"],
        None,
    );
    assert!(
        topics
            .lines()
            .any(|l| l.starts_with("Topic: wc-counts-changelog")
                && l.contains("cleanup.policy=compact")),
        "{topics}"
    );
    assert!(
        topics
            .lines()
            .any(|l| l.starts_with("Topic: wc-words-repartition")
                && l.contains("cleanup.policy=delete")),
        "{topics}"
    );

    app.stop();
    assert!(
        app.stdout().contains("closed"),
        "the word count did not close cleanly\n{}",
        app.report()
    );
    let first = app.report();
    drop(app);
    std::fs::remove_dir_all(work.path().join("state")).expect("the state directory exists");

    // Started again without local state: every store partition is restored from the changelog,
    // which the cleaner compacted.
    let mut app = start_word_count(apps, work.path(), "wordcount-2", &server);
    let restored: u64 = app
        .stdout()
        .lines()
        .filter_map(|l| {
            let n = l.strip_prefix("restored counts ")?.split(' ').nth(1)?;
            n.parse::<u64>().ok()
        })
        .sum();
    // "restoring counts P from START to END": the offsets each partition's restore covered.
    let span: u64 = app
        .stdout()
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("restoring counts ")?;
            let (_, range) = rest.split_once(" from ")?;
            let (start, end) = range.split_once(" to ")?;
            Some(end.parse::<u64>().ok()? - start.parse::<u64>().ok()?)
        })
        .sum();
    // One record for each word at least, and fewer records than offsets: what the cleaner
    // removed was not read.
    assert!(
        restored >= expected.len() as u64 && restored < span,
        "restored {restored} records over {span} offsets for {} words\n{}\n{first}\n{}",
        expected.len(),
        app.report(),
        server_tail(&server)
    );
    feed(
        &k,
        &server,
        &mut app,
        &mut expected,
        &["the fox", "The lazy fox sleeps"],
    );
    assert_eq!(expected["the"], 10);
    assert_eq!(expected["fox"], 5);
    assert_eq!(expected["sleeps"], 1);
    app.stop();
}

// ---------------------------------------------------------------------------------------------
// Kafka Connect

/// An HTTP/1.0 request to the worker's REST API (no chunked answers); its status and body.
/// `None` while nothing listens or the connection breaks.
fn http(port: u16, method: &str, path: &str, body: Option<&str>) -> Option<(u16, String)> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    let body = body.unwrap_or("");
    let request = format!(
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

/// The position the connector's stored offsets say for `file`, through the REST API
/// (`GET /connectors/<name>/offsets`, which reads the offsets topic).
fn stored_position(port: u16, connector: &str, file: &Path) -> Option<u64> {
    let (status, body) = http(
        port,
        "GET",
        &format!("/connectors/{connector}/offsets"),
        None,
    )?;
    if status != 200 {
        return None;
    }
    let offsets: serde_json::Value = serde_json::from_str(&body).ok()?;
    offsets["offsets"]
        .as_array()?
        .iter()
        .find(|o| o["partition"]["filename"].as_str() == file.to_str())?["offset"]["position"]
        .as_u64()
}

/// Starts a distributed worker with `worker.properties` of `work`; waits until its REST API
/// answers with the server's cluster id.
fn start_worker(apps: &Path, work: &Path, name: &str, port: u16, server: &Server) -> Jvm {
    let props = work.join("worker.properties");
    let mut worker = Jvm::start(
        apps,
        work,
        name,
        "org.apache.kafka.connect.cli.ConnectDistributed",
        &[props.to_str().unwrap()],
    );
    wait_for(|| {
        worker.assert_running("before its REST API answered");
        match http(port, "GET", "/", None) {
            Some((200, body)) if body.contains("kafka_cluster_id") => Ok(()),
            root => Err(format!(
                "the Connect worker's REST API does not answer (last: {root:?})\n{}\n{}",
                worker.report(),
                server_tail(server)
            )),
        }
    });
    worker
}

/// Appends `lines` to the source file, then waits until the topic holds exactly `sent` (the
/// whole file so far, in order) and the connector's stored offset is the file's end.
fn append_and_wait(
    k: &Kafkit,
    server: &Server,
    worker: &mut Jvm,
    port: u16,
    file: &Path,
    sent: &mut Vec<String>,
    lines: impl IntoIterator<Item = String>,
) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(file)
        .unwrap();
    for line in lines {
        writeln!(f, "{line}").unwrap();
        sent.push(line);
    }
    drop(f);
    let end = std::fs::metadata(file).unwrap().len();
    let expected: String = sent.iter().map(|l| format!("{l}\n")).collect();
    let read = wait_for(|| {
        worker.assert_running("while sending the file");
        let read = read_topic(k, server, "file-lines", &[]);
        let position = stored_position(port, "file-source", file);
        if read.len() >= expected.len() && position == Some(end) {
            return Ok(read);
        }
        let connector = http(port, "GET", "/connectors/file-source/status", None);
        Err(format!(
            "the topic should hold the file's {} lines ({end} bytes, stored offset {position:?}, \
             connector {connector:?}), it has {}, ending with:\n{}\n{}\n{}",
            sent.len(),
            read.lines().count(),
            tail(&read, 5),
            worker.report(),
            server_tail(server)
        ))
    });
    assert_eq!(
        read,
        expected,
        "the topic is not the file's lines once each, in order\n{}",
        worker.report()
    );
}

/// A Kafka Connect 4.3.1 worker in distributed mode starts against the server (its config,
/// offsets and status topics created compacted, with replication factor 1, the config topic
/// with one partition; its group of the "connect" protocol), runs a FileStreamSource connector
/// created through its REST API, and stores its offsets in the offsets topic, which the cleaner
/// compacts. After a restart (the topics now exist, and the worker checks that they are
/// compacted) it resumes from the stored offsets: lines appended while it was down are sent,
/// and no line is sent twice.
#[test]
fn kafka_connect_worker_resumes_a_file_source_from_its_stored_offsets() {
    let Some(apps) = apps() else { return };
    let k = Kafkit::new();
    let work = tempfile::tempdir().unwrap();
    let server = Server::start(k.log_dir(), &["log.cleaner.backoff.ms=100"]);
    create_topic(&k, &server, "file-lines", 1);
    let port = closed_port();
    std::fs::write(
        work.path().join("worker.properties"),
        format!(
            "bootstrap.servers={bootstrap}\n\
             group.id=kafkit-connect\n\
             key.converter=org.apache.kafka.connect.storage.StringConverter\n\
             value.converter=org.apache.kafka.connect.storage.StringConverter\n\
             config.storage.topic=connect-configs\n\
             offset.storage.topic=connect-offsets\n\
             status.storage.topic=connect-status\n\
             config.storage.replication.factor=1\n\
             offset.storage.replication.factor=1\n\
             status.storage.replication.factor=1\n\
             offset.storage.segment.ms=200\n\
             offset.storage.min.cleanable.dirty.ratio=0.01\n\
             offset.flush.interval.ms=500\n\
             listeners=http://127.0.0.1:{port}\n",
            bootstrap = server.bootstrap
        ),
    )
    .unwrap();
    let file = work.path().join("input.txt");
    std::fs::write(&file, "").unwrap();

    let mut worker = start_worker(apps, work.path(), "connect-1", port, &server);
    let connector = serde_json::json!({
        "name": "file-source",
        "config": {
            "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "tasks.max": "1",
            "file": file.to_str().unwrap(),
            "topic": "file-lines",
        }
    })
    .to_string();
    // The worker may still be joining its group or reading its config topic: it answers 409 or
    // 503 until then.
    wait_for(|| {
        worker.assert_running("before the connector was created");
        match http(port, "POST", "/connectors", Some(&connector)) {
            Some((201, _)) => Ok(()),
            created => Err(format!(
                "POST /connectors: {created:?}\n{}\n{}",
                worker.report(),
                server_tail(&server)
            )),
        }
    });

    // Rounds of lines, each sent and its offset stored before the next: each round's offset
    // record rolls a segment of the offsets topic (segment.ms 200), until the cleaner has
    // dropped superseded offsets.
    let mut sent = Vec::new();
    let mut round = 0;
    while round < 3 || cleaned_away(&server, "connect-offsets") == 0 {
        assert!(
            round < 30,
            "after {round} rounds the cleaner removed nothing from connect-offsets\n{}",
            server_tail(&server)
        );
        let lines = (0..40).map(|i| format!("round {round} line {i}"));
        append_and_wait(&k, &server, &mut worker, port, &file, &mut sent, lines);
        round += 1;
    }
    let topics = k.ok(
        "kafka-topics",
        &["--bootstrap-server", &server.bootstrap, "--describe"],
        None,
    );
    for (topic, partitions) in [
        ("connect-configs", 1),
        ("connect-offsets", 25),
        ("connect-status", 5),
    ] {
        assert!(
            topics
                .lines()
                .any(|l| l.starts_with(&format!("Topic: {topic}\t"))
                    && l.contains(&format!("PartitionCount: {partitions}\t"))
                    && l.contains("cleanup.policy=compact")),
            "{topic}: {topics}"
        );
    }

    worker.stop();
    let first = worker.report();
    drop(worker);
    // Lines written while no worker runs.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    for i in 0..50 {
        let line = format!("while stopped line {i}");
        writeln!(f, "{line}").unwrap();
        sent.push(line);
    }
    drop(f);

    let mut worker = start_worker(apps, work.path(), "connect-2", port, &server);
    // The connector comes back from the config topic, its task from the stored offsets: the
    // topic then holds every line once. One more line after that shows the task still runs.
    append_and_wait(&k, &server, &mut worker, port, &file, &mut sent, []);
    let last = ["after the restart".to_string()];
    append_and_wait(&k, &server, &mut worker, port, &file, &mut sent, last);
    assert!(
        !worker.stderr().contains("] ERROR "),
        "the worker logged errors\n{}\n{first}",
        worker.report()
    );
    worker.stop();
}
