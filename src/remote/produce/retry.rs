//! Failures and retries: a failed send puts its batches back in their queues and counts
//! against `retries`; once every answer due has been read, batches past `delivery.timeout.ms`
//! expire, the producer waits `retry.backoff.ms` (doubling up to 1 s), refreshes the route,
//! settles batches refused as out of order that the broker has (see `gap`) and sends again.

use super::routing::{TopicRoute, connect, fetch_route};
use super::{MAX_BACKOFF, OUT_OF_ORDER_SEQUENCE, Sender, SlotState, record_count};
use crate::remote::error::{RemoteError, Result};

impl Sender {
    /// A connection failed with `e`: every batch in flight on it goes back to its queue (and
    /// so do `unsent`'s, whose request failed on the way out), counted as a failed send.
    pub(super) fn connection_lost(
        &mut self,
        leader: i32,
        e: RemoteError,
        unsent: &[i32],
    ) -> Result<()> {
        self.conns.remove(&leader);
        self.recovering = true;
        let message = e.to_string();
        let retriable = e.is_connection();
        let requests = self.in_flight.remove(&leader).unwrap_or_default();
        let mut partitions: Vec<i32> = unsent.to_vec();
        // Whatever was sent on it may have been written, the request that failed on the way
        // out included.
        for &p in unsent {
            let q = &mut self.queues[p as usize];
            if let Some(slot) = q.slots.iter_mut().find(|s| s.state == SlotState::Queued) {
                slot.maybe_written = true;
            }
        }
        for request in requests {
            for p in request.partitions {
                let q = &mut self.queues[p as usize];
                if let Some(slot) = q.slots.iter_mut().find(|s| s.state == SlotState::InFlight) {
                    slot.state = SlotState::Queued;
                    slot.maybe_written = true;
                }
                partitions.push(p);
            }
        }
        if !retriable {
            return Err(e);
        }
        for p in partitions {
            self.fail(p, -1, &message, true)?;
        }
        Ok(())
    }

    /// Records a failed send of partition `p`; an error when it may not be retried.
    pub(super) fn fail(&mut self, p: i32, code: i16, message: &str, retriable: bool) -> Result<()> {
        let q = &mut self.queues[p as usize];
        q.last_error = Some(message.to_string());
        if code == OUT_OF_ORDER_SEQUENCE && (q.failed || q.held) {
            return Ok(());
        }
        let exhausted = if q.failed {
            false
        } else {
            q.failed = true;
            q.attempts += 1;
            q.attempts > self.settings.retries
        };
        if !retriable || exhausted {
            return Err(self.send_failure(p, code, message));
        }
        Ok(())
    }

    /// The error that ends the producer when a send of partition `p` failed with `code`.
    pub(super) fn send_failure(&self, p: i32, code: i16, message: &str) -> RemoteError {
        RemoteError::Broker {
            code,
            message: format!(
                "Error when sending messages to topic {} (partition {p}): {message}",
                self.topic
            ),
        }
    }

    /// Every answer due has been read after an error: expire batches past
    /// `delivery.timeout.ms`, wait the backoff, refresh the metadata and resume sending.
    pub(super) async fn recover(&mut self) -> Result<()> {
        for (p, q) in self.queues.iter_mut().enumerate() {
            q.failed = false;
            q.held = false;
            let Some(oldest) = q.slots.iter().find(|s| s.state != SlotState::Acked) else {
                continue;
            };
            let waited = oldest.queued_at.elapsed();
            if waited >= self.settings.delivery_timeout {
                let records: i64 = q
                    .slots
                    .iter()
                    .filter(|s| s.state != SlotState::Acked)
                    .map(|s| record_count(&s.batch))
                    .sum();
                return Err(RemoteError::Broker {
                    code: 7,
                    message: format!(
                        "Expiring {records} record(s) for {}-{p}: {} ms has passed since batch creation (delivery.timeout.ms); last error: {}",
                        self.topic,
                        waited.as_millis(),
                        q.last_error.as_deref().unwrap_or("none")
                    ),
                });
            }
        }
        tokio::time::sleep(self.backoff).await;
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        self.refresh_route().await;
        self.close_gaps().await?;
        self.recovering = false;
        Ok(())
    }

    /// Refreshes the route through any live connection: the bootstrap one may have been closed
    /// by the broker while idle (`connections.max.idle.ms`). When every connection is gone (a
    /// broker restarted), a new one to any known broker asks. A failed refresh keeps the old
    /// route; sending again finds out whether it still holds.
    async fn refresh_route(&mut self) {
        let ids: Vec<i32> = self.conns.keys().copied().collect();
        for id in ids {
            let conn = self.conns.get_mut(&id).expect("listed above");
            match fetch_route(conn, &self.topic).await {
                Ok(answer) => return self.take_route(answer),
                Err(_) => {
                    self.conns.remove(&id);
                }
            }
        }
        // The bootstrap connection, connected again if a failure broke it.
        if let Ok(conn) = self.client.live_connection().await
            && let Ok(answer) = fetch_route(conn, &self.topic).await
        {
            return self.take_route(answer);
        }
        let Some(route) = self.route.as_ref() else {
            return;
        };
        let brokers = route.brokers.clone();
        let mut ids: Vec<i32> = brokers.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            if let Ok(mut conn) = connect(&brokers, id, &self.config).await
                && let Ok(answer) = fetch_route(&mut conn, &self.topic).await
            {
                self.conns.insert(id, conn);
                return self.take_route(answer);
            }
        }
    }

    fn take_route(&mut self, (code, route): (i16, TopicRoute)) {
        if code == 0 && !route.leaders.is_empty() {
            self.route = Some(route);
        }
    }
}
