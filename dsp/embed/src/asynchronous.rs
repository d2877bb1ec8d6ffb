//! Asynchronous frames: the input sets a load gives, starting a frame (with an optional completion callback),
//! polling for it and waiting for it.

use crate::call::{checked_call, query};
use crate::errors::{code, ERROR_INVALID_ARGUMENT, ERROR_STATE, OK};
use crate::handle::{state, CallerArena, EmbedHandle};
use core::ffi::{c_int, c_void};
use lpai_direct_skel::embed::Embed;
use lpai_direct_skel::platform::Message;
use lpai_direct_skel::runtime::{FrameNotify, FrameState};

/// `LPAI_DIRECT_EMBED_FRAME_NEEDS_NEXT`: the backend answered EARLY_TERMINATION (feed the next frame, start
/// again); `execute_frame`'s `ready` 0.
pub const FRAME_NEEDS_NEXT: c_int = 0;
/// `LPAI_DIRECT_EMBED_FRAME_READY`: the outputs hold the frame's result; `execute_frame`'s `ready` 1.
pub const FRAME_READY: c_int = 1;
/// `LPAI_DIRECT_EMBED_FRAME_PENDING`: still executing.
pub const FRAME_PENDING: c_int = 2;

/// `void (*)(void* user, uint32_t qnn_code)`: see the header.
pub type FrameDoneFn = Option<unsafe extern "C" fn(user: *mut c_void, qnn_code: u32)>;

/// Sets how many input sets the next load gives each graph (1 or 2); see the header.
///
/// # Safety
/// `embed` is null or a handle from create that was not destroyed.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_set_input_sets(embed: *mut EmbedHandle, sets: u32) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    if state.embed.as_ref().is_some_and(|embedding| embedding.is_loaded()) {
        return state.refuse(ERROR_STATE, Message::EmbedSetsAfterLoad);
    }
    if !(1..=2).contains(&sets) {
        return state.refuse(ERROR_INVALID_ARGUMENT, Message::EmbedSetsCount);
    }
    state.input_sets = sets;
    OK
}

/// Starts one execution of the selected graph on its current input set and returns at once; `done` (may be
/// null) is called with `user` when it completes; see the header.
///
/// # Safety
/// `embed` is a handle from create; a non-null `done` may be called with `user` from another thread until the
/// frame is taken (poll or wait).
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_start_frame(
    embed: *mut EmbedHandle,
    done: FrameDoneFn,
    user: *mut c_void,
) -> c_int {
    // SAFETY: the caller's promise: `done` may be called with `user` from the backend's thread until the frame is
    // taken.
    let notify = done.map(|function| unsafe { FrameNotify::from_c(function, user) });
    let start = |embedding: &mut Embed<CallerArena>| embedding.start_frame_with(notify);
    // SAFETY: the caller's promise about the handle.
    unsafe { checked_call(embed, || Some(()), Message::Nothing, |state, ()| code(state.run("start_frame", start))) }
}

/// Writes what the started frame has come to (`LPAI_DIRECT_EMBED_FRAME_*`) to `state`, without blocking.
///
/// # Safety
/// `embed` is a handle from create; `frame` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_poll_frame(embed: *mut EmbedHandle, frame: *mut c_int) -> c_int {
    // SAFETY: the caller's promises about the handle and `frame`.
    unsafe {
        query(embed, "poll_frame", frame, Message::EmbedPollFrameArgument, |embedding| {
            Ok(match embedding.poll_frame()? {
                FrameState::Pending => FRAME_PENDING,
                FrameState::Ready(_) => FRAME_READY,
                FrameState::NeedsNextFrame => FRAME_NEEDS_NEXT,
            })
        })
    }
}

/// Blocks (never spins) until the started frame completes; writes 1 to `ready` when the outputs are ready, 0 on
/// EARLY_TERMINATION, as `lpai_direct_embed_execute_frame`.
///
/// # Safety
/// `embed` is a handle from create; `ready` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_wait_frame(embed: *mut EmbedHandle, ready: *mut c_int) -> c_int {
    // SAFETY: the caller's promises about the handle and `ready`.
    unsafe {
        query(embed, "wait_frame", ready, Message::EmbedWaitFrameArgument, |embedding| {
            Ok(c_int::from(embedding.wait_frame()?.is_some()))
        })
    }
}
