//! Kafka's shared vocabulary, below the client and every backend: topic names and their rules,
//! [`TopicPartition`], the topic config table, config resources and entries, topic and broker
//! descriptions, group states, offsets and assignment changes, consumer and producer settings,
//! what a topic repair did; transactions as `kafka-transactions` shows them; the text of Kafka's UUIDs and of Java's floating-point numbers.
//!
//! Plain types and pure functions: no I/O and no backend. `client`, `local`, `remote` and
//! `server` all build on it, so that none of them imports another's types (the client
//! re-exports these under its own paths as well).

pub mod brokers;
pub mod configs;
pub mod consumer;
pub mod groups;
pub mod java_number;
pub mod producer;
pub mod repair;
pub mod share;
pub mod topic_config;
pub mod topic_name;
pub mod topic_partition;
pub mod topics;
pub mod transactions;
pub mod uuid;

pub use topic_partition::TopicPartition;

/// The wall clock in milliseconds since the Unix epoch, as Kafka's timestamps count it (0 for a
/// clock set before 1970).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
