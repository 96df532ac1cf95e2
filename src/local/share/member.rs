//! A member of a share group on the embedded log: it holds its liveness lock for its life and
//! trades with the group's files in exchanges: under the group's lock, each exchange applies
//! the member's acknowledgements, gives back the records of members that went away or whose
//! locks expired, and acquires new records for the member.

use std::collections::{BTreeSet, HashMap};
use std::fs;

use kafka_protocol::ResponseError;

use super::ShareGroupDir;
use super::admin::MemberInfo;
use super::window::InvalidRecordState;
use crate::kafka::now_ms;
use crate::kafka::share::{AckRun, Acquired, ShareGroupConfig, ShareOffsetReset};
use crate::local::error::{LocalError, Result};
use crate::local::lock::{FileLock, LockMode};
use crate::local::{LogDir, PartitionLog, Snapshot};

/// A live member of a share group.
#[derive(Debug)]
pub struct ShareMember {
    dir: ShareGroupDir,
    member_id: String,
    /// Held for the member's life: others see it alive while it is.
    alive: Option<FileLock>,
    /// Every partition the member exchanged with: where it may hold records.
    touched: BTreeSet<(String, i32)>,
}

/// One partition of an exchange: what the member brings (acknowledgements, how many records it
/// wants) and, after the exchange, what it got.
#[derive(Debug)]
pub struct SharePartitionExchange {
    pub topic: String,
    pub partition: i32,
    /// Acknowledgements `(first, last, type)`, ascending.
    pub acks: Vec<AckRun>,
    /// Whether to acquire records of the partition (else only acknowledge).
    pub acquire: bool,
    /// Out: the first acknowledgement refused (the records were not held by this member, or
    /// are done already); the others were applied.
    pub ack_error: Option<InvalidRecordState>,
    /// Out: the records acquired, to read from [`SharePartitionExchange::log`].
    pub acquired: Vec<Acquired>,
    /// Out: the partition and the snapshot the acquisition saw (when records were acquired).
    pub log: Option<(PartitionLog, Snapshot)>,
}

impl SharePartitionExchange {
    /// An exchange with `partition` of `topic`; `acquire`: it wants records.
    pub fn new(topic: &str, partition: i32, acquire: bool) -> SharePartitionExchange {
        SharePartitionExchange {
            topic: topic.to_string(),
            partition,
            acks: Vec::new(),
            acquire,
            ack_error: None,
            acquired: Vec::new(),
            log: None,
        }
    }
}

/// What an exchange says about the whole group.
#[derive(Debug, Clone, Copy)]
pub struct ShareExchange {
    /// How long the acquired records stay locked.
    pub lock_duration_ms: i64,
}

impl ShareMember {
    /// Joins group `group` as `member_id` (a new member: its file is created and locked, and
    /// says who it is, `client_id` on `host`, and what it reads, `topics`).
    pub fn join(
        root: &std::path::Path,
        group: &str,
        member_id: &str,
        (client_id, host): (&str, &str),
        topics: &[String],
    ) -> Result<ShareMember> {
        let dir = ShareGroupDir::new(root, group)?;
        if member_id.is_empty() || member_id.len() > 36 {
            return Err(LocalError::kafka(
                ResponseError::InvalidRequest,
                "Invalid member id in the request.",
            ));
        }
        dir.create()?;
        let path = dir.member_path(member_id);
        let alive = FileLock::try_acquire(&path, LockMode::Exclusive)?.ok_or_else(|| {
            LocalError::kafka(
                ResponseError::InvalidRequest,
                format!(
                    "member id '{member_id}' of share group '{group}' is in use by a live member"
                ),
            )
        })?;
        let info = MemberInfo {
            client_id: client_id.to_string(),
            host: host.to_string(),
            topics: topics.to_vec(),
        };
        let bytes = serde_json::to_vec(&info).expect("member info serializes");
        fs::write(&path, bytes)
            .map_err(|e| LocalError::io(format!("cannot write {}", path.display()), e))?;
        Ok(ShareMember {
            dir,
            member_id: member_id.to_string(),
            alive: Some(alive),
            touched: BTreeSet::new(),
        })
    }

    pub fn member_id(&self) -> &str {
        &self.member_id
    }

    pub fn group(&self) -> &str {
        self.dir.group()
    }

    /// One exchange with the group's files (see the module docs), for each partition in turn;
    /// at most `max_records` records are acquired in all.
    pub fn exchange(
        &mut self,
        log_dir: &LogDir,
        partitions: &mut [SharePartitionExchange],
        max_records: usize,
    ) -> Result<ShareExchange> {
        let _lock = self.dir.lock()?;
        let config = self.dir.config()?;
        if config.read_committed {
            return Err(LocalError::kafka(
                ResponseError::InvalidConfig,
                format!(
                    "share group '{}' has share.isolation.level=read_committed, which the embedded log does not serve yet; remove it with kafka-configs --entity-type groups --entity-name {} --alter --delete-config share.isolation.level",
                    self.dir.group(),
                    self.dir.group()
                ),
            ));
        }
        let now = now_ms();
        let mut gone: HashMap<String, bool> = HashMap::new();
        let mut budget = max_records;
        for p in partitions.iter_mut() {
            self.touched.insert((p.topic.clone(), p.partition));
            self.exchange_partition(log_dir, &config, now, &mut gone, budget, p)?;
            let got: i64 = p.acquired.iter().map(|a| a.last - a.first + 1).sum();
            budget = budget.saturating_sub(got as usize);
        }
        Ok(ShareExchange {
            lock_duration_ms: config.record_lock_duration_ms,
        })
    }

    fn exchange_partition(
        &self,
        log_dir: &LogDir,
        config: &ShareGroupConfig,
        now: i64,
        gone: &mut HashMap<String, bool>,
        budget: usize,
        p: &mut SharePartitionExchange,
    ) -> Result<()> {
        let Ok(index) = u32::try_from(p.partition) else {
            return Err(LocalError::kafka(
                ResponseError::UnknownTopicOrPartition,
                format!(
                    "partition {} of topic {} does not exist",
                    p.partition, p.topic
                ),
            ));
        };
        let log = log_dir.partition(&p.topic, index)?;
        let snapshot = log.snapshot()?;
        let (log_start, log_end) = (snapshot.log_start_offset, snapshot.log_end_offset);
        let mut window = self.dir.load_window(&p.topic, p.partition)?;
        let before = window.clone();
        if !window.is_initialized() {
            let start = match config.auto_offset_reset {
                ShareOffsetReset::Earliest => log_start,
                ShareOffsetReset::Latest => log_end,
                ShareOffsetReset::ByDuration(ms) => log
                    .offset_for_timestamp(&snapshot, now.saturating_sub(ms))?
                    .unwrap_or(log_end),
            };
            window.initialize(start);
        }
        window.fit_to_log(log_start, log_end);
        let limit = config.delivery_count_limit;
        let mut durable = false;
        for &(first, last, kind) in &p.acks {
            match window.acknowledge(&self.member_id, first, last, kind, limit) {
                Ok(()) => durable = true,
                Err(e) => {
                    p.ack_error.get_or_insert(e);
                }
            }
        }
        let mut member_gone = |member: &str| {
            if member == self.member_id {
                return false;
            }
            *gone
                .entry(member.to_string())
                .or_insert_with(|| self.dir.member_gone(member).unwrap_or(false))
        };
        if window.release_expired(now, limit, &mut member_gone) > 0 {
            durable = true;
        }
        window.advance();
        if p.acquire && budget > 0 {
            p.acquired = window.acquire(
                &self.member_id,
                now.saturating_add(config.record_lock_duration_ms),
                budget,
                log_end,
                config.partition_max_record_locks as usize,
            );
        }
        if window != before {
            self.dir
                .save_window(&p.topic, p.partition, &window, durable)?;
        }
        if !p.acquired.is_empty() {
            p.log = Some((log, snapshot));
        }
        Ok(())
    }

    /// Gives back every record the member holds, staying a member (a share session ends).
    pub fn release_all(&mut self) -> Result<()> {
        let _lock = self.dir.lock()?;
        let limit = self.dir.config()?.delivery_count_limit;
        for (topic, partition) in &self.touched {
            let mut window = self.dir.load_window(topic, *partition)?;
            if window.release_member(&self.member_id, limit) > 0 {
                window.advance();
                self.dir.save_window(topic, *partition, &window, true)?;
            }
        }
        Ok(())
    }

    /// Leaves the group: applies the last acknowledgements, gives back every record the
    /// member still holds, and gives up its member file.
    pub fn leave(mut self, log_dir: &LogDir, acks: Vec<SharePartitionExchange>) -> Result<()> {
        let mut acks = acks;
        for p in acks.iter_mut() {
            p.acquire = false;
        }
        if !acks.is_empty() {
            self.exchange(log_dir, &mut acks, 0)?;
        }
        self.release_all()?;
        let path = self.dir.member_path(&self.member_id);
        let _ = fs::remove_file(&path);
        self.alive.take();
        Ok(())
    }
}
