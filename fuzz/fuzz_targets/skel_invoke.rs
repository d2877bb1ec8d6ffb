//! Fuzz target `skel_invoke`: scripts of calls on the skel's invoke entry (`lpai_direct_skel::testing::fuzz_calls`),
//! with the contract model of libQnnLpai registered as the self-test programs register it.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // The contract model of libQnnLpai as built-in libraries, as the self-test programs register it, so that the
    // scripts that name it reach it.
    if let Err(refused) = lpai_fuzz_targets::runtime::register_contract_model() {
        panic!("the contract model cannot be registered: {refused:?}");
    }
    if let Err(violation) = lpai_direct_skel::testing::fuzz_calls::skel_invoke(data) {
        panic!("skel_invoke: {violation:?}");
    }
});
