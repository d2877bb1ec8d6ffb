//! Opening libraries: built-in libraries (linked into the program and registered by name) first, then the
//! platform's dynamic loader; an open [`Library`] is owned and closed when it drops. Firmware that links libQnnLpai
//! into a static PD image registers it as built-in ([`register_builtin_libraries`]); so do the qemu programs and
//! the tests, for the fake backend and the contract model of libQnnLpai, since there is no loader there. The
//! registry is additive and append-only: each caller registers its own set, up to [`MAX_BUILTIN_LIBRARIES`] in
//! all, and a registered name keeps meaning the same library for the life of the program.

use super::{Current, LibraryHandle, Line, Message, Platform, PlatformError, Say};
use crate::say;
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

/// A library linked into the program. Register it from a `static` (as [`register_builtin_libraries`] takes a
/// `'static` slice): a registration is recognised again by the entry's address.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinLibrary {
    /// The name [`Library::open`] answers to (compared with the path's last component).
    pub name: &'static CStr,
    /// What it exports.
    pub symbols: &'static [BuiltinSymbol],
}

/// Most built-in libraries a program can register, over all its [`register_builtin_libraries`] calls.
pub const MAX_BUILTIN_LIBRARIES: usize = 8;

/// Why [`register_builtin_libraries`] refused an entry. The entries of the set before it stay registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuiltinRefused {
    /// Another library is registered under this name: a name means the same library for the life of the program.
    NameTaken(&'static CStr),
    /// [`MAX_BUILTIN_LIBRARIES`] libraries are registered already.
    Full,
}

impl Say for BuiltinRefused {
    fn say(&self, line: &mut Line) {
        match self {
            BuiltinRefused::NameTaken(name) => match name.to_str() {
                Ok(name) => say!(line, Message::BuiltinNameTaken, name),
                Err(_) => say!(line, Message::BuiltinNameTaken, Message::NotUtf8Name),
            },
            BuiltinRefused::Full => say!(line, Message::BuiltinTableFull, MAX_BUILTIN_LIBRARIES),
        }
    }
}

/// An append-only table of built-in libraries: slots filled in order, never cleared or changed once filled, so it
/// has no holes and a registered entry stays what its name means. Every non-null slot points at a `'static`
/// [`BuiltinLibrary`] (only [`BuiltinTable::register`] writes a slot). Lock-free: a registration scans the slots
/// once, claiming the first empty one with a compare-exchange.
pub(crate) struct BuiltinTable<const N: usize> {
    slots: [AtomicPtr<BuiltinLibrary>; N],
}

impl<const N: usize> BuiltinTable<N> {
    /// An empty table.
    pub(crate) const fn new() -> Self {
        BuiltinTable { slots: [const { AtomicPtr::new(core::ptr::null_mut()) }; N] }
    }

    /// The entry a slot's pointer names: `None` for an empty slot.
    ///
    /// # Safety
    /// `pointer` was read from a slot of a table: null, or made from a `&'static BuiltinLibrary` by
    /// `register_one`.
    unsafe fn entry(pointer: *mut BuiltinLibrary) -> Option<&'static BuiltinLibrary> {
        // SAFETY: null or made from a `&'static BuiltinLibrary` (the caller's promise); the entry is only ever read.
        unsafe { pointer.cast_const().as_ref() }
    }

    /// The entry in `slot`: `None` while it is empty.
    fn slot_entry(slot: &AtomicPtr<BuiltinLibrary>) -> Option<&'static BuiltinLibrary> {
        // SAFETY: read from a slot, which only `register_one` writes.
        unsafe { Self::entry(slot.load(Ordering::Acquire)) }
    }

    /// Appends every entry of `libraries` that is not registered already, in order; stops at the first refusal.
    pub(crate) fn register(&self, libraries: &'static [BuiltinLibrary]) -> Result<(), BuiltinRefused> {
        libraries.iter().try_for_each(|library| self.register_one(library))
    }

    /// Registers `library`: already there (the same `'static` entry) is fine, another entry of its name is refused,
    /// otherwise it takes the first empty slot. A lost compare-exchange means another registration filled that slot
    /// first; its entry is judged like any other, then the scan goes on, so two registrations of one name always meet.
    fn register_one(&self, library: &'static BuiltinLibrary) -> Result<(), BuiltinRefused> {
        let pointer = (library as *const BuiltinLibrary).cast_mut();
        for slot in &self.slots {
            let mut current = slot.load(Ordering::Acquire);
            if current.is_null() {
                match slot.compare_exchange(core::ptr::null_mut(), pointer, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => return Ok(()),
                    Err(winner) => current = winner,
                }
            }
            // SAFETY: read from the slot (a load, or the winner a lost compare-exchange answers).
            let Some(existing) = (unsafe { Self::entry(current) }) else { continue };
            if core::ptr::eq(existing, library) {
                return Ok(());
            }
            if existing.name == library.name {
                return Err(BuiltinRefused::NameTaken(library.name));
            }
        }
        Err(BuiltinRefused::Full)
    }

    /// The registered library whose name is `name`.
    pub(crate) fn find(&self, name: &[u8]) -> Option<&'static BuiltinLibrary> {
        self.slots.iter().map_while(Self::slot_entry).find(|library| library.name.to_bytes() == name)
    }
}

/// The program's built-in libraries.
static BUILTINS: BuiltinTable<MAX_BUILTIN_LIBRARIES> = BuiltinTable::new();

/// Makes each of `libraries` loadable by its name, adding to what earlier calls registered (firmware, a test
/// program and its test backends may each register their own set). A name keeps meaning the same library for the
/// life of the program: registering the same `'static` entries again is fine, another entry under a registered
/// name is refused ([`BuiltinRefused::NameTaken`]), and so is an entry past [`MAX_BUILTIN_LIBRARIES`]
/// ([`BuiltinRefused::Full`]). The entries before a refused one stay registered. Lock-free, safe to call from
/// several threads at once.
pub fn register_builtin_libraries(libraries: &'static [BuiltinLibrary]) -> Result<(), BuiltinRefused> {
    BUILTINS.register(libraries)
}

/// The registered built-in library whose name is the last component of `path`.
pub(crate) fn find_builtin_library(path: &[u8]) -> Option<&'static BuiltinLibrary> {
    BUILTINS.find(file_name(path))
}

/// The last component of a path.
fn file_name(bytes: &[u8]) -> &[u8] {
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
        let opened = match find_builtin_library(path.to_bytes()) {
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
