//! The IDL methods, each on an open session and a validated call. Failures record a message for
//! `last_error` and answer a [`SkelError`].

use super::error::SkelError;
use super::session::{fail, Path, Session, PATH_BYTES};
use crate::platform::{self, Current, Level, Platform, PlatformError, Shared};
use crate::platform::{Line, Message, MethodId, Say};
use crate::runtime::error::OpPackageRefused;
use crate::runtime::quantize::Encoding;
use crate::runtime::{BackendOptions, Execution, Graph, TensorInfo, TensorSize};
use crate::runtime::{Libraries, LibraryRole, OpenError, RuntimeError};
use crate::say;
use core::ffi::CStr;
use lpai_direct::aee::{EBADPARM, EBADSTATE, EFAILED};
use lpai_direct::codec::{self, Decoded};
use lpai_direct::qnn::{lpai, Priority};
use lpai_direct::version::{Component, Record, Version, BUILD_ID};
use lpai_direct::wire::{io_bytes, BackendRecord, EventRecord, GraphRecord, TensorRecord, Writer, MAX_RANK};
use lpai_direct::wire::{EXECUTE_FLOAT_INPUTS, EXECUTE_FLOAT_OUTPUTS};
use lpai_direct::wire::{PRIORITY_UNCHANGED, TARGET_DEFAULT};

/// Largest arena one context may take: a caller must not be able to starve the PD's heap (the audio PD's is a
/// few MB).
pub(crate) const MAX_ARENA_BYTES: usize = if cfg!(target_arch = "hexagon") { 16 << 20 } else { 1 << 30 };
/// Arena headroom beyond the binary's size when `configure` leaves the arena size to the skel.
pub(super) const DEFAULT_HEADROOM: usize = if cfg!(target_arch = "hexagon") { 2 << 20 } else { 64 << 20 };

pub(super) type Answer = Result<(), SkelError>;

/// Records `error` (after the name of `method`, the call it ended) and answers its code.
pub(super) fn runtime_failure(session: &mut Session, method: MethodId, error: &RuntimeError) -> SkelError {
    fail!(session, Message::StepFailed, method, error);
    SkelError::of(error)
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

#[inline(never)]
pub(super) fn configure(session: &mut Session, call: &Decoded<'_>) -> Answer {
    use codec::configure as m;
    let (backend, system_library) = (call.string(m::BACKEND)?, call.string(m::SYSTEM_LIBRARY)?);
    if !Path::fits(backend) || !Path::fits(system_library) {
        fail!(session, Message::ConfigurePathTooLong, PATH_BYTES - 1);
        return Err(SkelError::aee(EBADPARM));
    }
    let arena_bytes = call.u32(m::ARENA_BYTES)? as usize;
    if arena_bytes > MAX_ARENA_BYTES {
        fail!(session, Message::ConfigureArenaTooLarge, arena_bytes, MAX_ARENA_BYTES);
        return Err(SkelError::aee(EBADPARM));
    }
    let (lpai_hw_version, lpai_target) = (call.u32(m::LPAI_HW_VERSION)?, call.u32(m::LPAI_TARGET)?);
    let old = &session.settings;
    let libraries_change = backend != old.backend.as_c_str()
        || system_library != old.system_library.as_c_str()
        || lpai_hw_version != old.lpai_hw_version
        || lpai_target != old.lpai_target;
    if libraries_change && session.libraries().is_some() {
        if session.has_contexts() {
            fail!(session, Message::ConfigureWithContexts);
            return Err(SkelError::aee(EBADSTATE));
        }
        session.set_libraries(None);
    }
    platform::set_log_level(log_level(call.u32(m::LOG_LEVEL)?));
    let settings = &mut session.settings;
    settings.backend.set(backend);
    settings.system_library.set(system_library);
    settings.profiling_level = call.u32(m::PROFILING_LEVEL)?;
    settings.lpai_hw_version = lpai_hw_version;
    settings.lpai_target = lpai_target;
    settings.arena_bytes = arena_bytes;
    ensure_libraries(session)
}

/// Loads the configured backend and system library (under the vendor-calls lock) unless loaded already.
pub(super) fn ensure_libraries(session: &mut Session) -> Answer {
    if session.libraries().is_some() {
        return Ok(());
    }
    let settings = &session.settings;
    let mut options = BackendOptions::default();
    if settings.lpai_hw_version != 0 {
        options.lpai_hw_version = lpai::HwVersion(settings.lpai_hw_version);
    }
    if settings.lpai_target != TARGET_DEFAULT {
        options.lpai_target = lpai::Target(settings.lpai_target);
    }
    let system_library = Some(settings.system_library.as_c_str()).filter(|path| !path.is_empty());
    let error = match Libraries::open(settings.backend.as_c_str(), system_library, &options) {
        Ok(libraries) => match Shared::new(libraries) {
            Ok(shared) => {
                session.set_libraries(Some(shared));
                return Ok(());
            }
            Err(_) => {
                let error =
                    RuntimeError::Platform { what: Message::StepKeepingLibraries, error: PlatformError::Failed(12) };
                OpenError { library: LibraryRole::Backend, error }
            }
        },
        Err(error) => error,
    };
    session.fail_library(error.library, &error.error);
    Err(SkelError::of(&error.error))
}

/// The interface the skel says it speaks: this build's, or 1.0 in the test-only `older-interface` build, which
/// stands for a skel of an older release (`tests/virtual_device.rs` finds it first on the DSP's library path).
#[cfg(not(feature = "older-interface"))]
const INTERFACE: Version = lpai_direct::version::INTERFACE;
#[cfg(feature = "older-interface")]
const INTERFACE: Version = Version { major: 1, minor: 0 };

/// The skel's version record (`lpai_direct::version`).
static RECORD: Record = Record::new(INTERFACE, Component::Skel, crate::build_config::HEX_VERSION, BUILD_ID);

/// Its bytes, in their own section of the shipped `.so` so that `stage` and `doctor` read them from the file;
/// [`version`] answers the same record.
#[cfg(feature = "skel")]
#[used]
#[link_section = ".lpai_direct.version"]
static VERSION_RECORD: [u8; lpai_direct::version::RECORD_BYTES] = RECORD.to_bytes();

/// `version`: the skel's own record.
#[inline(never)]
pub(super) fn version(call: &mut Decoded<'_>) -> Answer {
    use codec::version as m;
    let build_id = RECORD.build_id_bytes();
    let out = call.take_rout_bytes(m::BUILD_ID)?;
    lpai_direct::codec::copy_prefix(out, build_id);
    call.set_u32(m::INTERFACE_MAJOR, RECORD.interface.major)?;
    call.set_u32(m::INTERFACE_MINOR, RECORD.interface.minor)?;
    call.set_u32(m::HEX_VERSION, u32::from(RECORD.hex_version))?;
    Ok(call.set_u32(m::BUILD_ID_BYTES, build_id.len() as u32)?)
}

/// `probe`: the configured libraries, loaded as a load would load them, described.
#[inline(never)]
pub(super) fn probe(session: &mut Session, call: &mut Decoded<'_>) -> Answer {
    ensure_libraries(session)?;
    report_backend(session, call)
}

/// `register_op_package`: registers a package with the session's backend (its libraries loaded first), before any
/// load; a refusal is recorded naming the package, its provider and QNN's error. Its own frame holds only the
/// arguments while the libraries open; the checks and messages are out of line.
#[inline(never)]
pub(super) fn register_op_package(session: &mut Session, call: &Decoded<'_>) -> Answer {
    use codec::register_op_package as m;
    let (path, provider) = (call.string(m::PATH)?, call.string(m::INTERFACE_PROVIDER)?);
    let target = call.string(m::TARGET)?;
    refuse_op_package(session, path, provider, target)?;
    ensure_libraries(session)?;
    register_on_libraries(session, path, provider, target)
}

/// Why `register_op_package` must not go on, recorded: a string too long to keep, an empty path or provider, a
/// loaded context.
#[inline(never)]
fn refuse_op_package(session: &mut Session, path: &CStr, provider: &CStr, target: &CStr) -> Answer {
    if ![path, provider, target].into_iter().all(Path::fits) {
        fail!(session, Message::OpPackagePathTooLong, PATH_BYTES - 1);
        return Err(SkelError::aee(EBADPARM));
    }
    if path.is_empty() || provider.is_empty() {
        fail!(session, Message::OpPackageEmpty);
        return Err(SkelError::aee(EBADPARM));
    }
    if session.has_contexts() {
        let path = path.to_str().unwrap_or("?");
        fail!(session, Message::OpPackageAfterLoad, path);
        return Err(SkelError::aee(EBADSTATE));
    }
    Ok(())
}

/// Registers the package on the session's libraries, which `ensure_libraries` opened; records a refusal.
#[inline(never)]
fn register_on_libraries(session: &mut Session, path: &CStr, provider: &CStr, target: &CStr) -> Answer {
    let Some(libraries) = session.libraries() else { return Err(SkelError::aee(EBADSTATE)) };
    let target = Some(target).filter(|target| !target.is_empty());
    match libraries.register_op_package(path, provider, target) {
        Ok(()) => Ok(()),
        Err(error @ RuntimeError::OpPackage { code, .. }) => {
            let (path, provider) = (path.to_str().unwrap_or("?"), provider.to_str().unwrap_or("?"));
            let refused = OpPackageRefused { path, interface_provider: Some(provider), code };
            fail!(session, Message::OpPackageRegisterFailed, refused);
            Err(SkelError::of(&error))
        }
        Err(error) => Err(runtime_failure(session, MethodId(codec::register_op_package::ID), &error)),
    }
}

/// Writes `probe`'s report of the libraries `ensure_libraries` opened: out of line, so the report's locals (the
/// eNPU cores among them) are not on the stack under the libraries' opening.
#[inline(never)]
fn report_backend(session: &mut Session, call: &mut Decoded<'_>) -> Answer {
    use codec::probe as m;
    let out = call.take_rout_bytes(m::REPORT)?;
    let Some(libraries) = session.libraries() else { return Err(SkelError::aee(EBADSTATE)) };
    let info = libraries.backend().info();
    let three = |version: lpai_direct::qnn::Version| [version.major, version.minor, version.patch];
    let mut writer = Writer::new(out);
    writer.backend(&BackendRecord {
        provider: info.name.as_str(),
        backend_id: info.backend_id,
        core_api: three(info.core_api),
        backend_api: three(info.backend_api),
        build_id: libraries.backend().build_id(),
        system_api: libraries.system().map(|system| three(system.api_version())),
        enpu: libraries.backend().enpu_cores(),
    });
    let needed = writer.needed();
    Ok(call.set_u32(m::REPORT_BYTES, u32::try_from(needed).unwrap_or(u32::MAX))?)
}

/// Records that there is no context `id` and answers the code for it.
fn no_such_context(session: &mut Session, id: i32) -> SkelError {
    fail!(session, Message::NoSuchContext, id);
    SkelError::aee(EBADPARM)
}

/// Runs `work` on graph `index` of context `id`, or records why there is no such graph. Not generic: the methods
/// share one copy of the look-up and its refusals (`work` leaves what it answers in its captures).
#[inline(never)]
fn with_graph(session: &mut Session, id: i32, index: u32, work: &mut dyn FnMut(&mut Graph<'_>)) -> Answer {
    let Some(loaded) = session.context(id) else {
        return Err(no_such_context(session, id));
    };
    let found = loaded.with_context(|context| {
        let context = context.ok_or(0usize)?;
        let count = context.graph_count();
        context.graph_mut(index as usize).map(work).ok_or(count)
    });
    let Err(count) = found else { return Ok(()) };
    fail!(session, Message::NoSuchGraphIndex, id, count, index);
    Err(SkelError::aee(EBADPARM))
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

fn tensor_record<'t>(info: &TensorInfo<'t>) -> TensorRecord<'t> {
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
        native_bytes: u32::try_from(info.bytes).unwrap_or(u32::MAX),
        elements: u32::try_from(info.elements).unwrap_or(u32::MAX),
        convertible: info.encoding.is_some(),
    }
}

#[inline(never)]
pub(super) fn describe(session: &mut Session, call: &mut Decoded<'_>) -> Answer {
    use codec::describe as m;
    let (id, index) = (call.i32(m::CONTEXT_ID)?, call.u32(m::GRAPH)?);
    let out = call.take_rout_bytes(m::DESCRIPTION)?;
    let (arena_used, arena_capacity) =
        session.context(id).map_or((0, 0), |loaded| (loaded.arena_used(), loaded.arena_capacity()));
    let mut needed = 0;
    with_graph(session, id, index, &mut |graph| {
        let mut writer = Writer::new(&mut *out);
        let memory = graph.lpai_memory();
        writer.graph(&GraphRecord {
            name: graph.name(),
            inputs: graph.input_count() as u32,
            outputs: graph.output_count() as u32,
            scratch_bytes: u32::try_from(memory.scratch).unwrap_or(u32::MAX),
            persistent_bytes: u32::try_from(memory.persistent).unwrap_or(u32::MAX),
            arena_used: u32::try_from(arena_used).unwrap_or(u32::MAX),
            arena_capacity: u32::try_from(arena_capacity).unwrap_or(u32::MAX),
            clock_hz: u32::try_from(Current::TICKS_PER_SECOND).unwrap_or(u32::MAX),
        });
        for info in (0..graph.input_count()).filter_map(|i| graph.input(i)) {
            writer.tensor(&tensor_record(&info));
        }
        for info in (0..graph.output_count()).filter_map(|i| graph.output(i)) {
            writer.tensor(&tensor_record(&info));
        }
        needed = writer.needed();
    })?;
    Ok(call.set_u32(m::DESCRIPTION_BYTES, u32::try_from(needed).unwrap_or(u32::MAX))?)
}

#[inline(never)]
pub(super) fn set_performance(session: &mut Session, call: &Decoded<'_>) -> Answer {
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
    let (id, index) = (call.i32(m::CONTEXT_ID)?, call.u32(m::GRAPH)?);
    let mut result = Ok(());
    with_graph(session, id, index, &mut |graph| result = graph.set_performance(perf, affinity, priority))?;
    result.map_err(|error| runtime_failure(session, MethodId(codec::set_performance::ID), &error))
}

/// Why an execute did not run.
enum ExecuteFailure {
    /// The buffers do not fit the graph (bytes given in and out, bytes the graph takes and gives).
    Sizes { given_in: usize, given_out: usize, needed_in: Option<usize>, needed_out: Option<usize> },
    /// The runtime failed.
    Runtime(RuntimeError),
}

/// Bytes all of a graph's inputs (or outputs) take, native or as float32; `None` on overflow.
fn total_bytes(mut tensors: impl Iterator<Item = TensorSize>, float: bool) -> Option<usize> {
    tensors.try_fold(0usize, |total, size| total.checked_add(io_bytes(float, size.elements, size.bytes)?))
}

#[inline(never)]
pub(super) fn execute(session: &mut Session, call: &mut Decoded<'_>) -> Answer {
    use codec::execute as m;
    let flags = call.u32(m::FLAGS)?;
    let (float_in, float_out) = (flags & EXECUTE_FLOAT_INPUTS != 0, flags & EXECUTE_FLOAT_OUTPUTS != 0);
    let inputs = call.bytes(m::INPUTS)?;
    let outputs = call.take_rout_bytes(m::OUTPUTS)?;
    let (id, index) = (call.i32(m::CONTEXT_ID)?, call.u32(m::GRAPH)?);
    // The failure goes to a slot of its own, so the result that comes back on every call stays small (a runtime
    // error carries names: moving it with the result cost the success path four copies of 80 bytes and more).
    let (mut failure, mut done) = (None, None);
    with_graph(session, id, index, &mut |graph| {
        let needed_in = total_bytes((0..graph.input_count()).filter_map(|i| graph.input_size(i)), float_in);
        let needed_out = total_bytes((0..graph.output_count()).filter_map(|i| graph.output_size(i)), float_out);
        if needed_in != Some(inputs.len()) || needed_out.is_none_or(|needed| outputs.len() < needed) {
            let (given_in, given_out) = (inputs.len(), outputs.len());
            failure = Some(ExecuteFailure::Sizes { given_in, given_out, needed_in, needed_out });
            return;
        }
        match run(graph, inputs, outputs, float_in, float_out) {
            Ok(ran) => done = Some(ran),
            Err(error) => failure = Some(ExecuteFailure::Runtime(error)),
        }
    })?;
    if let Some((execution, written)) = done {
        call.set_u64(m::DSP_TICKS, execution.ticks)?;
        call.set_u32(m::ATTEMPTS, execution.attempts)?;
        return Ok(call.set_u32(m::OUTPUTS_BYTES, u32::try_from(written).unwrap_or(u32::MAX))?);
    }
    match failure {
        Some(ExecuteFailure::Sizes { given_in, given_out, needed_in, needed_out }) => {
            fail!(session, Message::ExecuteSizes, given_in, given_out, Bytes(needed_in), Bytes(needed_out));
            Err(SkelError::aee(EBADPARM))
        }
        Some(ExecuteFailure::Runtime(error)) => Err(runtime_failure(session, MethodId(codec::execute::ID), &error)),
        None => Err(SkelError::aee(EFAILED)),
    }
}

/// A byte count that may have overflowed.
struct Bytes(Option<usize>);

impl Say for Bytes {
    fn say(&self, f: &mut Line) {
        match self.0 {
            Some(bytes) => bytes.say(f),
            None => say!(f, Message::BeyondAddressable),
        }
    }
}

/// Fills the inputs, executes, writes the outputs back to back; returns the execution and bytes written.
fn run(
    graph: &mut Graph<'_>,
    inputs: &[u8],
    outputs: &mut [u8],
    float_in: bool,
    float_out: bool,
) -> Result<(Execution, usize), RuntimeError> {
    let mut offset = 0usize;
    for index in 0..graph.input_count() {
        let info = graph.input_size(index).ok_or(RuntimeError::NoSuchTensor { index })?;
        let bytes = io_bytes(float_in, info.elements, info.bytes).ok_or(RuntimeError::NoSuchTensor { index })?;
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
        let info = graph.output_size(index).ok_or(RuntimeError::NoSuchTensor { index })?;
        let bytes = io_bytes(float_out, info.elements, info.bytes).ok_or(RuntimeError::NoSuchTensor { index })?;
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

#[inline(never)]
pub(super) fn profile(session: &mut Session, call: &mut Decoded<'_>) -> Answer {
    let id = call.i32(codec::profile::CONTEXT_ID)?;
    let out = call.take_rout_bytes(codec::profile::EVENTS)?;
    let Some(loaded) = session.context(id) else {
        return Err(no_such_context(session, id));
    };
    let written = loaded.with_context(|context| {
        let context = context?;
        // One walk: the header's count is written once the events are.
        let mut count = 0u32;
        let mut writer = Writer::new(&mut *out);
        writer.profile(0);
        let walked = context.profile_events(|event| {
            count += 1;
            writer.event(&EventRecord {
                event_type: event.event_type,
                unit: event.unit,
                value: event.value,
                depth: event.depth,
                identifier: event.identifier,
            })
        });
        let needed = writer.needed();
        Writer::set_profile_count(out, count);
        walked.map(|()| needed).into()
    });
    match written {
        Some(Ok(needed)) => Ok(call.set_u32(codec::profile::EVENTS_BYTES, u32::try_from(needed).unwrap_or(u32::MAX))?),
        Some(Err(error)) => Err(runtime_failure(session, MethodId(codec::profile::ID), &error)),
        None => Err(SkelError::aee(EBADSTATE)),
    }
}

#[inline(never)]
pub(super) fn unload(session: &mut Session, call: &Decoded<'_>) -> Answer {
    let id = call.i32(codec::unload::CONTEXT_ID)?;
    if !session.unload(id) {
        return Err(no_such_context(session, id));
    }
    Ok(())
}

#[inline(never)]
pub(super) fn last_error(session: &mut Session, call: &mut Decoded<'_>) -> Answer {
    let out = call.take_rout_bytes(codec::last_error::MESSAGE)?;
    let message = session.last_error();
    codec::copy_prefix(out, message);
    Ok(call.set_u32(codec::last_error::MESSAGE_BYTES, message.len() as u32)?)
}

/// `failed_library`: the configured library the last failed call stopped at (`wire::FAILED_LIBRARY_*`).
pub(super) fn failed_library(session: &Session, call: &mut Decoded<'_>) -> Answer {
    Ok(call.set_u32(codec::failed_library::LIBRARY, session.failed_library())?)
}
