//! Self-tests: a context's metadata from a metadata record instead of libQnnSystem, on the fake LPAI backend,
//! directly and through the skel. The record libQnnSystem's description makes gives the same graphs, tensors and
//! outputs; a record naming a graph the binary lacks (renamed, or another binary's) is refused at load by name; one
//! whose tensor id the backend refuses is refused at the first execute, naming the graph; a skel configured without
//! a system library needs the record and refuses a malformed one.

use crate::platform::libraries::register_builtin_libraries;
use crate::platform::VendorCalls;
use crate::runtime::{Arena, BackendOptions, Binary, Context, ContextOptions, Libraries, LoadRequest, RuntimeError};
use crate::testing::fake::{self, binary, Settings, BUILTINS};
use crate::testing::skel_end_to_end::{call, close, last_error, open};
use lpai_direct::codec;
use lpai_direct::metadata::{binary_hash, from_qnn, Quantization, Record, TensorMeta, Writer, MAX_RANK};
use lpai_direct::qnn::{DataType, TensorType};

/// Room for the fake's records.
const RECORD_BYTES: usize = 256;
/// Arena bytes of one context on a record (the descriptions live in it too).
const ARENA_BYTES: usize = 8192;

/// The record libQnnSystem's description of `bytes` makes, written into `out`; its length.
pub(crate) fn record_from_system(bytes: &[u8], out: &mut [u8]) -> Option<usize> {
    let system = super::system_library().ok()?;
    let description = system.describe(bytes).ok()?;
    let graphs = description.graphs().ok()?;
    let mut writer = Writer::new(out);
    // SAFETY: the description, which owns every pointer in `graphs`, lives until the end of this function.
    unsafe { from_qnn::write_graphs(graphs, &binary_hash(bytes), &mut writer) }.ok()?;
    writer.finish().ok()
}

/// `record` written again with the first input of its first graph given id `input_id`; its length.
pub(crate) fn with_first_input_id(record: &Record<'_>, input_id: u32, out: &mut [u8]) -> Option<usize> {
    let mut writer = Writer::new(out);
    writer.header(record.graph_count() as u32, &record.binary_hash());
    for (index, graph) in record.graphs().enumerate() {
        writer.graph(graph.name, graph.inputs.len() as u32, graph.outputs.len() as u32);
        for (position, mut tensor) in graph.inputs.chain(graph.outputs).enumerate() {
            if index == 0 && position == 0 {
                tensor.id = input_id;
            }
            writer.tensor(&tensor);
        }
    }
    writer.finish().ok()
}

/// The fake's graph g0 as a record of `binary`, but called `name` and with input id `input_id`; its length.
fn g0_record(binary: &[u8], name: &str, input_id: u32, out: &mut [u8]) -> Option<usize> {
    let mut dimensions = [0; MAX_RANK];
    dimensions[0] = 1;
    dimensions[1] = 4;
    let tensor = |name, id, tensor_type| TensorMeta {
        name,
        id,
        tensor_type,
        data_type: DataType::UFIXED_POINT_8,
        rank: 2,
        dimensions,
        quantization: Quantization::ScaleOffset { scale: 0.5, offset: -10 },
    };
    let mut writer = Writer::new(out);
    writer.header(1, &binary_hash(binary));
    writer.graph(name, 1, 1);
    writer.tensor(&tensor("g0_in", input_id, TensorType::APP_WRITE));
    writer.tensor(&tensor("g0_out", 2, TensorType::APP_READ));
    writer.finish().ok()
}

/// Whether `error`'s message contains `part`.
fn says(error: &RuntimeError, part: &str) -> bool {
    crate::message!(error).rendered().as_str().contains(part)
}

/// The skel's `last_error` on `handle`, and whether it contains `part`.
fn last_error_says(handle: u64, part: &str) -> bool {
    last_error(handle).is_ok_and(|text| text.as_str().contains(part))
}

crate::self_tests! {
    fn a_record_describes_the_binary_as_libqnnsystem_does_and_runs_the_same() {
        let _session = fake::begin(Settings::LPAI);
        let bytes = expect_some!(super::binary(&binary::TWO_GRAPHS));
        let mut record = [0u8; RECORD_BYTES];
        let length = expect_some!(record_from_system(&bytes, &mut record));
        let record = expect_some!(Record::parse(expect_some!(record.get(..length))).ok());
        let libraries = expect_ok!(super::fake_libraries(&BackendOptions::default()));
        let (mut first, mut second) = ([0u8; ARENA_BYTES], [0u8; ARENA_BYTES]);
        let (system_arena, record_arena) = (Arena::new(&mut first), Arena::new(&mut second));
        let mut described = expect_ok!(super::load_copy(&libraries, &system_arena, &bytes, ContextOptions::default()));
        let request = LoadRequest { record: Some(record), ..LoadRequest::new(Binary::Copy(&bytes)) };
        let mut recorded = expect_ok!(Context::load(&VendorCalls::lock(), &libraries, &record_arena, &request));
        check!(described.graph_count() == 2 && recorded.graph_count() == 2);
        for index in 0..2 {
            let (a, b) = (expect_some!(described.graph_mut(index)), expect_some!(recorded.graph_mut(index)));
            check!(a.name() == b.name() && !a.from_record() && b.from_record());
            check!(a.input_count() == 1 && b.input_count() == 1 && a.output_count() == 1 && b.output_count() == 1);
            for (x, y) in [(a.input(0), b.input(0)), (a.output(0), b.output(0))] {
                let (x, y) = (expect_some!(x), expect_some!(y));
                check!(x.name == y.name && x.id == y.id && x.data_type == y.data_type);
                check!(x.dimensions == y.dimensions && x.bytes == y.bytes && x.quantization == y.quantization);
            }
            let input = [3u8, 0, 250, 17];
            let bytes = expect_some!(a.input(0)).bytes;
            let input = expect_some!(input.get(..bytes));
            expect_ok!(a.write_input(0, input));
            expect_ok!(b.write_input(0, input));
            expect_ok!(a.execute());
            expect_ok!(b.execute());
            check!(a.output_bytes(0) == b.output_bytes(0) && a.output_bytes(0).is_some());
        }
    }

    fn a_record_naming_a_graph_the_binary_lacks_is_refused_with_its_name() {
        let _session = fake::begin(Settings::LPAI);
        let one = expect_some!(super::binary(&binary::ONE_GRAPH));
        let two = expect_some!(super::binary(&binary::TWO_GRAPHS));
        let libraries = Libraries::new(expect_ok!(super::lpai_backend(&BackendOptions::default())), None);
        let with_record = |record, binary| LoadRequest { record: Some(record), ..LoadRequest::new(Binary::Copy(binary)) };
        let mut renamed = [0u8; RECORD_BYTES];
        let length = expect_some!(g0_record(&one, "g9", 1, &mut renamed));
        let renamed = expect_some!(Record::parse(expect_some!(renamed.get(..length))).ok());
        let mut memory = [0u8; ARENA_BYTES];
        let arena = Arena::new(&mut memory);
        let refused = Context::load(&VendorCalls::lock(), &libraries, &arena, &with_record(renamed, &one));
        let Err(error) = refused else {
            return Err(crate::selftest::Failure { file: file!(), line: line!(), condition: "a renamed graph is refused" });
        };
        check!(matches!(&error, RuntimeError::RecordGraphMissing { graph, code: 6002 } if graph == "g9"));
        check!(says(&error, "the metadata record names graph g9, which the context binary does not have"));

        let mut other = [0u8; RECORD_BYTES];
        let length = expect_some!(record_from_system(&two, &mut other));
        let other = expect_some!(Record::parse(expect_some!(other.get(..length))).ok());
        let mut memory = [0u8; ARENA_BYTES];
        let arena = Arena::new(&mut memory);
        let refused = Context::load(&VendorCalls::lock(), &libraries, &arena, &with_record(other, &one));
        check!(matches!(&refused, Err(RuntimeError::RecordForAnotherBinary)));
        check!(refused.is_err_and(|error| says(&error, "the metadata record was made for another binary")));

        // One flipped byte: the binary is not the one that was checked, so the backend never sees it.
        let mut record = [0u8; RECORD_BYTES];
        let length = expect_some!(g0_record(&one, "g0", 1, &mut record));
        let record = expect_some!(Record::parse(expect_some!(record.get(..length))).ok());
        let mut flipped = one;
        *expect_some!(flipped.last_mut()) ^= 1;
        let mut memory = [0u8; ARENA_BYTES];
        let arena = Arena::new(&mut memory);
        let refused = Context::load(&VendorCalls::lock(), &libraries, &arena, &with_record(record, &flipped));
        check!(matches!(&refused, Err(RuntimeError::RecordForAnotherBinary)));
    }

    fn a_record_with_a_tensor_id_the_backend_refuses_is_refused_at_execute_naming_the_graph() {
        let _session = fake::begin(Settings::LPAI);
        let bytes = expect_some!(super::binary(&binary::ONE_GRAPH));
        let libraries = Libraries::new(expect_ok!(super::lpai_backend(&BackendOptions::default())), None);
        let mut record = [0u8; RECORD_BYTES];
        let length = expect_some!(g0_record(&bytes, "g0", 7, &mut record));
        let record = expect_some!(Record::parse(expect_some!(record.get(..length))).ok());
        let mut memory = [0u8; ARENA_BYTES];
        let arena = Arena::new(&mut memory);
        let request = LoadRequest { record: Some(record), ..LoadRequest::new(Binary::Copy(&bytes)) };
        let mut context = expect_ok!(Context::load(&VendorCalls::lock(), &libraries, &arena, &request));
        let graph = expect_some!(context.graph_mut(0));
        let refused = graph.execute();
        check!(matches!(&refused, Err(RuntimeError::RecordTensorsRefused { graph, code: 6004 }) if graph == "g0"));
        check!(refused.is_err_and(|error| says(&error, "graph g0: graphExecute refused the tensors the metadata record")));
    }

    fn a_skel_without_a_system_library_loads_with_the_record_and_refuses_what_does_not_match() {
        let _session = fake::begin(Settings::LPAI);
        check!(register_builtin_libraries(BUILTINS).is_ok());
        let handle = expect_some!(open());
        use codec::configure as c;
        let configured = call(handle, c::METHOD, |e| {
            e.u32(c::LOG_LEVEL, 1)?.u32(c::ARENA_BYTES, ARENA_BYTES as u32)?.string(c::BACKEND, c"libQnnLpaiFake.so")?;
            e.string(c::SYSTEM_LIBRARY, c"").map(drop)
        }, |_| Ok(()));
        check!(configured.is_ok());
        let bytes = expect_some!(super::binary(&binary::ONE_GRAPH));
        let plain = call(handle, codec::load::METHOD, |e| {
            e.u32(codec::load::FLAGS, 0)?.bytes(codec::load::BINARY, &bytes).map(drop)
        }, |e| e.rout_i32(codec::load::CONTEXT_ID));
        check!(plain == Err(0x8000_040E));
        check!(last_error_says(handle, "load: configure named no system library"));

        use codec::load_with_metadata as m;
        let load = |record: &[u8]| call(handle, m::METHOD, |e| {
            e.u32(m::FLAGS, 0)?.bytes(m::BINARY, &bytes)?.bytes(m::METADATA, record).map(drop)
        }, |e| Ok((e.rout_i32(m::CONTEXT_ID)?, e.rout_u32(m::GRAPH_COUNT)?)));
        let mut good = [0u8; RECORD_BYTES];
        let good_length = expect_some!(g0_record(&bytes, "g0", 1, &mut good));
        check!(load(expect_some!(good.get(..good_length - 1))) == Err(0x8000_040E));
        check!(last_error_says(handle, "load_with_metadata: the metadata record is malformed (byte"));
        let mut renamed = [0u8; RECORD_BYTES];
        let length = expect_some!(g0_record(&bytes, "g9", 1, &mut renamed));
        check!(load(expect_some!(renamed.get(..length))) == Err(0x8000_040E));
        check!(last_error_says(handle, "names graph g9, which the context binary does not have"));

        use codec::execute as x;
        let execute = |context, output: &mut [u8; 4]| call(handle, x::METHOD, |e| {
            e.i32(x::CONTEXT_ID, context)?.u32(x::GRAPH, 0)?.u32(x::FLAGS, 0)?.bytes(x::INPUTS, &[1, 2, 3, 4])?;
            e.rout_bytes(x::OUTPUTS, output).map(drop)
        }, |e| e.rout_u32(x::OUTPUTS_BYTES));
        let (context, graphs) = expect_ok!(load(expect_some!(good.get(..good_length))));
        check!(graphs == 1);
        let mut output = [0u8; 4];
        check!(execute(context, &mut output) == Ok(4) && output == [2, 3, 4, 5]);
        let unload = |id| call(handle, codec::unload::METHOD, |e| e.i32(codec::unload::CONTEXT_ID, id).map(drop), |_| Ok(()));
        check!(unload(context).is_ok());

        let mut wrong_id = [0u8; RECORD_BYTES];
        let length = expect_some!(g0_record(&bytes, "g0", 7, &mut wrong_id));
        let (context, _) = expect_ok!(load(expect_some!(wrong_id.get(..length))));
        check!(execute(context, &mut output) == Err(0x8000_040E));
        check!(last_error_says(handle, "execute: graph g0: graphExecute refused the tensors the metadata record"));
        check!(close(handle) == 0);
    }
}
