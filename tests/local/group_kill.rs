//! Consumer-group members in separate processes, killed with SIGKILL: the survivor takes the
//! dead member's partitions over from its last commit (found through the freed `flock`, well
//! before the session timeout), and a commit is all-or-nothing whenever the kill lands.
//!
//! The child processes are this test binary itself, re-executed with `KAFKIT_GROUP_CHILD` set,
//! running only the `child_process` test.

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use common::{PATIENCE, signal};
use kafkit::local::group::{GroupStore, MemberConfig, TopicPartition};

const ROLE_VAR: &str = "KAFKIT_GROUP_CHILD";
const DIR_VAR: &str = "KAFKIT_GROUP_CHILD_DIR";
const PARTITIONS: u32 = 4;

const SESSION_VAR: &str = "KAFKIT_GROUP_CHILD_SESSION_MS";

/// By default a session timeout far longer than any wait of these tests: a killed member must
/// be detected through its lock, not its silence.
const LONG_SESSION_MS: u64 = 600_000;

fn config() -> MemberConfig {
    let session_ms = std::env::var(SESSION_VAR)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(LONG_SESSION_MS);
    MemberConfig {
        session_timeout: Duration::from_millis(session_ms),
        heartbeat_interval: Duration::from_millis(100),
    }
}

fn subscription() -> BTreeMap<String, u32> {
    BTreeMap::from([("t".to_string(), PARTITIONS)])
}

/// The child's entry point; a no-op in the normal test run.
#[test]
fn child_process() {
    let Ok(role) = std::env::var(ROLE_VAR) else {
        return;
    };
    let dir = std::env::var(DIR_VAR).expect("child needs its log dir");
    let store = GroupStore::new(Path::new(&dir));
    let mut member = store.join("g", "child", config()).unwrap();
    // Never outlive a parent that failed to kill us (the parent kills us when it is done,
    // however long a loaded machine makes it take).
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut k: i64 = 0;
    let mut reported = usize::MAX;
    while Instant::now() < deadline {
        let positions: BTreeMap<TopicPartition, i64> = member
            .owned()
            .iter()
            .map(|tp| (tp.clone(), 100 + i64::from(tp.1)))
            .collect();
        let change = member.poll(&subscription(), &positions).unwrap();
        match role.as_str() {
            // Consumes: commits 100 + p for each partition as soon as it owns it.
            "member" => {
                if change.fenced {
                    println!("fenced, rejoined as {}", member.member_id());
                }
                if !change.acquired.is_empty() {
                    member
                        .commit(&positions_for(&member, |p| 100 + i64::from(p)))
                        .unwrap();
                }
                if member.owned().len() != reported {
                    reported = member.owned().len();
                    println!("owned {reported}");
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            // Commits the same counter to every partition, as fast as it can.
            "committer" => {
                if let Some((_, Some(start))) = change.acquired.first() {
                    k = k.max(*start);
                }
                if member.owned().len() as u32 == PARTITIONS {
                    k += 1;
                    member.commit(&positions_for(&member, |_| k)).unwrap();
                    if k % 50 == 1 {
                        println!("committing {k}");
                    }
                }
            }
            other => panic!("unknown child role {other}"),
        }
    }
}

fn positions_for(
    member: &kafkit::local::group::Member,
    offset: impl Fn(u32) -> i64,
) -> BTreeMap<TopicPartition, i64> {
    member
        .owned()
        .iter()
        .map(|tp| (tp.clone(), offset(tp.1 as u32)))
        .collect()
}

/// Kills the child if the test fails before it does.
struct Killer(Child);

impl Drop for Killer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_child(role: &str, dir: &Path) -> (Killer, BufReader<ChildStdout>) {
    spawn_child_with(role, dir, LONG_SESSION_MS)
}

fn spawn_child_with(role: &str, dir: &Path, session_ms: u64) -> (Killer, BufReader<ChildStdout>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "group_kill::child_process",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE_VAR, role)
        .env(SESSION_VAR, session_ms.to_string())
        .env(DIR_VAR, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    (Killer(child), out)
}

/// Reads the child's stdout until a line contains `marker` (libtest may print its own text
/// before it on the same line).
fn wait_for(out: &mut BufReader<ChildStdout>, marker: &str) {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "child exited before printing {marker:?}"
        );
        if line.contains(marker) {
            return;
        }
    }
}

#[test]
fn killed_member_is_taken_over_from_its_last_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, mut out) = spawn_child("member", dir.path());
    wait_for(&mut out, &format!("owned {PARTITIONS}"));

    let store = GroupStore::new(dir.path());
    let mut me = store.join("g", "parent", config()).unwrap();
    let mut acquired = Vec::new();
    let start = Instant::now();
    while me.owned().len() < 2 {
        assert!(start.elapsed() < PATIENCE, "no rebalance");
        acquired.extend(me.poll(&subscription(), &BTreeMap::new()).unwrap().acquired);
        std::thread::sleep(Duration::from_millis(5));
    }
    wait_for(&mut out, "owned 2");
    // The child committed what it released.
    for (tp, start) in &acquired {
        assert_eq!(*start, Some(100 + i64::from(tp.1)));
    }

    child.0.kill().unwrap(); // SIGKILL
    child.0.wait().unwrap();
    let killed_at = Instant::now();
    while me.owned().len() < PARTITIONS as usize {
        // Detected through the freed lock: the child's session would last 10 minutes.
        assert!(killed_at.elapsed() < PATIENCE, "no takeover");
        acquired.extend(me.poll(&subscription(), &BTreeMap::new()).unwrap().acquired);
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(acquired.len(), PARTITIONS as usize);
    for (tp, start) in &acquired {
        assert_eq!(*start, Some(100 + i64::from(tp.1)), "{tp:?}");
    }
    let d = store.describe("g").unwrap().unwrap();
    assert_eq!(d.members.len(), 1);
    assert_eq!(d.members[0].member_id, me.member_id());
    me.leave(&BTreeMap::new()).unwrap();
}

#[test]
fn commits_are_all_or_nothing_across_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let store = GroupStore::new(dir.path());
    let mut last = 0;
    for round in 0..4u64 {
        let (mut child, mut out) = spawn_child("committer", dir.path());
        wait_for(&mut out, "committing");
        // Land the kill at varying points of the commit loop. Any point will do: whenever it
        // lands, a commit must be whole, so a slower child only moves the point.
        std::thread::sleep(Duration::from_millis(3 + 7 * round));
        child.0.kill().unwrap(); // SIGKILL
        child.0.wait().unwrap();
        let committed = store.committed("g").unwrap();
        assert_eq!(committed.len(), PARTITIONS as usize);
        let values: Vec<i64> = committed.values().map(|c| c.offset).collect();
        assert!(
            values.iter().all(|v| *v == values[0]),
            "a torn commit: {values:?}"
        );
        assert!(
            values[0] > last,
            "commits went backwards: {values:?} after {last}"
        );
        last = values[0];
    }
    // The dead members never block a reset for long: their locks are free.
    store
        .reset_offsets("g", &BTreeMap::from([(("t".to_string(), 0), 0)]))
        .unwrap();
}

/// Polls until `me` owns `n` partitions; returns how long that took.
fn poll_until(me: &mut kafkit::local::group::Member, n: usize, limit: Duration) -> Duration {
    let start = Instant::now();
    while me.owned().len() != n {
        assert!(start.elapsed() < limit, "owned {:?}", me.owned());
        me.poll(&subscription(), &BTreeMap::new()).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    start.elapsed()
}

#[test]
fn stopped_member_is_evicted_and_fenced_when_it_resumes() {
    let dir = tempfile::tempdir().unwrap();
    // Long enough that the child, running on a loaded machine, heartbeats well within it
    // until it is stopped.
    let session = Duration::from_secs(5);
    let (child, mut out) = spawn_child_with("member", dir.path(), session.as_millis() as u64);
    wait_for(&mut out, &format!("owned {PARTITIONS}"));
    let store = GroupStore::new(dir.path());
    let mut me = store.join("g", "parent", config()).unwrap();
    poll_until(&mut me, 2, PATIENCE);
    wait_for(&mut out, "owned 2");
    let child_id = store
        .describe("g")
        .unwrap()
        .unwrap()
        .members
        .into_iter()
        .find(|m| m.client_id == "child")
        .unwrap()
        .member_id;

    // Never while it holds the group lock, which would stall us until it is continued.
    let group_lock = std::fs::File::open(dir.path().join("groups/g/.lock")).unwrap();
    group_lock.lock().unwrap();
    signal(&child.0, "-STOP");
    drop(group_lock);
    // Its lock is still held, so only the session timeout can evict it.
    let waited = poll_until(&mut me, PARTITIONS as usize, PATIENCE);
    assert!(waited >= session - Duration::from_millis(250), "{waited:?}");
    let d = store.describe("g").unwrap().unwrap();
    assert!(d.members.iter().all(|m| m.member_id != child_id));

    signal(&child.0, "-CONT");
    // It finds itself fenced, rejoins under a new id, and the group splits again.
    wait_for(&mut out, "fenced, rejoined as child-");
    poll_until(&mut me, 2, PATIENCE);
    wait_for(&mut out, "owned 2");
    let d = store.describe("g").unwrap().unwrap();
    assert_eq!(d.members.len(), 2);
    assert!(d.members.iter().all(|m| m.member_id != child_id));
    me.leave(&BTreeMap::new()).unwrap();
}
