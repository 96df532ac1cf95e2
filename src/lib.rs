//! kafkit: Apache Kafka's command-line tools rebuilt in Rust.
//!
//! # Layout
//!
//! - [`record`]: Record, RecordBatch v2 encode and decode, varints, CRC-32C, compression codecs.
//! - [`partitioner`]: Kafka's default partitioner (murmur2 of the key, sticky for null keys).
//! - [`local`]: the embedded log: log dir, topics, partitions, segments, indexes, recovery, locks.
//! - [`backend`]: the operations the tools need, on the local log (and later a remote cluster).
//! - [`cli`]: clap definitions, option validation and output of the four tools.
//!
//! Dependency direction: `cli -> backend -> local -> record`. Only `cli` prints.

pub mod backend;
pub mod cli;
pub mod local;
pub mod partitioner;
pub mod record;
