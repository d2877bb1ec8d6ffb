//! Self-test: the whole skel through its exported entry point, as FastRPC would drive it: open, configure
//! (loading the fake LPAI backend and system library, built in by name), load a binary, describe, execute
//! with float conversion on the skel, set performance, profile, unload, close. On Hexagon it runs under qemu.

use crate::entry::lpai_direct_skel_handle_invoke;
use crate::platform::libraries::register_builtin_libraries;
use crate::runtime::quantize::float_bytes;
use crate::testing::fake::{self, binary, Settings, BUILTINS};
use lpai_direct::codec::{self, call_close, call_open, EncodeError, Encoder, Method};
use lpai_direct::qnn::lpai;
use lpai_direct::wire::Reader;

/// The handle's `last_error`, rendered from the record the skel answers; `Err` with the status when the call fails.
pub(crate) fn last_error(handle: u64) -> Result<lpai_direct::message::Rendered, u32> {
    let mut record = [0u8; crate::platform::LOG_LINE_BYTES];
    let length = call(
        handle,
        codec::last_error::METHOD,
        |e| e.rout_bytes(codec::last_error::MESSAGE, &mut record).map(drop),
        |e| e.rout_u32(codec::last_error::MESSAGE_BYTES),
    )?;
    Ok(lpai_direct::message::render(record.get(..length as usize).unwrap_or_default()))
}

/// Encodes a call with `build`, invokes the skel, and reads the answer with `read`; `Err` carries the status.
pub(crate) fn call<'b, T>(
    handle: u64,
    method: &'static Method,
    build: impl FnOnce(&mut Encoder<'b>) -> Result<(), EncodeError>,
    read: impl FnOnce(&Encoder<'b>) -> Result<T, EncodeError>,
) -> Result<T, u32> {
    let mut encoder = Encoder::new(method);
    build(&mut encoder).map_err(|_| 1u32)?;
    let (scalars, mut args, _) = encoder.args();
    // SAFETY: the encoder's arguments point at its own buffers and the caller's, alive for the call.
    let status = unsafe { lpai_direct_skel_handle_invoke(handle, scalars, args.as_mut_ptr()) };
    if status != 0 {
        return Err(status as u32);
    }
    read(&encoder).map_err(|_| 2u32)
}

pub(crate) fn open() -> Option<u64> {
    let uri = c"file:///liblpai_direct_skel.so?lpai_direct_skel_handle_invoke&_modver=1.0&_dom=adsp";
    // SAFETY: `call_open` passes exactly the arguments OPEN_SCALARS describes.
    call_open(uri, |scalars, args| unsafe { lpai_direct_skel_handle_invoke(0, scalars, args) }).ok()
}

pub(crate) fn close(handle: u64) -> i32 {
    // SAFETY: `call_close` passes the one input handle CLOSE_SCALARS describes.
    call_close(handle, |scalars, args| unsafe { lpai_direct_skel_handle_invoke(0, scalars, args) })
}

crate::self_tests! {
    fn the_skel_runs_a_model_end_to_end_through_its_entry_point() {
        let session = fake::begin(Settings::LPAI);
        check!(register_builtin_libraries(BUILTINS).is_ok());
        let handle = expect_some!(open());
        use codec::configure as c;
        let configured = call(handle, c::METHOD, |e| {
            e.u32(c::LOG_LEVEL, 1)?.u32(c::PROFILING_LEVEL, 0)?.u32(c::LPAI_HW_VERSION, 7)?.u32(c::LPAI_TARGET, 2)?;
            e.u32(c::ARENA_BYTES, 8192)?.string(c::BACKEND, c"libQnnLpaiFake.so")?;
            e.string(c::SYSTEM_LIBRARY, c"/any/dir/libQnnSystemFake.so").map(drop)
        }, |_| Ok(()));
        check!(configured.is_ok());
        let record = session.record();
        check!(record.hw_info.is_some_and(|hw| hw.hw_version.0 == 7 && hw.lpai_target.0 == 2));

        let bytes = expect_some!(crate::testing::binary(&binary::ONE_GRAPH));
        let loaded = call(handle, codec::load::METHOD, |e| {
            e.u32(codec::load::FLAGS, 0)?.bytes(codec::load::BINARY, &bytes).map(drop)
        }, |e| Ok((e.rout_i32(codec::load::CONTEXT_ID)?, e.rout_u32(codec::load::GRAPH_COUNT)?)));
        let (context, graphs) = expect_ok!(loaded);
        check!(graphs == 1);

        let mut description = [0u8; 512];
        let described = call(handle, codec::describe::METHOD, |e| {
            e.i32(codec::describe::CONTEXT_ID, context)?.u32(codec::describe::GRAPH, 0)?;
            e.rout_bytes(codec::describe::DESCRIPTION, &mut description).map(drop)
        }, |e| e.rout_u32(codec::describe::DESCRIPTION_BYTES));
        let length = expect_ok!(described) as usize;
        let mut reader = Reader::new(expect_some!(description.get(..length)));
        let graph = expect_some!(reader.graph());
        check!(graph.name == "g0" && graph.inputs == 1 && graph.outputs == 1 && graph.scratch_bytes == 1000);
        check!(graph.arena_used > bytes.len() as u32 && graph.arena_capacity == 8192);
        let input = expect_some!(reader.tensor());
        check!(input.name == "g0_in" && input.scale == 0.5 && input.offset == -10 && input.native_bytes == 4);

        let inputs: [u8; 16] = float_bytes([0.0, 1.0, -5.0, 200.0]);
        let mut outputs = [0u8; 16];
        use codec::execute as x;
        let executed = call(handle, x::METHOD, |e| {
            e.i32(x::CONTEXT_ID, context)?.u32(x::GRAPH, 0)?.u32(x::FLAGS, 3)?.bytes(x::INPUTS, &inputs)?;
            e.rout_bytes(x::OUTPUTS, &mut outputs).map(drop)
        }, |e| Ok((e.rout_u32(x::ATTEMPTS)?, e.rout_u32(x::OUTPUTS_BYTES)?)));
        check!(executed == Ok((1, 16)));
        check!(crate::testing::floats::<4>(&outputs) == [0.5, 1.5, -4.5, 122.5]);

        use codec::set_performance as p;
        let tuned = call(handle, p::METHOD, |e| {
            e.i32(p::CONTEXT_ID, context)?.u32(p::GRAPH, 0)?.u32(p::FPS, 20)?.u32(p::FTRT_RATIO, 3)?;
            e.u32(p::CLIENT_TYPE, 2)?.u32(p::AFFINITY, 1)?.u32(p::CORE_SELECTION, 0)?.u32(p::PRIORITY, 0x7FFF_FFFF).map(drop)
        }, |_| Ok(()));
        check!(tuned.is_ok());
        let record = session.record();
        let tuned_graph = expect_some!(record.graph(fake::GraphId { context: 0, graph: 0 }));
        check!(tuned_graph.perf.is_some_and(|perf| perf.fps == 20 && perf.ftrt_ratio == 3));

        let unload = |id| call(handle, codec::unload::METHOD, |e| e.i32(codec::unload::CONTEXT_ID, id).map(drop), |_| Ok(()));
        check!(unload(context).is_ok());
        check!(unload(context) == Err(0x8000_040E));
        check!(session.record().contexts[0].binary_intact_at_free == Some(true));
        check!(close(handle) == 0);
    }

    fn the_load_flags_place_lpai_memory_and_an_unknown_memory_type_is_refused_by_value() {
        let session = fake::begin(Settings::LPAI);
        check!(register_builtin_libraries(BUILTINS).is_ok());
        let handle = expect_some!(open());
        use codec::configure as c;
        let configured = call(handle, c::METHOD, |e| {
            e.u32(c::LOG_LEVEL, 1)?.u32(c::PROFILING_LEVEL, 0)?.u32(c::LPAI_HW_VERSION, 0)?.u32(c::LPAI_TARGET, 2)?;
            e.u32(c::ARENA_BYTES, 8192)?.string(c::BACKEND, c"libQnnLpaiFake.so")?;
            e.string(c::SYSTEM_LIBRARY, c"libQnnSystemFake.so").map(drop)
        }, |_| Ok(()));
        check!(configured.is_ok());
        let bytes = expect_some!(crate::testing::binary(&binary::ONE_GRAPH));
        let load = |flags| call(handle, codec::load::METHOD, |e| {
            e.u32(codec::load::FLAGS, flags)?.bytes(codec::load::BINARY, &bytes).map(drop)
        }, |e| e.rout_i32(codec::load::CONTEXT_ID));
        let placement = lpai::MemoryPlacement { scratch: lpai::MemType::TCM, persistent: lpai::MemType::LLC };
        expect_ok!(load(lpai_direct::wire::load_placement(placement)));
        let record = session.record();
        let graph = expect_some!(record.graph(fake::GraphId { context: 0, graph: 0 }));
        check!(graph.scratch.is_some_and(|m| m.mem_type == lpai::MemType::TCM));
        check!(graph.persistent.is_some_and(|m| m.mem_type == lpai::MemType::LLC));

        check!(load(lpai_direct::wire::LOAD_MEMORY_PLACEMENT | 9 << 16 | 1 << 20) == Err(0x8000_040E));
        let text = expect_ok!(last_error(handle));
        check!(text.as_str().starts_with("load: the load flags ask for LPAI memory type 9, which is none of"));
        check!(close(handle) == 0);
    }
}
