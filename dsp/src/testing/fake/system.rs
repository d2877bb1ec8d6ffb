//! The fake libQnnSystem: system contexts that describe fake binaries (BinaryInfo v1 or v3, GraphInfo, Tensor v1).

use super::binary::{parse_binary, BinarySpec, CatalogueGraph, MAX_BINARY_GRAPHS};
use super::record::{Event, MAX_CONTEXTS};
use super::{handle, index_of, with_state, SyncCell};
use core::ffi::{c_void, CStr};
use core::mem::MaybeUninit;
use core::ptr::{self, addr_of_mut};
use lpai_direct::qnn::error::{
    COMMON_ERROR_MEM_ALLOC, SYSTEM_COMMON_ERROR_INVALID_ARGUMENT, SYSTEM_COMMON_ERROR_INVALID_HANDLE,
    SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY,
};
use lpai_direct::qnn::provide::{Provider, ProviderList};
use lpai_direct::qnn::{lpai, BinaryInfo, BinaryInfoV1, BinaryInfoV3, BinaryInfoVersion, BinaryInfoVersions};
use lpai_direct::qnn::{ClientBuffer, ContextBinarySize, DataType, Definition, ErrorHandle, GraphInfo, GraphInfoV1};
use lpai_direct::qnn::{
    GraphInfoV3, GraphInfoVersion, GraphInfoVersions, QuantizationEncoding, QuantizeEncodingParams,
};
use lpai_direct::qnn::{QuantizeParams, ScaleOffset, SystemContextHandle, SystemInterface, SystemInterfaceTable};
use lpai_direct::qnn::{Tensor, TensorMemType, TensorMemory, TensorType, TensorV1, TensorVersion, TensorVersions};
use lpai_direct::qnn::{Version, BACKEND_ID_NULL};

const SYSTEM_HANDLE_BASE: usize = 0x5000;
/// The system API the fake provider speaks.
pub const SYSTEM_API: Version = Version::new(1, 15, 0);

const TABLE: SystemInterfaceTable = {
    // SAFETY: every field is an `Option` of a function pointer, for which all-zero bytes are `None`.
    let mut table: SystemInterfaceTable = unsafe { core::mem::zeroed() };
    table.system_context_create = Some(system_context_create);
    table.system_context_get_binary_info = Some(system_context_get_binary_info);
    table.system_context_free = Some(system_context_free);
    table
};

static SYSTEM: Provider<SystemInterface> = Provider(SystemInterface {
    backend_id: BACKEND_ID_NULL,
    provider_name: c"SYSTEM_QTI_AISW".as_ptr(),
    system_api_version: SYSTEM_API,
    table: TABLE,
});
static SYSTEM_LIST: ProviderList<SystemInterface, 1> = ProviderList::new([&SYSTEM]);

/// `QnnSystemInterface_getProviders` of the fake: one provider, system API 1.15.
///
/// # Safety
/// `list` and `count` are null or valid for writes.
pub unsafe extern "C" fn system_providers(list: *mut *mut *const SystemInterface, count: *mut u32) -> ErrorHandle {
    // SAFETY: forwarded from the caller.
    match unsafe { SYSTEM_LIST.hand_out(list, count) } {
        true => 0,
        false => u64::from(SYSTEM_COMMON_ERROR_INVALID_ARGUMENT),
    }
}

/// What one system context hands out: the binary info, its graphs and their tensors (input, output per graph).
struct Description {
    info: BinaryInfo,
    graphs: [GraphInfo; MAX_BINARY_GRAPHS],
    tensors: [Tensor; 2 * MAX_BINARY_GRAPHS],
}

/// One description per system context slot; written only by getBinaryInfo on its own slot.
static DESCRIPTIONS: [SyncCell<MaybeUninit<Description>>; MAX_CONTEXTS] =
    [const { SyncCell::new(MaybeUninit::uninit()) }; MAX_CONTEXTS];

/// systemContextCreate.
///
/// # Safety
/// `system` is valid for writes.
unsafe extern "C" fn system_context_create(system: *mut SystemContextHandle) -> ErrorHandle {
    if system.is_null() {
        return u64::from(SYSTEM_COMMON_ERROR_INVALID_ARGUMENT);
    }
    with_state(|state| {
        let Some(slot) = state.system_slots.iter().position(|&busy| !busy) else {
            return u64::from(COMMON_ERROR_MEM_ALLOC);
        };
        state.system_slots[slot] = true;
        state.record.system_contexts_live += 1;
        state.record.push(Event::SystemContextCreate(slot as u8));
        // SAFETY: checked non-null; valid for writes per the caller.
        unsafe { *system = handle(SYSTEM_HANDLE_BASE, slot) };
        0
    })
}

fn tensor(id: u32, name: &'static CStr, tensor_type: TensorType, graph: &'static CatalogueGraph) -> Tensor {
    let scale_offset = ScaleOffset { scale: graph.scale, offset: graph.offset };
    let v1 = TensorV1 {
        id,
        name: name.as_ptr(),
        tensor_type,
        data_format: 0,
        data_type: DataType::UFIXED_POINT_8,
        quantize_params: QuantizeParams {
            encoding_definition: Definition::DEFINED,
            quantization_encoding: QuantizationEncoding::SCALE_OFFSET,
            params: QuantizeEncodingParams { scale_offset_encoding: scale_offset },
        },
        rank: 2,
        // The runtime only reads dimensions; the static array is never written.
        dimensions: graph.dimensions.as_ptr().cast_mut(),
        mem_type: TensorMemType::RAW,
        memory: TensorMemory { client_buf: ClientBuffer { data: ptr::null_mut(), data_size: 0 } },
    };
    Tensor { version: TensorVersion::V1, v: TensorVersions { v1 } }
}

/// Builds the description of `spec` in place at `description` (whose own addresses the pointers use).
///
/// # Safety
/// `description` is valid for writes and not borrowed by anyone.
unsafe fn describe(description: *mut Description, spec: &BinarySpec, size: u64) {
    // SAFETY: place projections on the caller's valid pointer; nothing is read.
    let (graph_base, tensor_base) =
        unsafe { (addr_of_mut!((*description).graphs).cast::<GraphInfo>(), addr_of_mut!((*description).tensors)) };
    let tensor_base = tensor_base.cast::<Tensor>();
    let mut graphs = [const { MaybeUninit::<GraphInfo>::uninit() }; MAX_BINARY_GRAPHS];
    let mut tensors = [const { MaybeUninit::<Tensor>::uninit() }; 2 * MAX_BINARY_GRAPHS];
    for (index, graph) in spec.graphs().iter().filter_map(|spec| spec.graph()).enumerate() {
        tensors[2 * index].write(tensor(graph.input_id, graph.input_name, TensorType::APP_WRITE, graph));
        tensors[2 * index + 1].write(tensor(graph.output_id, graph.output_name, TensorType::APP_READ, graph));
        // SAFETY: in bounds of the description's tensor array.
        let (graph_inputs, graph_outputs) = unsafe { (tensor_base.add(2 * index), tensor_base.add(2 * index + 1)) };
        let v1 = GraphInfoV1 {
            graph_name: graph.name.as_ptr(),
            num_graph_inputs: 1,
            graph_inputs,
            num_graph_outputs: 1,
            graph_outputs,
        };
        graphs[index].write(if spec.info_version == 1 {
            GraphInfo { version: GraphInfoVersion::V1, v: GraphInfoVersions { v1 } }
        } else {
            let v3 = GraphInfoV3 {
                graph_name: v1.graph_name,
                num_graph_inputs: 1,
                graph_inputs,
                num_graph_outputs: 1,
                graph_outputs,
                num_updateable_tensors: 0,
                updateable_tensors: ptr::null_mut(),
                graph_blob_info_size: 0,
                graph_blob_info: ptr::null_mut(),
                start_op_index: 0,
                end_op_index: 0,
            };
            GraphInfo { version: GraphInfoVersion::V3, v: GraphInfoVersions { v3 } }
        });
    }
    let info = binary_info(spec, size, graph_base);
    // SAFETY: valid for writes per the caller; the graph and tensor slots not in use stay uninitialised, which
    // `MaybeUninit` storage allows, and nothing reads past `num_graphs`.
    unsafe {
        addr_of_mut!((*description).info).write(info);
        graph_base.cast::<MaybeUninit<GraphInfo>>().copy_from_nonoverlapping(graphs.as_ptr(), MAX_BINARY_GRAPHS);
        tensor_base.cast::<MaybeUninit<Tensor>>().copy_from_nonoverlapping(tensors.as_ptr(), 2 * MAX_BINARY_GRAPHS);
    }
}

fn binary_info(spec: &BinarySpec, size: u64, graphs: *mut GraphInfo) -> BinaryInfo {
    const CORE: Version = Version::new(2, 32, 0);
    let (build_id, soc_version, num_graphs) = (c"fake-lpai".as_ptr(), c"fake-soc".as_ptr(), spec.graph_count as u32);
    if spec.info_version == 1 {
        let v1 = BinaryInfoV1 {
            backend_id: lpai::BACKEND_ID_LPAI,
            build_id,
            core_api_version: CORE,
            backend_api_version: lpai::API_VERSION,
            soc_version,
            hw_info_blob_version: Version::new(1, 0, 0),
            context_blob_version: Version::new(1, 0, 0),
            hw_info_blob_size: 0,
            hw_info_blob: ptr::null_mut(),
            context_blob_size: size,
            num_context_tensors: 0,
            context_tensors: ptr::null_mut(),
            num_graphs,
            graphs,
        };
        return BinaryInfo { version: BinaryInfoVersion::V1, v: BinaryInfoVersions { v1 } };
    }
    let v3 = BinaryInfoV3 {
        backend_id: lpai::BACKEND_ID_LPAI,
        build_id,
        core_api_version: CORE,
        backend_api_version: lpai::API_VERSION,
        soc_version,
        context_blob_version: Version::new(1, 0, 0),
        context_blob_size: size,
        num_context_tensors: 0,
        context_tensors: ptr::null_mut(),
        num_graphs,
        graphs,
        platform_info: ptr::null_mut(),
        context_metadata_size: 0,
        context_metadata: ptr::null_mut(),
        soc_model: 0,
    };
    BinaryInfo { version: BinaryInfoVersion::V3, v: BinaryInfoVersions { v3 } }
}

/// systemContextGetBinaryInfo: parses a fake binary; MALFORMED_BINARY (30010) for anything else.
///
/// # Safety
/// `buffer` holds `size` readable bytes; `info` and `info_size` are valid for writes. The info stays valid
/// until the system context is freed or asked again.
unsafe extern "C" fn system_context_get_binary_info(
    system: SystemContextHandle,
    buffer: *mut c_void,
    size: u64,
    info: *mut *const BinaryInfo,
    info_size: *mut ContextBinarySize,
) -> ErrorHandle {
    let slot = with_state(|state| {
        let slot = index_of(system, SYSTEM_HANDLE_BASE, MAX_CONTEXTS).filter(|&slot| state.system_slots[slot])?;
        state.record.push(Event::SystemGetBinaryInfo(slot as u8));
        Some(slot)
    });
    let (Some(slot), Ok(length)) = (slot, usize::try_from(size)) else {
        return u64::from(SYSTEM_COMMON_ERROR_INVALID_HANDLE);
    };
    if buffer.is_null() || info.is_null() || info_size.is_null() {
        return u64::from(SYSTEM_COMMON_ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: the caller's buffer holds `size` readable bytes.
    let bytes = unsafe { core::slice::from_raw_parts(buffer.cast::<u8>(), length) };
    let Some(spec) = parse_binary(bytes) else {
        return u64::from(SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY);
    };
    let description = DESCRIPTIONS[slot].get().cast::<Description>();
    // SAFETY: the slot belongs to this system context; the runtime holds no borrow of it while asking again.
    unsafe {
        describe(description, &spec, size);
        *info = addr_of_mut!((*description).info);
        // Like the 2.51 library: the size comes back 0.
        *info_size = 0;
    }
    0
}

/// systemContextFree.
///
/// # Safety
/// Any handle value is accepted.
unsafe extern "C" fn system_context_free(system: SystemContextHandle) -> ErrorHandle {
    with_state(|state| {
        let Some(slot) = index_of(system, SYSTEM_HANDLE_BASE, MAX_CONTEXTS).filter(|&slot| state.system_slots[slot])
        else {
            return u64::from(SYSTEM_COMMON_ERROR_INVALID_HANDLE);
        };
        state.system_slots[slot] = false;
        state.record.system_contexts_live -= 1;
        state.record.push(Event::SystemContextFree(slot as u8));
        0
    })
}
