//! Errors and messages: the codes the C functions answer, and the message a handle keeps of its last failure
//! (`lpai_direct_embed_last_error` hands it to the caller).

use core::ffi::{c_char, c_int};
use core::sync::atomic::{AtomicPtr, Ordering};
use lpai_direct_skel::platform::Line;
use lpai_direct_skel::runtime::RuntimeError;

/// Success.
pub const OK: c_int = 0;
/// A null or misaligned pointer, a size that does not add up, an index or name the graph lacks, or a handle
/// that is not a live embedding.
pub const ERROR_INVALID_ARGUMENT: c_int = -1;
/// The arena is too small (for the handle, the libraries or the model).
pub const ERROR_ARENA_FULL: c_int = -2;
/// Called in the wrong state: before a binary is loaded, a second load, after a failed create, a load without a
/// metadata record on an embedding created with no system library.
pub const ERROR_STATE: c_int = -3;
/// The backend or system library could not be loaded or used, or the backend refused an op package.
pub const ERROR_LIBRARY: c_int = -4;
/// The context binary or its metadata record was refused (malformed, too large, PERSISTENT_BINARY refused, too
/// many graphs, a record naming a graph the binary lacks).
pub const ERROR_BINARY: c_int = -5;
/// A QNN call failed (the message names it and QNN's error code).
pub const ERROR_QNN: c_int = -6;
/// Anything else; the message says what.
pub const ERROR_FAILED: c_int = -7;

/// The C code of a runtime error.
pub(crate) fn code_of(error: &RuntimeError) -> c_int {
    match error {
        RuntimeError::Arena(_) => ERROR_ARENA_FULL,
        RuntimeError::Platform { .. }
        | RuntimeError::LibraryNotLoaded { .. }
        | RuntimeError::MissingSymbol(_)
        | RuntimeError::NoProviders
        | RuntimeError::UnsupportedApi { .. }
        | RuntimeError::MissingFunction(_)
        | RuntimeError::OpPackage { .. } => ERROR_LIBRARY,
        RuntimeError::BinarySize(_)
        | RuntimeError::MalformedBinary { .. }
        | RuntimeError::PersistentBinaryRefused { .. }
        | RuntimeError::TooMany { .. }
        | RuntimeError::MalformedRecord(_)
        | RuntimeError::RecordForAnotherBinary
        | RuntimeError::RecordGraphMissing { .. } => ERROR_BINARY,
        RuntimeError::Qnn { .. } | RuntimeError::NeverCompleted { .. } | RuntimeError::BadAlignment { .. } => ERROR_QNN,
        RuntimeError::NoSuchGraph
        | RuntimeError::CoreMix(_)
        | RuntimeError::NoSuchCore { .. }
        | RuntimeError::NoSuchTensor { .. }
        | RuntimeError::UnsupportedDataType { .. }
        | RuntimeError::TensorSize { .. } => ERROR_INVALID_ARGUMENT,
        RuntimeError::NoMetadata => ERROR_STATE,
        RuntimeError::FrameInFlight { .. } | RuntimeError::NoFrameStarted { .. } => ERROR_STATE,
        RuntimeError::InputSets(_) => ERROR_INVALID_ARGUMENT,
        _ => ERROR_FAILED,
    }
}

/// The C answer of a call with nothing to write back: `OK`, or the code of why not.
pub(crate) fn code(result: Result<(), c_int>) -> c_int {
    match result {
        Ok(()) => OK,
        Err(code) => code,
    }
}

/// Bytes of the last error's text, its NUL included: a record rendered in words (at most 256 bytes), or the record
/// itself as a log line (`lpai:` and its bytes in hex) when no message table was given.
const MESSAGE_BYTES: usize = lpai_direct::message::log_line_capacity(lpai_direct_skel::platform::LOG_LINE_BYTES);

/// Renders a record in words into `out` (at most `capacity` bytes, NUL included); answers the text's length: the
/// optional message table's `lpai_direct_messages_render`.
pub type Renderer = unsafe extern "C" fn(record: *const u8, length: usize, out: *mut c_char, capacity: usize) -> usize;

/// The renderer [`lpai_direct_embed_use_messages`] gave, if any (for every handle of the program).
static RENDERER: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());

/// Renders every handle's last error in words with `render` (the optional message library's
/// `lpai_direct_messages_render`); NULL goes back to the record in hex. See the header.
///
/// # Safety
/// `render`, if not null, behaves as `lpai_direct_messages_render` does and stays callable for as long as any
/// handle may fail.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_use_messages(render: Option<Renderer>) {
    RENDERER.store(render.map_or(core::ptr::null_mut(), |render| render as *mut ()), Ordering::Release);
}

/// The last failure's text, NUL-terminated (empty after a success).
pub(crate) struct LastError([u8; MESSAGE_BYTES]);

impl LastError {
    /// An empty text.
    pub(crate) const fn new() -> LastError {
        LastError([0; MESSAGE_BYTES])
    }

    /// Empties the text.
    pub(crate) fn clear(&mut self) {
        self.0[0] = 0;
    }

    /// Keeps `line` as text: rendered by the message table, if one was given, else as a log line.
    pub(crate) fn record(&mut self, line: &Line) {
        let record = line.record();
        let render = RENDERER.load(Ordering::Acquire);
        if !render.is_null() {
            // SAFETY: only `lpai_direct_embed_use_messages` stores a pointer, and it stores a `Renderer`.
            let render = unsafe { core::mem::transmute::<*mut (), Renderer>(render) };
            // SAFETY: the record is readable for its length and the text buffer writable for its size (the
            // renderer's contract: `lpai_direct_embed_use_messages`'s caller's promise).
            unsafe { render(record.as_ptr(), record.len(), self.0.as_mut_ptr().cast(), self.0.len()) };
            if let Some(last) = self.0.last_mut() {
                *last = 0;
            }
            return;
        }
        lpai_direct::message::log_line(record, &mut self.0);
    }

    /// The text as a NUL-terminated C string, valid while it is neither changed nor moved.
    pub(crate) fn as_ptr(&self) -> *const c_char {
        self.0.as_ptr().cast()
    }
}
