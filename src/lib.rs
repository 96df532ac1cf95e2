//! kafkit: Apache Kafka's command-line tools rebuilt in Rust.
//!
//! # Layout
//!
//! - [`kafka`]: the ground: Kafka's shared vocabulary (topic names, `TopicPartition`, the topic
//!   config table, config resources, topic and broker descriptions, group states and offsets),
//!   plain types with no I/O that every module below may use.
//! - [`record`]: Record, RecordBatch v2 encode and decode, varints, CRC-32C, compression codecs.
//! - [`log_files`]: the layouts of Kafka's `.index`, `.timeindex`, `.txnindex` and producer
//!   `.snapshot` files, shared by the embedded log and `kafka-dump-log`.
//! - [`partitioner`]: Kafka's default partitioner (murmur2 of the key, sticky for null keys).
//! - [`client`]: the client API the tools use, the same on the embedded log and a cluster.
//!   It is the library's API, with [`record`] and [`partitioner`].
//! - [`server`]: `kafka-server-start`: the embedded log served over Kafka's protocol.
//! - [`cli`]: clap definitions, option validation and output of the tools (the binaries' code;
//!   not an API).
//!
//! Behind the client API, private to the crate:
//! - `local`: the embedded log: log dir, topics, partitions, segments, indexes, recovery, locks.
//!   Public but hidden from these docs, only so that kafkit's own tests can reach the log's
//!   internals (recovery, locking, membership under `kill -9`); it is not part of the API.
//! - `remote`: the client for a real Kafka cluster: connections (TLS, SASL), version
//!   negotiation, producer, fetcher, group membership and admin calls, with message structs from
//!   the kafka-protocol crate.
//! - `wire`: Kafka's wire format as both sides speak it: request and response frames with their
//!   size limit, the requests kafkit sends, the versions it speaks, and the ConsumerProtocol
//!   subscription and assignment bytes; used by `remote` and `server`.
//! - `assignor`: Kafka's range assignor, for consumer groups on either backend.
//! - `fuzzing` (only with the `fuzzing` feature, hidden): entry points for the fuzz targets in
//!   `fuzz/`, not part of the API.
//!
//! Dependency direction: `cli -> client -> {local, remote} -> {kafka, record, partitioner,
//! assignor}`, `{remote, server} -> wire`, `server -> local`, and `{cli, local} -> log_files`;
//! no backend and not the server uses `client`, and the server does not use `remote`
//! (tests/local/layout.rs checks it). Only `cli` prints.

pub(crate) mod assignor;
pub mod cli;
pub mod client;
pub(crate) mod files;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod kafka;
#[doc(hidden)]
pub mod local;
pub mod log_files;
pub mod partitioner;
pub mod record;
pub(crate) mod remote;
pub mod server;
pub(crate) mod wire;
