//! The host skel under concurrent use, through the local transport on the real HTP backend: 8 threads, each with
//! its own handle, run open/configure/load/execute/unload/close cycles and compare every output with ONNX
//! Runtime's byte for byte, while one thread closes handles the others are using and another calls stale (closed)
//! handles and made-up handle numbers with well-formed calls.
//!
//! What must hold: no crash, no hang (a watchdog aborts the process after 5 minutes), no wrong output. A call on a
//! handle closed under it ends with the right output or with an error, never with success and wrong bytes, and
//! only handles the closing thread closed see errors at all; a stale or made-up handle always answers
//! AEE_EINVHANDLE (0x8000042C), never busy; every open succeeds (closed handles give their slot back).

mod common;

use lpai_direct_stub::stub::fastrpc::{skel_uri, Domain};
use lpai_direct_stub::stub::{
    flags, Configuration, LoadRequest, Loaded, Local, SkelLocation, Stub, StubError, Transport,
};
use std::collections::{BTreeMap, HashSet};
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// Threads with a handle of their own.
const WORKERS: usize = 8;
/// Open-to-close cycles each of them runs.
const CYCLES: usize = 10;
/// Inferences per cycle (the fixture's input lines).
const INFERENCES: usize = 3;
/// Handles the closing thread closes at most.
const CLOSES: usize = 30;
/// AEE_EINVHANDLE with the DSP offset: the answer for a handle that is not (or no longer) open.
const BAD_HANDLE: u32 = 0x8000_042C;
/// The whole test must end well within this.
const WATCHDOG: Duration = Duration::from_secs(300);

/// What the threads share.
#[derive(Default)]
struct Shared {
    /// Handles the workers hold open right now.
    live: Mutex<Vec<u64>>,
    /// Handles the closing thread closes or is about to close (recorded before the close is sent).
    closing: Mutex<HashSet<u64>>,
    /// Handles whose close has returned: nothing may work on them again.
    stale: Mutex<Vec<u64>>,
    /// The workers have finished.
    done: AtomicBool,
    /// Outputs compared equal to the reference.
    verified: AtomicUsize,
    /// Worker cycles ended early by an error on a handle the closing thread closed, by the method that failed.
    interrupted: Mutex<BTreeMap<&'static str, usize>>,
    /// Closes of the closing thread that found the handle open.
    closed_open: AtomicUsize,
    /// Calls on stale and made-up handles.
    stale_calls: AtomicUsize,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The kws_conv fixture: its binary, float inputs and ORT's float outputs, and the QNN libraries.
struct Fixture {
    configuration: Configuration,
    binary: Vec<u8>,
    inputs: Vec<Vec<u8>>,
    references: Vec<Vec<u8>>,
}

impl Fixture {
    fn load() -> Fixture {
        let qnn = common::qnn_lib_dir();
        let c_path = |path: std::path::PathBuf| CString::new(path.to_str().unwrap()).unwrap();
        let directory = common::fixture("kws_conv");
        let read = |relative: String| std::fs::read(directory.join(relative)).unwrap();
        Fixture {
            configuration: Configuration {
                backend: c_path(qnn.join("libQnnHtp.so")),
                system_library: c_path(qnn.join("libQnnSystem.so")),
                log_level: 1,
                profiling_level: 0,
                lpai_hw_version: 0,
                lpai_target: lpai_direct_stub::stub::TARGET_DEFAULT,
                arena_bytes: 4 << 20,
            },
            binary: read("kws_conv_qnn.bin".into()),
            inputs: (0..INFERENCES).map(|line| read(format!("inputs/float/{line}_0.raw"))).collect(),
            references: (0..INFERENCES).map(|line| read(format!("reference/float/Result_{line}/logits.raw"))).collect(),
        }
    }
}

/// The code a failed call answered (transport and skel failures carry one; others are a stub bug).
fn code_of(method: &str, error: &StubError) -> u32 {
    match error {
        StubError::Call { code, .. } => *code,
        other => panic!("{method}: not a skel answer: {other}"),
    }
}

/// One cycle's calls after open; the first failure ends it, naming the method. Every successful execute's
/// output must equal the reference.
fn cycle(
    stub: &mut Stub,
    fixture: &Fixture,
    verified: &AtomicUsize,
    who: &str,
) -> Result<(), (&'static str, StubError)> {
    let at = |method: &'static str| move |error| (method, error);
    stub.configure(&fixture.configuration).map_err(at("configure"))?;
    let Loaded { context, graph_count } = stub.load(&LoadRequest::bytes(&fixture.binary)).map_err(at("load"))?;
    assert_eq!(graph_count, 1, "{who}: load succeeded with {graph_count} graphs, kws_conv has 1");
    let execute_flags = flags::FLOAT_INPUTS | flags::FLOAT_OUTPUTS;
    for (line, (input, reference)) in fixture.inputs.iter().zip(&fixture.references).enumerate() {
        let mut output = vec![0xA5u8; reference.len()];
        let executed = stub.execute(context, 0, execute_flags, input, &mut output).map_err(at("execute"))?;
        assert_eq!(executed.outputs_bytes, reference.len(), "{who}: execute of line {line} succeeded, wrong size");
        assert!(output == *reference, "{who}: execute of line {line} succeeded with wrong bytes");
        verified.fetch_add(1, Ordering::Relaxed);
    }
    stub.unload(context).map_err(at("unload"))
}

fn worker(index: usize, local: Local, fixture: &Fixture, shared: &Shared) {
    let uri = skel_uri(Domain::Adsp, None);
    for round in 0..CYCLES {
        let who = format!("worker {index} cycle {round}");
        let mut stub = Stub::open(Box::new(local.clone()), &uri)
            .unwrap_or_else(|error| panic!("{who}: open failed (closed handles must free their slots): {error}"));
        let handle = stub.handle();
        lock(&shared.live).push(handle);
        let outcome = cycle(&mut stub, fixture, &shared.verified, &who);
        lock(&shared.live).retain(|&live| live != handle);
        if let Err((method, error)) = outcome {
            code_of(method, &error);
            assert!(
                lock(&shared.closing).contains(&handle),
                "{who}: {method} failed on handle {handle:#x}, which nobody closed: {error}"
            );
            *lock(&shared.interrupted).entry(method).or_default() += 1;
        }
        match stub.close() {
            Ok(()) => {}
            Err(error) => {
                let code = code_of("close", &error);
                let closed_by_other = lock(&shared.closing).contains(&handle);
                assert!(code == BAD_HANDLE && closed_by_other, "{who}: closing its own handle failed: {error}");
            }
        }
        lock(&shared.stale).push(handle);
    }
}

/// Closes handles the workers are using, one every 2 to 20 ms, up to [`CLOSES`] of them.
fn closer(mut local: Local, shared: &Shared) {
    let mut random = fastrand::Rng::with_seed(0x9E37_79B9_7F4A_7C15);
    let mut closes = 0;
    while closes < CLOSES && !shared.done.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(2 + random.usize(..18) as u64));
        let target = {
            let live = lock(&shared.live);
            (!live.is_empty()).then(|| live[random.usize(..live.len())])
        };
        let Some(handle) = target else { continue };
        lock(&shared.closing).insert(handle);
        let status = local.close(handle) as u32;
        // BAD_HANDLE: its worker closed it between the pick and this close.
        assert!(status == 0 || status == BAD_HANDLE, "closing live handle {handle:#x} answered {status:#010x}");
        if status == 0 {
            shared.closed_open.fetch_add(1, Ordering::Relaxed);
        }
        lock(&shared.stale).push(handle);
        closes += 1;
    }
}

/// Calls stale handles and made-up numbers with well-formed calls until the workers finish; each must answer
/// AEE_EINVHANDLE, and so must closing them.
fn stale_caller(local: Local, fixture: &Fixture, shared: &Shared) {
    let mut random = fastrand::Rng::with_seed(0xD1B5_4A32_D192_ED03);
    let mut output = vec![0u8; fixture.references[0].len()];
    let mut round = 0usize;
    while !shared.done.load(Ordering::Acquire) {
        round += 1;
        let stale = {
            let stale = lock(&shared.stale);
            (!stale.is_empty() && round.is_multiple_of(2)).then(|| stale[random.usize(..stale.len())])
        };
        let handle = match (stale, round % 6) {
            (Some(handle), _) => handle,
            (None, 1) => 0,
            (None, 3) => u64::MAX,
            (None, 5) => (random.u64(..) & !0xFF) | random.usize(..16) as u64,
            (None, _) => random.u64(..),
        };
        let mut stub = Stub::from_handle(Box::new(local.clone()), handle);
        let (method, answer) = match random.usize(..5) {
            0 => ("last_error", stub.last_error().map(drop)),
            1 => ("describe", stub.describe(0, 0).map(drop)),
            2 => ("unload", stub.unload(0)),
            3 => ("configure", stub.configure(&fixture.configuration)),
            _ => ("execute", stub.execute(0, 0, flags::FLOAT_INPUTS, &fixture.inputs[0], &mut output).map(drop)),
        };
        let kind = if stale.is_some() { "stale" } else { "made-up" };
        match answer {
            Ok(()) => panic!("{method} on {kind} handle {handle:#x} succeeded"),
            Err(error) => {
                let code = code_of(method, &error);
                assert_eq!(code, BAD_HANDLE, "{method} on {kind} handle {handle:#x}: {error}");
            }
        }
        let closed = stub.close().map_err(|error| code_of("close", &error));
        assert_eq!(closed, Err(BAD_HANDLE), "close of {kind} handle {handle:#x}");
        shared.stale_calls.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Aborts the whole process unless `finished` hears from the test (or is dropped by a failing one) in time.
fn watchdog(finished: mpsc::Receiver<()>) {
    if let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(WATCHDOG) {
        eprintln!("concurrency: no end after {} s: a call hangs; aborting the test process", WATCHDOG.as_secs());
        std::process::abort();
    }
}

#[test]
fn handles_closed_under_use_and_stale_handles_give_errors_never_wrong_outputs() {
    let (finished, heard) = mpsc::channel();
    std::thread::spawn(move || watchdog(heard));
    let location = SkelLocation::File { path: common::host_skel(), named_by: "the test" };
    let local = Local::load(&location).unwrap();
    let fixture = Fixture::load();
    let shared = Shared::default();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|index| {
                let (local, fixture, shared) = (local.clone(), &fixture, &shared);
                scope.spawn(move || worker(index, local, fixture, shared))
            })
            .collect();
        let closing = scope.spawn(|| closer(local.clone(), &shared));
        let stale = scope.spawn(|| stale_caller(local.clone(), &fixture, &shared));
        let failed_workers = workers.into_iter().map(|worker| worker.join()).filter(Result::is_err).count();
        shared.done.store(true, Ordering::Release);
        let closer_failed = closing.join().is_err();
        let stale_failed = stale.join().is_err();
        assert_eq!(
            (failed_workers, closer_failed, stale_failed),
            (0, false, false),
            "threads failed (see their messages above): workers, closer, stale caller"
        );
    });
    let _ = finished.send(());

    let verified = shared.verified.load(Ordering::Relaxed);
    let by_method = std::mem::take(&mut *lock(&shared.interrupted));
    let interrupted: usize = by_method.values().sum();
    let closed_open = shared.closed_open.load(Ordering::Relaxed);
    let stale_calls = shared.stale_calls.load(Ordering::Relaxed);
    println!(
        "concurrency: {verified} outputs verified, {interrupted} of {} cycles interrupted (failed call: \
         {by_method:?}), {closed_open} handles closed under their workers, {stale_calls} calls on stale or made-up \
         handles",
        WORKERS * CYCLES
    );
    assert!(closed_open >= 1, "the closing thread never found an open handle to close");
    assert!(interrupted <= closed_open, "{interrupted} cycles failed, but only {closed_open} handles were closed");
    assert!(verified >= (WORKERS * CYCLES - interrupted) * INFERENCES, "uninterrupted cycles verify every output");
    assert!(stale_calls > 0, "no stale or made-up handle was called");
}
