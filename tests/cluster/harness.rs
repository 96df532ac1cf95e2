//! The three-node cluster of this test binary: started once by `kafka-cluster.sh run` (a
//! watchdog that kills every node when this process exits, however it exits), nodes stopped,
//! killed and restarted through the same script, one test at a time ([`Session`]), and the tools
//! run against it: ours and Java's.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::common::broker::{self, Watchdog};
use crate::common::text;

/// The node ids: the script names them 1, 2 and 3.
pub const NODES: [u32; 3] = [1, 2, 3];

/// How long a condition on the cluster may take to hold (a node fenced, a leader elected, a
/// replica caught up) on a loaded two-core machine before a test fails.
pub const PATIENCE: Duration = Duration::from_secs(180);

static CLUSTER: OnceLock<Result<Watchdog, String>> = OnceLock::new();

/// One test at a time: the tests kill nodes.
static EXCLUSIVE: Mutex<()> = Mutex::new(());

/// The cluster, started on first use.
fn started() -> &'static Result<Watchdog, String> {
    CLUSTER.get_or_init(|| broker::start_watchdog(&script()))
}

/// Starts the cluster (once): its bootstrap list, or why it did not start.
pub fn cluster_bootstrap() -> Result<String, String> {
    started()
        .as_ref()
        .map(|c| c.bootstrap.clone())
        .map_err(Clone::clone)
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/broker/kafka-cluster.sh")
}

/// A test's hold on the cluster: taken first thing, held to the end of the test.
pub struct Session {
    _turn: MutexGuard<'static, ()>,
    cluster: &'static Watchdog,
    /// When the test's turn came: its time is reported at the end (CI's budget is tight).
    started: Instant,
}

impl Drop for Session {
    fn drop(&mut self) {
        let name = std::thread::current().name().unwrap_or("?").to_string();
        report(&format!(
            "cluster test {name}: {:.0} s",
            self.started.elapsed().as_secs_f64()
        ));
    }
}

impl Session {
    /// Waits for this test's turn, then for the cluster to be whole (every node up, every
    /// partition fully replicated, whatever the previous test left); `None` (after saying so)
    /// when this machine cannot run the cluster and `KAFKIT_REQUIRE_BROKER=1` is not set.
    ///
    /// In a whole run the test has already run on the cluster runner ([`super::beside`]):
    /// then its outcome there is passed on (`None` when it passed).
    pub fn begin() -> Option<Session> {
        if super::beside::ran_beside() {
            return None;
        }
        // A test that failed while holding the lock poisons it; the cluster is mended below.
        let turn = EXCLUSIVE.lock().unwrap_or_else(|e| e.into_inner());
        let cluster = match started() {
            Ok(c) => c,
            Err(why) if broker::required() => {
                panic!("KAFKIT_REQUIRE_BROKER=1 but the three-node cluster did not start: {why}")
            }
            Err(why) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED (no three-node Kafka cluster; set KAFKIT_REQUIRE_BROKER=1 to make this a failure): {why}"
                );
                return None;
            }
        };
        let session = Session {
            _turn: turn,
            cluster,
            started: Instant::now(),
        };
        session.make_whole();
        Some(session)
    }

    /// The bootstrap list: all three nodes.
    pub fn bootstrap(&self) -> &str {
        &self.cluster.bootstrap
    }

    /// Node `n`'s own address.
    pub fn address(&self, n: u32) -> String {
        let i = NODES.iter().position(|x| *x == n).expect("a node id");
        self.bootstrap()
            .split(',')
            .nth(i)
            .expect("three addresses")
            .to_string()
    }

    /// Whether node `n`'s JVM runs (a killed one may linger as a zombie for a moment).
    pub fn is_up(&self, n: u32) -> bool {
        let pid_file = self.cluster.dir.join(format!("node{n}/broker.pid"));
        let Ok(pid) = std::fs::read_to_string(pid_file) else {
            return false;
        };
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|stat| {
            stat.rsplit(") ")
                .next()
                .is_some_and(|s| !s.starts_with('Z'))
        })
    }

    /// SIGKILL for node `n`, waited for.
    pub fn kill(&self, n: u32) {
        self.node("kill", n);
    }

    /// A clean shutdown of node `n`, waited for.
    pub fn stop(&self, n: u32) {
        self.node("stop", n);
    }

    /// Starts node `n` again (same ports, same data) and waits until it serves.
    pub fn restart(&self, n: u32) {
        let out = self.node("restart", n);
        assert_eq!(text(&out.stdout).trim(), self.address(n), "node {n} moved");
    }

    fn node(&self, what: &str, n: u32) -> Output {
        let out = Command::new("bash")
            .arg(script())
            .arg(what)
            .arg(&self.cluster.dir)
            .arg(n.to_string())
            // A restarted node outlives the script: it dies with this process.
            .env("KAFKIT_BROKER_OWNER", std::process::id().to_string())
            .stdin(Stdio::null())
            .output()
            .expect("the cluster script runs");
        assert!(
            out.status.success(),
            "kafka-cluster.sh {what} node {n}: {}",
            text(&out.stderr)
        );
        out
    }

    /// Every node up and every partition of every topic fully replicated, with its preferred
    /// leader: the state a test starts from.
    pub fn make_whole(&self) {
        for n in NODES {
            if !self.is_up(n) {
                self.restart(n);
            }
        }
        self.wait_for("every partition in sync at its preferred leader", || {
            let out = self.ours("kafka-topics", &["--describe"]);
            out.status.success()
                && Layout::parse(&text(&out.stdout)).iter().all(|p| {
                    p.isr.len() == p.replicas.len() && p.leader == p.replicas.first().copied()
                })
        });
    }

    /// Polls `done` until it holds, failing the test after [`PATIENCE`].
    pub fn wait_for(&self, what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + PATIENCE;
        while !done() {
            assert!(Instant::now() < deadline, "not within {PATIENCE:?}: {what}");
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// One of our tools against the cluster (all three nodes in the bootstrap list).
    pub fn ours(&self, tool: &str, args: &[&str]) -> Output {
        self.ours_at(self.bootstrap(), tool, args, None)
    }

    /// One of our tools against `servers`, with `stdin` as its input if given.
    pub fn ours_at(
        &self,
        servers: &str,
        tool: &str,
        args: &[&str],
        stdin: Option<&[u8]>,
    ) -> Output {
        let mut cmd = broker::kafkit_at(tool, servers);
        cmd.args(args).timeout(Duration::from_secs(300));
        if let Some(input) = stdin {
            cmd.write_stdin(input.to_vec());
        }
        cmd.output().unwrap_or_else(|e| panic!("{tool} runs: {e}"))
    }

    /// One of our tools, which must succeed without a word on stderr: its stdout.
    pub fn ours_ok(&self, tool: &str, args: &[&str]) -> String {
        ok(tool, args, self.ours(tool, args))
    }

    /// A Java tool against the cluster (`--bootstrap-server` first).
    pub fn java(&self, class: &str, args: &[&str]) -> Output {
        let mut all = vec!["--bootstrap-server", self.bootstrap()];
        all.extend_from_slice(args);
        broker::java_tool(class, &all)
    }

    /// A Java tool, which must succeed: its stdout.
    pub fn java_ok(&self, class: &str, args: &[&str]) -> String {
        let out = self.java(class, args);
        assert!(
            out.status.success(),
            "Java {class} {args:?} failed: {}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// Our tool's and the Java tool's stdout for the same arguments on the same state, which
    /// must be equal after `normalize`. The cluster may still be changing (an ISR growing, a
    /// leader moving): a difference counts only if our output did not change across the Java
    /// run; otherwise both run again.
    pub fn same_as_java(
        &self,
        tool: &str,
        class: &str,
        args: &[&str],
        normalize: impl Fn(&str) -> String,
    ) -> String {
        for _ in 0..5 {
            let before = normalize(&self.ours_ok(tool, args));
            let java = normalize(&self.java_ok(class, args));
            if before == java {
                return before;
            }
            let after = normalize(&self.ours_ok(tool, args));
            assert!(
                before != after,
                "{tool} {args:?} differs from Java's on a steady cluster:\nours:\n{before}\njava:\n{java}"
            );
        }
        panic!("{tool} {args:?}: the cluster never held still long enough to compare with Java");
    }

    /// The partitions of the topics matching `pattern`, as our `kafka-topics --describe` says.
    pub fn layout(&self, pattern: &str) -> Vec<PartitionState> {
        Layout::parse(&self.ours_ok("kafka-topics", &["--describe", "--topic", pattern]))
    }

    /// What our `kafka-consumer-groups --describe --state` says of `group`; `None` while it
    /// fails (the coordinator moving) or the group does not exist.
    pub fn group_state(&self, group: &str) -> Option<GroupState> {
        let out = self.ours(
            "kafka-consumer-groups",
            &["--describe", "--group", group, "--state"],
        );
        if !out.status.success() {
            return None;
        }
        // GROUP  COORDINATOR (ID)  ASSIGNMENT-STRATEGY  STATE  #MEMBERS
        let stdout = text(&out.stdout);
        let fields: Vec<&str> = stdout.lines().nth(2)?.split_whitespace().collect();
        let [_, _, id, _, state, members] = fields[..] else {
            return None;
        };
        Some(GroupState {
            coordinator: id.trim_matches(['(', ')']).parse().ok()?,
            state: state.to_string(),
            members: members.parse().ok()?,
        })
    }

    /// The group's coordinator now.
    pub fn coordinator(&self, group: &str) -> u32 {
        let mut found = None;
        self.wait_for(&format!("the coordinator of {group}"), || {
            found = self.group_state(group).map(|s| s.coordinator);
            found.is_some()
        });
        found.expect("found above")
    }
}

/// A group's line in `kafka-consumer-groups --describe --state`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupState {
    pub coordinator: u32,
    pub state: String,
    pub members: u32,
}

/// A tool's output that must be a success without a panic: its stdout.
pub fn ok(tool: &str, args: &[&str], out: Output) -> String {
    let stderr = text(&out.stderr);
    assert!(
        out.status.success(),
        "{tool} {args:?} failed with {:?}: {}\n{stderr}",
        out.status.code(),
        text(&out.stdout)
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    text(&out.stdout)
}

/// One partition line of `kafka-topics --describe`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionState {
    pub topic: String,
    pub partition: u32,
    pub leader: Option<u32>,
    pub replicas: Vec<u32>,
    pub isr: Vec<u32>,
}

/// Reads `kafka-topics --describe` text.
pub struct Layout;

impl Layout {
    pub fn parse(describe: &str) -> Vec<PartitionState> {
        let ids = |s: &str| -> Vec<u32> { s.split(',').filter_map(|x| x.parse().ok()).collect() };
        describe
            .lines()
            .filter(|l| l.starts_with('\t'))
            .map(|l| {
                let field = |name: &str| {
                    l.split('\t')
                        .find_map(|f| f.strip_prefix(name)?.strip_prefix(": "))
                        .unwrap_or_default()
                };
                PartitionState {
                    topic: field("Topic").to_string(),
                    partition: field("Partition").parse().expect("a partition number"),
                    leader: field("Leader").parse().ok(),
                    replicas: ids(field("Replicas")),
                    isr: ids(field("Isr")),
                }
            })
            .collect()
    }
}

/// Kafka's topic names for a test: `prefix-<pid>-<n>`.
pub fn unique(prefix: &str) -> String {
    broker::unique_topic(prefix)
}

/// A line straight to the terminal, past libtest's capture: for measurements worth seeing in
/// every run (CI's log), not only when a test fails.
pub fn report(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}
