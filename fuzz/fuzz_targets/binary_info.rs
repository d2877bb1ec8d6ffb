//! Fuzz target `binary_info`: `lpai_fuzz_targets::binary_info::run` (see its documentation for what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lpai_fuzz_targets::binary_info::run(data));
