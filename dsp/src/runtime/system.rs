//! libQnnSystem: reads a context binary's metadata (graphs, tensors) without creating a context.

use super::backend::c_text;
use super::error::{check, name_of, require, RuntimeError};
use crate::platform::libraries::Library;
use crate::platform::Message;
use core::ffi::{c_void, CStr};
use core::ptr;
use lpai_direct::qnn::{self, BinaryInfo, SystemContextHandle, SystemInterface, SystemInterfaceGetProvidersFn};

/// The system library and its chosen provider; unloaded when dropped.
pub struct SystemLibrary {
    interface: *const SystemInterface,
    // Declared last: closed when every description that borrowed this value is gone.
    _library: Option<Library>,
}

/// System API major version this runtime speaks.
const SYSTEM_API_MAJOR: u32 = 1;

impl SystemLibrary {
    /// Loads libQnnSystem.
    pub fn load(path: &CStr) -> Result<SystemLibrary, RuntimeError> {
        let library = Library::open(path)
            .map_err(|error| RuntimeError::LibraryNotLoaded { what: Message::StepLoadingSystemLibrary, error })?;
        let symbol = library.symbol(qnn::SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL);
        let symbol = symbol.ok_or(RuntimeError::MissingSymbol(Message::QnnSystemInterfaceGetProviders))?;
        // SAFETY: libQnnSystem exports QnnSystemInterface_getProviders with exactly this signature.
        let get_providers =
            unsafe { core::mem::transmute::<*mut c_void, SystemInterfaceGetProvidersFn>(symbol.as_ptr()) };
        // SAFETY: the library stays loaded while the value lives: it owns the library from here (on an error the
        // library drops here, after nothing from it is in use).
        let mut system = unsafe { SystemLibrary::from_providers(get_providers) }?;
        system._library = Some(library);
        Ok(system)
    }

    /// Uses a `QnnSystemInterface_getProviders` already linked into the program.
    ///
    /// # Safety
    /// `get_providers` must behave as QNN specifies, and what it returns must stay valid while this lives.
    pub unsafe fn from_providers(get_providers: SystemInterfaceGetProvidersFn) -> Result<SystemLibrary, RuntimeError> {
        let mut list: *mut *const SystemInterface = ptr::null_mut();
        let mut count = 0u32;
        // SAFETY: valid out-pointers.
        check(unsafe { get_providers(&mut list, &mut count) }, Message::QnnSystemInterfaceGetProviders)?;
        if list.is_null() || count == 0 {
            return Err(RuntimeError::NoProviders);
        }
        // SAFETY: the library returned `count` entries at `list`.
        let first = unsafe { *list };
        if first.is_null() {
            return Err(RuntimeError::NoProviders);
        }
        // SAFETY: a non-null provider entry owned by the library.
        let provider = unsafe { &*first };
        let found = provider.system_api_version;
        if found.major != SYSTEM_API_MAJOR || found.minor < qnn::DECLARED_SYSTEM_API.minor {
            return Err(RuntimeError::UnsupportedApi {
                // SAFETY: a NUL-terminated string owned by the library, or null.
                provider: name_of(unsafe { c_text(provider.provider_name) }),
                found,
                required: qnn::DECLARED_SYSTEM_API,
            });
        }
        Ok(SystemLibrary { interface: first, _library: None })
    }

    /// The system API version of the provider in use.
    pub fn api_version(&self) -> qnn::Version {
        // SAFETY: the provider entry lives as long as its library, which this value keeps loaded.
        unsafe { (*self.interface).system_api_version }
    }

    fn table(&self) -> &qnn::SystemInterfaceTable {
        // SAFETY: the provider entry lives as long as its library, which this value keeps loaded.
        unsafe { &(*self.interface).table }
    }

    /// Describes a context binary; the description lives until the returned value is dropped.
    pub fn describe<'s>(&'s self, binary: &[u8]) -> Result<BinaryDescription<'s>, RuntimeError> {
        let create = require(self.table().system_context_create, Message::QnnSystemContextCreate)?;
        let get_info = require(self.table().system_context_get_binary_info, Message::QnnSystemContextGetBinaryInfo)?;
        let mut handle: SystemContextHandle = ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check(unsafe { create(&mut handle) }, Message::QnnSystemContextCreate)?;
        let mut description = BinaryDescription { system: self, handle, info: ptr::null() };
        let mut info: *const BinaryInfo = ptr::null();
        let mut info_size = 0u64;
        // The buffer may be the caller's own (read-only) persistent binary: QNN declares it `void*`, but
        // systemContextGetBinaryInfo only parses the serialized binary, it never writes it.
        let buffer = binary.as_ptr().cast_mut().cast();
        // SAFETY: the buffer is valid for its length and only read; the info stays owned by the system context.
        let status = unsafe { get_info(handle, buffer, binary.len() as u64, &mut info, &mut info_size) };
        let code = qnn::error::code(status);
        if code != 0 || info.is_null() {
            return Err(RuntimeError::MalformedBinary { code });
        }
        description.info = info;
        Ok(description)
    }
}

/// A context binary's metadata, owned by a system context that is freed on drop.
pub struct BinaryDescription<'s> {
    system: &'s SystemLibrary,
    handle: SystemContextHandle,
    info: *const BinaryInfo,
}

impl BinaryDescription<'_> {
    /// The graphs the binary holds (name, inputs, outputs), or `MalformedBinary` for an unknown info version.
    pub fn graphs(&self) -> Result<&[qnn::GraphInfo], RuntimeError> {
        // SAFETY: `info` is non-null and owned by the system context this value keeps alive.
        let graphs = unsafe { &*self.info }.graphs().ok_or(RuntimeError::MalformedBinary { code: 0 })?;
        if graphs.num_graphs == 0 || graphs.graphs.is_null() {
            return Err(RuntimeError::MalformedBinary { code: 0 });
        }
        // SAFETY: the system library returned `num_graphs` entries at `graphs`, alive with the system context.
        Ok(unsafe { core::slice::from_raw_parts(graphs.graphs, graphs.num_graphs as usize) })
    }
}

impl Drop for BinaryDescription<'_> {
    fn drop(&mut self) {
        if let Some(free) = self.system.table().system_context_free {
            // SAFETY: the handle was created by systemContextCreate and is freed once.
            unsafe { free(self.handle) };
        }
    }
}
