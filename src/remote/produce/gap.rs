//! A batch the broker wrote but never acknowledged, refused as out of order when sent again.
//!
//! A running broker recognises a producer's last 5 batches as duplicates. One restarted after
//! an unclean stop (SIGKILL, a crash) rebuilds that memory from a snapshot that holds only the
//! last batch, so a batch it wrote before dying, sent again, is refused with
//! OUT_OF_ORDER_SEQUENCE_NUMBER although it is in the log. Kafka's own producer fails such a
//! batch (and the user, sending it again, duplicates it).
//!
//! Here the producer asks the partition's leader for the last sequence number it holds from
//! this producer id and epoch (DescribeProducers). A broker takes sequence numbers only in
//! order, so every batch whose numbers end at or before that one is in the log, exactly once:
//! those count as delivered, and sending resumes with the next. When the answer explains
//! nothing (the broker lost acknowledged records, or does not answer DescribeProducers) the
//! refusal stays the error it was.

use kafka_protocol::messages::TopicName;
use kafka_protocol::messages::describe_producers_request::TopicRequest;
use kafka_protocol::messages::{DescribeProducersRequest, DescribeProducersResponse};
use kafka_protocol::protocol::StrBytes;

use super::{OUT_OF_ORDER_SEQUENCE, Sender, SlotState};
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
        // A batch whose sequences wrap past i32::MAX is never taken as covered: its refusal
        // stands.
        let covered = |batch: &[u8]| {
            BatchHeader::parse(batch)
                .is_ok_and(|h| h.base_sequence <= h.last_sequence() && h.last_sequence() <= last)
        };
        let mut written = 0;
        while let Some(slot) = q.slots.front_mut() {
            if !covered(&slot.batch) {
                break;
            }
            slot.state = SlotState::Acked;
            q.pop_acked();
            written += 1;
        }
        let resumes = q.slots.front().is_none_or(|slot| {
            BatchHeader::parse(&slot.batch).is_ok_and(|h| h.base_sequence == next_sequence(last))
        });
        // Nothing settled: sending the same batch again would be refused the same way.
        if written == 0 || !resumes {
            return Err(refused);
        }
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
