//! Self-tests of asynchronous frames ([`crate::embed::Embed::start_frame`]) on the contract model of libQnnLpai
//! (host: its queue thread notifies after writing the outputs; Hexagon: it notifies inside graphExecuteAsync):
//! the same outputs as the synchronous path, poll and wait, the completion callback (a poll right after it sees the
//! frame done), EARLY_TERMINATION through a started frame, two input sets, every misuse refused by name, and the PD's
//! signal pool. The embeddings stand on PD-heap memory ([`Owned`]): frames start safely only on memory no leak can
//! free.

use crate::embed::Embed;
use crate::platform::signals;
use crate::platform::{Memory, Shared, Woken};
use crate::runtime::RuntimeError;
use crate::runtime::{BackendOptions, Binary, FrameState, Libraries, LoadRequest, Owned};
use crate::testing::contract_model_registered;
use crate::testing::contract_single::{BINARY, FRAMES};
use crate::testing::{CONTRACT_LPAI_LIBRARY as LPAI_LIBRARY_NAME, CONTRACT_SYSTEM_LIBRARY as SYSTEM_LIBRARY_NAME};
use core::sync::atomic::{AtomicU32, Ordering};

/// Arena for one embedding on the contract model (a copy of the binary, room for a second input set).
const ARENA_BYTES: usize = 16 * 1024;

/// The `contract_stream` fixture: every 3rd execution answers EARLY_TERMINATION.
const STREAM_BINARY: &[u8] = include_bytes!("../../../tests/fixtures/contract_stream/contract_stream.bin");

/// The contract model's libraries; `None` when they do not open.
fn open() -> Option<Libraries> {
    Libraries::open(LPAI_LIBRARY_NAME, Some(SYSTEM_LIBRARY_NAME), &BackendOptions::default()).ok()
}

/// An embedding on PD-heap memory over `libraries`, with `binary` copied into its arena and `sets` input sets.
fn loaded(libraries: &Shared<Libraries>, binary: &[u8], sets: u32) -> Result<Embed<Owned>, RuntimeError> {
    let arena = Memory::allocate(ARENA_BYTES).ok_or(RuntimeError::BinarySize(ARENA_BYTES as u64))?;
    let mut embed = Embed::new(Owned::new(libraries.clone(), arena));
    embed.load(&LoadRequest::new(Binary::Copy(binary)).with_input_sets(sets))?;
    Ok(embed)
}

/// The contract model's libraries on the PD heap, to share between embeddings.
fn shared_libraries() -> Option<Shared<Libraries>> {
    Shared::new(open()?).ok()
}

/// Completions the callback saw, and the last QNN code it was given (+1, so 0 means none).
static NOTIFIED: AtomicU32 = AtomicU32::new(0);
static LAST_CODE: AtomicU32 = AtomicU32::new(0);

fn note(code: u32) {
    LAST_CODE.store(code + 1, Ordering::Relaxed);
    NOTIFIED.fetch_add(1, Ordering::Release);
}

static NOTE: fn(u32) = note;

/// How many frames the poll-after-callback test runs: many on the host, where the callback runs on the model's own
/// thread and races the poll; few under Miri and on Hexagon (the model notifies inside the call there).
const POLLED_FRAMES: u32 = if cfg!(miri) || cfg!(target_arch = "hexagon") { 20 } else { 100_000 };

/// Callbacks of the poll-after-callback test, counted, and (host) the condition its waiter sleeps on.
static CALLED_BACK: AtomicU32 = AtomicU32::new(0);
#[cfg(not(target_arch = "hexagon"))]
static CALLED_BACK_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
#[cfg(not(target_arch = "hexagon"))]
static CALLED_BACK_CHANGED: std::sync::Condvar = std::sync::Condvar::new();

/// The callback: counts, wakes the waiter, then lets it run (yielding widens any window in which the frame's state
/// would still say running after the callback).
fn called_back(_code: u32) {
    #[cfg(not(target_arch = "hexagon"))]
    {
        let _held = CALLED_BACK_LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        CALLED_BACK.fetch_add(1, Ordering::Release);
        CALLED_BACK_CHANGED.notify_one();
    }
    #[cfg(target_arch = "hexagon")]
    CALLED_BACK.fetch_add(1, Ordering::Release);
    #[cfg(not(target_arch = "hexagon"))]
    std::thread::yield_now();
}

static CALL_BACK: fn(u32) = called_back;

/// Sleeps (host) until the callback counted past `seen`.
fn wait_for_callback(seen: u32) {
    #[cfg(not(target_arch = "hexagon"))]
    {
        let mut held = CALLED_BACK_LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while CALLED_BACK.load(Ordering::Acquire) == seen {
            held = CALLED_BACK_CHANGED.wait(held).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
    #[cfg(target_arch = "hexagon")]
    let _ = seen;
}

crate::self_tests! {
    fn a_pool_signal_wakes_once_per_set_and_a_wait_nobody_can_end_is_refused_or_timed_out() {
        let slot = expect_some!(signals::claim());
        signals::set(slot);
        check!(signals::wait(slot, 1_000) == Ok(Woken::Set));
        // The set was taken: a second wait ends with nothing. A qemu program has one thread, so that wait could never
        // end and is refused; elsewhere it ends when its time is up.
        #[cfg(all(target_arch = "hexagon", feature = "linux-user"))]
        check!(signals::wait(slot, 1_000) == Err(crate::platform::PlatformError::Unsupported));
        #[cfg(not(target_arch = "hexagon"))]
        check!(signals::wait(slot, 1_000) == Ok(Woken::TimedOut));
        signals::set(slot);
        check!(signals::wait(slot, 1_000) == Ok(Woken::Set));
        signals::release(slot);
    }

    fn started_frames_give_the_synchronous_outputs_through_poll_and_wait() {
        check!(contract_model_registered());
        let libraries = expect_some!(shared_libraries());
        let mut embed = expect_ok!(loaded(&libraries, BINARY, 1));
        check!(embed.executes_async().is_none() && !embed.frame_in_flight());
        check!(matches!(embed.poll_frame(), Err(RuntimeError::NoFrameStarted { .. })));
        for (number, (input, reference)) in FRAMES.iter().enumerate() {
            lpai_direct::codec::copy_prefix(expect_ok!(embed.input_mut(0)), *input);
            expect_ok!(embed.start_frame());
            check!(embed.frame_in_flight());
            // Even frames: poll first (pending or ready), then wait if still pending; odd frames: wait.
            let execution = if number % 2 == 0 {
                match expect_ok!(embed.poll_frame()) {
                    FrameState::Ready(execution) => Some(execution),
                    FrameState::Pending => expect_ok!(embed.wait_frame()),
                    FrameState::NeedsNextFrame => None,
                }
            } else {
                expect_ok!(embed.wait_frame())
            };
            let execution = expect_some!(execution);
            check!(execution.attempts == 1 && !embed.frame_in_flight());
            check!(expect_ok!(embed.output(0)) == *reference);
            check!(embed.last_execute_us() == Some(execution.micros()));
        }
        check!(embed.executes_async() == Some(true));
        check!(matches!(embed.wait_frame(), Err(RuntimeError::NoFrameStarted { .. })));
        // The synchronous path on the same embedding goes on where the frames left off, as the fixture counts.
        lpai_direct::codec::copy_prefix(expect_ok!(embed.input_mut(0)), expect_some!(FRAMES.first()).0);
        check!(expect_ok!(embed.execute_frame()).is_some());
    }

    fn a_started_frame_calls_back_once_after_its_outputs_are_written() {
        check!(contract_model_registered());
        let libraries = expect_some!(shared_libraries());
        let mut embed = expect_ok!(loaded(&libraries, BINARY, 1));
        let before = NOTIFIED.load(Ordering::Acquire);
        lpai_direct::codec::copy_prefix(expect_ok!(embed.input_mut(0)), expect_some!(FRAMES.first()).0);
        expect_ok!(embed.start_frame_notifying(&NOTE));
        check!(expect_ok!(embed.wait_frame()).is_some());
        check!(NOTIFIED.load(Ordering::Acquire) == before + 1 && LAST_CODE.load(Ordering::Relaxed) == 1);
        check!(expect_ok!(embed.output(0)) == expect_some!(FRAMES.first()).1.as_slice());
        // Dropping the embedding with a frame in flight waits for it (the callback has run when drop returns).
        lpai_direct::codec::copy_prefix(expect_ok!(embed.input_mut(0)), expect_some!(FRAMES.get(1)).0);
        expect_ok!(embed.start_frame_notifying(&NOTE));
        drop(embed);
        check!(NOTIFIED.load(Ordering::Acquire) == before + 2);
    }

    fn a_poll_right_after_the_callback_sees_the_frame_done() {
        check!(contract_model_registered());
        let libraries = expect_some!(shared_libraries());
        let mut embed = expect_ok!(loaded(&libraries, BINARY, 1));
        lpai_direct::codec::copy_prefix(expect_ok!(embed.input_mut(0)), expect_some!(FRAMES.first()).0);
        let mut pending = 0u32;
        for _ in 0..POLLED_FRAMES {
            let seen = CALLED_BACK.load(Ordering::Acquire);
            expect_ok!(embed.start_frame_notifying(&CALL_BACK));
            wait_for_callback(seen);
            // The callback has run: one poll must take the frame (firmware that sleeps until its callback, then
            // polls once, would otherwise sleep again and never wake).
            match expect_ok!(embed.poll_frame()) {
                FrameState::Pending => {
                    pending += 1;
                    check!(expect_ok!(embed.wait_frame()).is_some());
                }
                state => check!(matches!(state, FrameState::Ready(_))),
            }
        }
        check!(pending == 0);
    }

    fn early_termination_through_a_started_frame_asks_for_the_next_frame() {
        check!(contract_model_registered());
        let libraries = expect_some!(shared_libraries());
        let mut embed = expect_ok!(loaded(&libraries, STREAM_BINARY, 1));
        // Every 3rd execution answers EARLY_TERMINATION: frames 1 and 2 ready, frame 3 needs the next one.
        let mut answers = [false; 6];
        for answer in answers.iter_mut() {
            expect_ok!(embed.start_frame());
            *answer = expect_ok!(embed.wait_frame()).is_some();
        }
        check!(answers == [true, true, false, true, true, false]);
        // Poll answers the same: the third start after these is one more EARLY_TERMINATION.
        let mut polled = [FrameState::Pending; 3];
        for state in polled.iter_mut() {
            expect_ok!(embed.start_frame());
            *state = match expect_ok!(embed.poll_frame()) {
                FrameState::Pending => match expect_ok!(embed.wait_frame()) {
                    Some(execution) => FrameState::Ready(execution),
                    None => FrameState::NeedsNextFrame,
                },
                other => other,
            };
        }
        check!(matches!(polled, [FrameState::Ready(_), FrameState::Ready(_), FrameState::NeedsNextFrame]));
    }

    fn two_input_sets_let_the_next_frame_be_written_while_one_executes() {
        check!(contract_model_registered());
        let libraries = expect_some!(shared_libraries());
        let mut embed = expect_ok!(loaded(&libraries, BINARY, 2));
        let one_set = expect_ok!(loaded(&libraries, BINARY, 1));
        // The second set costs the input buffer (16 bytes padded) and its tensor description once more.
        check!(embed.arena_used() > one_set.arena_used());
        drop(one_set);
        let first = expect_ok!(embed.input_mut(0)).as_ptr();
        lpai_direct::codec::copy_prefix(expect_ok!(embed.input_mut(0)), expect_some!(FRAMES.first()).0);
        expect_ok!(embed.start_frame());
        for (number, (input, _)) in FRAMES.iter().enumerate().skip(1) {
            // The set the next frame reads: the other one, free while this frame executes.
            let next = expect_ok!(embed.input_mut(0));
            check!((next.as_ptr() == first) == (number % 2 == 0));
            lpai_direct::codec::copy_prefix(next, *input);
            check!(expect_ok!(embed.wait_frame()).is_some());
            check!(expect_ok!(embed.output(0)) == expect_some!(FRAMES.get(number - 1)).1.as_slice());
            expect_ok!(embed.start_frame());
        }
        check!(expect_ok!(embed.wait_frame()).is_some());
        check!(expect_ok!(embed.output(0)) == expect_some!(FRAMES.last()).1.as_slice());
    }

    fn every_misuse_of_a_frame_in_flight_is_refused_by_name() {
        check!(contract_model_registered());
        let libraries = expect_some!(shared_libraries());
        check!(matches!(loaded(&libraries, BINARY, 3).err(), Some(RuntimeError::InputSets(3))));
        let mut embed = expect_ok!(loaded(&libraries, BINARY, 1));
        lpai_direct::codec::copy_prefix(expect_ok!(embed.input_mut(0)), expect_some!(FRAMES.first()).0);
        expect_ok!(embed.start_frame());
        let refused = |result: Result<(), RuntimeError>, what: &str| {
            matches!(result, Err(RuntimeError::FrameInFlight { refused, .. }) if refused.template() == what)
        };
        check!(refused(embed.start_frame(), "a second start_frame"));
        check!(refused(embed.select_graph(0), "select_graph"));
        check!(refused(embed.output(0).map(|_| ()), "reading an output"));
        check!(refused(embed.output_pointer(0).map(|_| ()), "binding an output"));
        check!(refused(embed.input_mut(0).map(|_| ()), "writing the input set the frame reads"));
        check!(refused(embed.input_pointer(0).map(|_| ()), "writing the input set the frame reads"));
        check!(refused(embed.execute_frame().map(|_| ()), "a synchronous execute"));
        check!(refused(embed.load(&LoadRequest::new(Binary::Copy(BINARY))), "load"));
        let line = crate::message!(expect_some!(embed.start_frame().err()));
        check!(line.rendered().as_str().starts_with("graph single: a frame is still executing, so a second start_frame"));
        check!(expect_ok!(embed.wait_frame()).is_some());
        check!(expect_ok!(embed.output(0)) == expect_some!(FRAMES.first()).1.as_slice());
    }
}

/// Runs the test at `path` (below this crate) as a child process with `CHILD` and the contract model's `setting`
/// (a variable it reads at backendCreate) in its environment, killing it after a minute; answers its stderr once it
/// passed. A child that still runs then is a wait without end, and fails the test.
#[cfg(test)]
fn run_child(path: &str, setting: &str) -> std::string::String {
    let this = std::env::current_exe().unwrap_or_else(|error| panic!("current_exe: {error}"));
    let mut child = std::process::Command::new(this)
        .args(["--exact", path, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env(setting, "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("running the child: {error}"));
    let started = std::time::Instant::now();
    while child.try_wait().ok().flatten().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{path}: the child still runs after a minute: a wait without end");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap_or_else(|error| panic!("the child's output: {error}"));
    let stdout = std::string::String::from_utf8_lossy(&output.stdout);
    let stderr = std::string::String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success() && stdout.contains("1 passed"), "child failed:\n{stdout}\n{stderr}");
    stderr
}

/// Set in the environment of a child test process ([`run_child`]).
#[cfg(test)]
const CHILD: &str = "LPAI_ASYNC_CHILD";

/// The fallback on the host: a backend that answers QNN_COMMON_ERROR_NOT_SUPPORTED to graphExecuteAsync (the
/// contract model with `LPAI_CONTRACT_NO_EXECUTE_ASYNC=1`, read at backendCreate, so in a process of its own).
#[cfg(test)]
mod fallback {
    use super::*;
    use crate::platform::{set_log_level, Level};
    use std::string::ToString;

    const LINE: &str = "the backend executes synchronously (it answered QNN_COMMON_ERROR_NOT_SUPPORTED";

    /// In the child: four started frames on the synchronous path, with the right outputs.
    fn run_frames_synchronously() -> Result<(), std::string::String> {
        crate::testing::host::register_contract_model();
        set_log_level(Some(Level::Info));
        let libraries = shared_libraries().ok_or("the contract model's libraries do not open")?;
        let mut embed = loaded(&libraries, BINARY, 2).map_err(|error| error.to_string())?;
        for (input, reference) in FRAMES {
            lpai_direct::codec::copy_prefix(embed.input_mut(0).map_err(|error| error.to_string())?, input);
            embed.start_frame().map_err(|error| error.to_string())?;
            // Ran inside start_frame: already complete.
            let state = embed.poll_frame().map_err(|error| error.to_string())?;
            if !matches!(state, FrameState::Ready(_)) || embed.output(0).ok() != Some(reference.as_slice()) {
                return Err(std::format!("frame not ready after a synchronous start, or wrong output: {state:?}"));
            }
        }
        if embed.executes_async() != Some(false) {
            return Err("executes_async is not Some(false) on a backend without it".into());
        }
        Ok(())
    }

    #[test]
    #[cfg_attr(miri, ignore)] // runs itself as a child process
    fn a_backend_without_execute_async_runs_frames_synchronously_with_one_info_line() {
        if std::env::var_os(CHILD).is_some() {
            run_frames_synchronously().unwrap_or_else(|error| panic!("child: {error}"));
            return;
        }
        let name = "testing::asynchronous::fallback::a_backend_without_execute_async_runs_frames_synchronously_with_one_info_line";
        let stderr = run_child(name, "LPAI_CONTRACT_NO_EXECUTE_ASYNC");
        assert_eq!(stderr.matches(LINE).count(), 1, "one fallback line for four frames, stderr:\n{stderr}");
    }
}

/// Bounded teardown on the host: a backend that withholds its notifications (the contract model with
/// `LPAI_CONTRACT_WITHHOLD_NOTIFY=1`, read at backendCreate, so in a process of its own). The parent runs each child
/// with a watchdog: a teardown that waited without end (or under the PD-wide lock) hangs the child, and fails.
#[cfg(test)]
mod withheld {
    use super::*;
    use crate::platform::{set_log_level, Level};
    use crate::runtime::TEARDOWN_WAIT_MS;
    use std::string::{String, ToString};

    /// In the child: a frame the backend never notifies; dropping its embedding returns after the bound, naming the
    /// graph, and leaks the arena (the backend may still write it) rather than free it.
    fn drop_with_a_frame_never_notified() -> Result<(), String> {
        crate::testing::host::register_contract_model();
        set_log_level(Some(Level::Error));
        let libraries = shared_libraries().ok_or("the contract model's libraries do not open")?;
        let mut embed = loaded(&libraries, BINARY, 1).map_err(|error| error.to_string())?;
        embed.start_frame().map_err(|error| error.to_string())?;
        let timed_out = embed.wait_frame_within(20);
        if !matches!(timed_out, Err(RuntimeError::FrameTimedOut { .. })) || !embed.frame_in_flight() {
            return Err(std::format!("wait_frame on a frame never notified answered {timed_out:?}"));
        }
        let arenas = crate::platform::host::Host::resources().blocks;
        drop(embed);
        // The arena and the libraries it shares stay: only the leak keeps the backend's writes from freed memory.
        if crate::platform::host::Host::resources().blocks != arenas {
            return Err("the arena of a context whose frame never ended was freed".into());
        }
        drop(libraries);
        if crate::platform::host::Host::resources().blocks != arenas {
            return Err("the libraries of a context whose frame never ended were freed".into());
        }
        Ok(())
    }

    #[test]
    #[cfg_attr(miri, ignore)] // runs itself as a child process
    fn dropping_an_embedding_whose_frame_is_never_notified_returns_after_the_bound_naming_the_graph() {
        if std::env::var_os(CHILD).is_some() {
            drop_with_a_frame_never_notified().unwrap_or_else(|error| panic!("child: {error}"));
            return;
        }
        let name = "testing::asynchronous::withheld::dropping_an_embedding_whose_frame_is_never_notified_returns_after_the_bound_naming_the_graph";
        let stderr = run_child(name, "LPAI_CONTRACT_WITHHOLD_NOTIFY");
        let line = std::format!("graph single: a frame is still executing {TEARDOWN_WAIT_MS} ms after its context");
        assert_eq!(stderr.matches(&line).count(), 1, "one line naming the graph and the bound, stderr:\n{stderr}");
    }

    /// Steps of the concurrent test, in the order they happened.
    static STEPS: AtomicU32 = AtomicU32::new(0);

    /// In the child: while one embedding's drop waits for a frame its backend has not notified, another thread loads
    /// and runs a second embedding in the same process, then lets the notification through; only then can the drop
    /// return. A drop that waited under the vendor-calls lock would keep the load waiting for good.
    fn load_while_a_drop_waits() -> Result<(), String> {
        crate::testing::host::register_contract_model();
        set_log_level(Some(Level::Error));
        let libraries = shared_libraries().ok_or("the contract model's libraries do not open")?;
        let mut first = loaded(&libraries, BINARY, 1).map_err(|error| error.to_string())?;
        first.start_frame().map_err(|error| error.to_string())?;
        let (sender, receiver) = std::sync::mpsc::channel::<Result<u32, String>>();
        let other = std::thread::spawn(move || {
            let Some(second_libraries) = shared_libraries() else {
                return sender.send(Err("the second thread's libraries do not open".into()));
            };
            let mut second = match loaded(&second_libraries, BINARY, 1) {
                Ok(second) => second,
                Err(error) => return sender.send(Err(error.to_string())),
            };
            let loaded_at = STEPS.fetch_add(1, Ordering::SeqCst);
            let ran = second.execute_frame().map(|ready| ready.is_some());
            drop(second);
            // Let the first embedding's notification through (once its execution ran): its drop may now end.
            while lpai_direct_contract_notify() == 0 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            sender.send(ran.map(|_| loaded_at).map_err(|error| error.to_string()))
        });
        drop(first);
        let dropped_at = STEPS.fetch_add(1, Ordering::SeqCst);
        let loaded_at = receiver.recv().map_err(|_| "the other thread sent nothing".to_string())??;
        let _ = other.join();
        if loaded_at >= dropped_at {
            return Err(std::format!("the other load came at step {loaded_at}, after the drop (step {dropped_at})"));
        }
        drop(libraries);
        Ok(())
    }

    /// The contract model's withheld notifications, made now.
    fn lpai_direct_contract_notify() -> usize {
        lpai_contract_model::notify_withheld()
    }

    #[test]
    #[cfg_attr(miri, ignore)] // runs itself as a child process
    fn another_handle_loads_while_a_drop_waits_for_a_frame() {
        if std::env::var_os(CHILD).is_some() {
            load_while_a_drop_waits().unwrap_or_else(|error| panic!("child: {error}"));
            return;
        }
        let name = "testing::asynchronous::withheld::another_handle_loads_while_a_drop_waits_for_a_frame";
        let stderr = run_child(name, "LPAI_CONTRACT_WITHHOLD_NOTIFY");
        assert!(!stderr.contains("a frame is still executing"), "the drop was not given its frame:\n{stderr}");
    }
}
