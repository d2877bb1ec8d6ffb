//! libQnnLpaiContract.so: the contract model of the LPAI QNN backend (a model of the documented contract, not the
//! vendor library) as a backend library exporting `QnnInterface_getProviders`.

#![cfg_attr(target_arch = "hexagon", no_std)]
// The library name is the QNN convention (libQnn...), not a Rust crate name.
#![allow(non_snake_case)]

use lpai_direct::qnn::{ErrorHandle, Interface};

/// `QnnInterface_getProviders`: one LPAI provider (backend id 12, core API 2.32) backed by the contract model.
///
/// # Safety
/// `list` and `count` are null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn QnnInterface_getProviders(list: *mut *mut *const Interface, count: *mut u32) -> ErrorHandle {
    // SAFETY: forwarded from the caller.
    unsafe { lpai_contract_model::lpai_providers(list, count) }
}

#[cfg(target_arch = "hexagon")]
lpai_direct::pd_library_panic_handler!();
