//! A round's reading: the backend picks which assigned partitions the round reads (all of them
//! on a cluster, one Fetch per leader; on the embedded log, see [`super::local`]) and loads
//! each one's next batches, resetting a position that fell out of range; the engine then hands
//! their records to the caller, skipping control batches and aborted transactions, and marks
//! where each partition's delivery stands in the caller's output.

use std::collections::{HashSet, VecDeque};

use super::backend::{Cursor, Loaded};
use super::{Assigned, ConsumedRecord, Consumer, Handled, Isolation, Mark, Result};
use crate::client::ClientError;
use crate::record::{BatchHeader, BatchIter, for_each_record, for_each_record_crc};

impl Consumer {
    /// Reads each assigned partition once, handing its records to `each`. Returns whether the
    /// caller stopped.
    pub(super) fn read(
        &mut self,
        each: &mut impl FnMut(ConsumedRecord<'_, '_>) -> Handled,
        read_any: &mut bool,
    ) -> Result<bool> {
        let mut order = std::mem::take(&mut self.round_order);
        let started = self
            .backend
            .start_round(&self.assigned, self.full_round, &mut order);
        if started.is_ok() {
            self.full_round = false;
        }
        let stopped = started.and_then(|()| self.read_in_order(&order, each, read_any));
        self.round_order = order;
        stopped
    }

    /// [`Consumer::read`] of the assigned partitions at `order`.
    fn read_in_order(
        &mut self,
        order: &[usize],
        each: &mut impl FnMut(ConsumedRecord<'_, '_>) -> Handled,
        read_any: &mut bool,
    ) -> Result<bool> {
        let reset = self.config.reset;
        for &index in order {
            let a = &mut self.assigned[index];
            if a.past_until {
                continue;
            }
            let cursor = Cursor::new(index, a, &mut self.marks, reset);
            let (aborted, crc_checked) = match self.backend.load(cursor, &mut self.fetched)? {
                Loaded::Idle | Loaded::Nothing => continue,
                Loaded::TopicDeleted => {
                    self.deleted = Some(self.assigned[index].topic.clone());
                    break;
                }
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

    /// Hands the records of the loaded batches of partition `index` to `each`, skipping
    /// control batches and (read_committed) aborted transactions. Returns whether the caller
    /// stopped.
    pub(super) fn deliver(
        &mut self,
        index: usize,
        mut aborted: VecDeque<(i64, i64)>,
        crc_checked: bool,
        each: &mut impl FnMut(ConsumedRecord<'_, '_>) -> Handled,
        read_any: &mut bool,
    ) -> Result<bool> {
        let read_committed = self.config.isolation == Isolation::ReadCommitted;
        let until_time = self.config.until_time;
        let a = &mut self.assigned[index];
        // `until_end`: nothing at or past the end the partition had when it was assigned,
        // though a fetch may bring records appended since.
        let end_target = self.config.until_end.then_some(a.end_target);
        let marks = &mut self.marks;
        // Records up to `next` are delivered with the caller's output up to `end` (by
        // default, the output so far).
        let mut mark = |end: Option<usize>, next: i64, record: bool| {
            let end = end.unwrap_or_else(|| marks.last().map_or(0, |m| m.end));
            marks.push(Mark {
                end,
                assigned: index,
                next,
                record,
            })
        };
        let mut aborting: HashSet<i64> = HashSet::new();
        for batch in BatchIter::new(&self.fetched) {
            let batch = batch.map_err(|e| in_partition(e, a))?;
            let header = BatchHeader::parse(batch)?;
            if header.next_offset() <= a.position {
                continue;
            }
            if let Some(end) = end_target
                && header.base_offset >= end
            {
                reach(a, end, &mut mark);
                return Ok(false);
            }
            if read_committed && header.producer_id >= 0 {
                // As Kafka's fetcher: a transaction listed as aborted is skipped from its
                // first offset to its abort marker.
                while aborted.front().is_some_and(|t| t.1 <= header.last_offset()) {
                    let (pid, _) = aborted.pop_front().expect("checked");
                    aborting.insert(pid);
                }
                if header.is_control() {
                    if is_abort_marker(batch, &mut self.scratch)? {
                        aborting.remove(&header.producer_id);
                    }
                } else if header.is_transactional() && aborting.contains(&header.producer_id) {
                    a.position = header.next_offset();
                    mark(None, a.position, false);
                    continue;
                }
            }
            if header.is_control() {
                a.position = header.next_offset();
                mark(None, a.position, false);
                continue;
            }
            let timestamp_type = header.timestamp_type();
            let mut past_until = false;
            let mut past_end = false;
            let mut stop = false;
            let position = &mut a.position;
            let partition = a.partition as i32;
            let topic = a.topic.as_str();
            for_each_record_crc(batch, &mut self.scratch, !crc_checked, |r| {
                if stop || past_until || past_end || r.offset < *position {
                    return Ok(());
                }
                if end_target.is_some_and(|end| r.offset >= end) {
                    past_end = true;
                    return Ok(());
                }
                if until_time.is_some_and(|t| r.timestamp > t) {
                    past_until = true;
                    return Ok(());
                }
                *position = r.offset + 1;
                *read_any = true;
                let handled = each(ConsumedRecord {
                    topic,
                    partition,
                    timestamp_type,
                    record: &r,
                });
                let next = if handled.delivered {
                    r.offset + 1
                } else {
                    r.offset
                };
                mark(Some(handled.output_end), next, true);
                stop = handled.stop;
                Ok(())
            })
            .map_err(|e| in_partition(e, a))?;
            if stop {
                return Ok(true);
            }
            if past_until {
                a.past_until = true;
                return Ok(false);
            }
            if let Some(end) = end_target
                && past_end
            {
                reach(a, end, &mut mark);
                return Ok(false);
            }
            if a.position < header.next_offset() {
                a.position = header.next_offset();
                mark(None, a.position, false);
            }
        }
        Ok(false)
    }
}

/// `until_end`: the partition was read up to `end`, every record before it delivered (those
/// missing were removed by compaction or retention): its position moves there.
fn reach(a: &mut Assigned, end: i64, mark: &mut impl FnMut(Option<usize>, i64, bool)) {
    if a.position < end {
        a.position = end;
        mark(None, end, false);
    }
}

/// A damaged batch or record, named with its partition (the cause keeps its kind).
fn in_partition(e: crate::record::RecordError, a: &Assigned) -> ClientError {
    ClientError::from(e).context(format!("partition {}-{}", a.topic, a.partition))
}

/// Whether a control batch holds an abort marker (control key: version i16, type i16, 0 =
/// abort, 1 = commit).
fn is_abort_marker(batch: &[u8], scratch: &mut Vec<u8>) -> Result<bool> {
    let mut abort = false;
    for_each_record(batch, scratch, |r| {
        if let Some(key) = r.key
            && key.len() >= 4
            && key[2..4] == [0, 0]
        {
            abort = true;
        }
        Ok(())
    })?;
    Ok(abort)
}
