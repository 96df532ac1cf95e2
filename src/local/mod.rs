//! The embedded log: a Kafka-format commit log in a directory on this machine.
//!
//! - [`error`]: the error type.
//! - [`lock`]: `flock` locks with a deadline.
//! - [`topic_config`]: Kafka's topic-level configs: names, types, defaults, validation.
//! - [`topic_name`]: Kafka's topic-name rules.

pub mod error;
pub mod lock;
pub mod topic_config;
pub mod topic_name;

pub use error::{LocalError, Result};
