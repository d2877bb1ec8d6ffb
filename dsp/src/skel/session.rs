//! What one open handle holds: settings, the QNN libraries, loaded contexts with their arenas, the last error and
//! the library it stopped at; all in one block of memory allocated when the handle opens, so nothing of it sits in
//! the static table.

use crate::platform::{Current, Level, Line, Message, Platform, Shared};
use crate::runtime::{Libraries, LibraryRole, Owned, Owner};
use crate::say;
use core::ffi::CStr;
use core::ptr::NonNull;
use lpai_direct::wire::{FAILED_LIBRARY_BACKEND, FAILED_LIBRARY_NONE, FAILED_LIBRARY_SYSTEM};

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
    /// The empty path.
    const EMPTY: Path = Path { bytes: [0; PATH_BYTES] };

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
    /// What a new handle starts with: the aDSP's library names (written at run time: a constant of two whole path
    /// buffers would sit in the skel's read-only data, mostly zeros).
    fn for_new_handle() -> Settings {
        let mut settings = Settings {
            backend: Path::EMPTY,
            system_library: Path::EMPTY,
            profiling_level: 0,
            lpai_hw_version: 0,
            lpai_target: lpai_direct::wire::TARGET_DEFAULT,
            arena_bytes: 0,
        };
        settings.backend.set(c"libQnnLpai.so");
        settings.system_library.set(c"libQnnSystem.so");
        settings
    }
}

/// One open handle, in one block of memory allocated when the handle opens (nothing of it sits in the static
/// table): its settings, its libraries, the contexts loaded on them, the last error.
pub(crate) struct Session {
    /// The libraries loads use; each context keeps its own share of them, so replacing them never pulls them
    /// from under a context (`configure` still refuses to while contexts exist: they would run on the old ones).
    libraries: Option<Shared<Libraries>>,
    /// From `configure`.
    pub(super) settings: Settings,
    /// Loaded contexts, each with the arena it lives in.
    contexts: [Option<Owner<Owned>>; MAX_CONTEXTS],
    /// Which load put the context in each slot, to tell ids of earlier loads apart.
    serials: [u32; MAX_CONTEXTS],
    /// Counts loads, for context ids.
    loads: u32,
    /// The message of the last failed call.
    last_error: Line,
    /// The configured library the last failed call stopped at (`wire::FAILED_LIBRARY_*`), for `failed_library`.
    failed_library: u32,
}

const _: () = assert!(core::mem::align_of::<Session>() <= 8, "Platform::allocate promises 8-byte alignment");

impl Session {
    /// Allocates and initialises the session of a new handle; `None` when the PD heap has no room.
    pub(super) fn create() -> Option<NonNull<Session>> {
        let memory = Current::allocate(core::mem::size_of::<Session>()).ok()?.cast::<Session>();
        let session = memory.as_ptr();
        // SAFETY: fresh memory of the session's size and (at most 8-byte) alignment; each field is written once,
        // in place (the session is large for a stack), before anything reads it.
        unsafe {
            core::ptr::addr_of_mut!((*session).libraries).write(None);
            core::ptr::addr_of_mut!((*session).settings).write(Settings::for_new_handle());
            core::ptr::addr_of_mut!((*session).contexts).write([const { None }; MAX_CONTEXTS]);
            core::ptr::addr_of_mut!((*session).serials).write([0; MAX_CONTEXTS]);
            core::ptr::addr_of_mut!((*session).loads).write(0);
            core::ptr::addr_of_mut!((*session).last_error).write(Line::new());
            core::ptr::addr_of_mut!((*session).failed_library).write(FAILED_LIBRARY_NONE);
        }
        Some(memory)
    }

    /// The session behind a handle.
    ///
    /// # Safety
    /// `session` must come from [`Session::create`], not yet destroyed, and the caller must be the only one using
    /// it for as long as the returned borrow lives.
    pub(super) unsafe fn of<'b>(session: NonNull<Session>) -> &'b mut Session {
        // SAFETY: the caller's promise.
        unsafe { &mut *session.as_ptr() }
    }

    /// Frees everything the handle holds (contexts first, then the libraries) and its memory.
    ///
    /// # Safety
    /// `session` must come from [`Session::create`] and nothing may use it afterwards.
    pub(super) unsafe fn destroy(session: NonNull<Session>) {
        // SAFETY: the caller's promise: the session is initialised and this is its last use; the memory is what
        // `create` allocated, with the same size.
        unsafe {
            session.as_ptr().drop_in_place();
            Current::release(session.cast(), core::mem::size_of::<Session>());
        }
    }

    /// The session's libraries, if loaded.
    pub(super) fn libraries(&self) -> Option<&Shared<Libraries>> {
        self.libraries.as_ref()
    }

    /// Keeps, replaces or drops the libraries; refused (false) while a context exists.
    pub(super) fn set_libraries(&mut self, libraries: Option<Shared<Libraries>>) -> bool {
        if self.has_contexts() {
            return false;
        }
        self.libraries = libraries;
        true
    }

    /// Whether any context is loaded.
    pub(super) fn has_contexts(&self) -> bool {
        self.contexts.iter().any(Option::is_some)
    }

    /// The index of a free context slot.
    pub(super) fn free_context_slot(&self) -> Option<usize> {
        self.contexts.iter().position(Option::is_none)
    }

    /// Keeps a loaded context in `slot` and answers its id.
    pub(super) fn keep(&mut self, slot: usize, context: Owner<Owned>) -> Option<i32> {
        self.loads = self.loads.wrapping_add(1) & 0x07FF_FFFF;
        *self.serials.get_mut(slot)? = self.loads;
        *self.contexts.get_mut(slot)? = Some(context);
        Some(((self.loads << 4) | slot as u32) as i32)
    }

    /// The slot of the context with id `id`, if it holds that load's context.
    fn slot_of(&self, id: i32) -> Option<usize> {
        let (slot, serial) = ((id as u32 & 0xF) as usize, id as u32 >> 4);
        let held = self.contexts.get(slot).is_some_and(Option::is_some);
        (id >= 0 && held && self.serials.get(slot) == Some(&serial)).then_some(slot)
    }

    /// The context with id `id`.
    pub(super) fn context(&mut self, id: i32) -> Option<&mut Owner<Owned>> {
        let slot = self.slot_of(id)?;
        self.contexts.get_mut(slot)?.as_mut()
    }

    /// Frees the context with id `id`; false if there is none.
    pub(super) fn unload(&mut self, id: i32) -> bool {
        let slot = self.slot_of(id);
        slot.and_then(|slot| self.contexts.get_mut(slot)).and_then(Option::take).is_some()
    }

    /// The last error, cleared, to write a new message into (then call [`Session::log_error`]); the failure is at
    /// no library.
    pub(super) fn error_line(&mut self) -> &mut Line {
        self.clear_error();
        &mut self.last_error
    }

    /// The last error, cleared, with `message` begun in it: a failure's values are said next, then
    /// [`Session::end_error`] (out of line, so each failure site is calls only).
    #[inline(never)]
    pub(super) fn begin_error(&mut self, message: Message) -> &mut Line {
        self.clear_error();
        self.last_error.begin(message);
        &mut self.last_error
    }

    /// Ends the message [`Session::begin_error`] began and logs it.
    #[inline(never)]
    pub(super) fn end_error(&mut self) {
        self.last_error.end();
        self.log_error();
    }

    /// Logs the message just written at info level.
    pub(super) fn log_error(&self) {
        crate::log!(Level::Info, self.last_error);
    }

    /// Clears the last error and the library it stopped at (every call but `last_error` and `failed_library` does).
    pub(super) fn clear_error(&mut self) {
        self.last_error.clear();
        self.failed_library = FAILED_LIBRARY_NONE;
    }

    /// Records why a library did not load or was refused after loading, naming its path, and which one it was.
    pub(super) fn fail_library(&mut self, which: LibraryRole, error: &crate::runtime::RuntimeError) {
        self.last_error.clear();
        let (what, path, code) = match which {
            LibraryRole::System => (Message::SystemLibrary, &self.settings.system_library, FAILED_LIBRARY_SYSTEM),
            LibraryRole::Backend => (Message::Backend, &self.settings.backend, FAILED_LIBRARY_BACKEND),
        };
        self.failed_library = code;
        say!(&mut self.last_error, Message::LibraryFailed, what, path.text(), error);
        self.log_error();
    }

    /// The last error's record (the stub renders it).
    pub(super) fn last_error(&self) -> &[u8] {
        if self.last_error.is_empty() {
            return &[];
        }
        self.last_error.record()
    }

    /// The configured library the last failed call stopped at (`wire::FAILED_LIBRARY_*`).
    pub(super) fn failed_library(&self) -> u32 {
        self.failed_library
    }
}

/// Records a failure's message on a session for `last_error` (said in parts, in place) and logs it.
macro_rules! fail {
    ($session:expr, $message:expr $(,)?) => {{
        const { assert!($message.places() == 0, "this message's places and the values given differ") };
        let session: &mut $crate::skel::session::Session = $session;
        session.begin_error($message);
        session.end_error();
    }};
    ($session:expr, $message:expr $(, $value:expr)+ $(,)?) => {{
        const {
            assert!(
                $message.places() == $crate::count_values!($($value),*),
                "this message's places and the values given differ"
            )
        };
        let session: &mut $crate::skel::session::Session = $session;
        let line = session.begin_error($message);
        $( $crate::platform::Say::say(&$value, line); )*
        session.end_error();
    }};
}
pub(super) use fail;
