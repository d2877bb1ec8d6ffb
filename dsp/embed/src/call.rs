//! How a C call takes what the caller gives it: the caller's strings and out-pointers, checked, and the shape
//! most calls share (the handle checked, then the other arguments, then the loaded embedding asked and its answer
//! written back).

use crate::errors::{code, ERROR_INVALID_ARGUMENT};
use crate::handle::{state, CallerArena, EmbedHandle, State};
use core::ffi::{c_char, c_int, CStr};
use lpai_direct_skel::embed::Embed;
use lpai_direct_skel::platform::Message;
use lpai_direct_skel::runtime::RuntimeError;

/// Longest name read from the caller (without its NUL).
const NAME_LIMIT: usize = 1024;

/// A caller's NUL-terminated string of at most [`NAME_LIMIT`] bytes; `None` for null or longer.
///
/// # Safety
/// A non-null `text` must be readable up to its NUL or [`NAME_LIMIT`] + 1 bytes.
pub(crate) unsafe fn c_string<'t>(text: *const c_char) -> Option<&'t CStr> {
    if text.is_null() {
        return None;
    }
    let mut length = 0;
    // SAFETY: readable up to the NUL or the limit (the caller's promise).
    while unsafe { *text.add(length) } != 0 {
        length += 1;
        if length > NAME_LIMIT {
            return None;
        }
    }
    // SAFETY: `length` bytes and the NUL after them were just read.
    let bytes = unsafe { core::slice::from_raw_parts(text.cast::<u8>(), length + 1) };
    CStr::from_bytes_with_nul(bytes).ok()
}

/// A caller's out-pointer, checked non-null and aligned: where a call writes a `T`.
pub(crate) struct Out<T>(*mut T);

impl<T> Out<T> {
    /// `pointer` as an out-pointer; `None` when it is null or misaligned.
    ///
    /// # Safety
    /// `pointer` is null or writable for as long as the `Out` lives.
    pub(crate) unsafe fn new(pointer: *mut T) -> Option<Out<T>> {
        (!pointer.is_null() && pointer.is_aligned()).then_some(Out(pointer))
    }

    /// Writes `value` to the caller's memory.
    pub(crate) fn write(&self, value: T) {
        // SAFETY: non-null and aligned (checked by `new`), and writable (`new`'s caller's promise).
        unsafe { self.0.write(value) }
    }
}

/// Where a call writes its answer: one out-pointer, or two for an answer in two parts.
pub(crate) trait Destination<T> {
    /// Writes `answer` to the caller's memory.
    fn deliver(self, answer: T);
}

impl<T> Destination<T> for Out<T> {
    fn deliver(self, answer: T) {
        self.write(answer);
    }
}

impl<A, B> Destination<(A, B)> for (Out<A>, Out<B>) {
    fn deliver(self, (first, second): (A, B)) {
        self.0.write(first);
        self.1.write(second);
    }
}

/// Runs `body` on the live state behind `embed` and the caller's other arguments, checked by `arguments`: its
/// code; `ERROR_INVALID_ARGUMENT` for a handle that is not live, or (with `refusal` recorded) when `arguments`
/// answers `None`.
///
/// # Safety
/// As for [`state`].
pub(crate) unsafe fn checked_call<A>(
    embed: *mut EmbedHandle,
    arguments: impl FnOnce() -> Option<A>,
    refusal: Message,
    body: impl FnOnce(&mut State, A) -> c_int,
) -> c_int {
    // SAFETY: the caller's promise about the handle.
    let Some(state) = (unsafe { state(embed) }) else {
        return ERROR_INVALID_ARGUMENT;
    };
    match arguments() {
        Some(arguments) => body(state, arguments),
        None => state.refuse(ERROR_INVALID_ARGUMENT, refusal),
    }
}

/// The shape of a call that answers through out-pointers, a [`checked_call`]: `arguments` answers the checked
/// argument for `action` and where the answer goes; `action` runs on the loaded embedding (see [`State::run`],
/// which `call`, the function's name, is for) and its answer is written there.
///
/// # Safety
/// As for [`state`].
pub(crate) unsafe fn answer<A, T, D: Destination<T>>(
    embed: *mut EmbedHandle,
    call: &str,
    arguments: impl FnOnce() -> Option<(A, D)>,
    refusal: Message,
    action: impl FnOnce(&mut Embed<CallerArena>, A) -> Result<T, RuntimeError>,
) -> c_int {
    // SAFETY: the caller's promise about the handle.
    unsafe {
        checked_call(embed, arguments, refusal, |state, (argument, destination)| {
            code(state.run(call, |embedding| action(embedding, argument)).map(|answer| destination.deliver(answer)))
        })
    }
}

/// [`answer`] for a call whose only other argument is the out-pointer `out`.
///
/// # Safety
/// As for [`state`]; `out` is null or writable.
pub(crate) unsafe fn query<T>(
    embed: *mut EmbedHandle,
    call: &str,
    out: *mut T,
    refusal: Message,
    action: impl FnOnce(&mut Embed<CallerArena>) -> Result<T, RuntimeError>,
) -> c_int {
    // SAFETY: the caller's promises about the handle and `out`.
    unsafe { answer(embed, call, || Some(((), Out::new(out)?)), refusal, |embedding, ()| action(embedding)) }
}
