//! The skel's exported entry points: what the FastRPC framework and C callers reach.

use core::ffi::c_char;
use lpai_direct::codec::RemoteArg;

/// FastRPC invoke entry named in the skel URI: `lpai_direct_skel_handle_invoke(handle, sc, args)`.
///
/// # Safety
/// `args` must point to the `remote_arg` array described by `sc`, as the FastRPC framework guarantees.
#[cfg_attr(feature = "skel", no_mangle)]
pub unsafe extern "C" fn lpai_direct_skel_handle_invoke(handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { crate::skel::invoke(handle, scalars, args) }
}

/// `int lpai_direct_open(const char* uri, remote_handle64* handle)`: opens a session.
///
/// # Safety
/// `uri` must be NUL-terminated and `handle` writable.
#[cfg_attr(feature = "skel", no_mangle)]
pub unsafe extern "C" fn lpai_direct_open(uri: *const c_char, handle: *mut u64) -> i32 {
    // The deliberately panicking variant: the post-link check must refuse a skel built with it.
    #[cfg(feature = "panic-probe")]
    if uri.is_null() {
        panic!("panic-probe: a reachable panic");
    }
    // SAFETY: forwarded from the caller.
    unsafe { crate::skel::open_c(uri, handle) }
}

/// `int lpai_direct_close(remote_handle64 handle)`: closes a session and frees everything it holds.
#[cfg_attr(feature = "skel", no_mangle)]
pub extern "C" fn lpai_direct_close(handle: u64) -> i32 {
    lpai_direct::aee::dsp(crate::skel::close(handle))
}

/// Host builds only (never the device skel): `size_t lpai_direct_skel_host_resources(uint64_t* counts, size_t
/// capacity)` writes up to `capacity` counts of what the skel holds right now, in this order: open handles, loaded
/// contexts, memory blocks from the platform (sessions, arenas, job buffers) and their bytes, libraries the
/// runtime opened; answers how many counts it knows (5). Soak tests compare them before and after their cycles.
///
/// # Safety
/// `counts` must be null (nothing written) or valid for `capacity` writes.
#[cfg(not(target_arch = "hexagon"))]
#[cfg_attr(feature = "skel", no_mangle)]
pub unsafe extern "C" fn lpai_direct_skel_host_resources(counts: *mut u64, capacity: usize) -> usize {
    let known = crate::skel::host_resources();
    if !counts.is_null() {
        for (index, value) in known.iter().enumerate().take(capacity) {
            // SAFETY: index < capacity, and the caller promises `capacity` writable counts.
            unsafe { counts.add(index).write(*value) };
        }
    }
    known.len()
}
