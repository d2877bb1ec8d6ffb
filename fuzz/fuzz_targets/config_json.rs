//! Fuzz target `config_json`: `lpai_fuzz_targets::config_json::run` (see its documentation for what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lpai_fuzz_targets::config_json::run(data));
