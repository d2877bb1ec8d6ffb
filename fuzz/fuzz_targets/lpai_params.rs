//! Fuzz target `lpai_params`: `lpai_fuzz_targets::lpai_params::run` (see its documentation for what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lpai_fuzz_targets::lpai_params::run(data));
