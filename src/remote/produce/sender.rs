//! The pipeline: queued batches go out in Produce requests to their partitions' leaders, up to
//! `max.in.flight.requests.per.connection` per leader, and the answers settle them in order.
//! A failure hands over to recovery (see `retry`).

use std::collections::{BTreeMap, HashMap, VecDeque};

use kafka_protocol::messages::TopicName;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{ProduceRequest, ProduceResponse};
use kafka_protocol::protocol::StrBytes;
use std::time::Duration;
use tokio::time::Instant;

use super::routing::{connect, probe_leader};
use super::{
    DUPLICATE_SEQUENCE, InFlight, LEADER_NOT_AVAILABLE, OUT_OF_ORDER_SEQUENCE, REQUEST_TIMED_OUT,
    Sender, SlotState, is_retriable, may_have_written, record_count,
};
use crate::remote::error::{RemoteError, Result};

impl Sender {
    /// The error that ended the producer, if any.
    pub(super) fn check(&self) -> Result<()> {
        match &self.failed {
            Some((code, message)) => Err(RemoteError::Broker {
                code: *code,
                message: message.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Keeps a failure for later calls: the producer's state after it is not worth sending on.
    /// The error says how many records were not acknowledged, so that a user knows what to
    /// send again (those in flight may have been written).
    pub(super) fn remember(&mut self, result: Result<()>) -> Result<()> {
        let Err(e) = result else {
            return Ok(());
        };
        let unacked = self
            .queues
            .iter()
            .flat_map(|q| q.slots.iter())
            .filter(|s| s.state != SlotState::Acked);
        let (mut records, mut written) = (0, 0);
        for slot in unacked {
            records += record_count(&slot.batch);
            // In flight, its answer unread: as unclear as a lost one.
            if slot.maybe_written || slot.state == SlotState::InFlight {
                written += record_count(&slot.batch);
            }
        }
        let message = if records > 0 {
            format!(
                "{e}; {records} record(s) not acknowledged ({written} of them sent without a clear answer, which the broker may have written)"
            )
        } else {
            e.to_string()
        };
        let code = e.code().unwrap_or(-1);
        self.failed = Some((code, message.clone()));
        Err(RemoteError::Broker { code, message })
    }

    /// Sends what the pipelines allow and reads answers: with `all`, until every batch is
    /// acknowledged; without, until nothing waits for a full pipeline.
    pub(super) async fn drive(&mut self, all: bool) -> Result<()> {
        loop {
            let blocked = if self.recovering {
                None
            } else {
                self.send_ready().await?
            };
            let due = |s: &Sender| {
                s.in_flight
                    .iter()
                    .find(|(_, q)| !q.is_empty())
                    .map(|(l, _)| *l)
            };
            let leader = if self.recovering || all {
                due(self)
            } else {
                blocked
            };
            match leader {
                Some(leader) => self.receive(leader).await?,
                None if self.recovering => self.recover().await?,
                None if all && self.queues.iter().any(|q| !q.slots.is_empty()) => {
                    // Nothing went out and nothing is due: wait and look again.
                    self.recovering = true;
                }
                None => return Ok(()),
            }
        }
    }

    /// Sends requests while leaders' pipelines have room, each with the next batch of every
    /// partition it leads. Returns a leader whose pipeline is full while more waits for it.
    async fn send_ready(&mut self) -> Result<Option<i32>> {
        let mut blocked = None;
        loop {
            let Some(route) = self.route.as_ref() else {
                return Ok(None);
            };
            let max = if self.settings.acks == 0 {
                usize::MAX
            } else {
                self.settings.max_in_flight.max(1)
            };
            let idempotent = self.producer.is_some();
            let mut by_leader: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
            for (p, q) in self.queues.iter().enumerate() {
                if !q.slots.iter().any(|s| s.state == SlotState::Queued) {
                    continue;
                }
                let leader = route.leaders.get(p).copied().filter(|l| *l >= 0);
                if idempotent && !q.proven && q.slots.iter().any(|s| s.state == SlotState::InFlight)
                {
                    // One batch at a time until the leader knows this producer (see
                    // `PartitionQueue::proven`): the rest wait for its answer.
                    blocked = leader.or(blocked);
                    continue;
                }
                match leader {
                    Some(leader) => by_leader.entry(leader).or_default().push(p as i32),
                    None => {
                        // No leader (an election, a broker restarting): wait for one.
                        let e = RemoteError::broker(LEADER_NOT_AVAILABLE, None);
                        self.queues[p].last_error = Some(e.to_string());
                        self.recovering = true;
                        return Ok(None);
                    }
                }
            }
            let mut sent = false;
            for (leader, partitions) in by_leader {
                if self.in_flight.get(&leader).map_or(0, VecDeque::len) >= max {
                    blocked = Some(leader);
                    continue;
                }
                self.send_request(leader, partitions).await?;
                if self.recovering {
                    return Ok(None);
                }
                sent = true;
            }
            if !sent {
                return Ok(blocked);
            }
        }
    }
    /// One Produce request to `leader` with the next queued batch of each of `partitions`.
    async fn send_request(&mut self, leader: i32, mut partitions: Vec<i32>) -> Result<()> {
        if !self.connect_leader(leader, &partitions).await? {
            return Ok(());
        }
        if self.settings.acks == 0 && !self.keep_ready_partitions(leader, &mut partitions).await? {
            return Ok(());
        }
        let request = self.produce_request(&partitions);
        let conn = self.conns.get_mut(&leader).expect("connected above");
        let version = conn.version::<ProduceRequest>()?;
        let sent = if self.settings.acks == 0 {
            conn.send_without_response(&request, version)
                .await
                .map(|_| None)
        } else {
            conn.submit(&request, version).await.map(Some)
        };
        let id = match sent {
            Ok(id) => id,
            Err(e) => return self.connection_lost(leader, e, &partitions),
        };
        // No answer will come with acks=0: the batches are done once written.
        let state = match id {
            Some(_) => SlotState::InFlight,
            None => SlotState::Acked,
        };
        for p in &partitions {
            let q = &mut self.queues[*p as usize];
            if let Some(slot) = q.slots.iter_mut().find(|s| s.state == SlotState::Queued) {
                slot.state = state;
            }
            q.pop_acked();
        }
        if let Some(id) = id {
            self.in_flight
                .entry(leader)
                .or_default()
                .push_back(InFlight {
                    id,
                    version,
                    partitions,
                });
        }
        Ok(())
    }

    /// Connects to `leader` unless already connected. `false` when it cannot be reached: then
    /// the batches of `partitions` wait for it and the producer recovers.
    pub(super) async fn connect_leader(&mut self, leader: i32, partitions: &[i32]) -> Result<bool> {
        if self.conns.contains_key(&leader) {
            return Ok(true);
        }
        let brokers = &self.route.as_ref().expect("known when sending").brokers;
        match connect(brokers, leader, &self.config).await {
            Ok(conn) => {
                self.conns.insert(leader, conn);
                Ok(true)
            }
            Err(e) if e.is_connection() => {
                // Unreachable: not a send, so not a retry; the batches wait (up to
                // delivery.timeout.ms) for the broker to come back.
                for p in partitions {
                    self.queues[*p as usize].last_error = Some(e.to_string());
                }
                self.recovering = true;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// For acks=0: asks `leader` about those of `partitions` not yet seen ready (see the module
    /// docs) and keeps in `partitions` only the ready ones. `false` when none is left to send.
    async fn keep_ready_partitions(
        &mut self,
        leader: i32,
        partitions: &mut Vec<i32>,
    ) -> Result<bool> {
        let unproven: Vec<i32> = partitions
            .iter()
            .copied()
            .filter(|p| !self.ready.contains(p))
            .collect();
        if unproven.is_empty() {
            return Ok(true);
        }
        let conn = self.conns.get_mut(&leader).expect("connected above");
        let answers = match probe_leader(conn, &self.topic, &unproven).await {
            Ok(answers) => answers,
            Err(e) => return self.connection_lost(leader, e, &[]).map(|()| false),
        };
        for (p, code) in answers {
            if code == 0 {
                self.ready.insert(p);
            } else {
                self.recovering = true;
                let e = RemoteError::broker(code, None);
                self.fail(p, code, &e.to_string(), is_retriable(code))?;
            }
        }
        partitions.retain(|p| self.ready.contains(p));
        Ok(!partitions.is_empty())
    }

    /// The Produce request carrying the next queued batch of each of `partitions`.
    fn produce_request(&self, partitions: &[i32]) -> ProduceRequest {
        let mut data = Vec::with_capacity(partitions.len());
        for p in partitions {
            let slot = self.queues[*p as usize]
                .slots
                .iter()
                .find(|s| s.state == SlotState::Queued)
                .expect("partitions with a queued batch");
            data.push(
                PartitionProduceData::default()
                    .with_index(*p)
                    .with_records(Some(slot.batch.clone())),
            );
        }
        let transactional_id = self.txn.as_ref().map(|t| {
            kafka_protocol::messages::TransactionalId(StrBytes::from_string(
                t.transactional_id().to_string(),
            ))
        });
        ProduceRequest::default()
            .with_transactional_id(transactional_id)
            .with_acks(self.settings.acks)
            .with_timeout_ms(ack_timeout(
                self.config.request_timeout,
                self.producer.is_some(),
            ))
            .with_topic_data(vec![
                TopicProduceData::default()
                    .with_name(TopicName(StrBytes::from_string(self.topic.clone())))
                    .with_partition_data(data),
            ])
    }

    /// Reads the answers that arrive by `deadline` from every leader, settling their batches,
    /// then sends what the pipelines allow. A failure recovers as in [`Sender::drive`].
    pub(super) async fn poll(&mut self, deadline: Instant) -> Result<()> {
        loop {
            let mut settled = false;
            let leaders: Vec<i32> = self
                .in_flight
                .iter()
                .filter(|(_, q)| !q.is_empty())
                .map(|(l, _)| *l)
                .collect();
            for leader in leaders {
                if self.recovering {
                    break;
                }
                let wait = deadline.saturating_duration_since(Instant::now());
                settled |= self.receive_within(leader, wait).await?;
            }
            if self.recovering {
                return self.drive(false).await;
            }
            if !settled {
                return self.drive(false).await;
            }
        }
    }

    /// Settles the oldest answer due from `leader` if it arrives within `wait`; `false` when
    /// it has not.
    async fn receive_within(&mut self, leader: i32, wait: Duration) -> Result<bool> {
        let Some(request) = self.in_flight.get(&leader).and_then(VecDeque::front) else {
            return Ok(false);
        };
        let (version, id) = (request.version, request.id);
        let Some(conn) = self.conns.get_mut(&leader) else {
            return self.receive(leader).await.map(|()| true);
        };
        match conn
            .receive_within::<ProduceRequest>(version, id, wait)
            .await
        {
            Ok(None) => Ok(false),
            Ok(Some(response)) => {
                let addr = conn.addr().to_string();
                let request = self
                    .in_flight
                    .get_mut(&leader)
                    .and_then(VecDeque::pop_front)
                    .expect("looked at above");
                self.settle(request, response, addr).map(|()| true)
            }
            Err(e) => self.connection_lost(leader, e, &[]).map(|()| true),
        }
    }

    /// Reads the oldest answer due from `leader` and settles its batches.
    async fn receive(&mut self, leader: i32) -> Result<()> {
        let Some(request) = self
            .in_flight
            .get_mut(&leader)
            .and_then(VecDeque::pop_front)
        else {
            return Ok(());
        };
        let Some(conn) = self.conns.get_mut(&leader) else {
            self.in_flight
                .entry(leader)
                .or_default()
                .push_front(request);
            return self.connection_lost(
                leader,
                RemoteError::Connect {
                    attempts: format!("broker {leader} (connection lost)"),
                },
                &[],
            );
        };
        let response = match conn
            .receive::<ProduceRequest>(request.version, request.id)
            .await
        {
            Ok(response) => response,
            Err(e) => {
                self.in_flight
                    .entry(leader)
                    .or_default()
                    .push_front(request);
                return self.connection_lost(leader, e, &[]);
            }
        };
        let addr = conn.addr().to_string();
        self.settle(request, response, addr)
    }

    /// Settles the batches of `request` by its `response` from the broker at `addr`.
    fn settle(&mut self, request: InFlight, response: ProduceResponse, addr: String) -> Result<()> {
        let mut answers: HashMap<i32, (i16, Option<String>)> = HashMap::new();
        for topic in &response.responses {
            for p in &topic.partition_responses {
                let message = p.error_message.as_ref().map(|m| m.to_string()).or_else(|| {
                    p.record_errors
                        .first()
                        .and_then(|r| r.batch_index_error_message.as_ref())
                        .map(|m| m.to_string())
                });
                answers.insert(p.index, (p.error_code, message));
            }
        }
        for p in request.partitions {
            let q = &mut self.queues[p as usize];
            let Some(i) = q.slots.iter().position(|s| s.state == SlotState::InFlight) else {
                continue;
            };
            match answers.remove(&p) {
                Some((0 | DUPLICATE_SEQUENCE, _)) => {
                    // Committed as `acks` asks, and so is every batch before it in the log,
                    // those `gap` found there included.
                    for slot in q.slots.range_mut(..=i) {
                        if slot.state == SlotState::Covered {
                            slot.state = SlotState::Acked;
                        }
                    }
                    q.slots[i].state = SlotState::Acked;
                    q.proven = true;
                    if i == 0 {
                        q.attempts = 0;
                    }
                    q.pop_acked();
                    self.backoff = self.settings.retry_backoff;
                }
                Some((code, message)) => {
                    q.slots[i].state = SlotState::Queued;
                    q.slots[i].maybe_written |= may_have_written(code);
                    self.recovering = true;
                    let e = RemoteError::broker(code, message.as_deref());
                    if code == REQUEST_TIMED_OUT && self.producer.is_some() {
                        // Written, waiting on replicas: sent again, it waits again (see the
                        // producer's module docs); no retry spent.
                        q.held = true;
                        q.last_error = Some(e.to_string());
                        continue;
                    }
                    let oldest = q.slots.range(..i).all(|s| s.state == SlotState::Covered);
                    if code == OUT_OF_ORDER_SEQUENCE && oldest && !q.failed && !q.held {
                        // The oldest batch not known written: no earlier failure explains it
                        // (see `gap`).
                        q.failed = true;
                        q.last_error = Some(e.to_string());
                        q.gap = Some(e.to_string());
                        continue;
                    }
                    self.fail(p, code, &e.to_string(), is_retriable(code))?;
                }
                None => {
                    return Err(RemoteError::Protocol {
                        addr,
                        api: "Produce",
                        reason: format!("no answer for partition {p}"),
                    });
                }
            }
        }
        Ok(())
    }
}

/// How long a Produce request asks its leader to wait for the in-sync replicas. Idempotent:
/// half of `request_timeout`, so that a live leader answers REQUEST_TIMED_OUT well before the
/// request times out here, even on a loaded machine (see the producer's module docs); sent
/// again, the batch only waits again. Otherwise all of it, as Kafka's producer asks: there a
/// REQUEST_TIMED_OUT costs a retry and may write the batch twice.
fn ack_timeout(request_timeout: Duration, idempotent: bool) -> i32 {
    let wait = if idempotent {
        request_timeout / 2
    } else {
        request_timeout
    };
    wait.as_millis().clamp(1, i32::MAX as u128) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_leader_is_asked_to_answer_before_the_request_times_out() {
        let ms = |ms, idempotent| ack_timeout(Duration::from_millis(ms), idempotent);
        assert_eq!(ms(1_500, true), 750);
        assert_eq!(ms(1_500, false), 1_500);
        assert_eq!(ms(30_000, true), 15_000);
        assert_eq!(ms(1, true), 1);
        assert_eq!(ms(0, false), 1);
    }
}
