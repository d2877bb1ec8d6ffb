//! The C API of the embedding API (`dsp/include/lpai_direct_embed.h`): `lpai_direct_embed_*` functions over
//! [`lpai_direct_skel::embed::Embed`], for firmware written in C that runs an offline-prepared model in its own
//! memory, frame after frame, with no heap, no file access and no IPC.
//!
//! Every function checks its pointers (null, alignment, the handle's magic word) and sizes (checked arithmetic)
//! and answers 0 or a negative `LPAI_DIRECT_EMBED_ERROR_*` code; none can panic. The arena the caller gives
//! [`lpai_direct_embed_create`] holds everything: the handle's state at its start (the last failure's message stays
//! there for [`lpai_direct_embed_last_error`]), then the [`Libraries`], then the embedding's own arena. One thread
//! at a time per handle.
//!
//! With the feature `qemu-example` (qemu-hexagon programs only, never a device build) the contract model of
//! libQnnLpai is built in as `libQnnLpaiContract.so` and `libQnnSystemContract.so`.
#![no_std]

use core::ffi::{c_char, c_int, c_void, CStr};
use core::ptr;
use core::ptr::NonNull;
use lpai_direct_skel::embed::{Direction, Embed, Libraries};
use lpai_direct_skel::runtime::{PersistentBinary, RuntimeError};

/// Success.
pub const OK: c_int = 0;
/// A null or misaligned pointer, a size that does not add up, an index or name the graph lacks, or a handle
/// that is not a live embedding.
pub const ERROR_INVALID_ARGUMENT: c_int = -1;
/// The arena is too small (for the handle, the libraries or the model).
pub const ERROR_ARENA_FULL: c_int = -2;
/// Called in the wrong state: before a binary is loaded, a second load, after a failed create.
pub const ERROR_STATE: c_int = -3;
/// The backend or system library could not be loaded or used.
pub const ERROR_LIBRARY: c_int = -4;
/// The context binary was refused (malformed, too large, PERSISTENT_BINARY refused, too many graphs).
pub const ERROR_BINARY: c_int = -5;
/// A QNN call failed (the message names it and QNN's error code).
pub const ERROR_QNN: c_int = -6;
/// Anything else; the message says what.
pub const ERROR_FAILED: c_int = -7;

/// `struct lpai_direct_embed` as C sees it: opaque, reached only through pointers.
#[repr(C)]
pub struct EmbedHandle {
    _opaque: [u8; 0],
}

/// `lpai_direct_embed_tensor`: what [`lpai_direct_embed_tensor_info`] fills in.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TensorDescription {
    /// The tensor's NUL-terminated name (valid until destroy).
    pub name: *const c_char,
    /// The id graphExecute matches tensors by.
    pub id: u32,
    /// `Qnn_DataType_t` (0x0408 UFIXED_POINT_8, ...).
    pub data_type: u32,
    /// Number of dimensions.
    pub rank: u32,
    /// `rank` dimensions, outermost first (valid until destroy).
    pub dimensions: *const u32,
    /// Native bytes of one frame of the tensor.
    pub bytes: usize,
    /// 1 when `scale` and `offset` apply (scale-offset quantization), else 0.
    pub quantized: c_int,
    /// `value = (quantized + offset) * scale`.
    pub scale: f32,
    /// QNN's offset: the negated zero point.
    pub offset: i32,
}

/// The `lpai_direct_embed_tensor_info` direction of a graph input.
pub const DIRECTION_INPUT: c_int = 0;
/// The `lpai_direct_embed_tensor_info` direction of a graph output.
pub const DIRECTION_OUTPUT: c_int = 1;

/// "LPEM": marks a live handle; cleared by destroy.
const MAGIC: u32 = u32::from_le_bytes(*b"LPEM");
/// Bytes of the last error message, its NUL included.
const MESSAGE_BYTES: usize = lpai_direct_skel::platform::LOG_LINE_BYTES + 1;
/// Longest library name read from the caller (without its NUL).
const NAME_LIMIT: usize = 1024;

/// What the handle points at, at the start of the caller's arena. `repr(C)` with the magic word first: checking
/// a handle reads only its first four bytes.
#[repr(C)]
struct State<'a> {
    magic: u32,
    /// The caller's whole arena, handle included: a binary may not lie in it.
    arena_start: usize,
    arena_end: usize,
    /// In the arena right after the state (not inside it: the embedding borrows them while calls hold the state
    /// mutably); `None` after a failed create, dropped in place by destroy after the embedding.
    libraries: Option<NonNull<Libraries>>,
    /// `None` after a failed create.
    embed: Option<Embed<'a>>,
    /// The last failure's message, NUL-terminated (empty after a success).
    message: [u8; MESSAGE_BYTES],
}

impl<'a> State<'a> {
    fn clear(&mut self) {
        self.message[0] = 0;
    }

    /// Records `text` as the last error and answers `code`.
    fn refuse(&mut self, code: c_int, text: &str) -> c_int {
        let limit = MESSAGE_BYTES - 1;
        let mut length = 0;
        for (slot, &byte) in self.message.iter_mut().zip(text.as_bytes().iter().take(limit)) {
            *slot = byte;
            length += 1;
        }
        if let Some(end) = self.message.get_mut(length) {
            *end = 0;
        }
        code
    }

    /// Records the runtime's message and answers its code.
    fn fail(&mut self, error: &RuntimeError) -> c_int {
        let line = lpai_direct_skel::message!("{}", error);
        self.refuse(code_of(error), line.as_str())
    }

    /// Runs `action` on the loaded embedding: its answer, with the message cleared; or the code of why not (no
    /// binary loaded, or the runtime's error), with the message recorded. `call` names the function.
    fn run<R>(
        &mut self,
        call: &str,
        action: impl FnOnce(&mut Embed<'a>) -> Result<R, RuntimeError>,
    ) -> Result<R, c_int> {
        let result = match self.embed.as_mut() {
            Some(embedding) if embedding.is_loaded() => action(embedding),
            _ => {
                let line = lpai_direct_skel::message!("{}: no context binary is loaded", call);
                return Err(self.refuse(ERROR_STATE, line.as_str()));
            }
        };
        match result {
            Ok(answer) => {
                self.clear();
                Ok(answer)
            }
            Err(error) => Err(self.fail(&error)),
        }
    }
}

/// The C code of a runtime error.
fn code_of(error: &RuntimeError) -> c_int {
    match error {
        RuntimeError::Arena(_) => ERROR_ARENA_FULL,
        RuntimeError::Platform { .. }
        | RuntimeError::MissingSymbol(_)
        | RuntimeError::NoProviders
        | RuntimeError::UnsupportedApi { .. }
        | RuntimeError::MissingFunction(_) => ERROR_LIBRARY,
        RuntimeError::BinarySize(_)
        | RuntimeError::MalformedBinary { .. }
        | RuntimeError::PersistentBinaryRefused { .. }
        | RuntimeError::TooMany { .. } => ERROR_BINARY,
        RuntimeError::Qnn { .. } | RuntimeError::NeverCompleted { .. } | RuntimeError::BadAlignment { .. } => ERROR_QNN,
        RuntimeError::NoSuchGraph
        | RuntimeError::NoSuchTensor { .. }
        | RuntimeError::UnsupportedDataType { .. }
        | RuntimeError::TensorSize { .. } => ERROR_INVALID_ARGUMENT,
        _ => ERROR_FAILED,
    }
}

/// The live state behind a handle; `None` for null, misaligned or not-live handles.
///
/// # Safety
/// `embed` is null or points at memory that is readable (and, for a live handle, was set up by
/// [`lpai_direct_embed_create`] and not destroyed since); no other call uses the handle at the same time.
unsafe fn state<'h>(embed: *mut EmbedHandle) -> Option<&'h mut State<'h>> {
    let state = embed.cast::<State<'h>>();
    if state.is_null() || !state.is_aligned() {
        return None;
    }
    // SAFETY: aligned, readable, and (per the caller) no other reference to it is in use.
    let magic = unsafe { ptr::addr_of!((*state).magic).read() };
    if magic != MAGIC {
        return None;
    }
    // SAFETY: the magic word says create set it up and destroy has not run; one caller at a time.
    Some(unsafe { &mut *state })
}

/// The live state behind a handle, to read; `None` for null, misaligned or not-live handles.
///
/// # Safety
/// As for [`state`].
unsafe fn state_ref<'h>(embed: *const EmbedHandle) -> Option<&'h State<'h>> {
    let state = embed.cast::<State<'h>>();
    if state.is_null() || !state.is_aligned() {
        return None;
    }
    // SAFETY: aligned, readable, and (per the caller) no other reference to it is in use.
    let magic = unsafe { ptr::addr_of!((*state).magic).read() };
    // SAFETY: the magic word says create set it up and destroy has not run.
    (magic == MAGIC).then(|| unsafe { &*state })
}

/// A caller's NUL-terminated string of at most [`NAME_LIMIT`] bytes; `None` for null or longer.
///
/// # Safety
/// A non-null `text` must be readable up to its NUL or [`NAME_LIMIT`] + 1 bytes.
unsafe fn c_string<'t>(text: *const c_char) -> Option<&'t CStr> {
    if text.is_null() {
        return None;
    }
    let mut length = 0;
    // SAFETY: readable up to the NUL or the limit (the caller's promise).
    while unsafe { *text.add(length) } != 0 {
        length += 1;
        if length > NAME_LIMIT {
            return None;
        }
    }
    // SAFETY: `length` bytes and the NUL after them were just read.
    let bytes = unsafe { core::slice::from_raw_parts(text.cast::<u8>(), length + 1) };
    CStr::from_bytes_with_nul(bytes).ok()
}

/// Whether `pointer` can take a write of a `T`.
fn writable<T>(pointer: *mut T) -> bool {
    !pointer.is_null() && pointer.is_aligned()
}

/// Creates an embedding in the caller's `arena` (`arena_bytes` bytes, kept untouched by the caller until
/// [`lpai_direct_embed_destroy`]): the handle at its start, then the libraries, the rest for the model. `backend`
/// and `system_library` are library names (a built-in library of that name first, then the platform's loader).
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
    if !writable(out) {
        return ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: checked writable.
    unsafe { out.write(ptr::null_mut()) };
    // SAFETY: null or NUL-terminated (the caller's promise).
    let (backend, system) = unsafe { (c_string(backend), c_string(system_library)) };
    let (Some(backend), Some(system)) = (backend, system) else {
        return ERROR_INVALID_ARGUMENT;
    };
    let start = arena as usize;
    let end = start.checked_add(arena_bytes);
    let (false, Some(end), true) = (arena.is_null(), end, isize::try_from(arena_bytes).is_ok()) else {
        return ERROR_INVALID_ARGUMENT;
    };
    // The arena: the state, then the libraries, each aligned for its type, then the embedding's own arena.
    let state_start = align_up(start, core::mem::align_of::<State<'_>>()).map(|aligned| aligned - start);
    let state_end = state_start.and_then(|offset| offset.checked_add(core::mem::size_of::<State<'_>>()));
    let libraries_start = state_end
        .and_then(|offset| start.checked_add(offset))
        .and_then(|address| align_up(address, core::mem::align_of::<Libraries>()))
        .map(|aligned| aligned - start);
    let libraries_end = libraries_start.and_then(|offset| offset.checked_add(core::mem::size_of::<Libraries>()));
    let (Some(state_start), Some(libraries_start), Some(rest_start)) = (state_start, libraries_start, libraries_end)
    else {
        return ERROR_ARENA_FULL;
    };
    if rest_start > arena_bytes {
        return ERROR_ARENA_FULL;
    }
    let base = arena.cast::<u8>();
    // SAFETY: `state_start` + the state's size ≤ `rest_start` ≤ `arena_bytes`: inside the caller's arena, aligned
    // for the state.
    let slot = unsafe { base.add(state_start) }.cast::<State<'_>>();
    // SAFETY: as above, between the state and the rest, aligned for the libraries.
    let libraries_slot = unsafe { base.add(libraries_start) }.cast::<Libraries>();
    // SAFETY: the arena's bytes after the libraries, writable and used by nothing else until destroy (the caller's
    // promise); the state and the libraries before them are disjoint from them.
    let rest = unsafe { core::slice::from_raw_parts_mut(base.add(rest_start), arena_bytes - rest_start) };
    let initial = State {
        magic: MAGIC,
        arena_start: start,
        arena_end: end,
        libraries: None,
        embed: None,
        message: [0; MESSAGE_BYTES],
    };
    // SAFETY: the slot is inside the arena, aligned and large enough; nothing was there to drop.
    unsafe { slot.write(initial) };
    // SAFETY: just written; this is the only reference, and it covers the state alone.
    let state = unsafe { &mut *slot };
    // SAFETY: checked writable. From here on the handle is live: the caller destroys it, even after a failure,
    // so that last_error can say why.
    unsafe { out.write(slot.cast()) };
    #[cfg(feature = "qemu-example")]
    if lpai_direct_skel::embed::contract_model::register().is_err() {
        return state.refuse(ERROR_LIBRARY, "another set of built-in libraries is registered: no contract model");
    }
    let libraries = match Libraries::open(backend, system) {
        Ok(libraries) => libraries,
        Err(error) => return state.fail(&error),
    };
    // SAFETY: inside the arena, aligned, large enough, and disjoint from the state and the rest.
    unsafe { libraries_slot.write(libraries) };
    state.libraries = NonNull::new(libraries_slot);
    // SAFETY: just written; only shared references are made to it until destroy drops it, after the embedding.
    let libraries = unsafe { &*libraries_slot };
    state.embed = Some(Embed::new(rest, libraries));
    OK
}

/// `address` rounded up to a multiple of `align` (a power of two); `None` on overflow.
fn align_up(address: usize, align: usize) -> Option<usize> {
    address.checked_next_multiple_of(align)
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
/// the caller owns), which must stay valid and unchanged until destroy. The backend gets the caller's bytes
/// themselves when `binary` is at its start alignment and the buffer covers the binary rounded up to its size
/// alignment, a copy in the arena otherwise; [`lpai_direct_embed_binary_in_place`] says which. Selects graph 0.
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
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    match &state.embed {
        None => return state.refuse(ERROR_STATE, "load: the embedding was not created (see the create error)"),
        Some(embed) if embed.is_loaded() => {
            return state.refuse(ERROR_STATE, "load: a context binary is already loaded (one per embedding)")
        }
        Some(_) => {}
    }
    let start = binary as usize;
    let end = start.checked_add(buffer_bytes);
    let sizes_fit = binary_bytes > 0 && binary_bytes <= buffer_bytes && isize::try_from(buffer_bytes).is_ok();
    let (false, Some(end), true) = (binary.is_null(), end, sizes_fit) else {
        return state.refuse(
            ERROR_INVALID_ARGUMENT,
            "load: the binary is null, empty, larger than its buffer, or its buffer wraps around memory",
        );
    };
    if start < state.arena_end && state.arena_start < end {
        return state.refuse(ERROR_INVALID_ARGUMENT, "load: the binary overlaps the embedding's arena");
    }
    // SAFETY: non-null, `buffer_bytes` readable bytes outside the arena, unchanged until destroy (the caller's
    // promise), which is when the embedding that borrows them ends.
    let memory = unsafe { core::slice::from_raw_parts(binary.cast::<u8>(), buffer_bytes) };
    let Some(persistent) = PersistentBinary::padded(memory, binary_bytes) else {
        return state.refuse(ERROR_INVALID_ARGUMENT, "load: the binary is larger than its buffer");
    };
    let result = match state.embed.as_mut() {
        Some(embedding) => embedding.load(persistent),
        None => Err(RuntimeError::NoSuchGraph),
    };
    match result {
        Ok(()) => {
            state.clear();
            OK
        }
        Err(error) => state.fail(&error),
    }
}

/// Writes 1 to `in_place` when the backend got the caller's binary itself, 0 when a copy in the arena.
///
/// # Safety
/// `embed` is a handle from create; `in_place` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_binary_in_place(embed: *mut EmbedHandle, in_place: *mut c_int) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    if !writable(in_place) {
        return state.refuse(ERROR_INVALID_ARGUMENT, "binary_in_place: null or misaligned in_place");
    }
    match state.run("binary_in_place", |embedding| Ok(embedding.binary_in_place() == Some(true))) {
        Ok(answer) => {
            // SAFETY: checked writable.
            unsafe { in_place.write(c_int::from(answer)) };
            OK
        }
        Err(code) => code,
    }
}

/// Writes the number of graphs in the loaded binary to `count`.
///
/// # Safety
/// `embed` is a handle from create; `count` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_graph_count(embed: *mut EmbedHandle, count: *mut usize) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    if !writable(count) {
        return state.refuse(ERROR_INVALID_ARGUMENT, "graph_count: null or misaligned count");
    }
    match state.run("graph_count", |embedding| Ok(embedding.graph_count())) {
        Ok(graphs) => {
            // SAFETY: checked writable.
            unsafe { count.write(graphs) };
            OK
        }
        Err(code) => code,
    }
}

/// Writes the selected graph's NUL-terminated name (valid until destroy) to `name`.
///
/// # Safety
/// `embed` is a handle from create; `name` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_graph_name(embed: *mut EmbedHandle, name: *mut *const c_char) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    if !writable(name) {
        return state.refuse(ERROR_INVALID_ARGUMENT, "graph_name: null or misaligned name");
    }
    match state.run("graph_name", |embedding| Ok(embedding.graph_c_name()?.as_ptr())) {
        Ok(text) => {
            // SAFETY: checked writable.
            unsafe { name.write(text) };
            OK
        }
        Err(code) => code,
    }
}

/// Selects graph `index` for the tensor and execute calls (graph 0 after a load).
///
/// # Safety
/// `embed` is a handle from create.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_select_graph(embed: *mut EmbedHandle, index: usize) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    match state.run("select_graph", |embedding| embedding.select_graph(index)) {
        Ok(()) => OK,
        Err(code) => code,
    }
}

/// Writes the index of the graph called `name` to `index`.
///
/// # Safety
/// `embed` is a handle from create; `name` is null or NUL-terminated; `index` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_find_graph(
    embed: *mut EmbedHandle,
    name: *const c_char,
    index: *mut usize,
) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    // SAFETY: null or NUL-terminated (the caller's promise).
    let name = unsafe { c_string(name) }.and_then(|name| name.to_str().ok());
    let (Some(name), true) = (name, writable(index)) else {
        return state.refuse(ERROR_INVALID_ARGUMENT, "find_graph: null or not UTF-8 name, or null index");
    };
    match state.run("find_graph", |embedding| embedding.graph_index(name).ok_or(RuntimeError::NoSuchGraph)) {
        Ok(found) => {
            // SAFETY: checked writable.
            unsafe { index.write(found) };
            OK
        }
        Err(code) => code,
    }
}

fn direction_of(direction: c_int) -> Option<Direction> {
    match direction {
        DIRECTION_INPUT => Some(Direction::Input),
        DIRECTION_OUTPUT => Some(Direction::Output),
        _ => None,
    }
}

/// Writes the number of inputs (`direction` 0) or outputs (1) of the selected graph to `count`.
///
/// # Safety
/// `embed` is a handle from create; `count` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_tensor_count(
    embed: *mut EmbedHandle,
    direction: c_int,
    count: *mut usize,
) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    let (Some(direction), true) = (direction_of(direction), writable(count)) else {
        return state.refuse(ERROR_INVALID_ARGUMENT, "tensor_count: direction not 0 or 1, or null count");
    };
    match state.run("tensor_count", |embedding| Ok(embedding.tensor_count(direction))) {
        Ok(tensors) => {
            // SAFETY: checked writable.
            unsafe { count.write(tensors) };
            OK
        }
        Err(code) => code,
    }
}

/// Describes input (`direction` 0) or output (1) `index` of the selected graph into `info`; its pointers stay
/// valid until destroy.
///
/// # Safety
/// `embed` is a handle from create; `info` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_tensor_info(
    embed: *mut EmbedHandle,
    direction: c_int,
    index: usize,
    info: *mut TensorDescription,
) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    let (Some(direction), true) = (direction_of(direction), writable(info)) else {
        return state.refuse(ERROR_INVALID_ARGUMENT, "tensor_info: direction not 0 or 1, or null info");
    };
    let described = state.run("tensor_info", |embedding| {
        let tensor = embedding.tensor(direction, index)?;
        Ok(TensorDescription {
            name: tensor.c_name.unwrap_or(c"").as_ptr(),
            id: tensor.id,
            data_type: tensor.data_type.0,
            rank: u32::try_from(tensor.dimensions.len()).unwrap_or(u32::MAX),
            dimensions: tensor.dimensions.as_ptr(),
            bytes: tensor.bytes,
            quantized: c_int::from(tensor.quantization.is_some()),
            scale: tensor.quantization.map_or(1.0, |quantization| quantization.scale),
            offset: tensor.quantization.map_or(0, |quantization| quantization.offset),
        })
    });
    match described {
        Ok(described) => {
            // SAFETY: checked writable.
            unsafe { info.write(described) };
            OK
        }
        Err(code) => code,
    }
}

/// Binds input `index` of the selected graph: writes its native buffer to `data` and its size to `bytes`. The
/// buffer is the same for every frame until destroy: fill it before each
/// [`lpai_direct_embed_execute_frame`].
///
/// # Safety
/// `embed` is a handle from create; `data` and `bytes` are null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_input(
    embed: *mut EmbedHandle,
    index: usize,
    data: *mut *mut c_void,
    bytes: *mut usize,
) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    if !writable(data) || !writable(bytes) {
        return state.refuse(ERROR_INVALID_ARGUMENT, "input: null or misaligned data or bytes");
    }
    let buffer = state.run("input", |embedding| embedding.input_pointer(index));
    match buffer {
        Ok((pointer, length)) => {
            // SAFETY: both checked writable.
            unsafe {
                data.write(pointer.as_ptr().cast());
                bytes.write(length);
            }
            OK
        }
        Err(code) => code,
    }
}

/// Binds output `index` of the selected graph: writes its native buffer to `data` and its size to `bytes`. The
/// buffer is the same for every frame until destroy; it holds the last ready frame's result.
///
/// # Safety
/// `embed` is a handle from create; `data` and `bytes` are null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_output(
    embed: *mut EmbedHandle,
    index: usize,
    data: *mut *const c_void,
    bytes: *mut usize,
) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    if !writable(data) || !writable(bytes) {
        return state.refuse(ERROR_INVALID_ARGUMENT, "output: null or misaligned data or bytes");
    }
    let buffer = state.run("output", |embedding| embedding.output_pointer(index));
    match buffer {
        Ok((pointer, length)) => {
            // SAFETY: both checked writable.
            unsafe {
                data.write(pointer.as_ptr().cast_const().cast());
                bytes.write(length);
            }
            OK
        }
        Err(code) => code,
    }
}

/// Runs graphExecute once on the selected graph's bound input buffers; writes 1 to `ready` when the outputs
/// are ready, 0 when the backend needs more frames first (EARLY_TERMINATION). Allocates nothing, reads no file.
///
/// # Safety
/// `embed` is a handle from create; `ready` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_execute_frame(embed: *mut EmbedHandle, ready: *mut c_int) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    if !writable(ready) {
        return state.refuse(ERROR_INVALID_ARGUMENT, "execute_frame: null or misaligned ready");
    }
    match state.run("execute_frame", |embedding| embedding.execute_frame()) {
        Ok(execution) => {
            // SAFETY: checked writable.
            unsafe { ready.write(c_int::from(execution.is_some())) };
            OK
        }
        Err(code) => code,
    }
}

/// Writes the DSP-clock time of the last execution that made the outputs ready, in microseconds, to `micros`.
///
/// # Safety
/// `embed` is a handle from create; `micros` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_last_execute_us(embed: *mut EmbedHandle, micros: *mut u64) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    if !writable(micros) {
        return state.refuse(ERROR_INVALID_ARGUMENT, "last_execute_us: null or misaligned micros");
    }
    match state.run("last_execute_us", |embedding| Ok(embedding.last_execute_us())) {
        Ok(Some(last)) => {
            // SAFETY: checked writable.
            unsafe { micros.write(last) };
            OK
        }
        Ok(None) => state.refuse(ERROR_STATE, "last_execute_us: no frame has been ready yet"),
        Err(code) => code,
    }
}

/// Writes the arena bytes used so far (the high-water mark, handle included) and the arena's size.
///
/// # Safety
/// `embed` is a handle from create; `used` and `capacity` are null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_arena_used(
    embed: *mut EmbedHandle,
    used: *mut usize,
    capacity: *mut usize,
) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    if !writable(used) || !writable(capacity) {
        return state.refuse(ERROR_INVALID_ARGUMENT, "arena_used: null or misaligned used or capacity");
    }
    let whole = state.arena_end - state.arena_start;
    let Some(embedding) = state.embed.as_ref() else {
        return state.refuse(ERROR_STATE, "arena_used: the embedding was not created (see the create error)");
    };
    // The handle, the libraries and their padding come before the embedding's own arena.
    let handle_bytes = whole - embedding.arena_capacity();
    let total = handle_bytes + embedding.arena_used();
    // SAFETY: both checked writable.
    unsafe {
        used.write(total);
        capacity.write(whole);
    }
    state.clear();
    OK
}

/// The last failed call's message (empty after a success), NUL-terminated, valid until the next call on the
/// handle; a fixed text for a handle that is not a live embedding.
///
/// # Safety
/// `embed` is null or a handle from create.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_last_error(embed: *const EmbedHandle) -> *const c_char {
    // SAFETY: the caller's promise about the handle.
    match unsafe { state_ref(embed) } {
        Some(state) => state.message.as_ptr().cast(),
        None => c"not a live lpai_direct_embed handle".as_ptr(),
    }
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
    state.embed = None;
    if let Some(libraries) = state.libraries.take() {
        // SAFETY: written by create and dropped only here, once; the embedding that borrowed it is gone.
        unsafe { ptr::drop_in_place(libraries.as_ptr()) };
    }
    state.magic = 0;
    OK
}

// Not with `qemu-example`, whose create registers its own built-in set (the contract model alone).
#[cfg(all(test, not(feature = "qemu-example")))]
mod tests {
    //! The C functions called from Rust on the host (and under Miri): the contract model runs the
    //! `contract_single` fixture through them, every pointer and size is checked, and the header's numbers are
    //! the library's.

    extern crate std;

    use super::*;
    use lpai_direct_skel::platform::libraries::register_builtin_libraries;
    use lpai_direct_skel::testing::fake::BUILTINS;
    use std::string::{String, ToString};
    use std::vec::Vec;

    const BINARY: &[u8] = include_bytes!("../../../tests/fixtures/contract_single/contract_single.bin");
    const FRAMES: [(&[u8; 16], &[u8; 16]); 2] = [
        (
            include_bytes!("../../../tests/fixtures/contract_single/inputs/native/0_0.raw"),
            include_bytes!("../../../tests/fixtures/contract_single/reference/native/Result_0/out.raw"),
        ),
        (
            include_bytes!("../../../tests/fixtures/contract_single/inputs/native/1_0.raw"),
            include_bytes!("../../../tests/fixtures/contract_single/reference/native/Result_1/out.raw"),
        ),
    ];
    const LPAI: &CStr = c"libQnnLpaiContract.so";
    const SYSTEM: &CStr = c"libQnnSystemContract.so";

    /// Memory at the contract model's start alignment.
    #[repr(C, align(128))]
    struct Aligned<const N: usize>([u8; N]);

    fn last_error(embed: *mut EmbedHandle) -> String {
        // SAFETY: last_error answers a NUL-terminated string for any pointer it is given (null included).
        unsafe { CStr::from_ptr(lpai_direct_embed_last_error(embed)) }.to_str().unwrap().to_string()
    }

    /// A created embedding on the contract model over `arena`.
    fn create(arena: &mut [u8]) -> *mut EmbedHandle {
        register_builtin_libraries(&BUILTINS).unwrap();
        let mut embed = ptr::null_mut();
        // SAFETY: a live arena and NUL-terminated names.
        let created = unsafe {
            lpai_direct_embed_create(arena.as_mut_ptr().cast(), arena.len(), LPAI.as_ptr(), SYSTEM.as_ptr(), &mut embed)
        };
        assert_eq!(created, OK, "{}", last_error(embed));
        embed
    }

    #[test]
    fn the_header_numbers_are_the_library_s() {
        let header = include_str!("../../include/lpai_direct_embed.h");
        let defined: Vec<(&str, c_int)> = header
            .lines()
            .filter_map(|line| line.strip_prefix("#define LPAI_DIRECT_EMBED_"))
            .filter_map(|rest| rest.split_once(' '))
            .filter_map(|(name, value)| Some((name, value.trim_matches(['(', ')', ' ']).parse().ok()?)))
            .collect();
        let expected = [
            ("OK", OK),
            ("ERROR_INVALID_ARGUMENT", ERROR_INVALID_ARGUMENT),
            ("ERROR_ARENA_FULL", ERROR_ARENA_FULL),
            ("ERROR_STATE", ERROR_STATE),
            ("ERROR_LIBRARY", ERROR_LIBRARY),
            ("ERROR_BINARY", ERROR_BINARY),
            ("ERROR_QNN", ERROR_QNN),
            ("ERROR_FAILED", ERROR_FAILED),
            ("INPUT", DIRECTION_INPUT),
            ("OUTPUT", DIRECTION_OUTPUT),
        ];
        assert_eq!(defined, expected);
    }

    #[test]
    fn the_c_functions_run_the_contract_fixture_from_a_binary_in_place() {
        let mut arena = std::boxed::Box::new(Aligned([0u8; 16 * 1024]));
        let mut model = Aligned([0u8; 384]);
        model.0[..BINARY.len()].copy_from_slice(BINARY);
        let embed = create(&mut arena.0);
        let (mut in_place, mut count, mut ready) = (0, 0usize, 0);
        let mut name: *const c_char = ptr::null();
        let mut info = TensorDescription {
            name: ptr::null(),
            id: 0,
            data_type: 0,
            rank: 0,
            dimensions: ptr::null(),
            bytes: 0,
            quantized: 0,
            scale: 0.0,
            offset: 0,
        };
        let (mut input, mut input_bytes) = (ptr::null_mut(), 0usize);
        let (mut output, mut output_bytes) = (ptr::null(), 0usize);
        // SAFETY: a live handle, valid out-pointers, and a binary that outlives the handle, outside the arena.
        unsafe {
            assert_eq!(lpai_direct_embed_execute_frame(embed, &mut ready), ERROR_STATE);
            assert_eq!(last_error(embed), "execute_frame: no context binary is loaded");
            let buffer = model.0.as_ptr().cast();
            assert_eq!(lpai_direct_embed_load_padded(embed, buffer, BINARY.len(), model.0.len()), OK);
            assert_eq!(last_error(embed), "");
            assert_eq!(lpai_direct_embed_binary_in_place(embed, &mut in_place), OK);
            assert_eq!(in_place, 1);
            assert_eq!(lpai_direct_embed_graph_count(embed, &mut count), OK);
            assert_eq!(count, 1);
            assert_eq!(lpai_direct_embed_graph_name(embed, &mut name), OK);
            assert_eq!(CStr::from_ptr(name), c"single");
            assert_eq!(lpai_direct_embed_find_graph(embed, c"single".as_ptr(), &mut count), OK);
            assert_eq!(count, 0);
            assert_eq!(lpai_direct_embed_tensor_count(embed, DIRECTION_OUTPUT, &mut count), OK);
            assert_eq!(count, 1);
            assert_eq!(lpai_direct_embed_tensor_info(embed, DIRECTION_INPUT, 0, &mut info), OK);
            assert_eq!(CStr::from_ptr(info.name), c"in");
            assert_eq!((info.id, info.data_type, info.bytes, info.quantized), (1, 0x0408, 16, 1));
            assert_eq!((info.scale, info.offset), (0.0625, -128));
            assert_eq!(core::slice::from_raw_parts(info.dimensions, info.rank as usize), [1, 16]);
            assert_eq!(lpai_direct_embed_input(embed, 0, &mut input, &mut input_bytes), OK);
            assert_eq!(lpai_direct_embed_output(embed, 0, &mut output, &mut output_bytes), OK);
            assert_eq!((input_bytes, output_bytes), (16, 16));
            for (frame, reference) in FRAMES {
                ptr::copy_nonoverlapping(frame.as_ptr(), input.cast::<u8>(), frame.len());
                assert_eq!(lpai_direct_embed_execute_frame(embed, &mut ready), OK, "{}", last_error(embed));
                assert_eq!(ready, 1);
                assert_eq!(core::slice::from_raw_parts(output.cast::<u8>(), output_bytes), reference);
            }
            let mut micros = u64::MAX;
            assert_eq!(lpai_direct_embed_last_execute_us(embed, &mut micros), OK);
            assert!(micros < u64::MAX);
            let (mut used, mut capacity) = (0, 0);
            assert_eq!(lpai_direct_embed_arena_used(embed, &mut used, &mut capacity), OK);
            assert!(used > core::mem::size_of::<State<'_>>() && used < BINARY.len() + 4096, "{used}");
            assert_eq!(capacity, arena.0.len());
            // One binary per embedding.
            assert_eq!(lpai_direct_embed_load(embed, buffer, BINARY.len()), ERROR_STATE);
            assert_eq!(lpai_direct_embed_destroy(embed), OK);
            assert_eq!(lpai_direct_embed_destroy(embed), ERROR_INVALID_ARGUMENT);
            assert_eq!(last_error(embed), "not a live lpai_direct_embed handle");
        }
    }

    #[test]
    fn pointers_sizes_and_order_are_checked() {
        let mut arena = std::boxed::Box::new(Aligned([0u8; 16 * 1024]));
        let mut small = Aligned([0u8; 64]);
        let mut out = ptr::null_mut();
        let (mut ready, mut count) = (0, 0usize);
        // SAFETY: every pointer is null, or valid for what the function does with it.
        unsafe {
            let arena_pointer = arena.0.as_mut_ptr().cast::<c_void>();
            let create_in = |arena: *mut c_void, bytes: usize, out: *mut *mut EmbedHandle| {
                lpai_direct_embed_create(arena, bytes, LPAI.as_ptr(), SYSTEM.as_ptr(), out)
            };
            assert_eq!(create_in(arena_pointer, 16 * 1024, ptr::null_mut()), ERROR_INVALID_ARGUMENT);
            assert_eq!(create_in(ptr::null_mut(), 16, &mut out), ERROR_INVALID_ARGUMENT);
            assert_eq!(create_in(arena_pointer, usize::MAX, &mut out), ERROR_INVALID_ARGUMENT);
            assert_eq!(create_in(small.0.as_mut_ptr().cast(), 64, &mut out), ERROR_ARENA_FULL);
            assert!(out.is_null());
            let named = lpai_direct_embed_create(arena_pointer, 16 * 1024, ptr::null(), SYSTEM.as_ptr(), &mut out);
            assert_eq!(named, ERROR_INVALID_ARGUMENT);
            let missing = c"/no/such/libQnnLpai.so".as_ptr();
            assert_eq!(
                lpai_direct_embed_create(arena_pointer, 16 * 1024, missing, SYSTEM.as_ptr(), &mut out),
                ERROR_LIBRARY
            );
            assert!(!out.is_null());
            assert!(last_error(out).starts_with("loading the QNN backend library: "), "{}", last_error(out));
            assert_eq!(lpai_direct_embed_load(out, BINARY.as_ptr().cast(), BINARY.len()), ERROR_STATE);
            assert_eq!(lpai_direct_embed_destroy(out), OK);

            let embed = create(&mut arena.0);
            for null_handle in [ptr::null_mut(), small.0.as_mut_ptr().cast::<EmbedHandle>()] {
                assert_eq!(lpai_direct_embed_execute_frame(null_handle, &mut ready), ERROR_INVALID_ARGUMENT);
                assert_eq!(lpai_direct_embed_graph_count(null_handle, &mut count), ERROR_INVALID_ARGUMENT);
                assert_eq!(lpai_direct_embed_destroy(null_handle), ERROR_INVALID_ARGUMENT);
            }
            assert_eq!(lpai_direct_embed_execute_frame(embed, ptr::null_mut()), ERROR_INVALID_ARGUMENT);
            assert_eq!(last_error(embed), "execute_frame: null or misaligned ready");
            let misaligned = small.0.as_mut_ptr().add(1).cast::<usize>();
            assert_eq!(lpai_direct_embed_graph_count(embed, misaligned), ERROR_INVALID_ARGUMENT);
            assert_eq!(lpai_direct_embed_load(embed, ptr::null(), 16), ERROR_INVALID_ARGUMENT);
            let binary = BINARY.as_ptr().cast();
            assert_eq!(lpai_direct_embed_load_padded(embed, binary, BINARY.len(), 4), ERROR_INVALID_ARGUMENT);
            assert_eq!(lpai_direct_embed_load_padded(embed, binary, 0, 0), ERROR_INVALID_ARGUMENT);
            assert_eq!(lpai_direct_embed_load_padded(embed, binary, 1, usize::MAX), ERROR_INVALID_ARGUMENT);
            let inside = arena.0.as_ptr().add(8 * 1024).cast();
            assert_eq!(lpai_direct_embed_load(embed, inside, 512), ERROR_INVALID_ARGUMENT);
            assert_eq!(last_error(embed), "load: the binary overlaps the embedding's arena");
            // Not a binary at all: libQnnSystem refuses it.
            let garbage = [0u8; 64];
            assert_eq!(lpai_direct_embed_load(embed, garbage.as_ptr().cast(), garbage.len()), ERROR_BINARY);
            assert!(last_error(embed).starts_with("not a usable QNN context binary"), "{}", last_error(embed));
            assert_eq!(lpai_direct_embed_tensor_count(embed, 2, &mut count), ERROR_INVALID_ARGUMENT);
            assert_eq!(lpai_direct_embed_find_graph(embed, ptr::null(), &mut count), ERROR_INVALID_ARGUMENT);
            assert_eq!(lpai_direct_embed_destroy(embed), OK);
        }
    }
}
