//! Runtime errors: small, fixed-size values that say which step failed and with what.

use super::arena::ArenaFull;
use crate::platform::PlatformError;
use core::fmt;
use lpai_direct::metadata::MetadataError;
use lpai_direct::qnn::{error::error_name, Version};

/// A short copy of a name (tensor, graph, provider) for error messages; longer names are cut.
pub type Name = heapless::String<80>;

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
    /// The metadata record names a graph that graphRetrieve does not find in the context binary.
    RecordGraphMissing {
        /// The record's graph name.
        graph: Name,
        /// `error & 0xFFFF` from graphRetrieve.
        code: u32,
    },
    /// graphExecute refused the tensors a metadata record describes (their ids, count or sizes).
    RecordTensorsRefused {
        /// The graph.
        graph: Name,
        /// `error & 0xFFFF` from graphExecute.
        code: u32,
    },
    /// A metadata record that [`lpai_direct::metadata::Record::parse`] refused: where, and what is wrong.
    MalformedRecord(MetadataError),
    /// A metadata record whose binary hash is not the SHA-256 of the binary being loaded: the binary changed after
    /// it was checked, or the record belongs to another binary. The backend is not called.
    RecordForAnotherBinary,
    /// A load with neither libQnnSystem nor a metadata record to describe the binary's tensors.
    NoMetadata,
}

impl RuntimeError {
    /// QNN's own error code (`error & 0xFFFF`) when a QNN call failed.
    pub fn qnn_code(&self) -> Option<u32> {
        match *self {
            RuntimeError::Qnn { code, .. }
            | RuntimeError::PersistentBinaryRefused { code, .. }
            | RuntimeError::RecordGraphMissing { code, .. }
            | RuntimeError::RecordTensorsRefused { code, .. } => Some(code),
            RuntimeError::MalformedBinary { code } if code != 0 => Some(code),
            _ => None,
        }
    }
}

/// A QNN version written as `major.minor.patch`.
struct Dotted(Version);

impl ufmt::uDisplay for Dotted {
    fn fmt<W: ufmt::uWrite + ?Sized>(&self, f: &mut ufmt::Formatter<'_, W>) -> Result<(), W::Error> {
        ufmt::uwrite!(f, "{}.{}.{}", self.0.major, self.0.minor, self.0.patch)
    }
}

impl ufmt::uDisplay for RuntimeError {
    fn fmt<W: ufmt::uWrite + ?Sized>(&self, f: &mut ufmt::Formatter<'_, W>) -> Result<(), W::Error> {
        match self {
            RuntimeError::Platform { what, error } => ufmt::uwrite!(f, "{}: {}", what, error),
            RuntimeError::MissingSymbol(symbol) => ufmt::uwrite!(f, "not a QNN library: it does not export {}", symbol),
            RuntimeError::NoProviders => f.write_str("the QNN library lists no interface provider"),
            RuntimeError::UnsupportedApi { provider, found, required } => ufmt::uwrite!(
                f,
                "provider {} speaks QNN core API {}; this runtime needs {}.x with x >= {}",
                provider.as_str(),
                Dotted(*found),
                required.major,
                required.minor
            ),
            RuntimeError::MissingFunction(name) => ufmt::uwrite!(f, "the QNN provider does not implement {}", name),
            RuntimeError::Qnn { call, code } => ufmt::uwrite!(f, "{} failed: {} ({})", call, error_name(*code), code),
            RuntimeError::PersistentBinaryRefused { code, required_by_backend } => {
                ufmt::uwrite!(
                    f,
                    "the backend refused the PERSISTENT_BINARY context config ({}, {})",
                    error_name(*code),
                    code
                )?;
                f.write_str(if *required_by_backend {
                    " although it reports that it requires a persistent binary"
                } else {
                    "; it reads the binary only while loading, so run without asking for a persistent binary"
                })
            }
            RuntimeError::Arena(full) => ufmt::uwrite!(f, "{}", full),
            RuntimeError::BinarySize(size) => ufmt::uwrite!(f, "a context binary of {} bytes cannot be loaded", size),
            RuntimeError::MalformedBinary { code } => ufmt::uwrite!(
                f,
                "not a usable QNN context binary (truncated or corrupt): libQnnSystem answered {} ({})",
                error_name(*code),
                code
            ),
            RuntimeError::TooMany { what, count, limit } => {
                ufmt::uwrite!(f, "{} {}, but this runtime holds at most {}", count, what, limit)
            }
            RuntimeError::NoSuchGraph => f.write_str("no such graph in the context"),
            RuntimeError::NoSuchTensor { index } => ufmt::uwrite!(f, "the graph has no tensor number {}", index),
            RuntimeError::UnsupportedDataType { tensor, data_type } => {
                let name = lpai_direct::qnn::DataType(*data_type).c_name().unwrap_or("an unknown data type");
                ufmt::uwrite!(
                    f,
                    "tensor {}: cannot convert {} ({:#06x}) to or from float32",
                    tensor.as_str(),
                    name,
                    *data_type
                )
            }
            RuntimeError::TensorSize { tensor, expected, actual } => {
                ufmt::uwrite!(f, "tensor {}: expected {} bytes, got {}", tensor.as_str(), expected, actual)
            }
            RuntimeError::BadAlignment { start } => ufmt::uwrite!(
                f,
                "the backend asks for a start alignment of {} bytes, which is not a power of two",
                start
            ),
            RuntimeError::NeverCompleted { attempts } => {
                ufmt::uwrite!(f, "graphExecute answered EARLY_TERMINATION {} times in a row; giving up", attempts)
            }
            RuntimeError::RecordGraphMissing { graph, code } => ufmt::uwrite!(
                f,
                "the metadata record names graph {}, which the context binary does not have (graphRetrieve failed: {} ({}))",
                graph.as_str(),
                error_name(*code),
                code
            ),
            RuntimeError::RecordTensorsRefused { graph, code } => ufmt::uwrite!(
                f,
                "graph {}: graphExecute refused the tensors the metadata record describes ({}, {}): their ids, count \
                 or sizes do not match the context binary",
                graph.as_str(),
                error_name(*code),
                code
            ),
            RuntimeError::RecordForAnotherBinary => ufmt::uwrite!(
                f,
                "the metadata record was made for another binary (the SHA-256 it carries is not the binary's): the \
                 binary changed after it was checked, or the record belongs to another one"
            ),
            RuntimeError::MalformedRecord(error) => {
                ufmt::uwrite!(f, "the metadata record is malformed (byte {}", error.offset)?;
                if let Some(graph) = error.graph {
                    ufmt::uwrite!(f, ", graph {}", graph)?;
                }
                if let Some(tensor) = error.tensor {
                    ufmt::uwrite!(f, ", tensor {}", tensor)?;
                }
                ufmt::uwrite!(f, "): {}", error.what)
            }
            RuntimeError::NoMetadata => f.write_str(
                "no libQnnSystem was opened, so the binary's tensor metadata must come with it: load with a \
                 metadata record (lpai-net-run inspect BIN --emit_metadata FILE makes one)",
            ),
        }
    }
}

/// For host callers using `core::fmt` (anyhow, `{}`): the same text, formatted by `ufmt`.
impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(crate::message!("{}", self).as_str())
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
