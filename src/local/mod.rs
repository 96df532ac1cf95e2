//! The embedded log: a Kafka-format commit log in a directory on this machine.
//!
//! - [`error`]: the error type.
//! - [`lock`]: `flock` locks with a deadline.
//! - [`partition`]: one partition's log: append, recovery, snapshot, read, retention.
//! - [`segment`]: segment file names and batch-by-batch validation of `.log` files.
//! - [`index`]: Kafka's sparse `.index` and `.timeindex` files.

pub mod error;
pub mod index;
pub mod lock;
pub mod partition;
pub mod segment;

pub use error::{LocalError, Result};
pub use partition::{AppendResult, PartitionConfig, PartitionLog, SegmentInfo, Snapshot};
