//! The skel: FastRPC calls in, runtime calls out. Every call is validated by the shared codec before any
//! argument is read; failures answer AEE codes (with the DSP offset) and never panic. Everything here is private
//! to the crate: the only ways in are the exported entry points in `entry`.

mod dispatch;
mod error;
mod job;
mod load;
mod methods;
mod session;
pub(crate) mod table;

use crate::platform::{Hex, Message, MethodId};
use crate::say;
use core::ffi::{c_char, CStr};
use error::SkelError;
use lpai_direct::aee::{self, EBADPARM, EBADSTATE, EINVHANDLE, ENOMEMORY, EUNSUPPORTED};
use lpai_direct::codec::skel::Refusal;
use lpai_direct::codec::{self, RemoteArg, Scalars};
use table::HandleError;

fn handle_error(error: HandleError) -> u32 {
    match error {
        HandleError::Invalid => EINVHANDLE,
        HandleError::Full | HandleError::NoMemory => ENOMEMORY,
        HandleError::Busy => EBADSTATE,
    }
}

/// `lpai_direct_open(uri, &handle)`: opens a session. The URI is the one the HLOS opened the skel with.
fn open(_uri: &CStr) -> Result<u64, u32> {
    table::open().map_err(handle_error)
}

/// `lpai_direct_close(handle)`: frees everything the session holds, now or (when a call is running on it) as
/// soon as that call ends; the handle refuses every call from now on.
pub(crate) fn close(handle: u64) -> u32 {
    table::close(handle).map_or_else(handle_error, |()| 0)
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
    match open(uri) {
        Ok(handle) => {
            // SAFETY: the third argument is the output handle.
            unsafe { (*args.add(2)).h64 = handle };
            0
        }
        Err(code) => code,
    }
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
pub(crate) unsafe fn invoke(handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
    let code = match Scalars::of(scalars).method {
        // SAFETY: forwarded from the caller.
        0 => unsafe { open_call(scalars, args) },
        // SAFETY: forwarded from the caller.
        1 => unsafe { close_call(scalars, args) },
        // SAFETY: forwarded from the caller.
        id => unsafe { method_call(handle, id, scalars, args) },
    };
    aee::dsp(code)
}

/// Methods 2 and up: decode, then run on the handle's session.
///
/// # Safety
/// As for [`invoke`].
unsafe fn method_call(handle: u64, id: u32, scalars: u32, args: *mut RemoteArg) -> u32 {
    // Declared methods have ids 2, 3, ... in order (the generated codec's own test holds it to that). Only the
    // plans are looked at: the methods' and parameters' names stay off the DSP (a message says the id, which the
    // HLOS side names).
    let plan = (id as usize).checked_sub(2).and_then(|at| codec::PLANS.get(at)).filter(|plan| plan.id() == id);
    let Some(plan) = plan else {
        return refuse(handle, EUNSUPPORTED, |line| say!(line, Message::UnknownMethod, id));
    };
    // SAFETY: forwarded from the caller.
    match unsafe { codec::decode(plan, scalars, args) } {
        Err(refusal) => refuse(handle, refusal.aee(), |line| {
            say!(line, Message::MalformedCall, MethodId(id), Hex::of(scalars), refusal_message(refusal))
        }),
        Ok(mut call) => match table::with_session(handle, |session| dispatch::dispatch(session, id, &mut call)) {
            Ok(Ok(())) => 0,
            Ok(Err(SkelError { aee, .. })) => aee,
            Err(error) => handle_error(error),
        },
    }
}

/// The message saying why the codec refused a call.
pub(crate) fn refusal_message(refusal: Refusal) -> Message {
    match refusal {
        Refusal::Counts => Message::RefusedCounts,
        Refusal::NullBuffer => Message::RefusedNullBuffer,
        Refusal::Overlap => Message::RefusedOverlap,
        Refusal::PastAddressSpace => Message::RefusedPastAddressSpace,
        Refusal::ShortPrimary => Message::RefusedShortPrimary,
        Refusal::ShortSequence => Message::RefusedShortSequence,
        Refusal::Unterminated => Message::RefusedUnterminated,
    }
}

/// Answers `code` for a call refused before dispatch, recording `describe`'s message for `last_error` when the
/// handle is valid.
fn refuse(handle: u64, code: u32, describe: impl FnOnce(&mut crate::platform::Line)) -> u32 {
    let _ = table::with_session(handle, |session| {
        describe(session.error_line());
        session.log_error();
    });
    code
}

/// What the host build of the skel holds right now, in the order [`crate::entry::lpai_direct_skel_host_resources`]
/// reports it: open handles, loaded contexts, memory blocks and their bytes (sessions, arenas, job buffers),
/// libraries opened.
#[cfg(not(target_arch = "hexagon"))]
pub(crate) fn host_resources() -> [u64; 5] {
    let platform = crate::platform::host::Host::resources();
    let contexts = crate::runtime::owner::LIVE_CONTEXTS.load(core::sync::atomic::Ordering::Relaxed);
    [table::open_count(), contexts, platform.blocks, platform.bytes, platform.libraries].map(|count| count as u64)
}

/// `lpai_direct_open` for C callers.
///
/// # Safety
/// `uri` must be a NUL-terminated string and `handle` a valid place for the new handle (or null: refused).
pub(crate) unsafe fn open_c(uri: *const c_char, handle: *mut u64) -> i32 {
    if uri.is_null() || handle.is_null() {
        return aee::dsp(EBADPARM);
    }
    // SAFETY: the caller's promise: a NUL-terminated string.
    let uri = unsafe { CStr::from_ptr(uri) };
    match open(uri) {
        Ok(opened) => {
            // SAFETY: the caller's promise: a valid place for the handle.
            unsafe { handle.write(opened) };
            0
        }
        Err(code) => aee::dsp(code),
    }
}
