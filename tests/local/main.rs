//! The tools against the embedded log, with no broker: one test binary for the whole family,
//! so that its tests run in parallel with one another instead of binary after binary, and it
//! is linked once. Each test works in a fresh `--log-dir` of its own (`common::Kafkit`).
//! One module: `cargo test --test local topics::`.

#[path = "../common/mod.rs"]
mod common;

mod compacted;
mod configs;
mod console;
mod console_groups;
mod delete_records;
mod dump_log;
mod durability;
mod faults;
mod generated;
mod get_offsets;
mod group_kill;
mod groups;
mod json;
mod layout;
mod partition_log;
mod perf_test;
mod profiles;
mod record_vectors;
mod share;
mod topics;
mod transactions;
