//! backendRegisterOpPackage: an op package opened from its library, its interface (1.4 or 2.0) and its names read
//! with checked, bounded reads, kept by its backend (at most [`MAX_PACKAGES`]) until backendFree releases it.

use crate::format::{Name, NAME_BYTES};
use crate::lock::with_state;
use crate::rules::{self, Breach};
use core::ffi::{c_char, c_void};
use lpai_direct::qnn::op_package::{Info, Interface, InterfaceProviderFn, OpPackageHandle};
use lpai_direct::qnn::{BackendHandle, ErrorHandle, LogLevel};

/// Op packages one backend holds.
pub const MAX_PACKAGES: usize = 4;
/// Ops one package may provide.
pub const MAX_PACKAGE_OPS: usize = 8;
/// Longest package path the model reads, in bytes (without the NUL).
pub const MAX_PATH_BYTES: usize = 1023;
/// The targets backendRegisterOpPackage accepts besides null and "": the backend's own processor, named as the
/// LPAI backend or as the DSP it runs on.
pub const TARGETS: [&str; 2] = ["LPAI", "DSP"];

/// How a package is released at backendFree: interface 1.4's `terminate`, or 2.0's `free` of its handle.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Release {
    Terminate(Option<unsafe extern "C" fn() -> ErrorHandle>),
    Free(Option<unsafe extern "C" fn(package: OpPackageHandle) -> ErrorHandle>, usize),
}

/// A registered package (library 0: a free slot).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PackageSlot {
    library: usize,
    release: Release,
    name: Name,
    ops: [Name; MAX_PACKAGE_OPS],
    op_count: usize,
}

impl PackageSlot {
    pub(crate) const EMPTY: PackageSlot = PackageSlot {
        library: 0,
        release: Release::Terminate(None),
        name: [0; NAME_BYTES],
        ops: [[0; NAME_BYTES]; MAX_PACKAGE_OPS],
        op_count: 0,
    };

    fn is_live(&self) -> bool {
        self.library != 0
    }

    fn ops(&self) -> impl Iterator<Item = &Name> {
        self.ops.iter().take(self.op_count)
    }

    /// Whether this package is `package` and provides `op`.
    pub(crate) fn provides(&self, package: &Name, op: &Name) -> bool {
        self.is_live() && self.name == *package && self.ops().any(|name| name == op)
    }
}

/// The PD's or the host's dynamic loader (the same three calls; the PD's is in linker/dsp-runtime-symbols.txt).
#[cfg(any(not(target_arch = "hexagon"), feature = "pd-loader"))]
mod loader {
    use core::ffi::{c_char, c_int, c_void};

    /// This build opens packages.
    pub(super) const AVAILABLE: bool = true;

    /// RTLD_NOW (RTLD_LOCAL is 0), on Linux and in the PD alike.
    const RTLD_NOW: c_int = 2;

    extern "C" {
        fn dlopen(path: *const c_char, mode: c_int) -> *mut c_void;
        fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
        fn dlclose(handle: *mut c_void) -> c_int;
        #[cfg(not(target_arch = "hexagon"))]
        fn dlerror() -> *const c_char;
    }

    /// # Safety
    /// `path` is NUL-terminated; opening runs the library's initializers.
    pub(super) unsafe fn open(path: *const c_char) -> usize {
        // SAFETY: per the caller.
        unsafe { dlopen(path, RTLD_NOW) }.expose_provenance()
    }

    /// # Safety
    /// `library` came from [`open`] and is open; `name` is NUL-terminated.
    pub(super) unsafe fn symbol(library: usize, name: *const c_char) -> *mut c_void {
        // SAFETY: per the caller.
        unsafe { dlsym(core::ptr::with_exposed_provenance_mut(library), name) }
    }

    /// # Safety
    /// `library` came from [`open`] and is closed once.
    pub(super) unsafe fn close(library: usize) {
        // SAFETY: per the caller.
        unsafe { dlclose(core::ptr::with_exposed_provenance_mut(library)) };
    }

    /// The host loader's reason for the last failure, if it has one.
    #[cfg(not(target_arch = "hexagon"))]
    pub(super) fn reason() -> *const c_char {
        // SAFETY: dlerror takes nothing and answers null or a NUL-terminated string.
        unsafe { dlerror() }
    }

    /// The PD's loader says why on its own log; the model has no reason to add.
    #[cfg(target_arch = "hexagon")]
    pub(super) fn reason() -> *const c_char {
        core::ptr::null()
    }
}

/// The Hexagon programs that link the model in statically have no dynamic loader: registration is not supported.
#[cfg(all(target_arch = "hexagon", not(feature = "pd-loader")))]
mod loader {
    use core::ffi::{c_char, c_void};

    /// This build opens no packages.
    pub(super) const AVAILABLE: bool = false;

    pub(super) unsafe fn open(_path: *const c_char) -> usize {
        0
    }

    pub(super) unsafe fn symbol(_library: usize, _name: *const c_char) -> *mut c_void {
        core::ptr::null_mut()
    }

    pub(super) unsafe fn close(_library: usize) {}

    pub(super) fn reason() -> *const c_char {
        core::ptr::null()
    }
}

/// The model's global infrastructure object: empty (a package must not use it; the model runs no op).
static INFRASTRUCTURE: [u64; 2] = [0; 2];

/// A C string read byte by byte up to its NUL, at most `limit` bytes before it; `None` when longer.
///
/// # Safety
/// `text` is a NUL-terminated string, or holds at least `limit + 1` readable bytes; they stay unchanged for `'a`
/// (the call that reads them).
unsafe fn bounded<'a>(text: *const c_char, limit: usize) -> Option<&'a [u8]> {
    let bytes = text.cast::<u8>();
    for length in 0..=limit {
        // SAFETY: per the caller, up to the NUL or `limit`.
        if unsafe { bytes.add(length).read() } == 0 {
            // SAFETY: the `length` bytes before the NUL, which the caller keeps for the call.
            return Some(unsafe { core::slice::from_raw_parts(bytes, length) });
        }
    }
    None
}

/// A package or op name: 1..=31 printable ASCII bytes, as a NUL-padded [`Name`].
///
/// # Safety
/// `text` is null or a NUL-terminated string.
unsafe fn name_of(text: *const c_char) -> Option<Name> {
    if text.is_null() {
        return None;
    }
    // SAFETY: per the caller.
    let bytes = unsafe { bounded(text, NAME_BYTES - 1) }?;
    if bytes.is_empty() || !bytes.iter().all(|byte| (0x20..=0x7E).contains(byte)) {
        return None;
    }
    let mut name = [0; NAME_BYTES];
    name.get_mut(..bytes.len())?.copy_from_slice(bytes);
    Some(name)
}

/// What one registration is about, for its log line.
#[derive(Clone, Copy)]
struct Request<'a> {
    path: &'a [u8],
    provider: &'a [u8],
}

impl Request<'_> {
    /// `contract: rule op-package: PATH: ` plus the reason, under `rule`'s code.
    fn breach(&self, rule: rules::Rule) -> Breach {
        rule.breach().name(self.path).text(": ")
    }
}

/// backendRegisterOpPackage.
///
/// # Safety
/// `path`, `provider` and `target` are null or NUL-terminated; the library at `path`, if any, is an op package
/// whose provider and interface follow QnnOpPackage.h (its code runs in this process).
pub(crate) unsafe extern "C" fn backend_register_op_package(
    backend: BackendHandle,
    path: *const c_char,
    provider: *const c_char,
    target: *const c_char,
) -> ErrorHandle {
    // SAFETY: forwarded from the caller.
    match unsafe { register(backend, path, provider, target) } {
        Ok(()) => 0,
        Err(breach) => breach.report(),
    }
}

/// # Safety
/// As for [`backend_register_op_package`].
unsafe fn register(
    backend: BackendHandle,
    path: *const c_char,
    provider: *const c_char,
    target: *const c_char,
) -> Result<(), Breach> {
    if with_state(|state| state.backend(backend)).is_none() {
        return Err(rules::BACKEND_HANDLE.breach().text("backendRegisterOpPackage on ").hex(backend.addr() as u64));
    }
    if path.is_null() || provider.is_null() {
        let breach = rules::OP_PACKAGE_ARGUMENTS.breach();
        return Err(breach.text("backendRegisterOpPackage with a null package path or interface provider"));
    }
    // SAFETY: NUL-terminated, per the caller.
    let Some(path_bytes) = (unsafe { bounded(path, MAX_PATH_BYTES) }) else {
        let breach = rules::OP_PACKAGE_ARGUMENTS.breach().text("a package path longer than ");
        return Err(breach.num(MAX_PATH_BYTES as u64).text(" bytes"));
    };
    // SAFETY: as above.
    let provider_bytes = unsafe { bounded(provider, MAX_PATH_BYTES) }.unwrap_or(b"(too long)");
    let request = Request { path: path_bytes, provider: provider_bytes };
    // SAFETY: as above.
    let target_bytes = if target.is_null() { Some(&b""[..]) } else { unsafe { bounded(target, NAME_BYTES) } };
    match target_bytes {
        Some(target) if target.is_empty() || TARGETS.iter().any(|known| known.as_bytes() == target) => {}
        other => {
            let breach = request.breach(rules::OP_PACKAGE_ARGUMENTS).text("target \"").name(other.unwrap_or(b"?"));
            return Err(breach.text("\" is not the backend's (null, \"\", \"LPAI\" or \"DSP\")"));
        }
    }
    if !loader::AVAILABLE {
        let breach = request.breach(rules::OP_PACKAGE_UNSUPPORTED);
        return Err(breach.text("this build of the model has no dynamic loader (a static Hexagon program)"));
    }
    // SAFETY: NUL-terminated, per the caller.
    let library = unsafe { loader::open(path) };
    if library == 0 {
        let reason = loader::reason();
        let breach = request.breach(rules::OP_PACKAGE_NOT_FOUND).text("cannot be opened as a library");
        // SAFETY: null or the loader's NUL-terminated reason.
        let reason = if reason.is_null() { None } else { unsafe { bounded(reason, 160) } };
        return Err(match reason {
            Some(reason) => breach.text(" (").name(reason).text(")"),
            None => breach,
        });
    }
    // SAFETY: an open library, per the caller an op package; `provider` is NUL-terminated.
    let loaded = unsafe { load(library, provider, request) };
    let slot = match loaded {
        Ok(slot) => slot,
        Err(breach) => {
            // SAFETY: opened above, closed once.
            unsafe { loader::close(library) };
            return Err(breach);
        }
    };
    let kept = with_state(|state| {
        let Some(backend) = state.backend(backend).and_then(|index| state.backends.get_mut(index)) else {
            return Err(rules::BACKEND_HANDLE.breach().text("backend freed during backendRegisterOpPackage"));
        };
        let packages = &mut backend.packages;
        if let Some(op) = slot.ops().find(|op| packages.iter().any(|kept| kept.provides(&slot.name, op))) {
            let breach = request.breach(rules::OP_PACKAGE_DUPLICATE).text("op ").name(&slot.name).text("::");
            return Err(breach.name(op).text(" is registered already"));
        }
        let Some(free) = packages.iter_mut().find(|kept| !kept.is_live()) else {
            let breach = request.breach(rules::OP_PACKAGE_REGISTRATION).text("the backend holds ");
            return Err(breach.num(MAX_PACKAGES as u64).text(" op packages already, the most it keeps"));
        };
        *free = slot;
        Ok(())
    });
    if kept.is_err() {
        // SAFETY: the package was loaded above and is kept nowhere.
        unsafe { release(&slot) };
    }
    kept
}

/// Finds the provider, takes the interface, initialises the package and reads its info.
///
/// # Safety
/// As for [`backend_register_op_package`]; `library` is open.
unsafe fn load(library: usize, provider: *const c_char, request: Request<'_>) -> Result<PackageSlot, Breach> {
    // SAFETY: per the caller.
    let symbol = unsafe { loader::symbol(library, provider) };
    if symbol.is_null() {
        let breach = request.breach(rules::OP_PACKAGE_PROVIDER).text("has no interface provider ");
        return Err(breach.name(request.provider));
    }
    // SAFETY: the provider symbol has QnnOpPackage_InterfaceProvider_t's type, per the caller.
    let provide = unsafe { core::mem::transmute::<*mut c_void, InterfaceProviderFn>(symbol) };
    let mut interface = Interface::EMPTY;
    // SAFETY: a valid interface to fill in.
    let answer = unsafe { provide(&mut interface) };
    let failed = |what: &str| request.breach(rules::OP_PACKAGE_REGISTRATION).text(what);
    if answer != 0 {
        let breach = failed("interface provider ").name(request.provider).text(" answered ");
        return Err(breach.num(answer));
    }
    let version = interface.interface_version;
    let infrastructure = INFRASTRUCTURE.as_ptr().cast_mut().cast::<c_void>();
    let (release, get_info, status) = match (version.major, version.minor) {
        (1, 4) => {
            // SAFETY: version 1.4 selects `v1_4`.
            let v1 = unsafe { interface.implementation.v1_4 };
            let (Some(init), Some(get_info)) = (v1.init, v1.get_info) else {
                return Err(failed("interface 1.4 without init or getInfo"));
            };
            // SAFETY: the package's init, with the model's (empty) infrastructure.
            (Release::Terminate(v1.terminate), get_info, unsafe { init(infrastructure) })
        }
        (2, 0) => {
            // SAFETY: version 2.0 selects `v2_0`.
            let v2 = unsafe { interface.implementation.v2_0 };
            let (Some(create), Some(get_info)) = (v2.create, v2.get_info) else {
                return Err(failed("interface 2.0 without create or getInfo"));
            };
            let mut handle: OpPackageHandle = core::ptr::null_mut();
            // SAFETY: the package's create, with a valid out-pointer and no log callback.
            let status = unsafe { create(infrastructure, None, LogLevel::ERROR, &mut handle) };
            (Release::Free(v2.free, handle.expose_provenance()), get_info, status)
        }
        _ => {
            let breach = request.breach(rules::OP_PACKAGE_VERSION).text("interface version ").version(version);
            return Err(breach.text(", the model knows 1.4 and 2.0"));
        }
    };
    let mut slot = PackageSlot { library, release, ..PackageSlot::EMPTY };
    if status != 0 {
        let what = if matches!(release, Release::Terminate(_)) { "init answered " } else { "create answered " };
        return Err(failed(what).num(status));
    }
    let mut info: *const Info = core::ptr::null();
    // SAFETY: the package's getInfo, with a valid out-pointer.
    let status = unsafe { get_info(&mut info) };
    let read = if status == 0 && !info.is_null() {
        // SAFETY: on success, the package's info, valid until terminate / free.
        unsafe { read_info(info, &mut slot) }
    } else {
        Err("getInfo failed")
    };
    if let Err(what) = read {
        // SAFETY: initialised above, released once (the library stays open for the caller to close).
        unsafe { release_package(&slot) };
        return Err(failed(what).text(" (getInfo answered ").num(status).text(")"));
    }
    Ok(slot)
}

/// Reads the package name and op names into `slot`: checked reads, names of 1..=31 printable bytes, 0..=8 ops.
///
/// # Safety
/// `info` points at the package's valid `QnnOpPackage_Info_t`.
unsafe fn read_info(info: *const Info, slot: &mut PackageSlot) -> Result<(), &'static str> {
    // SAFETY: per the caller.
    let info = unsafe { info.read_unaligned() };
    // SAFETY: the package's name: null or NUL-terminated.
    slot.name = unsafe { name_of(info.package_name) }.ok_or("a package name that is not 1..=31 printable bytes")?;
    let count = info.num_operations as usize;
    if count > MAX_PACKAGE_OPS || (count > 0 && info.operation_names.is_null()) {
        return Err("more than 8 ops, or no op names");
    }
    for (index, op) in slot.ops.iter_mut().enumerate().take(count) {
        // SAFETY: `count` op name pointers, per the caller.
        let name = unsafe { info.operation_names.add(index).read_unaligned() };
        // SAFETY: null or NUL-terminated, per the caller.
        *op = unsafe { name_of(name) }.ok_or("an op name that is not 1..=31 printable bytes")?;
    }
    slot.op_count = count;
    Ok(())
}

/// Terminates or frees the package (its library stays open).
///
/// # Safety
/// The package was initialised and is released once.
unsafe fn release_package(slot: &PackageSlot) {
    match slot.release {
        // SAFETY: per the caller.
        Release::Terminate(Some(terminate)) => unsafe { terminate() },
        // SAFETY: per the caller, the handle its create gave.
        Release::Free(Some(free), handle) => unsafe { free(core::ptr::with_exposed_provenance_mut(handle)) },
        _ => 0,
    };
}

/// Releases a registered package: terminate / free, then dlclose.
///
/// # Safety
/// The package is live and released once.
unsafe fn release(slot: &PackageSlot) {
    // SAFETY: per the caller.
    unsafe {
        release_package(slot);
        loader::close(slot.library);
    }
}

/// Releases the packages backendFree took from its backend.
pub(crate) fn release_all(packages: &[PackageSlot; MAX_PACKAGES]) {
    for slot in packages.iter().filter(|slot| slot.is_live()) {
        // SAFETY: taken from a freed backend, so live and released only here.
        unsafe { release(slot) };
    }
}
