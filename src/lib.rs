//! kafkit: Apache Kafka's command-line tools rebuilt in Rust.
//!
//! # Layout
//!
//! - [`record`]: Record, RecordBatch v2 encode and decode, varints, CRC-32C, compression codecs.
//! - [`partitioner`]: Kafka's default partitioner (murmur2 of the key, sticky for null keys).
//! - [`assignor`]: Kafka's range assignor, for consumer groups on either backend.
//! - [`local`]: the embedded log: log dir, topics, partitions, segments, indexes, recovery, locks.
//! - [`remote`]: the client for a real Kafka cluster: framing, connections (TLS, SASL), version
//!   negotiation, producer, fetcher, group membership and admin calls, with message structs from
//!   the kafka-protocol crate.
//! - [`client`]: the client API the tools use, the same on the embedded log and a cluster.
//! - [`cli`]: clap definitions, option validation and output of the four tools.
//! - `fuzzing` (only with the `fuzzing` feature, hidden): entry points for the fuzz targets in
//!   `fuzz/`, not part of the API.
//!
//! Dependency direction: `cli -> client -> {local, remote} -> {record, partitioner, assignor}`. Only `cli` prints.

pub mod assignor;
pub mod cli;
pub mod client;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod local;
pub mod partitioner;
pub mod record;
pub mod remote;
