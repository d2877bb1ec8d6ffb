//! Frames: the selected graph's input and output buffers, executing it on a frame, and what running it costs
//! (the last execution's time, the arena used).

use crate::call::{answer, checked_call, query, Out};
use crate::errors::{ERROR_STATE, OK};
use crate::handle::EmbedHandle;
use core::ffi::{c_int, c_void};
use core::ptr::NonNull;
use lpai_direct_skel::embed::Direction;
use lpai_direct_skel::platform::Message;

/// Binds buffer `index` of the selected graph's `direction`: writes it, as `pointer` makes it, to `data` and its
/// size to `bytes`.
///
/// # Safety
/// `embed` is a handle from create; `data` and `bytes` are null or writable.
unsafe fn bind<P>(
    embed: *mut EmbedHandle,
    direction: Direction,
    index: usize,
    data: *mut P,
    bytes: *mut usize,
    pointer: impl FnOnce(NonNull<u8>) -> P,
) -> c_int {
    let (call, refusal) = match direction {
        Direction::Input => ("input", Message::EmbedInputArgument),
        Direction::Output => ("output", Message::EmbedOutputArgument),
    };
    // SAFETY: the caller's promises about the handle, `data` and `bytes`.
    unsafe {
        answer(
            embed,
            call,
            || Some(((), (Out::new(data)?, Out::new(bytes)?))),
            refusal,
            |embedding, ()| {
                let (buffer, length) = match direction {
                    Direction::Input => embedding.input_pointer(index),
                    Direction::Output => embedding.output_pointer(index),
                }?;
                Ok((pointer(buffer), length))
            },
        )
    }
}

/// Binds input `index` of the selected graph: writes its native buffer to `data` and its size to `bytes`. The
/// buffer is the same for every frame until destroy: fill it before each
/// [`lpai_direct_embed_execute_frame`].
///
/// # Safety
/// `embed` is a handle from create; `data` and `bytes` are null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_input(
    embed: *mut EmbedHandle,
    index: usize,
    data: *mut *mut c_void,
    bytes: *mut usize,
) -> c_int {
    // SAFETY: the caller's promises about the handle, `data` and `bytes`.
    unsafe { bind(embed, Direction::Input, index, data, bytes, |buffer| buffer.as_ptr().cast()) }
}

/// Binds output `index` of the selected graph: writes its native buffer to `data` and its size to `bytes`. The
/// buffer is the same for every frame until destroy; it holds the last ready frame's result.
///
/// # Safety
/// `embed` is a handle from create; `data` and `bytes` are null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_output(
    embed: *mut EmbedHandle,
    index: usize,
    data: *mut *const c_void,
    bytes: *mut usize,
) -> c_int {
    // SAFETY: the caller's promises about the handle, `data` and `bytes`.
    unsafe { bind(embed, Direction::Output, index, data, bytes, |buffer| buffer.as_ptr().cast_const().cast()) }
}

/// Runs graphExecute once on the selected graph's bound input buffers; writes 1 to `ready` when the outputs
/// are ready, 0 when the backend needs more frames first (EARLY_TERMINATION). Allocates nothing, reads no file.
///
/// # Safety
/// `embed` is a handle from create; `ready` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_execute_frame(embed: *mut EmbedHandle, ready: *mut c_int) -> c_int {
    // SAFETY: the caller's promises about the handle and `ready`.
    unsafe {
        query(embed, "execute_frame", ready, Message::EmbedExecuteFrameArgument, |embedding| {
            Ok(c_int::from(embedding.execute_frame()?.is_some()))
        })
    }
}

/// Writes the DSP-clock time of the last execution that made the outputs ready, in microseconds, to `micros`.
///
/// # Safety
/// `embed` is a handle from create; `micros` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_last_execute_us(embed: *mut EmbedHandle, micros: *mut u64) -> c_int {
    // SAFETY: the caller's promises about the handle and `micros`.
    unsafe {
        checked_call(
            embed,
            || Out::new(micros),
            Message::EmbedLastExecuteArgument,
            |state, micros| match state.run("last_execute_us", |embedding| Ok(embedding.last_execute_us())) {
                Ok(Some(last)) => {
                    micros.write(last);
                    OK
                }
                Ok(None) => state.refuse(ERROR_STATE, Message::EmbedNoFrameReady),
                Err(code) => code,
            },
        )
    }
}

/// Writes the arena bytes used so far (the high-water mark, handle included) and the arena's size.
///
/// # Safety
/// `embed` is a handle from create; `used` and `capacity` are null or writable.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_embed_arena_used(
    embed: *mut EmbedHandle,
    used: *mut usize,
    capacity: *mut usize,
) -> c_int {
    let refusal = Message::EmbedArenaUsedArgument;
    // SAFETY: the caller's promises about the handle, `used` and `capacity`.
    unsafe {
        checked_call(
            embed,
            || Some((Out::new(used)?, Out::new(capacity)?)),
            refusal,
            |state, (used, capacity)| {
                let whole = state.arena_end - state.arena_start;
                let Some(embedding) = state.embed.as_ref() else {
                    return state.refuse(ERROR_STATE, Message::EmbedArenaUsedNotCreated);
                };
                // The handle, the libraries and their padding come before the embedding's own arena.
                let handle_bytes = whole - embedding.arena_capacity();
                used.write(handle_bytes + embedding.arena_used());
                capacity.write(whole);
                state.clear();
                OK
            },
        )
    }
}
