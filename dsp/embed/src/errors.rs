//! Errors and messages: the codes the C functions answer, and the message a handle keeps of its last failure
//! (`lpai_direct_embed_last_error` hands it to the caller).

use core::ffi::{c_char, c_int};
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

/// Bytes of the last error message, its NUL included.
const MESSAGE_BYTES: usize = lpai_direct_skel::platform::LOG_LINE_BYTES + 1;

/// The last failure's message, NUL-terminated (empty after a success).
pub(crate) struct Message([u8; MESSAGE_BYTES]);

impl Message {
    /// An empty message.
    pub(crate) const fn new() -> Message {
        Message([0; MESSAGE_BYTES])
    }

    /// Empties the message.
    pub(crate) fn clear(&mut self) {
        self.0[0] = 0;
    }

    /// Keeps `text`, cut to what fits before the NUL.
    pub(crate) fn record(&mut self, text: &str) {
        let limit = MESSAGE_BYTES - 1;
        let mut length = 0;
        for (slot, &byte) in self.0.iter_mut().zip(text.as_bytes().iter().take(limit)) {
            *slot = byte;
            length += 1;
        }
        if let Some(end) = self.0.get_mut(length) {
            *end = 0;
        }
    }

    /// The message as a NUL-terminated C string, valid while the message is neither changed nor moved.
    pub(crate) fn as_ptr(&self) -> *const c_char {
        self.0.as_ptr().cast()
    }
}
