//! Target `binary_info`: libQnnSystem's answer to systemContextGetBinaryInfo, made from the fuzzer's bytes by a fake
//! system interface, read by both readers: the HLOS side's (`HostSystemLibrary::read`, which turns it into a
//! metadata record) and the runtime's (`SystemLibrary::describe`, each tensor through `TensorInfo`, then a whole
//! load of the contract fixture on the contract model with that description).
//!
//! libQnnSystem is vendor code the readers trust for memory: a count describes an array that is there. So every
//! pointer the fake hands out points into memory it owns, exactly as long as its count says, or is null; what is
//! fuzzed is everything else: versions (known and not), counts, null pointers, names that are empty, not UTF-8 or
//! cut by a NUL, tensor and data types, quantization encodings, scales, ranks (up to [`MAX_FUZZ_RANK`]) and
//! dimensions, and the call failing or answering no structure.
//!
//! Input (all little-endian; bytes past the end read as 0):
//! ```text
//! u8 flags        bits 0-1 binary info version (1, 2, 3, or a u32 that follows); bit 2 the call fails; bit 3 it
//!                 answers a null structure; bit 4 null graph array; bit 5 null build id; bit 6 null SoC version
//! u8 graphs       modulo 10
//! graph × graphs: u8 flags (bits 0-1 version 1, 2, 3 or a u32 that follows; bit 2 null name; bit 3 null inputs;
//!                 bit 4 null outputs), name, u8 inputs (modulo 6), u8 outputs (modulo 6), tensor × (inputs+outputs)
//! tensor:         u8 flags (bits 0-1 version 1, 2 or a u32 that follows; bit 2 null name; bit 3 null dimensions;
//!                 bit 4 quantization defined), u32 id, name, u32 tensor type, u8 data type (an index into the
//!                 known ones, or 255 and a u32), u32 encoding, f32 scale, i32 offset, u8 rank, u32 × rank
//! name:           u8 length, the bytes (a NUL is added)
//! ```

use crate::runtime::{contract_backend, exercise, ARENA_BYTES, CONTRACT_BINARY};
use core::ffi::c_char;
use core::ptr;
use lpai_direct::metadata::Record;
use lpai_direct::qnn::error::SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY;
use lpai_direct::qnn::{BinaryInfo, BinaryInfoV1, BinaryInfoV3, BinaryInfoVersion, BinaryInfoVersions};
use lpai_direct::qnn::{DataType, Definition, ErrorHandle, GraphInfo, GraphInfoV3};
use lpai_direct::qnn::{GraphInfoVersion, GraphInfoVersions, QuantizationEncoding, QuantizeParams, ScaleOffset};
use lpai_direct::qnn::{SystemContextHandle, SystemInterface, SystemInterfaceTable, Tensor, TensorType};
use lpai_direct::qnn::{TensorVersion, Version, BACKEND_ID_NULL};
use lpai_direct_skel::platform::VendorCalls;
use lpai_direct_skel::runtime::{Arena, Binary, Context, Libraries, LoadRequest, SystemLibrary, TensorInfo};
use lpai_net_run::metadata::HostSystemLibrary;
use std::path::Path;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Most dimensions one fuzzed tensor gets (QNN allows any rank; the readers must cope with more than 8).
pub const MAX_FUZZ_RANK: usize = 24;
/// The data types a tensor picks from by index (the rest of the byte's values and 255 with a raw value pick others).
const DATA_TYPES: [DataType; 13] = [
    DataType::UFIXED_POINT_8,
    DataType::SFIXED_POINT_8,
    DataType::UFIXED_POINT_16,
    DataType::SFIXED_POINT_16,
    DataType::FLOAT_32,
    DataType::FLOAT_16,
    DataType::INT_8,
    DataType::INT_16,
    DataType::INT_32,
    DataType::UINT_8,
    DataType::UINT_16,
    DataType::BOOL_8,
    DataType::UFIXED_POINT_32,
];

/// The fuzzer's bytes, read front to back; past the end everything is 0.
struct Bytes<'d>(&'d [u8]);

impl Bytes<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let count = N.min(self.0.len());
        out[..count].copy_from_slice(&self.0[..count]);
        self.0 = &self.0[count..];
        out
    }

    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }

    fn name(&mut self) -> Vec<u8> {
        let length = usize::from(self.u8()).min(self.0.len());
        let (name, rest) = self.0.split_at(length);
        self.0 = rest;
        let mut owned = name.to_vec();
        owned.push(0);
        owned
    }
}

/// Everything one answer points at, owned here; the pointers inside stay valid while this lives (every vector is
/// complete before a pointer into it is taken, and none grows afterwards).
struct Answer {
    info: Box<BinaryInfo>,
    _graphs: Vec<GraphInfo>,
    _tensors: Vec<Vec<Tensor>>,
    _names: Vec<Vec<u8>>,
    _dimensions: Vec<Vec<u32>>,
    fails: bool,
    null_info: bool,
}

/// A version: 1..=3 (or 1..=2) from the low bits, or a raw one.
fn version(bytes: &mut Bytes<'_>, bits: u8, highest: u32) -> u32 {
    match u32::from(bits & 3) {
        3 => bytes.u32(),
        known => (known + 1).min(highest),
    }
}

fn name_pointer(names: &mut Vec<Vec<u8>>, name: Vec<u8>, null: bool) -> *const c_char {
    names.push(name);
    match (null, names.last()) {
        (false, Some(name)) => name.as_ptr().cast(),
        _ => ptr::null(),
    }
}

/// One tensor description (its name and dimensions kept in `names` and `dimensions`).
fn tensor(bytes: &mut Bytes<'_>, names: &mut Vec<Vec<u8>>, dimensions: &mut Vec<Vec<u32>>) -> Tensor {
    let flags = bytes.u8();
    // SAFETY: every field of a tensor description is plain data or a raw pointer, for which zero is valid.
    let mut tensor: Tensor = unsafe { core::mem::zeroed() };
    tensor.version = TensorVersion(match flags & 3 {
        0 | 1 => 1,
        2 => 2,
        _ => bytes.u32(),
    });
    let id = bytes.u32();
    let name = name_pointer(names, bytes.name(), flags & 4 != 0);
    let tensor_type = TensorType(bytes.u32());
    let data_type = match bytes.u8() {
        255 => DataType(bytes.u32()),
        index => DATA_TYPES.get(usize::from(index)).copied().unwrap_or(DataType(u32::from(index) << 8)),
    };
    let encoding = QuantizationEncoding(bytes.u32());
    let scale_offset = ScaleOffset { scale: f32::from_bits(bytes.u32()), offset: bytes.u32() as i32 };
    let rank = usize::from(bytes.u8()) % (MAX_FUZZ_RANK + 1);
    dimensions.push((0..rank).map(|_| bytes.u32()).collect());
    let dimensions_pointer = match (flags & 8 != 0, dimensions.last_mut()) {
        (false, Some(list)) if !list.is_empty() => list.as_mut_ptr(),
        _ => ptr::null_mut(),
    };
    // Whatever the bytes, the fields any member of `tensor.v` has in common are set through the V1 view; a V2
    // tensor's extra pointers stay null. Another version leaves the union zero, as the readers may not read it.
    let v1 = match tensor.version {
        TensorVersion::V1 | TensorVersion::V2 => tensor.common_mut(),
        _ => None,
    };
    if let Some(v1) = v1 {
        v1.id = id;
        v1.name = name;
        v1.tensor_type = tensor_type;
        v1.data_type = data_type;
        v1.rank = rank as u32;
        v1.dimensions = dimensions_pointer;
        v1.quantize_params = QuantizeParams {
            encoding_definition: if flags & 16 != 0 { Definition::DEFINED } else { Definition::UNDEFINED },
            quantization_encoding: encoding,
            // SAFETY: zero is valid for every member (plain data or null pointers).
            params: unsafe { core::mem::zeroed() },
        };
        // Only the plain-data encodings carry their numbers; the others' members are pointers, left null.
        if encoding == QuantizationEncoding::SCALE_OFFSET {
            v1.quantize_params.params.scale_offset_encoding = scale_offset;
        } else if encoding == QuantizationEncoding::BW_SCALE_OFFSET {
            let bw = &mut v1.quantize_params.params;
            bw.bw_scale_offset_encoding.bitwidth = (scale_offset.offset as u32) & 31;
            bw.bw_scale_offset_encoding.scale = scale_offset.scale;
            bw.bw_scale_offset_encoding.offset = scale_offset.offset;
        }
    }
    tensor
}

/// The answer the fuzzer's bytes describe.
fn answer(data: &[u8]) -> Answer {
    let mut bytes = Bytes(data);
    let flags = bytes.u8();
    let info_version = version(&mut bytes, flags, 3);
    let graph_count = usize::from(bytes.u8() % 10);
    let (mut names, mut dimensions, mut tensors) = (Vec::new(), Vec::new(), Vec::new());
    // First every graph's facts and tensors, then the graph entries pointing at them.
    let mut facts = Vec::new();
    for _ in 0..graph_count {
        let graph_flags = bytes.u8();
        let graph_version = version(&mut bytes, graph_flags, 3);
        let name = name_pointer(&mut names, bytes.name(), graph_flags & 4 != 0);
        let (inputs, outputs) = (usize::from(bytes.u8() % 6), usize::from(bytes.u8() % 6));
        for count in [inputs, outputs] {
            tensors.push((0..count).map(|_| tensor(&mut bytes, &mut names, &mut dimensions)).collect::<Vec<_>>());
        }
        facts.push((graph_version, graph_flags, name, inputs as u32, outputs as u32));
    }
    let mut graphs = Vec::with_capacity(graph_count);
    for (index, &(graph_version, graph_flags, graph_name, num_graph_inputs, num_graph_outputs)) in
        facts.iter().enumerate()
    {
        let side = |tensors: &mut Vec<Vec<Tensor>>, at: usize, null: bool| match tensors.get_mut(at) {
            Some(list) if !null && !list.is_empty() => list.as_mut_ptr(),
            _ => ptr::null_mut(),
        };
        let graph_inputs = side(&mut tensors, 2 * index, graph_flags & 8 != 0);
        let graph_outputs = side(&mut tensors, 2 * index + 1, graph_flags & 16 != 0);
        let v3 = GraphInfoV3 {
            graph_name,
            num_graph_inputs,
            graph_inputs,
            num_graph_outputs,
            graph_outputs,
            num_updateable_tensors: 0,
            updateable_tensors: ptr::null_mut(),
            graph_blob_info_size: 0,
            graph_blob_info: ptr::null_mut(),
            start_op_index: 0,
            end_op_index: 0,
        };
        // A V3 entry starts with the V1 and V2 fields, so one value serves every version (another version's
        // reader may read none of it).
        graphs.push(GraphInfo { version: GraphInfoVersion(graph_version), v: GraphInfoVersions { v3 } });
    }
    let graphs_pointer = if flags & 16 != 0 || graphs.is_empty() { ptr::null_mut() } else { graphs.as_mut_ptr() };
    let build_id = if flags & 32 != 0 { ptr::null() } else { c"fuzz-build".as_ptr() };
    let soc_version = if flags & 64 != 0 { ptr::null() } else { c"fuzz-soc".as_ptr() };
    let core = Version::new(2, 32, 0);
    let v1 = BinaryInfoV1 {
        backend_id: 12,
        build_id,
        core_api_version: core,
        backend_api_version: Version::new(2, 26, 0),
        soc_version,
        hw_info_blob_version: Version::new(1, 0, 0),
        context_blob_version: Version::new(1, 0, 0),
        hw_info_blob_size: 0,
        hw_info_blob: ptr::null_mut(),
        context_blob_size: CONTRACT_BINARY.len() as u64,
        num_context_tensors: 0,
        context_tensors: ptr::null_mut(),
        num_graphs: graph_count as u32,
        graphs: graphs_pointer,
    };
    let v = if info_version == 3 {
        let v3 = BinaryInfoV3 {
            backend_id: v1.backend_id,
            build_id,
            core_api_version: core,
            backend_api_version: v1.backend_api_version,
            soc_version,
            context_blob_version: v1.context_blob_version,
            context_blob_size: v1.context_blob_size,
            num_context_tensors: 0,
            context_tensors: ptr::null_mut(),
            num_graphs: v1.num_graphs,
            graphs: graphs_pointer,
            platform_info: ptr::null_mut(),
            context_metadata_size: 0,
            context_metadata: ptr::null_mut(),
            soc_model: 0,
        };
        BinaryInfoVersions { v3 }
    } else {
        // V2 is V1 followed by one null pointer: a zeroed union with the V1 fields written is a valid V2 too.
        // SAFETY: every member is plain data or raw pointers, for which zero is valid.
        let mut v: BinaryInfoVersions = unsafe { core::mem::zeroed() };
        v.v1 = v1;
        v
    };
    let info = Box::new(BinaryInfo { version: BinaryInfoVersion(info_version), v });
    Answer {
        info,
        _graphs: graphs,
        _tensors: tensors,
        _names: names,
        _dimensions: dimensions,
        fails: flags & 4 != 0,
        null_info: flags & 8 != 0,
    }
}

/// The structure systemContextGetBinaryInfo answers with now (null: it fails).
static CURRENT: AtomicPtr<BinaryInfo> = AtomicPtr::new(ptr::null_mut());

/// systemContextCreate: one fixed handle.
///
/// # Safety
/// `handle` is null or valid for writes.
unsafe extern "C" fn create(handle: *mut SystemContextHandle) -> ErrorHandle {
    if handle.is_null() {
        return u64::from(SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY);
    }
    // SAFETY: non-null, valid for writes per the caller.
    unsafe { handle.write(0x5000 as SystemContextHandle) };
    0
}

/// systemContextGetBinaryInfo: the current answer.
///
/// # Safety
/// The out-pointers are null or valid for writes.
unsafe extern "C" fn get_binary_info(
    _handle: SystemContextHandle,
    _binary: *mut core::ffi::c_void,
    _size: u64,
    info: *mut *const BinaryInfo,
    info_size: *mut u64,
) -> ErrorHandle {
    let current = CURRENT.load(Ordering::Acquire);
    if current.is_null() || info.is_null() || info_size.is_null() {
        return u64::from(SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY);
    }
    // SAFETY: non-null, valid for writes per the caller.
    unsafe {
        info.write(current);
        info_size.write(core::mem::size_of::<BinaryInfo>() as u64);
    }
    0
}

/// systemContextFree.
unsafe extern "C" fn free(_handle: SystemContextHandle) -> ErrorHandle {
    0
}

/// The fake's provider entry: a `Sync` wrapper for the interface's raw pointers (it is never written).
struct Provider(SystemInterface);

// SAFETY: the interface is immutable and points only at static data.
unsafe impl Sync for Provider {}

static PROVIDER: Provider = Provider(SystemInterface {
    backend_id: BACKEND_ID_NULL,
    provider_name: c"SYSTEM_FUZZ".as_ptr(),
    system_api_version: Version::new(1, 15, 0),
    table: {
        // SAFETY: every field is an `Option` of a function pointer, for which zero is `None`.
        let mut table: SystemInterfaceTable = unsafe { core::mem::zeroed() };
        table.system_context_create = Some(create);
        table.system_context_get_binary_info = Some(get_binary_info);
        table.system_context_free = Some(free);
        table
    },
});

/// The provider list `QnnSystemInterface_getProviders` hands out (one entry).
struct List([*const SystemInterface; 1]);

// SAFETY: immutable, and points at a static.
unsafe impl Sync for List {}

static LIST: List = List([&PROVIDER.0]);

/// `QnnSystemInterface_getProviders` of the fake.
///
/// # Safety
/// The out-pointers are null or valid for writes.
unsafe extern "C" fn providers(list: *mut *mut *const SystemInterface, count: *mut u32) -> ErrorHandle {
    if list.is_null() || count.is_null() {
        return u64::from(SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY);
    }
    // SAFETY: non-null, valid for writes per the caller; the list is never written through the pointer.
    unsafe {
        list.write(LIST.0.as_ptr().cast_mut());
        count.write(1);
    }
    0
}

/// Makes the fake answer with `answer` while `body` runs.
fn answering<T>(answer: &Answer, body: impl FnOnce() -> T) -> T {
    let current =
        if answer.fails || answer.null_info { ptr::null_mut() } else { ptr::from_ref(&*answer.info).cast_mut() };
    CURRENT.store(current, Ordering::Release);
    let result = body();
    CURRENT.store(ptr::null_mut(), Ordering::Release);
    result
}

/// The HLOS side's reader: its record, when it makes one, must be a valid record of as many graphs.
fn hlos_reader(answer: &Answer) {
    // SAFETY: the fake's getProviders behaves as QNN specifies and its answers live as long as `answer`.
    let library = unsafe { HostSystemLibrary::from_providers(Path::new("libQnnSystemFuzz.so"), providers) };
    let Ok(library) = library else { panic!("the fake system library is refused") };
    let Ok(metadata) = library.read_in_this_process(CONTRACT_BINARY, "fuzz") else { return };
    let record = Record::parse(&metadata.record).expect("the HLOS reader wrote a record that does not parse");
    let counted = answer.info.graphs().map_or(0, |graphs| graphs.num_graphs as usize);
    assert_eq!(record.graph_count(), counted, "the record has another number of graphs than the binary info");
    assert_eq!(metadata.facts.info_version, answer.info.version.0);
}

/// The runtime's reader, then a whole load with its description.
fn runtime_reader() {
    // SAFETY: as in `hlos_reader`.
    let Ok(system) = (unsafe { SystemLibrary::from_providers(providers) }) else {
        panic!("the fake system library is refused by the runtime")
    };
    if let Ok(description) = system.describe(CONTRACT_BINARY) {
        if let Ok(graphs) = description.graphs() {
            for graph in graphs {
                let Some(common) = graph.common() else { continue };
                for (tensors, count) in
                    [(common.graph_inputs, common.num_graph_inputs), (common.graph_outputs, common.num_graph_outputs)]
                {
                    if tensors.is_null() || count == 0 {
                        continue;
                    }
                    // SAFETY: the fake describes `count` tensors there, alive with the answer.
                    let tensors = unsafe { core::slice::from_raw_parts(tensors, count as usize) };
                    for tensor in tensors {
                        if let Some(info) = TensorInfo::of(tensor) {
                            assert_eq!(info.bytes % info.data_type.element_size().unwrap_or(1).max(1), 0);
                            let product = info.dimensions.iter().try_fold(1usize, |p, &d| p.checked_mul(d as usize));
                            assert_eq!(product, Some(info.elements));
                        }
                    }
                }
            }
        }
    }
    let Some(backend) = contract_backend() else { panic!("the contract model's backend does not load") };
    let mut memory = vec![0u8; ARENA_BYTES];
    let arena = Arena::new(&mut memory);
    let libraries = Libraries::new(backend, Some(system));
    let loaded =
        Context::load(&VendorCalls::lock(), &libraries, &arena, &LoadRequest::new(Binary::Copy(CONTRACT_BINARY)));
    if let Ok(mut context) = loaded {
        exercise(&mut context);
    }
}

/// The target.
pub fn run(data: &[u8]) {
    let _serial = crate::serial::lock();
    let answer = answer(data);
    answering(&answer, || {
        hlos_reader(&answer);
        runtime_reader();
    });
}

/// The input that makes the fake describe `graphs` as they are (a seed from a real system library's answer);
/// `info_version` 1 to 3.
///
/// # Safety
/// Every pointer in `graphs` is null or valid for what its count says.
pub unsafe fn encode(info_version: u32, graphs: &[GraphInfo]) -> Vec<u8> {
    let name = |out: &mut Vec<u8>, text: *const c_char| {
        let bytes: &[u8] = if text.is_null() {
            &[]
        } else {
            // SAFETY: the caller's promise: a NUL-terminated string.
            unsafe { core::ffi::CStr::from_ptr(text) }.to_bytes()
        };
        let length = bytes.len().min(255);
        out.push(length as u8);
        out.extend_from_slice(&bytes[..length]);
    };
    let mut out = vec![(info_version.clamp(1, 3) - 1) as u8, graphs.len().min(9) as u8];
    for graph in graphs.iter().take(9) {
        let Some(common) = graph.common() else { continue };
        out.push((graph.version.0.clamp(1, 3) - 1) as u8);
        name(&mut out, common.graph_name);
        let sides = [(common.graph_inputs, common.num_graph_inputs), (common.graph_outputs, common.num_graph_outputs)];
        out.extend(sides.iter().map(|&(_, count)| count.min(5) as u8));
        for (tensors, count) in sides {
            let tensors: &[Tensor] = match tensors.is_null() {
                true => &[],
                // SAFETY: the caller's promise.
                false => unsafe { core::slice::from_raw_parts(tensors, count.min(5) as usize) },
            };
            for tensor in tensors {
                let Some(v1) = tensor.common() else { continue };
                let defined = v1.quantize_params.encoding_definition == Definition::DEFINED;
                out.push(if tensor.version == TensorVersion::V2 { 2 } else { 0 } | if defined { 16 } else { 0 });
                out.extend_from_slice(&v1.id.to_le_bytes());
                name(&mut out, v1.name);
                out.extend_from_slice(&v1.tensor_type.0.to_le_bytes());
                match DATA_TYPES.iter().position(|&known| known == v1.data_type) {
                    Some(index) => out.push(index as u8),
                    None => {
                        out.push(255);
                        out.extend_from_slice(&v1.data_type.0.to_le_bytes());
                    }
                }
                out.extend_from_slice(&v1.quantize_params.quantization_encoding.0.to_le_bytes());
                let scale_offset = v1.quantize_params.scale_offset().unwrap_or_default();
                out.extend_from_slice(&scale_offset.scale.to_bits().to_le_bytes());
                out.extend_from_slice(&scale_offset.offset.to_le_bytes());
                let rank = if v1.dimensions.is_null() { 0 } else { (v1.rank as usize).min(MAX_FUZZ_RANK) };
                out.push(rank as u8);
                if !v1.dimensions.is_null() {
                    // SAFETY: the caller's promise: `rank` dimensions.
                    let dimensions = unsafe { core::slice::from_raw_parts(v1.dimensions, rank) };
                    for dimension in dimensions {
                        out.extend_from_slice(&dimension.to_le_bytes());
                    }
                }
            }
        }
    }
    out
}
