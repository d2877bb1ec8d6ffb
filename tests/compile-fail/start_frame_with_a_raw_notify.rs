//! Safe code starts a frame on a graph with a raw notify (any function, any pointer): the runtime's `start_frame` is
//! `unsafe` (the memory must outlive the frame) and a `FrameNotify` is made only from a `&'static` closure or, for C,
//! through the `unsafe` `FrameNotify::from_c`.
use core::ffi::c_void;
use lpai_direct_skel::runtime::{FrameNotify, Graph};

unsafe extern "C" fn done(_user: *mut c_void, _qnn_code: u32) {}

fn start(graph: &mut Graph<'_>, user: *mut c_void) {
    let _ = graph.start_frame(Some(FrameNotify { function: done, user }));
}

fn main() {
    let _ = start;
}
