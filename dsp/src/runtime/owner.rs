//! The one owner of a loaded context: the footing it stands on (its libraries and the memory of its arena), the
//! binary placed there or used in place, and the context itself. The skel's handles, the embedding API (Rust and C)
//! and the audio module all load through it; it frees the context first (after waiting, without the vendor-calls
//! lock, for a frame in flight), then lets the footing go.
//!
//! A [`Context`] borrows its libraries, its arena and an in-place binary. Kept in a struct beside what it borrows,
//! those borrows cannot be named, so `lend` is the one place that gives them an erased lifetime: the context is
//! only handed out under a lifetime its users cannot keep ([`Owner::context`], [`Owner::with_context`]; `Context` is
//! invariant in it, so it cannot be swapped for another either), and it is dropped before the footing, or, when a
//! frame never ends, leaked together with the footing. A leaked owner leaks both too; with no frame in flight
//! nothing touches the memory again (the libraries stay loaded while a context on them lives).
//!
//! Asynchronous frames start safely only on a footing whose memory no leak can free ([`Owner::with_async_graph`],
//! for `Footing<'static>`): the reasons are in [`super::completion`].

use super::arena::Arena;
use super::completion::{FrameNotify, TEARDOWN_WAIT_MS};
use super::context::Context;
use super::error::RuntimeError;
use super::graph::{Execution, Graph};
use super::libraries::Libraries;
use super::load::{Binary, LoadRequest, PersistentBinary};
use crate::platform::{Current, Memory, Message, Platform, Shared, VendorCalls};
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;

/// Contexts loaded and not yet dropped, for the host build's resource report (the device build keeps no count).
#[cfg(not(target_arch = "hexagon"))]
pub(crate) static LIVE_CONTEXTS: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// What a loaded context stands on: its libraries and the memory of its arena. `'a` is how long an in-place
/// binary lives; the owner's context does not outlive it.
///
/// # Safety
/// For as long as the footing lives: [`Footing::libraries`] answers the same libraries, which stay valid where they
/// are; [`Footing::arena`] answers the same memory, which stays valid and which nothing but the owner's context
/// uses (the footing itself neither reads nor writes it); and the footing does not outlive `'a` (its type names
/// `'a`, or `'a` is `'static`).
pub unsafe trait Footing<'a> {
    /// The libraries.
    fn libraries(&self) -> &Libraries;
    /// The arena's memory.
    fn arena(&mut self) -> NonNull<[u8]>;
}

/// Libraries and arena memory the caller keeps for `'a` (firmware's statics, a caller's stack).
pub struct Borrowed<'a> {
    libraries: &'a Libraries,
    arena: NonNull<[u8]>,
    _arena: PhantomData<&'a mut [u8]>,
}

impl<'a> Borrowed<'a> {
    /// `arena` (everything the context needs comes from it) on `libraries`.
    pub fn new(libraries: &'a Libraries, arena: &'a mut [u8]) -> Borrowed<'a> {
        Borrowed { libraries, arena: NonNull::from(arena), _arena: PhantomData }
    }
}

// SAFETY: both are borrowed for `'a`, which the type names; the arena's exclusive borrow is held, never used here.
unsafe impl<'a> Footing<'a> for Borrowed<'a> {
    fn libraries(&self) -> &Libraries {
        self.libraries
    }

    fn arena(&mut self) -> NonNull<[u8]> {
        self.arena
    }
}

/// Libraries shared on the PD heap and an arena of PD heap memory, both owned (a skel handle's context, the audio
/// module's model).
pub struct Owned {
    libraries: Shared<Libraries>,
    arena: Memory,
}

impl Owned {
    /// `arena` on `libraries`.
    pub fn new(libraries: Shared<Libraries>, arena: Memory) -> Owned {
        Owned { libraries, arena }
    }
}

// SAFETY: `Shared` keeps the libraries at one heap address while any owner lives; `Memory` owns its allocation,
// whose address never changes, and is not touched here; neither borrows anything (`'static`).
unsafe impl Footing<'static> for Owned {
    fn libraries(&self) -> &Libraries {
        &self.libraries
    }

    fn arena(&mut self) -> NonNull<[u8]> {
        self.arena.as_ptr()
    }
}

/// A footing and the context loaded on it, if any.
pub struct Owner<F> {
    /// Dropped first (in `Drop`), or leaked with the footing when a frame never ends.
    context: Option<Context<'static>>,
    /// Dropped by hand in `Drop`, after the context; never when the context was leaked.
    footing: ManuallyDrop<F>,
    arena_capacity: usize,
    arena_used: usize,
    load_ticks: u64,
}

/// The footing's libraries and arena memory, and the request's in-place binary, for `'static`: the one lifetime
/// erasure of the runtime.
///
/// # Safety
/// What is returned is used only to build one context that [`Owner`] keeps beside `footing`, hands out only under
/// a lifetime its users cannot keep, and drops before the footing. Then it holds: [`Footing`] promises the
/// libraries and the memory stay valid, unmoved and otherwise unused until the footing drops, and that the footing
/// does not outlive `'a`, the in-place binary's lifetime.
unsafe fn lend<'a, 'c, F: Footing<'a>>(
    footing: &mut F,
    binary: Binary<'a, 'c>,
) -> (&'static Libraries, &'static mut [u8], Binary<'static, 'c>) {
    let libraries = NonNull::from(footing.libraries());
    let arena = footing.arena();
    let binary = match binary {
        Binary::InPlace(persistent) => {
            let (memory, length) = (persistent.memory(), persistent.bytes().len());
            // SAFETY: the caller's promise: the binary outlives the context built from it.
            let memory: &'static [u8] = unsafe { core::slice::from_raw_parts(memory.as_ptr(), memory.len()) };
            Binary::InPlace(PersistentBinary { memory, length })
        }
        Binary::Copy(bytes) => Binary::Copy(bytes),
        Binary::File(path) => Binary::File(path),
    };
    // SAFETY: the caller's promise, as above.
    unsafe { (libraries.as_ref(), &mut *arena.as_ptr(), binary) }
}

impl<'a, F: Footing<'a>> Owner<F> {
    /// An owner with nothing loaded yet on `footing`.
    pub fn new(mut footing: F) -> Owner<F> {
        let arena_capacity = footing.arena().len();
        Owner { context: None, footing: ManuallyDrop::new(footing), arena_capacity, arena_used: 0, load_ticks: 0 }
    }

    /// Loads the one context of this owner as `request` says, under the vendor-calls lock: the binary placed in
    /// the arena (or used in place), its metadata from the request's record or the libraries' libQnnSystem, the
    /// context created and every graph prepared. A second load is refused; after a failed one the arena is
    /// empty again.
    pub fn load(&mut self, request: &LoadRequest<'a, '_>) -> Result<(), RuntimeError> {
        if self.context.is_some() {
            return Err(RuntimeError::TooMany { what: Message::TooManyContextBinaries, count: 2, limit: 1 });
        }
        // SAFETY: the context built from these is kept in `self.context`, handed out only by `context` and
        // `with_context`, and dropped (in `Drop`) before the footing.
        let (libraries, memory, binary) = unsafe { lend(&mut *self.footing, request.binary) };
        let arena = Arena::new(memory);
        let request = LoadRequest { binary, record: request.record, options: request.options };
        let began = Current::now_ticks();
        let loaded = {
            let vendor = VendorCalls::lock();
            Context::load_into(&mut self.context, &vendor, libraries, &arena, &request)
        };
        self.load_ticks = Current::now_ticks().saturating_sub(began);
        self.arena_used = arena.used();
        loaded?;
        #[cfg(not(target_arch = "hexagon"))]
        LIVE_CONTEXTS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}

impl<'a, F: Footing<'a>> Owner<F> {
    /// The libraries contexts load on.
    pub fn libraries(&self) -> &Libraries {
        self.footing.libraries()
    }
}

impl<F> Owner<F> {
    /// The loaded context, to read, for no longer than this borrow (its own lifetime reads `'static`: `Context` is
    /// invariant in it, and nothing it lends outlives the borrow of this owner).
    #[inline(always)]
    pub fn context(&self) -> Option<&Context<'static>> {
        self.context.as_ref()
    }

    /// Runs `work` on the loaded context (`None` when nothing is loaded), under a lifetime `work` cannot keep
    /// anything beyond: what it answers may borrow this owner, never the context's own lifetime. `work`'s answer
    /// is the answer, moved nowhere on the way (the embedding's frame path takes it straight).
    #[inline(always)]
    pub fn with_context<'s, R>(&'s mut self, work: impl for<'c> FnOnce(Option<&'s mut Context<'c>>) -> R) -> R {
        work(self.context.as_mut())
    }

    /// Whether a context is loaded.
    pub fn is_loaded(&self) -> bool {
        self.context.is_some()
    }

    /// The arena's size.
    pub fn arena_capacity(&self) -> usize {
        self.arena_capacity
    }

    /// Arena bytes the last load used (the high-water mark; nothing is freed before the context is).
    pub fn arena_used(&self) -> usize {
        self.arena_used
    }

    /// DSP-clock ticks the last load took: the binary placed, the context created, its graphs prepared.
    pub fn load_ticks(&self) -> u64 {
        self.load_ticks
    }
}

impl<F: Footing<'static>> Owner<F> {
    /// Runs `work` on graph `index` of the loaded context (`None` when nothing is loaded or it has no such graph), as
    /// an [`AsyncGraph`], whose frames start safely: the footing's memory is `'static` or owned, and this owner frees
    /// it only after waiting for a frame in flight, leaking it when the frame never ends (and a leaked owner never
    /// frees it at all).
    #[inline(always)]
    pub fn with_async_graph<'s, R>(
        &'s mut self,
        index: usize,
        work: impl for<'c> FnOnce(Option<AsyncGraph<'s, 'c>>) -> R,
    ) -> R {
        work(self.context.as_mut().and_then(|context| context.graph_mut(index)).map(|graph| AsyncGraph { graph }))
    }
}

/// A graph of a context whose memory no leak can free ([`Owner::with_async_graph`]): everything a [`Graph`] does,
/// and asynchronous frames started without `unsafe`.
pub struct AsyncGraph<'g, 'c> {
    graph: &'g mut Graph<'c>,
}

impl AsyncGraph<'_, '_> {
    /// [`Graph::start_frame`].
    #[inline(always)]
    pub fn start_frame(&mut self, notify: Option<FrameNotify>) -> Result<(), RuntimeError> {
        // SAFETY: the context stands on a `Footing<'static>` whose owner waits for the frame before freeing it and
        // leaks it (and the context) when the frame never ends; a leaked owner never frees it (`with_async_graph`).
        unsafe { self.graph.start_frame(notify) }
    }

    /// [`Graph::wait_frame_repeating`].
    pub fn wait_frame_repeating(&mut self, started: u64) -> Result<(Execution, u64), RuntimeError> {
        // SAFETY: as in `start_frame`.
        unsafe { self.graph.wait_frame_repeating(started) }
    }
}

impl<'c> Deref for AsyncGraph<'_, 'c> {
    type Target = Graph<'c>;

    fn deref(&self) -> &Graph<'c> {
        self.graph
    }
}

impl<'c> DerefMut for AsyncGraph<'_, 'c> {
    fn deref_mut(&mut self) -> &mut Graph<'c> {
        self.graph
    }
}

impl<F> Drop for Owner<F> {
    fn drop(&mut self) {
        if let Some(context) = self.context.as_mut() {
            // Without the vendor-calls lock: other handles of the PD load and close meanwhile.
            if !context.settle_frames(u64::from(TEARDOWN_WAIT_MS) * 1000) {
                // The backend may still write the arena: the context and the footing are leaked, never freed.
                core::mem::forget(self.context.take());
                return;
            }
            // The context frees itself under the vendor-calls lock.
            self.context = None;
            #[cfg(not(target_arch = "hexagon"))]
            LIVE_CONTEXTS.fetch_sub(1, core::sync::atomic::Ordering::Relaxed);
        }
        // SAFETY: dropped once, here, after the context that borrowed it.
        unsafe { ManuallyDrop::drop(&mut self.footing) };
    }
}
