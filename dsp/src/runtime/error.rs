//! Runtime errors: small, fixed-size values that say which step failed and with what.

use super::arena::ArenaFull;
use crate::platform::PlatformError;
use core::fmt;
use lpai_direct::qnn::{error::error_name, Version};

/// A short copy of a name (tensor, graph, provider) for error messages; longer names are cut.
pub type Name = heapless::String<64>;

/// Copies `text` into a [`Name`], cutting it at a character boundary if it is too long.
pub fn name_of(text: &str) -> Name {
    let mut name = Name::new();
    for character in text.chars() {
        if name.push(character).is_err() {
            break;
        }
    }
    name
}

/// Why the runtime could not do what it was asked.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RuntimeError {
    /// A platform service failed (`what` says which step).
    Platform {
        /// The step, e.g. "loading the backend library".
        what: &'static str,
        /// The platform's answer.
        error: PlatformError,
    },
    /// The library does not export the symbol a QNN library must have.
    MissingSymbol(&'static str),
    /// The library exports the symbol but lists no provider.
    NoProviders,
    /// No provider speaks a core API this runtime was verified against.
    UnsupportedApi {
        /// The provider's name.
        provider: Name,
        /// Its core API version.
        found: Version,
        /// The oldest version this runtime accepts (same major, at least this minor).
        required: Version,
    },
    /// The provider's function table lacks a function the runtime needs.
    MissingFunction(&'static str),
    /// A QNN call returned an error.
    Qnn {
        /// The QNN function, e.g. "graphExecute".
        call: &'static str,
        /// `error & 0xFFFF`.
        code: u32,
    },
    /// The backend refused the PERSISTENT_BINARY context config.
    PersistentBinaryRefused {
        /// `error & 0xFFFF` from contextCreateFromBinary.
        code: u32,
        /// Whether the backend itself said it needs a persistent binary (otherwise the caller asked for it).
        required_by_backend: bool,
    },
    /// The caller's arena is too small.
    Arena(ArenaFull),
    /// The context binary is empty or larger than the runtime can address.
    BinarySize(u64),
    /// libQnnSystem could not describe the binary (it is truncated or not a context binary).
    MalformedBinary {
        /// `error & 0xFFFF` from systemContextGetBinaryInfo, 0 if the answer itself was unusable.
        code: u32,
    },
    /// More graphs or tensors than the fixed tables hold.
    TooMany {
        /// What overflowed ("graphs", "graph inputs", ...).
        what: &'static str,
        /// How many there are.
        count: usize,
        /// How many fit.
        limit: usize,
    },
    /// A graph index or name that the context does not have.
    NoSuchGraph,
    /// A tensor index that the graph does not have.
    NoSuchTensor {
        /// The index asked for.
        index: usize,
    },
    /// A tensor whose data type the runtime cannot convert to or from float32.
    UnsupportedDataType {
        /// The tensor.
        tensor: Name,
        /// Its `Qnn_DataType_t`.
        data_type: u32,
    },
    /// Data of the wrong size for a tensor.
    TensorSize {
        /// The tensor.
        tensor: Name,
        /// Bytes (or float32 elements × 4) the tensor holds.
        expected: usize,
        /// Bytes given.
        actual: usize,
    },
    /// The backend asked for a start alignment that is not a power of two.
    BadAlignment {
        /// The alignment it reported.
        start: usize,
    },
    /// graphExecute kept answering EARLY_TERMINATION.
    NeverCompleted {
        /// Executions tried.
        attempts: u32,
    },
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeError::Platform { what, error } => write!(f, "{what}: {error}"),
            RuntimeError::MissingSymbol(symbol) => write!(f, "not a QNN library: it does not export {symbol}"),
            RuntimeError::NoProviders => f.write_str("the QNN library lists no interface provider"),
            RuntimeError::UnsupportedApi { provider, found, required } => write!(
                f,
                "provider {provider} speaks QNN core API {}.{}.{}; this runtime needs {}.x with x >= {}",
                found.major, found.minor, found.patch, required.major, required.minor
            ),
            RuntimeError::MissingFunction(name) => write!(f, "the QNN provider does not implement {name}"),
            RuntimeError::Qnn { call, code } => write!(f, "{call} failed: {} ({code})", error_name(*code)),
            RuntimeError::PersistentBinaryRefused { code, required_by_backend } => write!(
                f,
                "the backend refused the PERSISTENT_BINARY context config ({}, {code}){}",
                error_name(*code),
                if *required_by_backend {
                    " although it reports that it requires a persistent binary"
                } else {
                    "; it reads the binary only while loading, so run without asking for a persistent binary"
                }
            ),
            RuntimeError::Arena(full) => write!(f, "{full}"),
            RuntimeError::BinarySize(size) => write!(f, "a context binary of {size} bytes cannot be loaded"),
            RuntimeError::MalformedBinary { code } => write!(
                f,
                "not a usable QNN context binary (truncated or corrupt): libQnnSystem answered {} ({code})",
                error_name(*code)
            ),
            RuntimeError::TooMany { what, count, limit } => {
                write!(f, "{count} {what}, but this runtime holds at most {limit}")
            }
            RuntimeError::NoSuchGraph => f.write_str("no such graph in the context"),
            RuntimeError::NoSuchTensor { index } => write!(f, "the graph has no tensor number {index}"),
            RuntimeError::UnsupportedDataType { tensor, data_type } => {
                let name = lpai_direct::qnn::DataType(*data_type).c_name().unwrap_or("an unknown data type");
                write!(f, "tensor {tensor}: cannot convert {name} ({data_type:#06x}) to or from float32")
            }
            RuntimeError::TensorSize { tensor, expected, actual } => {
                write!(f, "tensor {tensor}: expected {expected} bytes, got {actual}")
            }
            RuntimeError::BadAlignment { start } => {
                write!(f, "the backend asks for a start alignment of {start} bytes, which is not a power of two")
            }
            RuntimeError::NeverCompleted { attempts } => {
                write!(f, "graphExecute answered EARLY_TERMINATION {attempts} times in a row; giving up")
            }
        }
    }
}

impl From<ArenaFull> for RuntimeError {
    fn from(full: ArenaFull) -> Self {
        RuntimeError::Arena(full)
    }
}

/// Turns a QNN status into a result, naming the call.
pub fn check(status: u64, call: &'static str) -> Result<(), RuntimeError> {
    match lpai_direct::qnn::error::code(status) {
        0 => Ok(()),
        code => Err(RuntimeError::Qnn { call, code }),
    }
}

/// Unwraps a function-table entry, naming it when the provider left it empty.
pub fn require<F>(function: Option<F>, name: &'static str) -> Result<F, RuntimeError> {
    function.ok_or(RuntimeError::MissingFunction(name))
}
