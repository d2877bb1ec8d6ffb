//! The local transport: the skel's own code in this process (host build of the dsp crate), called with the
//! same encoded `remote_arg`s FastRPC would carry, so the whole wire path runs without a DSP.

use super::transport::Transport;
use lpai_direct::codec::{RemoteArg, CLOSE_SCALARS, OPEN_SCALARS};
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
        let uri = uri.to_bytes_with_nul();
        let mut count = (uri.len() as u32).to_le_bytes();
        let mut args = [
            RemoteArg::buffer(count.as_mut_ptr().cast(), count.len()),
            RemoteArg::buffer(uri.as_ptr().cast_mut().cast(), uri.len()),
            RemoteArg { h64: 0 },
        ];
        // SAFETY: the arguments are what OPEN_SCALARS describes, all alive for the call.
        let status = unsafe { lpai_direct_skel_handle_invoke(0, OPEN_SCALARS, args.as_mut_ptr()) };
        // SAFETY: the skel wrote the handle into the output-handle argument.
        (status == 0).then(|| unsafe { args[2].h64 }).ok_or(status)
    }

    unsafe fn invoke(&mut self, handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
        // SAFETY: forwarded from the caller.
        unsafe { lpai_direct_skel_handle_invoke(handle, scalars, args) }
    }

    fn close(&mut self, handle: u64) -> i32 {
        let mut args = [RemoteArg { h64: handle }];
        // SAFETY: one input handle, as CLOSE_SCALARS describes.
        unsafe { lpai_direct_skel_handle_invoke(0, CLOSE_SCALARS, args.as_mut_ptr()) }
    }
}
