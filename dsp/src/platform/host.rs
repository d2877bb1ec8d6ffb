//! Host platform (x86_64, aarch64): std time and files, stderr logging, dlopen through libloading.

use super::{Level, LibraryHandle, Line, Platform, PlatformError, Woken};
use core::ffi::{c_void, CStr};
use core::ptr::NonNull;
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
use lpai_direct::temporary::Token;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Instant;

/// The host implementation of [`Platform`].
pub struct Host;

/// Blocks from [`Host::allocate`] not yet released, and their bytes: what [`Host::resources`] reports.
static LIVE_BLOCKS: AtomicUsize = AtomicUsize::new(0);
static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);
/// Libraries from [`Host::open_library`] not yet closed.
static LIVE_LIBRARIES: AtomicUsize = AtomicUsize::new(0);

/// What the host platform holds for its callers right now (host builds only; the device skel keeps no counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    /// Memory blocks allocated and not released (sessions, arenas, job buffers).
    pub blocks: usize,
    /// Their bytes.
    pub bytes: usize,
    /// Libraries opened and not closed.
    pub libraries: usize,
}

impl Host {
    /// The memory and libraries held right now, for leak checks.
    pub fn resources() -> Resources {
        Resources {
            blocks: LIVE_BLOCKS.load(Ordering::Relaxed),
            bytes: LIVE_BYTES.load(Ordering::Relaxed),
            libraries: LIVE_LIBRARIES.load(Ordering::Relaxed),
        }
    }
}

/// The thread that holds the vendor-calls lock, if any (its `pthread_self`), and the condition its waiters sleep on.
static VENDOR_LOCKED: Mutex<Option<usize>> = Mutex::new(None);

extern "C" {
    /// The calling thread's `pthread_t` (an unsigned long on Linux). Not `std::thread::current`: that registers a
    /// thread-local destructor in this library, which a thread would run after the library was unloaded (the audio
    /// module's host build is such a library).
    fn pthread_self() -> usize;
}
static VENDOR_RELEASED: Condvar = Condvar::new();

/// The host's completion signal: a flag under a mutex, and the condition its waiter sleeps on.
pub struct HostSignal {
    set: Mutex<bool>,
    changed: Condvar,
}

fn path_of(path: &CStr) -> &std::path::Path {
    std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()))
}

fn io_error(error: std::io::Error) -> PlatformError {
    match error.kind() {
        std::io::ErrorKind::NotFound => PlatformError::NotFound,
        _ => PlatformError::Failed(error.raw_os_error().unwrap_or(-1)),
    }
}

impl Platform for Host {
    const TICKS_PER_SECOND: u64 = 1_000_000_000;

    fn now_ticks() -> u64 {
        static START: OnceLock<Instant> = OnceLock::new();
        let nanos = START.get_or_init(Instant::now).elapsed().as_nanos();
        u64::try_from(nanos).unwrap_or(u64::MAX)
    }

    fn log(level: Level, line: &Line) {
        std::eprintln!("lpai-direct[{}]: {}", level.name(), line.rendered());
    }

    fn file_size(path: &CStr) -> Result<u64, PlatformError> {
        std::fs::metadata(path_of(path)).map(|m| m.len()).map_err(io_error)
    }

    fn read_file(path: &CStr, buffer: &mut [u8]) -> Result<usize, PlatformError> {
        let mut file = std::fs::File::open(path_of(path)).map_err(io_error)?;
        let needed = file.metadata().map_err(io_error)?.len();
        if needed > buffer.len() as u64 {
            return Err(PlatformError::TooLarge { needed });
        }
        let mut filled = 0;
        while filled < buffer.len() {
            match file.read(&mut buffer[filled..]).map_err(io_error)? {
                0 => break,
                n => filled += n,
            }
        }
        Ok(filled)
    }

    fn create_directory(path: &CStr) -> Result<(), PlatformError> {
        super::check_path_length(path)?;
        let path = path_of(path);
        match std::fs::DirBuilder::new().mode(0o755).create(path) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
            Err(error) => Err(io_error(error)),
        }
    }

    fn write_file(path: &CStr, token: &Token, bytes: &[u8]) -> Result<(), PlatformError> {
        super::write_through_partial(
            path,
            token,
            bytes,
            |partial, bytes| {
                let mut options = std::fs::OpenOptions::new();
                options.write(true).create(true).truncate(true).mode(0o644);
                let mut file = options.open(path_of(partial)).map_err(io_error)?;
                file.write_all(bytes).map_err(io_error)
            },
            |partial, path| std::fs::rename(path_of(partial), path_of(path)).map_err(io_error),
            |partial| {
                let _ = std::fs::remove_file(path_of(partial));
            },
        )
    }

    fn append_file(path: &CStr, bytes: &[u8]) -> Result<(), PlatformError> {
        super::check_path_length(path)?;
        let mut options = std::fs::OpenOptions::new();
        options.append(true).create(true).mode(0o644);
        options.open(path_of(path)).and_then(|mut file| file.write_all(bytes)).map_err(io_error)
    }

    fn open_library(path: &CStr) -> Result<LibraryHandle, PlatformError> {
        if !path_of(path).exists() && path.to_bytes().contains(&b'/') {
            return Err(PlatformError::NotFound);
        }
        // SAFETY: loading a library runs its initialisers; the caller asked for exactly this library.
        let library = unsafe { Library::open(Some(path_of(path)), RTLD_NOW | RTLD_LOCAL) }
            .map_err(|_| PlatformError::NotLoadable)?;
        let raw = NonNull::new(library.into_raw()).ok_or(PlatformError::Failed(-1))?;
        // SAFETY: libloading's handle of a library it just opened, closed only through this handle.
        let handle = unsafe { LibraryHandle::from_raw(raw) };
        LIVE_LIBRARIES.fetch_add(1, Ordering::Relaxed);
        Ok(handle)
    }

    fn find_symbol(library: &LibraryHandle, name: &CStr) -> Option<NonNull<c_void>> {
        // SAFETY: the handle came from `open_library` and is still open; `into_raw` gives it back unclosed.
        let library = unsafe { Library::from_raw(library.as_raw().as_ptr()) };
        // SAFETY: the symbol is only returned as an address; its type is the caller's business.
        let symbol = unsafe { library.get::<*mut c_void>(name.to_bytes_with_nul()) }.ok();
        let address = symbol.map(|s| s.into_raw());
        let _ = library.into_raw();
        address.and_then(NonNull::new)
    }

    unsafe fn close_library(library: &LibraryHandle) {
        // SAFETY: the caller promises nothing from the library is used after this.
        drop(unsafe { Library::from_raw(library.as_raw().as_ptr()) });
        LIVE_LIBRARIES.fetch_sub(1, Ordering::Relaxed);
    }

    fn allocate(bytes: usize) -> Result<NonNull<u8>, PlatformError> {
        let layout = std::alloc::Layout::from_size_align(bytes.max(1), 64).map_err(|_| PlatformError::Failed(-1))?;
        // SAFETY: a non-zero size with a valid alignment.
        let memory = NonNull::new(unsafe { std::alloc::alloc(layout) }).ok_or(PlatformError::Failed(-1))?;
        LIVE_BLOCKS.fetch_add(1, Ordering::Relaxed);
        LIVE_BYTES.fetch_add(bytes, Ordering::Relaxed);
        Ok(memory)
    }

    fn lock_vendor_calls() {
        // SAFETY: no preconditions; it answers the calling thread's id.
        let me = unsafe { pthread_self() };
        let mut holder = VENDOR_LOCKED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // The lock is not re-entrant: on the device a second lock by its holder would hang the PD for good, so
        // here (tests) it is a panic that names the mistake.
        assert!(*holder != Some(me), "the vendor-calls lock was taken again by the thread that holds it");
        while holder.is_some() {
            holder = VENDOR_RELEASED.wait(holder).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *holder = Some(me);
    }

    unsafe fn unlock_vendor_calls() {
        *VENDOR_LOCKED.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        VENDOR_RELEASED.notify_one();
    }

    type Signal = HostSignal;

    unsafe fn signal_init(signal: *mut HostSignal) {
        // SAFETY: the caller's promise: valid, aligned, holding no live signal.
        unsafe { signal.write(HostSignal { set: Mutex::new(false), changed: Condvar::new() }) };
    }

    fn signal_set(signal: &HostSignal) {
        let mut set = signal.set.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *set = true;
        signal.changed.notify_one();
    }

    fn signal_wait(signal: &HostSignal, micros: u64) -> Result<Woken, PlatformError> {
        let deadline = Instant::now().checked_add(std::time::Duration::from_micros(micros));
        let mut set = signal.set.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while !*set {
            // A deadline past what the clock can hold waits without one.
            let Some(deadline) = deadline else {
                set = signal.changed.wait(set).unwrap_or_else(std::sync::PoisonError::into_inner);
                continue;
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(Woken::TimedOut);
            }
            set = signal.changed.wait_timeout(set, left).unwrap_or_else(std::sync::PoisonError::into_inner).0;
        }
        *set = false;
        Ok(Woken::Set)
    }

    unsafe fn release(memory: NonNull<u8>, bytes: usize) {
        if let Ok(layout) = std::alloc::Layout::from_size_align(bytes.max(1), 64) {
            // SAFETY: the caller passes back exactly what `allocate` gave, with this layout.
            unsafe { std::alloc::dealloc(memory.as_ptr(), layout) };
            LIVE_BLOCKS.fetch_sub(1, Ordering::Relaxed);
            LIVE_BYTES.fetch_sub(bytes, Ordering::Relaxed);
        }
    }
}
