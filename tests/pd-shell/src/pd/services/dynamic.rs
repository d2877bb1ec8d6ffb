//! `dlopen`, `dlsym`, `dlclose`: the PD's dynamic loader, which is this shell's ELF loader with the same checks
//! as for the skel (the `dlopen` table is in `pd::libraries`).

use super::c_string;
use crate::pd::libraries;
use crate::pd::loader::PATH_BYTES;
use core::ffi::{c_char, c_int, c_void};
use lpai_pd_shell::text::Escaped;

/// `void* dlopen(const char* path, int mode)`: the library's handle, or null after one stderr line saying why.
///
/// # Safety
/// `path` must be null or NUL-terminated.
pub unsafe extern "C" fn dlopen(path: *const c_char, _mode: c_int) -> *mut c_void {
    // SAFETY: the caller passes a NUL-terminated path (null is tolerated).
    let Some(path) = (unsafe { c_string(path.cast(), PATH_BYTES) }) else {
        crate::say!("lpai-pd-shell: dlopen (null): no path");
        return core::ptr::null_mut();
    };
    match libraries::open(path) {
        Ok(handle) => handle as usize as *mut c_void,
        Err(error) => {
            crate::say!("lpai-pd-shell: dlopen {}: {error}", Escaped(path));
            core::ptr::null_mut()
        }
    }
}

/// `void* dlsym(void* handle, const char* name)`: the symbol's address, or null (unknown handle or name).
///
/// # Safety
/// `name` must be null or NUL-terminated.
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    // SAFETY: the caller passes a NUL-terminated name (null is tolerated).
    let Some(name) = (unsafe { c_string(name.cast(), PATH_BYTES) }) else { return core::ptr::null_mut() };
    match libraries::symbol(handle as usize as u32, name) {
        Some(address) => address as *mut c_void,
        None => core::ptr::null_mut(),
    }
}

/// `int dlclose(void* handle)`: 0, or -1 for a handle `dlopen` did not give (or gave and took back).
pub extern "C" fn dlclose(handle: *mut c_void) -> c_int {
    if libraries::close(handle as usize as u32) {
        0
    } else {
        -1
    }
}
