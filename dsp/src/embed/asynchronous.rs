//! The embedding's asynchronous frames: start a frame on the selected graph, then poll for it, wait for it or be
//! called back; with two input sets ([`LoadRequest::with_input_sets`](crate::runtime::LoadRequest::with_input_sets))
//! the firmware fills one while the other executes.

use super::Embed;
use crate::platform::Message;
use crate::runtime::{Execution, Footing, FrameNotify, FrameState, RuntimeError};

impl<F: Footing<'static>> Embed<F> {
    /// Starts one execution of the selected graph on its current input set and returns at once (the backend's
    /// graphExecuteAsync; a backend without it runs the frame inside this call, saying so in one info line).
    /// Then [`Embed::poll_frame`] or [`Embed::wait_frame`] take its result. A second start before that is refused
    /// with [`RuntimeError::FrameInFlight`]. With two input sets, [`Embed::input_mut`] then answers the other set,
    /// for the next frame; with one, writing the inputs is refused until the frame is taken.
    ///
    /// Only on a footing whose memory no leak can free (`Footing<'static>`: [`Owned`](crate::runtime::Owned) PD
    /// heap, or [`Borrowed`](super::Borrowed) firmware statics): the backend writes the outputs from its own thread
    /// until the frame completes, and a dropped embedding waits for that at most
    /// [`TEARDOWN_WAIT_MS`](crate::runtime::TEARDOWN_WAIT_MS), then leaks its memory rather than free it. On a
    /// footing borrowed for less, [`Embed::start_frame_unchecked`].
    pub fn start_frame(&mut self) -> Result<(), RuntimeError> {
        self.start_frame_with(None)
    }

    /// [`Embed::start_frame`], with `notify` called when the frame completes (with QNN's code: 0 ready, 6038
    /// EARLY_TERMINATION, else the error), from the backend's thread, after the frame's state says so: it may note
    /// the completion, never call the embedding. The frame's result is still taken with [`Embed::poll_frame`] or
    /// [`Embed::wait_frame`].
    pub fn start_frame_notifying<N: Fn(u32) + Sync>(&mut self, notify: &'static N) -> Result<(), RuntimeError> {
        self.start_frame_with(Some(FrameNotify::new(notify)))
    }

    /// [`Embed::start_frame`] with a notify made by [`FrameNotify::new`] or (C's) [`FrameNotify::from_c`].
    pub fn start_frame_with(&mut self, notify: Option<FrameNotify>) -> Result<(), RuntimeError> {
        let graph = self.graph;
        self.owner.with_async_graph(graph, |graph| graph.ok_or(RuntimeError::NoSuchGraph)?.start_frame(notify))
    }
}

impl<'a, F: Footing<'a>> Embed<F> {
    /// [`Embed::start_frame_with`] on any footing.
    ///
    /// # Safety
    /// As for [`Graph::start_frame`](crate::runtime::Graph::start_frame): the footing's memory (the arena, an
    /// in-place binary, the libraries) stays valid and otherwise unused until the frame is taken or the embedding's
    /// drop has waited for it, even if the embedding is leaked or its drop gives up waiting (then that memory must
    /// never be freed or reused).
    pub unsafe fn start_frame_unchecked(&mut self, notify: Option<FrameNotify>) -> Result<(), RuntimeError> {
        // SAFETY: this function's contract.
        self.with_graph(|graph| unsafe { graph.start_frame(notify) })
    }
}

impl<F> Embed<F> {
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
    /// outputs are ready, `Ok(None)` on EARLY_TERMINATION, as [`Embed::execute_frame`] answers. Waits at most
    /// [`FRAME_WAIT_MS`](crate::runtime::FRAME_WAIT_MS), then answers [`RuntimeError::FrameTimedOut`] with the frame
    /// still in flight (wait or poll again).
    pub fn wait_frame(&mut self) -> Result<Option<Execution>, RuntimeError> {
        self.wait_frame_within(crate::runtime::FRAME_WAIT_MS)
    }

    /// [`Embed::wait_frame`], waiting at most `milliseconds`.
    pub fn wait_frame_within(&mut self, milliseconds: u32) -> Result<Option<Execution>, RuntimeError> {
        let execution = self.with_graph(|graph| graph.wait_frame_within(milliseconds))?;
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
    pub(super) fn refuse_in_flight(&self, refused: Message) -> Result<(), RuntimeError> {
        match self.graph() {
            Ok(graph) => graph.refuse_in_flight(refused),
            Err(_) => Ok(()),
        }
    }
}
