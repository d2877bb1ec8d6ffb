//! The optional message table of the embedding's C API (`dsp/include/lpai_direct_embed.h`): firmware that wants
//! its last errors in words links this library and hands [`lpai_direct_messages_render`] to
//! `lpai_direct_embed_use_messages`; firmware that does not pays nothing for the words, and gets each record as a
//! log line (`lpai:` and hex) that `lpai-net-run render-log` puts in words on a host.
#![no_std]

// The host build (tests) takes std's panic handler; the device build refers to none (the post-link check).
#[cfg(not(target_arch = "hexagon"))]
extern crate std;

#[cfg(target_arch = "hexagon")]
lpai_direct::pd_library_panic_handler!();

use core::ffi::c_char;

/// Renders the record at `record` (`length` bytes) in words into `out`, NUL-terminated, at most `capacity` bytes
/// with the NUL; answers the text's length (without the NUL).
///
/// # Safety
/// `record` is readable for `length` bytes (or null with `length` 0); `out` is writable for `capacity` bytes (or
/// null with `capacity` 0).
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_messages_render(
    record: *const u8,
    length: usize,
    out: *mut c_char,
    capacity: usize,
) -> usize {
    if out.is_null() || capacity == 0 {
        return 0;
    }
    let record = match record.is_null() {
        true => &[][..],
        // SAFETY: the caller's promise: readable for `length` bytes.
        false => unsafe { core::slice::from_raw_parts(record, length) },
    };
    let rendered = lpai_direct::message::render(record);
    let text = rendered.as_str().as_bytes();
    let written = text.len().min(capacity - 1);
    // SAFETY: `out` is writable for `capacity` bytes (the caller's promise) and `written` < `capacity`.
    unsafe {
        core::ptr::copy_nonoverlapping(text.as_ptr(), out.cast::<u8>(), written);
        out.add(written).write(0);
    }
    written
}
