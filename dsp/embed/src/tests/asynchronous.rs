//! The asynchronous C functions on the contract model: a started frame with a callback and with none, poll and
//! wait, two input sets, and the misuses (a second start, destroy in flight, bad set counts) refused by name.

use super::{create, last_error, Aligned};
use crate::*;
extern crate std;
use core::ffi::{c_int, c_void};
use core::ptr;
use core::sync::atomic::{AtomicU32, Ordering};
use lpai_direct_skel::testing::contract_single::{BINARY, FRAMES};
use std::boxed::Box;

/// The callback: counts completions in the `AtomicU32` behind `user` and keeps the last code (+1) beside it.
unsafe extern "C" fn done(user: *mut c_void, qnn_code: u32) {
    // SAFETY: the tests pass a `[AtomicU32; 2]` that outlives the frame.
    let seen = unsafe { &*user.cast::<[AtomicU32; 2]>() };
    seen[1].store(qnn_code + 1, Ordering::Relaxed);
    seen[0].fetch_add(1, Ordering::Release);
}

#[test]
fn two_input_sets_a_callback_poll_and_wait_give_the_fixture_s_outputs() {
    let mut arena = Box::new(Aligned([0u8; 16 * 1024]));
    let mut model = Aligned([0u8; 384]);
    model.0[..BINARY.len()].copy_from_slice(BINARY);
    let embed = create(&mut arena.0);
    let seen = [AtomicU32::new(0), AtomicU32::new(0)];
    let user = ptr::from_ref(&seen).cast_mut().cast::<c_void>();
    let (mut input, mut bytes, mut ready, mut frame) = (ptr::null_mut::<c_void>(), 0usize, -1 as c_int, -1 as c_int);
    let mut output: *const c_void = ptr::null();
    // SAFETY: a live handle, valid out-pointers, a binary outside the arena that outlives the handle, and a
    // callback whose user memory outlives every frame.
    unsafe {
        assert_eq!(lpai_direct_embed_set_input_sets(embed, 3), ERROR_INVALID_ARGUMENT);
        assert_eq!(last_error(embed), "set_input_sets: a graph has 1 input set, or 2");
        assert_eq!(lpai_direct_embed_set_input_sets(embed, 2), OK);
        assert_eq!(lpai_direct_embed_load_padded(embed, model.0.as_ptr().cast(), BINARY.len(), model.0.len()), OK);
        assert_eq!(lpai_direct_embed_set_input_sets(embed, 1), ERROR_STATE);
        assert_eq!(lpai_direct_embed_poll_frame(embed, &mut frame), ERROR_STATE);
        assert_eq!(last_error(embed), "graph single: no frame was started (start_frame) to poll or wait for");
        assert_eq!(lpai_direct_embed_input(embed, 0, &mut input, &mut bytes), OK);
        let first = input;
        ptr::copy_nonoverlapping(FRAMES[0].0.as_ptr(), input.cast::<u8>(), bytes);
        assert_eq!(lpai_direct_embed_start_frame(embed, Some(done), user), OK);
        for (number, (next, _)) in FRAMES.iter().enumerate().skip(1) {
            // The other set: written while the frame executes.
            assert_eq!(lpai_direct_embed_input(embed, 0, &mut input, &mut bytes), OK);
            assert_eq!(input == first, number % 2 == 0);
            ptr::copy_nonoverlapping(next.as_ptr(), input.cast::<u8>(), bytes);
            if number % 2 == 0 {
                assert_eq!(lpai_direct_embed_poll_frame(embed, &mut frame), OK);
                if frame == FRAME_PENDING {
                    assert_eq!(lpai_direct_embed_wait_frame(embed, &mut ready), OK);
                    frame = ready;
                }
                assert_eq!(frame, FRAME_READY);
            } else {
                assert_eq!(lpai_direct_embed_wait_frame(embed, &mut ready), OK);
                assert_eq!(ready, 1);
            }
            assert_eq!(lpai_direct_embed_output(embed, 0, &mut output, &mut bytes), OK);
            assert_eq!(core::slice::from_raw_parts(output.cast::<u8>(), bytes), FRAMES[number - 1].1);
            assert_eq!(lpai_direct_embed_start_frame(embed, Some(done), user), OK);
        }
        assert_eq!(lpai_direct_embed_wait_frame(embed, &mut ready), OK);
        assert_eq!(ready, 1);
        assert_eq!(lpai_direct_embed_output(embed, 0, &mut output, &mut bytes), OK);
        assert_eq!(core::slice::from_raw_parts(output.cast::<u8>(), bytes), FRAMES[3].1);
        assert_eq!((seen[0].load(Ordering::Acquire), seen[1].load(Ordering::Relaxed)), (4, 1));
        assert_eq!(lpai_direct_embed_destroy(embed), OK);
    }
}

#[test]
fn a_second_start_and_destroy_while_a_frame_is_in_flight_are_refused() {
    let mut arena = Box::new(Aligned([0u8; 16 * 1024]));
    let mut model = Aligned([0u8; 384]);
    model.0[..BINARY.len()].copy_from_slice(BINARY);
    let embed = create(&mut arena.0);
    let (mut input, mut bytes, mut ready) = (ptr::null_mut::<c_void>(), 0usize, -1 as c_int);
    // SAFETY: as above, with no callback.
    unsafe {
        assert_eq!(lpai_direct_embed_start_frame(embed, None, ptr::null_mut()), ERROR_STATE);
        assert_eq!(last_error(embed), "start_frame: no context binary is loaded");
        assert_eq!(lpai_direct_embed_load_padded(embed, model.0.as_ptr().cast(), BINARY.len(), model.0.len()), OK);
        assert_eq!(lpai_direct_embed_start_frame(embed, None, ptr::null_mut()), OK);
        assert_eq!(lpai_direct_embed_start_frame(embed, None, ptr::null_mut()), ERROR_STATE);
        assert!(last_error(embed).starts_with("graph single: a frame is still executing, so a second start_frame"));
        // One input set: the running one is not handed out.
        assert_eq!(lpai_direct_embed_input(embed, 0, &mut input, &mut bytes), ERROR_STATE);
        assert_eq!(lpai_direct_embed_select_graph(embed, 0), ERROR_STATE);
        assert_eq!(lpai_direct_embed_destroy(embed), ERROR_STATE);
        assert!(last_error(embed).starts_with("destroy: a frame is still executing"));
        assert_eq!(lpai_direct_embed_wait_frame(embed, &mut ready), OK);
        assert_eq!(ready, 1);
        assert_eq!(lpai_direct_embed_destroy(embed), OK);
    }
}
