//! The tools against a real Apache Kafka 4.3.1 broker (see `common::broker`): one test binary,
//! so that every test here shares one broker, started by the first test that asks for it.
//! Tests run in parallel against it, so each uses its own topic and group names. A test that
//! needs a broker of its own (killed and restarted, or with other settings) starts one.
//!
//! The modules of the first group also run against our own `kafka-server-start`, in the
//! `served` binary (`tests/served/main.rs` includes them); the second group is Kafka-only: what
//! the server does not do (SASL and TLS, transactions, compaction, group and broker configs),
//! a broker of a test's own, Kafka's own files, or no broker at all.

#[path = "../common/mod.rs"]
mod common;

// Run against both: a real Kafka broker here, our server in `tests/served`.
mod broker_api_versions;
mod configs;
mod consumer;
mod consumer_group;
mod consumer_group_848;
mod delete_records;
mod get_offsets;
mod groups;
mod groups_848;
mod json;
mod kcat;
mod perf_test;
mod producer;
mod quickstart;
mod topics;

// Kafka-only.
mod configs_kafka_only;
mod connection;
mod consumer_group_kafka_only;
mod consumer_kafka_only;
mod dump_log;
mod restart;
mod security;
