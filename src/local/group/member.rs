//! [`Member`]: one live member of a consumer group on the embedded log.
//!
//! A member holds an exclusive `flock` on its member file for as long as it lives, so its death
//! (even `kill -9`) is visible to the others at once: they can take the lock. It heartbeats by
//! setting that file's mtime through the locked descriptor; a member silent for longer than its
//! session timeout is evicted like a dead one.
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

use super::super::error::{IoContext, LocalError, Result};
use super::super::lock::LockMode;
use super::TopicPartition;
use super::store::{GroupDir, Liveness, MemberInfo, MemberState, targets};

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

/// What a poll changed in the partitions this member owns. Apply `revoked` first, then
/// `acquired` (after fencing, a partition can be in both).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssignmentChange {
    /// Newly owned partitions and the group's committed offset for each (`None`: nothing
    /// committed, apply `auto.offset.reset`).
    pub acquired: Vec<(TopicPartition, Option<i64>)>,
    /// Partitions no longer owned. Unless `fenced`, their positions were committed first.
    pub revoked: Vec<TopicPartition>,
    /// The member had been evicted: everything it owned was revoked without a commit, and it
    /// rejoined under a new member id.
    pub fenced: bool,
}

impl AssignmentChange {
    /// True if nothing changed.
    pub fn is_empty(&self) -> bool {
        self.acquired.is_empty() && self.revoked.is_empty() && !self.fenced
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
}

impl Member {
    /// Joins the group: see [`super::GroupStore::join`].
    pub(crate) fn join(dir: GroupDir, client_id: &str, config: MemberConfig) -> Result<Member> {
        if config.heartbeat_interval >= config.session_timeout {
            // Kafka's consumer refuses this too.
            return Err(LocalError::Invalid(
                "Heartbeat must be set lower than the session timeout".to_string(),
            ));
        }
        dir.create()?;
        let host = hostname();
        let _lock = dir.lock(LockMode::Exclusive)?;
        dir.reap(None)?;
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
        let mut must_sync = self.fenced || self.subscription.as_ref() != Some(subscription);
        if self.last_heartbeat.elapsed() >= self.config.heartbeat_interval {
            self.heartbeat()?;
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
        self.sync(subscription, positions)
    }

    /// The slow path of [`Member::poll`], under the group lock.
    fn sync(
        &mut self,
        subscription: &BTreeMap<String, u32>,
        positions: &BTreeMap<TopicPartition, i64>,
    ) -> Result<AssignmentChange> {
        let _lock = self.dir.lock(LockMode::Exclusive)?;
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

        // Release first (after committing), so that others can claim.
        let revoked: Vec<TopicPartition> = self.owned.difference(&target).cloned().collect();
        if !revoked.is_empty() {
            let to_commit: BTreeMap<TopicPartition, i64> = revoked
                .iter()
                .filter_map(|tp| positions.get(tp).map(|&o| (tp.clone(), o)))
                .collect();
            self.write_commit(&to_commit)?;
            for tp in &revoked {
                self.owned.remove(tp);
            }
        }

        // Claim what is ours and no other live member still owns.
        let taken: BTreeSet<&TopicPartition> = live
            .iter()
            .filter(|p| p.id != self.member_id)
            .flat_map(|p| p.state.owned.iter())
            .collect();
        let free: Vec<TopicPartition> = target
            .difference(&self.owned)
            .filter(|tp| !taken.contains(tp))
            .cloned()
            .collect();
        if !free.is_empty() {
            let committed = self.dir.read_offsets()?;
            for tp in free {
                let start = committed.get(&tp).map(|c| c.offset);
                self.owned.insert(tp.clone());
                change.acquired.push((tp, start));
            }
        }

        let state = MemberState {
            subscription: subscription.clone(),
            owned: self.owned.clone(),
        };
        if state != published {
            self.dir.write_state(&self.member_id, &state)?;
            self.dir.bump_generation()?;
        }
        self.subscription = Some(subscription.clone());
        self.generation = self.dir.read_generation()?;
        change.revoked.extend(revoked);
        Ok(change)
    }

    /// Commits these positions for partitions this member owns (others are ignored, never
    /// committed), atomically under the group lock. [`LocalError::MemberFenced`] if this member
    /// was evicted; then nothing is committed and the next poll rejoins.
    pub fn commit(&mut self, positions: &BTreeMap<TopicPartition, i64>) -> Result<()> {
        let _lock = self.dir.lock(LockMode::Exclusive)?;
        self.check_not_fenced()?;
        let mine: BTreeMap<TopicPartition, i64> = positions
            .iter()
            .filter(|(tp, _)| self.owned.contains(*tp))
            .map(|(tp, &o)| (tp.clone(), o))
            .collect();
        self.write_commit(&mine)
    }

    /// Graceful leave: commits the positions of owned partitions, releases everything and
    /// removes the member file, so the others rebalance at once. [`LocalError::MemberFenced`]
    /// (and no commit) if this member had been evicted.
    pub fn leave(mut self, positions: &BTreeMap<TopicPartition, i64>) -> Result<()> {
        let _lock = self.dir.lock(LockMode::Exclusive)?;
        self.check_not_fenced()?;
        let mine: BTreeMap<TopicPartition, i64> = positions
            .iter()
            .filter(|(tp, _)| self.owned.contains(*tp))
            .map(|(tp, &o)| (tp.clone(), o))
            .collect();
        self.write_commit(&mine)?;
        self.owned.clear();
        self.dir.remove_member(&self.member_id)?;
        self.dir.bump_generation()?;
        Ok(())
    }

    /// Refreshes the heartbeat: the mtime of the locked member file, set through its descriptor
    /// (the file itself is never replaced).
    fn heartbeat(&mut self) -> Result<()> {
        self.file
            .set_modified(SystemTime::now())
            .context(|| format!("cannot heartbeat in group '{}'", self.dir.group))?;
        self.last_heartbeat = Instant::now();
        Ok(())
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
