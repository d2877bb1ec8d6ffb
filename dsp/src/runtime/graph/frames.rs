//! A graph's asynchronous frames: `graphExecuteAsync` with the completion record's notify trampoline, polling
//! or blocking (bounded) for the completion, two input sets, and the synchronous fallback for backends without it.
//! Why they are sound is said once, in [`crate::runtime::completion`].

use super::{Execution, Graph, MAX_EXECUTE_ATTEMPTS};
use crate::log;
use crate::platform::signals::SIGNAL_SLOTS;
use crate::platform::{Current, Level, Message, Platform};
use crate::runtime::completion::{Completed, Completion, FrameNotify, NotCompleted, FRAME_WAIT_MS};
use crate::runtime::error::{name_of, RuntimeError};
use core::ptr;
use lpai_direct::qnn::error::{COMMON_ERROR_NOT_SUPPORTED, GRAPH_ERROR_EARLY_TERMINATION};

/// What a started frame has come to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameState {
    /// Still executing.
    Pending,
    /// The outputs are ready; the execution's DSP-clock time from start to completion.
    Ready(Execution),
    /// The backend answered EARLY_TERMINATION (LPAI: feed the next frame and start again), as
    /// [`Graph::execute_frame`] answers `Ok(None)`.
    NeedsNextFrame,
}

impl<'a> Graph<'a> {
    #[inline(always)]
    fn completion(&self) -> &Completion {
        // SAFETY: placed in the arena for this graph in `prepare`, live until the graph drops; only shared.
        unsafe { self.completion.as_ref() }
    }

    /// Whether a frame started with [`Graph::start_frame`] has not been taken by [`Graph::poll_frame`] or
    /// [`Graph::wait_frame`] yet.
    #[inline(always)]
    pub fn frame_in_flight(&self) -> bool {
        self.completion().in_flight()
    }

    /// Whether the backend executes this graph asynchronously: `None` before the first [`Graph::start_frame`],
    /// `Some(false)` when it has no graphExecuteAsync or answered that it does not support it (frames then run
    /// synchronously inside `start_frame`).
    pub fn executes_async(&self) -> Option<bool> {
        self.completion().executes_async()
    }

    /// How many input sets the graph has (1 or 2).
    pub fn input_sets(&self) -> usize {
        if self.other_inputs.is_some() {
            2
        } else {
            1
        }
    }

    /// [`RuntimeError::FrameInFlight`] naming `refused` while a frame executes. Inlined: every synchronous frame
    /// and tensor access asks, and the answer is one atomic load; the error is made out of line.
    #[inline(always)]
    pub(crate) fn refuse_in_flight(&self, refused: Message) -> Result<(), RuntimeError> {
        if self.frame_in_flight() {
            return Err(self.in_flight(refused));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn in_flight(&self, refused: Message) -> RuntimeError {
        RuntimeError::FrameInFlight { graph: name_of(self.name()), refused }
    }

    /// Whether the input set the caller fills is free to write: always with two sets (the frame in flight reads
    /// the other), with one only while no frame executes.
    pub(crate) fn refuse_running_inputs(&self) -> Result<(), RuntimeError> {
        if self.other_inputs.is_none() {
            return self.refuse_in_flight(Message::RefusedWritingInputSet);
        }
        Ok(())
    }

    /// Starts one execution on the current input set with graphExecuteAsync, returning at once; `notify` (if
    /// any) is called when it completes ([`FrameNotify`] says from where and what it may do). With two input
    /// sets the next frame's inputs then go to the other set. A backend without graphExecuteAsync, or one that
    /// answers QNN_COMMON_ERROR_NOT_SUPPORTED, runs the frame synchronously here instead (one info line says
    /// so, at the first frame). A second start before the completion is taken is refused
    /// ([`RuntimeError::FrameInFlight`]); a start the backend refuses never notifies. Allocates nothing.
    ///
    /// The safe ways in are [`super::super::Owner::with_async_graph`] and
    /// [`Embed::start_frame`](crate::embed::Embed::start_frame), on memory no leak can free.
    ///
    /// # Safety
    /// Until the frame is taken ([`Graph::poll_frame`], [`Graph::wait_frame`]) or its context's drop has waited for
    /// it, the backend writes the outputs and the completion record from its own thread: the memory the context
    /// stands on (its arena, an in-place binary, its libraries) must stay valid, unmoved and otherwise unused until
    /// then, *even if the context is leaked* (`mem::forget`, a cycle) or its drop gives up waiting after
    /// [`TEARDOWN_WAIT_MS`](super::super::completion::TEARDOWN_WAIT_MS) (it then leaks the context, and the caller
    /// must leak the memory too: never free or reuse it).
    pub unsafe fn start_frame(&mut self, notify: Option<FrameNotify>) -> Result<(), RuntimeError> {
        self.refuse_in_flight(Message::RefusedSecondStartFrame)?;
        let completion = self.completion;
        // SAFETY: as in `completion()`; a copy of the pointer so the borrow does not hold `self`.
        let record = unsafe { completion.as_ref() };
        record.mark_started(Current::now_ticks());
        match self.table.graph_execute_async.filter(|_| record.executes_async() != Some(false)) {
            Some(execute_async) => {
                record.begin(notify);
                // SAFETY: the tensor arrays and their client buffers live in the arena, and the one the frame reads
                // is not handed out for writing until the frame is taken; the arena and the record outlive the frame
                // (this function's contract).
                let status = unsafe {
                    execute_async(
                        self.handle,
                        self.inputs.as_ptr(),
                        self.inputs.len() as u32,
                        self.outputs.as_mut_ptr(),
                        self.outputs.len() as u32,
                        self.profile,
                        ptr::null_mut(),
                        Some(Completion::notified),
                        record.notify_param(),
                    )
                };
                match lpai_direct::qnn::error::code(status) {
                    0 => record.set_executes_async(true),
                    // Answered by the call itself (a failed call never notifies): the frame ended here.
                    // SAFETY: the live record of the frame just begun.
                    GRAPH_ERROR_EARLY_TERMINATION => unsafe {
                        Completion::finish(record, GRAPH_ERROR_EARLY_TERMINATION)
                    },
                    COMMON_ERROR_NOT_SUPPORTED => {
                        record.abandon();
                        record.set_executes_async(false);
                        self.say_synchronous(Message::AnsweredNotSupported);
                        self.run_synchronously(record, notify)?;
                    }
                    code => {
                        record.abandon();
                        self.outcome(code, Message::QnnGraphExecuteAsync)?;
                    }
                }
            }
            None => {
                if record.executes_async().is_none() {
                    record.set_executes_async(false);
                    self.say_synchronous(Message::NoExecuteAsync);
                }
                self.run_synchronously(record, notify)?;
            }
        }
        if let Some(other) = self.other_inputs.as_mut() {
            core::mem::swap(&mut self.inputs, other);
        }
        Ok(())
    }

    fn say_synchronous(&self, why: Message) {
        log!(Level::Info, Message::ExecutesSynchronously, self.name(), why);
    }

    /// The fallback: one graphExecute on the current inputs, completing the record here (notify included).
    fn run_synchronously(&mut self, record: &Completion, notify: Option<FrameNotify>) -> Result<(), RuntimeError> {
        let code = if self.execute_call()? { 0 } else { GRAPH_ERROR_EARLY_TERMINATION };
        record.begin(notify);
        // SAFETY: the live record of the frame just begun.
        unsafe { Completion::finish(record, code) };
        Ok(())
    }

    /// What the started frame has come to, without blocking; a completed frame is taken (the graph is idle
    /// again). [`RuntimeError::NoFrameStarted`] when none was started; an execution that failed answers its
    /// error as [`Graph::execute_frame`] would.
    pub fn poll_frame(&mut self) -> Result<FrameState, RuntimeError> {
        self.refuse_idle()?;
        match self.completion().poll() {
            None => Ok(FrameState::Pending),
            Some(completed) => self.state_of(completed),
        }
    }

    /// Blocks (never spins) until the started frame completes and takes it: `Ok(Some(execution))` with the
    /// outputs ready, `Ok(None)` on EARLY_TERMINATION, exactly as [`Graph::execute_frame`] answers. Waits at most
    /// [`FRAME_WAIT_MS`]: then [`RuntimeError::FrameTimedOut`], the frame still in flight (wait or poll again).
    pub fn wait_frame(&mut self) -> Result<Option<Execution>, RuntimeError> {
        self.wait_frame_within(FRAME_WAIT_MS)
    }

    /// [`Graph::wait_frame`], waiting at most `milliseconds`.
    pub fn wait_frame_within(&mut self, milliseconds: u32) -> Result<Option<Execution>, RuntimeError> {
        self.refuse_idle()?;
        let completed = self.completion().wait(u64::from(milliseconds) * 1000).map_err(|why| match why {
            NotCompleted::TimedOut => {
                RuntimeError::FrameTimedOut { graph: name_of(self.name()), waited_ms: milliseconds }
            }
            NotCompleted::Platform(error) => RuntimeError::Platform { what: Message::StepWaitingForCompletion, error },
            NotCompleted::NoSignal => {
                let (count, limit) = (SIGNAL_SLOTS + 1, SIGNAL_SLOTS);
                RuntimeError::TooMany { what: Message::TooManyWaitingThreads, count, limit }
            }
        })?;
        match self.state_of(completed)? {
            FrameState::Ready(execution) => Ok(Some(execution)),
            FrameState::Pending | FrameState::NeedsNextFrame => Ok(None),
        }
    }

    /// Waits for the frame started at tick `started` and starts it again while the backend answers
    /// EARLY_TERMINATION, as [`Graph::execute`] repeats graphExecute: at most [`MAX_EXECUTE_ATTEMPTS`] executions in
    /// all (with one input set each start reads the same inputs; with two, each reads the other set, as
    /// `start_frame` does): the execution from `started` to the last completion with the executions made, and the
    /// ticks the first execution took. Nothing is in flight when it answers, unless a wait ended without the frame
    /// ([`RuntimeError::FrameTimedOut`] or a platform error: the frame is still in flight).
    ///
    /// # Safety
    /// As for [`Graph::start_frame`]: it starts the frame again.
    pub unsafe fn wait_frame_repeating(&mut self, started: u64) -> Result<(Execution, u64), RuntimeError> {
        let (mut last_start, mut first) = (started, None);
        for attempts in 1..=MAX_EXECUTE_ATTEMPTS {
            let completed = self.wait_frame()?;
            // An EARLY_TERMINATION answer completes an execution too.
            let first_ticks = *first.get_or_insert(self.last_frame_ticks());
            if let Some(execution) = completed {
                let ticks = last_start.saturating_sub(started).saturating_add(execution.ticks);
                return Ok((Execution { ticks, attempts }, first_ticks));
            }
            if attempts == MAX_EXECUTE_ATTEMPTS {
                break;
            }
            last_start = Current::now_ticks();
            // SAFETY: this function's contract.
            unsafe { self.start_frame(None) }?;
        }
        Err(RuntimeError::NeverCompleted { attempts: MAX_EXECUTE_ATTEMPTS })
    }

    /// Before the graph's memory goes: waits at most `micros` for a frame still in flight and takes it. `false`
    /// when the frame has not completed by then: the backend may still write the memory, which must be leaked.
    pub(crate) fn settle_frame(&mut self, micros: u64) -> bool {
        let record = self.completion();
        !record.in_flight() || record.wait(micros).is_ok()
    }

    /// The DSP-clock ticks from the start of the last frame taken to its completion, whatever it answered
    /// (EARLY_TERMINATION too); 0 before any.
    pub fn last_frame_ticks(&self) -> u64 {
        let record = self.completion();
        record.last_tick().saturating_sub(record.started())
    }

    fn refuse_idle(&self) -> Result<(), RuntimeError> {
        if !self.frame_in_flight() {
            return Err(RuntimeError::NoFrameStarted { graph: name_of(self.name()) });
        }
        Ok(())
    }

    fn state_of(&self, completed: Completed) -> Result<FrameState, RuntimeError> {
        let call =
            if self.executes_async() == Some(true) { Message::QnnGraphExecuteAsync } else { Message::QnnGraphExecute };
        Ok(match self.outcome(completed.code, call)? {
            true => FrameState::Ready(Execution {
                ticks: completed.ticks.saturating_sub(self.completion().started()),
                attempts: 1,
            }),
            false => FrameState::NeedsNextFrame,
        })
    }
}
