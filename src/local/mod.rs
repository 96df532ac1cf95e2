//! The embedded log: a Kafka-format commit log in a directory on this machine.
//!
//! - [`logdir`]: the directory, its topics' metadata and the log-dir lock.
//! - [`partition`]: one partition's log: append, recovery, snapshot, read, retention.
//! - [`segment`]: segment file names and batch-by-batch validation of `.log` files.
//! - [`index`]: Kafka's sparse `.index` and `.timeindex` files.
//! - [`topic_config`], [`topic_name`]: Kafka's topic configs and topic-name rules.
//! - [`error`], [`lock`]: the error type and `flock` locks with a deadline.

pub mod error;
pub mod group;
pub mod index;
pub mod lock;
pub mod logdir;
pub mod partition;
pub mod segment;
pub mod topic_config;
pub mod topic_name;

pub use error::{LocalError, Result};
pub use logdir::{LogDir, TopicMeta};
pub use partition::{AppendResult, PartitionConfig, PartitionLog, SegmentInfo, Snapshot};
