//! The lifecycle of an embedding: create it in the caller's arena, load its one context binary, destroy it.

use crate::call::{c_string, Out};
use crate::errors::{code, ERROR_ARENA_FULL, ERROR_INVALID_ARGUMENT, ERROR_STATE, OK};
use crate::handle::{state, CallerArena, EmbedHandle, Layout, State};
use core::ffi::{c_char, c_int, c_void};
use core::ptr;
use core::ptr::NonNull;
use lpai_direct::qnn::lpai;
use lpai_direct_skel::embed::Embed;
use lpai_direct_skel::platform::Message;
use lpai_direct_skel::runtime::PersistentBinary;
use lpai_direct_skel::runtime::{BackendOptions, Binary, ContextOptions, GraphOptions, Libraries, LoadRequest};

/// `LPAI_DIRECT_EMBED_MEMORY_DDR` and the others: `QnnLpaiMem_MemType_t`'s values.
pub const MEMORY_DDR: u32 = lpai::MemType::DDR.0;
/// `LPAI_DIRECT_EMBED_MEMORY_LLC`.
pub const MEMORY_LLC: u32 = lpai::MemType::LLC.0;
/// `LPAI_DIRECT_EMBED_MEMORY_TCM`.
pub const MEMORY_TCM: u32 = lpai::MemType::TCM.0;
/// `LPAI_DIRECT_EMBED_MEMORY_PSRAM`.
pub const MEMORY_PSRAM: u32 = lpai::MemType::PSRAM.0;

/// Sets where the next load puts LPAI's scratch and persistent memory; see the header.
///
/// # Safety
/// `embed` is null or a handle from create that was not destroyed.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_set_memory_types(
    embed: *mut EmbedHandle,
    scratch: u32,
    persistent: u32,
) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    if state.embed.as_ref().is_some_and(|embedding| embedding.is_loaded()) {
        return state.refuse(ERROR_STATE, Message::EmbedMemoryTypesAfterLoad);
    }
    let known = |value: u32| lpai::MemType(value).name().map(|_| lpai::MemType(value));
    let (Some(scratch), Some(persistent)) = (known(scratch), known(persistent)) else {
        return state.refuse(ERROR_INVALID_ARGUMENT, Message::EmbedMemoryTypeUnknown);
    };
    state.memory = lpai::MemoryPlacement { scratch, persistent };
    OK
}

/// Registers an op package with the embedding's backend, before the load; see the header.
///
/// # Safety
/// `embed` is null or a handle from create that was not destroyed; the strings are null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_register_op_package(
    embed: *mut EmbedHandle,
    path: *const c_char,
    interface_provider: *const c_char,
    target: *const c_char,
) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    // SAFETY: null or NUL-terminated (the caller's promise).
    let (path, provider, named_target) = unsafe { (c_string(path), c_string(interface_provider), c_string(target)) };
    let (Some(path), Some(provider), true) = (path, provider, named_target.is_some() || target.is_null()) else {
        return state.refuse(ERROR_INVALID_ARGUMENT, Message::EmbedOpPackageArguments);
    };
    let result = match state.embed.as_ref() {
        None => return state.refuse(ERROR_STATE, Message::EmbedOpPackageNotCreated),
        Some(embedding) if embedding.is_loaded() => return state.refuse(ERROR_STATE, Message::EmbedOpPackageAfterLoad),
        Some(embedding) => embedding.libraries().register_op_package(path, provider, named_target),
    };
    code(state.settle(result))
}

/// Creates an embedding in the caller's `arena` (`arena_bytes` bytes, kept untouched by the caller until
/// [`lpai_direct_embed_destroy`]): the handle at its start, then the libraries, the rest for the model. `backend`
/// and `system_library` are library names (a built-in library of that name first, then the platform's loader);
/// a null `system_library` opens no libQnnSystem, and every load then takes a metadata record
/// ([`lpai_direct_embed_load_with_metadata`]).
///
/// # Safety
/// `arena` is null or `arena_bytes` writable bytes that nothing else uses until destroy; the strings are null or
/// NUL-terminated; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_create(
    arena: *mut c_void,
    arena_bytes: usize,
    backend: *const c_char,
    system_library: *const c_char,
    out: *mut *mut EmbedHandle,
) -> c_int {
    // SAFETY: null or writable (the caller's promise).
    let Some(out) = (unsafe { Out::new(out) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    out.write(ptr::null_mut());
    // SAFETY: null or NUL-terminated (the caller's promise).
    let (backend, system) = unsafe { (c_string(backend), c_string(system_library)) };
    // A null system library means none; a name that is not a string (too long) is refused.
    let (Some(backend), true) = (backend, system.is_some() || system_library.is_null()) else {
        return ERROR_INVALID_ARGUMENT;
    };
    let start = arena as usize;
    let end = start.checked_add(arena_bytes);
    let (false, Some(end), true) = (arena.is_null(), end, isize::try_from(arena_bytes).is_ok()) else {
        return ERROR_INVALID_ARGUMENT;
    };
    let Some(layout) = Layout::of(start, arena_bytes) else {
        return ERROR_ARENA_FULL;
    };
    let base = arena.cast::<u8>();
    // SAFETY: `layout.state` + the state's size ≤ `layout.rest` ≤ `arena_bytes`: inside the caller's arena, aligned
    // for the state.
    let slot = unsafe { base.add(layout.state) }.cast::<State>();
    // SAFETY: as above, between the state and the rest, aligned for the libraries.
    let libraries_slot = unsafe { base.add(layout.libraries) }.cast::<Libraries>();
    // SAFETY: `layout.rest` ≤ `arena_bytes`: the arena's bytes after the libraries, disjoint from the state and
    // the libraries before them.
    let rest = unsafe { NonNull::new_unchecked(base.add(layout.rest)) };
    let rest = NonNull::slice_from_raw_parts(rest, arena_bytes - layout.rest);
    // SAFETY: the slot is inside the arena, aligned and large enough; nothing was there to drop.
    unsafe { slot.write(State::new(start, end)) };
    // SAFETY: just written; this is the only reference, and it covers the state alone.
    let state = unsafe { &mut *slot };
    // From here on the handle is live: the caller destroys it, even after a failure, so that last_error can say why.
    out.write(slot.cast());
    let libraries = match Libraries::open(backend, system, &BackendOptions::default()) {
        Ok(libraries) => libraries,
        Err(error) => return state.fail(&error.error),
    };
    // SAFETY: inside the arena, aligned, large enough, and disjoint from the state and the rest.
    unsafe { libraries_slot.write(libraries) };
    // SAFETY: just written, owned by the footing from here (nothing else uses or drops them); the rest of the arena
    // is disjoint from them, writable and untouched by the caller until destroy (the caller's promise), which drops
    // the footing with the embedding.
    let footing = unsafe { CallerArena::new(NonNull::new_unchecked(libraries_slot), rest) };
    state.embed = Some(Embed::new(footing));
    OK
}

/// Loads the context binary at `binary` (`bytes` bytes), which must stay valid and unchanged until destroy: see
/// [`lpai_direct_embed_load_padded`] with no padding.
///
/// # Safety
/// As for [`lpai_direct_embed_load_padded`] with `buffer_bytes` = `bytes`.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_load(embed: *mut EmbedHandle, binary: *const c_void, bytes: usize) -> c_int {
    // SAFETY: forwarded.
    unsafe { lpai_direct_embed_load_padded(embed, binary, bytes, bytes) }
}

/// Loads the context binary of `binary_bytes` at the start of `buffer_bytes` bytes at `binary` (the rest padding
/// the caller owns), which must stay valid and unchanged until destroy, its tensor metadata read by libQnnSystem
/// (refused with `ERROR_STATE` when create opened none: see [`lpai_direct_embed_load_with_metadata`]). The
/// backend gets the caller's bytes themselves when `binary` is at its start alignment and the buffer covers the
/// binary rounded up to its size alignment, a copy in the arena otherwise;
/// [`lpai_direct_embed_binary_in_place`](crate::lpai_direct_embed_binary_in_place) says which. Selects graph 0.
///
/// # Safety
/// `embed` is a handle from create; `binary` is null or `buffer_bytes` readable bytes outside the arena that no
/// one changes until destroy.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_load_padded(
    embed: *mut EmbedHandle,
    binary: *const c_void,
    binary_bytes: usize,
    buffer_bytes: usize,
) -> c_int {
    // SAFETY: the caller's promises, forwarded; no record.
    unsafe { load(embed, binary, binary_bytes, buffer_bytes, None) }
}

/// Loads the context binary at `binary` (`binary_bytes` bytes, kept valid and unchanged until destroy) with its
/// tensor metadata from the metadata record at `record` (`record_bytes` bytes, as `lpai-net-run inspect BIN
/// --emit_metadata FILE` writes it) instead of libQnnSystem: see [`lpai_direct_embed_load_padded_with_metadata`]
/// with no padding.
///
/// # Safety
/// As for [`lpai_direct_embed_load_padded_with_metadata`] with `buffer_bytes` = `binary_bytes`.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_load_with_metadata(
    embed: *mut EmbedHandle,
    binary: *const c_void,
    binary_bytes: usize,
    record: *const c_void,
    record_bytes: usize,
) -> c_int {
    // SAFETY: forwarded.
    unsafe {
        lpai_direct_embed_load_padded_with_metadata(embed, binary, binary_bytes, binary_bytes, record, record_bytes)
    }
}

/// [`lpai_direct_embed_load_padded`] with the tensor metadata from the metadata record at `record`
/// (`record_bytes` bytes) instead of libQnnSystem, which need not exist (create with a null system library). The
/// record is checked whole (a malformed one is refused with `ERROR_BINARY`, the message saying at which byte and
/// what is wrong), then against the backend (a graph the binary lacks is refused with `ERROR_BINARY`, naming it).
/// What the embedding needs of the record is copied into the arena: the record is read only during this call.
///
/// # Safety
/// As for [`lpai_direct_embed_load_padded`]; `record` is null or `record_bytes` readable bytes outside the arena
/// that no one changes during the call.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_load_padded_with_metadata(
    embed: *mut EmbedHandle,
    binary: *const c_void,
    binary_bytes: usize,
    buffer_bytes: usize,
    record: *const c_void,
    record_bytes: usize,
) -> c_int {
    // SAFETY: the caller's promises, forwarded.
    unsafe { load(embed, binary, binary_bytes, buffer_bytes, Some((record, record_bytes))) }
}

/// Whether `bytes` bytes at `start` lie in memory (no wrap, at most `isize::MAX` bytes) and outside the caller's
/// arena, from `arena_start` to `arena_end`.
fn outside_arena(arena_start: usize, arena_end: usize, start: usize, bytes: usize) -> bool {
    let fits = isize::try_from(bytes).is_ok();
    start.checked_add(bytes).is_some_and(|end| fits && (end <= arena_start || arena_end <= start))
}

/// The loads: `binary` with `binary_bytes` at the start of `buffer_bytes`, its metadata from libQnnSystem or from
/// `record` (pointer and bytes).
///
/// # Safety
/// As for [`lpai_direct_embed_load_padded_with_metadata`].
unsafe fn load(
    embed: *mut EmbedHandle,
    binary: *const c_void,
    binary_bytes: usize,
    buffer_bytes: usize,
    record: Option<(*const c_void, usize)>,
) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    let Some(embedding) = state.embed.as_mut() else {
        return state.refuse(ERROR_STATE, Message::EmbedLoadNotCreated);
    };
    if embedding.is_loaded() {
        return state.refuse(ERROR_STATE, Message::EmbedLoadTwice);
    }
    let start = binary as usize;
    let end = start.checked_add(buffer_bytes);
    let sizes_fit = binary_bytes > 0 && binary_bytes <= buffer_bytes && isize::try_from(buffer_bytes).is_ok();
    let (false, Some(end), true) = (binary.is_null(), end, sizes_fit) else {
        return state.refuse(ERROR_INVALID_ARGUMENT, Message::EmbedLoadBinaryArgument);
    };
    if start < state.arena_end && state.arena_start < end {
        return state.refuse(ERROR_INVALID_ARGUMENT, Message::EmbedLoadOverlap);
    }
    let record = match record {
        None => None,
        Some((pointer, bytes)) => {
            if pointer.is_null() || bytes == 0 {
                return state.refuse(ERROR_INVALID_ARGUMENT, Message::EmbedRecordArgument);
            }
            if !outside_arena(state.arena_start, state.arena_end, pointer as usize, bytes) {
                return state.refuse(ERROR_INVALID_ARGUMENT, Message::EmbedRecordOverlap);
            }
            // SAFETY: non-null, `bytes` readable bytes outside the arena that no one changes during this call (the
            // caller's promise); only read while loading (the embedding copies what it keeps into its arena).
            Some(unsafe { core::slice::from_raw_parts(pointer.cast::<u8>(), bytes) })
        }
    };
    // SAFETY: non-null, `buffer_bytes` readable bytes outside the arena, unchanged until destroy (the caller's
    // promise), which is when the embedding that uses them ends.
    let memory: &'static [u8] = unsafe { core::slice::from_raw_parts(binary.cast::<u8>(), buffer_bytes) };
    let Some(persistent) = PersistentBinary::padded(memory, binary_bytes) else {
        return state.refuse(ERROR_INVALID_ARGUMENT, Message::EmbedLoadLarger);
    };
    let options = ContextOptions {
        graph: GraphOptions { memory: state.memory, input_sets: state.input_sets, ..GraphOptions::default() },
        ..ContextOptions::default()
    };
    let request = LoadRequest::new(Binary::InPlace(persistent)).with_options(options);
    let request = match record {
        Some(record) => request.with_record(record),
        None => Ok(request),
    };
    let loaded = request.and_then(|request| embedding.load(&request));
    code(state.settle(loaded))
}

/// Frees the context, then libQnnSystem, then the backend; the arena and the binary are the caller's again.
///
/// # Safety
/// `embed` is null or a handle from create; nothing uses the buffers it handed out afterwards.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_destroy(embed: *mut EmbedHandle) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    if state.embed.as_ref().is_some_and(|embedding| embedding.frame_in_flight()) {
        return state.refuse(ERROR_STATE, Message::EmbedDestroyInFlight);
    }
    state.embed = None;
    state.magic = 0;
    OK
}
