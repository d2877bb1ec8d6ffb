//! `HAP_debug_v2`, behind FARF: one `adsp[<level>] <file>: <message>` line on stderr per call (the message is the
//! format, `%` doubled, no variadic arguments: `lpai_direct::farf`). Message records are put in words by the dsp
//! crate's qemu implementation; with `--raw-log` the line is printed as a device's log carries it, a record left
//! as its `lpai:` line (a long one's `lpai+` lines first), for `lpai-net-run render-log` to put in words.

use super::c_string;
use crate::pd::system;
use core::ffi::{c_char, c_int};
use core::sync::atomic::{AtomicBool, Ordering};
use lpai_direct_skel::platform::pd_services;

/// Longest file name read from a caller.
const FILE_LIMIT: usize = 256;
/// Longest format (the message) read from a caller.
const FORMAT_LIMIT: usize = 2048;

/// Whether the shell runs with `--raw-log`.
static RAW_LOG: AtomicBool = AtomicBool::new(false);

/// Records `--raw-log` before any library is loaded.
pub fn configure_log(raw: bool) {
    RAW_LOG.store(raw, Ordering::Relaxed);
}

/// `void HAP_debug_v2(int level, const char* file, int line, const char* format, ...)`: in words (the dsp crate's
/// `HAP_debug_v2`), or with `--raw-log` the format with each `%%` as `%` and nothing else changed, records included.
///
/// # Safety
/// `file` and `format` must be null or NUL-terminated.
#[allow(non_snake_case)]
pub unsafe extern "C" fn HAP_debug_v2(level: c_int, file: *const c_char, line: c_int, format: *const c_char) {
    if !RAW_LOG.load(Ordering::Relaxed) {
        // SAFETY: the caller's promise, passed on unchanged.
        return unsafe { pd_services::HAP_debug_v2(level, file, line, format) };
    }
    let level: &[u8] = match level {
        3 => b"error",
        2 => b"high",
        1 => b"medium",
        0 => b"low",
        _ => b"unknown",
    };
    // SAFETY: the caller's promise; null is tolerated.
    let file = unsafe { c_string(file, FILE_LIMIT) }.unwrap_or(b"?");
    // SAFETY: as above.
    let Some(format) = (unsafe { c_string(format, FORMAT_LIMIT) }) else { return };
    let head = b"adsp[".iter().chain(level).chain(b"] ").chain(file).chain(b": ").copied();
    let whole = head.chain(lpai_direct::farf::message_of(format)).chain(core::iter::once(b'\n'));
    // Room for the longest line: the prefix, the longest level name, the file, the message and the newline.
    let mut text = [0u8; FILE_LIMIT + FORMAT_LIMIT + 32];
    let length = text.iter_mut().zip(whole).map(|(slot, byte)| *slot = byte).count();
    let _ = system::write_all(2, &text[..length]);
}
