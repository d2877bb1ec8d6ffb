//! The skel's exported entry points: what the FastRPC framework and firmware call.

use core::ffi::c_void;
use lpai_direct::aee;

/// FastRPC invoke entry named in the skel URI: `lpai_direct_skel_handle_invoke(handle, sc, args)`.
///
/// Until the IDL methods land, every call answers `AEE_EUNSUPPORTED` (as a DSP-side code).
///
/// # Safety
/// `args` must point to the `remote_arg` array described by `sc`, as the FastRPC framework guarantees.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_skel_handle_invoke(handle: u64, scalars: u32, args: *mut c_void) -> i32 {
    let _ = (handle, scalars, args);
    aee::dsp(aee::EUNSUPPORTED)
}

crate::self_tests! {
    fn unknown_calls_are_refused_with_an_aee_code() {
        // SAFETY: a null argument array is fine for a call that reads no arguments.
        let status = unsafe { lpai_direct_skel_handle_invoke(0, 0x1F00_0000, core::ptr::null_mut()) };
        check!(status as u32 == 0x8000_0414);
    }
}
