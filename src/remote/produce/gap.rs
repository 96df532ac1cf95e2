//! A batch the broker wrote but never acknowledged, refused as out of order when sent again.
//!
//! A running broker recognises a producer's last 5 batches as duplicates. One restarted after
//! an unclean stop (SIGKILL, a crash) rebuilds that memory from a snapshot that holds only the
//! last batch, so a batch it wrote before dying, sent again, is refused with
//! OUT_OF_ORDER_SEQUENCE_NUMBER although it is in the log. Kafka's own producer fails such a
//! batch (and the user, sending it again, duplicates it).
//!
//! Here the producer asks the partition's leader for the last sequence number it holds from
//! this producer id and epoch (DescribeProducers). A broker that knows a producer takes its
//! sequence numbers only in order, so every batch whose numbers end at or before that one is in
//! the log, exactly once, if it was ever sent without a clear answer (a batch only refused may
//! be missing below later ones that a leader which did not know the producer took first). The
//! last of them, the leader's own last batch, is sent again: the leader recognises it as a
//! duplicate and acknowledges it as `acks` asks, which with acks=all means once committed, and
//! with it the earlier ones (a leader reports what it appended, above its high watermark too).
//! Sending resumes with the next. When the answer explains nothing (the broker lost
//! acknowledged records, or does not answer DescribeProducers) the refusal stays the error it
//! was.

use kafka_protocol::messages::TopicName;
use kafka_protocol::messages::describe_producers_request::TopicRequest;
use kafka_protocol::messages::{DescribeProducersRequest, DescribeProducersResponse};
use kafka_protocol::protocol::StrBytes;

use super::{OUT_OF_ORDER_SEQUENCE, Sender, Slot, SlotState};
use crate::record::{BatchHeader, next_sequence};
use crate::remote::error::Result;

impl Sender {
    /// Settles every partition whose oldest batch was refused as out of order (see the module
    /// docs); an error for the first whose refusal the broker's state does not explain.
    pub(super) async fn close_gaps(&mut self) -> Result<()> {
        for p in 0..self.queues.len() {
            if let Some(refusal) = self.queues[p].gap.take() {
                self.close_gap(p as i32, refusal).await?;
            }
        }
        Ok(())
    }

    async fn close_gap(&mut self, p: i32, refusal: String) -> Result<()> {
        let refused = self.send_failure(p, OUT_OF_ORDER_SEQUENCE, &refusal);
        let Some(last) = self.last_sequence(p).await else {
            return Err(refused);
        };
        let q = &mut self.queues[p as usize];
        // What an earlier gap found is asked again: the leader may have changed since.
        for slot in q.slots.iter_mut() {
            if slot.state == SlotState::Covered {
                slot.state = SlotState::Queued;
            }
        }
        // A batch whose sequences wrap past i32::MAX is never taken as held: its refusal
        // stands.
        let held_by_leader = |batch: &[u8]| {
            BatchHeader::parse(batch)
                .is_ok_and(|h| h.base_sequence <= h.last_sequence() && h.last_sequence() <= last)
        };
        let held = q
            .slots
            .iter()
            .take_while(|slot| held_by_leader(&slot.batch))
            .count();
        // Each of them must have been sent without a clear answer. A leader takes any sequence
        // number from a producer it does not know, so a batch it only ever refused can sit
        // below sequences of later batches that it took: that batch is not in the log.
        let explained = q.slots.range(..held).all(|slot| slot.maybe_written);
        let ends_at = |slot: Option<&Slot>| {
            slot.is_some_and(|slot| {
                BatchHeader::parse(&slot.batch).is_ok_and(|h| h.last_sequence() == last)
            })
        };
        let resumes = q.slots.get(held).is_none_or(|slot| {
            BatchHeader::parse(&slot.batch).is_ok_and(|h| h.base_sequence == next_sequence(last))
        });
        // Nothing explained: sending the same batch again would be refused the same way.
        if held == 0 || !explained || !ends_at(q.slots.get(held - 1)) || !resumes {
            return Err(refused);
        }
        // The leader's log holds them, but perhaps above its high watermark (a leader reports
        // what it appended, replicated or not). The last is the leader's own last batch, which
        // it recognises when sent again: acknowledged as `acks` asks (with acks=all, once
        // committed), it commits the others, which come before it in the same log.
        // Already acknowledged (it came back a duplicate), it has done so.
        let committed = q.slots[held - 1].state == SlotState::Acked;
        for slot in q.slots.range_mut(..held - 1) {
            if slot.state != SlotState::Acked {
                slot.state = if committed {
                    SlotState::Acked
                } else {
                    SlotState::Covered
                };
            }
        }
        q.pop_acked();
        q.attempts = 0;
        Ok(())
    }

    /// The last sequence number the leader of partition `p` holds from this producer id and
    /// epoch; `None` when it cannot be asked or does not say.
    async fn last_sequence(&mut self, p: i32) -> Option<i32> {
        let (id, epoch) = self.producer?;
        let leader = *self.route.as_ref()?.leaders.get(p as usize)?;
        if leader < 0 || !self.connect_leader(leader, &[p]).await.ok()? {
            return None;
        }
        let conn = self.conns.get_mut(&leader)?;
        let version = conn.version::<DescribeProducersRequest>().ok()?;
        let request = DescribeProducersRequest::default().with_topics(vec![
            TopicRequest::default()
                .with_name(TopicName(StrBytes::from_string(self.topic.clone())))
                .with_partition_indexes(vec![p]),
        ]);
        let response: DescribeProducersResponse = conn.send(&request, version).await.ok()?;
        let partition = response
            .topics
            .iter()
            .flat_map(|t| &t.partitions)
            .find(|r| r.partition_index == p && r.error_code == 0)?;
        partition
            .active_producers
            .iter()
            .find(|s| s.producer_id.0 == id && s.producer_epoch == i32::from(epoch))
            .map(|s| s.last_sequence)
    }
}
