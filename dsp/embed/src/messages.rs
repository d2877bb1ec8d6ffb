//! The embedding's optional message table: [`lpai_direct_messages_render`] puts a last error's record in words with
//! every message's text. Nothing in the library refers to it, so a firmware image linked with `--gc-sections` keeps
//! the words only if the firmware hands it to `lpai_direct_embed_use_messages`; one that does not pays nothing for
//! them, and gets each record as a log line (`lpai:` and hex) that `lpai-net-run render-log` puts in words on a host.

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
