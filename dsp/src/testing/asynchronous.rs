//! Self-tests of asynchronous frames ([`crate::embed::Embed::start_frame`]) on the contract model of libQnnLpai
//! (host: its queue thread notifies after writing the outputs; Hexagon: it notifies inside graphExecuteAsync):
//! the same outputs as the synchronous path, poll and wait, the completion callback, EARLY_TERMINATION through a
//! started frame, two input sets, and every misuse refused by name.

use crate::embed::Embed;
use crate::platform::{Current, Platform};
use crate::runtime::RuntimeError;
use crate::runtime::{BackendOptions, Binary, Borrowed, FrameState, Libraries, LoadRequest, PersistentBinary};
use crate::testing::contract_model_registered;
use crate::testing::contract_single::{BINARY, FRAMES};
use crate::testing::{CONTRACT_LPAI_LIBRARY as LPAI_LIBRARY_NAME, CONTRACT_SYSTEM_LIBRARY as SYSTEM_LIBRARY_NAME};
use core::sync::atomic::{AtomicU32, Ordering};

/// Arena for one embedding on the contract model (with room for a second input set).
const ARENA_BYTES: usize = 16 * 1024;

/// Firmware's copy of a binary: at the contract model's start alignment (128), padded to its size alignment.
#[repr(C, align(128))]
struct Model([u8; 896]);

impl Model {
    fn of(binary: &[u8]) -> Model {
        let mut model = Model([0; 896]);
        lpai_direct::codec::copy_prefix(&mut model.0, binary);
        model
    }
}

/// The `contract_stream` fixture: every 3rd execution answers EARLY_TERMINATION.
const STREAM_BINARY: &[u8] = include_bytes!("../../../tests/fixtures/contract_stream/contract_stream.bin");

/// Loads `binary` (the model's copy) with `sets` input sets.
fn load<'m>(embed: &mut Embed<Borrowed<'m>>, model: &'m Model, bytes: usize, sets: u32) -> Result<(), RuntimeError> {
    let binary = PersistentBinary::padded(&model.0, bytes).ok_or(RuntimeError::BinarySize(bytes as u64))?;
    embed.load(&LoadRequest::new(Binary::InPlace(binary)).with_input_sets(sets))
}

/// The contract model's libraries; `None` when they do not open.
fn open() -> Option<Libraries> {
    Libraries::open(LPAI_LIBRARY_NAME, Some(SYSTEM_LIBRARY_NAME), &BackendOptions::default()).ok()
}

/// Completions the callback saw, and the last QNN code it was given (+1, so 0 means none).
static NOTIFIED: AtomicU32 = AtomicU32::new(0);
static LAST_CODE: AtomicU32 = AtomicU32::new(0);

fn note(code: u32) {
    LAST_CODE.store(code + 1, Ordering::Relaxed);
    NOTIFIED.fetch_add(1, Ordering::Release);
}

static NOTE: fn(u32) = note;

crate::self_tests! {
    fn the_completion_signal_wakes_once_per_set_and_a_wait_nobody_can_end_is_refused() {
        let mut storage = core::mem::MaybeUninit::<<Current as Platform>::Signal>::uninit();
        // SAFETY: fresh, aligned storage that stays here until the destroy below.
        unsafe { Current::signal_init(storage.as_mut_ptr()) };
        // SAFETY: just made.
        let signal = unsafe { storage.assume_init_ref() };
        Current::signal_set(signal);
        check!(Current::signal_wait(signal) == Ok(()));
        // A qemu program has one thread: a second wait (the set was taken) could never end, and is refused.
        #[cfg(all(target_arch = "hexagon", feature = "linux-user"))]
        check!(Current::signal_wait(signal) == Err(crate::platform::PlatformError::Unsupported));
        Current::signal_set(signal);
        check!(Current::signal_wait(signal) == Ok(()));
        // SAFETY: nobody waits or sets any more.
        unsafe { Current::signal_destroy(storage.as_mut_ptr()) };
    }

    fn started_frames_give_the_synchronous_outputs_through_poll_and_wait() {
        check!(contract_model_registered());
        let model = Model::of(BINARY);
        let libraries = expect_some!(open());
        let mut arena = [0u8; ARENA_BYTES];
        let mut embed = Embed::new(Borrowed::new(&libraries, &mut arena));
        expect_ok!(load(&mut embed, &model, BINARY.len(), 1));
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
        let model = Model::of(BINARY);
        let libraries = expect_some!(open());
        let mut arena = [0u8; ARENA_BYTES];
        let mut embed = Embed::new(Borrowed::new(&libraries, &mut arena));
        expect_ok!(load(&mut embed, &model, BINARY.len(), 1));
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

    fn early_termination_through_a_started_frame_asks_for_the_next_frame() {
        check!(contract_model_registered());
        let model = Model::of(STREAM_BINARY);
        let libraries = expect_some!(open());
        let mut arena = [0u8; ARENA_BYTES];
        let mut embed = Embed::new(Borrowed::new(&libraries, &mut arena));
        expect_ok!(load(&mut embed, &model, STREAM_BINARY.len(), 1));
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
        let model = Model::of(BINARY);
        let libraries = expect_some!(open());
        let mut arena = [0u8; ARENA_BYTES];
        let mut single = [0u8; ARENA_BYTES];
        let mut embed = Embed::new(Borrowed::new(&libraries, &mut arena));
        expect_ok!(load(&mut embed, &model, BINARY.len(), 2));
        let mut one_set = Embed::new(Borrowed::new(&libraries, &mut single));
        expect_ok!(load(&mut one_set, &model, BINARY.len(), 1));
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
        let model = Model::of(BINARY);
        let libraries = expect_some!(open());
        let mut arena = [0u8; ARENA_BYTES];
        let mut embed = Embed::new(Borrowed::new(&libraries, &mut arena));
        check!(matches!(load(&mut embed, &model, BINARY.len(), 3), Err(RuntimeError::InputSets(3))));
        expect_ok!(load(&mut embed, &model, BINARY.len(), 1));
        lpai_direct::codec::copy_prefix(expect_ok!(embed.input_mut(0)), expect_some!(FRAMES.first()).0);
        expect_ok!(embed.start_frame());
        let refused = |result: Result<(), RuntimeError>, what: &str| {
            matches!(result, Err(RuntimeError::FrameInFlight { refused, .. }) if refused == what)
        };
        check!(refused(embed.start_frame(), "a second start_frame"));
        check!(refused(embed.select_graph(0), "select_graph"));
        check!(refused(embed.output(0).map(|_| ()), "reading an output"));
        check!(refused(embed.output_pointer(0).map(|_| ()), "binding an output"));
        check!(refused(embed.input_mut(0).map(|_| ()), "writing the input set the frame reads"));
        check!(refused(embed.input_pointer(0).map(|_| ()), "writing the input set the frame reads"));
        check!(refused(embed.execute_frame().map(|_| ()), "a synchronous execute"));
        let again = expect_some!(PersistentBinary::padded(&model.0, BINARY.len()));
        check!(refused(embed.load(&LoadRequest::new(Binary::InPlace(again))), "load"));
        let line = crate::message!(expect_some!(embed.start_frame().err()));
        check!(line.as_str().starts_with("graph single: a frame is still executing, so a second start_frame"));
        check!(expect_ok!(embed.wait_frame()).is_some());
        check!(expect_ok!(embed.output(0)) == expect_some!(FRAMES.first()).1.as_slice());
    }
}

/// The fallback on the host: a backend that answers QNN_COMMON_ERROR_NOT_SUPPORTED to graphExecuteAsync (the
/// contract model with `LPAI_CONTRACT_NO_EXECUTE_ASYNC=1`, read at backendCreate, so in a process of its own).
#[cfg(test)]
mod fallback {
    use super::*;
    use crate::platform::{set_log_level, Level};
    use std::string::ToString;

    const CHILD: &str = "LPAI_ASYNC_FALLBACK_CHILD";
    const LINE: &str = "the backend executes synchronously (it answered QNN_COMMON_ERROR_NOT_SUPPORTED";

    /// In the child: four started frames on the synchronous path, with the right outputs.
    fn run_frames_synchronously() -> Result<(), std::string::String> {
        crate::testing::host::register_contract_model();
        set_log_level(Some(Level::Info));
        let model = Model::of(BINARY);
        let libraries = open().ok_or("the contract model's libraries do not open")?;
        let mut arena = [0u8; ARENA_BYTES];
        let mut embed = Embed::new(Borrowed::new(&libraries, &mut arena));
        load(&mut embed, &model, BINARY.len(), 2).map_err(|error| error.to_string())?;
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
        let this = std::env::current_exe().unwrap_or_else(|error| panic!("current_exe: {error}"));
        let name = "testing::asynchronous::fallback::a_backend_without_execute_async_runs_frames_synchronously_with_one_info_line";
        let output = std::process::Command::new(this)
            .args(["--exact", name, "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .env("LPAI_CONTRACT_NO_EXECUTE_ASYNC", "1")
            .output()
            .unwrap_or_else(|error| panic!("running the child: {error}"));
        let stderr = std::string::String::from_utf8_lossy(&output.stderr);
        let stdout = std::string::String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success() && stdout.contains("1 passed"), "child failed:\n{stdout}\n{stderr}");
        assert_eq!(stderr.matches(LINE).count(), 1, "one fallback line for four frames, stderr:\n{stderr}");
    }
}
