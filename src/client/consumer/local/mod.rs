//! The consumer's backend on the embedded log: each assigned partition read with its latest
//! snapshot ([`partition`]), what keeps an idle consumer cheap on a topic of many partitions
//! ([`view`]'s change boards and this module's sweep), and group membership through the log
//! dir's flock-based members ([`crate::local::group::Member`]).
//!
//! The boards are a hint, so each round also checks a slice of the partitions the slow way
//! (their files' stamps), all of them in turn within about [`SWEEP_ROUNDS`] rounds: records
//! whose writer did not update the board are still read, only later.

mod partition;
mod view;

use std::collections::BTreeMap;

use super::backend::{ConsumerBackend, Cursor, Loaded, Opened, Positions};
use super::{Assigned, FETCH_BYTES, GroupSettings, Result, positions_of};
use crate::client::topic_name;
use crate::kafka::groups::AssignmentChange;
use crate::local::group::{Member, MemberConfig};
use crate::local::{self, LocalError, LogDir};
use partition::LocalPartition;
use view::LogView;

/// Rounds over which every partition is checked once without trusting the board (a round is
/// about 20 ms when idle, so about 10 s).
const SWEEP_ROUNDS: usize = 500;

/// The embedded log as a consumer reads it, with its readers of the assigned partitions and
/// its group member if it has one.
#[derive(Debug)]
pub(super) struct LocalLog {
    view: LogView,
    /// The reader of each assigned partition, parallel to the engine's assignment.
    partitions: Vec<LocalPartition>,
    /// The first assigned partition the next round's sweep checks.
    sweep_next: usize,
    /// The assigned partitions this round checks without trusting the board.
    sweep: Sweep,
    /// Partitions the next round must read: those this round found not idle.
    due: Vec<usize>,
    member: Option<LocalMember>,
}

/// A member of a group on the embedded log.
#[derive(Debug)]
struct LocalMember {
    member: Member,
    /// `enable.auto.commit`, which decides whether leaving commits.
    auto_commit: bool,
}

/// The assigned partitions one round checks without trusting the board.
#[derive(Clone, Copy, Debug, Default)]
struct Sweep {
    first: usize,
    count: usize,
    of: usize,
}

impl Sweep {
    /// Whether the partition at `index` of the assignment is checked the slow way this round.
    fn covers(&self, index: usize) -> bool {
        self.of > 0 && (index + self.of - self.first) % self.of < self.count
    }
}

impl LocalLog {
    /// A consumer of the log at `dir`, in no group.
    pub fn new(dir: LogDir) -> LocalLog {
        LocalLog {
            view: LogView::new(dir),
            partitions: Vec::new(),
            sweep_next: 0,
            sweep: Sweep::default(),
            due: Vec::new(),
            member: None,
        }
    }

    /// The consumer reading only committed transactions (`read_committed`), or everything.
    pub fn read_committed(mut self, read_committed: bool) -> LocalLog {
        self.view.read_committed = read_committed;
        self
    }

    /// The consumer as a member of the group `group` names, if any: it joins at once.
    pub fn joined(mut self, group: Option<&GroupSettings>) -> Result<LocalLog> {
        if let Some(settings) = group {
            let timing = MemberConfig {
                session_timeout: settings.session_timeout,
                heartbeat_interval: settings.heartbeat_interval,
            };
            let groups = self.view.dir.groups();
            let member = groups.join(&settings.id, &settings.client_id, timing)?;
            self.member = Some(LocalMember {
                member,
                auto_commit: settings.auto_commit,
            });
        }
        Ok(self)
    }

    /// [`ConsumerBackend::load`] without noting whether the partition is still due.
    fn load_partition(&mut self, cursor: &mut Cursor<'_>, out: &mut Vec<u8>) -> Result<Loaded> {
        let swept = self.sweep.covers(cursor.index);
        let view = &self.view;
        let part = &mut self.partitions[cursor.index];
        let a = &mut *cursor.assigned;
        if a.caught_up && view.is_idle(part, a.partition, a.position, swept) {
            return Ok(Loaded::Idle);
        }
        let snap = match view.bounds(&a.topic, a.partition, part, a.position, swept) {
            Ok(snap) => snap,
            Err(_) if view.dir.topic(&a.topic)?.is_none() => return Ok(Loaded::TopicDeleted),
            Err(e) => return Err(e.into()),
        };
        if a.position < snap.log_start_offset {
            // Retention removed what we were about to read: reset as Kafka's consumer does.
            cursor.reset_within(snap.log_start_offset, snap.log_end_offset);
        }
        let a = &mut *cursor.assigned;
        a.caught_up = a.position >= snap.log_end_offset;
        if let Some(damage) = snap.damage
            && a.caught_up
        {
            // Every record before the damage was delivered: now name it.
            return Err(damage.into());
        }
        if a.caught_up {
            // Looked at afresh (swept, or the board was behind): idle from now on if the
            // board agrees.
            return Ok(match view.is_idle(part, a.partition, a.position, false) {
                true => Loaded::Idle,
                false => Loaded::Nothing,
            });
        }
        match part.read_into(a.position, FETCH_BYTES, view.read_committed, out) {
            Ok(aborted) => Ok(Loaded::Batches {
                aborted: aborted.into(),
                crc_checked: true,
            }),
            // Retention moved the start since the snapshot: the next round resets.
            Err(LocalError::OffsetOutOfRange { .. }) => Ok(Loaded::Nothing),
            Err(e) => Err(e.into()),
        }
    }
}

impl ConsumerBackend for LocalLog {
    fn topics(
        &mut self,
        names: Option<&[String]>,
        auto_create: bool,
    ) -> Result<BTreeMap<String, u32>> {
        let dir = &self.view.dir;
        let all;
        let names = match names {
            Some(n) => n,
            None => {
                all = dir
                    .topic_names()?
                    .into_iter()
                    .filter(|n| !topic_name::is_internal(n))
                    .collect::<Vec<_>>();
                &all
            }
        };
        let mut out = BTreeMap::new();
        let mut metas = Vec::new();
        for n in names {
            let meta = if auto_create {
                dir.topic_or_auto_create(n)?
            } else {
                dir.topic(n)?
            };
            if let Some(meta) = meta {
                out.insert(n.clone(), meta.partitions);
                metas.push(meta);
            }
        }
        for meta in &metas {
            self.view.remember(meta)?;
        }
        Ok(out)
    }

    /// The log's `num.partitions` when its `auto.create.topics.enable` is on.
    fn auto_created_partitions(&self) -> Result<Option<u32>> {
        let dir = &self.view.dir;
        match dir.auto_create_topics()? {
            true => Ok(Some(dir.default_partitions()?)),
            false => Ok(None),
        }
    }

    fn has_topic(&self, topic: &str) -> Result<bool> {
        Ok(self.view.dir.topic(topic)?.is_some())
    }

    fn place(&self) -> String {
        self.view.dir.root().display().to_string()
    }

    fn open(&mut self, topic: &str, p: u32, from_time: Option<i64>) -> Result<Opened> {
        let (partition, opened) = self.view.open(topic, p, from_time)?;
        self.partitions.push(partition);
        Ok(opened)
    }

    fn retain(&mut self, new_index: &[Option<usize>]) {
        let mut kept = new_index.iter().map(Option::is_some);
        self.partitions.retain(|_| kept.next().unwrap_or(false));
    }

    /// Reads the boards and picks the round's partitions: a `full` round reads them all; any
    /// other reads only those the last round found not idle, those whose board slot moved,
    /// and the sweep's.
    fn start_round(
        &mut self,
        assigned: &[Assigned],
        full: bool,
        order: &mut Vec<usize>,
    ) -> Result<()> {
        let n = assigned.len();
        let count = n.div_ceil(SWEEP_ROUNDS);
        let first = self.sweep_next.checked_rem(n).unwrap_or(0);
        self.sweep_next = first + count;
        self.sweep = Sweep {
            first,
            count,
            of: n,
        };
        if full {
            self.view.map_assignment(assigned, &self.partitions);
        }
        order.clear();
        order.append(&mut self.due);
        self.view.read_boards(full, order);
        if full {
            order.clear();
            order.extend(0..n);
        } else {
            order.extend((first..first + count).map(|i| i % n));
            order.sort_unstable();
            order.dedup();
        }
        Ok(())
    }

    /// Read afresh unless provably idle (see [`LogView::is_idle`]); a partition found not
    /// idle is read again next round.
    fn load(&mut self, mut cursor: Cursor<'_>, out: &mut Vec<u8>) -> Result<Loaded> {
        let loaded = self.load_partition(&mut cursor, out)?;
        if !matches!(loaded, Loaded::Idle) {
            self.due.push(cursor.index);
        }
        Ok(loaded)
    }

    fn in_group(&self) -> bool {
        self.member.is_some()
    }

    fn poll_group(
        &mut self,
        subscription: &BTreeMap<String, u32>,
        assigned: &[Assigned],
    ) -> Result<AssignmentChange> {
        let Some(LocalMember { member, .. }) = self.member.as_mut() else {
            return Ok(AssignmentChange::default());
        };
        // Positions are built only when the member commits: a map of every position each
        // round cost more than the rest of an idle round over many partitions.
        Ok(member.poll_lazily(subscription, || positions_of(assigned))?)
    }

    fn commit(&mut self, positions: &Positions) -> Result<()> {
        let Some(LocalMember { member, .. }) = self.member.as_mut() else {
            return Ok(());
        };
        fenced_is_fine(member.commit(positions))
    }

    fn leave(&mut self, positions: &Positions) -> Result<()> {
        let Some(LocalMember {
            member,
            auto_commit,
        }) = self.member.take()
        else {
            return Ok(());
        };
        let commit = if auto_commit {
            positions
        } else {
            &Positions::new()
        };
        fenced_is_fine(member.leave(commit))
    }
}

/// A member found evicted has nothing to commit or leave: its next poll rejoins.
fn fenced_is_fine(result: local::Result<()>) -> Result<()> {
    match result {
        Ok(()) | Err(LocalError::MemberFenced { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::super::{Consumer, Handled};
    use super::*;
    use crate::local::{PartitionConfig, PartitionLog};
    use crate::record::{BatchBuilder, Compression};

    const PARTITIONS: u32 = 300;

    /// One round with no metadata refresh (so not a full one after the first): the records
    /// it read.
    fn round(c: &mut Consumer) -> usize {
        if c.last_refresh.is_some() {
            c.last_refresh = Some(Instant::now());
        }
        let mut n = 0;
        c.poll(|_| {
            n += 1;
            Handled {
                output_end: n,
                delivered: true,
                stop: false,
            }
        })
        .unwrap();
        c.settle(n);
        n
    }

    fn append(log: &PartitionLog) {
        let mut b = BatchBuilder::new(Compression::None);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        b.append(now.unwrap().as_millis() as i64, None, Some(b"v"), &[]);
        let mut batch = b.build(0).unwrap();
        log.append(&mut batch, &PartitionConfig::default()).unwrap();
    }

    #[test]
    fn idle_rounds_read_only_what_the_board_shows_moved_and_the_sweep_finds_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = LogDir::open(tmp.path()).unwrap();
        dir.create_topic("t", PARTITIONS, Default::default())
            .unwrap();
        append(&dir.partition("t", 5).unwrap());
        let mut c = Consumer::on_topic_t(LogDir::open(tmp.path()).unwrap());
        assert_eq!(round(&mut c), 1, "the first round reads every partition");
        assert_eq!(c.round_order.len(), PARTITIONS as usize);
        round(&mut c);
        round(&mut c);
        let sweep = (PARTITIONS as usize).div_ceil(SWEEP_ROUNDS);
        assert_eq!(
            c.round_order.len(),
            sweep,
            "an idle round reads only the sweep's"
        );

        // A writer that notes its end on the board: read at the next round.
        append(&dir.partition("t", 200).unwrap());
        assert_eq!(round(&mut c), 1);
        assert!(c.round_order.contains(&200));

        // A writer that does not (an older kafkit, or one killed before it could): found by
        // the sweep, within its rounds.
        append(&PartitionLog::open(&tmp.path().join("t-250")).unwrap());
        let rounds = (1..=SWEEP_ROUNDS + 1).find(|_| round(&mut c) == 1);
        assert!(rounds.is_some(), "the sweep found the record");
        assert_eq!(round(&mut c), 0);
    }
}
