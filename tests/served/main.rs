//! The `tests/remote/` modules whose features `kafka-server-start` serves, run against our own
//! server instead of a real Kafka broker: one test binary whose shared "broker" is our server
//! (`kafkit::server::serve`) in this process over a temporary log directory, started by the
//! first test that asks for it and gone with this process (see `common::broker`, which picks the
//! server when the crate is `served`). The Java tools and kcat run against the server too, so every comparison
//! with Kafka's own tools checks the server as well.
//!
//! The modules are those of the first group in `tests/remote/main.rs`; what stays Kafka-only
//! lives in the modules of its second group, left out here. Everything here runs with
//! `cargo test --test served` (one module: `cargo test --test served topics::`).

#[path = "../common/mod.rs"]
mod common;

#[path = "../remote/broker_api_versions.rs"]
mod broker_api_versions;
#[path = "../remote/configs.rs"]
mod configs;
#[path = "../remote/consumer.rs"]
mod consumer;
#[path = "../remote/consumer_group.rs"]
mod consumer_group;
#[path = "../remote/consumer_group_848.rs"]
mod consumer_group_848;
#[path = "../remote/delete_records.rs"]
mod delete_records;
#[path = "../remote/get_offsets.rs"]
mod get_offsets;
#[path = "../remote/groups.rs"]
mod groups;
#[path = "../remote/groups_848.rs"]
mod groups_848;
#[path = "../remote/json.rs"]
mod json;
#[path = "../remote/kcat.rs"]
mod kcat;
#[path = "../remote/perf_test.rs"]
mod perf_test;
#[path = "../remote/producer.rs"]
mod producer;
#[path = "../remote/quickstart.rs"]
mod quickstart;
#[path = "../remote/topics.rs"]
mod topics;
#[path = "../remote/transactions.rs"]
mod transactions;

// The server runs in this process: with the allocator the kafka-server-start binary has, so
// that the clients meet the same server.
#[global_allocator]
static ALLOCATOR: kafkit::server::alloc::ReserveHuge = kafkit::server::alloc::ReserveHuge;
