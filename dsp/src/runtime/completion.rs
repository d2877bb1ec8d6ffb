//! The completion record of one graph's asynchronous frame (in the arena, so its address never changes): its
//! state, QNN status and completion tick as atomics, the platform's completion signal, the caller's notify, and
//! the notify trampoline `graphExecuteAsync` is given. No heap.

use super::arena::Arena;
use super::error::RuntimeError;
use crate::platform::{Current, Platform, PlatformError};
use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicU32, Ordering};
use lpai_direct::qnn::NotifyStatus;

/// What the caller asks to be called with when a frame completes: `function(user, qnn_code)`, where `qnn_code`
/// is 0 (the outputs are ready), QNN_GRAPH_ERROR_EARLY_TERMINATION (6038: feed the next frame) or the QNN error
/// the execution ended with. It runs on the backend's notify thread (or inside `start_frame`, when the backend
/// completed the frame within the call), after the outputs are written and before `poll_frame` answers: it may
/// note the completion (set a flag, post a semaphore), never call the graph or its embedding.
#[derive(Clone, Copy, Debug)]
pub struct FrameNotify {
    /// The function.
    pub function: unsafe extern "C" fn(user: *mut c_void, qnn_code: u32),
    /// Its first argument.
    pub user: *mut c_void,
}

/// No frame started (or its completion was taken).
const IDLE: u32 = 0;
/// Started, not yet notified.
const RUNNING: u32 = 1;
/// Notified: the status and tick are stored; the signal is set (or being set).
const NOTIFIED: u32 = 2;

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

/// One graph's completion record. Shared with the backend's notify thread through the pointer
/// [`Completion::notify_param`] gives, so every field it writes is an atomic or written before the frame starts.
pub(crate) struct Completion {
    state: AtomicU32,
    code: AtomicU32,
    ticks_low: AtomicU32,
    ticks_high: AtomicU32,
    /// When the frame was started (the starting thread's alone, kept here to keep the graph small).
    started_low: AtomicU32,
    started_high: AtomicU32,
    /// Whether the backend executes asynchronously: [`UNKNOWN`], [`ASYNCHRONOUS`] or [`SYNCHRONOUS`].
    mode: AtomicU32,
    /// Written by the starting thread before `graphExecuteAsync`, read by the notify thread after.
    notify: UnsafeCell<Option<FrameNotify>>,
    signal: <Current as Platform>::Signal,
}

// SAFETY: the notify thread only touches the atomics, the signal (thread-safe by the platform's contract) and
// `notify`, which the starting thread writes before handing the frame to the backend and not again until the
// completion is taken (state IDLE), so the two never access it at once.
unsafe impl Sync for Completion {}

impl Completion {
    /// Places an idle record in the arena, its signal made; it lives until [`Completion::retire`].
    pub(crate) fn place(arena: &Arena<'_>) -> Result<NonNull<Completion>, RuntimeError> {
        let bytes = arena.bytes(size_of::<Completion>(), align_of::<Completion>())?;
        let placed = NonNull::from(bytes).cast::<Completion>();
        let record = placed.as_ptr();
        // SAFETY: `bytes` is fresh arena memory of the record's size and alignment, ours for 'a; the fields are
        // written in place (the signal must not move once made) before the first reference.
        unsafe {
            ptr::addr_of_mut!((*record).state).write(AtomicU32::new(IDLE));
            ptr::addr_of_mut!((*record).code).write(AtomicU32::new(0));
            ptr::addr_of_mut!((*record).ticks_low).write(AtomicU32::new(0));
            ptr::addr_of_mut!((*record).ticks_high).write(AtomicU32::new(0));
            ptr::addr_of_mut!((*record).started_low).write(AtomicU32::new(0));
            ptr::addr_of_mut!((*record).started_high).write(AtomicU32::new(0));
            ptr::addr_of_mut!((*record).mode).write(AtomicU32::new(UNKNOWN));
            ptr::addr_of_mut!((*record).notify).write(UnsafeCell::new(None));
            Current::signal_init(ptr::addr_of_mut!((*record).signal));
        }
        Ok(placed)
    }

    /// Whether a frame is started and its completion not yet taken.
    #[inline(always)]
    pub(crate) fn in_flight(&self) -> bool {
        self.state.load(Ordering::Acquire) != IDLE
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

    /// Records the end of the frame: the code and tick, then the caller's notify, then the state, then the signal
    /// (the last touch of this record by the notifying thread: whoever frees it first takes the signal).
    pub(crate) fn finish(&self, code: u32) {
        let ticks = Current::now_ticks();
        self.code.store(code, Ordering::Relaxed);
        self.ticks_low.store(ticks as u32, Ordering::Relaxed);
        self.ticks_high.store((ticks >> 32) as u32, Ordering::Relaxed);
        // SAFETY: written before the frame started and not again until it is taken (see `Sync`).
        if let Some(notify) = unsafe { *self.notify.get() } {
            // SAFETY: the caller of `start_frame` gave this function and its argument for this call.
            unsafe { (notify.function)(notify.user, code) };
        }
        self.state.store(NOTIFIED, Ordering::Release);
        Current::signal_set(&self.signal);
    }

    /// The notify function `graphExecuteAsync` is given.
    ///
    /// # Safety
    /// `param` is the [`Completion::notify_param`] of a live record whose frame is running.
    pub(crate) unsafe extern "C" fn notified(param: *mut c_void, status: NotifyStatus) {
        let Some(record) = NonNull::new(param.cast::<Completion>()) else { return };
        // SAFETY: the caller's promise: a live record, only shared (`Sync`).
        let record = unsafe { record.as_ref() };
        record.finish(lpai_direct::qnn::error::code(status.error));
    }

    /// The completion when the frame has completed (taking it: the record is idle again), `None` while it runs.
    pub(crate) fn poll(&self) -> Result<Option<Completed>, PlatformError> {
        if self.state.load(Ordering::Acquire) != NOTIFIED {
            return Ok(None);
        }
        self.take().map(Some)
    }

    /// Blocks (never spins) until the frame completes, and takes its completion.
    pub(crate) fn wait(&self) -> Result<Completed, PlatformError> {
        self.take()
    }

    /// Waits for the signal (set by `finish` after the state, so the state is NOTIFIED once it returns) and
    /// answers the stored completion.
    fn take(&self) -> Result<Completed, PlatformError> {
        Current::signal_wait(&self.signal)?;
        let completed = Completed { code: self.code.load(Ordering::Relaxed), ticks: self.last_tick() };
        self.state.store(IDLE, Ordering::Release);
        Ok(completed)
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

    /// Before the record's memory goes: waits for a frame still in flight (the backend writes its outputs and
    /// this record until it notifies), then ends the signal.
    ///
    /// # Safety
    /// `record` came from [`Completion::place`], is retired once and not used afterwards.
    pub(crate) unsafe fn retire(record: NonNull<Completion>) {
        // SAFETY: the caller's promise: a live record.
        let shared = unsafe { record.as_ref() };
        if shared.in_flight() {
            let _ = shared.wait();
        }
        // SAFETY: nobody waits or notifies any more (the frame, if any, was just taken); the pointer is the one
        // `place` made the signal through.
        unsafe { Current::signal_destroy(ptr::addr_of_mut!((*record.as_ptr()).signal)) };
    }
}
