//! The handle and its layout in the caller's memory: the state a live embedding keeps at the start of the arena
//! the caller gives [`lpai_direct_embed_create`](crate::lpai_direct_embed_create), where create puts it and the
//! libraries, and how a call finds the state again from the handle.

use crate::errors::{code_of, LastError, ERROR_STATE};
use core::ffi::c_int;
use core::mem::{align_of, size_of};
use core::ptr;
use core::ptr::NonNull;
use lpai_direct_skel::embed::{Embed, Libraries};
use lpai_direct_skel::platform::{Line, Message};
use lpai_direct_skel::runtime::{Footing, RuntimeError};

/// `struct lpai_direct_embed` as C sees it: opaque, reached only through pointers.
#[repr(C)]
pub struct EmbedHandle {
    _opaque: [u8; 0],
}

/// "LPEM": marks a live handle; cleared by destroy.
const MAGIC: u32 = u32::from_le_bytes(*b"LPEM");

/// What the handle points at, at the start of the caller's arena. `repr(C)` with the magic word first: checking
/// a handle reads only its first four bytes.
#[repr(C)]
pub(crate) struct State {
    /// [`MAGIC`] while the handle is live, 0 after destroy.
    pub(crate) magic: u32,
    /// The caller's whole arena, handle included: a binary may not lie in it.
    pub(crate) arena_start: usize,
    pub(crate) arena_end: usize,
    /// `None` after a failed create.
    pub(crate) embed: Option<Embed<CallerArena>>,
    /// The last failure's message.
    pub(crate) message: LastError,
    /// Where the next load puts LPAI's memory pools (`lpai_direct_embed_set_memory_types`).
    pub(crate) memory: lpai_direct::qnn::lpai::MemoryPlacement,
    /// Input sets the next load gives each graph (`lpai_direct_embed_set_input_sets`).
    pub(crate) input_sets: u32,
}

/// The footing of a C embedding: the libraries, which create placed in the caller's arena right after the state and
/// which this owns (dropped in place when it drops, after the context), and the rest of that arena.
pub(crate) struct CallerArena {
    libraries: NonNull<Libraries>,
    arena: NonNull<[u8]>,
}

impl CallerArena {
    /// Takes the libraries at `libraries` and the memory `arena`.
    ///
    /// # Safety
    /// `libraries` holds initialised libraries that nothing else uses or drops; `arena` is memory disjoint from them
    /// that nothing else uses; both stay valid until the returned value drops (the caller's promise to create:
    /// the arena is untouched until destroy).
    pub(crate) unsafe fn new(libraries: NonNull<Libraries>, arena: NonNull<[u8]>) -> CallerArena {
        CallerArena { libraries, arena }
    }
}

// SAFETY: `new`'s contract: both stay where they are, valid and otherwise unused, until this drops; in-place
// binaries are the C caller's, kept until destroy, which drops this (`'static` as far as Rust can tell).
unsafe impl Footing<'static> for CallerArena {
    fn libraries(&self) -> &Libraries {
        // SAFETY: initialised and alive until this drops (`new`'s contract); only shared borrows are made.
        unsafe { self.libraries.as_ref() }
    }

    fn arena(&mut self) -> NonNull<[u8]> {
        self.arena
    }
}

impl Drop for CallerArena {
    fn drop(&mut self) {
        // SAFETY: owned by this value (`new`'s contract), dropped once, here; the embedding's context that borrowed
        // them is gone (the owner drops it first).
        unsafe { self.libraries.as_ptr().drop_in_place() };
    }
}

impl State {
    /// The state of a live handle over the arena from `arena_start` to `arena_end`, before its embedding exists.
    pub(crate) fn new(arena_start: usize, arena_end: usize) -> State {
        State {
            magic: MAGIC,
            arena_start,
            arena_end,
            embed: None,
            message: LastError::new(),
            memory: lpai_direct::qnn::lpai::MemoryPlacement::DEFAULT,
            input_sets: 1,
        }
    }

    /// Empties the last error message (after a success).
    pub(crate) fn clear(&mut self) {
        self.message.clear();
    }

    /// Records `message` as the last error and answers `code` (out of line, as the other error paths: every C
    /// function shares one copy instead of building a message line in its own frame).
    #[inline(never)]
    pub(crate) fn refuse(&mut self, code: c_int, message: Message) -> c_int {
        self.message.record(&Line::of(&message));
        code
    }

    /// Records the runtime's message and answers its code.
    #[inline(never)]
    pub(crate) fn fail(&mut self, error: &RuntimeError) -> c_int {
        self.message.record(&Line::of(error));
        code_of(error)
    }

    /// `result`'s answer, with the message cleared; or its error's code, with the message recorded.
    pub(crate) fn settle<R>(&mut self, result: Result<R, RuntimeError>) -> Result<R, c_int> {
        match result {
            Ok(answer) => {
                self.clear();
                Ok(answer)
            }
            Err(error) => Err(self.fail(&error)),
        }
    }

    /// Runs `action` on the loaded embedding: its answer, with the message cleared; or the code of why not (no
    /// binary loaded, or the runtime's error), with the message recorded. `call` names the function.
    pub(crate) fn run<R>(
        &mut self,
        call: &str,
        action: impl FnOnce(&mut Embed<CallerArena>) -> Result<R, RuntimeError>,
    ) -> Result<R, c_int> {
        let result = match self.embed.as_mut() {
            Some(embedding) if embedding.is_loaded() => action(embedding),
            _ => return Err(self.not_loaded(call)),
        };
        self.settle(result)
    }

    /// Records that `call` needs a loaded binary and answers its code.
    #[inline(never)]
    fn not_loaded(&mut self, call: &str) -> c_int {
        let line = lpai_direct_skel::message!(Message::EmbedNotLoaded, call);
        self.message.record(&line);
        ERROR_STATE
    }
}

/// The state behind `embed` when it is a live handle (non-null, aligned, its magic word set); `None` otherwise.
///
/// # Safety
/// As for [`state`].
unsafe fn live(embed: *const EmbedHandle) -> Option<*mut State> {
    let state = embed.cast::<State>().cast_mut();
    if state.is_null() || !state.is_aligned() {
        return None;
    }
    // SAFETY: aligned, readable, and (per the caller) no other reference to it is in use.
    let magic = unsafe { ptr::addr_of!((*state).magic).read() };
    (magic == MAGIC).then_some(state)
}

/// The live state behind a handle; `None` for null, misaligned or not-live handles.
///
/// # Safety
/// `embed` is null or points at memory that is readable (and, for a live handle, was set up by
/// [`lpai_direct_embed_create`](crate::lpai_direct_embed_create) and not destroyed since); no other call uses the
/// handle at the same time.
pub(crate) unsafe fn state<'h>(embed: *mut EmbedHandle) -> Option<&'h mut State> {
    // SAFETY: the caller's promise.
    let state = unsafe { live(embed) }?;
    // SAFETY: the magic word says create set it up and destroy has not run; one caller at a time.
    Some(unsafe { &mut *state })
}

/// The live state behind a handle, to read; `None` for null, misaligned or not-live handles.
///
/// # Safety
/// As for [`state`].
pub(crate) unsafe fn state_ref<'h>(embed: *const EmbedHandle) -> Option<&'h State> {
    // SAFETY: the caller's promise.
    let state = unsafe { live(embed) }?;
    // SAFETY: the magic word says create set it up and destroy has not run.
    Some(unsafe { &*state })
}

/// Where create puts things in the caller's arena, as offsets from its start: the state, then the libraries, each
/// aligned for its type, then the embedding's own arena from `rest` to the end.
pub(crate) struct Layout {
    pub(crate) state: usize,
    pub(crate) libraries: usize,
    pub(crate) rest: usize,
}

impl Layout {
    /// The layout of an arena of `bytes` bytes at address `start`; `None` when it cannot hold the state and the
    /// libraries.
    pub(crate) fn of(start: usize, bytes: usize) -> Option<Layout> {
        let (state, state_end) = place::<State>(start, 0)?;
        let (libraries, rest) = place::<Libraries>(start, state_end)?;
        (rest <= bytes).then_some(Layout { state, libraries, rest })
    }
}

/// Where a `T` goes at or after `offset` in an arena at address `start`: its offset, aligned for `T`, and the
/// offset just after it; `None` on overflow.
fn place<T>(start: usize, offset: usize) -> Option<(usize, usize)> {
    let aligned = start.checked_add(offset)?.checked_next_multiple_of(align_of::<T>())?;
    let at = aligned - start;
    Some((at, at.checked_add(size_of::<T>())?))
}
