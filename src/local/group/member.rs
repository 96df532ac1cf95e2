//! [`Member`]: one live member of a consumer group on the embedded log.
//!
//! A member holds an exclusive `flock` on its member file for as long as it lives, so its death
//! (even `kill -9`) is visible to the others at once: they can take the lock. It heartbeats by
//! setting that file's mtime through the locked descriptor, in its polls and commits, while it
//! waits for the group lock and before it releases it; a member silent for longer than its
//! session timeout (one that stopped polling) is evicted like a dead one.
//!
//! Fencing: an evicted member (its member file is gone) can no longer commit: [`Member::commit`]
//! returns [`LocalError::MemberFenced`] and writes nothing. Its next [`Member::poll`] reports all
//! of its partitions as revoked (with [`AssignmentChange::fenced`] set) and rejoins the group
//! with a new member id, as a Kafka consumer does after `UNKNOWN_MEMBER_ID`; partitions it gets
//! again in that same poll are listed in `acquired` with the group's committed offset.
//!
//! Dropping a `Member` without [`Member::leave`] is a crash: the lock is released, and the other
//! members take its partitions over from its last commit.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{ErrorKind, Write};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use kafka_protocol::ResponseError;

use super::super::error::{IoContext, LocalError, Result};
use super::super::lock::{FileLock, LockMode};
use super::store::{GroupDir, Liveness, MemberInfo, MemberState, targets};
use super::{AssignmentChange, ServedMember, TopicPartition};

/// Membership timing, from the consumer properties `session.timeout.ms` and
/// `heartbeat.interval.ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberConfig {
    /// How long the member may go without a heartbeat (a poll) before the others evict it.
    /// Kafka's default: 45 s.
    pub session_timeout: Duration,
    /// How often a poll refreshes the heartbeat and checks the other members for death or hang.
    /// Kafka's default: 3 s.
    pub heartbeat_interval: Duration,
}

impl Default for MemberConfig {
    fn default() -> Self {
        MemberConfig {
            session_timeout: Duration::from_secs(45),
            heartbeat_interval: Duration::from_secs(3),
        }
    }
}

/// A live member of a group; holds the `flock` on its member file.
#[derive(Debug)]
pub struct Member {
    dir: GroupDir,
    client_id: String,
    config: MemberConfig,
    host: String,
    member_id: String,
    /// The member file, locked exclusively; never renamed or replaced (that would drop the lock).
    file: File,
    owned: BTreeSet<TopicPartition>,
    /// The subscription last published in the state file; `None` before the first poll.
    subscription: Option<BTreeMap<String, u32>>,
    /// The group generation this member last acted on.
    generation: u64,
    last_heartbeat: Instant,
    /// Set when a commit found the member evicted; the next poll rejoins.
    fenced: bool,
    /// The networked members last published by the server's stand-in.
    served: Vec<ServedMember>,
    /// What this member's commits wrote (or found already written) since it last synced: an
    /// auto-commit that would change none of it skips the group lock. A member stopped
    /// (Ctrl-Z, a debugger) while it holds that lock stalls the whole group, and an idle
    /// consumer commits every `auto.commit.interval.ms`.
    committed: BTreeMap<TopicPartition, i64>,
}

impl Member {
    /// Joins the group: see [`super::GroupStore::join`].
    pub(crate) fn join(
        dir: GroupDir,
        client_id: &str,
        config: MemberConfig,
        for_server: bool,
    ) -> Result<Member> {
        if config.heartbeat_interval >= config.session_timeout {
            // Kafka's consumer refuses this too.
            return Err(LocalError::Invalid(
                "Heartbeat must be set lower than the session timeout".to_string(),
            ));
        }
        dir.create()?;
        let host = hostname();
        let _lock = dir.lock(LockMode::Exclusive)?;
        // Under the group lock, under which a share group is first made too: a first consumer
        // and a first share member never both get in.
        if crate::local::share::is_share_group(&dir.dir) {
            // Kafka keeps the kinds of group apart; its coordinator answers a classic member
            // of a share group so.
            return Err(LocalError::kafka(
                ResponseError::InconsistentGroupProtocol,
                "The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list.",
            ));
        }
        let live = dir.reap(None)?;
        // One group, one way in: networked and `--log-dir` consumers never share a group at
        // the same time, so they never read the same records (checked under the group lock).
        refuse_mixed(&dir.group, &live, for_server)?;
        let (member_id, file) = register(&dir, client_id, &host, &config)?;
        let generation = dir.read_generation()?;
        Ok(Member {
            dir,
            client_id: client_id.to_string(),
            config,
            host,
            member_id,
            file,
            owned: BTreeSet::new(),
            subscription: None,
            generation,
            last_heartbeat: Instant::now(),
            fenced: false,
            served: Vec::new(),
            committed: BTreeMap::new(),
        })
    }

    /// `<client-id>-<uuid v4>`, as Kafka forms consumer ids. Changes when a fenced member
    /// rejoins.
    pub fn member_id(&self) -> &str {
        &self.member_id
    }

    /// The group id.
    pub fn group(&self) -> &str {
        &self.dir.group
    }

    /// The consumer's client id.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The partitions this member owns now. Consume only these.
    pub fn owned(&self) -> &BTreeSet<TopicPartition> {
        &self.owned
    }

    /// Called by the consumer every poll. Cheap when nothing changed: it reads the small
    /// generation file, and every heartbeat interval also refreshes the heartbeat and checks the
    /// other members for death or hang.
    ///
    /// `subscription`: topic -> partition count of every topic this member consumes now.
    /// `positions`: the next offset for partitions it owns, committed before one is released.
    ///
    /// When something changed, under the group lock: removes dead and hung members, publishes
    /// the subscription, computes the range assignment, commits and releases partitions that
    /// moved away, and acquires newly assigned ones that no other live member still owns (the
    /// rest are acquired by a later poll, once their owner released them or was removed). A
    /// partition assigned from a topic's larger partition count, as another member sees it, can
    /// be beyond the caller's count until its metadata catches up.
    pub fn poll(
        &mut self,
        subscription: &BTreeMap<String, u32>,
        positions: &BTreeMap<TopicPartition, i64>,
    ) -> Result<AssignmentChange> {
        self.poll_lazily(subscription, || positions.clone())
    }

    /// [`Member::poll`] with the positions made only when they are needed (most polls change
    /// nothing, and a consumer of many partitions builds them at a cost).
    pub fn poll_lazily(
        &mut self,
        subscription: &BTreeMap<String, u32>,
        positions: impl FnOnce() -> BTreeMap<TopicPartition, i64>,
    ) -> Result<AssignmentChange> {
        let mut must_sync = self.fenced || self.subscription.as_ref() != Some(subscription);
        if self.heartbeat_if_due()? {
            // Failure detection runs at heartbeat pace, not every poll: it opens every member
            // file. Removal itself happens under the group lock, in `sync`.
            if !must_sync {
                must_sync = self
                    .dir
                    .scan(Some(&self.member_id), false)?
                    .iter()
                    .any(|p| p.liveness != Liveness::Live);
            }
        }
        if !must_sync {
            must_sync = self.dir.read_generation()? != self.generation;
        }
        if !must_sync {
            return Ok(AssignmentChange::default());
        }
        self.sync(subscription, &positions())
    }

    /// The slow path of [`Member::poll`], under the group lock.
    fn sync(
        &mut self,
        subscription: &BTreeMap<String, u32>,
        positions: &BTreeMap<TopicPartition, i64>,
    ) -> Result<AssignmentChange> {
        let _lock = self.lock_group()?;
        // Ownership may change here; commits go through the lock again until they repeat.
        self.committed.clear();
        let mut change = AssignmentChange::default();
        if self.fenced || !self.registered()? {
            change.revoked = std::mem::take(&mut self.owned).into_iter().collect();
            change.fenced = true;
            let (member_id, file) = register(&self.dir, &self.client_id, &self.host, &self.config)?;
            // The old file (unlinked by whoever evicted us) closes here, releasing its lock.
            self.member_id = member_id;
            self.file = file;
            self.subscription = None;
            self.fenced = false;
            self.served.clear();
            self.last_heartbeat = Instant::now();
        }

        let mut live = self.dir.reap(Some(&self.member_id))?;
        let Some(me) = live.iter().position(|p| p.id == self.member_id) else {
            // Impossible while we hold the group lock and our member file exists.
            return Err(LocalError::Invalid(format!(
                "member {} is missing from group '{}' after joining",
                self.member_id, self.dir.group
            )));
        };
        let published = live[me].state.clone();
        live[me].state.subscription = subscription.clone();
        let target: BTreeSet<TopicPartition> = targets(&live)
            .remove(&self.member_id)
            .unwrap_or_default()
            .into_iter()
            .collect();

        // The new owned set is published before it is adopted in memory: if a write fails,
        // this member still consumes only partitions that the group's files say it owns.
        let mut owned = self.owned.clone();

        // Release first (after committing), so that others can claim.
        let revoked: Vec<TopicPartition> = owned.difference(&target).cloned().collect();
        if !revoked.is_empty() {
            let to_commit: BTreeMap<TopicPartition, i64> = revoked
                .iter()
                .filter_map(|tp| positions.get(tp).map(|&o| (tp.clone(), o)))
                .collect();
            self.write_commit(&to_commit)?;
            for tp in &revoked {
                owned.remove(tp);
            }
        }

        // Claim what is ours and no other live member still owns.
        let taken: BTreeSet<&TopicPartition> = live
            .iter()
            .filter(|p| p.id != self.member_id)
            .flat_map(|p| p.state.owned.iter())
            .collect();
        let free: Vec<TopicPartition> = target
            .difference(&owned)
            .filter(|tp| !taken.contains(tp))
            .cloned()
            .collect();
        if !free.is_empty() {
            let committed = self.dir.read_offsets()?;
            for tp in free {
                let start = committed.get(&tp).map(|c| c.offset);
                owned.insert(tp.clone());
                change.acquired.push((tp, start));
            }
        }

        let state = MemberState {
            subscription: subscription.clone(),
            owned,
            served: Vec::new(),
        };
        if state != published {
            self.dir.write_state(&self.member_id, &state)?;
            self.owned = state.owned;
            self.dir.bump_generation()?;
        }
        self.subscription = Some(subscription.clone());
        self.generation = self.dir.read_generation()?;
        change.revoked.extend(revoked);
        // Commits and writes may have been slow: the others judge us by the heartbeat as soon
        // as the lock is theirs.
        self.heartbeat_if_due()?;
        Ok(change)
    }

    /// Commits these positions for partitions this member owns (others are ignored, never
    /// committed), atomically under the group lock. [`LocalError::MemberFenced`] if this member
    /// was evicted; then nothing is committed and the next poll rejoins.
    pub fn commit(&mut self, positions: &BTreeMap<TopicPartition, i64>) -> Result<()> {
        self.heartbeat_if_due()?;
        let mine = self.owned_positions(positions);
        if mine.iter().all(|(tp, o)| self.committed.get(tp) == Some(o)) {
            // Already committed by this member, which still owns them: nothing to write.
            return Ok(());
        }
        let _lock = self.lock_group()?;
        self.check_not_fenced()?;
        self.write_commit(&mine)?;
        self.committed.extend(mine);
        // The write's fsyncs may have been slow: the others judge us by the heartbeat as soon
        // as the lock is theirs.
        self.heartbeat_if_due()?;
        Ok(())
    }

    /// Graceful leave: commits the positions of owned partitions, releases everything and
    /// removes the member file, so the others rebalance at once. [`LocalError::MemberFenced`]
    /// (and no commit) if this member had been evicted.
    pub fn leave(mut self, positions: &BTreeMap<TopicPartition, i64>) -> Result<()> {
        let _lock = self.lock_group()?;
        self.check_not_fenced()?;
        self.write_commit(&self.owned_positions(positions))?;
        self.owned.clear();
        self.dir.remove_member(&self.member_id)?;
        self.dir.bump_generation()?;
        Ok(())
    }

    /// The stand-in member of `kafka-server-start` publishes the networked members it stands
    /// for (in its state file, under the group lock), so that `kafka-consumer-groups --log-dir`
    /// describes them, each with its topics and partitions sorted. Writes only when they
    /// changed.
    pub fn publish_served(&mut self, mut served: Vec<ServedMember>) -> Result<()> {
        for m in &mut served {
            m.subscribed_topics.sort();
            m.assignment.sort();
        }
        served.sort_by(|a, b| a.member_id.cmp(&b.member_id));
        if served == self.served {
            return Ok(());
        }
        let _lock = self.lock_group()?;
        self.check_not_fenced()?;
        let state = MemberState {
            owned: self.owned.clone(),
            subscription: self.subscription.clone().unwrap_or_default(),
            served,
        };
        self.dir.write_state(&self.member_id, &state)?;
        self.served = state.served;
        Ok(())
    }

    /// Refreshes the heartbeat if it is due, without the rest of a poll: for the stand-in
    /// member of `kafka-server-start`, which owns no partitions itself.
    pub fn heartbeat(&mut self) -> Result<()> {
        self.heartbeat_if_due().map(drop)
    }

    /// Commits these positions whatever this member owns, atomically under the group lock:
    /// for the stand-in member of `kafka-server-start`, whose networked members own the
    /// partitions. [`LocalError::MemberFenced`] if it was evicted.
    pub fn commit_any(&mut self, positions: &BTreeMap<TopicPartition, i64>) -> Result<()> {
        self.heartbeat_if_due()?;
        let _lock = self.lock_group()?;
        self.check_not_fenced()?;
        self.write_commit(positions)?;
        self.heartbeat_if_due()?;
        Ok(())
    }

    /// Heartbeats if the interval has passed; commits call it too, so that a consumer that
    /// commits while waiting for others is not taken for hung.
    fn heartbeat_if_due(&mut self) -> Result<bool> {
        let interval = self.config.heartbeat_interval;
        beat_if_due(
            &self.file,
            &mut self.last_heartbeat,
            interval,
            &self.dir.group,
        )
    }

    /// Takes the group lock, heartbeating while another member holds it: a member waiting its
    /// turn is not hung, yet others may hold the lock through slow fsyncs for longer than a
    /// short session timeout, and would evict it.
    fn lock_group(&mut self) -> Result<FileLock> {
        let interval = self.config.heartbeat_interval;
        let (file, last) = (&self.file, &mut self.last_heartbeat);
        let group = &self.dir.group;
        self.dir.lock_waiting(LockMode::Exclusive, || {
            beat_if_due(file, last, interval, group).map(drop)
        })
    }

    /// The positions of partitions this member owns: it never commits for others.
    fn owned_positions(
        &self,
        positions: &BTreeMap<TopicPartition, i64>,
    ) -> BTreeMap<TopicPartition, i64> {
        positions
            .iter()
            .filter(|(tp, _)| self.owned.contains(*tp))
            .map(|(tp, &o)| (tp.clone(), o))
            .collect()
    }

    /// Whether our member file still exists (it is removed only when we leave or are evicted;
    /// member ids are never reused).
    fn registered(&self) -> Result<bool> {
        let path = self.dir.member_path(&self.member_id);
        match fs::symlink_metadata(&path) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
            Err(e) => Err(LocalError::io(format!("cannot read {}", path.display()), e)),
        }
    }

    /// Under the group lock: [`LocalError::MemberFenced`] if this member was evicted.
    fn check_not_fenced(&mut self) -> Result<()> {
        if self.fenced || !self.registered()? {
            self.fenced = true;
            return Err(LocalError::MemberFenced {
                group: self.dir.group.clone(),
                member_id: self.member_id.clone(),
            });
        }
        Ok(())
    }

    /// Under the group lock: merges positions into the committed offsets, writing only if
    /// something changed.
    fn write_commit(&self, positions: &BTreeMap<TopicPartition, i64>) -> Result<()> {
        if positions.is_empty() {
            return Ok(());
        }
        let mut committed = self.dir.read_offsets()?;
        let mut changed = false;
        for (tp, &offset) in positions {
            let entry = committed
                .entry(tp.clone())
                .or_insert(super::CommittedOffset {
                    offset: -1,
                    leader_epoch: None,
                });
            if entry.offset != offset || entry.leader_epoch.is_some() {
                *entry = super::CommittedOffset {
                    offset,
                    leader_epoch: None,
                };
                changed = true;
            }
        }
        if changed {
            self.dir.write_offsets(&committed)?;
        }
        Ok(())
    }
}

/// Refreshes a member's heartbeat if `interval` has passed since `last`: the mtime of its
/// locked member `file`, set through its descriptor (the file itself is never replaced).
fn beat_if_due(file: &File, last: &mut Instant, interval: Duration, group: &str) -> Result<bool> {
    if last.elapsed() < interval {
        return Ok(false);
    }
    file.set_modified(SystemTime::now())
        .context(|| format!("cannot heartbeat in group '{group}'"))?;
    *last = Instant::now();
    Ok(true)
}

/// Under the group lock: adds a member with an empty state. Its file is created under a
/// temporary name, locked, filled, then renamed into place, so a member file with its final
/// name is always either locked by a live member or left by a dead one.
fn register(
    dir: &GroupDir,
    client_id: &str,
    host: &str,
    config: &MemberConfig,
) -> Result<(String, File)> {
    let member_id = format!("{client_id}-{}", uuid_v4());
    if !GroupDir::valid_member_id(&member_id) {
        return Err(LocalError::Invalid(format!(
            "client id '{client_id}' is too long for a member of a group on the embedded log"
        )));
    }
    dir.write_state(&member_id, &MemberState::default())?;
    let info = MemberInfo {
        member_id: member_id.clone(),
        client_id: client_id.to_string(),
        host: host.to_string(),
        session_timeout_ms: u64::try_from(config.session_timeout.as_millis()).unwrap_or(u64::MAX),
    };
    let json = serde_json::to_vec(&info)
        .map_err(|e| LocalError::Invalid(format!("cannot encode member info: {e}")))?;
    let tmp = dir
        .members_dir()
        .join(format!(".join-{:016x}", rand::random::<u64>()));
    let path = dir.member_path(&member_id);
    let create = || -> std::io::Result<File> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(std::io::Error::new(
                    ErrorKind::WouldBlock,
                    "a new member file is locked by someone else",
                ));
            }
            Err(TryLockError::Error(e)) => return Err(e),
        }
        file.write_all(&json)?;
        fs::rename(&tmp, &path)?;
        Ok(file)
    };
    let file = create().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        LocalError::io(format!("cannot create member file {}", path.display()), e)
    })?;
    dir.bump_generation()?;
    Ok((member_id, file))
}

/// Refuses a `--log-dir` member in a group served to networked consumers by
/// `kafka-server-start` (its stand-in member has the client id [`SERVER_CLIENT_ID`]), and the
/// server's stand-in in a group with live `--log-dir` members.
fn refuse_mixed(group: &str, live: &[super::store::Peer], for_server: bool) -> Result<()> {
    let served = live.iter().any(|p| p.info.client_id == SERVER_CLIENT_ID);
    if for_server && !live.is_empty() && !served {
        return Err(LocalError::Invalid(format!(
            "group '{group}' has live consumers using --log-dir; a consumer connected to kafka-server-start cannot join it until they leave"
        )));
    }
    if !for_server && served {
        return Err(LocalError::Invalid(format!(
            "group '{group}' has live consumers connected to kafka-server-start; use --bootstrap-server to join it, or wait until they leave"
        )));
    }
    Ok(())
}

/// The client id of the member `kafka-server-start` holds in a group while networked
/// consumers are in it, so that the group looks live to the tools on the directory.
pub const SERVER_CLIENT_ID: &str = "kafka-server-start";

/// A random UUID v4 in its usual text form.
fn uuid_v4() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The machine's name, for the HOST column.
pub fn hostname() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .filter_map(|p| fs::read_to_string(Path::new(p)).ok())
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};

    use super::super::{GroupState, GroupStore};
    use super::*;

    fn tp(t: &str, p: i32) -> TopicPartition {
        (t.to_string(), p)
    }

    /// Heartbeats often, but times out no member a slow machine merely delays (an fsync stuck
    /// behind writeback can take seconds): for the tests that are not about timeouts.
    fn steady() -> MemberConfig {
        MemberConfig {
            session_timeout: SESSION_NEVER_REACHED,
            heartbeat_interval: Duration::from_millis(40),
        }
    }

    /// A share group is first made under the group lock, under which a consumer joins (checks
    /// for a share group, then registers): so a first consumer and a first share member racing
    /// on a new group id never both get in. Here the lock is held as a joining consumer holds
    /// it, and the share member waits for it.
    #[test]
    fn a_new_share_group_waits_for_a_consumer_joining_under_the_group_lock() {
        let root = tempfile::tempdir().unwrap();
        let groups = root.path().join(crate::local::group::store::GROUPS_DIR);
        let dir = crate::local::group::store::GroupDir::at(&groups, "g");
        dir.create().unwrap();
        let joining = dir.lock(LockMode::Exclusive).unwrap();
        std::thread::scope(|s| {
            let share = s.spawn(|| {
                crate::local::share::ShareMember::join(
                    root.path(),
                    "g",
                    "share-member",
                    ("c", "localhost"),
                    &["t".to_string()],
                )
            });
            std::thread::sleep(Duration::from_millis(300));
            assert!(
                !share.is_finished(),
                "the share member went in past the group lock"
            );
            assert!(!crate::local::share::is_share_group(&dir.dir));
            drop(joining);
            assert!(share.join().unwrap().is_ok(), "no consumer registered");
        });
        assert!(crate::local::share::is_share_group(&dir.dir));
    }

    /// A session timeout short enough to wait out: for the tests of eviction itself.
    fn evicting() -> MemberConfig {
        MemberConfig {
            session_timeout: Duration::from_millis(1000),
            heartbeat_interval: Duration::from_millis(100),
        }
    }

    /// How long a test waits for a condition before it fails: generous, so that only a
    /// condition that never comes fails, however loaded the machine.
    const DEADLINE: Duration = Duration::from_secs(60);

    /// Longer than [`DEADLINE`]: what a test sees within its deadline was not a session timeout.
    const SESSION_NEVER_REACHED: Duration = Duration::from_secs(120);

    fn sub(list: &[(&str, u32)]) -> BTreeMap<String, u32> {
        list.iter().map(|(t, n)| (t.to_string(), *n)).collect()
    }

    /// Positions as a consumer would pass them: `base + partition` for each owned partition.
    fn positions(m: &Member, base: i64) -> BTreeMap<TopicPartition, i64> {
        m.owned()
            .iter()
            .map(|tp| (tp.clone(), base + i64::from(tp.1)))
            .collect()
    }

    /// Polls the members in turn (a few ms apart) until `done` holds, checking that no
    /// partition is ever owned by two of them.
    fn settle(
        members: &mut [&mut Member],
        subscription: &BTreeMap<String, u32>,
        done: impl Fn(&[&mut Member]) -> bool,
    ) {
        let start = Instant::now();
        while !done(members) {
            assert!(
                start.elapsed() < DEADLINE,
                "did not settle: {:?}",
                members
                    .iter()
                    .map(|m| m.owned().clone())
                    .collect::<Vec<_>>()
            );
            for m in members.iter_mut() {
                let pos = positions(m, 0);
                m.poll(subscription, &pos).unwrap();
            }
            assert_disjoint(members);
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn assert_disjoint(members: &[&mut Member]) {
        let mut seen = BTreeSet::new();
        for m in members {
            for tp in m.owned() {
                assert!(seen.insert(tp.clone()), "{tp:?} owned twice");
            }
        }
    }

    fn counts(members: &[&mut Member]) -> Vec<usize> {
        members.iter().map(|m| m.owned().len()).collect()
    }

    fn covers(members: &[&mut Member], n: usize) -> bool {
        counts(members).iter().sum::<usize>() == n
    }

    #[test]
    fn single_member_consumes_commits_and_leaves() {
        let dir = tempfile::tempdir().unwrap();
        let store = GroupStore::new(dir.path());
        let t = sub(&[("t", 3)]);
        let mut m = store.join("g", "console-consumer", steady()).unwrap();
        let id = m.member_id().to_string();
        let uuid = id.strip_prefix("console-consumer-").unwrap();
        assert_eq!(uuid.len(), 36);
        assert_eq!(uuid.matches('-').count(), 4);
        assert_eq!(&uuid[14..15], "4");

        // Joined but not yet polled: a member with no subscription and nothing to own.
        let d = store.describe("g").unwrap().unwrap();
        assert_eq!(d.state, GroupState::Stable);
        assert_eq!(d.members.len(), 1);

        let change = m.poll(&t, &BTreeMap::new()).unwrap();
        assert_eq!(
            change.acquired,
            vec![(tp("t", 0), None), (tp("t", 1), None), (tp("t", 2), None)]
        );
        assert!(change.revoked.is_empty() && !change.fenced);
        assert!(m.poll(&t, &BTreeMap::new()).unwrap().is_empty());

        let d = store.describe("g").unwrap().unwrap();
        assert_eq!(d.state, GroupState::Stable);
        assert_eq!(d.protocol, "range");
        let md = &d.members[0];
        assert_eq!(md.member_id, id);
        assert_eq!(md.client_id, "console-consumer");
        assert!(!md.host.is_empty());
        assert_eq!(md.subscribed_topics, vec!["t".to_string()]);
        assert_eq!(md.assignment, vec![tp("t", 0), tp("t", 1), tp("t", 2)]);
        assert_eq!(md.target_assignment, md.assignment);
        assert_eq!(store.list().unwrap(), vec!["g".to_string()]);

        // Only owned partitions are committed.
        let mut pos = positions(&m, 10);
        pos.insert(tp("other", 0), 99);
        m.commit(&pos).unwrap();
        let committed = store.committed("g").unwrap();
        assert_eq!(committed.len(), 3);
        assert_eq!(committed[&tp("t", 2)].offset, 12);

        // Resets, deletes and offset deletes of subscribed topics are refused while it lives.
        let err = store
            .reset_offsets("g", &BTreeMap::from([(tp("t", 0), 0)]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Assignments can only be reset if the group 'g' is inactive, but the current state is Stable."
        );
        assert!(matches!(
            store.delete_group("g"),
            Err(LocalError::GroupNotEmpty {
                state: GroupState::Stable,
                ..
            })
        ));
        let results = store.delete_offsets("g", &[tp("t", 0)]).unwrap();
        assert_eq!(
            results[0].1,
            Err(super::super::GROUP_SUBSCRIBED_TO_TOPIC.to_string())
        );
        assert_eq!(store.committed("g").unwrap()[&tp("t", 0)].offset, 10);

        m.leave(&positions_of(&[("t", 0, 20), ("t", 1, 21), ("t", 2, 22)]))
            .unwrap();
        let d = store.describe("g").unwrap().unwrap();
        assert_eq!(d.state, GroupState::Empty);
        assert!(d.members.is_empty());
        assert_eq!(d.offsets[&tp("t", 1)].offset, 21);
        store
            .reset_offsets("g", &BTreeMap::from([(tp("t", 0), 0)]))
            .unwrap();
        assert_eq!(store.committed("g").unwrap()[&tp("t", 0)].offset, 0);

        // A new member starts from the committed offsets.
        let mut m = store.join("g", "c", steady()).unwrap();
        let change = m.poll(&t, &BTreeMap::new()).unwrap();
        assert_eq!(
            change.acquired,
            vec![
                (tp("t", 0), Some(0)),
                (tp("t", 1), Some(21)),
                (tp("t", 2), Some(22))
            ]
        );
        m.leave(&BTreeMap::new()).unwrap();
        store.delete_group("g").unwrap();
        assert!(store.list().unwrap().is_empty());
    }

    fn positions_of(list: &[(&str, i32, i64)]) -> BTreeMap<TopicPartition, i64> {
        list.iter()
            .map(|(t, p, o)| ((t.to_string(), *p), *o))
            .collect()
    }

    #[test]
    fn members_split_and_rebalance_on_join_and_leave() {
        let dir = tempfile::tempdir().unwrap();
        // Separate stores, as in separate processes; each member has its own open files.
        let t = sub(&[("t", 7)]);
        let mut a = GroupStore::new(dir.path())
            .join("g", "c", steady())
            .unwrap();
        settle(&mut [&mut a], &t, |ms| covers(ms, 7));

        let mut b = GroupStore::new(dir.path())
            .join("g", "c", steady())
            .unwrap();
        // While `a` still owns everything, `b` cannot claim: the group is rebalancing.
        b.poll(&t, &BTreeMap::new()).unwrap();
        assert!(b.owned().is_empty());
        let store = GroupStore::new(dir.path());
        assert_eq!(
            store.describe("g").unwrap().unwrap().state,
            GroupState::PreparingRebalance
        );
        let err = store.reset_offsets("g", &BTreeMap::new()).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("current state is PreparingRebalance."),
            "{err}"
        );

        settle(&mut [&mut a, &mut b], &t, |ms| {
            let mut c = counts(ms);
            c.sort();
            covers(ms, 7) && c == [3, 4]
        });
        assert_eq!(
            store.describe("g").unwrap().unwrap().state,
            GroupState::Stable
        );
        // Revoked partitions were committed by `a` before `b` acquired them.
        let committed = store.committed("g").unwrap();
        for tp in b.owned() {
            if a.member_id() < b.member_id() {
                assert_eq!(committed[tp].offset, i64::from(tp.1));
            }
        }

        let mut c = GroupStore::new(dir.path())
            .join("g", "c", steady())
            .unwrap();
        settle(&mut [&mut a, &mut b, &mut c], &t, |ms| {
            let mut c = counts(ms);
            c.sort();
            covers(ms, 7) && c == [2, 2, 3]
        });
        // Each member's range is contiguous, in member-id order.
        let mut ms = [&a, &b, &c];
        ms.sort_by_key(|m| m.member_id().to_string());
        let order: Vec<i32> = ms
            .iter()
            .flat_map(|m| m.owned().iter().map(|tp| tp.1))
            .collect();
        assert_eq!(order, (0..7).collect::<Vec<_>>());

        b.leave(&BTreeMap::new()).unwrap();
        settle(&mut [&mut a, &mut c], &t, |ms| {
            let mut c = counts(ms);
            c.sort();
            covers(ms, 7) && c == [3, 4]
        });
        assert_eq!(store.describe("g").unwrap().unwrap().members.len(), 2);
    }

    #[test]
    fn subscriptions_and_partition_counts_change() {
        let dir = tempfile::tempdir().unwrap();
        let store = GroupStore::new(dir.path());
        let mut a = store.join("g", "a", steady()).unwrap();
        let mut b = store.join("g", "b", steady()).unwrap();
        // Pattern subscriptions: `a` sees t only, `b` sees t and u.
        let sa = sub(&[("t", 2)]);
        let sb = sub(&[("t", 2), ("u", 2)]);
        let stable = || store.describe("g").unwrap().unwrap().state == GroupState::Stable;
        let start = Instant::now();
        while a.owned().len() + b.owned().len() < 4 || !stable() {
            assert!(start.elapsed() < DEADLINE);
            a.poll(&sa, &BTreeMap::new()).unwrap();
            b.poll(&sb, &BTreeMap::new()).unwrap();
        }
        assert!(b.owned().contains(&tp("u", 0)) && b.owned().contains(&tp("u", 1)));
        assert_eq!(a.owned().len(), 1);
        // t grows to 4 partitions; both see it.
        let sa = sub(&[("t", 4)]);
        let sb = sub(&[("t", 4), ("u", 2)]);
        while a.owned().len() + b.owned().len() < 6 || !stable() {
            assert!(start.elapsed() < DEADLINE);
            a.poll(&sa, &BTreeMap::new()).unwrap();
            b.poll(&sb, &BTreeMap::new()).unwrap();
        }
        assert_eq!(a.owned().len(), 2);
        let d = store.describe("g").unwrap().unwrap();
        assert_eq!(d.state, GroupState::Stable);
        // delete-offsets: refused for subscribed topics only.
        store
            .reset_offsets("h", &BTreeMap::from([(tp("t", 0), 1)]))
            .ok();
        let results = store
            .delete_offsets("g", &[tp("u", 0), tp("v", 0)])
            .unwrap();
        assert!(results[0].1.is_err() && results[1].1.is_ok());
    }

    #[test]
    fn crashed_member_is_taken_over_from_its_last_commit() {
        let dir = tempfile::tempdir().unwrap();
        let t = sub(&[("t", 4)]);
        let mut a = GroupStore::new(dir.path())
            .join("g", "c", steady())
            .unwrap();
        let mut b = GroupStore::new(dir.path())
            .join("g", "c", steady())
            .unwrap();
        settle(&mut [&mut a, &mut b], &t, |ms| counts(ms) == [2, 2]);
        let a_owned = a.owned().clone();
        a.commit(&positions(&a, 500)).unwrap();
        // Positions past the commit are lost with the crash, as in Kafka.
        let _unsaved = positions(&a, 900);
        drop(a); // the lock dies with the file description, as with kill -9

        let start = Instant::now();
        let mut acquired = Vec::new();
        while b.owned().len() < 4 {
            assert!(start.elapsed() < DEADLINE, "no takeover");
            let pos = positions(&b, 0);
            acquired.extend(b.poll(&t, &pos).unwrap().acquired);
            std::thread::sleep(Duration::from_millis(5));
        }
        // Noticed by its released lock at a heartbeat check: the session timeout is longer than
        // the deadline, so it cannot have been that.
        assert!(steady().session_timeout > DEADLINE);
        let expect: Vec<(TopicPartition, Option<i64>)> = a_owned
            .iter()
            .map(|tp| (tp.clone(), Some(500 + i64::from(tp.1))))
            .collect();
        assert_eq!(acquired, expect);
        let d = GroupStore::new(dir.path()).describe("g").unwrap().unwrap();
        assert_eq!(d.members.len(), 1);
        assert_eq!(d.state, GroupState::Stable);
        // The dead member's files were removed.
        let files = fs::read_dir(dir.path().join("groups/g/members"))
            .unwrap()
            .count();
        assert_eq!(files, 2);
    }

    /// An idle consumer auto-commits what it already committed: that takes no group lock, so
    /// stopping it (Ctrl-Z) between its polls never leaves the group locked.
    #[test]
    fn a_repeated_commit_takes_no_group_lock() {
        let dir = tempfile::tempdir().unwrap();
        let store = GroupStore::new(dir.path());
        let t = sub(&[("t", 2)]);
        let mut m = store.join("g", "c", steady()).unwrap();
        m.poll(&t, &BTreeMap::new()).unwrap();
        m.commit(&positions(&m, 5)).unwrap();

        let held = m.dir.lock(LockMode::Exclusive).unwrap();
        let start = Instant::now();
        m.commit(&positions(&m, 5)).unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "waited for the lock"
        );
        drop(held);

        // A new position goes through the lock and is written.
        m.commit(&positions(&m, 6)).unwrap();
        assert_eq!(store.committed("g").unwrap()[&tp("t", 1)].offset, 7);
    }

    #[test]
    fn hung_member_is_evicted_then_fenced_and_rejoins() {
        let dir = tempfile::tempdir().unwrap();
        let store = GroupStore::new(dir.path());
        let t = sub(&[("t", 4)]);
        let mut a = GroupStore::new(dir.path())
            .join("g", "c", evicting())
            .unwrap();
        let mut b = GroupStore::new(dir.path())
            .join("g", "c", evicting())
            .unwrap();
        settle(&mut [&mut a, &mut b], &t, |ms| counts(ms) == [2, 2]);
        a.commit(&positions(&a, 100)).unwrap();
        let old_id = a.member_id().to_string();
        let a_owned = a.owned().clone();

        // `a` stops polling (as under SIGSTOP); `b` keeps going and evicts it.
        let start = Instant::now();
        while b.owned().len() < 4 {
            assert!(start.elapsed() < DEADLINE, "no eviction");
            let pos = positions(&b, 0);
            b.poll(&t, &pos).unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(start.elapsed() >= evicting().session_timeout - evicting().heartbeat_interval * 2);
        for tp in &a_owned {
            assert_eq!(
                store.committed("g").unwrap()[tp].offset,
                100 + i64::from(tp.1)
            );
        }

        // `a` wakes up: its commit is fenced and changes nothing.
        let err = a.commit(&positions(&a, 777)).unwrap_err();
        assert!(
            matches!(err, LocalError::MemberFenced { ref member_id, .. } if *member_id == old_id)
        );
        for tp in &a_owned {
            assert_eq!(
                store.committed("g").unwrap()[tp].offset,
                100 + i64::from(tp.1)
            );
        }
        // Its next poll revokes everything it had and rejoins with a new id.
        let change = a.poll(&t, &positions(&a, 777)).unwrap();
        assert!(change.fenced);
        assert_eq!(change.revoked, a_owned.iter().cloned().collect::<Vec<_>>());
        assert!(change.acquired.is_empty(), "b still owns everything");
        assert_ne!(a.member_id(), old_id);
        assert!(a.owned().is_empty());
        for tp in &a_owned {
            assert_eq!(
                store.committed("g").unwrap()[tp].offset,
                100 + i64::from(tp.1)
            );
        }
        settle(&mut [&mut a, &mut b], &t, |ms| counts(ms) == [2, 2]);
        let d = store.describe("g").unwrap().unwrap();
        assert_eq!(d.members.len(), 2);
        assert!(d.members.iter().all(|m| m.member_id != old_id));
        // A fenced member's leave commits nothing.
        let c = store.join("g", "c", evicting()).unwrap();
        let c_id = c.member_id().to_string();
        std::thread::sleep(evicting().session_timeout + Duration::from_millis(50));
        let c_file = super::super::store::GroupDir::at(store.root(), "g").member_path(&c_id);
        assert!(c_file.exists());
        settle(&mut [&mut a, &mut b], &t, |_| !c_file.exists());
        assert!(matches!(
            c.leave(&BTreeMap::new()),
            Err(LocalError::MemberFenced { .. })
        ));
    }

    #[test]
    fn threads_share_partitions_without_overlap() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let stop = Arc::new(AtomicBool::new(false));
        let t = sub(&[("t", 10), ("u", 3)]);
        let barrier = Arc::new(Barrier::new(3));
        let rejoined = Arc::new(AtomicBool::new(false));
        // What each member owned after its latest poll: a member learns of an assignment only
        // when it polls, so the group being stable does not yet mean every member took its share.
        let owned_now: Arc<[AtomicUsize; 3]> = Arc::new(Default::default());
        let mut handles = Vec::new();
        for i in 0..3u64 {
            let (root, stop, t, barrier) = (root.clone(), stop.clone(), t.clone(), barrier.clone());
            let (rejoined, owned_now) = (rejoined.clone(), owned_now.clone());
            handles.push(std::thread::spawn(move || {
                barrier.wait();
                std::thread::sleep(Duration::from_millis(30 * i));
                let store = GroupStore::new(&root);
                let mut m = store
                    .join("g/x y ü", &format!("client-{i}"), steady())
                    .unwrap();
                let mut polls = 0;
                while !stop.load(Ordering::Relaxed) {
                    let pos = positions(&m, 1000 * (i as i64 + 1));
                    m.poll(&t, &pos).unwrap();
                    owned_now[i as usize].store(m.owned().len(), Ordering::Relaxed);
                    polls += 1;
                    if polls % 10 == 0 {
                        m.commit(&pos).unwrap();
                    }
                    // The first member leaves half way and rejoins, to force more rebalances.
                    if i == 0 && polls == 60 {
                        m.leave(&pos).unwrap();
                        m = store.join("g/x y ü", "client-0", steady()).unwrap();
                        owned_now[0].store(m.owned().len(), Ordering::Relaxed);
                        rejoined.store(true, Ordering::Relaxed);
                    }
                    std::thread::sleep(Duration::from_millis(3));
                }
                m
            }));
        }
        // Meanwhile, every consistent snapshot shows each partition owned at most once; it reads
        // until, after the first member's rejoin, a snapshot shows the group stable with all
        // three and each member has polled the share that snapshot gives it (a member learns
        // of its assignment only when it polls).
        let store = GroupStore::new(&root);
        let start = Instant::now();
        let mut stable_seen = 0;
        loop {
            let after_rejoin = rejoined.load(Ordering::Relaxed);
            assert!(
                start.elapsed() < DEADLINE,
                "rejoined: {after_rejoin}, stable snapshots: {stable_seen}, owned by the members: {owned_now:?}"
            );
            if let Some(d) = store.describe("g/x y ü").unwrap() {
                let mut seen = BTreeSet::new();
                for m in &d.members {
                    for tp in &m.assignment {
                        assert!(seen.insert(tp.clone()), "{tp:?} owned twice: {d:?}");
                    }
                }
                if d.state == GroupState::Stable && d.members.len() == 3 {
                    assert_eq!(seen.len(), 13);
                    let polled = d.members.iter().all(|m| {
                        let i: usize = m.client_id["client-".len()..].parse().unwrap();
                        owned_now[i].load(Ordering::Relaxed) == m.assignment.len()
                    });
                    if after_rejoin {
                        stable_seen += 1;
                        if polled {
                            break;
                        }
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        stop.store(true, Ordering::Relaxed);
        let members: Vec<Member> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(stable_seen > 0);
        let owned: usize = members.iter().map(|m| m.owned().len()).sum();
        assert_eq!(owned, 13);
        assert_eq!(store.list().unwrap(), vec!["g/x y ü".to_string()]);
        for m in members {
            m.leave(&BTreeMap::new()).unwrap();
        }
        assert_eq!(
            store.describe("g/x y ü").unwrap().unwrap().state,
            GroupState::Empty
        );
    }

    #[test]
    fn concurrent_commits_and_reads_never_see_a_torn_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let t = sub(&[("t", 4)]);
        let stop = Arc::new(AtomicBool::new(false));
        let mut a = GroupStore::new(&root).join("g", "c", steady()).unwrap();
        let mut b = GroupStore::new(&root).join("g", "c", steady()).unwrap();
        settle(&mut [&mut a, &mut b], &t, |ms| counts(ms) == [2, 2]);
        // Commits made by each writer so far.
        let made: [Arc<AtomicUsize>; 2] = Default::default();
        let writers: Vec<_> = [a, b]
            .into_iter()
            .zip(made.clone())
            .map(|(mut m, made)| {
                let (stop, t) = (stop.clone(), t.clone());
                std::thread::spawn(move || {
                    let mut k = 0;
                    while !stop.load(Ordering::Relaxed) {
                        k += 1;
                        m.commit(&positions(&m, k * 10)).unwrap();
                        made.store(k as usize, Ordering::Relaxed);
                        m.poll(&t, &BTreeMap::new()).unwrap();
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    m
                })
            })
            .collect();
        // Reads go on until both writers have committed many times while they were read: a
        // count of events, not a time window (a commit's fsync may wait seconds for writeback).
        const COMMITS: usize = 20;
        const READS: usize = 50;
        let store = GroupStore::new(&root);
        let mut last = BTreeMap::new();
        let start = Instant::now();
        let mut reads = 0;
        let first_made = made.clone().map(|m| m.load(Ordering::Relaxed));
        loop {
            let progress = made
                .iter()
                .zip(first_made)
                .map(|(m, first)| m.load(Ordering::Relaxed) - first)
                .collect::<Vec<_>>();
            if progress.iter().all(|&p| p >= COMMITS) && reads >= READS && last.len() == 4 {
                break;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "commits while read: {progress:?}, reads: {reads}, partitions seen: {}",
                last.len()
            );
            let committed = store.committed("g").unwrap();
            for (tp, c) in &committed {
                // Every value comes from one whole commit, and they only move forward.
                assert_eq!((c.offset - i64::from(tp.1)) % 10, 0);
                assert!(c.offset >= *last.get(tp).unwrap_or(&0));
                last.insert(tp.clone(), c.offset);
            }
            reads += 1;
        }
        stop.store(true, Ordering::Relaxed);
        for w in writers {
            w.join().unwrap().leave(&BTreeMap::new()).unwrap();
        }
        assert!(reads >= READS && last.len() == 4);
    }

    #[test]
    fn quiet_polls_are_cheap() {
        let dir = tempfile::tempdir().unwrap();
        let t = sub(&[("t", 100)]);
        let mut a = GroupStore::new(dir.path())
            .join("g", "c", MemberConfig::default())
            .unwrap();
        a.poll(&t, &BTreeMap::new()).unwrap();
        // A quiet poll reads the group's generation and returns: it never takes the slow path
        // (the group lock and every member's file), which is the only one that asks for the
        // positions. Its time is measured by bench/partitions.py (idle CPU per second).
        for _ in 0..1000 {
            let change = a
                .poll_lazily(&t, || panic!("a quiet poll took the slow path"))
                .unwrap();
            assert!(change.is_empty());
        }
    }

    #[test]
    fn bad_configs_and_ids_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = GroupStore::new(dir.path());
        let bad = MemberConfig {
            session_timeout: Duration::from_secs(3),
            heartbeat_interval: Duration::from_secs(3),
        };
        assert!(matches!(
            store.join("g", "c", bad),
            Err(LocalError::Invalid(_))
        ));
        assert!(matches!(
            store.join("", "c", steady()),
            Err(LocalError::Invalid(_))
        ));
        assert!(matches!(
            store.join(&"x".repeat(300), "c", steady()),
            Err(LocalError::Invalid(_))
        ));
        assert!(matches!(
            store.join("g", &"x".repeat(300), steady()),
            Err(LocalError::Invalid(_))
        ));
        assert!(store.list().unwrap().is_empty());
    }
}
