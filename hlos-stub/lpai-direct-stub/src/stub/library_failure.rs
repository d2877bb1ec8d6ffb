//! Where a failed call stopped among the configured libraries (the backend, the DSP side's libQnnSystem): from the
//! call's AEE code and the skel's `failed_library` answer (interface 1.3), never from the wording of its message.

use super::{Stub, StubError};
use lpai_direct::aee;
use lpai_direct::codec;
use lpai_direct::wire::{FAILED_LIBRARY_BACKEND, FAILED_LIBRARY_NONE, FAILED_LIBRARY_SYSTEM};

/// Which configured library a failure concerns (the skel failed to load it, or it refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DspLibrary {
    /// The QNN backend (libQnnLpai.so).
    Backend,
    /// The DSP side's libQnnSystem.
    System,
}

impl DspLibrary {
    /// What messages call it, and the flag that names it.
    pub(super) fn named(self) -> (&'static str, &'static str) {
        match self {
            DspLibrary::Backend => ("backend", "--backend"),
            DspLibrary::System => ("system library", "--dsp_system_library"),
        }
    }
}

/// Where a failed call that loads the configured libraries first (configure, probe, the loads,
/// register_op_package) stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LibraryFailure {
    /// The library did not load: the skel named it and answered AEE_EUNABLETOLOAD.
    Unloadable(DspLibrary),
    /// The library loaded and was refused after: a backend that does not create, a library without the entry
    /// points or API version the skel needs.
    Refused(DspLibrary),
    /// The call failed at neither library: before loading them (its arguments, the handle's state).
    Neither,
    /// Not known, and why: a failure of the transport or the stub, or a skel that does not say.
    Unknown(String),
}

impl Stub {
    /// The skel's `failed_library` answer (interface 1.3): the configured library the last failed call on this
    /// handle stopped at, `None` for neither. It clears nothing on the skel: ask it right after the failure.
    pub fn failed_library(&mut self) -> Result<Option<DspLibrary>, StubError> {
        use codec::failed_library as m;
        match self.call(m::METHOD, |_| Ok(()), |e| e.rout_u32(m::LIBRARY))? {
            FAILED_LIBRARY_NONE => Ok(None),
            FAILED_LIBRARY_BACKEND => Ok(Some(DspLibrary::Backend)),
            FAILED_LIBRARY_SYSTEM => Ok(Some(DspLibrary::System)),
            _ => Err(StubError::Malformed { method: m::METHOD.name }),
        }
    }

    /// Where `error`, the answer to the call just made, stopped among the configured libraries
    /// (`system_library`: whether the configuration named one), asking the skel ([`Stub::failed_library`]). A skel
    /// from before that method says nothing more than its code: a library that did not load is then the backend
    /// only when no system library was configured.
    pub fn library_failure(&mut self, error: &StubError, system_library: bool) -> LibraryFailure {
        let Some(code) = error.code().filter(|code| aee::is_dsp(*code)) else {
            return LibraryFailure::Unknown("the call failed before the skel answered".into());
        };
        let unloadable = aee::plain(code) == aee::EUNABLETOLOAD;
        match self.failed_library() {
            Ok(Some(library)) if unloadable => LibraryFailure::Unloadable(library),
            Ok(Some(library)) => LibraryFailure::Refused(library),
            Ok(None) => LibraryFailure::Neither,
            Err(StubError::SkelLacks { .. }) if unloadable && !system_library => {
                LibraryFailure::Unloadable(DspLibrary::Backend)
            }
            Err(asked) => {
                LibraryFailure::Unknown(format!("the skel does not say which library it stopped at: {asked}"))
            }
        }
    }
}
