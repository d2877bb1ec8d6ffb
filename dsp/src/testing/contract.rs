//! Self-test: the skel runs a contract-model fixture with the contract model of libQnnLpai and its system library
//! linked into the program and registered as built-in libraries (as firmware with no dynamic loader would link
//! the vendor library): every native input line gives the fixture's reference output. On Hexagon it runs under
//! qemu, with the PD services the model needs provided by the self-test program.

use crate::platform::libraries::register_builtin_libraries;
use crate::testing::fake::BUILTINS;
use crate::testing::skel_end_to_end::{call, close, open};
use lpai_direct::codec;

/// `tests/fixtures/contract_single`: one graph, `in` u8 [1,16] → `out` u8 [1,16], a running frame counter.
const BINARY: &[u8] = include_bytes!("../../../tests/fixtures/contract_single/contract_single.bin");
const LINES: [(&[u8; 16], &[u8; 16]); 4] = [
    (
        include_bytes!("../../../tests/fixtures/contract_single/inputs/native/0_0.raw"),
        include_bytes!("../../../tests/fixtures/contract_single/reference/native/Result_0/out.raw"),
    ),
    (
        include_bytes!("../../../tests/fixtures/contract_single/inputs/native/1_0.raw"),
        include_bytes!("../../../tests/fixtures/contract_single/reference/native/Result_1/out.raw"),
    ),
    (
        include_bytes!("../../../tests/fixtures/contract_single/inputs/native/2_0.raw"),
        include_bytes!("../../../tests/fixtures/contract_single/reference/native/Result_2/out.raw"),
    ),
    (
        include_bytes!("../../../tests/fixtures/contract_single/inputs/native/3_0.raw"),
        include_bytes!("../../../tests/fixtures/contract_single/reference/native/Result_3/out.raw"),
    ),
];

crate::self_tests! {
    fn the_skel_runs_the_contract_model_linked_in_as_a_built_in_library() {
        check!(register_builtin_libraries(&BUILTINS).is_ok());
        let handle = expect_some!(open());
        use codec::configure as c;
        let configured = call(handle, c::METHOD, |e| {
            e.u32(c::LOG_LEVEL, 1)?.string(c::BACKEND, lpai_contract_model::LPAI_LIBRARY_NAME)?;
            e.string(c::SYSTEM_LIBRARY, lpai_contract_model::SYSTEM_LIBRARY_NAME).map(drop)
        }, |_| Ok(()));
        check!(configured.is_ok());
        let loaded = call(handle, codec::load::METHOD, |e| {
            e.u32(codec::load::FLAGS, 0)?.bytes(codec::load::BINARY, BINARY).map(drop)
        }, |e| Ok((e.rout_i32(codec::load::CONTEXT_ID)?, e.rout_u32(codec::load::GRAPH_COUNT)?)));
        let (context, graphs) = expect_ok!(loaded);
        check!(graphs == 1);
        use codec::execute as x;
        for (input, reference) in LINES {
            let mut output = [0u8; 16];
            let executed = call(handle, x::METHOD, |e| {
                e.i32(x::CONTEXT_ID, context)?.u32(x::GRAPH, 0)?.u32(x::FLAGS, 0)?.bytes(x::INPUTS, input)?;
                e.rout_bytes(x::OUTPUTS, &mut output).map(drop)
            }, |e| Ok((e.rout_u32(x::ATTEMPTS)?, e.rout_u32(x::OUTPUTS_BYTES)?)));
            check!(executed == Ok((1, 16)));
            check!(&output == reference);
        }
        check!(close(handle) == 0);
    }
}
