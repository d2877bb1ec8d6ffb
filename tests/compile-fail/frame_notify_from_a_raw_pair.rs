//! Safe code makes a frame's notify from a raw function and any pointer, which the backend's thread would call: a
//! `FrameNotify` comes only from a `&'static` callable (`FrameNotify::new`) or the `unsafe` `FrameNotify::from_c`.
use core::ffi::c_void;
use lpai_direct_skel::runtime::FrameNotify;

unsafe extern "C" fn done(_user: *mut c_void, _qnn_code: u32) {}

fn notify(user: *mut c_void) -> FrameNotify {
    FrameNotify { function: done, user }
}

fn main() {
    let _ = notify;
}
