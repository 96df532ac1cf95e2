//! The Kafka wire format as kafkit speaks it, below any connection: frames, the requests and
//! their response types, and version negotiation.
//!
//! - [`frame`]: request and response frames, size prefix and limit, correlation ids.
//! - [`api`]: the requests kafkit sends, with their keys and response types.
//! - [`versions`]: the versions kafkit speaks, Kafka 4.0's floors, `min(ours, broker's)`.

pub(crate) mod api;
pub(crate) mod frame;
pub(crate) mod versions;
