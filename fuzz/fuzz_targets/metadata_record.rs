//! Fuzz target `metadata_record`: `lpai_fuzz_targets::metadata_record::run` (see its documentation for what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lpai_fuzz_targets::metadata_record::run(data));
