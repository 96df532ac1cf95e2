//! `--command-config` properties files and `sasl.jaas.config`
//! (`kafkit::fuzzing::command_config`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkit::fuzzing::command_config(data));
