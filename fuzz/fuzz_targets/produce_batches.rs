//! The server's checks of produced record batches (`kafkit::fuzzing::produce_batches`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkit::fuzzing::produce_batches(data));
