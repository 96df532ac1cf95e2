//! The producer's `--input json` lines (`kafkit::fuzzing::json_input`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkit::fuzzing::json_input(data));
