//! What one open handle holds: settings, the QNN libraries, loaded contexts with their arenas, the last error;
//! all in one block of memory allocated when the handle opens, so nothing of it sits in the static table.

use super::loaded::LoadedContext;
use crate::platform::{Current, Level, Line, Platform, VendorCalls};
use crate::runtime::{Backend, SystemLibrary};
use crate::say;
use core::cell::UnsafeCell;
use core::ffi::CStr;
use core::ptr::NonNull;

/// Most contexts one handle holds.
pub(super) const MAX_CONTEXTS: usize = 4;
/// Longest library path `configure` accepts, NUL included.
pub(super) const PATH_BYTES: usize = 256;

/// A NUL-terminated path kept in place.
#[derive(Clone, Copy)]
pub(super) struct Path {
    bytes: [u8; PATH_BYTES],
}

impl Path {
    /// A path from text known at build time (no NUL inside, shorter than [`PATH_BYTES`]).
    const fn constant(text: &str) -> Path {
        let mut bytes = [0u8; PATH_BYTES];
        let source = text.as_bytes();
        let mut index = 0;
        while index < source.len() && index < PATH_BYTES - 1 {
            bytes[index] = source[index];
            index += 1;
        }
        Path { bytes }
    }

    /// Whether `path` fits (NUL included).
    pub(super) fn fits(path: &CStr) -> bool {
        path.to_bytes_with_nul().len() <= PATH_BYTES
    }

    /// Copies `path` over this one; a path that does not [`fit`](Path::fits) leaves it unchanged.
    pub(super) fn set(&mut self, path: &CStr) {
        if Path::fits(path) {
            self.bytes.fill(0);
            lpai_direct::codec::copy_prefix(&mut self.bytes, path.to_bytes_with_nul());
        }
    }

    /// The path as a C string.
    pub(super) fn as_c_str(&self) -> &CStr {
        CStr::from_bytes_until_nul(&self.bytes).unwrap_or(c"")
    }

    /// The path as text for messages.
    pub(super) fn text(&self) -> &str {
        self.as_c_str().to_str().unwrap_or("?")
    }
}

/// Settings from `configure`.
pub(super) struct Settings {
    /// The QNN backend library.
    pub(super) backend: Path,
    /// libQnnSystem (empty: none, loads take a metadata record).
    pub(super) system_library: Path,
    /// QNN profiling level (0 off).
    pub(super) profiling_level: u32,
    /// LPAI hardware version (0: the build default).
    pub(super) lpai_hw_version: u32,
    /// LPAI target (`wire::TARGET_DEFAULT`: the platform's default).
    pub(super) lpai_target: u32,
    /// Arena bytes per context (0: binary size + the default headroom).
    pub(super) arena_bytes: usize,
}

impl Settings {
    /// What a new handle starts with: the aDSP's library names.
    const DEFAULT: Settings = Settings {
        backend: Path::constant("libQnnLpai.so"),
        system_library: Path::constant("libQnnSystem.so"),
        profiling_level: 0,
        lpai_hw_version: 0,
        lpai_target: lpai_direct::wire::TARGET_DEFAULT,
        arena_bytes: 0,
    };
}

/// Which of the two libraries.
#[derive(Clone, Copy)]
pub(super) enum Library {
    /// The QNN backend.
    Backend,
    /// libQnnSystem.
    System,
}

/// The QNN libraries a handle loaded.
pub(super) struct Libraries {
    /// The backend.
    pub(super) backend: Backend,
    /// libQnnSystem; `None` when `configure` named none (every load then comes with a metadata record).
    pub(super) system: Option<SystemLibrary>,
}

/// One handle's memory: its libraries beside its session. Contexts in the session borrow the libraries, so the
/// libraries sit outside the session that every call borrows `&mut`, and are reached only through the session's
/// pointer to them.
pub(super) struct Block {
    libraries: UnsafeCell<Option<Libraries>>,
    session: Session,
}

const _: () = assert!(core::mem::align_of::<Block>() <= 8, "Platform::allocate promises 8-byte alignment");

impl Block {
    /// Allocates and initialises a block for a new handle; `None` when the PD heap has no room.
    pub(super) fn create() -> Option<NonNull<Block>> {
        let memory = Current::allocate(core::mem::size_of::<Block>()).ok()?.cast::<Block>();
        let block = memory.as_ptr();
        // SAFETY: fresh memory of the block's size and (at most 8-byte) alignment; each field is written once,
        // in place, before anything reads the block.
        unsafe {
            core::ptr::addr_of_mut!((*block).libraries).write(UnsafeCell::new(None));
            let libraries = NonNull::new_unchecked(core::ptr::addr_of_mut!((*block).libraries)).cast();
            let session = core::ptr::addr_of_mut!((*block).session);
            core::ptr::addr_of_mut!((*session).libraries).write(libraries);
            core::ptr::addr_of_mut!((*session).settings).write(Settings::DEFAULT);
            core::ptr::addr_of_mut!((*session).contexts).write([const { None }; MAX_CONTEXTS]);
            core::ptr::addr_of_mut!((*session).loads).write(0);
            core::ptr::addr_of_mut!((*session).last_error).write(Line::new());
        }
        Some(memory)
    }

    /// The session in a block.
    ///
    /// # Safety
    /// `block` must come from [`Block::create`], not yet destroyed, and the caller must be the only one using it
    /// for as long as the returned borrow lives.
    pub(super) unsafe fn session<'b>(block: NonNull<Block>) -> &'b mut Session {
        // SAFETY: the caller's promise; only the session field is borrowed, never the libraries beside it.
        unsafe { &mut *core::ptr::addr_of_mut!((*block.as_ptr()).session) }
    }

    /// Frees everything the handle holds (contexts first, then the libraries) and the block itself.
    ///
    /// # Safety
    /// `block` must come from [`Block::create`] and nothing may use it afterwards.
    pub(super) unsafe fn destroy(block: NonNull<Block>) {
        // SAFETY: the caller's promise: this is the only use of the block.
        let session = unsafe { Block::session(block) };
        session.clear_contexts();
        session.set_libraries(None);
        // SAFETY: the session holds nothing that needs dropping any more (contexts and libraries are gone, the
        // rest is plain data); the memory is what `create` allocated, with the same size.
        unsafe { Current::release(block.cast(), core::mem::size_of::<Block>()) };
    }
}

/// One open handle.
pub(super) struct Session {
    /// The block's libraries: contexts borrow them, so they change only while no context exists.
    libraries: NonNull<Option<Libraries>>,
    /// From `configure`.
    pub(super) settings: Settings,
    /// Loaded contexts; they borrow the libraries, so they go first.
    contexts: [Option<LoadedContext>; MAX_CONTEXTS],
    /// Counts loads, for context ids.
    loads: u32,
    /// The message of the last failed call.
    last_error: Line,
}

impl Session {
    /// The session's libraries, if loaded.
    pub(super) fn libraries(&self) -> Option<&Libraries> {
        // SAFETY: the pointer targets this session's block, alive as long as the session; the value changes only
        // in `set_libraries`, which needs `&mut self`, so not while this borrow lives.
        unsafe { self.libraries.as_ref().as_ref() }
    }

    /// Loads, replaces or drops the libraries (under the vendor-calls lock); refused (false) while a context
    /// exists.
    pub(super) fn set_libraries(&mut self, libraries: Option<Libraries>) -> bool {
        if self.has_contexts() {
            return false;
        }
        let _vendor = VendorCalls::lock();
        // SAFETY: no context exists, so nothing borrows the old value; `&mut self` excludes every other use.
        unsafe { *self.libraries.as_ptr() = libraries };
        true
    }

    /// Whether any context is loaded.
    pub(super) fn has_contexts(&self) -> bool {
        self.contexts.iter().any(Option::is_some)
    }

    /// Frees every context.
    pub(super) fn clear_contexts(&mut self) {
        for context in self.contexts.iter_mut() {
            drop(context.take());
        }
    }

    /// The index of a free context slot.
    pub(super) fn free_context_slot(&self) -> Option<usize> {
        self.contexts.iter().position(Option::is_none)
    }

    /// Keeps a loaded context in `slot` and answers its id.
    pub(super) fn keep(&mut self, slot: usize, mut context: LoadedContext) -> Option<i32> {
        self.loads = self.loads.wrapping_add(1) & 0x07FF_FFFF;
        context.serial = self.loads;
        let id = ((self.loads << 4) | slot as u32) as i32;
        *self.contexts.get_mut(slot)? = Some(context);
        Some(id)
    }

    /// The context with id `id`.
    pub(super) fn context(&mut self, id: i32) -> Option<&mut LoadedContext> {
        let (slot, serial) = ((id as u32 & 0xF) as usize, id as u32 >> 4);
        self.contexts.get_mut(slot)?.as_mut().filter(|context| id >= 0 && context.serial == serial)
    }

    /// Frees the context with id `id`; false if there is none.
    pub(super) fn unload(&mut self, id: i32) -> bool {
        if self.context(id).is_none() {
            return false;
        }
        self.contexts.get_mut((id as u32 & 0xF) as usize).and_then(Option::take).is_some()
    }

    /// The last error, cleared, to write a new message into (then call [`Session::log_error`]).
    pub(super) fn error_line(&mut self) -> &mut Line {
        self.last_error.clear();
        &mut self.last_error
    }

    /// Logs the message just written at info level.
    pub(super) fn log_error(&self) {
        crate::log!(Level::Info, self.last_error.as_str());
    }

    /// Clears the last error (every call but `last_error` does).
    pub(super) fn clear_error(&mut self) {
        self.last_error.clear();
    }

    /// Records why a library did not load, naming its path.
    pub(super) fn fail_library(&mut self, which: Library, error: &crate::runtime::RuntimeError) {
        self.last_error.clear();
        let (what, path) = match which {
            Library::System => ("system library", &self.settings.system_library),
            Library::Backend => ("backend", &self.settings.backend),
        };
        say!(&mut self.last_error, what, " ", path.text(), ": ", error);
        self.log_error();
    }

    /// The last error's text.
    pub(super) fn last_error(&self) -> &str {
        self.last_error.as_str()
    }
}

/// Records a failure's message on a session for `last_error` (said in parts, in place) and logs it.
macro_rules! fail {
    ($session:expr, $($part:expr),+ $(,)?) => {{
        let session: &mut $crate::skel::session::Session = $session;
        $crate::say!(session.error_line(), $($part),+);
        session.log_error();
    }};
}
pub(super) use fail;
