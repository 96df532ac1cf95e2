//! The embedded log: a Kafka-format commit log in a directory on this machine.
//!
//! - [`admin`]: topic admin for the client API, answering as a one-broker cluster.
//! - [`configs`]: entity configs for `kafka-configs` (topic overrides, `config.properties`).
//! - [`logdir`]: the directory, its topics' metadata and the log-dir lock.
//! - [`cleaner`]: Kafka's log cleaner for compacted topics.
//! - [`board`]: each topic's change board, where appends note new log ends for idle readers.
//! - [`partition`]: one partition's log: append, recovery, snapshot, read, retention.
//! - [`producer`], [`write_behind`]: the producer's writer: batches gathered per partition and
//!   written (one write and fdatasync per partition) on a thread while the next are built.
//! - [`records`]: DeleteRecords, answering as a one-broker cluster.
//! - [`txn`]: the transaction coordinator's state of each transactional id; [`txn_admin`]:
//!   `kafka-transactions` on the embedded log.
//! - [`segment`]: segment file names and batch-by-batch validation of `.log` files.
//! - [`index`]: Kafka's sparse `.index` and `.timeindex` files.
//! - [`error`], [`lock`]: the error type and `flock` locks with a deadline.
//! - [`file_stamp`]: what a reader saw of a file, for cheap "unchanged since" checks.

pub mod admin;
pub mod board;
pub mod cleaner;
pub mod configs;
pub mod error;
pub mod file_stamp;
pub mod group;
pub mod index;
pub mod lock;
pub mod logdir;
pub mod partition;
pub mod producer;
pub mod records;
pub mod segment;
pub mod share;
pub mod txn;
pub mod txn_admin;
pub mod warnings;
pub mod write_behind;

pub use error::{LocalError, Result};
pub use logdir::{LogDir, TopicMeta};
pub use partition::{AppendResult, KeptTail, PartitionConfig, PartitionLog, SegmentInfo, Snapshot};
