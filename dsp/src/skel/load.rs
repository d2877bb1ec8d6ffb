//! The four load methods, over the runtime's one load: `load` and `load_file` take the binary's metadata from the
//! skel's libQnnSystem; `load_with_metadata` and `load_file_with_metadata` from a metadata record the caller sends
//! (for a PD without libQnnSystem, selected by `configure` with an empty system library), checked whole before use.

use super::error::SkelError;
use super::methods::{ensure_libraries, runtime_failure, Answer, DEFAULT_HEADROOM, MAX_ARENA_BYTES};
use super::session::{fail, Session, MAX_CONTEXTS};
use crate::platform::{Memory, Message, MethodId};
use crate::runtime::error::RecordAt;
use crate::runtime::{Binary, ContextOptions, GraphOptions, Island, LoadRequest, Owned, Owner, RuntimeError};
use lpai_direct::aee::{EBADPARM, EBADSTATE, EFAILED, ENOMEMORY, EUNSUPPORTED};
use lpai_direct::codec::{self, Decoded};
use lpai_direct::qnn::{Priority, ProfileLevel};
use lpai_direct::wire::{placement_of_load, priority_of_load, LOAD_ISLAND, LOAD_PERSISTENT_BINARY};

/// Where one load method keeps its parameters.
struct Params {
    /// Its id, which messages say (by name, on the HLOS side).
    method: MethodId,
    flags: usize,
    /// The binary (a sequence) or its path (a string).
    source: usize,
    from_file: bool,
    /// The metadata record, for the `_with_metadata` methods.
    metadata: Option<usize>,
    context_id: usize,
    graph_count: usize,
}

const LOAD: Params = Params {
    method: MethodId(codec::load::ID),
    flags: codec::load::FLAGS,
    source: codec::load::BINARY,
    from_file: false,
    metadata: None,
    context_id: codec::load::CONTEXT_ID,
    graph_count: codec::load::GRAPH_COUNT,
};

const LOAD_FILE: Params = Params {
    method: MethodId(codec::load_file::ID),
    flags: codec::load_file::FLAGS,
    source: codec::load_file::PATH,
    from_file: true,
    metadata: None,
    context_id: codec::load_file::CONTEXT_ID,
    graph_count: codec::load_file::GRAPH_COUNT,
};

const LOAD_WITH_METADATA: Params = Params {
    method: MethodId(codec::load_with_metadata::ID),
    flags: codec::load_with_metadata::FLAGS,
    source: codec::load_with_metadata::BINARY,
    from_file: false,
    metadata: Some(codec::load_with_metadata::METADATA),
    context_id: codec::load_with_metadata::CONTEXT_ID,
    graph_count: codec::load_with_metadata::GRAPH_COUNT,
};

const LOAD_FILE_WITH_METADATA: Params = Params {
    method: MethodId(codec::load_file_with_metadata::ID),
    flags: codec::load_file_with_metadata::FLAGS,
    source: codec::load_file_with_metadata::PATH,
    from_file: true,
    metadata: Some(codec::load_file_with_metadata::METADATA),
    context_id: codec::load_file_with_metadata::CONTEXT_ID,
    graph_count: codec::load_file_with_metadata::GRAPH_COUNT,
};

/// Method `id`, one of the four load methods: each builds one [`LoadRequest`] from its parameters, which one
/// owner carries out on the session's libraries and an arena of its own.
pub(super) fn load(session: &mut Session, call: &mut Decoded<'_>, id: u32) -> Answer {
    let params = match id {
        codec::load::ID => &LOAD,
        codec::load_file::ID => &LOAD_FILE,
        codec::load_with_metadata::ID => &LOAD_WITH_METADATA,
        codec::load_file_with_metadata::ID => &LOAD_FILE_WITH_METADATA,
        _ => return Err(SkelError::aee(EUNSUPPORTED)),
    };
    let flags = call.u32(params.flags)?;
    let binary = if params.from_file {
        Binary::File(call.string(params.source)?)
    } else {
        Binary::Copy(call.bytes(params.source)?)
    };
    let mut request = LoadRequest::new(binary);
    if let Some(index) = params.metadata {
        request = match request.with_record(call.bytes(index)?) {
            Ok(request) => request,
            Err(RuntimeError::MalformedRecord(error)) => {
                fail!(session, Message::LoadRecordMalformed, params.method, RecordAt(error), error.what);
                return Err(SkelError::aee(EBADPARM));
            }
            Err(error) => return Err(runtime_failure(session, params.method, &error)),
        };
    }
    let memory = match placement_of_load(flags) {
        Ok(memory) => memory,
        Err(value) => {
            fail!(session, Message::LoadMemoryType, params.method, value);
            return Err(SkelError::aee(EBADPARM));
        }
    };
    ensure_libraries(session)?;
    let Some(libraries) = session.libraries().cloned() else {
        return Err(SkelError::aee(EBADSTATE));
    };
    if request.record.is_none() && libraries.system().is_none() {
        fail!(session, Message::LoadNeedsRecord, params.method);
        return Err(SkelError::aee(EBADPARM));
    }
    let Some(slot) = session.free_context_slot() else {
        fail!(session, Message::ContextSlotsFull, MAX_CONTEXTS);
        return Err(SkelError::aee(ENOMEMORY));
    };
    let binary_bytes = match (request.binary.length(), request.binary) {
        (Ok(length), _) => length,
        (Err(RuntimeError::BinarySize(_)), _) => usize::MAX,
        (Err(RuntimeError::Platform { error, .. }), Binary::File(path)) => {
            fail!(session, Message::ContextBinaryUnreadable, path.to_str().unwrap_or("?"), error);
            return Err(SkelError::aee(EFAILED));
        }
        (Err(error), _) => return Err(runtime_failure(session, params.method, &error)),
    };
    let (configured_arena, profiling_level) = (session.settings.arena_bytes, session.settings.profiling_level);
    let arena_bytes = match configured_arena {
        0 => binary_bytes.checked_add(DEFAULT_HEADROOM),
        configured => Some(configured),
    };
    let Some(arena_bytes) = arena_bytes.filter(|&bytes| bytes <= MAX_ARENA_BYTES) else {
        fail!(session, Message::ArenaBeyondLimit, binary_bytes, MAX_ARENA_BYTES);
        return Err(SkelError::aee(ENOMEMORY));
    };
    request.options = ContextOptions {
        persistent_binary: flags & LOAD_PERSISTENT_BINARY != 0,
        island: if flags & LOAD_ISLAND != 0 { Island::AllGraphs } else { Island::Off },
        priority: priority_of_load(flags).map(Priority),
        profiling: (profiling_level != 0).then_some(ProfileLevel(profiling_level)),
        graph: GraphOptions { memory, ..GraphOptions::default() },
    };
    let Some(arena) = Memory::allocate(arena_bytes) else {
        fail!(session, Message::ArenaNotReserved, arena_bytes);
        return Err(SkelError::aee(ENOMEMORY));
    };
    let mut owner = Owner::new(Owned::new(libraries, arena));
    if let Err(error) = owner.load(&request) {
        return Err(runtime_failure(session, params.method, &error));
    }
    let graph_count = owner.context().map_or(0, |context| context.graph_count()) as u32;
    let id = session.keep(slot, owner).ok_or(SkelError::aee(EBADSTATE))?;
    call.set_i32(params.context_id, id)?;
    Ok(call.set_u32(params.graph_count, graph_count)?)
}
