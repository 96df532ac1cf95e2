//! Kafka's `TopicPartition`: one partition of one topic, the key of everything per partition
//! (assignments, committed offsets, fetch positions, log offsets), on every backend, in the
//! server and in the tools.
//!
//! A tuple rather than a struct so that maps keyed by it sort by topic, then partition, as
//! Kafka's tools print them, and so that it borrows and destructures as `(topic, partition)`.
//! The partition is an `i32`, as Kafka's and the wire's: a number a user wrote may be negative
//! or past the topic's partitions until it is checked, and the embedded log, whose partitions
//! are numbered from 0 with `u32`, converts where it opens one.

/// A topic name and a partition number.
pub type TopicPartition = (String, i32);
