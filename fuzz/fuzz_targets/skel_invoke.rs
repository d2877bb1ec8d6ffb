//! Fuzz target `skel_invoke`: scripts of calls on the skel's invoke entry (`lpai_direct_skel::testing::fuzz_calls`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = lpai_direct_skel::testing::fuzz_calls::skel_invoke(data) {
        panic!("skel_invoke: {violation:?}");
    }
});
