//! Self-tests of `failed_library`: the skel answers which configured library the last failed call stopped at, as a
//! number: the backend or the system library that did not load, the system library that loaded but is not one (the
//! fake backend named as the system library), neither for a call refused before loading; asking clears neither that
//! answer nor the message, and the next call clears both.

use crate::platform::libraries::register_builtin_libraries;
use crate::testing::fake::{self, Settings, BUILTINS};
use crate::testing::skel_end_to_end::{call, close, open};
use core::ffi::CStr;
use lpai_direct::aee::{self, EBADPARM, ENOSUCHSYMBOL, EUNABLETOLOAD};
use lpai_direct::codec;
use lpai_direct::wire::{FAILED_LIBRARY_BACKEND, FAILED_LIBRARY_NONE, FAILED_LIBRARY_SYSTEM};

/// Configures `handle` with `backend`, `system_library` and an arena of `arena_bytes`; answers the status.
fn configure(handle: u64, backend: &CStr, system_library: &CStr, arena_bytes: u32) -> Result<(), u32> {
    use codec::configure as c;
    call(
        handle,
        c::METHOD,
        |e| {
            e.u32(c::LOG_LEVEL, 1)?.u32(c::PROFILING_LEVEL, 0)?.u32(c::LPAI_HW_VERSION, 0)?.u32(c::LPAI_TARGET, 2)?;
            e.u32(c::ARENA_BYTES, arena_bytes)?.string(c::BACKEND, backend)?;
            e.string(c::SYSTEM_LIBRARY, system_library).map(drop)
        },
        |_| Ok(()),
    )
}

/// The skel's `failed_library` answer on `handle`.
fn failed_library(handle: u64) -> Result<u32, u32> {
    use codec::failed_library as m;
    call(handle, m::METHOD, |_| Ok(()), |e| e.rout_u32(m::LIBRARY))
}

/// The length of the skel's `last_error` message on `handle`.
fn message_bytes(handle: u64) -> Result<u32, u32> {
    use codec::last_error as m;
    call(handle, m::METHOD, |e| e.rout_bytes(m::MESSAGE, &mut []).map(drop), |e| e.rout_u32(m::MESSAGE_BYTES))
}

crate::self_tests! {
    fn failed_library_names_a_library_that_does_not_load() {
        let _session = fake::begin(Settings::LPAI);
        check!(register_builtin_libraries(BUILTINS).is_ok());
        let handle = expect_some!(open());
        let unable = aee::dsp(EUNABLETOLOAD) as u32;
        check!(configure(handle, c"libQnnLpaiAbsent.so", c"libQnnSystemFake.so", 0) == Err(unable));
        check!(failed_library(handle) == Ok(FAILED_LIBRARY_BACKEND));
        check!(configure(handle, c"libQnnLpaiFake.so", c"libQnnSystemAbsent.so", 0) == Err(unable));
        check!(failed_library(handle) == Ok(FAILED_LIBRARY_SYSTEM));
        check!(close(handle) == 0);
    }

    fn failed_library_names_a_library_refused_after_loading_and_neither_before_loading() {
        let _session = fake::begin(Settings::LPAI);
        check!(register_builtin_libraries(BUILTINS).is_ok());
        let handle = expect_some!(open());
        let not_a_system_library = configure(handle, c"libQnnLpaiFake.so", c"libQnnLpaiFake.so", 0);
        check!(not_a_system_library == Err(aee::dsp(ENOSUCHSYMBOL) as u32));
        check!(failed_library(handle) == Ok(FAILED_LIBRARY_SYSTEM));
        // Asking clears neither the answer nor the message.
        check!(failed_library(handle) == Ok(FAILED_LIBRARY_SYSTEM));
        check!(message_bytes(handle).is_ok_and(|bytes| bytes > 0));
        check!(configure(handle, c"libQnnLpaiFake.so", c"libQnnSystemFake.so", u32::MAX) == Err(aee::dsp(EBADPARM) as u32));
        // Refused before loading: neither library.
        check!(failed_library(handle) == Ok(FAILED_LIBRARY_NONE));
        check!(configure(handle, c"libQnnLpaiFake.so", c"libQnnLpaiFake.so", 0).is_err());
        check!(configure(handle, c"libQnnLpaiFake.so", c"libQnnSystemFake.so", 0).is_ok());
        // The next call clears it.
        check!(failed_library(handle) == Ok(FAILED_LIBRARY_NONE));
        check!(close(handle) == 0);
    }
}
