//! The QNN libraries contexts are loaded on: the backend and, when the PD has one, libQnnSystem. Opened and freed
//! under the PD-wide vendor-calls lock; the one place that decides where a load's tensor metadata comes from.

use super::backend::{Backend, BackendOptions};
use super::error::RuntimeError;
use super::metadata::Metadata;
use super::system::SystemLibrary;
use crate::log;
use crate::platform::{Level, Line, Message, Say, VendorCalls};
use core::ffi::CStr;
use core::mem::ManuallyDrop;
use lpai_direct::metadata::Record;

/// Which of the two libraries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LibraryRole {
    /// The QNN backend (libQnnLpai).
    Backend,
    /// libQnnSystem.
    System,
}

/// Why [`Libraries::open`] failed: which library, and the runtime's error.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenError {
    /// The library that did not open.
    pub library: LibraryRole,
    /// Why.
    pub error: RuntimeError,
}

impl Say for OpenError {
    fn say(&self, f: &mut Line) {
        self.error.say(f);
    }
}

impl From<OpenError> for RuntimeError {
    fn from(error: OpenError) -> RuntimeError {
        error.error
    }
}

/// A backend and, optionally, libQnnSystem. Dropping it frees libQnnSystem, then the backend, under the
/// vendor-calls lock; the contexts loaded on it borrow it, so they are gone by then, unless one was leaked (or
/// closed with a frame that never ended): then both stay loaded for good, so the backend never frees, and never
/// touches, memory the leaked context stood on.
pub struct Libraries {
    // Dropped by hand in `Drop`, under the lock.
    backend: ManuallyDrop<Backend>,
    system: ManuallyDrop<Option<SystemLibrary>>,
}

impl Libraries {
    /// Loads the backend library (a registered built-in library of that name first, then the platform's loader)
    /// with `options`, and libQnnSystem the same way unless `system_library` is `None` (every load then comes with
    /// a metadata record). A backend whose system library fails is freed again, under the same lock.
    #[cfg_attr(
        target_pointer_width = "64",
        expect(clippy::result_large_err, reason = "no heap to box it in; answered once per open, never per frame")
    )]
    pub fn open(
        backend_library: &CStr,
        system_library: Option<&CStr>,
        options: &BackendOptions,
    ) -> Result<Libraries, OpenError> {
        let _vendor = VendorCalls::lock();
        let backend = Backend::load(backend_library, options)
            .map_err(|error| OpenError { library: LibraryRole::Backend, error })?;
        let system = match system_library {
            None => None,
            Some(path) => match SystemLibrary::load(path) {
                Ok(system) => Some(system),
                Err(error) => {
                    drop(backend);
                    return Err(OpenError { library: LibraryRole::System, error });
                }
            },
        };
        Ok(Libraries::new(backend, system))
    }

    /// Takes a backend, and libQnnSystem if any, that the caller created (under [`VendorCalls::lock`] when other
    /// users of QNN may run in the same PD), for example from a libQnnLpai linked into its image with
    /// [`Backend::from_providers`].
    pub fn new(backend: Backend, system: Option<SystemLibrary>) -> Libraries {
        Libraries { backend: ManuallyDrop::new(backend), system: ManuallyDrop::new(system) }
    }

    /// The backend (who it is, its alignment and persistent-binary needs).
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// libQnnSystem; `None` when opened without one.
    pub fn system(&self) -> Option<&SystemLibrary> {
        self.system.as_ref()
    }

    /// Registers an op package with the backend ([`Backend::register_op_package`]) under the vendor-calls lock:
    /// before any context that uses its ops is loaded on these libraries; it stays registered until they are freed.
    pub fn register_op_package(
        &self,
        path: &CStr,
        interface_provider: &CStr,
        target: Option<&CStr>,
    ) -> Result<(), RuntimeError> {
        let vendor = VendorCalls::lock();
        self.backend.register_op_package(&vendor, path, interface_provider, target)
    }

    /// Where a load's tensor metadata comes from: `record` when there is one, else libQnnSystem;
    /// [`RuntimeError::NoMetadata`] with neither.
    pub(crate) fn metadata<'l, 'r>(&'l self, record: Option<Record<'r>>) -> Result<Metadata<'l, 'r>, RuntimeError> {
        match (record, self.system()) {
            (Some(record), _) => Ok(Metadata::Record(record)),
            (None, Some(system)) => Ok(Metadata::System(system)),
            (None, None) => Err(RuntimeError::NoMetadata),
        }
    }
}

impl Drop for Libraries {
    fn drop(&mut self) {
        let live = self.backend.live_contexts();
        if live > 0 {
            log!(Level::Error, Message::LibrariesKeptForContexts, live);
            return;
        }
        let _vendor = VendorCalls::lock();
        // SAFETY: each is dropped once, here, and never used again; every context that borrowed them is gone.
        unsafe {
            ManuallyDrop::drop(&mut self.system);
            ManuallyDrop::drop(&mut self.backend);
        }
    }
}
