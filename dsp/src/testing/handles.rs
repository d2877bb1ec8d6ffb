//! Self-tests of the skel's handle table and entry points: handles are distinct and dead after close, a close
//! during a call frees the handle when the call ends, a stale handle never reaches its slot's successor, and calls
//! the entry does not know are refused with an AEE code.

use crate::entry::{lpai_direct_close, lpai_direct_skel_handle_invoke};
use crate::skel::table::{close, handle_of, open, slot_of, with_session, HandleError, GENERATION_MASK};

crate::self_tests! {
    fn handles_are_distinct_and_dead_after_close() {
        let first = open();
        let second = open();
        check!(matches!((first, second), (Ok(a), Ok(b)) if a != b));
        let (Ok(first), Ok(second)) = (first, second) else {
            return Ok(());
        };
        check!(with_session(first, |_| 1) == Ok(1));
        check!(close(first).is_ok());
        check!(with_session(first, |_| 1) == Err(HandleError::Invalid));
        check!(close(first) == Err(HandleError::Invalid));
        check!(with_session(0, |_| 1) == Err(HandleError::Invalid));
        check!(with_session(second | 0xFF, |_| 1) == Err(HandleError::Invalid));
        check!(with_session(second | (0xAB << 40), |_| 1) == Err(HandleError::Invalid));
        let nested = with_session(second, |_| with_session(second, |_| 1));
        check!(nested == Ok(Err(HandleError::Busy)));
        check!(close(second).is_ok());
    }

    fn a_close_during_a_call_frees_the_handle_when_the_call_ends() {
        let handle = expect_some!(open().ok());
        let mut inside = None;
        let outcome = with_session(handle, |_| {
            inside = Some((close(handle), close(handle), with_session(handle, |_| 1)));
        });
        check!(inside == Some((Ok(()), Err(HandleError::Invalid), Err(HandleError::Invalid))));
        check!(outcome == Err(HandleError::Invalid));
        check!(with_session(handle, |_| 1) == Err(HandleError::Invalid));
        check!(close(handle) == Err(HandleError::Invalid));
    }

    fn a_stale_handle_never_takes_the_slot_of_its_successor() {
        let live = expect_some!(open().ok());
        let (_, generation) = expect_some!(slot_of(live));
        // The handle the slot's previous owner had.
        let stale = handle_of((live & 0xFF) as usize, generation.wrapping_sub(1) & GENERATION_MASK);
        let during = with_session(live, |_| (with_session(stale, |_| 1), close(stale)));
        check!(during == Ok((Err(HandleError::Invalid), Err(HandleError::Invalid))));
        check!(with_session(stale, |_| 1) == Err(HandleError::Invalid));
        check!(with_session(live, |_| 1) == Ok(1));
        check!(close(live).is_ok());
    }

    fn unknown_calls_are_refused_with_an_aee_code() {
        // SAFETY: a null argument array is fine for a call that reads no arguments.
        let status = unsafe { lpai_direct_skel_handle_invoke(0, 0x1F00_0000, core::ptr::null_mut()) };
        check!(status as u32 == 0x8000_0414);
        check!(lpai_direct_close(12345) as u32 == 0x8000_042C);
    }
}
