//! Fuzz target `codec`: the skel-side codec on arbitrary `sc` words and buffers
//! (`lpai_direct_skel::testing::fuzz_calls::codec`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = lpai_direct_skel::testing::fuzz_calls::codec(data) {
        panic!("codec: {violation:?}");
    }
});
