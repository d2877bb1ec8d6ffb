//! Fuzz target `elf_loader`: `lpai_fuzz_targets::elf_loader::run` (see its documentation for what it feeds).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lpai_fuzz_targets::elf_loader::run(data));
