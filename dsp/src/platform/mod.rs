//! Platform services the runtime needs (time, log, files, dynamic loading), behind one small interface.
//!
//! Three implementations, chosen at build time:
//! - `qurt` (the aDSP build only): inside a QuRT protection domain on the aDSP (HAP timers, FARF logging,
//!   `apps_std` files, the PD's dynamic loader). Every symbol it uses is listed in `linker/dsp-runtime-symbols.txt`.
//! - `linux_user` (the qemu-hexagon build only): Hexagon Linux user mode under qemu-hexagon (raw syscalls), for the
//!   self-test executable and the PD shell; `pd_services` adds the QuRT mutex and FARF services the libraries they
//!   link or load call.
//! - [`host`]: x86_64 / aarch64 with std, for the host build of the skel and its tests.

use crate::say;
use core::ffi::{c_void, CStr};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, Ordering};
use lpai_direct::temporary::{self, Token};

#[cfg(not(target_arch = "hexagon"))]
pub mod host;
pub mod libraries;
mod line;
#[cfg(all(target_arch = "hexagon", feature = "linux-user"))]
pub mod linux_user;
mod memory;
#[cfg(all(target_arch = "hexagon", feature = "linux-user"))]
pub mod pd_services;
#[cfg(all(target_arch = "hexagon", not(feature = "linux-user")))]
pub mod qurt;
pub mod signals;

pub use line::{Errno, Hex, Line, MethodId, QnnError, Say, LOG_LINE_BYTES};
pub use lpai_direct::message::Message;
pub use memory::{Memory, Shared};

/// The implementation this build uses.
#[cfg(not(target_arch = "hexagon"))]
pub type Current = host::Host;
/// The implementation this build uses.
#[cfg(all(target_arch = "hexagon", feature = "linux-user"))]
pub type Current = linux_user::LinuxUser;
/// The implementation this build uses.
#[cfg(all(target_arch = "hexagon", not(feature = "linux-user")))]
pub type Current = qurt::Qurt;

/// Why a platform service failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlatformError {
    /// The file or library does not exist.
    NotFound,
    /// The service exists but failed; the platform's own error number.
    Failed(i32),
    /// The destination buffer is smaller than the file.
    TooLarge {
        /// Bytes the file holds.
        needed: u64,
    },
    /// This platform does not offer the service (for example dynamic loading in a static qemu executable).
    Unsupported,
    /// The dynamic loader refused the library.
    NotLoadable,
}

impl Say for PlatformError {
    fn say(&self, f: &mut Line) {
        match self {
            PlatformError::NotFound => say!(f, Message::NotFound),
            PlatformError::Failed(code) => say!(f, Message::PlatformFailed, Errno(*code)),
            PlatformError::TooLarge { needed } => say!(f, Message::NeedsBuffer, needed),
            PlatformError::Unsupported => say!(f, Message::UnsupportedService),
            PlatformError::NotLoadable => say!(f, Message::NotLoadable),
        }
    }
}

/// A shared library the platform's loader opened, closed when the handle drops. Only the platform makes one (from
/// what its loader answered) and it is never copied: safe code can neither forge a handle nor use one after it was
/// closed. [`libraries::Library`] holds it.
#[derive(Debug, PartialEq, Eq)]
pub struct LibraryHandle(NonNull<c_void>);

#[cfg_attr(
    all(target_arch = "hexagon", feature = "linux-user"),
    expect(dead_code, reason = "the qemu platform has no dynamic loader: it makes no handle")
)]
impl LibraryHandle {
    /// The handle the platform's loader answered.
    ///
    /// # Safety
    /// `raw` is an open library of this platform's loader, closed only through the returned handle.
    unsafe fn from_raw(raw: NonNull<c_void>) -> LibraryHandle {
        LibraryHandle(raw)
    }

    /// What the loader knows the library by.
    fn as_raw(&self) -> NonNull<c_void> {
        self.0
    }
}

impl Drop for LibraryHandle {
    fn drop(&mut self) {
        // SAFETY: once, here, for a handle the loader opened; its owner (a backend, a system library) drops it only
        // after its last call into the library.
        unsafe { Current::close_library(self) };
    }
}

/// Log severity, highest first; the numbers match QNN's log levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub enum Level {
    /// Something failed.
    Error = 1,
    /// Something is off but the work goes on.
    Warn = 2,
    /// What the runtime did, step by step.
    Info = 3,
    /// Details for the people debugging the runtime.
    Debug = 5,
}

impl Level {
    /// The lower-case name used in log lines.
    pub fn name(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warn => "warn",
            Level::Info => "info",
            Level::Debug => "debug",
        }
    }
}

/// The platform interface; every method is a plain function so no state has to be threaded through.
pub trait Platform {
    /// Ticks of the monotonic clock per second.
    const TICKS_PER_SECOND: u64;
    /// The monotonic clock now, in ticks (on the aDSP: the 19.2 MHz QTimer).
    fn now_ticks() -> u64;
    /// Writes one log line: the message's record (the aDSP writes it as `lpai:` and its bytes in hex, for the HLOS
    /// side to render: `lpai-net-run render-log`; the host and the qemu programs render it themselves).
    fn log(level: Level, line: &Line);
    /// Size of a file in bytes.
    fn file_size(path: &CStr) -> Result<u64, PlatformError>;
    /// Reads a whole file into the start of `buffer`; returns the bytes read.
    fn read_file(path: &CStr, buffer: &mut [u8]) -> Result<usize, PlatformError>;
    /// Creates a directory (mode 0755); an existing directory is fine. Its parent must exist (`NotFound`
    /// otherwise); a path longer than [`MAX_PATH_BYTES`] is refused with [`NAME_TOO_LONG`]. On the aDSP, whose
    /// file services cannot tell a file from a directory, any existing entry of that name is accepted (writing
    /// into it then fails).
    fn create_directory(path: &CStr) -> Result<(), PlatformError>;
    /// Writes `bytes` as the whole content of `path`, or leaves `path` untouched: writes its temporary name under
    /// `token` (`<path>.<token>.partial`, `lpai_direct::temporary`), then renames it over `path`; on any failure
    /// the temporary file is removed ([`write_through_partial`]). A directory of the path that does not exist
    /// gives `NotFound`; a path longer than [`MAX_PATH_BYTES`] is refused with [`NAME_TOO_LONG`].
    fn write_file(path: &CStr, token: &Token, bytes: &[u8]) -> Result<(), PlatformError>;
    /// Appends `bytes` to `path`, creating it (mode 0644) when it does not exist; the file is closed (on the aDSP:
    /// flushed to the HLOS) before this answers. `NotFound` when its directory does not exist.
    fn append_file(path: &CStr, bytes: &[u8]) -> Result<(), PlatformError>;
    /// Loads a shared library.
    fn open_library(path: &CStr) -> Result<LibraryHandle, PlatformError>;
    /// Looks up a symbol in a loaded library.
    fn find_symbol(library: &LibraryHandle, name: &CStr) -> Option<NonNull<c_void>>;
    /// Unloads a library opened by [`Platform::open_library`]; only its handle's drop calls it.
    ///
    /// # Safety
    /// Called once per handle, and no pointer obtained from the library may be used afterwards.
    unsafe fn close_library(library: &LibraryHandle);
    /// Reserves `bytes` of memory (8-aligned at least) for an arena; used when loading, never when executing.
    fn allocate(bytes: usize) -> Result<NonNull<u8>, PlatformError>;
    /// Returns memory from [`Platform::allocate`].
    ///
    /// # Safety
    /// `memory` and `bytes` must be exactly what `allocate` gave, and nothing may use the memory afterwards.
    unsafe fn release(memory: NonNull<u8>, bytes: usize);
    /// Blocks (never spins) until this thread holds the one process-wide (on the aDSP: PD-wide) lock around
    /// vendor calls; only [`VendorCalls`] calls it.
    fn lock_vendor_calls();
    /// Releases the lock [`Platform::lock_vendor_calls`] took.
    ///
    /// # Safety
    /// Only the thread holding the lock may call it, once per lock.
    unsafe fn unlock_vendor_calls();
    /// A completion signal: set by one thread (a backend's notify thread), waited for by one other (QuRT: a
    /// `qurt_signal_t`; Linux user mode: a word, the program having one thread; host: a mutex and a condition).
    /// The runtime keeps them in one fixed pool outside any arena ([`signals`]) and never ends one.
    type Signal: Sync;
    /// Makes a cleared signal at `signal`, which stays at that address for as long as the process (the PD) lives.
    ///
    /// # Safety
    /// `signal` is valid for writes and aligned for [`Platform::Signal`], holds no live signal and is never moved or
    /// written again.
    unsafe fn signal_init(signal: *mut Self::Signal);
    /// Sets the signal, waking its waiter; callable from any thread.
    fn signal_set(signal: &Self::Signal);
    /// Blocks (never spins) until the signal is set, then clears it ([`Woken::Set`]), or until `micros`
    /// microseconds have passed ([`Woken::TimedOut`]; the platform may round the wait up to its timer's least
    /// duration). [`PlatformError::Unsupported`] where no other thread could ever set it (the single-threaded
    /// virtual aDSP): waiting there is a bug, said loudly, rather than a hang.
    fn signal_wait(signal: &Self::Signal, micros: u64) -> Result<Woken, PlatformError>;
}

/// How a [`Platform::signal_wait`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woken {
    /// The signal was set (and is clear again).
    Set,
    /// The time given passed first.
    TimedOut,
}

/// Holds the process-wide (PD-wide) lock that serialises creating and freeing QNN backends, system contexts and
/// contexts. Vendor libraries do not document their thread safety (two libQnnHtp context creations at once
/// crash inside its graph deserialisation), so every such call runs under this lock; executes do not take it.
/// The lock blocks (a QuRT mutex, a futex, a host mutex) and is released when this value is dropped.
pub struct VendorCalls {
    /// Not `Send`: the thread that locked must unlock.
    _not_send: core::marker::PhantomData<*const ()>,
}

impl VendorCalls {
    /// Waits for the lock. Not re-entrant: a thread holding it must not ask again.
    pub fn lock() -> VendorCalls {
        Current::lock_vendor_calls();
        VendorCalls { _not_send: core::marker::PhantomData }
    }
}

impl Drop for VendorCalls {
    fn drop(&mut self) {
        // SAFETY: this value exists only while its thread holds the lock (`lock`), and is dropped once.
        unsafe { Current::unlock_vendor_calls() };
    }
}

/// Reads a file of `size` bytes into the start of `buffer`, calling `read_some` (which fills the slice it is
/// given from the file's current position and answers the bytes read, 0 at the end) until the end.
pub fn read_whole(
    size: u64,
    buffer: &mut [u8],
    mut read_some: impl FnMut(&mut [u8]) -> Result<usize, PlatformError>,
) -> Result<usize, PlatformError> {
    if size > buffer.len() as u64 {
        return Err(PlatformError::TooLarge { needed: size });
    }
    let mut filled = 0usize;
    while let Some(rest) = buffer.get_mut(filled..).filter(|rest| !rest.is_empty()) {
        match read_some(rest)? {
            0 => break,
            read => filled += read,
        }
    }
    Ok(filled)
}

/// Longest path, NUL included, that [`Platform::create_directory`] and [`Platform::write_file`] take.
pub const MAX_PATH_BYTES: usize = 512;

/// The answer to a path longer than [`MAX_PATH_BYTES`]: ENAMETOOLONG.
pub const NAME_TOO_LONG: PlatformError = PlatformError::Failed(36);

/// Refuses a path longer than [`MAX_PATH_BYTES`] (NUL included) with [`NAME_TOO_LONG`].
pub fn check_path_length(path: &CStr) -> Result<(), PlatformError> {
    if path.to_bytes_with_nul().len() > MAX_PATH_BYTES {
        return Err(NAME_TOO_LONG);
    }
    Ok(())
}

/// Bytes of the buffer [`partial_name`] fills: the longest path with a token's `.<token>.partial` and NUL.
pub const PARTIAL_PATH_BYTES: usize = MAX_PATH_BYTES + 1 + temporary::TOKEN_CHARS + temporary::SUFFIX.len();

/// Writes `path`'s temporary name under `token` (`<path>.<token>.partial`) with its NUL into `buffer` and answers
/// it: the name a file is written under before it is renamed into place. [`NAME_TOO_LONG`] when `path` is longer
/// than [`MAX_PATH_BYTES`].
pub fn partial_name<'a>(
    path: &CStr,
    token: &Token,
    buffer: &'a mut [u8; PARTIAL_PATH_BYTES],
) -> Result<&'a CStr, PlatformError> {
    check_path_length(path)?;
    let [dot, digits, suffix] = token.after_name();
    let mut end = 0usize;
    for part in [path.to_bytes(), dot, digits, suffix, &[0]] {
        // The name and its NUL fit (at most MAX_PATH_BYTES - 1 + the token's part + 1 bytes).
        let slot = end.checked_add(part.len()).and_then(|next| buffer.get_mut(end..next)).ok_or(NAME_TOO_LONG)?;
        lpai_direct::codec::copy_prefix(slot, part);
        end += part.len();
    }
    let name = buffer.get(..end).ok_or(NAME_TOO_LONG)?;
    // SAFETY: a C string's bytes, then a token of letters and digits, `.` and the suffix (no NUL among them), then
    // one NUL: exactly the `end` bytes just written.
    Ok(unsafe { CStr::from_bytes_with_nul_unchecked(name) })
}

/// The whole-or-nothing write every platform's [`Platform::write_file`] does, on the platform's own services:
/// `write` puts `bytes` into a new (or truncated) file, `rename` moves a file over another, `remove` deletes one.
/// Writes `path`'s temporary name under `token`, renames it to `path`, and removes the temporary file when either
/// step fails.
pub fn write_through_partial(
    path: &CStr,
    token: &Token,
    bytes: &[u8],
    write: impl FnOnce(&CStr, &[u8]) -> Result<(), PlatformError>,
    rename: impl FnOnce(&CStr, &CStr) -> Result<(), PlatformError>,
    remove: impl FnOnce(&CStr),
) -> Result<(), PlatformError> {
    let mut buffer = [0u8; PARTIAL_PATH_BYTES];
    let partial = partial_name(path, token, &mut buffer)?;
    let written = write(partial, bytes).and_then(|()| rename(partial, path));
    if written.is_err() {
        remove(partial);
    }
    written
}

/// Converts a tick count of the current platform to microseconds (saturating).
pub fn ticks_to_micros(ticks: u64) -> u64 {
    const PER_SECOND: u64 = Current::TICKS_PER_SECOND;
    // A remainder below a second's ticks times a million fits 64 bits: no 128-bit division (1 KB of the skel).
    const { assert!(PER_SECOND > 0 && PER_SECOND <= u64::MAX / 1_000_000) };
    let (seconds, rest) = (ticks / PER_SECOND, ticks % PER_SECOND);
    seconds.saturating_mul(1_000_000).saturating_add(rest * 1_000_000 / PER_SECOND)
}

static LOG_LEVEL: AtomicU32 = AtomicU32::new(Level::Warn as u32);

/// Sets the most detailed level that is still written (`None`: nothing). One setting for the whole process
/// (on the aDSP: the whole PD), whichever handle set it last.
pub fn set_log_level(level: Option<Level>) {
    LOG_LEVEL.store(level.map_or(0, |level| level as u32), Ordering::Relaxed);
}

/// Whether a message at `level` would be written.
pub fn log_enabled(level: Level) -> bool {
    level as u32 <= LOG_LEVEL.load(Ordering::Relaxed)
}

/// Writes a formatted line at `level` (after the caller checked [`log_enabled`]).
pub fn write_log(level: Level, line: &Line) {
    Current::log(level, line);
}
