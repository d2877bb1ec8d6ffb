//! Opening libraries: built-in libraries (linked into the program and registered by name) first, then the
//! platform's dynamic loader; an open [`Library`] is owned and closed when it drops. Firmware that links libQnnLpai
//! into a static PD image registers it as built-in; so do the qemu programs for the fake backend and the contract
//! model, since there is no loader there.

use super::{Current, LibraryHandle, Platform, PlatformError};
use core::ffi::{c_void, CStr};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, Ordering};

/// One exported symbol of a built-in library.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinSymbol {
    /// Its name.
    pub name: &'static CStr,
    /// Its address, as a function pointer of any signature.
    pub address: unsafe extern "C" fn(),
}

impl BuiltinSymbol {
    /// `QnnInterface_getProviders` of a QNN backend linked into the program.
    pub const fn backend_providers(providers: lpai_direct::qnn::InterfaceGetProvidersFn) -> BuiltinSymbol {
        // SAFETY: only the address is stored; `Backend::load` casts it back to exactly this signature, which it
        // looks up by this name.
        let address = unsafe {
            core::mem::transmute::<lpai_direct::qnn::InterfaceGetProvidersFn, unsafe extern "C" fn()>(providers)
        };
        BuiltinSymbol { name: lpai_direct::qnn::INTERFACE_GET_PROVIDERS_SYMBOL, address }
    }

    /// `QnnSystemInterface_getProviders` of a QNN system library linked into the program.
    pub const fn system_providers(providers: lpai_direct::qnn::SystemInterfaceGetProvidersFn) -> BuiltinSymbol {
        // SAFETY: as in `backend_providers`; `SystemLibrary::load` casts it back.
        let address = unsafe {
            core::mem::transmute::<lpai_direct::qnn::SystemInterfaceGetProvidersFn, unsafe extern "C" fn()>(providers)
        };
        BuiltinSymbol { name: lpai_direct::qnn::SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL, address }
    }
}

/// A library linked into the program.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinLibrary {
    /// The name `open_library` answers to (compared with the path's last component).
    pub name: &'static CStr,
    /// What it exports.
    pub symbols: &'static [BuiltinSymbol],
}

/// The registered set: null until registered, then one pointer to a `'static` slice reference, never changed
/// again, so that a name means the same library for the life of the program.
static BUILTINS: AtomicPtr<&'static [BuiltinLibrary]> = AtomicPtr::new(core::ptr::null_mut());

/// Why [`register_builtin_libraries`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuiltinsFixed;

/// Makes `libraries` loadable by name. The set is fixed from then on: registering the same set again is
/// fine, any other set is refused.
pub fn register_builtin_libraries(libraries: &'static &'static [BuiltinLibrary]) -> Result<(), BuiltinsFixed> {
    let set = (libraries as *const &'static [BuiltinLibrary]).cast_mut();
    match BUILTINS.compare_exchange(core::ptr::null_mut(), set, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => Ok(()),
        Err(current) if current == set => Ok(()),
        Err(_) => Err(BuiltinsFixed),
    }
}

fn builtins() -> &'static [BuiltinLibrary] {
    let set = BUILTINS.load(Ordering::Acquire);
    if set.is_null() {
        return &[];
    }
    // SAFETY: `register_builtin_libraries` stored a pointer to a `'static` slice reference, never replaced.
    unsafe { *set }
}

fn file_name(path: &CStr) -> &[u8] {
    let bytes = path.to_bytes();
    match bytes.iter().rposition(|&byte| byte == b'/') {
        Some(slash) => bytes.get(slash + 1..).unwrap_or(bytes),
        None => bytes,
    }
}

/// An open library: a built-in one, or one the platform's loader opened (its handle closes it when this drops).
/// Whoever turns one of its symbols into a function keeps the library alive while the function may be called.
#[derive(Debug)]
pub struct Library {
    opened: Opened,
}

#[derive(Debug)]
enum Opened {
    /// Linked into the program: nothing to close.
    Builtin(&'static BuiltinLibrary),
    /// The platform's loader's, closed when the handle drops.
    Loaded(LibraryHandle),
}

impl Library {
    /// Opens a built-in library by name (the path's last component), or asks the platform's loader.
    pub fn open(path: &CStr) -> Result<Library, PlatformError> {
        let name = file_name(path);
        let opened = match builtins().iter().find(|builtin| builtin.name.to_bytes() == name) {
            Some(builtin) => Opened::Builtin(builtin),
            None => Opened::Loaded(Current::open_library(path)?),
        };
        Ok(Library { opened })
    }

    /// The address of the symbol `name`, if the library exports it.
    pub fn symbol(&self, name: &CStr) -> Option<NonNull<c_void>> {
        match &self.opened {
            Opened::Builtin(builtin) => builtin
                .symbols
                .iter()
                .find(|symbol| symbol.name == name)
                .and_then(|symbol| NonNull::new(symbol.address as *mut c_void)),
            Opened::Loaded(handle) => Current::find_symbol(handle, name),
        }
    }
}
