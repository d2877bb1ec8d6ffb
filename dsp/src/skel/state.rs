//! What one open handle holds: settings, the QNN libraries, loaded contexts with their arenas, the last error.

use super::sessions::MAX_SESSIONS;
use crate::log;
use crate::platform::{Current, Level, Platform};
use crate::runtime::{Backend, Context, SystemLibrary};
use core::cell::UnsafeCell;
use core::ffi::CStr;
use core::ptr::NonNull;

/// Most contexts one handle holds.
pub const MAX_CONTEXTS: usize = 4;
/// Longest library path `configure` accepts, NUL included.
pub const PATH_BYTES: usize = 256;
/// Largest arena one context may take: a caller must not be able to starve the PD's heap (the audio PD's is a
/// few MB).
pub const MAX_ARENA_BYTES: usize = if cfg!(target_arch = "hexagon") { 16 << 20 } else { 1 << 30 };
/// Arena headroom beyond the binary's size when `configure` leaves the arena size to the skel.
pub const DEFAULT_HEADROOM: usize = if cfg!(target_arch = "hexagon") { 2 << 20 } else { 64 << 20 };

/// A NUL-terminated path kept in place.
#[derive(Clone, Copy)]
pub struct Path {
    bytes: [u8; PATH_BYTES],
}

impl Path {
    /// A path from text known at build time (no NUL inside, shorter than [`PATH_BYTES`]).
    pub const fn constant(text: &str) -> Path {
        let mut bytes = [0u8; PATH_BYTES];
        let source = text.as_bytes();
        let mut index = 0;
        while index < source.len() && index < PATH_BYTES - 1 {
            bytes[index] = source[index];
            index += 1;
        }
        Path { bytes }
    }

    /// Copies `path`; `None` if it does not fit.
    pub fn copy(path: &CStr) -> Option<Path> {
        let source = path.to_bytes_with_nul();
        let mut bytes = [0u8; PATH_BYTES];
        if source.len() > PATH_BYTES {
            return None;
        }
        lpai_direct::codec::copy_prefix(&mut bytes, source);
        Some(Path { bytes })
    }

    /// The path as a C string.
    pub fn as_c_str(&self) -> &CStr {
        CStr::from_bytes_until_nul(&self.bytes).unwrap_or(c"")
    }
}

/// Settings from `configure`.
#[derive(Clone, Copy)]
pub struct Settings {
    /// The QNN backend library.
    pub backend: Path,
    /// libQnnSystem.
    pub system_library: Path,
    /// QNN profiling level (0 off).
    pub profiling_level: u32,
    /// LPAI hardware version (0: the build default).
    pub lpai_hw_version: u32,
    /// LPAI target (`wire::TARGET_DEFAULT`: the platform's default).
    pub lpai_target: u32,
    /// Arena bytes per context (0: binary size + [`DEFAULT_HEADROOM`]).
    pub arena_bytes: usize,
}

impl Settings {
    /// What a new handle starts with: the aDSP's library names.
    pub const DEFAULT: Settings = Settings {
        backend: Path::constant("libQnnLpai.so"),
        system_library: Path::constant("libQnnSystem.so"),
        profiling_level: 0,
        lpai_hw_version: 0,
        lpai_target: lpai_direct::wire::TARGET_DEFAULT,
        arena_bytes: 0,
    };
}

/// The QNN libraries a handle loaded.
pub struct Libraries {
    /// The backend.
    pub backend: Backend,
    /// libQnnSystem.
    pub system: SystemLibrary,
}

/// Each session's libraries, kept outside the session itself: contexts hold `&'static` references into this,
/// and every call borrows its session `&mut`, which must not cover the memory those references point at.
struct LibraryCell(UnsafeCell<Option<Libraries>>);

// SAFETY: a cell is only touched by the call that holds its session's slot (see `sessions`), one at a time.
unsafe impl Sync for LibraryCell {}

static LIBRARIES: [LibraryCell; MAX_SESSIONS] = [const { LibraryCell(UnsafeCell::new(None)) }; MAX_SESSIONS];

/// A loaded context and the arena memory it lives in.
pub struct LoadedContext {
    /// Always `Some` until dropped; taken first in `drop` so the memory outlives the context.
    pub context: Option<Context<'static>>,
    /// The arena's memory, from [`Platform::allocate`].
    pub memory: NonNull<u8>,
    /// Its size.
    pub memory_bytes: usize,
    /// Arena bytes used by the load (the high-water mark).
    pub arena_used: usize,
    /// Tells this load apart from earlier ones in the same slot.
    pub serial: u32,
}

impl Drop for LoadedContext {
    fn drop(&mut self) {
        drop(self.context.take());
        // SAFETY: the context that borrowed the memory is gone; the memory is exactly what `allocate` gave.
        unsafe { Current::release(self.memory, self.memory_bytes) };
    }
}

/// Capacity of the last error message.
pub const ERROR_BYTES: usize = 256;

/// One open handle.
pub struct Session {
    /// Bumped when the handle closes, so its number never works again.
    pub generation: u32,
    /// From `configure`.
    pub settings: Settings,
    /// Which slot of the handle table (and of the library cells) this session is.
    pub table_index: usize,
    /// Loaded contexts; they borrow this session's libraries, so they go first.
    pub contexts: [Option<LoadedContext>; MAX_CONTEXTS],
    /// Counts loads, for context ids.
    pub loads: u32,
    /// The message of the last failed call.
    pub last_error: heapless::String<ERROR_BYTES>,
}

impl Session {
    /// A slot nobody opened.
    pub const EMPTY: Session = Session {
        generation: 1,
        settings: Settings::DEFAULT,
        table_index: 0,
        contexts: [const { None }; MAX_CONTEXTS],
        loads: 0,
        last_error: heapless::String::new(),
    };

    /// Frees every context, then the libraries, and restores the default settings (the generation stays).
    pub fn reset(&mut self) {
        for context in self.contexts.iter_mut() {
            drop(context.take());
        }
        self.set_libraries(None);
        self.settings = Settings::DEFAULT;
        self.loads = 0;
        self.last_error.clear();
    }

    /// The session's libraries, if loaded.
    pub fn libraries(&self) -> Option<&'static Libraries> {
        let cell = LIBRARIES.get(self.table_index)?;
        // SAFETY: only the call holding this session touches its cell, and `set_libraries` replaces the value
        // only while no context (the only holder of these references beyond one call) exists.
        unsafe { (*cell.0.get()).as_ref() }
    }

    /// Loads, replaces or drops the libraries; refused (false) while a context exists.
    pub fn set_libraries(&mut self, libraries: Option<Libraries>) -> bool {
        if self.has_contexts() {
            return false;
        }
        if let Some(cell) = LIBRARIES.get(self.table_index) {
            // SAFETY: this call holds the session, and no context borrows the old value.
            unsafe { *cell.0.get() = libraries };
        }
        true
    }

    /// Whether any context is loaded.
    pub fn has_contexts(&self) -> bool {
        self.contexts.iter().any(Option::is_some)
    }

    /// Records a failure's message for `last_error`, and logs it at info level.
    pub fn fail(&mut self, message: &crate::platform::Line) {
        self.last_error.clear();
        let _ = self.last_error.push_str(message.as_str());
        log!(Level::Info, "{}", message.as_str());
    }
}
