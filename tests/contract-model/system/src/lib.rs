//! libQnnSystemContract.so: the contract model's QNN system library (a model of the documented contract, not the
//! vendor library), exporting `QnnSystemInterface_getProviders`; it describes LPCM context binaries.

#![cfg_attr(target_arch = "hexagon", no_std)]
// The library name is the QNN convention (libQnn...), not a Rust crate name.
#![allow(non_snake_case)]

use lpai_direct::qnn::{ErrorHandle, SystemInterface};

/// `QnnSystemInterface_getProviders`: one system provider (system API 1.15) backed by the contract model.
///
/// # Safety
/// `list` and `count` are null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn QnnSystemInterface_getProviders(
    list: *mut *mut *const SystemInterface,
    count: *mut u32,
) -> ErrorHandle {
    // SAFETY: forwarded from the caller.
    unsafe { lpai_contract_model::system_providers(list, count) }
}

#[cfg(target_arch = "hexagon")]
lpai_direct::pd_library_panic_handler!();
