//! The local transport: the skel's own code in this process (host build of the dsp crate), called with the
//! same encoded `remote_arg`s FastRPC would carry, so the whole wire path runs without a DSP.

use super::transport::Transport;
use lpai_direct::codec::{call_close, call_open, RemoteArg};
use lpai_direct_skel::entry::lpai_direct_skel_handle_invoke;
use std::ffi::CStr;

/// Calls the skel in this process.
#[derive(Debug, Default)]
pub struct Local;

impl Transport for Local {
    fn name(&self) -> &'static str {
        "local"
    }

    fn place(&self) -> String {
        "the skel in this process".into()
    }

    fn open(&mut self, uri: &CStr) -> Result<u64, i32> {
        // SAFETY: `call_open` passes exactly the arguments OPEN_SCALARS describes, alive for the call.
        call_open(uri, |scalars, args| unsafe { lpai_direct_skel_handle_invoke(0, scalars, args) })
    }

    unsafe fn invoke(&mut self, handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
        // SAFETY: forwarded from the caller.
        unsafe { lpai_direct_skel_handle_invoke(handle, scalars, args) }
    }

    fn close(&mut self, handle: u64) -> i32 {
        // SAFETY: `call_close` passes the one input handle CLOSE_SCALARS describes.
        call_close(handle, |scalars, args| unsafe { lpai_direct_skel_handle_invoke(0, scalars, args) })
    }
}
