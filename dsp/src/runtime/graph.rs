//! One graph of a loaded context: its tensors and their buffers (all in the arena), LPAI graph set-up, and the
//! heap-free execute path.

use super::arena::Arena;
use super::backend::{c_text, Backend};
use super::completion::Completion;
use super::error::{check, name_of, require, RuntimeError};
use super::quantize;
use super::tensor::{encoding_of, TensorInfo, TensorSize};
use crate::log;
use crate::platform::{ticks_to_micros, Current, Level, Message, Platform};
use core::ffi::c_void;
use core::ptr::{self, NonNull};
use lpai_direct::qnn::error::{GRAPH_ERROR_EARLY_TERMINATION, GRAPH_ERROR_INVALID_TENSOR};
use lpai_direct::qnn::TensorMemory;
use lpai_direct::qnn::{self, lpai, ClientBuffer, GraphConfig, GraphHandle, GraphInfo, GraphProperty};
use lpai_direct::qnn::{GraphPropertyOption, InterfaceTable, Priority, ProfileHandle, Tensor, TensorMemType};

/// How often graphExecute may answer EARLY_TERMINATION (LPAI: "output not ready, execute again") in a row.
pub const MAX_EXECUTE_ATTEMPTS: u32 = 1000;

mod frames;
pub use frames::FrameState;

/// Per-graph settings (LPAI ones apply only to an LPAI backend).
#[derive(Clone, Copy, Debug)]
pub struct GraphOptions {
    /// Graph priority, if the caller sets one.
    pub priority: Option<Priority>,
    /// LPAI performance config.
    pub perf: lpai::PerfCfg,
    /// LPAI core affinity.
    pub affinity: lpai::CoreAffinity,
    /// The memory types of LPAI's scratch and persistent memory.
    pub memory: lpai::MemoryPlacement,
    /// Input buffer sets: 1, or 2 so that the caller fills one while a frame started with
    /// [`Graph::start_frame`] executes on the other (each input's buffer, padded, and its tensor description
    /// once more in the arena).
    pub input_sets: u32,
}

impl Default for GraphOptions {
    fn default() -> Self {
        GraphOptions {
            priority: None,
            perf: lpai::PerfCfg::DEFAULT,
            affinity: lpai::CoreAffinity::DEFAULT,
            memory: lpai::MemoryPlacement::DEFAULT,
            input_sets: 1,
        }
    }
}

/// What one execution took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Execution {
    /// Platform clock ticks around graphExecute (on the aDSP: the 19.2 MHz QTimer).
    pub ticks: u64,
    /// graphExecute calls made (more than 1 after EARLY_TERMINATION answers).
    pub attempts: u32,
}

impl Execution {
    /// The time in microseconds.
    pub fn micros(&self) -> u64 {
        ticks_to_micros(self.ticks)
    }
}

/// LPAI memory handed to the graph from the arena.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LpaiMemory {
    /// Scratch bytes.
    pub scratch: usize,
    /// Persistent bytes.
    pub persistent: usize,
}

/// QNN's `graphExecute`, as the interface table holds it.
pub use lpai_direct::qnn::interface::GraphExecuteFn;

/// What graphExecute takes for one graph, its native tensors' buffers already set: for programs that time the bare
/// call (the benchmarks' floor) against the runtime's own path. The pointers stay valid while the graph lives and
/// nothing else uses it.
#[derive(Clone, Copy, Debug)]
pub struct RawExecute {
    /// The backend's graphExecute.
    pub function: GraphExecuteFn,
    /// The graph.
    pub graph: GraphHandle,
    /// The input tensors (their client buffers in the arena).
    pub inputs: *const Tensor,
    /// How many.
    pub input_count: u32,
    /// The output tensors.
    pub outputs: *mut Tensor,
    /// How many.
    pub output_count: u32,
}

/// A retrieved, ready-to-run graph.
pub struct Graph<'a> {
    table: &'a InterfaceTable,
    handle: GraphHandle,
    name: *const core::ffi::c_char,
    /// The input set the caller fills and the next execution reads.
    inputs: &'a mut [Tensor],
    /// With two input sets, the other one (the one a frame in flight reads).
    other_inputs: Option<&'a mut [Tensor]>,
    /// The asynchronous frame's completion record, in the arena.
    completion: NonNull<Completion>,
    outputs: &'a mut [Tensor],
    profile: ProfileHandle,
    memory: LpaiMemory,
    lpai: Option<LpaiSettings<'a>>,
    /// Whether the tensors come from a metadata record (a refusal of them is then the record's mismatch).
    from_record: bool,
    /// Ticks the last graphFinalize took.
    finalize_ticks: u64,
    /// The eNPU cores the backend reported (ENPU_CORE_NUM), which a core_selection must stay within.
    enpu_cores: Option<u32>,
}

/// Refuses a `core_selection` LPAI cannot honour: several cores (not yet supported), or a core beyond the `cores`
/// the backend reported. The one check, at load and when the performance settings change.
pub(crate) fn check_core_selection(mask: u32, cores: Option<u32>) -> Result<(), RuntimeError> {
    if !lpai::CoreAffinity::supports(mask) {
        return Err(RuntimeError::CoreMix(mask));
    }
    match cores {
        Some(cores) if !lpai::CoreAffinity::selects_a_core_of(mask, cores) => {
            Err(RuntimeError::NoSuchCore { mask, cores })
        }
        _ => Ok(()),
    }
}

/// The LPAI perf and affinity configs of a graph, kept in the arena so they can be changed and set again.
/// Raw pointers, not references: the custom configs point at the same memory, and writing through a
/// reference would invalidate the pointers the backend reads through.
struct LpaiSettings<'a> {
    perf: *mut lpai::PerfCfg,
    affinity: *mut lpai::CoreAffinity,
    configs: &'a mut [lpai::GraphCustomConfig],
}

fn round_up(size: usize, granule: usize) -> usize {
    size.checked_next_multiple_of(granule).unwrap_or(size)
}

/// Copies tensor descriptions into the arena and gives each an aligned client buffer there.
fn tensors_with_buffers<'a>(
    described: *const Tensor,
    count: u32,
    backend: &Backend,
    arena: &Arena<'a>,
    what: Message,
) -> Result<&'a mut [Tensor], RuntimeError> {
    if count > 0 && described.is_null() {
        return Err(RuntimeError::MalformedBinary { code: 0 });
    }
    let described = if count == 0 {
        &[][..]
    } else {
        // SAFETY: libQnnSystem describes `count` tensors here, alive as long as the binary description.
        unsafe { core::slice::from_raw_parts(described, count as usize) }
    };
    let Some(first) = described.first() else {
        return Ok(&mut []);
    };
    let tensors = arena.slice(described.len(), *first)?;
    let properties = backend.properties();
    for (tensor, source) in tensors.iter_mut().zip(described) {
        *tensor = *source;
        let info = TensorInfo::of(tensor).ok_or(RuntimeError::MalformedBinary { code: 0 })?;
        let too_large = || RuntimeError::TooMany { what, count: info.bytes, limit: u32::MAX as usize };
        // LPAI wants dataSize padded (the padding is never read or written by the runtime); others the exact size.
        let padded = round_up(info.bytes, properties.io_size_granule);
        let data_size = u32::try_from(padded).map_err(|_| too_large())?;
        let buffer = arena.bytes(round_up(padded, properties.size_alignment), properties.start_alignment)?;
        let common = tensor.common_mut().ok_or(RuntimeError::MalformedBinary { code: 0 })?;
        common.mem_type = TensorMemType::RAW;
        common.memory = TensorMemory { client_buf: ClientBuffer { data: buffer.as_mut_ptr().cast(), data_size } };
    }
    Ok(tensors)
}

impl<'a> Graph<'a> {
    /// Retrieves the graph described by `info` from a created context and prepares it to run; `from_record` says
    /// the description came from a metadata record, so a graph graphRetrieve cannot find is the record's mismatch.
    pub(crate) fn prepare(
        backend: &'a Backend,
        context: qnn::ContextHandle,
        info: &GraphInfo,
        arena: &Arena<'a>,
        options: &GraphOptions,
        profile: ProfileHandle,
        from_record: bool,
    ) -> Result<Graph<'a>, RuntimeError> {
        let common = info.common().ok_or(RuntimeError::MalformedBinary { code: 0 })?;
        let retrieve = require(backend.table().graph_retrieve, Message::QnnGraphRetrieve)?;
        let mut handle: GraphHandle = ptr::null_mut();
        // SAFETY: the name is the description's NUL-terminated graph name; `handle` is a valid out-pointer.
        let retrieved = check(unsafe { retrieve(context, common.graph_name, &mut handle) }, Message::QnnGraphRetrieve);
        if let (Err(RuntimeError::Qnn { code, .. }), true) = (&retrieved, from_record) {
            // SAFETY: as above: the description's NUL-terminated name.
            let graph = name_of(unsafe { c_text(common.graph_name) });
            return Err(RuntimeError::RecordGraphMissing { graph, code: *code });
        }
        retrieved?;
        let inputs = tensors_with_buffers(
            common.graph_inputs,
            common.num_graph_inputs,
            backend,
            arena,
            Message::TooManyInputBytes,
        )?;
        let outputs = tensors_with_buffers(
            common.graph_outputs,
            common.num_graph_outputs,
            backend,
            arena,
            Message::TooManyOutputBytes,
        )?;
        let other_inputs = match options.input_sets {
            1 => None,
            2 => Some(tensors_with_buffers(
                common.graph_inputs,
                common.num_graph_inputs,
                backend,
                arena,
                Message::TooManyInputBytes,
            )?),
            sets => return Err(RuntimeError::InputSets(sets)),
        };
        let mut graph = Graph {
            table: backend.table(),
            handle,
            name: common.graph_name,
            inputs,
            other_inputs,
            completion: Completion::place(arena)?,
            outputs,
            profile,
            memory: LpaiMemory::default(),
            lpai: None,
            from_record,
            finalize_ticks: 0,
            enpu_cores: backend.properties().enpu_cores,
        };
        if backend.is_lpai() {
            graph.configure_lpai(backend, arena, options)?;
        } else {
            log!(Level::Info, Message::NotLpaiSkippingGraphSetup, graph.name(), backend.info().name.as_str());
            if let Some(priority) = options.priority {
                graph.set_configs(&[GraphConfig::priority(priority)])?;
            }
        }
        Ok(graph)
    }

    fn set_configs(&mut self, configs: &[GraphConfig]) -> Result<(), RuntimeError> {
        let set_config = require(self.table.graph_set_config, Message::QnnGraphSetConfig)?;
        let mut list: heapless::Vec<*const GraphConfig, 8> = heapless::Vec::new();
        for config in configs {
            list.push(config).map_err(|_| RuntimeError::TooMany {
                what: Message::TooManyGraphConfigs,
                count: configs.len(),
                limit: 7,
            })?;
        }
        list.push(ptr::null()).map_err(|_| RuntimeError::TooMany {
            what: Message::TooManyGraphConfigs,
            count: configs.len(),
            limit: 7,
        })?;
        // SAFETY: a NULL-terminated list of configs that outlive the call.
        check(unsafe { set_config(self.handle, list.as_ptr()) }, Message::QnnGraphSetConfig)
    }

    /// LPAI: scratch and persistent memory from the graph's own size properties, perf config, core affinity,
    /// priority, then finalize again so the backend takes them.
    fn configure_lpai(
        &mut self,
        backend: &Backend,
        arena: &Arena<'a>,
        options: &GraphOptions,
    ) -> Result<(), RuntimeError> {
        let mut scratch_size = 0u32;
        let mut persistent_size = 0u32;
        let mut custom = [
            lpai::GraphCustomProperty {
                option: lpai::GraphPropertyOption::SCRATCH_MEM_SIZE,
                property: (&mut scratch_size as *mut u32).cast(),
            },
            lpai::GraphCustomProperty {
                option: lpai::GraphPropertyOption::PERSISTENT_MEM_SIZE,
                property: (&mut persistent_size as *mut u32).cast(),
            },
        ];
        let [scratch_property, persistent_property] = &mut custom;
        let mut properties = [
            GraphProperty {
                option: GraphPropertyOption::CUSTOM,
                custom_property: (scratch_property as *mut lpai::GraphCustomProperty).cast(),
            },
            GraphProperty {
                option: GraphPropertyOption::CUSTOM,
                custom_property: (persistent_property as *mut lpai::GraphCustomProperty).cast(),
            },
        ];
        let [first, second] = &mut properties;
        let mut list: [*mut GraphProperty; 3] = [first, second, ptr::null_mut()];
        let get_property = require(self.table.graph_get_property, Message::QnnGraphGetProperty)?;
        // SAFETY: a NULL-terminated property list whose targets outlive the call.
        check(unsafe { get_property(self.handle, list.as_mut_ptr()) }, Message::QnnGraphGetProperty)?;

        let alignment = backend.properties();
        // Each memory is handed over with its size rounded up to the size alignment, like every other buffer.
        let memory = |size: u32, mem_type: lpai::MemType| -> Result<lpai::GraphMem, RuntimeError> {
            let rounded = round_up(size as usize, alignment.size_alignment);
            let too_many = || RuntimeError::TooMany {
                what: Message::TooManyLpaiGraphMemoryBytes,
                count: rounded,
                limit: u32::MAX as usize,
            };
            let size = u32::try_from(rounded).map_err(|_| too_many())?;
            let bytes = arena.bytes(rounded, alignment.start_alignment)?;
            Ok(lpai::GraphMem { mem_type, size, addr: bytes.as_mut_ptr().cast() })
        };
        let unset = lpai::GraphMem { mem_type: lpai::MemType::DDR, size: 0, addr: ptr::null_mut() };
        let [scratch, persistent] = arena.slice(2, unset)? else {
            return Err(RuntimeError::MalformedBinary { code: 0 });
        };
        *scratch = memory(scratch_size, options.memory.scratch)?;
        *persistent = memory(persistent_size, options.memory.persistent)?;
        let [perf] = arena.slice(1, options.perf)? else {
            return Err(RuntimeError::MalformedBinary { code: 0 });
        };
        let [affinity] = arena.slice(1, options.affinity)? else {
            return Err(RuntimeError::MalformedBinary { code: 0 });
        };
        let (perf, affinity): (*mut lpai::PerfCfg, *mut lpai::CoreAffinity) = (perf, affinity);
        let undefined = lpai::GraphCustomConfig { option: lpai::GraphConfigOption::UNDEFINED, config: ptr::null_mut() };
        let [scratch_config, persistent_config, perf_and_affinity @ ..] = arena.slice(4, undefined)? else {
            return Err(RuntimeError::MalformedBinary { code: 0 });
        };
        *scratch_config = lpai::GraphCustomConfig {
            option: lpai::GraphConfigOption::SCRATCH_MEM,
            config: (scratch as *mut lpai::GraphMem).cast(),
        };
        *persistent_config = lpai::GraphCustomConfig {
            option: lpai::GraphConfigOption::PERSISTENT_MEM,
            config: (persistent as *mut lpai::GraphMem).cast(),
        };
        let tuning: [(lpai::GraphConfigOption, *mut c_void); 2] = [
            (lpai::GraphConfigOption::PERF_CFG, perf.cast()),
            (lpai::GraphConfigOption::CORE_AFFINITY, affinity.cast()),
        ];
        for (slot, (option, config)) in perf_and_affinity.iter_mut().zip(tuning) {
            *slot = lpai::GraphCustomConfig { option, config };
        }
        // Memory configs only for memory the graph asks for (as LPAI's sample app does); the tuning always.
        let sizes = [scratch_size, persistent_size];
        let memory_configs = [&mut *scratch_config, &mut *persistent_config].into_iter().zip(sizes);
        let needed = memory_configs.filter(|(_, size)| *size > 0).map(|(config, _)| config);
        let mut configs: heapless::Vec<GraphConfig, 5> = heapless::Vec::new();
        for custom in needed.chain(perf_and_affinity.iter_mut()) {
            let _ = configs.push(GraphConfig::custom((custom as *mut lpai::GraphCustomConfig).cast()));
        }
        if let Some(priority) = options.priority {
            let _ = configs.push(GraphConfig::priority(priority));
        }
        self.set_configs(&configs)?;
        self.finalize()?;
        self.memory = LpaiMemory { scratch: scratch_size as usize, persistent: persistent_size as usize };
        self.lpai = Some(LpaiSettings { perf, affinity, configs: perf_and_affinity });
        log!(Level::Info, Message::LpaiGraphMemory, self.name(), scratch_size, persistent_size);
        Ok(())
    }

    fn finalize(&mut self) -> Result<(), RuntimeError> {
        let finalize = require(self.table.graph_finalize, Message::QnnGraphFinalize)?;
        let started = Current::now_ticks();
        // SAFETY: a retrieved graph, the context's profile handle (or null) and no signal.
        let status = unsafe { finalize(self.handle, self.profile, ptr::null_mut()) };
        self.finalize_ticks = Current::now_ticks().saturating_sub(started);
        check(status, Message::QnnGraphFinalize)
    }

    /// Ticks the last graphFinalize of this graph took (0 when it was never finalized: not an LPAI graph).
    pub fn finalize_ticks(&self) -> u64 {
        self.finalize_ticks
    }

    /// Changes the LPAI performance settings (PERF_CFG, CORE_AFFINITY, and the priority if given), then
    /// finalizes again so the backend takes them. On another backend only the priority applies; the rest is
    /// logged as skipped.
    pub fn set_performance(
        &mut self,
        perf: lpai::PerfCfg,
        affinity: lpai::CoreAffinity,
        priority: Option<Priority>,
    ) -> Result<(), RuntimeError> {
        self.refuse_in_flight(Message::RefusedSetPerformance)?;
        check_core_selection(affinity.core_selection, self.enpu_cores)?;
        let Some(settings) = self.lpai.as_mut() else {
            log!(Level::Info, Message::NotLpaiSkippingPerformance, self.name());
            return match priority {
                Some(priority) => self.set_configs(&[GraphConfig::priority(priority)]),
                None => Ok(()),
            };
        };
        // SAFETY: both point into the arena for 'a and only this graph writes them; the backend reads them
        // only during the graphSetConfig below.
        unsafe {
            settings.perf.write(perf);
            settings.affinity.write(affinity);
        }
        let mut configs: heapless::Vec<GraphConfig, 3> = heapless::Vec::new();
        for custom in settings.configs.iter_mut() {
            let _ = configs.push(GraphConfig::custom((custom as *mut lpai::GraphCustomConfig).cast()));
        }
        if let Some(priority) = priority {
            let _ = configs.push(GraphConfig::priority(priority));
        }
        self.set_configs(&configs)?;
        self.finalize()
    }

    /// The graph's name in the binary.
    pub fn name(&self) -> &str {
        // SAFETY: the name belongs to the binary description, which the owning context keeps alive.
        unsafe { c_text(self.name) }
    }

    /// Whether its tensor descriptions came from a metadata record rather than libQnnSystem.
    pub fn from_record(&self) -> bool {
        self.from_record
    }

    /// The graph's name as the NUL-terminated string the binary's description holds (`None` when it has none).
    pub fn c_name(&self) -> Option<&core::ffi::CStr> {
        // SAFETY: as in `name`: a NUL-terminated string alive with the owning context, or null.
        (!self.name.is_null()).then(|| unsafe { core::ffi::CStr::from_ptr(self.name) })
    }

    /// Number of inputs.
    pub fn input_count(&self) -> usize {
        self.inputs.len()
    }

    /// Number of outputs.
    pub fn output_count(&self) -> usize {
        self.outputs.len()
    }

    /// Describes input `index`.
    pub fn input(&self, index: usize) -> Option<TensorInfo<'_>> {
        self.inputs.get(index).and_then(TensorInfo::of)
    }

    /// Describes output `index`.
    pub fn output(&self, index: usize) -> Option<TensorInfo<'_>> {
        self.outputs.get(index).and_then(TensorInfo::of)
    }

    /// Input `index`'s size alone (cheaper than [`Graph::input`]).
    pub fn input_size(&self, index: usize) -> Option<TensorSize> {
        self.inputs.get(index).and_then(TensorSize::of)
    }

    /// Output `index`'s size alone (cheaper than [`Graph::output`]).
    pub fn output_size(&self, index: usize) -> Option<TensorSize> {
        self.outputs.get(index).and_then(TensorSize::of)
    }

    /// LPAI scratch and persistent memory the graph was given (zero on other backends).
    pub fn lpai_memory(&self) -> LpaiMemory {
        self.memory
    }

    /// The native buffer of input `index` (the tensor's bytes, without LPAI's padding), to fill before
    /// [`Graph::execute`]; `None` while a started frame reads it (one input set and a frame in flight).
    pub fn input_bytes_mut(&mut self, index: usize) -> Option<&mut [u8]> {
        self.refuse_running_inputs().ok()?;
        let bytes = TensorSize::of(self.inputs.get(index)?)?.bytes;
        self.input_slice(index, bytes)
    }

    /// Input `index`'s native buffer, `bytes` long (its tensor's size, which the caller has just read), or
    /// shorter if its `dataSize` is. The caller has refused a running frame (`refuse_running_inputs`).
    fn input_slice(&mut self, index: usize, bytes: usize) -> Option<&mut [u8]> {
        let buffer = client_buffer(self.inputs.get(index)?)?;
        // SAFETY: the buffer is an arena allocation of at least `dataSize` ≥ `bytes` bytes owned by this graph for
        // 'a; `&mut self` makes this borrow the only one.
        Some(unsafe { core::slice::from_raw_parts_mut(buffer.data.cast::<u8>(), bytes.min(buffer.data_size as usize)) })
    }

    /// The native buffer of output `index` (the tensor's bytes, without LPAI's padding), valid after
    /// [`Graph::execute`]; `None` while a started frame may write it.
    pub fn output_bytes(&self, index: usize) -> Option<&[u8]> {
        self.refuse_in_flight(Message::RefusedReadingOutput).ok()?;
        self.output_slice(index, TensorSize::of(self.outputs.get(index)?)?.bytes)
    }

    /// Output `index`'s native buffer, `bytes` long (its tensor's size, which the caller has just read), or
    /// shorter if its `dataSize` is. The caller has refused a frame in flight (`refuse_in_flight`).
    fn output_slice(&self, index: usize, bytes: usize) -> Option<&[u8]> {
        let buffer = client_buffer(self.outputs.get(index)?)?;
        // SAFETY: as in `input_slice`; shared access through `&self`.
        Some(unsafe { core::slice::from_raw_parts(buffer.data.cast::<u8>(), bytes.min(buffer.data_size as usize)) })
    }

    /// Input `index`'s native buffer as the pointer the backend itself is given, and the tensor's bytes (without
    /// LPAI's padding): for callers (the C embedding API) that keep it across executes. No reference is made, so
    /// the backend's own accesses never invalidate it; reading or writing it while an execute runs is the
    /// caller's mistake.
    pub fn input_buffer(&self, index: usize) -> Option<(NonNull<u8>, usize)> {
        raw_buffer(self.inputs.get(index)?)
    }

    /// Output `index`'s native buffer as the pointer the backend itself is given, and the tensor's bytes: as
    /// [`Graph::input_buffer`].
    pub fn output_buffer(&self, index: usize) -> Option<(NonNull<u8>, usize)> {
        raw_buffer(self.outputs.get(index)?)
    }

    /// Fills input `index` from native bytes.
    pub fn write_input(&mut self, index: usize, native: &[u8]) -> Result<(), RuntimeError> {
        self.refuse_running_inputs()?;
        let expected = self.input_size(index).ok_or(RuntimeError::NoSuchTensor { index })?.bytes;
        if native.len() != expected {
            return Err(RuntimeError::TensorSize { tensor: self.input_name(index), expected, actual: native.len() });
        }
        let buffer = self.input_slice(index, expected).ok_or(RuntimeError::NoSuchTensor { index })?;
        lpai_direct::codec::copy_prefix(buffer, native);
        Ok(())
    }

    /// Fills input `index` from float32 values (little-endian bytes), quantizing with the tensor's own
    /// scale and offset.
    pub fn write_input_float(&mut self, index: usize, float_bytes: &[u8]) -> Result<(), RuntimeError> {
        self.refuse_running_inputs()?;
        // The size and encoding only: the name is read for an error alone.
        let tensor = self.inputs.get(index).ok_or(RuntimeError::NoSuchTensor { index })?;
        let size = TensorSize::of(tensor).ok_or(RuntimeError::NoSuchTensor { index })?;
        let Some(encoding) = encoding_of(tensor) else {
            let data_type = self.input(index).map_or(0, |info| info.data_type.0);
            return Err(RuntimeError::UnsupportedDataType { tensor: self.input_name(index), data_type });
        };
        let buffer = self.input_slice(index, size.bytes).ok_or(RuntimeError::NoSuchTensor { index })?;
        if !quantize::quantize(encoding, float_bytes, buffer) {
            let (expected, actual) = (size.elements * 4, float_bytes.len());
            return Err(RuntimeError::TensorSize { tensor: self.input_name(index), expected, actual });
        }
        Ok(())
    }

    /// Reads output `index` as float32 values (little-endian bytes), dequantizing with its scale and offset.
    pub fn read_output_float(&self, index: usize, float_bytes: &mut [u8]) -> Result<(), RuntimeError> {
        self.refuse_in_flight(Message::RefusedReadingOutput)?;
        // The size and encoding only: the name is read for an error alone.
        let tensor = self.outputs.get(index).ok_or(RuntimeError::NoSuchTensor { index })?;
        let size = TensorSize::of(tensor).ok_or(RuntimeError::NoSuchTensor { index })?;
        let name = || name_of(self.output(index).map_or("?", |info| info.name));
        let Some(encoding) = encoding_of(tensor) else {
            let data_type = self.output(index).map_or(0, |info| info.data_type.0);
            return Err(RuntimeError::UnsupportedDataType { tensor: name(), data_type });
        };
        let native = self.output_slice(index, size.bytes).ok_or(RuntimeError::NoSuchTensor { index })?;
        if !quantize::dequantize(encoding, native, float_bytes) {
            let expected = size.elements * 4;
            return Err(RuntimeError::TensorSize { tensor: name(), expected, actual: float_bytes.len() });
        }
        Ok(())
    }

    fn input_name(&self, index: usize) -> super::error::Name {
        name_of(self.input(index).map_or("?", |info| info.name))
    }

    /// One graphExecute call on the current input buffers: `Ok(true)` when the outputs are ready, `Ok(false)`
    /// when the backend answered EARLY_TERMINATION (LPAI: feed the next frame, then call again).
    fn execute_call(&mut self) -> Result<bool, RuntimeError> {
        self.refuse_in_flight(Message::RefusedSynchronousExecute)?;
        let execute = require(self.table.graph_execute, Message::QnnGraphExecute)?;
        // SAFETY: the tensor arrays and their client buffers live in the arena for 'a; counts match.
        let status = unsafe {
            execute(
                self.handle,
                self.inputs.as_ptr(),
                self.inputs.len() as u32,
                self.outputs.as_mut_ptr(),
                self.outputs.len() as u32,
                self.profile,
                ptr::null_mut(),
            )
        };
        // Success without the call (a frame's every packet counts); every other code is `outcome`'s.
        match qnn::error::code(status) {
            0 => Ok(true),
            code => self.outcome(code, Message::QnnGraphExecute),
        }
    }

    /// What an execution's QNN code means: `Ok(true)` ready, `Ok(false)` EARLY_TERMINATION, else the error
    /// (tensors a metadata record described and the backend refused are the record's mismatch).
    fn outcome(&self, code: u32, call: Message) -> Result<bool, RuntimeError> {
        match code {
            0 => Ok(true),
            GRAPH_ERROR_EARLY_TERMINATION => Ok(false),
            GRAPH_ERROR_INVALID_TENSOR if self.from_record => Err(RuntimeError::RecordTensorsRefused {
                graph: name_of(self.name()),
                code: GRAPH_ERROR_INVALID_TENSOR,
            }),
            code => Err(RuntimeError::Qnn { call, code }),
        }
    }

    /// The bare graphExecute call's arguments ([`RawExecute`]); `None` when the backend has no graphExecute.
    pub fn raw_execute(&mut self) -> Option<RawExecute> {
        Some(RawExecute {
            function: self.table.graph_execute?,
            graph: self.handle,
            inputs: self.inputs.as_ptr(),
            input_count: u32::try_from(self.inputs.len()).ok()?,
            outputs: self.outputs.as_mut_ptr(),
            output_count: u32::try_from(self.outputs.len()).ok()?,
        })
    }

    /// For streaming callers (a frame at a time): runs graphExecute once and answers `Ok(None)` when the
    /// backend needs more frames before the outputs are ready (EARLY_TERMINATION); allocates nothing.
    pub fn execute_frame(&mut self) -> Result<Option<Execution>, RuntimeError> {
        let start = Current::now_ticks();
        let ready = self.execute_call()?;
        Ok(ready.then(|| Execution { ticks: Current::now_ticks().saturating_sub(start), attempts: 1 }))
    }

    /// Runs the graph on the current input buffers, calling graphExecute again on the same inputs while the
    /// backend answers EARLY_TERMINATION (as qnn-net-run does), up to [`MAX_EXECUTE_ATTEMPTS`]; allocates nothing.
    pub fn execute(&mut self) -> Result<Execution, RuntimeError> {
        let start = Current::now_ticks();
        for attempts in 1..=MAX_EXECUTE_ATTEMPTS {
            if self.execute_call()? {
                return Ok(Execution { ticks: Current::now_ticks().saturating_sub(start), attempts });
            }
        }
        Err(RuntimeError::NeverCompleted { attempts: MAX_EXECUTE_ATTEMPTS })
    }
}

/// A tensor's client buffer pointer and its bytes (at most `dataSize`).
fn raw_buffer(tensor: &Tensor) -> Option<(NonNull<u8>, usize)> {
    let (buffer, bytes) = (client_buffer(tensor)?, TensorSize::of(tensor)?.bytes);
    Some((NonNull::new(buffer.data.cast::<u8>())?, bytes.min(buffer.data_size as usize)))
}

fn client_buffer(tensor: &Tensor) -> Option<ClientBuffer> {
    let common = tensor.common()?;
    if common.mem_type != TensorMemType::RAW {
        return None;
    }
    // SAFETY: RAW memory means the union holds a client buffer (this module sets every tensor so).
    Some(unsafe { common.memory.client_buf })
}
