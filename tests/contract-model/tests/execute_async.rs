//! graphExecuteAsync on the contract model (a model of the documented LPAI contract, not the vendor library): the
//! call checks what graphExecute checks, the execution runs later on the model's thread in FIFO order with
//! graphExecute, and the notify function gets its result (0 or EARLY_TERMINATION) after the outputs are written.

mod common;

use common::*;
use lpai_contract_model::take_log_lines;
use lpai_contract_model::writer::GraphSpec;
use lpai_direct::qnn::error as qnn_error;
use lpai_direct::qnn::NotifyStatus;
use std::ffi::c_void;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// One notification: (tag, status, output 0's first byte, the notifying thread's name).
type Seen = (u32, u64, u8, Option<String>);

/// What the notify function saw, in order.
#[derive(Default)]
struct Sink {
    seen: Mutex<Vec<Seen>>,
    changed: Condvar,
}

/// The parameter of one execution: its tag, the sink, and the output buffer to read when notified.
struct Ticket {
    tag: u32,
    sink: *const Sink,
    output: *const u8,
}

unsafe extern "C" fn notified(param: *mut c_void, status: NotifyStatus) {
    // SAFETY: every test passes a Ticket that outlives the execution, whose sink and output outlive it too.
    let ticket = unsafe { &*param.cast::<Ticket>() };
    // SAFETY: as above.
    let (sink, first) = unsafe { (&*ticket.sink, *ticket.output) };
    let name = std::thread::current().name().map(str::to_owned);
    sink.seen.lock().unwrap().push((ticket.tag, status.error, first, name));
    sink.changed.notify_all();
}

impl Sink {
    /// Waits (at most 10 s) until `count` notifications came.
    fn wait_for(&self, count: usize) -> Vec<Seen> {
        let seen = self.seen.lock().unwrap();
        let (seen, _) =
            self.changed.wait_timeout_while(seen, Duration::from_secs(10), |seen| seen.len() < count).unwrap();
        seen.clone()
    }
}

fn tickets(sink: &Sink, session: &Session, count: u32) -> Vec<Ticket> {
    (0..count).map(|tag| Ticket { tag, sink, output: session.output(0).as_ptr() }).collect()
}

/// `out = (x * 3 - 40 + frame * 5) >> 2`, clamped to u8 (graph `g` of [`SINGLE`]).
fn single_out(x: u8, frame: i64) -> u8 {
    ((i64::from(x) * 3 - 40 + frame * 5) >> 2).clamp(0, 255) as u8
}

#[test]
fn completion_comes_through_the_notify_function_after_the_outputs_are_written() {
    let _serial = serial();
    let sink = Sink::default();
    let mut session = Session::open(&file(&SINGLE, 48));
    session.input_mut(0).fill(100);
    let mut tickets = tickets(&sink, &session, 1);
    assert_eq!(session.execute_async(Some(notified), (&raw mut tickets[0]).cast()), 0);
    quiet();
    let seen = sink.wait_for(1);
    assert_eq!(seen.len(), 1, "no notification within 10 s");
    let (tag, status, first, thread) = seen[0].clone();
    assert_eq!((tag, status), (0, 0));
    assert_eq!(first, single_out(100, 0), "the notify function saw the outputs written");
    assert_eq!(thread.as_deref(), Some("lpai-contract-async"), "notified on the model's thread");
    assert_ne!(std::thread::current().name(), Some("lpai-contract-async"));
    assert_eq!(&session.output(0)[..16], &[single_out(100, 0); 16]);
    assert_eq!(session.free(), 0);
}

#[test]
fn executions_run_in_fifo_order_with_graph_execute_on_one_queue() {
    let _serial = serial();
    let sink = Sink::default();
    let mut session = Session::open(&file(&SINGLE, 48));
    session.input_mut(0).fill(60);
    let mut tickets = tickets(&sink, &session, 10);
    for ticket in &mut tickets {
        assert_eq!(session.execute_async(Some(notified), (ticket as *mut Ticket).cast()), 0);
    }
    // graphExecute waits for the ten queued executions, then runs as the eleventh frame.
    assert_eq!(session.execute(), 0);
    let seen = sink.wait_for(10);
    assert_eq!(seen.iter().map(|seen| seen.0).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
    assert!(seen.iter().all(|seen| seen.1 == 0), "{seen:?}");
    for (frame, seen) in seen.iter().enumerate() {
        assert_eq!(seen.2, single_out(60, frame as i64), "frame {frame}");
    }
    assert_eq!(&session.output(0)[..16], &[single_out(60, 10); 16]);
    assert_eq!((session.header().calls, session.header().frames), (11, 11));
    quiet();
    assert_eq!(session.free(), 0);
}

const EARLY: [GraphSpec<'static>; 1] = [GraphSpec { early_every: 2, ..SINGLE[0] }];

#[test]
fn early_termination_is_the_notified_status_with_the_outputs_untouched() {
    let _serial = serial();
    let sink = Sink::default();
    let mut session = Session::open(&file(&EARLY, 48));
    session.input_mut(0).fill(200);
    let mut tickets = tickets(&sink, &session, 4);
    for ticket in &mut tickets {
        assert_eq!(session.execute_async(Some(notified), (ticket as *mut Ticket).cast()), 0);
    }
    let seen = sink.wait_for(4);
    let early = u64::from(qnn_error::GRAPH_ERROR_EARLY_TERMINATION);
    assert_eq!(seen.iter().map(|seen| seen.1).collect::<Vec<_>>(), [0, early, 0, early]);
    // Calls 2 and 4 terminate early: the outputs stay those of frames 0 and 2.
    let firsts: Vec<u8> = seen.iter().map(|seen| seen.2).collect();
    let (frame0, frame2) = (single_out(200, 0), single_out(200, 2));
    assert_eq!(firsts, [frame0, frame0, frame2, frame2]);
    quiet();
    assert_eq!(session.free(), 0);
}

#[test]
fn a_failed_call_never_notifies() {
    let _serial = serial();
    let sink = Sink::default();
    let mut session = Session::created(&file(&SINGLE, 48), 0);
    let mut tickets = tickets(&sink, &session, 3);
    let not_finalized = session.execute_async(Some(notified), (&raw mut tickets[0]).cast());
    assert_eq!(not_finalized, qnn_error::GRAPH_ERROR_GRAPH_NOT_FINALIZED);
    one_rule("finalized-after-config");
    assert_eq!(session.set_memory(), 0);
    assert_eq!(session.finalize(), 0);
    let output = session.output_tensors.pop().unwrap();
    let too_few = session.execute_async(Some(notified), (&raw mut tickets[1]).cast());
    assert_eq!(too_few, qnn_error::GRAPH_ERROR_INVALID_TENSOR);
    assert_eq!(one_rule("tensor-ids"), "contract: rule tensor-ids: 0 outputs given, the graph has 1");
    session.output_tensors.push(output);
    session.input_tensors[0].common_mut().unwrap().memory.client_buf.data_size = 8;
    let short = session.execute_async(Some(notified), (&raw mut tickets[2]).cast());
    assert_eq!(short, qnn_error::GRAPH_ERROR_INVALID_TENSOR);
    one_rule("io-padded");
    // contextFree waits for every queued execution: none was queued, so none is notified.
    assert_eq!(session.free(), 0);
    assert!(sink.seen.lock().unwrap().is_empty(), "a failed call notified");
}

#[test]
fn context_free_waits_for_the_queued_executions() {
    let _serial = serial();
    let sink = Sink::default();
    let mut session = Session::open(&file(&SINGLE, 48));
    let mut tickets = tickets(&sink, &session, 8);
    for ticket in &mut tickets {
        assert_eq!(session.execute_async(Some(notified), (ticket as *mut Ticket).cast()), 0);
    }
    assert_eq!(session.free(), 0);
    assert_eq!(sink.seen.lock().unwrap().len(), 8, "contextFree returned before every notification");
    assert_eq!(execution_threads(), 0, "backendFree joined the model's execution thread (a runtime may unload it)");
    quiet();
}

/// Threads of this process named as the model's execution thread (`lpai-contract-async`, cut to 15 bytes).
fn execution_threads() -> usize {
    let tasks = std::fs::read_dir("/proc/self/task").unwrap();
    let names = tasks.map(|task| std::fs::read_to_string(task.unwrap().path().join("comm")).unwrap_or_default());
    names.filter(|name| name.trim_end() == "lpai-contract-a").count()
}

#[test]
fn a_null_notify_function_still_runs_the_execution() {
    let _serial = serial();
    let mut session = Session::open(&file(&SINGLE, 48));
    session.input_mut(0).fill(40);
    assert_eq!(session.execute_async(None, std::ptr::null_mut()), 0);
    assert_eq!(session.execute(), 0, "waits for the queued execution first");
    assert_eq!(&session.output(0)[..16], &[single_out(40, 1); 16]);
    assert_eq!(session.free(), 0);
}

#[test]
fn without_async_the_backend_answers_unsupported_feature() {
    let _serial = serial();
    let bytes = file(&SINGLE, 48);
    // SAFETY (of the environment): every test of this binary holds `serial()`, so no other thread reads it now.
    std::env::set_var("LPAI_CONTRACT_NO_EXECUTE_ASYNC", "1");
    let mut session = Session::open(&bytes);
    std::env::remove_var("LPAI_CONTRACT_NO_EXECUTE_ASYNC");
    let sink = Sink::default();
    let mut tickets = tickets(&sink, &session, 1);
    let answer = session.execute_async(Some(notified), (&raw mut tickets[0]).cast());
    assert_eq!(answer, qnn_error::COMMON_ERROR_NOT_SUPPORTED, "QNN_GRAPH_ERROR_UNSUPPORTED_FEATURE");
    assert_eq!(
        take_log_lines(),
        ["contract: graphExecuteAsync is not supported by this backend (LPAI_CONTRACT_NO_EXECUTE_ASYNC=1 at \
          backendCreate)"]
    );
    assert_eq!(session.execute(), 0, "graphExecute still works");
    assert_eq!(session.free(), 0);
    assert!(sink.seen.lock().unwrap().is_empty());
    // A backend created without the variable executes asynchronously again.
    let mut again = Session::open(&bytes);
    assert_eq!(again.execute_async(None, std::ptr::null_mut()), 0);
    assert_eq!(again.free(), 0);
}

#[test]
fn a_full_queue_answers_fifo_full() {
    let _serial = serial();
    let sink = Sink::default();
    let blocker = Blocker::default();
    let mut session = Session::open(&file(&SINGLE, 48));
    // The first execution's notification blocks the model's thread until released, so 16 more stay queued.
    assert_eq!(session.execute_async(Some(block), (&raw const blocker).cast_mut().cast()), 0);
    blocker.wait_started();
    let mut tickets = tickets(&sink, &session, 17);
    for ticket in tickets.iter_mut().take(16) {
        assert_eq!(session.execute_async(Some(notified), (ticket as *mut Ticket).cast()), 0);
    }
    let full = session.execute_async(Some(notified), (&raw mut tickets[16]).cast());
    assert_eq!(full, qnn_error::GRAPH_ERROR_EXECUTION_ASYNC_FIFO_FULL);
    assert_eq!(one_rule("async-queue"), "contract: rule async-queue: 16 executions are queued already");
    blocker.release();
    assert_eq!(session.free(), 0);
    assert_eq!(sink.seen.lock().unwrap().len(), 16);
}

/// A notify function that blocks the model's thread until the test releases it.
#[derive(Default)]
struct Blocker {
    state: Mutex<(bool, bool)>,
    changed: Condvar,
}

impl Blocker {
    fn wait_started(&self) {
        let state = self.state.lock().unwrap();
        let (state, _) = self.changed.wait_timeout_while(state, Duration::from_secs(10), |s| !s.0).unwrap();
        assert!(state.0, "the first execution never started");
    }
    fn release(&self) {
        self.state.lock().unwrap().1 = true;
        self.changed.notify_all();
    }
}

unsafe extern "C" fn block(param: *mut c_void, _status: NotifyStatus) {
    // SAFETY: the test passes a Blocker that outlives the session.
    let blocker = unsafe { &*param.cast::<Blocker>() };
    let mut state = blocker.state.lock().unwrap();
    state.0 = true;
    blocker.changed.notify_all();
    let _released = blocker.changed.wait_timeout_while(state, Duration::from_secs(10), |s| !s.1).unwrap();
}
