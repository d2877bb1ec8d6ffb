//! The fake backend's graph entry points: retrieve, LPAI size properties and configs, finalize, execute.

use super::binary::{CatalogueGraph, MAX_BINARY_GRAPHS};
use super::context::context_slot;
use super::record::{Event, GraphId, GraphRecord, State, MAX_CONTEXTS};
use super::{entries, handle, index_of, with_state};
use core::ffi::{c_char, CStr};
use lpai_direct::qnn::error::{
    GRAPH_ERROR_EARLY_TERMINATION, GRAPH_ERROR_GRAPH_DOES_NOT_EXIST, GRAPH_ERROR_GRAPH_NOT_FINALIZED,
    GRAPH_ERROR_INVALID_ARGUMENT, GRAPH_ERROR_INVALID_HANDLE, GRAPH_ERROR_INVALID_TENSOR,
};
use lpai_direct::qnn::{lpai, ContextHandle, ErrorHandle, GraphConfig, GraphConfigOption, GraphHandle, GraphProperty};
use lpai_direct::qnn::{GraphPropertyOption, ProfileHandle, SignalHandle, Tensor, TensorMemType};

const GRAPH_HANDLE_BASE: usize = 0x6000;
/// Byte the fake writes over a graph's persistent memory at finalize.
pub const PERSISTENT_FILL: u8 = 0x3C;
/// Byte the fake writes over a graph's scratch memory at every execution.
pub const SCRATCH_FILL: u8 = 0xA5;

/// The graph behind a handle, if its context is alive.
fn graph_of(state: &State, graph: GraphHandle) -> Option<(GraphId, &'static CatalogueGraph)> {
    let index = index_of(graph, GRAPH_HANDLE_BASE, MAX_CONTEXTS * MAX_BINARY_GRAPHS)?;
    let (slot, graph_index) = (index / MAX_BINARY_GRAPHS, index % MAX_BINARY_GRAPHS);
    state.record.contexts.get(slot).filter(|context| context.live)?;
    let spec = state.contexts.get(slot)?.spec.graphs().get(graph_index)?;
    Some((GraphId { context: slot as u8, graph: graph_index as u8 }, spec.graph()?))
}

fn graph_record(state: &mut State, id: GraphId) -> &mut GraphRecord {
    &mut state.record.contexts[usize::from(id.context)].graphs[usize::from(id.graph)]
}

/// graphRetrieve: finds a graph of the context's binary by name.
///
/// # Safety
/// `name` is a NUL-terminated string; `graph` is valid for writes.
pub(crate) unsafe extern "C" fn graph_retrieve(
    context: ContextHandle,
    name: *const c_char,
    graph: *mut GraphHandle,
) -> ErrorHandle {
    if name.is_null() || graph.is_null() {
        return u64::from(GRAPH_ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: a NUL-terminated string, per the caller.
    let name = unsafe { CStr::from_ptr(name) };
    with_state(|state| {
        let Some(slot) = context_slot(state, context) else {
            return u64::from(GRAPH_ERROR_INVALID_HANDLE);
        };
        let specs = state.contexts[slot].spec.graphs();
        let Some(index) = specs.iter().position(|spec| spec.graph().is_some_and(|graph| graph.name == name)) else {
            return u64::from(GRAPH_ERROR_GRAPH_DOES_NOT_EXIST);
        };
        let id = GraphId { context: slot as u8, graph: index as u8 };
        graph_record(state, id).retrieved = true;
        state.record.push(Event::GraphRetrieve(id));
        // SAFETY: checked non-null; valid for writes per the caller.
        unsafe { *graph = handle(GRAPH_HANDLE_BASE, slot * MAX_BINARY_GRAPHS + index) };
        0
    })
}

/// graphGetProperty: SCRATCH_MEM_SIZE and PERSISTENT_MEM_SIZE from the binary.
///
/// # Safety
/// `properties` is a NULL-terminated list of valid CUSTOM properties whose `u32` targets are writable.
pub(crate) unsafe extern "C" fn graph_get_property(
    graph: GraphHandle,
    properties: *mut *mut GraphProperty,
) -> ErrorHandle {
    with_state(|state| {
        let Some((id, _)) = graph_of(state, graph) else {
            return u64::from(GRAPH_ERROR_INVALID_HANDLE);
        };
        let Some(spec) = state.contexts[usize::from(id.context)].spec.graphs().get(usize::from(id.graph)).copied()
        else {
            return u64::from(GRAPH_ERROR_INVALID_HANDLE);
        };
        // SAFETY: a NULL-terminated list, per the caller.
        for property in unsafe { entries(properties.cast_const().cast::<*const GraphProperty>()) } {
            // SAFETY: a valid property, per the caller.
            let property = unsafe { *property };
            if property.option != GraphPropertyOption::CUSTOM || property.custom_property.is_null() {
                return u64::from(GRAPH_ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: CUSTOM points at an LPAI graph custom property.
            let custom = unsafe { *property.custom_property.cast::<lpai::GraphCustomProperty>() };
            let size = match custom.option {
                lpai::GraphPropertyOption::SCRATCH_MEM_SIZE => spec.scratch_bytes,
                lpai::GraphPropertyOption::PERSISTENT_MEM_SIZE => spec.persistent_bytes,
                _ => return u64::from(GRAPH_ERROR_INVALID_ARGUMENT),
            };
            // SAFETY: both options point at a writable u32, per the caller.
            unsafe { *custom.property.cast::<u32>() = size };
        }
        state.record.push(Event::GraphGetProperty(id));
        0
    })
}

/// Records one graph config.
///
/// # Safety
/// `config` is a valid config; a CUSTOM one points at an LPAI graph custom config whose target has the type
/// its option documents.
unsafe fn record_graph_config(record: &mut GraphRecord, config: *const GraphConfig) {
    // SAFETY: per the caller; each arm reads what its option selects.
    unsafe {
        match (*config).option {
            GraphConfigOption::PRIORITY => record.priority = Some((*config).value.priority),
            GraphConfigOption::CUSTOM if !(*config).value.custom_config.is_null() => {
                let custom = *(*config).value.custom_config.cast::<lpai::GraphCustomConfig>();
                let target = custom.config;
                match custom.option {
                    _ if target.is_null() => record.unknown_configs += 1,
                    lpai::GraphConfigOption::SCRATCH_MEM => record.scratch = Some(*target.cast()),
                    lpai::GraphConfigOption::PERSISTENT_MEM => record.persistent = Some(*target.cast()),
                    lpai::GraphConfigOption::PERF_CFG => record.perf = Some(*target.cast()),
                    lpai::GraphConfigOption::CORE_AFFINITY => record.affinity = Some(*target.cast()),
                    _ => record.unknown_configs += 1,
                }
            }
            _ => record.unknown_configs += 1,
        }
    }
}

/// graphSetConfig: records the configs; memory must be aligned and at least the size reported.
///
/// # Safety
/// `config` is null or a NULL-terminated list of valid configs (see [`record_graph_config`]).
pub(crate) unsafe extern "C" fn graph_set_config(graph: GraphHandle, config: *const *const GraphConfig) -> ErrorHandle {
    with_state(|state| {
        let Some((id, _)) = graph_of(state, graph) else {
            return u64::from(GRAPH_ERROR_INVALID_HANDLE);
        };
        let alignment = state.settings.start_alignment.max(1) as usize;
        let spec = state.contexts[usize::from(id.context)].spec.graphs[usize::from(id.graph)];
        let record = graph_record(state, id);
        // SAFETY: a NULL-terminated list of valid configs, per the caller.
        for entry in unsafe { entries(config) } {
            // SAFETY: as above.
            unsafe { record_graph_config(record, entry) };
        }
        record.finalized_after_config = false;
        let fits = |memory: Option<lpai::GraphMem>, size: u32| {
            memory.is_none_or(|memory| memory.addr.addr().is_multiple_of(alignment) && memory.size >= size)
        };
        if !fits(record.scratch, spec.scratch_bytes) || !fits(record.persistent, spec.persistent_bytes) {
            return u64::from(GRAPH_ERROR_INVALID_ARGUMENT);
        }
        state.record.push(Event::GraphSetConfig(id));
        0
    })
}

/// graphFinalize: after the memory configs, takes the persistent memory (filling it) and marks the graph ready.
///
/// # Safety
/// Memory given through SCRATCH_MEM and PERSISTENT_MEM is writable for its size while the graph lives.
pub(crate) unsafe extern "C" fn graph_finalize(
    graph: GraphHandle,
    _profile: ProfileHandle,
    _signal: SignalHandle,
) -> ErrorHandle {
    with_state(|state| {
        let Some((id, _)) = graph_of(state, graph) else {
            return u64::from(GRAPH_ERROR_INVALID_HANDLE);
        };
        let record = graph_record(state, id);
        if let (Some(_), Some(persistent)) = (record.scratch, record.persistent) {
            // SAFETY: the runtime handed this memory to the graph, per the caller.
            unsafe { persistent.addr.cast::<u8>().write_bytes(PERSISTENT_FILL, persistent.size as usize) };
            record.finalized_after_config = true;
        }
        state.record.push(Event::GraphFinalize(id));
        0
    })
}

/// The client buffer of a RAW tensor with the expected id and at least `elements` bytes.
fn buffer_of(tensor: &Tensor, id: u32, elements: usize) -> Option<*mut u8> {
    let common = tensor.common()?;
    if common.id != id || common.mem_type != TensorMemType::RAW {
        return None;
    }
    // SAFETY: RAW selects the client buffer.
    let buffer = unsafe { common.memory.client_buf };
    (!buffer.data.is_null() && buffer.data_size as usize >= elements).then_some(buffer.data.cast())
}

/// graphExecute: EARLY_TERMINATION as configured, else `output[i] = input[i] + addend` (saturating).
///
/// # Safety
/// `inputs` and `outputs` hold `input_count` and `output_count` valid tensors whose client buffers are
/// valid for their sizes; the graph's scratch memory is writable.
pub(crate) unsafe extern "C" fn graph_execute(
    graph: GraphHandle,
    inputs: *const Tensor,
    input_count: u32,
    outputs: *mut Tensor,
    output_count: u32,
    _profile: ProfileHandle,
    _signal: SignalHandle,
) -> ErrorHandle {
    with_state(|state| {
        let Some((id, catalogue)) = graph_of(state, graph) else {
            return u64::from(GRAPH_ERROR_INVALID_HANDLE);
        };
        let settings = state.settings;
        let early = settings.always_early || state.early_left > 0;
        state.early_left = state.early_left.saturating_sub(1);
        let record = graph_record(state, id);
        record.execute_calls += 1;
        // A graph given LPAI memory must be finalized again after it; one on another backend gets none.
        let lpai_memory = record.scratch.is_some() || record.persistent.is_some();
        if lpai_memory && !record.finalized_after_config {
            return u64::from(GRAPH_ERROR_GRAPH_NOT_FINALIZED);
        }
        if early {
            return u64::from(GRAPH_ERROR_EARLY_TERMINATION);
        }
        if input_count != 1 || output_count != 1 || inputs.is_null() || outputs.is_null() {
            return u64::from(GRAPH_ERROR_INVALID_TENSOR);
        }
        let elements = catalogue.elements();
        // SAFETY: one valid input and one valid output tensor, per the caller.
        let (input, output) = unsafe { (&*inputs, &*outputs) };
        let (Some(input), Some(output)) =
            (buffer_of(input, catalogue.input_id, elements), buffer_of(output, catalogue.output_id, elements))
        else {
            return u64::from(GRAPH_ERROR_INVALID_TENSOR);
        };
        let data_size = |tensor: &Tensor| {
            // SAFETY: `buffer_of` accepted both tensors as RAW, which selects the client buffer.
            tensor.common().map_or(0, |common| unsafe { common.memory.client_buf.data_size })
        };
        // SAFETY: as above.
        record.data_sizes = unsafe { (data_size(&*inputs), data_size(&*outputs)) };
        let alignment = settings.start_alignment.max(1) as usize;
        record.io_aligned &= input.addr().is_multiple_of(alignment) && output.addr().is_multiple_of(alignment);
        if let Some(scratch) = record.scratch {
            // SAFETY: the runtime handed this memory to the graph, per the caller.
            unsafe { scratch.addr.cast::<u8>().write_bytes(SCRATCH_FILL, scratch.size as usize) };
        }
        for index in 0..elements {
            // SAFETY: both buffers hold at least `elements` bytes (checked above).
            unsafe { *output.add(index) = (*input.add(index)).saturating_add(catalogue.addend) };
        }
        record.completed += 1;
        0
    })
}
