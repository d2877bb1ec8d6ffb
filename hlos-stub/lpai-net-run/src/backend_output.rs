//! The host QNN backend's chatter on C's stdout, filtered. On every run, libQnnHtp's x86 emulator prints a line
//! about its thread-local configuration (` # LIBNATIVE: No alternate configuration present ...`). The environment
//! cannot silence it: with `LIBNATIVE_CONFIG` or a `libnative_tls.conf` it prints other lines instead. So the
//! tool puts a filter in front of C's stdout that drops those lines and passes everything else on unchanged, in
//! order, to file descriptor 1. Rust's own output does not go through C's stdio and is not touched.

use std::ffi::{c_char, c_int, c_void};

/// What every line of the emulator's configuration notice starts with.
const NOTICE: &[u8] = b" # LIBNATIVE:";

/// glibc's `cookie_io_functions_t` (fopencookie(3)): four optional callbacks.
#[repr(C)]
struct CookieFunctions {
    read: Option<unsafe extern "C" fn(*mut c_void, *mut c_char, usize) -> isize>,
    write: Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize) -> isize>,
    seek: Option<unsafe extern "C" fn(*mut c_void, *mut i64, c_int) -> c_int>,
    close: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
}

extern "C" {
    /// glibc's `stdout`, an ordinary variable that a program may set (the GNU C Library manual, "Standard Streams").
    static mut stdout: *mut libc::FILE;
    fn fopencookie(cookie: *mut c_void, mode: *const c_char, functions: CookieFunctions) -> *mut libc::FILE;
}

/// The line being gathered: C's stdio hands over whatever it buffered, not whole lines.
struct Filter {
    partial: Vec<u8>,
}

impl Filter {
    /// Passes on every whole line of `partial` that is not the notice.
    fn pass_lines(&mut self) {
        while let Some(end) = self.partial.iter().position(|&byte| byte == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            if !line.starts_with(NOTICE) {
                write_out(&line);
            }
        }
    }
}

/// Writes all of `bytes` to file descriptor 1; what cannot be written is dropped, as a closed stdout would drop it.
fn write_out(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is valid for reads of its length.
        let written = unsafe { libc::write(1, bytes.as_ptr().cast(), bytes.len()) };
        match usize::try_from(written) {
            Ok(0) => return,
            Ok(count) => bytes = &bytes[count.min(bytes.len())..],
            Err(_) if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// The stream's write callback.
///
/// # Safety
/// `cookie` is the `Filter` [`filter_backend_notices`] made (glibc serialises calls on one stream); `buffer` is
/// valid for reads of `size` bytes.
unsafe extern "C" fn write(cookie: *mut c_void, buffer: *const c_char, size: usize) -> isize {
    // SAFETY: the caller's promise.
    let (filter, bytes) =
        unsafe { (&mut *cookie.cast::<Filter>(), std::slice::from_raw_parts(buffer.cast::<u8>(), size)) };
    filter.partial.extend_from_slice(bytes);
    filter.pass_lines();
    isize::try_from(size).unwrap_or(isize::MAX)
}

/// The stream's close callback: passes on a last line without its newline, unless it is the notice.
///
/// # Safety
/// As [`write`]; called once, after the last write.
unsafe extern "C" fn close(cookie: *mut c_void) -> c_int {
    // SAFETY: the caller's promise: the box `filter_backend_notices` leaked, taken back once.
    let filter = unsafe { Box::from_raw(cookie.cast::<Filter>()) };
    if !filter.partial.is_empty() && !filter.partial.starts_with(NOTICE) {
        write_out(&filter.partial);
    }
    0
}

/// Puts the filter in front of C's stdout, line-buffered (so a backend's line reaches the terminal when printed, as
/// it would unfiltered); if the filter cannot be made, C's stdout stays as it was.
///
/// # Safety
/// No other thread uses C's stdout while this runs (call it first thing in `main`).
pub unsafe fn filter_backend_notices() {
    let cookie = Box::into_raw(Box::new(Filter { partial: Vec::new() }));
    let functions = CookieFunctions { read: None, write: Some(write), seek: None, close: Some(close) };
    // SAFETY: a valid mode string and callbacks that match the cookie.
    let filtered = unsafe { fopencookie(cookie.cast(), c"w".as_ptr(), functions) };
    if filtered.is_null() {
        // SAFETY: the box made above, not handed to any stream.
        drop(unsafe { Box::from_raw(cookie) });
        return;
    }
    // SAFETY: `filtered` is a new stream nothing has used; the caller's promise covers the old stdout, which is
    // flushed (not closed: its descriptor is fd 1, which the filter writes to) before it is replaced.
    unsafe {
        libc::setvbuf(filtered, std::ptr::null_mut(), libc::_IOLBF, 0);
        libc::fflush(stdout);
        stdout = filtered;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notice_is_dropped_and_other_lines_kept_whole() {
        let mut filter = Filter { partial: Vec::new() };
        filter.partial.extend_from_slice(b" # LIBNATIVE: No alternate configuration\nkept ");
        filter.pass_lines();
        assert_eq!(filter.partial, b"kept ");
    }
}
