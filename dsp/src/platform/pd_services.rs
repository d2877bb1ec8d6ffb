//! PD services a Hexagon library may call, for the qemu programs (feature `linux-user`): the QuRT mutex on a
//! futex, the QuRT signal on one thread, and FARF's `HAP_debug_v2` on stderr. The PD shell offers them to the
//! libraries it loads; the self-test executable links the contract model of libQnnLpai, which calls them by name.

use super::linux_user::{futex_lock, futex_unlock, write_all};
use core::ffi::{c_char, c_int};
use core::sync::atomic::{AtomicU32, Ordering};

/// Longest file name read from a caller.
const FILE_LIMIT: usize = 256;
/// Longest format (the message, `lpai_direct::farf`) read from a caller.
const FORMAT_LIMIT: usize = 2048;

/// The lock word of a `qurt_mutex_t` (four words, statically initialised {0xFE, 0, 0x1F, 0}): word 1, a futex
/// lock word starting at 0; `None` for a null or misaligned pointer.
///
/// # Safety
/// A non-null `mutex` must point at a live `qurt_mutex_t` used only through these calls.
unsafe fn lock_word<'a>(mutex: *mut u32) -> Option<&'a AtomicU32> {
    if mutex.is_null() || !(mutex as usize).is_multiple_of(4) {
        return None;
    }
    // SAFETY: a live, aligned `qurt_mutex_t` touched only through these calls; word 1 is used only atomically.
    Some(unsafe { AtomicU32::from_ptr(mutex.add(1)) })
}

/// `void qurt_mutex_lock(qurt_mutex_t*)`: blocks in the kernel until the caller holds the mutex.
///
/// # Safety
/// `mutex` must be null or point at a live, initialised `qurt_mutex_t`.
#[no_mangle]
pub unsafe extern "C" fn qurt_mutex_lock(mutex: *mut u32) {
    // SAFETY: forwarded from the caller.
    if let Some(word) = unsafe { lock_word(mutex) } {
        futex_lock(word);
    }
}

/// `void qurt_mutex_unlock(qurt_mutex_t*)`: releases the mutex, waking one waiter.
///
/// # Safety
/// `mutex` must be null or point at a live `qurt_mutex_t` the caller holds.
#[no_mangle]
pub unsafe extern "C" fn qurt_mutex_unlock(mutex: *mut u32) {
    // SAFETY: forwarded from the caller.
    if let Some(word) = unsafe { lock_word(mutex) } {
        futex_unlock(word);
    }
}

/// The signals word (word 0) of a `qurt_signal_t` (16 bytes, 8-aligned: signals, waiting, queue, attribute);
/// `None` for a null or misaligned pointer.
///
/// # Safety
/// A non-null `signal` must point at a live `qurt_signal_t` used only through these calls.
unsafe fn signal_word<'a>(signal: *mut u32) -> Option<&'a AtomicU32> {
    if signal.is_null() || !(signal as usize).is_multiple_of(8) {
        return None;
    }
    // SAFETY: a live, aligned `qurt_signal_t` touched only through these calls; word 0 is used only atomically.
    Some(unsafe { AtomicU32::from_ptr(signal) })
}

/// `void qurt_signal_init(qurt_signal_t*)`: a cleared signal.
///
/// # Safety
/// `signal` must be null or point at 16 writable bytes, 8-aligned.
#[no_mangle]
pub unsafe extern "C" fn qurt_signal_init(signal: *mut u32) {
    if signal.is_null() || !(signal as usize).is_multiple_of(8) {
        return;
    }
    // SAFETY: the caller's promise: four writable, aligned words.
    unsafe { signal.cast::<[u32; 4]>().write([0; 4]) };
}

/// `void qurt_signal_set(qurt_signal_t*, unsigned int mask)`: sets the mask's bits.
///
/// # Safety
/// `signal` must be null or point at a live `qurt_signal_t`.
#[no_mangle]
pub unsafe extern "C" fn qurt_signal_set(signal: *mut u32, mask: u32) {
    // SAFETY: forwarded from the caller.
    if let Some(word) = unsafe { signal_word(signal) } {
        word.fetch_or(mask, Ordering::Release);
    }
}

/// `void qurt_signal_clear(qurt_signal_t*, unsigned int mask)`: clears the mask's bits.
///
/// # Safety
/// `signal` must be null or point at a live `qurt_signal_t`.
#[no_mangle]
pub unsafe extern "C" fn qurt_signal_clear(signal: *mut u32, mask: u32) {
    // SAFETY: forwarded from the caller.
    if let Some(word) = unsafe { signal_word(signal) } {
        word.fetch_and(!mask, Ordering::Release);
    }
}

/// `QURT_ENOTALLOWED`: the answer to a wait no thread could ever end.
const QURT_ENOTALLOWED: i32 = 13;

/// `int qurt_signal_wait_timed(qurt_signal_t*, unsigned int mask, unsigned int attribute, unsigned int* signals,
/// unsigned long long duration_us)`: answers at once. The virtual aDSP runs one thread, so a signal whose bits are
/// not set now would never be: QURT_EOK with the signals when they are set; otherwise the wait is a bug, said on
/// stderr and answered QURT_ENOTALLOWED instead of sleeping out the duration.
///
/// # Safety
/// `signal` must be null or point at a live `qurt_signal_t`; `signals` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn qurt_signal_wait_timed(
    signal: *mut u32,
    mask: u32,
    attribute: u32,
    signals: *mut u32,
    _duration_us: u64,
) -> i32 {
    // SAFETY: forwarded from the caller.
    let Some(word) = (unsafe { signal_word(signal) }) else { return QURT_ENOTALLOWED };
    let set = word.load(Ordering::Acquire);
    if !signals.is_null() && signals.is_aligned() {
        // SAFETY: non-null, aligned and writable (the caller's promise).
        unsafe { signals.write(set) };
    }
    let woken = if attribute & 1 == 1 { set & mask == mask } else { set & mask != 0 };
    if woken {
        return 0;
    }
    write_all(
        2,
        b"adsp[error] pd-shell: qurt_signal_wait_timed on a signal no thread can set (the virtual aDSP has one \
          thread): a bug, answered at once instead of sleeping\n",
    );
    QURT_ENOTALLOWED
}

/// The pieces logged so far of a record the next log line continues (`lpai+`), read under [`PENDING_LOCK`].
struct Pending(core::cell::UnsafeCell<heapless::Vec<u8, { crate::platform::LOG_LINE_BYTES }>>);

// SAFETY: the buffer is only touched with PENDING_LOCK held.
unsafe impl Sync for Pending {}

static PENDING: Pending = Pending(core::cell::UnsafeCell::new(heapless::Vec::new()));
static PENDING_LOCK: AtomicU32 = AtomicU32::new(0);

/// The bytes of a caller's NUL-terminated string, at most `limit`; `None` for null.
///
/// # Safety
/// A non-null `text` must be NUL-terminated or hold at least `limit` readable bytes, alive for `'a`.
pub unsafe fn c_text<'a>(text: *const c_char, limit: usize) -> Option<&'a [u8]> {
    if text.is_null() {
        return None;
    }
    let mut length = 0;
    // SAFETY: readable up to the NUL or the limit (the caller's promise).
    while length < limit && unsafe { *text.add(length) } != 0 {
        length += 1;
    }
    // SAFETY: the `length` bytes were just read.
    Some(unsafe { core::slice::from_raw_parts(text.cast::<u8>(), length) })
}

/// Whether [`HAP_debug_v2`] prints message records raw, as a device's log carries them (the PD shell's
/// `--raw-log`), instead of in words.
static RAW_LOG: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Makes [`HAP_debug_v2`] print message records raw (`lpai:` and `lpai+` lines, for `lpai-net-run render-log`)
/// when `raw` holds, in words otherwise (the default).
pub fn print_log_raw(raw: bool) {
    RAW_LOG.store(raw, core::sync::atomic::Ordering::Relaxed);
}

/// `void HAP_debug_v2(int level, const char* file, int line, const char* format, ...)`: writes
/// `adsp[<level>] <file>: <message>` on stderr in one write. Callers pass the message as the format with `%`
/// doubled and no variadic arguments (`lpai_direct::farf`), so this reads no variadic argument and prints the
/// format with each `%%` as `%`; a message record (`lpai:` and hex) is printed in words, unless
/// [`print_log_raw`] asked for it raw.
///
/// # Safety
/// `file` and `format` must be null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn HAP_debug_v2(level: c_int, file: *const c_char, _line: c_int, format: *const c_char) {
    let level: &[u8] = match level {
        3 => b"error",
        2 => b"high",
        1 => b"medium",
        0 => b"low",
        _ => b"unknown",
    };
    // SAFETY: the caller's promise; null is tolerated.
    let file = unsafe { c_text(file, FILE_LIMIT) }.unwrap_or(b"?");
    // SAFETY: as above.
    let Some(format) = (unsafe { c_text(format, FORMAT_LIMIT) }) else { return };
    let mut line = heapless::Vec::<u8, { FILE_LIMIT + FORMAT_LIMIT + 32 }>::new();
    let _ = line.extend_from_slice(b"adsp[");
    let _ = line.extend_from_slice(level);
    let _ = line.extend_from_slice(b"] ");
    let _ = line.extend_from_slice(file);
    let _ = line.extend_from_slice(b": ");
    // A message record (`lpai:` and hex, what the skel and the audio module log; a long one in `lpai+` pieces
    // first) is put in words, as `lpai-net-run render-log` does on a device's captured log, on its last piece's
    // line; any other format is printed as it is.
    let raw = RAW_LOG.load(core::sync::atomic::Ordering::Relaxed);
    let piece = core::str::from_utf8(format).ok().filter(|_| !raw).and_then(lpai_direct::message::log::record_in);
    match piece {
        Some(piece) if piece.start == 0 && piece.end == format.len() => {
            futex_lock(&PENDING_LOCK);
            // SAFETY: PENDING is only touched with PENDING_LOCK held, as it is here.
            let pending = unsafe { &mut *PENDING.0.get() };
            let whole = pending.extend_from_slice(piece.record.as_bytes()).is_ok();
            let rendered = (!piece.continues).then(|| lpai_direct::message::render(pending));
            if !piece.continues || !whole {
                pending.clear();
            }
            futex_unlock(&PENDING_LOCK);
            let Some(rendered) = rendered else { return };
            let _ = line.extend_from_slice(rendered.as_str().as_bytes());
        }
        _ => {
            for byte in lpai_direct::farf::message_of(format) {
                let _ = line.push(byte);
            }
        }
    }
    let _ = line.push(b'\n');
    write_all(2, &line);
}
