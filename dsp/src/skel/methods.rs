//! The IDL methods, each on an open session and a validated call. Failures record a message for
//! `last_error` and answer an AEE code.

use super::state::{Libraries, LoadedContext, Path, Session, Settings, DEFAULT_HEADROOM, MAX_ARENA_BYTES};
use super::state::{MAX_CONTEXTS, PATH_BYTES};
use crate::platform::{self, Current, Level, Platform};
use crate::runtime::quantize::Encoding;
use crate::runtime::{Arena, Backend, BackendOptions, BinarySource, Context, ContextOptions, Graph, Island};
use crate::runtime::{RuntimeError, SystemLibrary};
use lpai_direct::aee::{EBADPARM, EBADSTATE, EFAILED, ENOMEMORY, ENOSUCHSYMBOL, EUNSUPPORTED};
use lpai_direct::codec::{self, Decoded};
use lpai_direct::qnn::{lpai, Priority, ProfileLevel};
use lpai_direct::wire::{io_bytes, EventRecord, GraphRecord, TensorRecord, Writer, MAX_RANK};
use lpai_direct::wire::{EXECUTE_FLOAT_INPUTS, EXECUTE_FLOAT_OUTPUTS, LOAD_ISLAND, LOAD_PERSISTENT_BINARY};
use lpai_direct::wire::{PRIORITY_UNCHANGED, TARGET_DEFAULT};

/// Runs method `id`.
pub fn dispatch(session: &mut Session, id: u32, call: &mut Decoded<'_>) -> Result<(), u32> {
    if id != codec::last_error::ID {
        session.last_error.clear();
    }
    match id {
        codec::configure::ID => configure(session, call),
        codec::load::ID => load(session, call, false),
        codec::load_file::ID => load(session, call, true),
        codec::describe::ID => describe(session, call),
        codec::set_performance::ID => set_performance(session, call),
        codec::execute::ID => execute(session, call),
        codec::run_job::ID => {
            session.fail(&crate::message!("run_job: net-run jobs on the DSP are not implemented in this skel yet"));
            Err(EUNSUPPORTED)
        }
        codec::profile::ID => profile(session, call),
        codec::unload::ID => unload(session, call),
        codec::last_error::ID => last_error(session, call),
        _ => Err(EUNSUPPORTED),
    }
}

/// The AEE code for a runtime error.
pub fn aee_code(error: &RuntimeError) -> u32 {
    match error {
        RuntimeError::Arena(_) => ENOMEMORY,
        RuntimeError::MissingSymbol(_) => ENOSUCHSYMBOL,
        RuntimeError::UnsupportedApi { .. }
        | RuntimeError::UnsupportedDataType { .. }
        | RuntimeError::MissingFunction(_) => EUNSUPPORTED,
        RuntimeError::MalformedBinary { .. }
        | RuntimeError::BinarySize(_)
        | RuntimeError::TensorSize { .. }
        | RuntimeError::NoSuchGraph
        | RuntimeError::NoSuchTensor { .. } => EBADPARM,
        _ => EFAILED,
    }
}

/// QNN's log level numbers (0 off, 1 error .. 5 debug) as the platform's; `None` is off.
fn log_level(qnn_level: u32) -> Option<Level> {
    match qnn_level {
        0 => None,
        1 => Some(Level::Error),
        2 => Some(Level::Warn),
        3 | 4 => Some(Level::Info),
        _ => Some(Level::Debug),
    }
}

fn configure(session: &mut Session, call: &Decoded<'_>) -> Result<(), u32> {
    let (Some(backend), Some(system_library)) = (
        Path::copy(call.string(codec::configure::BACKEND)?),
        Path::copy(call.string(codec::configure::SYSTEM_LIBRARY)?),
    ) else {
        session.fail(&crate::message!("configure: a library path is longer than {} bytes", PATH_BYTES - 1));
        return Err(EBADPARM);
    };
    let settings = Settings {
        backend,
        system_library,
        profiling_level: call.u32(codec::configure::PROFILING_LEVEL)?,
        lpai_hw_version: call.u32(codec::configure::LPAI_HW_VERSION)?,
        lpai_target: call.u32(codec::configure::LPAI_TARGET)?,
        arena_bytes: call.u32(codec::configure::ARENA_BYTES)? as usize,
    };
    if settings.arena_bytes > MAX_ARENA_BYTES {
        let asked = settings.arena_bytes;
        session.fail(&crate::message!(
            "configure: arena_bytes {} is more than this skel allows ({})",
            asked,
            MAX_ARENA_BYTES
        ));
        return Err(EBADPARM);
    }
    let old = &session.settings;
    let libraries_change = settings.backend.as_c_str() != old.backend.as_c_str()
        || settings.system_library.as_c_str() != old.system_library.as_c_str()
        || settings.lpai_hw_version != old.lpai_hw_version
        || settings.lpai_target != old.lpai_target;
    if libraries_change && session.libraries().is_some() {
        if session.has_contexts() {
            session.fail(&crate::message!(
                "configure: unload every context before changing the backend, system library or LPAI hardware"
            ));
            return Err(EBADSTATE);
        }
        session.set_libraries(None);
    }
    platform::set_log_level(log_level(call.u32(codec::configure::LOG_LEVEL)?));
    session.settings = settings;
    ensure_libraries(session)
}

fn ensure_libraries(session: &mut Session) -> Result<(), u32> {
    if session.libraries().is_some() {
        return Ok(());
    }
    let settings = session.settings;
    let mut options = BackendOptions::default();
    if settings.lpai_hw_version != 0 {
        options.lpai_hw_version = lpai::HwVersion(settings.lpai_hw_version);
    }
    if settings.lpai_target != TARGET_DEFAULT {
        options.lpai_target = lpai::Target(settings.lpai_target);
    }
    let backend = Backend::load(settings.backend.as_c_str(), &options).map_err(|error| {
        session.fail(&crate::message!("backend {}: {}", settings.backend.as_c_str().to_str().unwrap_or("?"), error));
        aee_code(&error)
    })?;
    let system = SystemLibrary::load(settings.system_library.as_c_str()).map_err(|error| {
        let path = settings.system_library.as_c_str().to_str().unwrap_or("?");
        session.fail(&crate::message!("system library {}: {}", path, error));
        aee_code(&error)
    })?;
    if session.set_libraries(Some(Libraries { backend, system })) {
        Ok(())
    } else {
        Err(EBADSTATE)
    }
}

fn context_id(slot: usize, serial: u32) -> i32 {
    ((serial << 4) | slot as u32) as i32
}

fn loaded(session: &mut Session, id: i32) -> Result<&mut Context<'static>, u32> {
    let (slot, serial) = ((id as u32 & 0xF) as usize, id as u32 >> 4);
    let present = session.contexts.get(slot).and_then(Option::as_ref);
    if id < 0 || !present.is_some_and(|c| c.serial == serial && c.context.is_some()) {
        session.fail(&crate::message!("no loaded context has id {}", id));
        return Err(EBADPARM);
    }
    session.contexts.get_mut(slot).and_then(Option::as_mut).and_then(|c| c.context.as_mut()).ok_or(EBADPARM)
}

fn graph_of(session: &mut Session, id: i32, graph: u32) -> Result<&mut Graph<'static>, u32> {
    let count = loaded(session, id)?.graph_count();
    if graph as usize >= count {
        session.fail(&crate::message!("context {} has {} graph(s); there is no graph {}", id, count, graph));
        return Err(EBADPARM);
    }
    loaded(session, id)?.graph_mut(graph as usize).ok_or(EBADPARM)
}

fn load(session: &mut Session, call: &mut Decoded<'_>, from_file: bool) -> Result<(), u32> {
    let (flags, source) = if from_file {
        (call.u32(codec::load_file::FLAGS)?, BinarySource::File(call.string(codec::load_file::PATH)?))
    } else {
        (call.u32(codec::load::FLAGS)?, BinarySource::Bytes(call.bytes(codec::load::BINARY)?))
    };
    ensure_libraries(session)?;
    let Some(slot) = session.contexts.iter().position(Option::is_none) else {
        session
            .fail(&crate::message!("all {} context slots of this handle are in use; unload one first", MAX_CONTEXTS));
        return Err(ENOMEMORY);
    };
    let binary_bytes = match source {
        BinarySource::Bytes(bytes) => bytes.len(),
        BinarySource::File(path) => match Current::file_size(path) {
            Ok(size) => size as usize,
            Err(error) => {
                session.fail(&crate::message!("context binary {}: {}", path.to_str().unwrap_or("?"), error));
                return Err(EFAILED);
            }
        },
    };
    let settings = session.settings;
    let memory_bytes =
        if settings.arena_bytes > 0 { settings.arena_bytes } else { binary_bytes.saturating_add(DEFAULT_HEADROOM) };
    if memory_bytes > MAX_ARENA_BYTES {
        session.fail(&crate::message!(
            "a context binary of {} bytes needs more arena than this skel allows ({} bytes)",
            binary_bytes,
            MAX_ARENA_BYTES
        ));
        return Err(ENOMEMORY);
    }
    let Ok(memory) = Current::allocate(memory_bytes) else {
        session.fail(&crate::message!("cannot reserve {} bytes for the context's arena", memory_bytes));
        return Err(ENOMEMORY);
    };
    // SAFETY: the allocation is `memory_bytes` long and owned by the LoadedContext built below (or released
    // right here on failure); no other reference to it exists.
    let buffer: &'static mut [u8] = unsafe { core::slice::from_raw_parts_mut(memory.as_ptr(), memory_bytes) };
    let arena = Arena::new(buffer);
    let Some(libraries) = session.libraries() else {
        // SAFETY: nothing uses the memory.
        unsafe { Current::release(memory, memory_bytes) };
        return Err(EBADSTATE);
    };
    let options = ContextOptions {
        persistent_binary: flags & LOAD_PERSISTENT_BINARY != 0,
        island: if flags & LOAD_ISLAND != 0 { Island::AllGraphs } else { Island::Off },
        profiling: (settings.profiling_level != 0).then_some(ProfileLevel(settings.profiling_level)),
        ..ContextOptions::default()
    };
    match Context::load(&libraries.backend, &libraries.system, &arena, source, &options) {
        Ok(context) => {
            session.loads = session.loads.wrapping_add(1) & 0x07FF_FFFF;
            let graph_count = context.graph_count() as u32;
            let serial = session.loads;
            let arena_used = arena.used();
            session.contexts[slot] =
                Some(LoadedContext { context: Some(context), memory, memory_bytes, arena_used, serial });
            let (id_index, count_index) = if from_file {
                (codec::load_file::CONTEXT_ID, codec::load_file::GRAPH_COUNT)
            } else {
                (codec::load::CONTEXT_ID, codec::load::GRAPH_COUNT)
            };
            call.set_i32(id_index, context_id(slot, serial))?;
            call.set_u32(count_index, graph_count)
        }
        Err(error) => {
            // SAFETY: the failed load dropped everything that borrowed the memory.
            unsafe { Current::release(memory, memory_bytes) };
            session.fail(&crate::message!("{}", error));
            Err(aee_code(&error))
        }
    }
}

fn scale_and_offset(encoding: Option<Encoding>) -> (f32, i32) {
    match encoding {
        Some(
            Encoding::Unsigned8 { scale, offset }
            | Encoding::Unsigned16 { scale, offset }
            | Encoding::Signed8 { scale, offset }
            | Encoding::Signed16 { scale, offset },
        ) => (scale, offset),
        _ => (1.0, 0),
    }
}

fn tensor_record<'t>(info: &crate::runtime::TensorInfo<'t>) -> TensorRecord<'t> {
    let mut dimensions = [0u32; MAX_RANK];
    for (slot, dimension) in dimensions.iter_mut().zip(info.dimensions) {
        *slot = *dimension;
    }
    let (scale, offset) = scale_and_offset(info.encoding);
    TensorRecord {
        name: info.name,
        id: info.id,
        data_type: info.data_type.0,
        rank: info.dimensions.len().min(MAX_RANK) as u32,
        dimensions,
        scale,
        offset,
        native_bytes: info.bytes as u32,
        elements: info.elements as u32,
        convertible: info.encoding.is_some(),
    }
}

fn describe(session: &mut Session, call: &mut Decoded<'_>) -> Result<(), u32> {
    let id = call.i32(codec::describe::CONTEXT_ID)?;
    let index = call.u32(codec::describe::GRAPH)?;
    let out = call.take_rout_bytes(codec::describe::DESCRIPTION)?;
    let slot = (id as u32 & 0xF) as usize;
    let (arena_used, arena_capacity) =
        session.contexts.get(slot).and_then(Option::as_ref).map_or((0, 0), |c| (c.arena_used, c.memory_bytes));
    let graph = graph_of(session, id, index)?;
    let mut writer = Writer::new(out);
    let memory = graph.lpai_memory();
    writer.graph(&GraphRecord {
        name: graph.name(),
        inputs: graph.input_count() as u32,
        outputs: graph.output_count() as u32,
        scratch_bytes: memory.scratch as u32,
        persistent_bytes: memory.persistent as u32,
        arena_used: arena_used as u32,
        arena_capacity: arena_capacity as u32,
        clock_hz: u32::try_from(Current::TICKS_PER_SECOND).unwrap_or(u32::MAX),
    });
    for info in (0..graph.input_count()).filter_map(|i| graph.input(i)) {
        writer.tensor(&tensor_record(&info));
    }
    for info in (0..graph.output_count()).filter_map(|i| graph.output(i)) {
        writer.tensor(&tensor_record(&info));
    }
    call.set_u32(codec::describe::DESCRIPTION_BYTES, writer.needed() as u32)
}

fn set_performance(session: &mut Session, call: &Decoded<'_>) -> Result<(), u32> {
    use codec::set_performance as m;
    let perf = lpai::PerfCfg {
        fps: call.u32(m::FPS)?,
        ftrt_ratio: call.u32(m::FTRT_RATIO)?,
        client_type: lpai::ClientPerfType(call.u32(m::CLIENT_TYPE)?),
    };
    let affinity = lpai::CoreAffinity {
        affinity: lpai::CoreAffinityType(call.u32(m::AFFINITY)?),
        core_selection: call.u32(m::CORE_SELECTION)?,
    };
    let priority = match call.u32(m::PRIORITY)? {
        PRIORITY_UNCHANGED => None,
        value => Some(Priority(value)),
    };
    let graph = graph_of(session, call.i32(m::CONTEXT_ID)?, call.u32(m::GRAPH)?)?;
    let result = graph.set_performance(perf, affinity, priority);
    result.map_err(|error| {
        session.fail(&crate::message!("set_performance: {}", error));
        aee_code(&error)
    })
}

fn execute(session: &mut Session, call: &mut Decoded<'_>) -> Result<(), u32> {
    use codec::execute as m;
    let flags = call.u32(m::FLAGS)?;
    let (float_in, float_out) = (flags & EXECUTE_FLOAT_INPUTS != 0, flags & EXECUTE_FLOAT_OUTPUTS != 0);
    let inputs = call.bytes(m::INPUTS)?;
    let outputs = call.take_rout_bytes(m::OUTPUTS)?;
    let graph = graph_of(session, call.i32(m::CONTEXT_ID)?, call.u32(m::GRAPH)?)?;
    let size = |info: crate::runtime::TensorInfo<'_>, float: bool| io_bytes(float, info.elements, info.bytes);
    let needed_in: usize = (0..graph.input_count()).filter_map(|i| graph.input(i)).map(|t| size(t, float_in)).sum();
    let needed_out: usize = (0..graph.output_count()).filter_map(|i| graph.output(i)).map(|t| size(t, float_out)).sum();
    if inputs.len() != needed_in || outputs.len() < needed_out {
        let (given_in, given_out) = (inputs.len(), outputs.len());
        session.fail(&crate::message!(
            "execute: got {} input bytes and room for {} output bytes; the graph takes {} and gives {}",
            given_in,
            given_out,
            needed_in,
            needed_out
        ));
        return Err(EBADPARM);
    }
    let result = run(graph, inputs, outputs, float_in, float_out);
    match result {
        Ok((execution, written)) => {
            call.set_u64(m::DSP_TICKS, execution.ticks)?;
            call.set_u32(m::ATTEMPTS, execution.attempts)?;
            call.set_u32(m::OUTPUTS_BYTES, written as u32)
        }
        Err(error) => {
            session.fail(&crate::message!("execute: {}", error));
            Err(aee_code(&error))
        }
    }
}

/// Fills the inputs, executes, writes the outputs back to back; returns the execution and bytes written.
fn run(
    graph: &mut Graph<'static>,
    inputs: &[u8],
    outputs: &mut [u8],
    float_in: bool,
    float_out: bool,
) -> Result<(crate::runtime::Execution, usize), RuntimeError> {
    let mut offset = 0usize;
    for index in 0..graph.input_count() {
        let info = graph.input(index).ok_or(RuntimeError::NoSuchTensor { index })?;
        let bytes = io_bytes(float_in, info.elements, info.bytes);
        let end = offset.checked_add(bytes).ok_or(RuntimeError::NoSuchTensor { index })?;
        let part = inputs.get(offset..end).ok_or(RuntimeError::NoSuchTensor { index })?;
        if float_in {
            graph.write_input_float(index, part)?;
        } else {
            graph.write_input(index, part)?;
        }
        offset = end;
    }
    let execution = graph.execute()?;
    let mut written = 0usize;
    for index in 0..graph.output_count() {
        let info = graph.output(index).ok_or(RuntimeError::NoSuchTensor { index })?;
        let bytes = io_bytes(float_out, info.elements, info.bytes);
        let end = written.checked_add(bytes).ok_or(RuntimeError::NoSuchTensor { index })?;
        let part = outputs.get_mut(written..end).ok_or(RuntimeError::NoSuchTensor { index })?;
        if float_out {
            graph.read_output_float(index, part)?;
        } else {
            codec::copy_prefix(part, graph.output_bytes(index).ok_or(RuntimeError::NoSuchTensor { index })?);
        }
        written = end;
    }
    Ok((execution, written))
}

fn profile(session: &mut Session, call: &mut Decoded<'_>) -> Result<(), u32> {
    let id = call.i32(codec::profile::CONTEXT_ID)?;
    let out = call.take_rout_bytes(codec::profile::EVENTS)?;
    let context = loaded(session, id)?;
    let mut count = 0u32;
    let mut writer = Writer::new(out);
    let counted = context.profile_events(|_| count += 1);
    writer.profile(count);
    let written = counted.and_then(|()| {
        context.profile_events(|event| {
            writer.event(&EventRecord {
                event_type: event.event_type,
                unit: event.unit,
                value: event.value,
                depth: event.depth,
                identifier: event.identifier,
            })
        })
    });
    if let Err(error) = written {
        session.fail(&crate::message!("profile: {}", error));
        return Err(aee_code(&error));
    }
    call.set_u32(codec::profile::EVENTS_BYTES, writer.needed() as u32)
}

fn unload(session: &mut Session, call: &Decoded<'_>) -> Result<(), u32> {
    let id = call.i32(codec::unload::CONTEXT_ID)?;
    loaded(session, id)?;
    let slot = (id as u32 & 0xF) as usize;
    drop(session.contexts.get_mut(slot).and_then(Option::take));
    Ok(())
}

fn last_error(session: &mut Session, call: &mut Decoded<'_>) -> Result<(), u32> {
    let out = call.take_rout_bytes(codec::last_error::MESSAGE)?;
    let message = session.last_error.as_bytes();
    codec::copy_prefix(out, message);
    call.set_u32(codec::last_error::MESSAGE_BYTES, message.len() as u32)
}
