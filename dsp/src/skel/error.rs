//! The skel's error at its boundary: the AEE code the call answers and, where a QNN call failed, QNN's own code.

use crate::runtime::RuntimeError;
use lpai_direct::aee::{EBADPARM, EFAILED, ENOMEMORY, ENOSUCHSYMBOL, EUNABLETOLOAD, EUNSUPPORTED};

/// What a failed method answers; its message is in the session's last error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SkelError {
    /// The AEE code (without the DSP offset).
    pub(super) aee: u32,
    /// The QNN error code (`error & 0xFFFF`) when a QNN call failed.
    pub(super) qnn: Option<u32>,
}

impl SkelError {
    /// An error with an AEE code only.
    pub(super) const fn aee(aee: u32) -> SkelError {
        SkelError { aee, qnn: None }
    }

    /// The AEE code a runtime error answers, with its QNN code.
    pub(super) fn of(error: &RuntimeError) -> SkelError {
        let aee = match error {
            RuntimeError::Arena(_) => ENOMEMORY,
            // What a DSP answers for a library its loader cannot load; the stub explains it from the search path.
            RuntimeError::LibraryNotLoaded { .. } => EUNABLETOLOAD,
            RuntimeError::MissingSymbol(_) => ENOSUCHSYMBOL,
            RuntimeError::UnsupportedApi { .. }
            | RuntimeError::UnsupportedDataType { .. }
            | RuntimeError::MissingFunction(_)
            | RuntimeError::NoProviders
            | RuntimeError::TooMany { .. } => EUNSUPPORTED,
            RuntimeError::MalformedBinary { .. }
            | RuntimeError::BinarySize(_)
            | RuntimeError::TensorSize { .. }
            | RuntimeError::NoSuchGraph
            | RuntimeError::CoreMix(_)
            | RuntimeError::NoSuchCore { .. }
            | RuntimeError::NoSuchTensor { .. }
            | RuntimeError::BadAlignment { .. }
            | RuntimeError::RecordGraphMissing { .. }
            | RuntimeError::RecordTensorsRefused { .. }
            | RuntimeError::MalformedRecord(_)
            | RuntimeError::RecordForAnotherBinary
            | RuntimeError::NoMetadata => EBADPARM,
            RuntimeError::OpPackage { code, .. } => match *code {
                lpai_direct::qnn::error::BACKEND_ERROR_NOT_SUPPORTED => EUNSUPPORTED,
                lpai_direct::qnn::error::BACKEND_ERROR_INVALID_ARGUMENT => EBADPARM,
                _ => EFAILED,
            },
            RuntimeError::Platform { .. }
            | RuntimeError::Qnn { .. }
            | RuntimeError::PersistentBinaryRefused { .. }
            | RuntimeError::NeverCompleted { .. } => EFAILED,
            RuntimeError::FrameInFlight { .. }
            | RuntimeError::NoFrameStarted { .. }
            | RuntimeError::FrameTimedOut { .. } => EFAILED,
            RuntimeError::InputSets(_) => EBADPARM,
        };
        SkelError { aee, qnn: error.qnn_code() }
    }
}

/// A codec refusal (`EBADPARM` from reading or writing a parameter).
impl From<u32> for SkelError {
    fn from(aee: u32) -> Self {
        SkelError::aee(aee)
    }
}
