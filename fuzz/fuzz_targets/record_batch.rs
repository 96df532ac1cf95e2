//! The RecordBatch v2 decoder with every codec (`kafkit::fuzzing::record_batch`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkit::fuzzing::record_batch(data));
