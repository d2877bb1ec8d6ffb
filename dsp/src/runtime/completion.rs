//! The completion record of one graph's asynchronous frame, and what a caller asks to be called with when it ends.
//!
//! Why asynchronous frames cannot corrupt memory, however the caller leaks, forgets or races:
//! - **The memory outlives the frame.** Until the backend notifies, it writes the outputs and this record (both in
//!   the arena) from its own thread. A drop that never runs cannot wait for that, so [`Graph::start_frame`] is
//!   `unsafe` and names the obligation; the safe ways to start a frame exist only where no leak can free the memory:
//!   footings whose memory is `'static` (firmware's statics) or owned PD heap that a stuck teardown leaks
//!   ([`Owner::with_async_graph`], [`Embed::start_frame`]). A teardown waits at most [`TEARDOWN_WAIT_MS`], without
//!   the PD-wide vendor-calls lock; past it the context and its memory are leaked, never freed, and one line names
//!   the graph.
//! - **State before callback, and the record untouched after it.** The notifying thread stores the code and tick,
//!   then the state (NOTIFIED, release): that store is its last touch of the record, so a waiter that sees it may
//!   free the arena at once. Only then does it run the caller's notify (so a caller woken by its callback that polls
//!   once sees the frame done) and set the signal.
//! - **The signal is not in the record.** A waiter borrows a slot of the PD's signal pool
//!   ([`crate::platform::signals`]), which outlives every arena, and names it in the state word; the notifier learns
//!   it from the same swap that publishes the completion, so no wake-up is lost. A set that arrives after the slot
//!   changed hands only wakes its next holder early, who looks at its own state again.
//! - **Every wait has an end.** `Completion::wait` is bounded; a timeout or a failed platform wait leaves the frame
//!   in flight, to poll or wait for again, never stuck.
//! - **The notify is typed.** Safe code gives a `&'static` callable (`Fn(u32) + Sync`); a C function and its
//!   argument come only through the `unsafe` [`FrameNotify::from_c`].
//!
//! [`Graph::start_frame`]: super::Graph::start_frame
//! [`Owner::with_async_graph`]: super::Owner::with_async_graph
//! [`Embed::start_frame`]: crate::embed::Embed::start_frame

use super::arena::Arena;
use super::error::RuntimeError;
use crate::platform::signals::{self, SignalSlot};
use crate::platform::{ticks_to_micros, Current, Platform, PlatformError, Woken};
use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicU32, Ordering};
use lpai_direct::qnn::NotifyStatus;

/// How long [`Graph::wait_frame`](super::Graph::wait_frame) waits for a frame before answering
/// [`RuntimeError::FrameTimedOut`] (the frame stays in flight: wait or poll again).
pub const FRAME_WAIT_MS: u32 = 10_000;

/// How long dropping a context (an embedding, a skel handle's close, the audio module's end) waits for a frame still
/// in flight before it leaks the context and its memory instead of freeing them.
pub const TEARDOWN_WAIT_MS: u32 = 1_000;

/// What the caller asks to be called with when a frame completes: QNN's code, 0 (the outputs are ready),
/// QNN_GRAPH_ERROR_EARLY_TERMINATION (6038: feed the next frame) or the QNN error the execution ended with. It runs
/// on the backend's notify thread (or inside `start_frame`, when the backend completed the frame within the call),
/// after the outputs are written and after the frame's state says so (a poll made once it has run sees the frame
/// done): it may note the completion (set a flag, post a semaphore), never call the graph or its embedding.
///
/// Made only from a typed `&'static` callable ([`FrameNotify::new`]) or, for C, through the `unsafe`
/// [`FrameNotify::from_c`]; kept as the function and argument the backend's thread calls (two words, as small as a
/// C callback).
#[derive(Clone, Copy, Debug)]
pub struct FrameNotify {
    function: unsafe extern "C" fn(user: *mut c_void, qnn_code: u32),
    user: *mut c_void,
}

/// Calls the `&'static N` behind `user` with the code.
///
/// # Safety
/// `user` is a `&'static N` ([`FrameNotify::new`] makes the pair).
unsafe extern "C" fn call_typed<N: Fn(u32) + Sync>(user: *mut c_void, qnn_code: u32) {
    // SAFETY: the caller's promise: a `&'static N`, shared (`Sync`) with this thread.
    let notify = unsafe { &*user.cast_const().cast::<N>() };
    notify(qnn_code);
}

impl FrameNotify {
    /// Calls `notify` with the code, from whichever thread completes the frame (a `&'static dyn Fn(u32) + Sync`
    /// is given as `&DYN_REFERENCE`).
    pub fn new<N: Fn(u32) + Sync>(notify: &'static N) -> FrameNotify {
        FrameNotify { function: call_typed::<N>, user: ptr::from_ref(notify).cast_mut().cast() }
    }

    /// Calls `function(user, qnn_code)` (the embedding's C API).
    ///
    /// # Safety
    /// `function` may be called with `user` from another thread, once per frame started with this notify, until
    /// that frame is taken or its context is freed.
    pub unsafe fn from_c(function: unsafe extern "C" fn(user: *mut c_void, qnn_code: u32), user: *mut c_void) -> Self {
        FrameNotify { function, user }
    }

    fn call(self, code: u32) {
        // SAFETY: `new` and `from_c` made the pair callable from any thread for the frame it was given for.
        unsafe { (self.function)(self.user, code) }
    }
}

/// No frame started (or its completion was taken).
const IDLE: u32 = 0;
/// Started, not yet notified.
const RUNNING: u32 = 1;
/// Notified: the code and tick are stored.
const NOTIFIED: u32 = 2;
/// The bits of the state word that hold the state; above them, the signal slot a waiter sleeps on, plus one (0:
/// no waiter), so that the notifier learns it from the same swap that publishes NOTIFIED.
const STATE_BITS: u32 = 0xFF;
const SLOT_SHIFT: u32 = 8;

/// The state word of a running frame whose waiter sleeps on `slot`.
fn waiting_on(slot: SignalSlot) -> u32 {
    RUNNING | (slot.index() + 1) << SLOT_SHIFT
}

/// The slot a state word names, if a waiter put one there.
fn slot_in(word: u32) -> Option<SignalSlot> {
    (word >> SLOT_SHIFT).checked_sub(1).and_then(SignalSlot::from_index)
}

/// Not known before the first frame.
const UNKNOWN: u32 = 0;
/// The backend executes asynchronously.
const ASYNCHRONOUS: u32 = 1;
/// The backend has no asynchronous execution: frames run inside `start_frame`.
const SYNCHRONOUS: u32 = 2;

/// What a completed frame ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Completed {
    /// QNN's code (`error & 0xFFFF`).
    pub code: u32,
    /// The platform tick at the notification.
    pub ticks: u64,
}

/// Why a wait for a frame ended without it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotCompleted {
    /// The bound passed; the frame is still in flight.
    TimedOut,
    /// The platform's wait failed; the frame is still in flight.
    Platform(PlatformError),
    /// Every signal of the PD's pool has a waiter already; the frame is still in flight.
    NoSignal,
}

/// One graph's completion record, in the arena. Shared with the backend's notify thread through the pointer
/// [`Completion::notify_param`] gives, so every field that thread touches is an atomic or written before the frame
/// starts.
pub(crate) struct Completion {
    /// The state ([`IDLE`], [`RUNNING`], [`NOTIFIED`]) and the slot a waiter sleeps on.
    state: AtomicU32,
    code: AtomicU32,
    ticks_low: AtomicU32,
    ticks_high: AtomicU32,
    /// When the frame was started (the starting thread's alone, kept here to keep the graph small).
    started_low: AtomicU32,
    started_high: AtomicU32,
    /// Whether the backend executes asynchronously: [`UNKNOWN`], [`ASYNCHRONOUS`] or [`SYNCHRONOUS`].
    mode: AtomicU32,
    /// Written by the starting thread before `graphExecuteAsync`, read by the notify thread before it publishes
    /// the state.
    notify: UnsafeCell<Option<FrameNotify>>,
}

// SAFETY: the notify thread only touches the atomics and reads `notify`, which the starting thread writes before it
// hands the frame to the backend and not again until the completion is taken (state IDLE), so the two never access
// it at once.
unsafe impl Sync for Completion {}

impl Completion {
    /// Places an idle record in the arena; it lives as long as the arena.
    pub(crate) fn place(arena: &Arena<'_>) -> Result<NonNull<Completion>, RuntimeError> {
        let idle = Completion {
            state: AtomicU32::new(IDLE),
            code: AtomicU32::new(0),
            ticks_low: AtomicU32::new(0),
            ticks_high: AtomicU32::new(0),
            started_low: AtomicU32::new(0),
            started_high: AtomicU32::new(0),
            mode: AtomicU32::new(UNKNOWN),
            notify: UnsafeCell::new(None),
        };
        let bytes = arena.bytes(size_of::<Completion>(), align_of::<Completion>())?;
        let placed = NonNull::from(bytes).cast::<Completion>();
        // SAFETY: fresh arena memory of the record's size and alignment, ours for the arena's lifetime.
        unsafe { placed.as_ptr().write(idle) };
        Ok(placed)
    }

    /// Whether a frame is started and its completion not yet taken.
    #[inline(always)]
    pub(crate) fn in_flight(&self) -> bool {
        self.state.load(Ordering::Acquire) & STATE_BITS != IDLE
    }

    /// Marks a frame started, to be notified through [`Completion::notified`] or [`Completion::finish`].
    pub(crate) fn begin(&self, notify: Option<FrameNotify>) {
        // SAFETY: idle (the caller checked `in_flight`): no notify thread reads `notify` now.
        unsafe { *self.notify.get() = notify };
        self.state.store(RUNNING, Ordering::Release);
    }

    /// Back to idle after a start the backend refused (a failed call never notifies).
    pub(crate) fn abandon(&self) {
        self.state.store(IDLE, Ordering::Release);
    }

    /// The `notifyParam` for `graphExecuteAsync`.
    pub(crate) fn notify_param(&self) -> *mut c_void {
        ptr::from_ref(self).cast_mut().cast()
    }

    /// Records the end of the frame: the code and tick, then the state (one swap, the last touch of the record,
    /// which also answers the slot a waiter sleeps on), then the caller's notify, then that waiter's signal.
    ///
    /// # Safety
    /// `record` is a live record whose frame is running; it may be freed as soon as its state says NOTIFIED.
    pub(crate) unsafe fn finish(record: *const Completion, code: u32) {
        let ticks = Current::now_ticks();
        // SAFETY: the caller's promise: live until the state swap, the last access made through it.
        let (notify, was) = unsafe {
            let record = &*record;
            record.code.store(code, Ordering::Relaxed);
            record.ticks_low.store(ticks as u32, Ordering::Relaxed);
            record.ticks_high.store((ticks >> 32) as u32, Ordering::Relaxed);
            // Written before the frame started and not again until it is taken (see `Sync`).
            let notify = *record.notify.get();
            (notify, record.state.swap(NOTIFIED, Ordering::AcqRel))
        };
        if let Some(notify) = notify {
            notify.call(code);
        }
        if let Some(slot) = slot_in(was) {
            signals::set(slot);
        }
    }

    /// The notify function `graphExecuteAsync` is given.
    ///
    /// # Safety
    /// `param` is the [`Completion::notify_param`] of a live record whose frame is running.
    pub(crate) unsafe extern "C" fn notified(param: *mut c_void, status: NotifyStatus) {
        if param.is_null() {
            return;
        }
        // SAFETY: the caller's promise, as `finish` asks.
        unsafe { Completion::finish(param.cast_const().cast(), lpai_direct::qnn::error::code(status.error)) };
    }

    /// The completion when the frame has completed (taking it: the record is idle again), `None` while it runs.
    pub(crate) fn poll(&self) -> Option<Completed> {
        (self.state.load(Ordering::Acquire) & STATE_BITS == NOTIFIED).then(|| self.take())
    }

    /// Blocks (never spins) until the frame completes, at most `micros`, and takes its completion. The waiter
    /// borrows a signal of the PD's pool for the wait and names it in the state word, from which the notifier
    /// learns it in the same swap that publishes the completion: no wake-up is lost, and none reaches freed memory.
    pub(crate) fn wait(&self, micros: u64) -> Result<Completed, NotCompleted> {
        if let Some(completed) = self.poll() {
            return Ok(completed);
        }
        let slot = signals::claim().ok_or(NotCompleted::NoSignal)?;
        let waiting = waiting_on(slot);
        if self.state.compare_exchange(RUNNING, waiting, Ordering::AcqRel, Ordering::Acquire).is_err() {
            // Notified meanwhile (nothing else changes a running frame's state).
            signals::release(slot);
            return self.poll().ok_or(NotCompleted::Platform(PlatformError::Unsupported));
        }
        let deadline = Current::now_ticks().saturating_add(micros_to_ticks(micros));
        let ended = loop {
            let left = ticks_to_micros(deadline.saturating_sub(Current::now_ticks()));
            match signals::wait(slot, left) {
                // The state says whose set it was: a late set meant for the slot's last holder only loops once more.
                Ok(Woken::Set) if self.state.load(Ordering::Acquire) & STATE_BITS != NOTIFIED => {}
                Ok(Woken::Set) => break None,
                Ok(Woken::TimedOut) => break Some(NotCompleted::TimedOut),
                Err(error) => break Some(NotCompleted::Platform(error)),
            }
        };
        // Not waiting any more: a frame still running gets its plain state back (its notifier then sets nothing).
        let still_running = ended.is_some()
            && self.state.compare_exchange(waiting, RUNNING, Ordering::AcqRel, Ordering::Acquire).is_ok();
        signals::release(slot);
        match (still_running, ended) {
            (true, Some(why)) => Err(why),
            _ => self.poll().ok_or(NotCompleted::Platform(PlatformError::Unsupported)),
        }
    }

    /// Takes the stored completion: the record is idle again.
    fn take(&self) -> Completed {
        let completed = Completed { code: self.code.load(Ordering::Relaxed), ticks: self.last_tick() };
        self.state.store(IDLE, Ordering::Release);
        completed
    }

    /// Notes the tick the frame starts at.
    pub(crate) fn mark_started(&self, ticks: u64) {
        self.started_low.store(ticks as u32, Ordering::Relaxed);
        self.started_high.store((ticks >> 32) as u32, Ordering::Relaxed);
    }

    /// The tick the last frame started at.
    pub(crate) fn started(&self) -> u64 {
        let low = u64::from(self.started_low.load(Ordering::Relaxed));
        u64::from(self.started_high.load(Ordering::Relaxed)) << 32 | low
    }

    /// Whether the backend executes asynchronously (`None` before the first frame asked).
    pub(crate) fn executes_async(&self) -> Option<bool> {
        match self.mode.load(Ordering::Relaxed) {
            ASYNCHRONOUS => Some(true),
            SYNCHRONOUS => Some(false),
            _ => None,
        }
    }

    /// Notes whether the backend executes asynchronously.
    pub(crate) fn set_executes_async(&self, asynchronous: bool) {
        self.mode.store(if asynchronous { ASYNCHRONOUS } else { SYNCHRONOUS }, Ordering::Relaxed);
    }

    /// The platform tick of the last completion taken (0 before any).
    pub(crate) fn last_tick(&self) -> u64 {
        let low = u64::from(self.ticks_low.load(Ordering::Relaxed));
        u64::from(self.ticks_high.load(Ordering::Relaxed)) << 32 | low
    }
}

/// `micros` as platform ticks (saturating), without a 128-bit division.
pub(crate) fn micros_to_ticks(micros: u64) -> u64 {
    const PER_SECOND: u64 = Current::TICKS_PER_SECOND;
    let (seconds, rest) = (micros / 1_000_000, micros % 1_000_000);
    seconds.saturating_mul(PER_SECOND).saturating_add(rest.saturating_mul(PER_SECOND) / 1_000_000)
}

/// The record with a notifier on another thread, as a backend's notify thread uses it (Miri runs these: a touch of
/// the record after the waiter freed it is reported there).
#[cfg(test)]
mod tests {
    use super::*;
    use std::boxed::Box;
    use std::sync::atomic::AtomicPtr;

    /// Rounds per test: each is one interleaving of the notifier and the waiter.
    const ROUNDS: usize = if cfg!(miri) { 30 } else { 2_000 };

    /// A record's address, sent to the notifier thread.
    struct Sent(*const Completion);
    // SAFETY: the record is `Sync`; the pointer is only used while the waiter keeps the record alive.
    unsafe impl Send for Sent {}

    /// Heap memory for one arena, freed by [`free`].
    struct Memory(*mut [u8]);

    /// Frees memory from [`begun`].
    fn free(memory: Memory) {
        // SAFETY: made by `Box::into_raw` in `begun`, freed once.
        drop(unsafe { Box::from_raw(memory.0) });
    }

    /// An idle record placed in a fresh heap arena, holding a signal slot, with a frame begun (`notify`).
    fn begun(notify: Option<FrameNotify>) -> (Memory, *const Completion) {
        let memory = Box::into_raw(std::vec![0u8; 256].into_boxed_slice());
        // SAFETY: fresh memory, used only through this arena until `free`.
        let arena = Arena::new(unsafe { &mut *memory });
        let record = Completion::place(&arena).unwrap_or_else(|error| panic!("{error:?}"));
        // SAFETY: just placed, in `memory`, which the caller keeps until it is done with the record.
        unsafe { record.as_ref() }.begin(notify);
        (Memory(memory), record.as_ptr().cast_const())
    }

    /// Finishes `record` with code 0 on a new thread, as a backend's notify thread does.
    fn notify_from_another_thread(record: *const Completion) -> std::thread::JoinHandle<()> {
        let sent = Sent(record);
        std::thread::spawn(move || {
            let sent = sent;
            // SAFETY: a begun record, alive until its state says NOTIFIED (the waiter frees it only then).
            unsafe { Completion::finish(sent.0, 0) };
        })
    }

    #[test]
    fn a_waiter_may_free_the_record_the_moment_its_wait_ends() {
        for _ in 0..ROUNDS {
            let (memory, record) = begun(None);
            let notifier = notify_from_another_thread(record);
            // SAFETY: alive in `memory`; the slot goes back before the memory does.
            let completed = unsafe { (*record).wait(10_000_000) };
            free(memory);
            assert_eq!(completed.map(|done| done.code), Ok(0));
            notifier.join().unwrap_or_else(|_| panic!("the notifier panicked"));
        }
    }

    #[test]
    fn a_poller_may_free_the_record_the_moment_a_poll_takes_it() {
        for _ in 0..ROUNDS {
            let (memory, record) = begun(None);
            let notifier = notify_from_another_thread(record);
            // SAFETY: alive in `memory` until dropped below.
            while unsafe { (*record).poll() }.is_none() {
                std::thread::yield_now();
            }
            free(memory);
            notifier.join().unwrap_or_else(|_| panic!("the notifier panicked"));
        }
    }

    /// The record the callback looks at, and what it saw (1: done, 2: still running).
    static WATCHED: AtomicPtr<Completion> = AtomicPtr::new(ptr::null_mut());
    static SEEN: AtomicU32 = AtomicU32::new(0);

    fn look(_code: u32) {
        let record = WATCHED.load(Ordering::Acquire);
        // SAFETY: the test keeps the record alive until the notifier thread ended.
        let done = unsafe { (*record).state.load(Ordering::Acquire) } == NOTIFIED;
        SEEN.store(if done { 1 } else { 2 }, Ordering::Release);
    }

    static LOOK: fn(u32) = look;

    #[test]
    fn the_frame_reads_done_by_the_time_its_callback_runs() {
        for _ in 0..ROUNDS / 10 {
            SEEN.store(0, Ordering::Release);
            let (memory, record) = begun(Some(FrameNotify::new(&LOOK)));
            WATCHED.store(record.cast_mut(), Ordering::Release);
            let notifier = notify_from_another_thread(record);
            notifier.join().unwrap_or_else(|_| panic!("the notifier panicked"));
            assert_eq!(SEEN.load(Ordering::Acquire), 1, "the callback saw the frame still running");
            // SAFETY: alive in `memory`.
            assert!(unsafe { (*record).poll() }.is_some());
            free(memory);
        }
    }

    #[test]
    fn a_wait_nobody_ends_times_out_and_leaves_the_frame_in_flight() {
        let (memory, record) = begun(None);
        // SAFETY: alive in `memory` until dropped below.
        let record = unsafe { &*record };
        assert_eq!(record.wait(2_000).err(), Some(NotCompleted::TimedOut));
        assert!(record.in_flight());
        // SAFETY: the record is live and its frame running.
        unsafe { Completion::finish(record, 0) };
        assert!(record.poll().is_some() && !record.in_flight());
        free(memory);
    }

    #[test]
    fn microseconds_become_ticks_without_overflow() {
        assert_eq!(micros_to_ticks(1_000_000), Current::TICKS_PER_SECOND);
        assert_eq!(micros_to_ticks(u64::MAX), u64::MAX);
        assert_eq!(micros_to_ticks(0), 0);
    }
}
