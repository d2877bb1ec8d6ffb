//! graphExecuteAsync: the rules of graphExecute at the call, then the execution on the model's one queue (host: a
//! thread of the model; Hexagon: inside the call) and the notify function once the outputs are written.

use crate::execute;
use crate::lock::with_state;
use crate::log::Line;
use lpai_direct::qnn::error::COMMON_ERROR_NOT_SUPPORTED;
use lpai_direct::qnn::{ErrorHandle, GraphHandle, NotifyFn, NotifyStatus, ProfileHandle, SignalHandle, Tensor};

/// graphExecuteAsync.
///
/// # Safety
/// As for graphExecute; the client buffers, the graph's memory and the context's binary also stay the caller's
/// until the notification (or until contextFree returns, when `notify` is null); `notify`, if not null, may be
/// called with `param` on another thread.
#[allow(clippy::too_many_arguments)] // QNN's signature
pub(crate) unsafe extern "C" fn graph_execute_async(
    graph: GraphHandle,
    inputs: *const Tensor,
    input_count: u32,
    outputs: *mut Tensor,
    output_count: u32,
    _profile: ProfileHandle,
    _signal: SignalHandle,
    notify: NotifyFn,
    param: *mut core::ffi::c_void,
) -> ErrorHandle {
    if let Some(answer) = unsupported(graph) {
        return answer;
    }
    // SAFETY: forwarded from the caller.
    match unsafe { execute::check(graph, inputs, input_count, outputs.cast_const(), output_count) } {
        // SAFETY: as above.
        Ok(checked) => unsafe { enqueue(graph, checked, notify, param) },
        Err(breach) => breach.report(),
    }
}

/// QNN_GRAPH_ERROR_UNSUPPORTED_FEATURE (1000, QNN_COMMON_ERROR_NOT_SUPPORTED) after one line, for a graph whose
/// backend was created without asynchronous execution (`LPAI_CONTRACT_NO_EXECUTE_ASYNC=1`, host only).
fn unsupported(graph: GraphHandle) -> Option<ErrorHandle> {
    let supported = with_state(|state| {
        let (slot, _) = state.graph(graph)?;
        let backend = state.contexts.get(slot)?.backend;
        state.backends.iter().find(|live| live.serial == backend).map(|live| live.execute_async)
    });
    if supported != Some(false) {
        return None;
    }
    let text = "graphExecuteAsync is not supported by this backend (LPAI_CONTRACT_NO_EXECUTE_ASYNC=1 at backendCreate)";
    Line::message(text).emit();
    Some(u64::from(COMMON_ERROR_NOT_SUPPORTED))
}

/// Calls the notify function, if any, with the execution's result.
///
/// # Safety
/// `notify` and `param` are the caller's of graphExecuteAsync.
unsafe fn notify_of(notify: NotifyFn, param: *mut core::ffi::c_void, error: ErrorHandle) {
    if let Some(notify) = notify {
        // SAFETY: per the caller.
        unsafe { notify(param, NotifyStatus { error }) };
    }
}

/// Hexagon: the PD has no threads of the model, so the execution runs inside the call and the notify function is
/// called before the call returns.
///
/// # Safety
/// As for [`graph_execute_async`].
#[cfg(target_arch = "hexagon")]
unsafe fn enqueue(
    _graph: GraphHandle,
    checked: execute::Checked,
    notify: NotifyFn,
    param: *mut core::ffi::c_void,
) -> ErrorHandle {
    // SAFETY: the rules held just now and the caller's memory is valid.
    let status = unsafe { execute::compute_checked(&checked) };
    // SAFETY: per the caller.
    unsafe { notify_of(notify, param, status) };
    0
}

#[cfg(not(target_arch = "hexagon"))]
pub use host::notify_withheld;
#[cfg(not(target_arch = "hexagon"))]
pub(crate) use host::{enqueue, quiesce, wait_for_context, wait_for_graph};

/// Whether the backend of `graph` withholds its notifications (`LPAI_CONTRACT_WITHHOLD_NOTIFY=1` at backendCreate).
#[cfg(not(target_arch = "hexagon"))]
fn withholds(graph: GraphHandle) -> bool {
    with_state(|state| {
        let (slot, _) = state.graph(graph)?;
        let backend = state.contexts.get(slot)?.backend;
        state.backends.iter().find(|live| live.serial == backend).map(|live| live.withhold_notify)
    }) == Some(true)
}

/// The host's queue: one thread of the model runs the queued executions in order; graphExecute and contextFree
/// wait for the executions queued on their graph or context.
///
/// The model is often a library that its runtime unloads (dlclose) after backendFree, so no thread may run its code
/// afterwards, and no thread may hold a destructor of its thread-locals: the thread is started when an execution is
/// queued and none runs, ends when the queue is empty, and backendFree joins it once it has ended; the caller's
/// threads touch no thread-local that has a destructor.
#[cfg(not(target_arch = "hexagon"))]
mod host {
    use super::notify_of;
    use crate::execute::{self, Buffers, Checked};
    use crate::rules;
    use core::cell::Cell;
    use lpai_direct::qnn::{ErrorHandle, GraphHandle, NotifyFn};
    use std::collections::VecDeque;
    use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
    use std::thread::JoinHandle;

    /// Executions queued at once (more: the `async-queue` rule, QNN_GRAPH_ERROR_EXECUTION_ASYNC_FIFO_FULL).
    pub(crate) const MAX_QUEUED: usize = 16;

    std::thread_local! {
        /// Whether this thread is the model's execution thread (a `Cell<bool>`: no destructor to register).
        static IS_WORKER: Cell<bool> = const { Cell::new(false) };
    }

    /// One queued execution.
    struct Job {
        graph: usize,
        context: u32,
        buffers: Buffers,
        notify: NotifyFn,
        param: usize,
        /// Its notification is kept in [`WITHHELD`] instead of made.
        withhold: bool,
    }

    /// A notification withheld: the function, its parameter and the status.
    struct Withheld {
        notify: NotifyFn,
        param: usize,
        status: ErrorHandle,
    }

    /// Notifications withheld by backends created with `LPAI_CONTRACT_WITHHOLD_NOTIFY=1`, oldest first.
    static WITHHELD: Mutex<VecDeque<Withheld>> = Mutex::new(VecDeque::new());

    /// Makes the notifications withheld so far, oldest first, on this thread; answers how many.
    pub fn notify_withheld() -> usize {
        let withheld = std::mem::take(&mut *WITHHELD.lock().unwrap_or_else(PoisonError::into_inner));
        let count = withheld.len();
        for held in withheld {
            let param = core::ptr::with_exposed_provenance_mut(held.param);
            // SAFETY: the caller of graphExecuteAsync gave the function and parameter for this notification.
            unsafe { notify_of(held.notify, param, held.status) };
        }
        count
    }

    // SAFETY: the buffers and the parameter are the caller's, who handed them to graphExecuteAsync for the model's
    // thread to use (QNN: notifyFn runs on a backend-owned thread).
    unsafe impl Send for Job {}

    struct Queue {
        jobs: VecDeque<Job>,
        /// The graph and context of the execution being run.
        running: Option<(usize, u32)>,
        /// The execution thread runs (it clears this under the lock when it finds the queue empty, then ends).
        worker_live: bool,
        worker: Option<JoinHandle<()>>,
    }

    static QUEUE: Mutex<Queue> =
        Mutex::new(Queue { jobs: VecDeque::new(), running: None, worker_live: false, worker: None });
    static CHANGED: Condvar = Condvar::new();

    fn lock() -> MutexGuard<'static, Queue> {
        QUEUE.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait(queue: MutexGuard<'static, Queue>) -> MutexGuard<'static, Queue> {
        CHANGED.wait(queue).unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a checked execution, starting the execution thread if none runs; the answer of the call.
    ///
    /// # Safety
    /// As for [`super::graph_execute_async`].
    pub(crate) unsafe fn enqueue(
        graph: GraphHandle,
        checked: Checked,
        notify: NotifyFn,
        param: *mut core::ffi::c_void,
    ) -> ErrorHandle {
        let job = Job {
            graph: graph.addr(),
            context: checked.context(),
            buffers: checked.buffers,
            notify,
            param: param.expose_provenance(),
            withhold: super::withholds(graph),
        };
        let mut queue = lock();
        if queue.jobs.len() >= MAX_QUEUED {
            drop(queue);
            let breach = rules::ASYNC_QUEUE.breach().num(MAX_QUEUED as u64);
            return breach.text(" executions are queued already").report();
        }
        if !queue.worker_live {
            // The thread that ended last no longer needs the lock: join it before starting the next.
            if let Some(ended) = queue.worker.take() {
                let _ = ended.join();
            }
            match std::thread::Builder::new().name("lpai-contract-async".into()).spawn(work) {
                Ok(worker) => (queue.worker, queue.worker_live) = (Some(worker), true),
                Err(_) => {
                    drop(queue);
                    return rules::ASYNC_QUEUE.breach().text("the model's execution thread did not start").report();
                }
            }
        }
        queue.jobs.push_back(job);
        CHANGED.notify_all();
        0
    }

    /// The execution thread: runs the queued executions in order, each followed by its notification; ends when the
    /// queue is empty.
    fn work() {
        IS_WORKER.with(|is_worker| is_worker.set(true));
        let mut queue = lock();
        while let Some(job) = queue.jobs.pop_front() {
            queue.running = Some((job.graph, job.context));
            drop(queue);
            let graph = core::ptr::without_provenance_mut(job.graph);
            // SAFETY: the buffers passed the rules at the call and stay the caller's until the notification.
            let status = unsafe { execute::run_checked(graph, &job.buffers) };
            if job.withhold {
                let held = Withheld { notify: job.notify, param: job.param, status };
                WITHHELD.lock().unwrap_or_else(PoisonError::into_inner).push_back(held);
            } else {
                let param = core::ptr::with_exposed_provenance_mut(job.param);
                // SAFETY: the caller's notify function and parameter.
                unsafe { notify_of(job.notify, param, status) };
            }
            queue = lock();
            queue.running = None;
            CHANGED.notify_all();
        }
        queue.worker_live = false;
        CHANGED.notify_all();
    }

    /// Waits until no execution matching `pending` (graph, context) is queued or running. On the execution thread
    /// (a call from inside a notify function) it does not wait: it would wait for itself.
    fn wait_until_none(pending: impl Fn(usize, u32) -> bool) {
        if IS_WORKER.with(Cell::get) {
            return;
        }
        let mut queue = lock();
        while queue.running.is_some_and(|(graph, context)| pending(graph, context))
            || queue.jobs.iter().any(|job| pending(job.graph, job.context))
        {
            queue = wait(queue);
        }
    }

    /// Waits for the executions queued on `graph`.
    pub(crate) fn wait_for_graph(graph: GraphHandle) {
        wait_until_none(|queued, _| queued == graph.addr());
    }

    /// Waits for the executions queued on the graphs of the context with `serial`.
    pub(crate) fn wait_for_context(serial: u32) {
        wait_until_none(|_, context| context == serial);
    }

    /// backendFree: when nothing is queued, waits for the execution thread to end and joins it, so that no thread
    /// runs the model's code once its last backend is freed (other backends' executions keep it running).
    pub(crate) fn quiesce() {
        if IS_WORKER.with(Cell::get) {
            return;
        }
        let mut queue = lock();
        while queue.worker_live && queue.jobs.is_empty() && queue.running.is_none() {
            queue = wait(queue);
        }
        let ended = if queue.worker_live { None } else { queue.worker.take() };
        drop(queue);
        if let Some(ended) = ended {
            let _ = ended.join();
        }
    }
}
