//! `kafka-consumer-groups --from-file` reset plans (`kafkit::fuzzing::reset_plan`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkit::fuzzing::reset_plan(data));
