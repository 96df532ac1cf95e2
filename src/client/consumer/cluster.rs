//! The consumer's backend on a cluster: every assigned partition fetched once per round, one
//! Fetch per leader, and group membership with the classic protocol or KIP-848's
//! ([`crate::remote::membership`]), run on the same client the consumer fetches with.

use std::collections::{BTreeMap, HashMap, VecDeque};

use super::backend::{ConsumerBackend, Cursor, Loaded, Opened, Positions};
use super::{Assigned, GroupProtocol, GroupSettings, Result, positions_of};
use crate::kafka::TopicPartition;
use crate::kafka::groups::AssignmentChange;
use crate::remote::fetch::PartitionData;
use crate::remote::membership::classic::GroupMember;
use crate::remote::membership::consumer::ConsumerMember;
use crate::remote::membership::{Consuming, MemberSettings};
use crate::remote::{ConsumerClient, Fetched};

/// A consumer's client of a cluster, with its group member if it has one.
#[derive(Debug)]
pub(super) struct ClusterConsumer {
    client: ConsumerClient,
    member: Option<ClusterMember>,
    /// The answers of this round's Fetch requests, taken partition by partition.
    fetched: HashMap<TopicPartition, Fetched>,
}

/// A member of a group on the cluster, by `group.protocol`.
#[derive(Debug)]
enum ClusterMember {
    Classic(Box<GroupMember>),
    Consumer(Box<ConsumerMember>),
}

impl ClusterConsumer {
    /// A consumer over `client`, a member of the group `group` names if any: it joins at the
    /// first [`ConsumerBackend::poll_group`].
    pub fn new(client: ConsumerClient, group: Option<&GroupSettings>) -> ClusterConsumer {
        let member = group.map(|settings| {
            let member = MemberSettings {
                group_id: settings.id.clone(),
                session_timeout: settings.session_timeout,
                rebalance_timeout: settings.rebalance_timeout,
                heartbeat_interval: settings.heartbeat_interval,
                retry_backoff: settings.retry_backoff,
                auto_commit: settings.auto_commit,
            };
            let config = client.config();
            match settings.protocol {
                GroupProtocol::Classic => {
                    ClusterMember::Classic(Box::new(GroupMember::new(member, config)))
                }
                GroupProtocol::Consumer => {
                    ClusterMember::Consumer(Box::new(ConsumerMember::new(member, config)))
                }
            }
        });
        ClusterConsumer {
            client,
            member,
            fetched: HashMap::new(),
        }
    }
}

impl ConsumerBackend for ClusterConsumer {
    fn topics(
        &mut self,
        names: Option<&[String]>,
        auto_create: bool,
    ) -> Result<BTreeMap<String, u32>> {
        Ok(self.client.topics(names, auto_create)?)
    }

    fn auto_created_partitions(&self) -> Result<Option<u32>> {
        Ok(None)
    }

    fn has_topic(&self, _topic: &str) -> Result<bool> {
        Ok(true)
    }

    fn place(&self) -> String {
        format!("the cluster at {}", self.client.addr())
    }

    fn open(&mut self, topic: &str, p: u32, from_time: Option<i64>) -> Result<Opened> {
        let tp = (topic.to_string(), p as i32);
        let (start, end) = self.client.bounds(&tp)?;
        let at_time = match from_time {
            Some(t) => Some(self.client.list_offset(&tp, t)?.unwrap_or(end)),
            None => None,
        };
        Ok(Opened {
            start,
            end,
            at_time,
        })
    }

    /// Nothing to follow: a partition is named by its topic and number in each Fetch.
    fn retain(&mut self, _new_index: &[Option<usize>]) {}

    /// One Fetch per leader for every partition still reading; the round then takes each
    /// partition's answer in assignment order.
    fn start_round(
        &mut self,
        assigned: &[Assigned],
        _full: bool,
        order: &mut Vec<usize>,
    ) -> Result<()> {
        let positions: Vec<(TopicPartition, i64)> = assigned
            .iter()
            .filter(|a| !a.past_until)
            .map(|a| ((a.topic.clone(), a.partition as i32), a.position))
            .collect();
        // Replaces the last round's leftovers (a caller that stopped early).
        self.fetched = self.client.fetch(&positions)?;
        order.clear();
        order.extend(0..assigned.len());
        Ok(())
    }

    fn load(&mut self, mut cursor: Cursor<'_>, out: &mut Vec<u8>) -> Result<Loaded> {
        let a = &mut *cursor.assigned;
        let tp = (a.topic.clone(), a.partition as i32);
        match self.fetched.remove(&tp) {
            // Not fetched (leader unknown, moved or unreachable): the next round retries
            // after a metadata refresh.
            None | Some(Fetched::Retry) => Ok(Loaded::Nothing),
            Some(Fetched::Corrupt { offset }) => {
                Err(Fetched::corrupt_error(&tp.0, tp.1, offset).into())
            }
            Some(Fetched::OutOfRange) => {
                let (start, end) = self.client.bounds(&tp)?;
                cursor.reset_within(start, end);
                Ok(Loaded::Nothing)
            }
            Some(Fetched::Data(data)) => Ok(take_fetched(a, data, out)),
        }
    }

    fn in_group(&self) -> bool {
        self.member.is_some()
    }

    fn poll_group(
        &mut self,
        subscription: &BTreeMap<String, u32>,
        assigned: &[Assigned],
    ) -> Result<AssignmentChange> {
        let Some(member) = self.member.as_mut() else {
            return Ok(AssignmentChange::default());
        };
        let positions = positions_of(assigned);
        let now = Consuming {
            subscription,
            positions: &positions,
        };
        Ok(match member {
            ClusterMember::Classic(m) => self.client.run(async |f| m.poll(f, now).await)?,
            ClusterMember::Consumer(m) => self.client.run(async |f| m.poll(f, now).await)?,
        })
    }

    fn commit(&mut self, positions: &Positions) -> Result<()> {
        match self.member.as_mut() {
            None => {}
            Some(ClusterMember::Classic(m)) => {
                self.client.run(async |f| m.commit(f, positions).await)?
            }
            Some(ClusterMember::Consumer(m)) => {
                self.client.run(async |f| m.commit(f, positions).await)?
            }
        }
        Ok(())
    }

    fn leave(&mut self, positions: &Positions) -> Result<()> {
        match self.member.take() {
            None => {}
            Some(ClusterMember::Classic(m)) => {
                self.client.run(async |f| m.leave(f, positions).await)?
            }
            Some(ClusterMember::Consumer(m)) => {
                self.client.run(async |f| m.leave(f, positions).await)?
            }
        }
        Ok(())
    }
}

/// Takes one partition's fetched batches into `out` for delivery: the partition is caught up
/// if its position reached the end the broker reported; its aborted transactions are sorted
/// by first offset, as delivery walks them.
pub(super) fn take_fetched(a: &mut Assigned, data: PartitionData, out: &mut Vec<u8>) -> Loaded {
    a.caught_up = a.position >= data.end_offset;
    out.clear();
    out.extend_from_slice(&data.records);
    let mut aborted: VecDeque<(i64, i64)> = data.aborted.into_iter().collect();
    aborted.make_contiguous().sort_by_key(|t| t.1);
    Loaded::Batches {
        aborted,
        crc_checked: false,
    }
}
