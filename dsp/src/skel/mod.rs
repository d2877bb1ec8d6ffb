//! The skel: FastRPC calls in, runtime calls out. Every call is validated by the shared codec before any
//! argument is read; failures answer AEE codes (with the DSP offset) and never panic.

#[cfg(any(test, feature = "linux-user"))]
pub mod end_to_end;
#[cfg(any(test, feature = "linux-user"))]
pub mod fuzz;
pub mod methods;
pub mod sessions;
pub mod state;

use core::ffi::{c_char, CStr};
use lpai_direct::aee::{self, EBADPARM, EBADSTATE, EINVHANDLE, ENOMEMORY, EUNSUPPORTED};
use lpai_direct::codec::{self, RemoteArg, Scalars};
use sessions::HandleError;
use ufmt::uwrite;

fn handle_error(error: HandleError) -> u32 {
    match error {
        HandleError::Invalid => EINVHANDLE,
        HandleError::Full => ENOMEMORY,
        HandleError::Busy => EBADSTATE,
    }
}

/// `lpai_direct_open(uri, &handle)`: opens a session. The URI is the one the HLOS opened the skel with.
pub fn open(_uri: &CStr, handle: &mut u64) -> u32 {
    match sessions::open() {
        Ok(opened) => {
            *handle = opened;
            0
        }
        Err(error) => handle_error(error),
    }
}

/// `lpai_direct_close(handle)`: frees everything the session holds.
pub fn close(handle: u64) -> u32 {
    sessions::close(handle).map_or_else(handle_error, |()| 0)
}

/// Whether two `sc` words describe the same method and argument counts (the attribute bits do not matter).
fn same_call(scalars: u32, expected: u32) -> bool {
    let (given, expected) = (Scalars::of(scalars), Scalars::of(expected));
    Scalars { attributes: 0, ..given } == Scalars { attributes: 0, ..expected }
}

/// Method 0 on the wire: `open(in string uri, rout remote_handle64 h)`.
///
/// # Safety
/// As for [`invoke`].
unsafe fn open_call(scalars: u32, args: *mut RemoteArg) -> u32 {
    if !same_call(scalars, codec::OPEN_SCALARS) || args.is_null() {
        return EBADPARM;
    }
    // SAFETY: OPEN_SCALARS describes three arguments: two buffers and an output handle.
    let (primary, uri) = unsafe { ((*args).buf, (*args.add(1)).buf) };
    if primary.pv.is_null() || primary.len < 4 || (uri.pv.is_null() && uri.len > 0) {
        return EBADPARM;
    }
    // SAFETY: a non-null primary buffer of at least 4 bytes.
    let count = unsafe { primary.pv.cast::<u8>().cast::<[u8; 4]>().read_unaligned() };
    let count = u32::from_le_bytes(count) as usize;
    if count == 0 || count > uri.len {
        return EBADPARM;
    }
    // SAFETY: the URI buffer is non-null and at least `count` bytes long.
    let text = unsafe { core::slice::from_raw_parts(uri.pv.cast::<u8>(), count) };
    let Ok(uri) = CStr::from_bytes_with_nul(text) else {
        return EBADPARM;
    };
    let mut handle = 0u64;
    let status = open(uri, &mut handle);
    if status == 0 {
        // SAFETY: the third argument is the output handle.
        unsafe { (*args.add(2)).h64 = handle };
    }
    status
}

/// Method 1 on the wire: `close(in remote_handle64 h)`.
///
/// # Safety
/// As for [`invoke`].
unsafe fn close_call(scalars: u32, args: *mut RemoteArg) -> u32 {
    if !same_call(scalars, codec::CLOSE_SCALARS) || args.is_null() {
        return EBADPARM;
    }
    // SAFETY: CLOSE_SCALARS describes one input handle.
    close(unsafe { (*args).h64 })
}

/// Handles one FastRPC call; answers 0 or an AEE code with the DSP offset.
///
/// # Safety
/// `args` must point to the `remote_arg` array `scalars` describes, each buffer valid for its length during
/// the call (as the FastRPC framework, or the local transport, passes them).
pub unsafe fn invoke(handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
    let code = match Scalars::of(scalars).method {
        // SAFETY: forwarded from the caller.
        0 => unsafe { open_call(scalars, args) },
        // SAFETY: forwarded from the caller.
        1 => unsafe { close_call(scalars, args) },
        id => match codec::METHODS.iter().find(|method| method.id == id) {
            None => refuse(handle, EUNSUPPORTED, |line| uwrite!(line, "unknown method id {}", id)),
            // SAFETY: forwarded from the caller.
            Some(method) => match unsafe { codec::decode(method, scalars, args) } {
                Err(code) => refuse(handle, code, |line| {
                    uwrite!(line, "malformed {} call (sc {:#x}): wrong counts or short buffers", method.name, scalars)
                }),
                Ok(mut call) => sessions::with_session(handle, |session| methods::dispatch(session, id, &mut call))
                    .unwrap_or_else(|error| Err(handle_error(error)))
                    .err()
                    .unwrap_or(0),
            },
        },
    };
    aee::dsp(code)
}

/// Answers `code` for a call refused before dispatch, recording `describe`'s message for `last_error` when the
/// handle is valid.
fn refuse(
    handle: u64,
    code: u32,
    describe: impl FnOnce(&mut crate::platform::Line) -> Result<(), core::convert::Infallible>,
) -> u32 {
    let mut line = crate::platform::Line::new();
    let _ = describe(&mut line);
    let _ = sessions::with_session(handle, |session| session.fail(&line));
    code
}

/// `lpai_direct_open` for C callers.
///
/// # Safety
/// `uri` must be a NUL-terminated string and `handle` a valid place for the new handle (or null: refused).
pub unsafe fn open_c(uri: *const c_char, handle: *mut u64) -> i32 {
    if uri.is_null() || handle.is_null() {
        return aee::dsp(EBADPARM);
    }
    // SAFETY: the caller's promise.
    aee::dsp(open(unsafe { CStr::from_ptr(uri) }, unsafe { &mut *handle }))
}
