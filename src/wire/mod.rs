//! Kafka's wire format as kafkit speaks it, on both sides of a connection and below any of
//! them: the cluster client (`remote`) and `kafka-server-start` (`server`) share it.
//!
//! - [`frame`]: request and response frames, the size prefix and its limit, correlation ids.
//! - [`api`]: the requests kafkit sends, with their keys and response types.
//! - [`versions`]: the versions kafkit speaks, Kafka 4.0's floors, `min(ours, broker's)`, and
//!   the layout of versions newer than the kafka-protocol crate.
//! - [`share_group_offsets`]: DescribeShareGroupOffsets v1, newer than the kafka-protocol crate.
//! - [`consumer_protocol`]: the ConsumerProtocol subscription and assignment bytes that classic
//!   consumer groups carry inside JoinGroup, SyncGroup and DescribeGroups.

pub(crate) mod api;
pub(crate) mod consumer_protocol;
pub(crate) mod frame;
pub(crate) mod share_group_offsets;
pub(crate) mod versions;
