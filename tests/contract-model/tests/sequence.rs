//! A well-formed LPAI sequence on the contract model (a model of the documented contract, not the vendor library):
//! the documented outputs, EARLY_TERMINATION every third call, the running frame counter, scratch and padding
//! bytes, and the system library's description of the binary.

mod common;

use common::*;
use lpai_contract_model::format::UFIXED_POINT_16;
use lpai_contract_model::persistent::MAGIC;
use lpai_contract_model::writer::{GraphSpec, TensorSpec};
use lpai_contract_model::{PAD_FILL, SCRATCH_FILL};
use lpai_direct::qnn::{lpai, BinaryInfoVersion, DataType, Definition, GraphInfoVersion, TensorMemType, TensorType};
use std::ffi::CStr;

const STREAM_INPUTS: [TensorSpec<'static>; 2] = [
    tensor("frame", 11, false, &[1, 4, 8]),
    TensorSpec { scale: 0.0078125, offset: -32768, ..tensor("level", 12, true, &[1, 6]) },
];
const STREAM_OUTPUTS: [TensorSpec<'static>; 2] = [
    TensorSpec { multiplier: -3, addend: 600, shift: 2, step: 9, ..tensor("mixed", 21, false, &[1, 40]) },
    TensorSpec { source: 1, multiplier: 5, addend: -1000, shift: 1, step: -300, ..tensor("energy", 22, true, &[1, 6]) },
];
const STREAM: [GraphSpec<'static>; 1] = [GraphSpec {
    name: "stream",
    scratch_bytes: 300,
    persistent_bytes: 40,
    early_every: 3,
    inputs: &STREAM_INPUTS,
    outputs: &STREAM_OUTPUTS,
}];

/// The formula, written again here: `acc = x[i % m] * multiplier + addend + n * step`, `>> shift`, clamp, LE.
fn expected(output: &TensorSpec<'_>, source: &[u8], source_wide: bool, frame: i64) -> Vec<u8> {
    let values: Vec<i64> = if source_wide {
        source.chunks(2).map(|pair| i64::from(u16::from_le_bytes([pair[0], pair[1]]))).collect()
    } else {
        source.iter().map(|&byte| i64::from(byte)).collect()
    };
    let elements: u32 = output.dims.iter().product();
    let wide = output.data_type == UFIXED_POINT_16;
    let top = if wide { 65535 } else { 255 };
    let mut bytes = Vec::new();
    for i in 0..elements as usize {
        let acc = values[i % values.len()] * i64::from(output.multiplier)
            + i64::from(output.addend)
            + frame * i64::from(output.step);
        let q = (acc >> output.shift).clamp(0, top) as u16;
        let le = q.to_le_bytes();
        bytes.extend_from_slice(if wide { &le[..] } else { &le[..1] });
    }
    bytes
}

#[test]
fn stream_outputs_follow_the_formula_with_early_termination_and_frames() {
    let _serial = serial();
    let mut session = Session::open(&file(&STREAM, 300));
    assert_eq!(session.header(), lpai_contract_model::persistent::Header { frames: 0, calls: 0, ..session.header() });
    assert_eq!(session.header().magic, MAGIC);
    let mut seed = 0x1234_5678u32;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed as u8
    };
    let mut saturated = [false; 2];
    for call in 1..=9u32 {
        for index in 0..2 {
            session.input_mut(index).iter_mut().for_each(|byte| *byte = next());
            session.outputs[index].bytes_mut().fill(0x11);
        }
        let answer = session.execute();
        let header = session.header();
        assert_eq!((header.calls, header.frames), (call, call), "call {call}");
        if call % 3 == 0 {
            assert_eq!(answer, 6038, "call {call}");
            assert!(session.output(0).iter().chain(session.output(1)).all(|&byte| byte == 0x11), "outputs touched");
            assert!(session.scratch.bytes().iter().all(|&byte| byte == SCRATCH_FILL));
            continue;
        }
        assert_eq!(answer, 0, "call {call}");
        let frame = i64::from(call - 1);
        for (index, output) in STREAM_OUTPUTS.iter().enumerate() {
            let source = session.input_mut(output.source as usize).to_vec();
            let want = expected(output, &source, output.source == 1, frame);
            let got = session.output(index);
            assert_eq!(&got[..want.len()], &want[..], "call {call} output {}", output.name);
            assert!(got[want.len()..].iter().all(|&byte| byte == PAD_FILL), "padding of {}", output.name);
            saturated[index] |= want.iter().any(|&byte| byte == 0 || byte == 255);
        }
        // Scratch: level copied last over frame's copy, then the fill.
        let (frame_bytes, level_bytes) = (session.input_mut(0).to_vec(), session.input_mut(1).to_vec());
        let scratch = session.scratch.bytes();
        assert_eq!(&scratch[..12], &level_bytes[..]);
        assert_eq!(&scratch[12..32], &frame_bytes[12..]);
        assert!(scratch[32..].iter().all(|&byte| byte == SCRATCH_FILL));
    }
    assert!(saturated[0], "the u8 output never reached a clamp: a weak test vector");
    quiet();
}

#[test]
fn system_library_describes_the_binary() {
    let _serial = serial();
    let binary = Buffer::of(&file(&STREAM, 100));
    let (handle, graphs) = describe(&binary);
    assert_eq!(graphs.len(), 1);
    assert_eq!(graphs[0].version, GraphInfoVersion::V1);
    let info = graphs[0].common().unwrap();
    // SAFETY: the description's strings and tensors live until the system context is freed.
    unsafe {
        assert_eq!(CStr::from_ptr(info.graph_name), c"stream");
        let inputs = std::slice::from_raw_parts(info.graph_inputs, info.num_graph_inputs as usize);
        let outputs = std::slice::from_raw_parts(info.graph_outputs, info.num_graph_outputs as usize);
        let all =
            inputs.iter().map(|t| (t, TensorType::APP_WRITE)).chain(outputs.iter().map(|t| (t, TensorType::APP_READ)));
        let specs = STREAM_INPUTS.iter().chain(&STREAM_OUTPUTS);
        for ((tensor, kind), spec) in all.zip(specs) {
            let common = tensor.common().unwrap();
            assert_eq!(CStr::from_ptr(common.name).to_str().unwrap(), spec.name);
            assert_eq!((common.id, common.tensor_type, common.data_type), (spec.id, kind, DataType(spec.data_type)));
            assert_eq!(std::slice::from_raw_parts(common.dimensions, common.rank as usize), spec.dims);
            assert_eq!(common.quantize_params.encoding_definition, Definition::DEFINED);
            let scale_offset = common.quantize_params.scale_offset().unwrap();
            assert_eq!((scale_offset.scale, scale_offset.offset), (spec.scale, spec.offset));
            assert_eq!(common.mem_type, TensorMemType::RAW);
            assert!(common.memory.client_buf.data.is_null());
        }
    }
    let table = system_table();
    let (mut info, mut size) = (std::ptr::null(), 0u64);
    // SAFETY: valid buffer and out-pointers; then the handle is freed once.
    unsafe {
        let get = table.system_context_get_binary_info.unwrap();
        assert_eq!(get(handle, binary.ptr().cast(), binary.len as u64, &mut info, &mut size), 0);
        let info = &*info;
        assert_eq!(info.version, BinaryInfoVersion::V3);
        assert_eq!(info.v.v3.backend_id, lpai::BACKEND_ID_LPAI);
        assert_eq!(info.v.v3.context_blob_size, binary.len as u64);
        assert_eq!(table.system_context_free.unwrap()(handle), 0);
    }
    quiet();
}

#[test]
fn two_graphs_run_independently() {
    let _serial = serial();
    let graphs = [SINGLE[0], GraphSpec { name: "other", early_every: 2, ..SINGLE[0] }];
    let bytes = file(&graphs, 16);
    let mut first = Session::created(&bytes, 0);
    let (answer, second) = first.retrieve(c"other");
    assert_eq!(answer, 0);
    assert_ne!(second, first.graph);
    assert_eq!(first.set_memory(), 0);
    assert_eq!(first.finalize(), 0);
    first.input_mut(0).copy_from_slice(&[200; 16]);
    assert_eq!(first.execute(), 0);
    // (200 * 3 - 40 + 0) >> 2 = 140
    assert_eq!(&first.output(0)[..16], &[140; 16]);
    let graph = first.graph;
    first.graph = second;
    assert_eq!(first.execute(), 6023); // the second graph has no memory yet
    one_rule("finalized-after-config");
    let (scratch, persistent) = (Buffer::new(first.scratch_size), Buffer::new(first.persistent_size));
    let mut scratch_memory = memory(first.scratch_size, &scratch);
    let mut persistent_memory = memory(first.persistent_size, &persistent);
    assert_eq!(first.set_memory_configs(&mut scratch_memory, &mut persistent_memory), 0);
    assert_eq!(first.finalize(), 0);
    assert_eq!(first.execute(), 0);
    assert_eq!(first.execute(), 6038);
    first.graph = graph;
    assert_eq!(first.execute(), 0);
    // Frame 1 of the first graph: (200 * 3 - 40 + 1 * 5) >> 2 = 141.
    assert_eq!(&first.output(0)[..16], &[141; 16]);
    quiet();
}
