//! A context a handle loaded, kept between calls together with the arena memory it lives in.
//!
//! A `Context` borrows its backend, its system library and its arena. Kept across calls, those borrows cannot be
//! named, so this module is the one place that stores them with an erased lifetime: the context is only ever
//! handed out under a lifetime the caller cannot name or keep (`with_context`), the memory is freed only after the
//! context, and the libraries' owner (the session) promises to keep them in place until the context is gone.

use super::session::Libraries;
use crate::platform::{Current, Memory, Platform, VendorCalls};
use crate::runtime::{Arena, BinarySource, Context, ContextOptions, Metadata, RuntimeError};
use lpai_direct::metadata::Record;

/// Contexts loaded and not yet dropped, for the host build's resource report (the device skel keeps no count).
#[cfg(not(target_arch = "hexagon"))]
pub(super) static LIVE_CONTEXTS: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Why a context could not be loaded.
pub(super) enum LoadError {
    /// The PD heap could not give the arena.
    NoMemory,
    /// Neither a metadata record nor a system library to read the binary's metadata with.
    NoMetadata,
    /// The runtime refused or failed.
    Runtime(RuntimeError),
}

/// A loaded context and the arena memory it lives in.
pub(super) struct LoadedContext {
    /// `Some` until dropped; taken first in `drop`, so the context goes before the memory it borrows.
    context: Option<Context<'static>>,
    memory: Memory,
    /// Arena bytes used by the load (the high-water mark).
    arena_used: usize,
    /// Ticks the load took: the binary placed, the context created, its graphs finalized.
    load_ticks: u64,
    /// Tells this load apart from earlier ones in the same slot (set by the session).
    pub(super) serial: u32,
}

impl LoadedContext {
    /// Allocates an arena of `arena_bytes` and loads a context into it on `libraries`, under the vendor-calls lock,
    /// with the binary's metadata from `record` when there is one, else from the libraries' libQnnSystem.
    ///
    /// # Safety
    /// `libraries` must stay where it is, unchanged, until the returned context is dropped.
    pub(super) unsafe fn load(
        libraries: &Libraries,
        arena_bytes: usize,
        source: BinarySource<'_>,
        record: Option<Record<'_>>,
        options: &ContextOptions<'_>,
    ) -> Result<LoadedContext, LoadError> {
        // SAFETY: the caller keeps the libraries in place and unchanged until the context is dropped.
        let libraries: &'static Libraries = unsafe { &*(libraries as *const Libraries) };
        let metadata = match (record, &libraries.system) {
            (Some(record), _) => Metadata::Record(record),
            (None, Some(system)) => Metadata::System(system),
            (None, None) => return Err(LoadError::NoMetadata),
        };
        let mut memory = Memory::allocate(arena_bytes).ok_or(LoadError::NoMemory)?;
        // SAFETY: nothing else refers to the allocation; it is released only when `memory` drops, after the
        // context that borrows it (`Drop` below, or the error path's order here).
        let buffer: &'static mut [u8] = unsafe { memory.bytes_for() };
        let arena = Arena::new(buffer);
        let began = Current::now_ticks();
        let loaded = {
            let _vendor = VendorCalls::lock();
            Context::load_with(&libraries.backend, metadata, &arena, source, options)
        };
        let load_ticks = Current::now_ticks().saturating_sub(began);
        match loaded {
            Ok(context) => {
                #[cfg(not(target_arch = "hexagon"))]
                LIVE_CONTEXTS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
                let arena_used = arena.used();
                Ok(LoadedContext { context: Some(context), memory, arena_used, load_ticks, serial: 0 })
            }
            Err(error) => Err(LoadError::Runtime(error)),
        }
    }

    /// Runs `work` on the context, under a lifetime `work` cannot keep anything beyond.
    pub(super) fn with_context<R>(&mut self, work: impl for<'c> FnOnce(&mut Context<'c>) -> R) -> Option<R> {
        self.context.as_mut().map(work)
    }

    /// How many graphs the context holds.
    pub(super) fn graph_count(&mut self) -> usize {
        self.with_context(|context| context.graph_count()).unwrap_or(0)
    }

    /// Arena bytes the load used.
    pub(super) fn arena_used(&self) -> usize {
        self.arena_used
    }

    /// Ticks the load took.
    pub(super) fn load_ticks(&self) -> u64 {
        self.load_ticks
    }

    /// The arena's size.
    pub(super) fn arena_capacity(&self) -> usize {
        self.memory.size()
    }
}

impl Drop for LoadedContext {
    fn drop(&mut self) {
        if let Some(context) = self.context.take() {
            let _vendor = VendorCalls::lock();
            drop(context);
            #[cfg(not(target_arch = "hexagon"))]
            LIVE_CONTEXTS.fetch_sub(1, core::sync::atomic::Ordering::Relaxed);
        }
    }
}
