//! QuRT platform (the aDSP's audio or sensor PD): HAP timers, FARF logging, `apps_std` files, the PD's loader.
//!
//! Every symbol declared here resolves against the PD runtime when the DSP loader maps the skel; the list in
//! `linker/dsp-runtime-symbols.txt` must name each of them (the post-link check enforces it).

use super::{Level, LibraryHandle, Line, Platform, PlatformError, Woken};
use core::ffi::{c_char, c_int, c_void, CStr};
use core::ptr::NonNull;
use lpai_direct::temporary::Token;

/// The QuRT implementation of [`Platform`].
pub struct Qurt;

const RTLD_NOW: c_int = 2;
/// `HAP_LEVEL_*` values used by FARF.
const HAP_LEVEL_LOW: c_int = 0;
const HAP_LEVEL_MEDIUM: c_int = 1;
const HAP_LEVEL_HIGH: c_int = 2;
const HAP_LEVEL_ERROR: c_int = 3;

extern "C" {
    fn HAP_perf_get_qtimer_count() -> u64;
    fn HAP_debug_v2(level: c_int, file: *const c_char, line: c_int, format: *const c_char, ...);
    fn apps_std_fopen(name: *const c_char, mode: *const c_char, file: *mut c_int) -> c_int;
    fn apps_std_flen(file: c_int, length: *mut u64) -> c_int;
    fn apps_std_fread(file: c_int, buffer: *mut u8, length: c_int, read: *mut c_int, end: *mut c_int) -> c_int;
    fn apps_std_fclose(file: c_int) -> c_int;
    fn apps_std_fwrite(file: c_int, buffer: *const u8, length: c_int, written: *mut c_int, end: *mut c_int) -> c_int;
    fn apps_std_frename(old: *const c_char, new: *const c_char) -> c_int;
    fn apps_std_fremove(name: *const c_char) -> c_int;
    fn apps_std_mkdir(name: *const c_char, mode: c_int) -> c_int;
    /// `int apps_std_fileExists(const char* path, bool* exists)`: a one-byte C `bool`, read as a byte so that no
    /// value the service writes can be an invalid Rust `bool`.
    fn apps_std_fileExists(path: *const c_char, exists: *mut u8) -> c_int;
    fn dlopen(path: *const c_char, mode: c_int) -> *mut c_void;
    fn dlsym(library: *mut c_void, name: *const c_char) -> *mut c_void;
    fn dlclose(library: *mut c_void) -> c_int;
    fn malloc(bytes: usize) -> *mut c_void;
    fn free(memory: *mut c_void);
    fn qurt_mutex_lock(mutex: *mut QurtMutex);
    fn qurt_mutex_unlock(mutex: *mut QurtMutex);
    fn qurt_signal_init(signal: *mut QurtSignal);
    fn qurt_signal_set(signal: *mut QurtSignal, mask: u32);
    /// `int qurt_signal_wait_timed(qurt_signal_t*, unsigned int mask, unsigned int attribute, unsigned int*
    /// signals, unsigned long long duration_us)`: QURT_EOK, or QURT_ETIMEDOUT when the duration passed first.
    fn qurt_signal_wait_timed(
        signal: *mut QurtSignal,
        mask: u32,
        attribute: u32,
        signals: *mut u32,
        micros: u64,
    ) -> i32;
    fn qurt_signal_clear(signal: *mut QurtSignal, mask: u32);
}

/// `qurt_signal_t`: a union of one 64-bit word and four 32-bit words (signals, waiting, queue, attribute), so
/// 16 bytes, 8-byte aligned; only the QuRT calls touch it.
#[repr(C, align(8))]
pub struct QurtSignal(core::cell::UnsafeCell<[u32; 4]>);

// SAFETY: QuRT's signal calls may be made on one signal from any threads at once.
unsafe impl Sync for QurtSignal {}

/// The one signal bit a completion uses.
const COMPLETION_BIT: u32 = 1;
/// `QURT_SIGNAL_ATTR_WAIT_ANY`.
const WAIT_ANY: u32 = 0;
/// `QURT_ETIMEDOUT`: a timed wait's duration passed first.
const QURT_ETIMEDOUT: i32 = 47;
/// `QURT_TIMER_MIN_DURATION`: the shortest duration a timed wait takes, in microseconds.
const QURT_TIMER_MIN_DURATION: u64 = 100;

/// `qurt_mutex_t`: four 32-bit words (holder, count, queue, wait count), 8-byte aligned.
#[repr(C, align(8))]
struct QurtMutex([u32; 4]);

/// The vendor-calls lock, statically initialised as QuRT's `QURT_MUTEX_INIT` does: holder 0xFE (the mutex
/// magic), count 0, queue 0x1F (the free futex magic), wait count 0.
struct VendorMutex(core::cell::UnsafeCell<QurtMutex>);

// SAFETY: the words are only touched by `qurt_mutex_lock` / `qurt_mutex_unlock`, which QuRT makes safe to call
// from any thread of the PD at once.
unsafe impl Sync for VendorMutex {}

static VENDOR_MUTEX: VendorMutex = VendorMutex(core::cell::UnsafeCell::new(QurtMutex([0xFE, 0, 0x1F, 0])));

/// errno ENOENT, which the HLOS side of `apps_std` answers for a missing file or directory.
const ENOENT: c_int = 2;
/// errno EIO: the answer when `apps_std_fwrite` reports success but wrote nothing (or more than asked).
const EIO: c_int = 5;

/// An `apps_std` status as a result: ENOENT is `NotFound`, any other non-zero status `Failed`.
fn checked(status: c_int) -> Result<(), PlatformError> {
    match status {
        0 => Ok(()),
        ENOENT => Err(PlatformError::NotFound),
        other => Err(PlatformError::Failed(other)),
    }
}

struct File(c_int);

impl File {
    fn open(path: &CStr) -> Result<File, PlatformError> {
        File::open_with(path, c"rb")
    }

    fn open_with(path: &CStr, mode: &CStr) -> Result<File, PlatformError> {
        let mut file: c_int = -1;
        // SAFETY: both strings are NUL-terminated; `file` is a valid out-pointer.
        checked(unsafe { apps_std_fopen(path.as_ptr(), mode.as_ptr(), &mut file) }).map(|()| File(file))
    }

    fn write_all(&self, mut bytes: &[u8]) -> Result<(), PlatformError> {
        while !bytes.is_empty() {
            let length = c_int::try_from(bytes.len()).unwrap_or(c_int::MAX);
            let (mut written, mut end) = (0 as c_int, 0 as c_int);
            // SAFETY: reads at most `length` bytes of `bytes`; valid out-pointers.
            let status = unsafe { apps_std_fwrite(self.0, bytes.as_ptr(), length, &mut written, &mut end) };
            if status != 0 {
                return Err(PlatformError::Failed(status));
            }
            let written = usize::try_from(written).ok().filter(|&written| written > 0);
            bytes = written.and_then(|written| bytes.get(written..)).ok_or(PlatformError::Failed(EIO))?;
        }
        Ok(())
    }

    /// Closes the file, answering what `apps_std_fclose` says (a late write error shows here).
    fn close(self) -> Result<(), PlatformError> {
        let file = self.0;
        core::mem::forget(self);
        // SAFETY: closes the file this value owned; `forget` keeps `drop` from closing it again.
        checked(unsafe { apps_std_fclose(file) })
    }

    fn size(&self) -> Result<u64, PlatformError> {
        let mut length = 0u64;
        // SAFETY: an open file and a valid out-pointer.
        match unsafe { apps_std_flen(self.0, &mut length) } {
            0 => Ok(length),
            other => Err(PlatformError::Failed(other)),
        }
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // SAFETY: closes the file this value owns.
        unsafe { apps_std_fclose(self.0) };
    }
}

impl Platform for Qurt {
    const TICKS_PER_SECOND: u64 = 19_200_000;

    fn now_ticks() -> u64 {
        // SAFETY: reads the always-running QTimer; no arguments.
        unsafe { HAP_perf_get_qtimer_count() }
    }

    // Out of line: the format buffer then sits in this frame only, not in every caller's.
    #[inline(never)]
    fn log(level: Level, line: &Line) {
        let hap_level = match level {
            Level::Error => HAP_LEVEL_ERROR,
            Level::Warn => HAP_LEVEL_HIGH,
            Level::Info => HAP_LEVEL_MEDIUM,
            Level::Debug => HAP_LEVEL_LOW,
        };
        // The record in hex after `lpai:` (a long one in pieces) is the format itself: no `%`, no variadic
        // arguments (lpai_direct::farf).
        lpai_direct::message::log::log_pieces(line.record(), |format| {
            // SAFETY: both strings are NUL-terminated; the format has no conversion, so nothing variadic is read.
            unsafe { HAP_debug_v2(hap_level, c"lpai_direct".as_ptr(), 0, format.as_ptr()) };
        });
    }

    fn file_size(path: &CStr) -> Result<u64, PlatformError> {
        File::open(path)?.size()
    }

    fn read_file(path: &CStr, buffer: &mut [u8]) -> Result<usize, PlatformError> {
        let file = File::open(path)?;
        super::read_whole(file.size()?, buffer, |rest| {
            let (mut read, mut end) = (0 as c_int, 0 as c_int);
            let length = c_int::try_from(rest.len()).unwrap_or(c_int::MAX);
            // SAFETY: reads at most `length` bytes into `rest`.
            let status = unsafe { apps_std_fread(file.0, rest.as_mut_ptr(), length, &mut read, &mut end) };
            if status != 0 {
                return Err(PlatformError::Failed(status));
            }
            Ok(read.max(0) as usize)
        })
    }

    fn create_directory(path: &CStr) -> Result<(), PlatformError> {
        super::check_path_length(path)?;
        // SAFETY: the path is NUL-terminated.
        let made = checked(unsafe { apps_std_mkdir(path.as_ptr(), 0o755) });
        if made.is_err() {
            // The HLOS answers mkdir's errno (EEXIST for an existing directory), but how the reverse RPC passes
            // errors on is not documented: ask whether the name exists instead. `apps_std` cannot tell a
            // directory from a file, so any existing entry counts.
            let mut exists = 0u8;
            // SAFETY: the path is NUL-terminated; `exists` is a valid one-byte out-pointer.
            if unsafe { apps_std_fileExists(path.as_ptr(), &mut exists) } == 0 && exists != 0 {
                return Ok(());
            }
        }
        made
    }

    fn write_file(path: &CStr, token: &Token, bytes: &[u8]) -> Result<(), PlatformError> {
        super::write_through_partial(
            path,
            token,
            bytes,
            |partial, bytes| {
                let file = File::open_with(partial, c"wb")?;
                let written = file.write_all(bytes);
                let closed = file.close();
                written.and(closed)
            },
            // SAFETY: both paths are NUL-terminated.
            |partial, path| checked(unsafe { apps_std_frename(partial.as_ptr(), path.as_ptr()) }),
            |partial| {
                // SAFETY: the path is NUL-terminated.
                unsafe { apps_std_fremove(partial.as_ptr()) };
            },
        )
    }

    fn append_file(path: &CStr, bytes: &[u8]) -> Result<(), PlatformError> {
        super::check_path_length(path)?;
        let file = File::open_with(path, c"ab")?;
        let written = file.write_all(bytes);
        let closed = file.close();
        written.and(closed)
    }

    fn open_library(path: &CStr) -> Result<LibraryHandle, PlatformError> {
        // SAFETY: the path is NUL-terminated; the PD loader maps the library.
        let library = unsafe { dlopen(path.as_ptr(), RTLD_NOW) };
        let raw = NonNull::new(library).ok_or(PlatformError::NotLoadable)?;
        // SAFETY: the PD loader's handle of a library it just opened, closed only through this handle.
        Ok(unsafe { LibraryHandle::from_raw(raw) })
    }

    fn find_symbol(library: &LibraryHandle, name: &CStr) -> Option<NonNull<c_void>> {
        // SAFETY: an open library handle and a NUL-terminated name.
        NonNull::new(unsafe { dlsym(library.as_raw().as_ptr(), name.as_ptr()) })
    }

    unsafe fn close_library(library: &LibraryHandle) {
        // SAFETY: the caller promises nothing from the library is used after this.
        unsafe { dlclose(library.as_raw().as_ptr()) };
    }

    fn allocate(bytes: usize) -> Result<NonNull<u8>, PlatformError> {
        // SAFETY: the PD heap's malloc; the memory is released with `free` below.
        NonNull::new(unsafe { malloc(bytes.max(1)) }.cast::<u8>()).ok_or(PlatformError::Failed(2))
    }

    fn lock_vendor_calls() {
        // SAFETY: a statically initialised QuRT mutex that lives as long as the PD; QuRT blocks the thread.
        unsafe { qurt_mutex_lock(VENDOR_MUTEX.0.get()) };
    }

    unsafe fn unlock_vendor_calls() {
        // SAFETY: the caller holds the mutex (this trait method's contract).
        unsafe { qurt_mutex_unlock(VENDOR_MUTEX.0.get()) };
    }

    type Signal = QurtSignal;

    unsafe fn signal_init(signal: *mut QurtSignal) {
        // SAFETY: the caller's promise: valid, aligned storage for a `qurt_signal_t` that stays in place.
        unsafe { qurt_signal_init(signal) };
    }

    fn signal_set(signal: &QurtSignal) {
        // SAFETY: a live signal (made by `signal_init`); QuRT's calls are thread-safe.
        unsafe { qurt_signal_set(signal.0.get().cast(), COMPLETION_BIT) };
    }

    fn signal_wait(signal: &QurtSignal, micros: u64) -> Result<Woken, PlatformError> {
        let mut signals = 0u32;
        let duration = micros.max(QURT_TIMER_MIN_DURATION);
        // SAFETY: a live signal (made by `signal_init`, never ended) and a valid out-pointer; QuRT blocks the thread
        // until the bit is set or the duration passes.
        let status =
            unsafe { qurt_signal_wait_timed(signal.0.get().cast(), COMPLETION_BIT, WAIT_ANY, &mut signals, duration) };
        match status {
            0 => {
                // SAFETY: as above; QuRT's waits do not clear the bits they woke on.
                unsafe { qurt_signal_clear(signal.0.get().cast(), COMPLETION_BIT) };
                Ok(Woken::Set)
            }
            QURT_ETIMEDOUT => Ok(Woken::TimedOut),
            // The PD shell under qemu (one thread) answers a wait nobody can end this way, as a bug said loudly.
            other => Err(PlatformError::Failed(other)),
        }
    }

    unsafe fn release(memory: NonNull<u8>, _bytes: usize) {
        // SAFETY: the caller passes back exactly what `allocate` gave.
        unsafe { free(memory.as_ptr().cast()) };
    }
}
