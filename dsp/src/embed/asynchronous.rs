//! The embedding's asynchronous frames: start a frame on the selected graph, then poll for it, wait for it or be
//! called back; with two input sets ([`LoadRequest::with_input_sets`](crate::runtime::LoadRequest::with_input_sets))
//! the firmware fills one while the other executes.

use super::Embed;
use crate::runtime::{Execution, FrameNotify, FrameState, RuntimeError};
use core::ffi::c_void;

impl<F> Embed<F> {
    /// Starts one execution of the selected graph on its current input set and returns at once (the backend's
    /// graphExecuteAsync; a backend without it runs the frame inside this call, saying so in one info line).
    /// Then [`Embed::poll_frame`] or [`Embed::wait_frame`] take its result. A second start before that is refused
    /// with [`RuntimeError::FrameInFlight`]. With two input sets, [`Embed::input_mut`] then answers the other set,
    /// for the next frame; with one, writing the inputs is refused until the frame is taken.
    pub fn start_frame(&mut self) -> Result<(), RuntimeError> {
        self.with_graph(|graph| graph.start_frame(None))
    }

    /// [`Embed::start_frame`], with `notify` called when the frame completes (with QNN's code: 0 ready, 6038
    /// EARLY_TERMINATION, else the error), from the backend's thread: it may note the completion, never call the
    /// embedding. The frame's result is still taken with [`Embed::poll_frame`] or [`Embed::wait_frame`].
    pub fn start_frame_notifying<N: Fn(u32) + Sync>(&mut self, notify: &'static N) -> Result<(), RuntimeError> {
        /// Calls the caller's `N` behind the pointer.
        ///
        /// # Safety
        /// `user` is the `&'static N` given below.
        unsafe extern "C" fn call<N: Fn(u32) + Sync>(user: *mut c_void, qnn_code: u32) {
            // SAFETY: the caller's promise: a `&'static N`, shared (`Sync`) with this thread.
            let notify = unsafe { &*user.cast_const().cast::<N>() };
            notify(qnn_code);
        }
        let notify = FrameNotify { function: call::<N>, user: core::ptr::from_ref(notify).cast_mut().cast() };
        self.with_graph(|graph| graph.start_frame(Some(notify)))
    }

    /// [`Embed::start_frame`] with a C notify (the C API's).
    ///
    /// # Safety
    /// `notify.function` may be called with `notify.user` from another thread until the frame is taken.
    pub unsafe fn start_frame_with(&mut self, notify: FrameNotify) -> Result<(), RuntimeError> {
        self.with_graph(|graph| graph.start_frame(Some(notify)))
    }

    /// What the started frame has come to, without blocking: [`FrameState::Pending`], [`FrameState::Ready`] (the
    /// outputs hold its result) or [`FrameState::NeedsNextFrame`] (EARLY_TERMINATION), as
    /// [`Embed::execute_frame`] answers; a completed frame is taken. [`RuntimeError::NoFrameStarted`] with none.
    pub fn poll_frame(&mut self) -> Result<FrameState, RuntimeError> {
        let state = self.with_graph(|graph| graph.poll_frame())?;
        if let FrameState::Ready(execution) = state {
            self.last = Some(execution);
        }
        Ok(state)
    }

    /// Blocks (never spins) until the started frame completes and takes it: `Ok(Some(execution))` when the
    /// outputs are ready, `Ok(None)` on EARLY_TERMINATION, as [`Embed::execute_frame`] answers.
    pub fn wait_frame(&mut self) -> Result<Option<Execution>, RuntimeError> {
        let execution = self.with_graph(|graph| graph.wait_frame())?;
        if execution.is_some() {
            self.last = execution;
        }
        Ok(execution)
    }

    /// Whether a started frame has not been taken yet.
    pub fn frame_in_flight(&self) -> bool {
        self.graph().is_ok_and(|graph| graph.frame_in_flight())
    }

    /// Whether the backend executes the selected graph asynchronously (`None` before its first frame).
    pub fn executes_async(&self) -> Option<bool> {
        self.graph().ok().and_then(|graph| graph.executes_async())
    }

    /// [`RuntimeError::FrameInFlight`] naming `refused` while the selected graph's frame executes.
    pub(super) fn refuse_in_flight(&self, refused: &'static str) -> Result<(), RuntimeError> {
        match self.graph() {
            Ok(graph) => graph.refuse_in_flight(refused),
            Err(_) => Ok(()),
        }
    }
}
