//! The tools against a real Apache Kafka 4.3.1 broker (see `common::broker`): one test binary,
//! so that every test here shares one broker, started by the first test that asks for it.
//! Tests run in parallel against it, so each uses its own topic and group names. A test that
//! needs a broker of its own (killed and restarted, or with other settings) starts one.

#[path = "../common/mod.rs"]
mod common;

mod broker_api_versions;
mod configs;
mod consumer;
mod consumer_group;
mod delete_records;
mod dump_log;
mod get_offsets;
mod groups;
mod json;
mod kcat;
mod perf_test;
mod producer;
mod quickstart;
mod restart;
mod security;
mod topics;
