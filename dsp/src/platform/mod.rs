//! Platform services the runtime needs (time, log, files, dynamic loading), behind one small interface.
//!
//! Three implementations, chosen at build time:
//! - [`qurt`]: inside a QuRT protection domain on the aDSP (HAP timers, FARF logging, `apps_std` files, the
//!   PD's dynamic loader). Every symbol it uses is listed in `linker/dsp-runtime-symbols.txt`.
//! - [`linux_user`]: Hexagon Linux user mode under qemu-hexagon (raw syscalls), for the self-test executable and
//!   the PD shell; [`pd_services`] adds the QuRT mutex and FARF services the libraries they link or load call.
//! - [`host`]: x86_64 / aarch64 with std, for the host build of the skel and its tests.

use core::ffi::{c_void, CStr};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, Ordering};

#[cfg(not(target_arch = "hexagon"))]
pub mod host;
pub mod libraries;
#[cfg(all(target_arch = "hexagon", feature = "linux-user"))]
pub mod linux_user;
#[cfg(all(target_arch = "hexagon", feature = "linux-user"))]
pub mod pd_services;
#[cfg(all(target_arch = "hexagon", not(feature = "linux-user")))]
pub mod qurt;

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

impl ufmt::uDisplay for PlatformError {
    fn fmt<W: ufmt::uWrite + ?Sized>(&self, f: &mut ufmt::Formatter<'_, W>) -> Result<(), W::Error> {
        match self {
            PlatformError::NotFound => f.write_str("not found"),
            PlatformError::Failed(code) => ufmt::uwrite!(f, "failed with platform error {}", code),
            PlatformError::TooLarge { needed } => ufmt::uwrite!(f, "needs a buffer of {} bytes", needed),
            PlatformError::Unsupported => f.write_str("not available on this platform"),
            PlatformError::NotLoadable => {
                f.write_str("cannot be loaded (not a shared library for this CPU, or its dependencies are missing)")
            }
        }
    }
}

/// A loaded shared library, as the platform's loader knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LibraryHandle(pub NonNull<c_void>);

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
    /// Writes one log line (no trailing newline in `message`).
    fn log(level: Level, message: &str);
    /// Size of a file in bytes.
    fn file_size(path: &CStr) -> Result<u64, PlatformError>;
    /// Reads a whole file into the start of `buffer`; returns the bytes read.
    fn read_file(path: &CStr, buffer: &mut [u8]) -> Result<usize, PlatformError>;
    /// Loads a shared library.
    fn open_library(path: &CStr) -> Result<LibraryHandle, PlatformError>;
    /// Looks up a symbol in a loaded library.
    fn find_symbol(library: LibraryHandle, name: &CStr) -> Option<NonNull<c_void>>;
    /// Unloads a library opened by [`Platform::open_library`].
    ///
    /// # Safety
    /// No pointer obtained from the library may be used afterwards.
    unsafe fn close_library(library: LibraryHandle);
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

/// Converts a tick count of the current platform to microseconds (saturating).
pub fn ticks_to_micros(ticks: u64) -> u64 {
    let micros = u128::from(ticks) * 1_000_000 / u128::from(Current::TICKS_PER_SECOND);
    u64::try_from(micros).unwrap_or(u64::MAX)
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

/// Capacity of one formatted log line; longer lines are cut and end in `...`.
pub const LOG_LINE_BYTES: usize = 256;

/// One log line or message formatted on the stack with `ufmt` (which, unlike `core::fmt`, has no panic
/// paths): keeps what fits and ends a longer line in `...`.
pub struct Line {
    text: heapless::String<LOG_LINE_BYTES>,
    cut: bool,
}

impl Line {
    /// An empty line.
    pub const fn new() -> Line {
        Line { text: heapless::String::new(), cut: false }
    }

    /// Empties the line.
    pub fn clear(&mut self) {
        self.text.clear();
        self.cut = false;
    }

    /// The text so far.
    pub fn as_str(&self) -> &str {
        self.text.as_str()
    }
}

impl Default for Line {
    fn default() -> Self {
        Line::new()
    }
}

impl ufmt::uWrite for Line {
    type Error = core::convert::Infallible;

    fn write_str(&mut self, text: &str) -> Result<(), Self::Error> {
        for character in text.chars() {
            if self.cut {
                break;
            }
            if self.text.len() + character.len_utf8() > LOG_LINE_BYTES - 3 {
                self.cut = true;
                let _ = self.text.push_str("...");
            } else {
                let _ = self.text.push(character);
            }
        }
        Ok(())
    }
}

/// Writes a formatted line at `level` (after the caller checked [`log_enabled`]).
pub fn write_log(level: Level, line: &Line) {
    Current::log(level, line.as_str());
}

/// Logs through the platform at a [`Level`], formatting with `ufmt` on the stack (`{}`, `{:?}`, `{:#x}`).
#[macro_export]
macro_rules! log {
    ($level:expr, $($arg:tt)*) => {{
        let level = $level;
        if $crate::platform::log_enabled(level) {
            let mut line = $crate::platform::Line::new();
            let _ = $crate::ufmt::uwrite!(line, $($arg)*);
            $crate::platform::write_log(level, &line);
        }
    }};
}

/// Formats into a new [`Line`] with `ufmt`.
#[macro_export]
macro_rules! message {
    ($($arg:tt)*) => {{
        let mut line = $crate::platform::Line::new();
        let _ = $crate::ufmt::uwrite!(line, $($arg)*);
        line
    }};
}

/// 300 characters, longer than a log line.
#[cfg(any(test, feature = "self-test"))]
const LONG_TEXT: &str = concat!(
    "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789",
    "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789",
    "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
);

crate::self_tests! {
    fn monotonic_clock_moves_forward() {
        let first = Current::now_ticks();
        let mut later = first;
        for _ in 0..1_000_000 {
            later = Current::now_ticks();
            if later > first {
                break;
            }
        }
        check!(later > first);
        check!(Current::TICKS_PER_SECOND >= 1_000_000);
    }

    fn reads_a_whole_file_and_reports_its_size() {
        let path = c"/proc/self/exe";
        let size = Current::file_size(path);
        check!(matches!(size, Ok(n) if n > 4));
        let mut head = [0u8; 4];
        check!(Current::read_file(path, &mut head) == Err(PlatformError::TooLarge { needed: size.unwrap_or(0) }));
        check!(Current::read_file(c"/no/such/file", &mut head) == Err(PlatformError::NotFound));
    }

    fn log_lines_are_cut_not_overflowed() {
        let long = crate::message!("{}{}{}", LONG_TEXT, "c", 7u32);
        check!(long.as_str().len() <= LOG_LINE_BYTES && long.as_str().ends_with("..."));
        check!(crate::message!("{}é {:#x}", "x", 255u32).as_str() == "xé 0xff");
        check!(log_enabled(Level::Error) && !log_enabled(Level::Debug));
    }

    fn memory_can_be_reserved_written_and_returned() {
        let memory = Current::allocate(1 << 16);
        check!(memory.is_ok());
        if let Ok(memory) = memory {
            check!((memory.as_ptr() as usize).is_multiple_of(8));
            // SAFETY: the allocation holds 1 << 16 bytes.
            unsafe { memory.as_ptr().add((1 << 16) - 1).write(7) };
            // SAFETY: exactly what allocate gave; unused afterwards.
            unsafe { Current::release(memory, 1 << 16) };
        }
    }

    fn vendor_calls_lock_can_be_taken_again_after_release() {
        drop(VendorCalls::lock());
        let again = VendorCalls::lock();
        drop(again);
    }

    fn ticks_convert_to_micros_without_overflow() {
        check!(ticks_to_micros(0) == 0);
        check!(ticks_to_micros(Current::TICKS_PER_SECOND) == 1_000_000);
        check!(ticks_to_micros(u64::MAX) > 0);
    }
}
