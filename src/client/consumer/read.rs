//! A round's reading: which assigned partitions it reads (all of them on a cluster, one
//! Fetch per leader; on the embedded log, see [`super::local`]) and loading each one's next
//! batches, with offset resets when a position fell out of range.

use std::collections::{HashMap, VecDeque};

use super::local::Sweep;
use super::source::{Reader, Source};
use super::{ConsumedRecord, Consumer, FETCH_BYTES, Handled, Mark, OffsetReset, Result};
use crate::local::LocalError;
use crate::remote::{Fetched, Tp};

impl Consumer {
    /// Reads each assigned partition once, handing its records to `each`. Returns whether the
    /// caller stopped.
    pub(super) fn read(
        &mut self,
        each: &mut impl FnMut(ConsumedRecord<'_, '_>) -> Handled,
        read_any: &mut bool,
    ) -> Result<bool> {
        // A cluster is asked once per round, one Fetch per leader for all partitions.
        let positions: Vec<(Tp, i64)> = match &self.source {
            Source::Remote(_) => self
                .assigned
                .iter()
                .filter(|a| !a.past_until)
                .map(|a| ((a.topic.clone(), a.partition as i32), a.position))
                .collect(),
            Source::Local(_) => Vec::new(),
        };
        let mut fetched = self.source.fetch_round(&positions)?;
        let mut order = std::mem::take(&mut self.round_order);
        let full = std::mem::take(&mut self.full_round);
        let sweep = match &mut self.source {
            Source::Local(local) => local.start_round(&self.assigned, full, &mut order),
            Source::Remote(_) => {
                order.clear();
                order.extend(0..self.assigned.len());
                Sweep::default()
            }
        };
        let stopped = self.read_in_order(&order, &mut fetched, sweep, each, read_any);
        self.round_order = order;
        stopped
    }

    /// [`Consumer::read`] of the assigned partitions at `order`.
    fn read_in_order(
        &mut self,
        order: &[usize],
        fetched: &mut HashMap<Tp, Fetched>,
        sweep: Sweep,
        each: &mut impl FnMut(ConsumedRecord<'_, '_>) -> Handled,
        read_any: &mut bool,
    ) -> Result<bool> {
        for &index in order {
            if self.assigned[index].past_until {
                continue;
            }
            let loaded = self.load(index, fetched, sweep)?;
            if !matches!(loaded, Loaded::Idle)
                && let Source::Local(local) = &mut self.source
            {
                local.still_due(index);
            }
            let (aborted, crc_checked) = match loaded {
                Loaded::Idle | Loaded::Nothing => continue,
                Loaded::TopicDeleted => break,
                Loaded::Batches {
                    aborted,
                    crc_checked,
                } => (aborted, crc_checked),
            };
            if self.deliver(index, aborted, crc_checked, each, read_any)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Loads partition `index`'s next batches into `self.fetched`: read from the embedded
    /// log, or taken from the round's fetch. A position out of range is reset first.
    pub(super) fn load(
        &mut self,
        index: usize,
        fetched: &mut HashMap<Tp, Fetched>,
        sweep: Sweep,
    ) -> Result<Loaded> {
        let reset = self.config.reset;
        let a = &mut self.assigned[index];
        match &mut a.reader {
            Reader::Local(_) => self.load_local(index, sweep),
            Reader::Remote => {
                let tp = (a.topic.clone(), a.partition as i32);
                match fetched.remove(&tp) {
                    // Not fetched (leader unknown, moved or unreachable): the next round
                    // retries after a metadata refresh.
                    None | Some(Fetched::Retry) => Ok(Loaded::Nothing),
                    Some(Fetched::Corrupt { offset }) => {
                        Err(Fetched::corrupt_error(&tp.0, tp.1, offset).into())
                    }
                    Some(Fetched::OutOfRange) => {
                        let (lo, hi) = self.source.bounds(&tp)?;
                        let position = match reset {
                            OffsetReset::Earliest => lo,
                            OffsetReset::Latest => hi,
                        };
                        reset_to(index, &mut a.position, &mut self.marks, position);
                        Ok(Loaded::Nothing)
                    }
                    Some(Fetched::Data(d)) => {
                        a.caught_up = a.position >= d.end_offset;
                        self.fetched.clear();
                        self.fetched.extend_from_slice(&d.records);
                        let mut aborted: VecDeque<(i64, i64)> = d.aborted.into_iter().collect();
                        aborted.make_contiguous().sort_by_key(|t| t.1);
                        Ok(Loaded::Batches {
                            aborted,
                            crc_checked: false,
                        })
                    }
                }
            }
        }
    }

    /// [`Consumer::load`] of a partition of the embedded log, read afresh unless it is
    /// provably idle (see [`LocalLog::is_idle`]); `sweep`: the round's sweep.
    fn load_local(&mut self, index: usize, sweep: Sweep) -> Result<Loaded> {
        let reset = self.config.reset;
        let a = &mut self.assigned[index];
        let Reader::Local(part) = &mut a.reader else {
            unreachable!("called for partitions of the embedded log")
        };
        let Source::Local(local) = &mut self.source else {
            unreachable!("a partition of the embedded log is read from it")
        };
        let swept = sweep.covers(index);
        if a.caught_up && local.is_idle(part, a.partition, a.position, swept) {
            return Ok(Loaded::Idle);
        }
        let bounds = local.bounds(&a.topic, a.partition, part, a.position, swept);
        let snap = match bounds {
            Ok(snap) => snap,
            Err(_) if !self.source.has_topic(&a.topic)? => {
                self.deleted = Some(a.topic.clone());
                return Ok(Loaded::TopicDeleted);
            }
            Err(e) => return Err(e.into()),
        };
        if a.position < snap.log_start_offset {
            // Retention removed what we were about to read: reset as Kafka's consumer
            // does.
            let position = match reset {
                OffsetReset::Earliest => snap.log_start_offset,
                OffsetReset::Latest => snap.log_end_offset,
            };
            reset_to(index, &mut a.position, &mut self.marks, position);
        }
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
            return Ok(match local.is_idle(part, a.partition, a.position, false) {
                true => Loaded::Idle,
                false => Loaded::Nothing,
            });
        }
        match part.read_into(a.position, FETCH_BYTES, &mut self.fetched) {
            Ok(()) => Ok(Loaded::Batches {
                aborted: VecDeque::new(),
                crc_checked: true,
            }),
            // Retention moved the start since the snapshot: the next round resets.
            Err(LocalError::OffsetOutOfRange { .. }) => Ok(Loaded::Nothing),
            Err(e) => Err(e.into()),
        }
    }
}

/// What [`Consumer::load`] found for a partition.
pub(super) enum Loaded {
    /// Nothing to read this round.
    Nothing,
    /// Nothing to read, and provably nothing new since the last look (the embedded log): the
    /// next rounds need not look again until the partition's board slot moves.
    Idle,
    /// The partition's topic is gone (the embedded log): stop the round.
    TopicDeleted,
    /// Batches in `Consumer::fetched`, with a cluster's aborted transactions (producer id,
    /// first offset), sorted by first offset; `crc_checked` when the reader checked every
    /// batch's CRC already (the embedded log's does).
    Batches {
        aborted: VecDeque<(i64, i64)>,
        crc_checked: bool,
    },
}

/// Moves partition `index`'s position `at` to `position` (an offset reset). What a commit covers
/// moves only once the output before it is delivered.
fn reset_to(index: usize, at: &mut i64, marks: &mut Vec<Mark>, position: i64) {
    *at = position;
    let end = marks.last().map_or(0, |m| m.end);
    marks.push(Mark {
        end,
        assigned: index,
        next: position,
        record: false,
    });
}
