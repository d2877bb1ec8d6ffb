//! The system library side (`QnnSystemInterface_getProviders`): system contexts that describe model files as
//! BinaryInfo version 3, GraphInfo version 1 and `Qnn_Tensor_t` version 1, from a static area per system context.
//! BinaryInfo's `coreApiVersion` and `backendApiVersion` are the versions the binary was made for (LPCM version 2's
//! and 3's fields; the model's own for version 1); describing a binary made for other versions, or one whose graphs
//! use custom ops (version 3) whatever is registered, is no breach.

use crate::format::{Lpcm, Name, TensorRecord, MAX_GRAPHS, MAX_RANK, MAX_TENSORS, NAME_BYTES};
use crate::lock::with_state;
use crate::rules::{self, answer};
use crate::state::{system_handle, MAX_SYSTEM_CONTEXTS};
use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::mem::MaybeUninit;
use core::ptr::{addr_of_mut, null_mut};
use lpai_direct::qnn::provide::{Provider, ProviderList};
use lpai_direct::qnn::{lpai, BinaryInfo, BinaryInfoV3, BinaryInfoVersion, BinaryInfoVersions, ClientBuffer};
use lpai_direct::qnn::{ContextBinarySize, DataType, Definition, ErrorHandle, GraphInfo, GraphInfoV1};
use lpai_direct::qnn::{GraphInfoVersion, GraphInfoVersions, QuantizationEncoding, QuantizeEncodingParams};
use lpai_direct::qnn::{QuantizeParams, ScaleOffset, SystemContextHandle, SystemInterface, SystemInterfaceTable};
use lpai_direct::qnn::{Tensor, TensorMemType, TensorMemory, TensorType, TensorV1, TensorVersion, TensorVersions};
use lpai_direct::qnn::{Version, BACKEND_ID_NULL};

/// The system API the provider speaks.
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
static LIST: ProviderList<SystemInterface, 1> = ProviderList::new([&SYSTEM]);

/// `QnnSystemInterface_getProviders` of the model: one provider, system API 1.15.
///
/// # Safety
/// `list` and `count` are null or valid for writes.
pub unsafe extern "C" fn system_providers(list: *mut *mut *const SystemInterface, count: *mut u32) -> ErrorHandle {
    // SAFETY: forwarded from the caller.
    match unsafe { LIST.hand_out(list, count) } {
        true => 0,
        false => u64::from(rules::SYSTEM_ARGUMENTS.code),
    }
}

/// What one system context hands out: the binary info and the graphs, tensors, names and dimensions it points at.
struct Description {
    info: BinaryInfo,
    graphs: [GraphInfo; MAX_GRAPHS],
    tensors: [Tensor; MAX_GRAPHS * MAX_TENSORS],
    dims: [[u32; MAX_RANK]; MAX_GRAPHS * MAX_TENSORS],
    tensor_names: [Name; MAX_GRAPHS * MAX_TENSORS],
    graph_names: [Name; MAX_GRAPHS],
}

/// One description per system-context slot.
struct Area(UnsafeCell<MaybeUninit<Description>>);
// SAFETY: a slot is written only under the state lock by the call that holds its live handle, and read by that
// handle's owner until it frees the handle or asks again (QNN's rule for the returned info).
unsafe impl Sync for Area {}

static AREAS: [Area; MAX_SYSTEM_CONTEXTS] =
    [const { Area(UnsafeCell::new(MaybeUninit::uninit())) }; MAX_SYSTEM_CONTEXTS];

/// systemContextCreate.
///
/// # Safety
/// `handle` is null or valid for writes.
unsafe extern "C" fn system_context_create(handle: *mut SystemContextHandle) -> ErrorHandle {
    if handle.is_null() {
        return rules::SYSTEM_ARGUMENTS.breach().text("systemContextCreate without an out-pointer").report();
    }
    let created = with_state(|state| {
        let serial = state.take_serial();
        let slot = state.systems.iter_mut().find(|live| **live == 0);
        let Some(slot) = slot else {
            return Err(rules::CAPACITY.breach().text("more than 8 live system contexts"));
        };
        *slot = serial;
        Ok(serial)
    });
    match created {
        Ok(serial) => {
            // SAFETY: checked non-null; valid for writes per the caller.
            unsafe { *handle = system_handle(serial) };
            0
        }
        Err(breach) => breach.report(),
    }
}

fn tensor(record: &TensorRecord, name: *const Name, dims: *mut [u32; MAX_RANK], input: bool) -> Tensor {
    let scale_offset = ScaleOffset { scale: record.scale, offset: record.offset };
    let v1 = TensorV1 {
        id: record.id,
        name: name.cast(),
        tensor_type: if input { TensorType::APP_WRITE } else { TensorType::APP_READ },
        data_format: 0,
        data_type: DataType(record.data_type),
        quantize_params: QuantizeParams {
            encoding_definition: Definition::DEFINED,
            quantization_encoding: QuantizationEncoding::SCALE_OFFSET,
            params: QuantizeEncodingParams { scale_offset_encoding: scale_offset },
        },
        rank: record.rank,
        dimensions: dims.cast(),
        mem_type: TensorMemType::RAW,
        memory: TensorMemory { client_buf: ClientBuffer { data: null_mut(), data_size: 0 } },
    };
    Tensor { version: TensorVersion::V1, v: TensorVersions { v1 } }
}

/// Writes the description of `file` in place (its pointers point into the same area).
///
/// # Safety
/// `area` is valid for writes and nothing reads it meanwhile.
unsafe fn describe(area: *mut Description, file: &Lpcm<'_>, size: u64) -> *const BinaryInfo {
    // SAFETY: place projections of the caller's valid pointer; nothing is read.
    let (graphs, tensors, dims, tensor_names, graph_names) = unsafe {
        (
            addr_of_mut!((*area).graphs).cast::<GraphInfo>(),
            addr_of_mut!((*area).tensors).cast::<Tensor>(),
            addr_of_mut!((*area).dims).cast::<[u32; MAX_RANK]>(),
            addr_of_mut!((*area).tensor_names).cast::<Name>(),
            addr_of_mut!((*area).graph_names).cast::<Name>(),
        )
    };
    let mut next = 0usize;
    for (index, graph) in file.graphs().enumerate().take(MAX_GRAPHS) {
        let first = next;
        for position in 0..graph.tensor_count().min(MAX_TENSORS) {
            let Some(record) = graph.tensor(position) else { continue };
            let slot = next.min(MAX_GRAPHS * MAX_TENSORS - 1);
            // SAFETY: `slot` is in bounds of each array of the area; the writes fill it before it is pointed at.
            unsafe {
                tensor_names.add(slot).write(record.name);
                dims.add(slot).write(record.dims);
                let input = position < graph.record.input_count as usize;
                tensors.add(slot).write(tensor(&record, tensor_names.add(slot), dims.add(slot), input));
            }
            next += 1;
        }
        let input_count = graph.record.input_count;
        // SAFETY: `index < MAX_GRAPHS`; the tensor pointers stay inside the area's tensor array.
        unsafe {
            graph_names.add(index).write(graph.record.name);
            let v1 = GraphInfoV1 {
                graph_name: graph_names.add(index).cast(),
                num_graph_inputs: input_count,
                graph_inputs: tensors.add(first),
                num_graph_outputs: graph.record.output_count,
                graph_outputs: tensors.add(first + input_count as usize),
            };
            graphs.add(index).write(GraphInfo { version: GraphInfoVersion::V1, v: GraphInfoVersions { v1 } });
        }
    }
    let v3 = BinaryInfoV3 {
        backend_id: lpai::BACKEND_ID_LPAI,
        build_id: c"lpai-contract-model".as_ptr(),
        core_api_version: file.api_versions().core,
        backend_api_version: file.api_versions().backend,
        soc_version: c"contract-model".as_ptr(),
        context_blob_version: Version::new(1, 0, 0),
        context_blob_size: size,
        num_context_tensors: 0,
        context_tensors: null_mut(),
        num_graphs: file.graph_count() as u32,
        graphs,
        platform_info: null_mut(),
        context_metadata_size: 0,
        context_metadata: null_mut(),
        soc_model: 0,
    };
    // SAFETY: valid for writes per the caller.
    unsafe {
        let info = addr_of_mut!((*area).info);
        info.write(BinaryInfo { version: BinaryInfoVersion::V3, v: BinaryInfoVersions { v3 } });
        info
    }
}

/// systemContextGetBinaryInfo: MALFORMED_BINARY (30010) for anything but a well-formed model file.
///
/// # Safety
/// `buffer` holds `size` readable bytes; `info` and `info_size` are null or valid for writes. The info stays valid
/// until the system context is freed or asked again.
unsafe extern "C" fn system_context_get_binary_info(
    handle: SystemContextHandle,
    buffer: *mut c_void,
    size: u64,
    info: *mut *const BinaryInfo,
    info_size: *mut ContextBinarySize,
) -> ErrorHandle {
    if buffer.is_null() || info.is_null() || info_size.is_null() {
        return rules::SYSTEM_ARGUMENTS.breach().text("systemContextGetBinaryInfo with a null pointer").report();
    }
    let Ok(length) = usize::try_from(size) else {
        return rules::SYSTEM_BINARY_FORMAT.breach().text("size ").num(size).text(" does not fit in memory").report();
    };
    // SAFETY: the caller's buffer holds `size` readable bytes.
    let bytes = unsafe { core::slice::from_raw_parts(buffer.cast::<u8>().cast_const(), length) };
    answer(with_state(|state| {
        let Some(area) = state.system(handle).and_then(|slot| AREAS.get(slot)) else {
            let breach = rules::SYSTEM_HANDLE.breach().text("systemContextGetBinaryInfo on ");
            return Err(breach.hex(handle.addr() as u64));
        };
        let file = Lpcm::parse(bytes).map_err(|malformed| {
            let breach = rules::SYSTEM_BINARY_FORMAT.breach().text(malformed.what).text(" (byte ");
            breach.num(malformed.at as u64).text(", value ").num(malformed.value).text(", size ").num(size).text(")")
        })?;
        // SAFETY: the area belongs to this live handle and the lock is held; `info` and `info_size` are valid.
        unsafe {
            *info = describe(area.0.get().cast::<Description>(), &file, size);
            *info_size = core::mem::size_of::<BinaryInfo>() as u64;
        }
        Ok(())
    }))
}

/// systemContextFree.
///
/// # Safety
/// Any handle value is accepted.
unsafe extern "C" fn system_context_free(handle: SystemContextHandle) -> ErrorHandle {
    answer(with_state(|state| {
        let Some(slot) = state.system(handle).and_then(|slot| state.systems.get_mut(slot)) else {
            return Err(rules::SYSTEM_HANDLE.breach().text("systemContextFree on ").hex(handle.addr() as u64));
        };
        *slot = 0;
        Ok(())
    }))
}

const _: () = assert!(NAME_BYTES == 32);
