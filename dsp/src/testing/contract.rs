//! Self-test: the skel runs a contract-model fixture with the contract model of libQnnLpai and its system library
//! linked into the program and registered as built-in libraries by the program (as firmware with no dynamic loader
//! would link the vendor library; see [`crate::testing`]): every native input line gives the fixture's reference
//! output. On Hexagon it runs under qemu, with the PD services the model needs provided by the self-test program.

use crate::runtime::SystemLibrary;
use crate::testing::contract_single::{BINARY, FRAMES as LINES};
use crate::testing::record_metadata::with_first_input_id;
use crate::testing::skel_end_to_end::{call, close, open};
use crate::testing::{contract_model_registered, CONTRACT_LPAI_LIBRARY, CONTRACT_SYSTEM_LIBRARY};
use lpai_direct::codec;
use lpai_direct::metadata::{from_qnn, Record, Writer};

/// The contract model's system library's description of [`BINARY`] as a metadata record in `out`; its length
/// (the program registered the contract model's built-in libraries first). Also for the embedding API's tests.
pub fn contract_record(out: &mut [u8]) -> Option<usize> {
    let system = SystemLibrary::load(CONTRACT_SYSTEM_LIBRARY).ok()?;
    let description = system.describe(BINARY).ok()?;
    let graphs = description.graphs().ok()?;
    let mut writer = Writer::new(out);
    // SAFETY: the description, which owns every pointer in `graphs`, lives until the end of this function.
    unsafe { from_qnn::write_graphs(graphs, &lpai_direct::metadata::binary_hash(BINARY), &mut writer) }.ok()?;
    writer.finish().ok()
}

crate::self_tests! {
    fn the_skel_runs_the_contract_model_linked_in_as_a_built_in_library() {
        check!(contract_model_registered());
        let handle = expect_some!(open());
        use codec::configure as c;
        let configured = call(handle, c::METHOD, |e| {
            e.u32(c::LOG_LEVEL, 1)?.string(c::BACKEND, CONTRACT_LPAI_LIBRARY)?;
            e.string(c::SYSTEM_LIBRARY, CONTRACT_SYSTEM_LIBRARY).map(drop)
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

    fn the_skel_runs_the_contract_model_with_a_metadata_record_and_no_system_library() {
        check!(contract_model_registered());
        let mut record = [0u8; 256];
        let length = expect_some!(contract_record(&mut record));
        let record = expect_some!(record.get(..length));
        let handle = expect_some!(open());
        use codec::configure as c;
        let configured = call(handle, c::METHOD, |e| {
            e.u32(c::LOG_LEVEL, 1)?.string(c::BACKEND, CONTRACT_LPAI_LIBRARY)?;
            e.string(c::SYSTEM_LIBRARY, c"").map(drop)
        }, |_| Ok(()));
        check!(configured.is_ok());
        use codec::load_with_metadata as m;
        let load = |record: &[u8]| call(handle, m::METHOD, |e| {
            e.u32(m::FLAGS, 0)?.bytes(m::BINARY, BINARY)?.bytes(m::METADATA, record).map(drop)
        }, |e| Ok((e.rout_i32(m::CONTEXT_ID)?, e.rout_u32(m::GRAPH_COUNT)?)));
        use codec::execute as x;
        let execute = |context, input: &[u8; 16], output: &mut [u8; 16]| call(handle, x::METHOD, |e| {
            e.i32(x::CONTEXT_ID, context)?.u32(x::GRAPH, 0)?.u32(x::FLAGS, 0)?.bytes(x::INPUTS, input)?;
            e.rout_bytes(x::OUTPUTS, output).map(drop)
        }, |e| e.rout_u32(x::OUTPUTS_BYTES));
        let (context, graphs) = expect_ok!(load(record));
        check!(graphs == 1);
        for (input, reference) in LINES {
            let mut output = [0u8; 16];
            check!(execute(context, input, &mut output) == Ok(16));
            check!(&output == reference);
        }
        // The contract model matches tensors by id: a record with another input id is refused at execute.
        let parsed = expect_some!(Record::parse(record).ok());
        let mut wrong = [0u8; 256];
        let length = expect_some!(with_first_input_id(&parsed, 0x7777, &mut wrong));
        let (context, _) = expect_ok!(load(expect_some!(wrong.get(..length))));
        let mut output = [0u8; 16];
        check!(execute(context, LINES[0].0, &mut output) == Err(0x8000_040E));
        check!(close(handle) == 0);
    }
}
