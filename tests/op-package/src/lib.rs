//! liblpai_test_op_package.so: a test-only QNN op package for the contract model of libQnnLpai (a model of the
//! documented contract, not the vendor library); never part of a device artifact.
//!
//! Its interface provider [`LpaiTestOpPackage_interfaceProvider`] gives interface 1.4: `init`, `terminate` and
//! `getInfo`, describing package `lpai.test` with one op, `TestGain`. One library serves every backend of a
//! process (the loader opens it once), so `init` counts the backends that registered it and `terminate` counts
//! down; `getInfo` answers between them. Two more providers exist for the model's
//! tests: [`LpaiTestOpPackage_interfaceProviderV2`] (interface 2.0: `create`, `getInfo`, `free`; package
//! `lpai.test.v2`, ops `TestGain` and `TestBias`) and [`LpaiTestOpPackage_unsupportedVersionProvider`] (an
//! interface version 3.0, which no backend knows). The ops compute nothing: the model computes a graph's outputs
//! from its binary and only checks that its custom ops are registered.
//!
//! Built for the host (cargo) and for Hexagon (`scripts/build-hexagon.sh`: `target/virtual-adsp/`, `no_std`,
//! checked like the model's PD libraries: no reachable panic, PD services only).

#![cfg_attr(target_arch = "hexagon", no_std)]
// The providers' names are the package's C API.
#![allow(non_snake_case)]

use core::ffi::{c_char, CStr};
use core::sync::atomic::{AtomicU32, Ordering};
use lpai_direct::qnn::error::{
    OP_PACKAGE_ERROR_INVALID_ARGUMENT, OP_PACKAGE_ERROR_INVALID_HANDLE, OP_PACKAGE_ERROR_LIBRARY_NOT_INITIALIZED,
};
use lpai_direct::qnn::op_package::{
    GlobalInfrastructure, Implementation, ImplementationV1_4, ImplementationV2_0, Info, Interface, OpPackageHandle,
    INTERFACE_VERSION_1_4, INTERFACE_VERSION_2_0, RESERVED_INFO_SIZE,
};
use lpai_direct::qnn::{ErrorHandle, LogCallback, LogLevel, Version};

/// The package name of interface 1.4.
pub const PACKAGE_NAME: &CStr = c"lpai.test";
/// The package name of interface 2.0.
pub const PACKAGE_NAME_V2: &CStr = c"lpai.test.v2";
/// The op both packages provide.
pub const OP_NAME: &CStr = c"TestGain";
/// The second op of the 2.0 package.
pub const SECOND_OP_NAME: &CStr = c"TestBias";

/// A list of C strings a static [`Info`] can point at.
struct Names<const N: usize>([*const c_char; N]);

// SAFETY: the pointers refer to string literals, which are immutable for the whole program.
unsafe impl<const N: usize> Sync for Names<N> {}

static OPS: Names<1> = Names([OP_NAME.as_ptr()]);
static OPS_V2: Names<2> = Names([OP_NAME.as_ptr(), SECOND_OP_NAME.as_ptr()]);
static OPSET: Version = Version::new(1, 0, 0);

const fn info(package: &'static CStr, ops: *const *const c_char, count: u32) -> Info {
    Info {
        package_name: package.as_ptr(),
        operation_names: ops,
        operation_info: core::ptr::null(),
        num_operations: count,
        optimizations: core::ptr::null(),
        num_optimizations: 0,
        sdk_build_id: core::ptr::null(),
        sdk_api_version: core::ptr::null(),
        package_info: core::ptr::null(),
        opset_version: &OPSET,
        reserved: [0; RESERVED_INFO_SIZE],
    }
}

static INFO: Info = info(PACKAGE_NAME, OPS.0.as_ptr(), 1);
static INFO_V2: Info = info(PACKAGE_NAME_V2, OPS_V2.0.as_ptr(), 2);

/// Interface 1.4: `init`s not yet terminated.
static INITIALIZED: AtomicU32 = AtomicU32::new(0);
/// Interface 2.0: handles `create` gave and `free` did not take back.
static CREATED: AtomicU32 = AtomicU32::new(0);
/// The handle `create` gives (the same each time: the package has no per-handle state).
const HANDLE_V2: usize = 0x7E57;

fn code(error: u32) -> ErrorHandle {
    ErrorHandle::from(error)
}

/// Counts one user up.
fn count_up(users: &AtomicU32) {
    users.fetch_add(1, Ordering::AcqRel);
}

/// Counts one user down; false when there was none.
fn count_down(users: &AtomicU32) -> bool {
    users.fetch_update(Ordering::AcqRel, Ordering::Acquire, |count| count.checked_sub(1)).is_ok()
}

/// `init(infrastructure)`: one more backend uses the package.
unsafe extern "C" fn init(_infrastructure: GlobalInfrastructure) -> ErrorHandle {
    count_up(&INITIALIZED);
    0
}

/// `terminate()`: one backend less; an error without any.
unsafe extern "C" fn terminate() -> ErrorHandle {
    match count_down(&INITIALIZED) {
        true => 0,
        false => code(OP_PACKAGE_ERROR_LIBRARY_NOT_INITIALIZED),
    }
}

/// `getInfo(info)` of interface 1.4: only between `init` and `terminate`.
///
/// # Safety
/// `info` is null or valid for writes.
unsafe extern "C" fn get_info(info: *mut *const Info) -> ErrorHandle {
    if info.is_null() {
        return code(OP_PACKAGE_ERROR_INVALID_ARGUMENT);
    }
    if INITIALIZED.load(Ordering::Acquire) == 0 {
        return code(OP_PACKAGE_ERROR_LIBRARY_NOT_INITIALIZED);
    }
    // SAFETY: checked non-null; valid for writes per the caller.
    unsafe { info.write(&INFO) };
    0
}

/// `create(infrastructure, callback, maxLogLevel, opPackage)` of interface 2.0: one more handle.
///
/// # Safety
/// `package` is null or valid for writes.
unsafe extern "C" fn create(
    _infrastructure: GlobalInfrastructure,
    _callback: LogCallback,
    _max_level: LogLevel,
    package: *mut OpPackageHandle,
) -> ErrorHandle {
    if package.is_null() {
        return code(OP_PACKAGE_ERROR_INVALID_ARGUMENT);
    }
    count_up(&CREATED);
    // SAFETY: checked non-null; valid for writes per the caller.
    unsafe { package.write(core::ptr::without_provenance_mut(HANDLE_V2)) };
    0
}

/// `getInfo(info)` of interface 2.0: only while a handle is live.
///
/// # Safety
/// `info` is null or valid for writes.
unsafe extern "C" fn get_info_v2(info: *mut *const Info) -> ErrorHandle {
    if info.is_null() {
        return code(OP_PACKAGE_ERROR_INVALID_ARGUMENT);
    }
    if CREATED.load(Ordering::Acquire) == 0 {
        return code(OP_PACKAGE_ERROR_LIBRARY_NOT_INITIALIZED);
    }
    // SAFETY: checked non-null; valid for writes per the caller.
    unsafe { info.write(&INFO_V2) };
    0
}

/// `free(opPackage)` of interface 2.0.
unsafe extern "C" fn free(package: OpPackageHandle) -> ErrorHandle {
    if package.addr() != HANDLE_V2 || !count_down(&CREATED) {
        return code(OP_PACKAGE_ERROR_INVALID_HANDLE);
    }
    0
}

/// Writes `interface` to the caller's structure.
///
/// # Safety
/// `out` is null or valid for writes.
unsafe fn provide(out: *mut Interface, interface: Interface) -> ErrorHandle {
    if out.is_null() {
        return code(OP_PACKAGE_ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: checked non-null; valid for writes per the caller.
    unsafe { out.write(interface) };
    0
}

/// The interface provider of package `lpai.test` (interface 1.4, op `TestGain`).
///
/// # Safety
/// `interface` is null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn LpaiTestOpPackage_interfaceProvider(interface: *mut Interface) -> ErrorHandle {
    let v1_4 = ImplementationV1_4 {
        init: Some(init),
        terminate: Some(terminate),
        get_info: Some(get_info),
        ..ImplementationV1_4::default()
    };
    // SAFETY: per the caller.
    unsafe {
        provide(
            interface,
            Interface { interface_version: INTERFACE_VERSION_1_4, implementation: Implementation { v1_4 } },
        )
    }
}

/// The interface provider of package `lpai.test.v2` (interface 2.0, ops `TestGain` and `TestBias`).
///
/// # Safety
/// `interface` is null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn LpaiTestOpPackage_interfaceProviderV2(interface: *mut Interface) -> ErrorHandle {
    let v2_0 = ImplementationV2_0 {
        create: Some(create),
        get_info: Some(get_info_v2),
        free: Some(free),
        ..ImplementationV2_0::default()
    };
    // SAFETY: per the caller.
    unsafe {
        provide(
            interface,
            Interface { interface_version: INTERFACE_VERSION_2_0, implementation: Implementation { v2_0 } },
        )
    }
}

/// A provider of an interface version no backend knows (3.0), for the model's `unsupported version` test.
///
/// # Safety
/// `interface` is null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn LpaiTestOpPackage_unsupportedVersionProvider(interface: *mut Interface) -> ErrorHandle {
    // SAFETY: per the caller.
    unsafe { provide(interface, Interface { interface_version: Version::new(3, 0, 0), ..Interface::EMPTY }) }
}

#[cfg(target_arch = "hexagon")]
lpai_direct::pd_library_panic_handler!();
