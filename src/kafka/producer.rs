//! How a producer sends, from Kafka's producer properties.

use std::time::Duration;

/// How the producer sends, from the producer properties.
#[derive(Debug, Clone)]
pub struct ProducerSettings {
    /// `acks`: -1 (all in-sync replicas), 1 (the leader) or 0 (no answer at all).
    pub acks: i16,
    /// `retries`: how many times a batch is sent again after a retriable error.
    pub retries: u32,
    /// `retry.backoff.ms`: the first wait before a retry; it doubles up to 1 s.
    pub retry_backoff: Duration,
    /// `max.block.ms`: how long to wait for the topic's metadata and a producer id.
    pub max_block: Duration,
    /// `enable.idempotence`: InitProducerId, then sequence numbers in every batch.
    pub idempotence: bool,
    /// `max.in.flight.requests.per.connection`: Produce requests sent to a leader before the
    /// first answer is read (at most 5 when idempotent: the broker remembers 5 batches).
    pub max_in_flight: usize,
    /// `delivery.timeout.ms`: how long a batch may wait for delivery after it was queued.
    pub delivery_timeout: Duration,
    /// `transactional.id`: the records go in transactions of this id (see
    /// `client::Producer::commit_transaction`); `None`: no transactions.
    pub transactional_id: Option<String>,
    /// `transaction.timeout.ms`: how long the coordinator lets a transaction stay open.
    pub transaction_timeout_ms: i32,
}
