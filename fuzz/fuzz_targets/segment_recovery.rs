//! A partition's segment, index and checkpoint files holding arbitrary bytes, read and
//! recovered (`kafkit::fuzzing::segment_recovery`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkit::fuzzing::segment_recovery(data));
