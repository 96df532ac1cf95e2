//! The embedded log: a Kafka-format commit log in a directory on this machine.
//!
//! - [`error`]: the error type.
//! - [`lock`]: `flock` locks with a deadline.

pub mod error;
pub mod lock;

pub use error::{LocalError, Result};
