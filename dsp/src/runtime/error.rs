//! Runtime errors: small, fixed-size values that say which step failed and with what.

use super::arena::ArenaFull;
use crate::platform::PlatformError;
use crate::platform::{Hex, Line, Message, QnnError, Say};
use crate::say;
use core::fmt;
use lpai_direct::metadata::MetadataError;
use lpai_direct::qnn::Version;

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
        /// The step, e.g. [`Message::StepReadingContextBinary`].
        what: Message,
        /// The platform's answer.
        error: PlatformError,
    },
    /// A QNN library (`what`: the backend or the system library) did not load.
    LibraryNotLoaded {
        /// Which one, e.g. [`Message::StepLoadingBackendLibrary`].
        what: Message,
        /// The platform's answer.
        error: PlatformError,
    },
    /// The library does not export the symbol a QNN library must have (its name, e.g.
    /// [`Message::QnnInterfaceGetProviders`]).
    MissingSymbol(Message),
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
    /// The provider's function table lacks a function the runtime needs (its name, e.g.
    /// [`Message::QnnGraphExecute`]).
    MissingFunction(Message),
    /// A QNN call returned an error.
    Qnn {
        /// The QNN function, e.g. [`Message::QnnGraphExecute`].
        call: Message,
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
        /// What overflowed ([`Message::TooManyGraphs`], [`Message::TooManyInputBytes`], ...).
        what: Message,
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
        /// What was refused ([`Message::RefusedSecondStartFrame`], [`Message::RefusedSelectGraph`], ...).
        refused: Message,
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
        match (self.0.graph, self.0.tensor) {
            (None, None) => say!(f, Message::RecordAtByte, self.0.offset),
            (Some(graph), None) => say!(f, Message::RecordAtGraph, self.0.offset, graph),
            (None, Some(tensor)) => say!(f, Message::RecordAtTensor, self.0.offset, tensor),
            (Some(graph), Some(tensor)) => say!(f, Message::RecordAtGraphTensor, self.0.offset, graph, tensor),
        }
    }
}

/// A QNN call that answered an error: `CALL failed: NAME (CODE)`, said alone where a whole [`RuntimeError`] would
/// cost its size on the stack (a drop's log line).
pub(crate) struct QnnFailure {
    /// The QNN function, e.g. [`Message::QnnBackendFree`].
    pub(crate) call: Message,
    /// The error code it answered.
    pub(crate) code: u32,
}

impl Say for QnnFailure {
    fn say(&self, f: &mut Line) {
        say!(f, Message::QnnCallFailed, self.call, QnnError(self.code), self.code);
    }
}

/// A QNN version written as `major.minor.patch`.
struct Dotted(Version);

impl Say for Dotted {
    fn say(&self, f: &mut Line) {
        say!(f, Message::Dotted, self.0.major, self.0.minor, self.0.patch)
    }
}

impl Say for RuntimeError {
    fn say(&self, f: &mut Line) {
        match self {
            RuntimeError::Platform { what, error } | RuntimeError::LibraryNotLoaded { what, error } => {
                say!(f, Message::StepFailed, what, error)
            }
            RuntimeError::MissingSymbol(symbol) => say!(f, Message::MissingSymbol, symbol),
            RuntimeError::NoProviders => say!(f, Message::NoProviders),
            RuntimeError::UnsupportedApi { provider, found, required } => {
                say!(f, Message::UnsupportedApi, provider.as_str(), Dotted(*found), required.major, required.minor)
            }
            RuntimeError::MissingFunction(name) => say!(f, Message::MissingFunction, name),
            RuntimeError::Qnn { call, code } => QnnFailure { call: *call, code: *code }.say(f),
            RuntimeError::PersistentBinaryRefused { code, required_by_backend: true } => {
                say!(f, Message::PersistentBinaryRefusedRequired, QnnError(*code), code)
            }
            RuntimeError::PersistentBinaryRefused { code, required_by_backend: false } => {
                say!(f, Message::PersistentBinaryRefused, QnnError(*code), code)
            }
            RuntimeError::Arena(full) => full.say(f),
            RuntimeError::BinarySize(size) => say!(f, Message::BinarySize, size),
            RuntimeError::MalformedBinary { code } => say!(f, Message::MalformedBinary, QnnError(*code), code),
            RuntimeError::TooMany { what, count, limit } => say!(f, Message::TooMany, count, what, limit),
            RuntimeError::NoSuchGraph => say!(f, Message::NoSuchGraph),
            RuntimeError::NoSuchCore { mask, cores } => {
                say!(f, Message::NoSuchCore, Hex::of(*mask), cores, cores.saturating_sub(1))
            }
            RuntimeError::CoreMix(mask) => say!(f, Message::CoreMix, Hex::of(*mask), Message::CoreMixUnsupported),
            RuntimeError::NoSuchTensor { index } => say!(f, Message::NoSuchTensor, index),
            RuntimeError::UnsupportedDataType { tensor, data_type } => say!(
                f,
                Message::UnsupportedDataType,
                tensor.as_str(),
                DataTypeName(*data_type),
                Hex::padded(*data_type, 4)
            ),
            RuntimeError::TensorSize { tensor, expected, actual } => {
                say!(f, Message::TensorSize, tensor.as_str(), expected, actual)
            }
            RuntimeError::BadAlignment { start } => say!(f, Message::BadAlignment, start),
            RuntimeError::NeverCompleted { attempts } => say!(f, Message::NeverCompleted, attempts),
            RuntimeError::RecordGraphMissing { graph, code } => {
                say!(f, Message::RecordGraphMissing, graph.as_str(), QnnError(*code), code)
            }
            RuntimeError::RecordTensorsRefused { graph, code } => {
                say!(f, Message::RecordTensorsRefused, graph.as_str(), QnnError(*code), code)
            }
            RuntimeError::RecordForAnotherBinary => say!(f, Message::RecordForAnotherBinary),
            RuntimeError::MalformedRecord(error) => say!(f, Message::MalformedRecord, RecordAt(*error), error.what),
            RuntimeError::OpPackage { package, code } => {
                OpPackageRefused { path: package.as_str(), interface_provider: None, code: *code }.say(f)
            }
            RuntimeError::NoMetadata => say!(f, Message::NoMetadata),
            RuntimeError::FrameInFlight { graph, refused } => {
                say!(f, Message::FrameInFlight, graph.as_str(), refused)
            }
            RuntimeError::NoFrameStarted { graph } => say!(f, Message::NoFrameStarted, graph.as_str()),
            RuntimeError::FrameTimedOut { graph, waited_ms } => {
                say!(f, Message::FrameTimedOut, graph.as_str(), waited_ms)
            }
            RuntimeError::InputSets(sets) => say!(f, Message::InputSets, sets),
        }
    }
}

/// A QNN data type, said by its C name (on the HLOS side).
struct DataTypeName(u32);

impl Say for DataTypeName {
    fn say(&self, line: &mut Line) {
        line.data_type(self.0);
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
        let code = self.code;
        let meaning = op_package_meaning(code);
        match self.interface_provider {
            Some(provider) => {
                say!(f, Message::OpPackageRefusedProvider, self.path, provider, QnnError(code), code, meaning)
            }
            None => say!(f, Message::OpPackageRefused, self.path, QnnError(code), code, meaning),
        }
    }
}

/// What backendRegisterOpPackage's documented codes mean (QnnBackend.h), after `: `; nothing for the others.
fn op_package_meaning(code: u32) -> Message {
    use lpai_direct::qnn::error as qnn;
    match code {
        qnn::BACKEND_ERROR_OP_PACKAGE_NOT_FOUND => Message::OpPackageNotFound,
        qnn::BACKEND_ERROR_OP_PACKAGE_IF_PROVIDER_NOT_FOUND => Message::OpPackageNoProvider,
        qnn::BACKEND_ERROR_OP_PACKAGE_REGISTRATION_FAILED => Message::OpPackageInitFailed,
        qnn::BACKEND_ERROR_OP_PACKAGE_UNSUPPORTED_VERSION => Message::OpPackageVersion,
        qnn::BACKEND_ERROR_OP_PACKAGE_DUPLICATE => Message::OpPackageDuplicate,
        qnn::BACKEND_ERROR_NOT_SUPPORTED => Message::OpPackageNotSupported,
        qnn::BACKEND_ERROR_INVALID_ARGUMENT => Message::OpPackageNoPath,
        _ => Message::Nothing,
    }
}

/// For host callers using `core::fmt` (anyhow, `{}`): the same text, rendered from the record the DSP says.
impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Line::of(self).rendered().as_str())
    }
}

impl From<ArenaFull> for RuntimeError {
    fn from(full: ArenaFull) -> Self {
        RuntimeError::Arena(full)
    }
}

/// Turns a QNN status into a result, naming the call (a `Qnn...` message of the table, e.g.
/// [`Message::QnnGraphFinalize`]).
pub fn check(status: u64, call: Message) -> Result<(), RuntimeError> {
    match lpai_direct::qnn::error::code(status) {
        0 => Ok(()),
        code => Err(RuntimeError::Qnn { call, code }),
    }
}

/// Unwraps a function-table entry, naming it (a `Qnn...` message of the table) when the provider left it empty.
pub fn require<F>(function: Option<F>, name: Message) -> Result<F, RuntimeError> {
    function.ok_or(RuntimeError::MissingFunction(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_record_is_said_as_messages_and_renders_in_the_words_it_always_had() {
        let error = MetadataError { offset: 60, graph: Some(0), tensor: Some(0), what: Message::RecordEndsEarly };
        let rendered = Line::of(&RuntimeError::MalformedRecord(error)).rendered();
        assert_eq!(
            rendered.as_str(),
            "the metadata record is malformed (byte 60, graph 0, tensor 0): the record ends early"
        );
        let error = MetadataError { offset: 4, graph: None, tensor: None, what: Message::RecordVersion };
        let rendered = Line::of(&RuntimeError::MalformedRecord(error)).rendered();
        assert_eq!(rendered.as_str(), "the metadata record is malformed (byte 4): the record's version is not 2");
    }
}
