//! Fuzz target `input_list`: `lpai_fuzz_targets::input_list::run` (see its documentation for what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lpai_fuzz_targets::input_list::run(data));
