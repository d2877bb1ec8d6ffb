//! Runtime errors: small, fixed-size values that say which step failed and with what.

use super::arena::ArenaFull;
use crate::platform::PlatformError;
use crate::platform::{Hex, Line, Say};
use crate::say;
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
    /// A QNN library (`what`: the backend or the system library) did not load.
    LibraryNotLoaded {
        /// Which one, e.g. "loading the QNN backend library".
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
    /// A `core_selection` of several cores ([`lpai_direct::qnn::lpai::CORE_MIX_UNSUPPORTED`]).
    CoreMix(u32),
    /// A `core_selection` naming a core the backend does not have (it reported `cores` with ENPU_CORE_NUM).
    NoSuchCore {
        /// The mask asked for.
        mask: u32,
        /// The cores there are.
        cores: u32,
    },
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
    // Asynchronous frames (issue 23, part 2).
    /// A call that needs the graph idle, made while a frame started with `start_frame` still executes.
    FrameInFlight {
        /// The graph.
        graph: Name,
        /// What was refused ("a second start_frame", "select_graph", "reading an output", ...).
        refused: &'static str,
    },
    /// `poll_frame` or `wait_frame` with no frame started.
    NoFrameStarted {
        /// The graph.
        graph: Name,
    },
    /// `wait_frame` waited its bound and the backend has not notified: the frame is still in flight.
    FrameTimedOut {
        /// The graph.
        graph: Name,
        /// How long it waited, in milliseconds.
        waited_ms: u32,
    },
    /// An input-set count other than 1 or 2.
    InputSets(u32),
    /// The backend refused an op package (`backendRegisterOpPackage`).
    OpPackage {
        /// `PATH:PROVIDER`, its end kept when it is long.
        package: Name,
        /// `error & 0xFFFF` from backendRegisterOpPackage.
        code: u32,
    },
}

impl RuntimeError {
    /// QNN's own error code (`error & 0xFFFF`) when a QNN call failed.
    pub fn qnn_code(&self) -> Option<u32> {
        match *self {
            RuntimeError::Qnn { code, .. }
            | RuntimeError::PersistentBinaryRefused { code, .. }
            | RuntimeError::RecordGraphMissing { code, .. }
            | RuntimeError::RecordTensorsRefused { code, .. }
            | RuntimeError::OpPackage { code, .. } => Some(code),
            RuntimeError::MalformedBinary { code } if code != 0 => Some(code),
            _ => None,
        }
    }
}

/// Where a metadata record was refused: `byte N, graph G, tensor T`.
pub(crate) struct RecordAt(pub(crate) MetadataError);

impl Say for RecordAt {
    fn say(&self, f: &mut Line) {
        say!(f, "byte ", self.0.offset);
        if let Some(graph) = self.0.graph {
            say!(f, ", graph ", graph);
        }
        if let Some(tensor) = self.0.tensor {
            say!(f, ", tensor ", tensor);
        }
    }
}

/// A QNN version written as `major.minor.patch`.
struct Dotted(Version);

impl Say for Dotted {
    fn say(&self, f: &mut Line) {
        say!(f, self.0.major, ".", self.0.minor, ".", self.0.patch)
    }
}

impl Say for RuntimeError {
    fn say(&self, f: &mut Line) {
        match self {
            RuntimeError::Platform { what, error } | RuntimeError::LibraryNotLoaded { what, error } => {
                say!(f, what, ": ", error)
            }
            RuntimeError::MissingSymbol(symbol) => say!(f, "not a QNN library: it does not export ", symbol),
            RuntimeError::NoProviders => f.text("the QNN library lists no interface provider"),
            RuntimeError::UnsupportedApi { provider, found, required } => say!(
                f,
                "provider ",
                provider.as_str(),
                " speaks QNN core API ",
                Dotted(*found),
                "; this runtime needs ",
                required.major,
                ".x with x >= ",
                required.minor
            ),
            RuntimeError::MissingFunction(name) => say!(f, "the QNN provider does not implement ", name),
            RuntimeError::Qnn { call, code } => say!(f, call, " failed: ", error_name(*code), " (", code, ")"),
            RuntimeError::PersistentBinaryRefused { code, required_by_backend } => {
                say!(
                    f,
                    "the backend refused the PERSISTENT_BINARY context config (",
                    error_name(*code),
                    ", ",
                    code,
                    ")"
                );
                f.text(if *required_by_backend {
                    " although it reports that it requires a persistent binary"
                } else {
                    "; it reads the binary only while loading, so run without asking for a persistent binary"
                })
            }
            RuntimeError::Arena(full) => say!(f, full),
            RuntimeError::BinarySize(size) => say!(f, "a context binary of ", size, " bytes cannot be loaded"),
            RuntimeError::MalformedBinary { code } => say!(
                f,
                "not a usable QNN context binary (truncated or corrupt): libQnnSystem answered ",
                error_name(*code),
                " (",
                code,
                ")"
            ),
            RuntimeError::TooMany { what, count, limit } => {
                say!(f, count, " ", what, ", but this runtime holds at most ", limit)
            }
            RuntimeError::NoSuchGraph => f.text("no such graph in the context"),
            RuntimeError::NoSuchCore { mask, cores } => say!(
                f,
                "core_selection ",
                Hex::of(*mask),
                " names a core this LPAI does not have: it reports ",
                cores,
                " eNPU core(s) (ENPU_CORE_NUM), bits 0 to ",
                cores.saturating_sub(1)
            ),
            RuntimeError::CoreMix(mask) => {
                say!(f, "core_selection ", Hex::of(*mask), " ", lpai_direct::qnn::lpai::CORE_MIX_UNSUPPORTED)
            }
            RuntimeError::NoSuchTensor { index } => say!(f, "the graph has no tensor number ", index),
            RuntimeError::UnsupportedDataType { tensor, data_type } => {
                let name = lpai_direct::qnn::DataType(*data_type).c_name().unwrap_or("an unknown data type");
                say!(
                    f,
                    "tensor ",
                    tensor.as_str(),
                    ": cannot convert ",
                    name,
                    " (",
                    Hex::padded(*data_type, 4),
                    ") to or from float32"
                )
            }
            RuntimeError::TensorSize { tensor, expected, actual } => {
                say!(f, "tensor ", tensor.as_str(), ": expected ", expected, " bytes, got ", actual)
            }
            RuntimeError::BadAlignment { start } => {
                say!(f, "the backend asks for a start alignment of ", start, " bytes, which is not a power of two")
            }
            RuntimeError::NeverCompleted { attempts } => {
                say!(f, "graphExecute answered EARLY_TERMINATION ", attempts, " times in a row; giving up")
            }
            RuntimeError::RecordGraphMissing { graph, code } => say!(
                f,
                "the metadata record names graph ",
                graph.as_str(),
                ", which the context binary does not have (graphRetrieve failed: ",
                error_name(*code),
                " (",
                code,
                "))"
            ),
            RuntimeError::RecordTensorsRefused { graph, code } => say!(
                f,
                "graph ",
                graph.as_str(),
                ": graphExecute refused the tensors the metadata record describes (",
                error_name(*code),
                ", ",
                code,
                "): their ids, count \
                 or sizes do not match the context binary"
            ),
            RuntimeError::RecordForAnotherBinary => say!(
                f,
                "the metadata record was made for another binary (the SHA-256 it carries is not the binary's): the \
                 binary changed after it was checked, or the record belongs to another one"
            ),
            RuntimeError::MalformedRecord(error) => {
                say!(f, "the metadata record is malformed (", RecordAt(*error), "): ", error.what)
            }
            RuntimeError::OpPackage { package, code } => {
                say!(f, OpPackageRefused { path: package.as_str(), interface_provider: None, code: *code })
            }
            RuntimeError::NoMetadata => f.text(
                "no libQnnSystem was opened, so the binary's tensor metadata must come with it: load with a \
                 metadata record (lpai-net-run inspect BIN --emit_metadata FILE makes one)",
            ),
            RuntimeError::FrameInFlight { graph, refused } => say!(
                f,
                "graph ",
                graph.as_str(),
                ": a frame is still executing, so ",
                refused,
                " is refused: wait for it (wait_frame, or poll_frame until it is no longer pending) first"
            ),
            RuntimeError::NoFrameStarted { graph } => {
                say!(f, "graph ", graph.as_str(), ": no frame was started (start_frame) to poll or wait for")
            }
            RuntimeError::FrameTimedOut { graph, waited_ms } => say!(
                f,
                "graph ",
                graph.as_str(),
                ": the backend has not completed the frame after ",
                waited_ms,
                " ms; it is still in flight (wait or poll again)"
            ),
            RuntimeError::InputSets(sets) => {
                say!(f, "input_sets ", sets, ": a graph has 1 input set, or 2 to fill one while the other executes")
            }
        }
    }
}

/// An op package the backend refused, said in full where the caller still has its path and provider (the skel):
/// `op package PATH:PROVIDER: backendRegisterOpPackage failed: NAME (CODE): what it means`.
pub struct OpPackageRefused<'a> {
    /// The package's path (for [`RuntimeError::OpPackage`], its `PATH:PROVIDER`).
    pub path: &'a str,
    /// The interface provider, when not already in `path`.
    pub interface_provider: Option<&'a str>,
    /// QNN's error code.
    pub code: u32,
}

impl Say for OpPackageRefused<'_> {
    fn say(&self, f: &mut Line) {
        say!(f, "op package ", self.path);
        if let Some(provider) = self.interface_provider {
            say!(f, ":", provider);
        }
        let code = self.code;
        say!(f, ": backendRegisterOpPackage failed: ", error_name(code), " (", code, ")", op_package_meaning(code))
    }
}

/// What backendRegisterOpPackage's documented codes mean (QnnBackend.h), after `: `; nothing for the others.
fn op_package_meaning(code: u32) -> &'static str {
    use lpai_direct::qnn::error as qnn;
    match code {
        qnn::BACKEND_ERROR_OP_PACKAGE_NOT_FOUND => ": it could not be opened (missing, or not a library)",
        qnn::BACKEND_ERROR_OP_PACKAGE_IF_PROVIDER_NOT_FOUND => ": it does not export that interface provider",
        qnn::BACKEND_ERROR_OP_PACKAGE_REGISTRATION_FAILED => ": its own initialisation failed",
        qnn::BACKEND_ERROR_OP_PACKAGE_UNSUPPORTED_VERSION => ": its interface version is not this backend's",
        qnn::BACKEND_ERROR_OP_PACKAGE_DUPLICATE => ": an op of that package and name is registered already",
        qnn::BACKEND_ERROR_NOT_SUPPORTED => ": this backend takes no op packages",
        qnn::BACKEND_ERROR_INVALID_ARGUMENT => ": no path or interface provider",
        _ => "",
    }
}

/// For host callers using `core::fmt` (anyhow, `{}`): the same text, said into a [`Line`].
impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(crate::message!(self).as_str())
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
