//! Host test (also run under Miri): threads racing on the skel's entry points. Workers open handles and run
//! calls on them while a closer closes handles that are in use and a prowler calls stale and random handles. Every
//! answer must be one the call may give, and no handle may stay taken afterwards.

use super::skel_end_to_end::{call, close, open};
use lpai_direct::codec;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::vec::Vec;

const BAD_PARAMETER: u32 = 0x8000_040E;
const BUSY: u32 = 0x8000_040D;
const BAD_HANDLE: u32 = 0x8000_042C;

/// Rounds of work each worker does (few under Miri, which is slow).
const ROUNDS: u32 = if cfg!(miri) { 3 } else { 200 };
const WORKERS: usize = 4;

/// A call that must fail on any open handle with no context: unload of a context that does not exist.
fn unload_nothing(handle: u64) -> Result<(), u32> {
    call(handle, codec::unload::METHOD, |e| e.i32(codec::unload::CONTEXT_ID, 7).map(drop), |_| Ok(()))
}

/// The handle's last error message.
fn last_error(handle: u64) -> Result<Vec<u8>, u32> {
    super::skel_end_to_end::last_error(handle).map(|text| text.as_str().as_bytes().to_vec())
}

/// Calls a worker makes on its first handle while waiting for the closer to close it under them.
const WAIT_FOR_CLOSE_CALLS: u32 = if cfg!(miri) { 20_000 } else { 10_000_000 };

/// One worker round: open, fail a call, read its message, close. A handle closed under the worker by the
/// closer answers BAD_HANDLE from then on; nothing else may come back. With `until_closed` the worker keeps calling
/// until the closer has closed the handle under it, so every run sees a close race a use.
fn worker_round(published: &AtomicU64, until_closed: bool) -> Result<(), std::string::String> {
    let handle = open().ok_or("open failed")?;
    published.store(handle, Ordering::Release);
    if until_closed {
        for _ in 0..WAIT_FOR_CLOSE_CALLS {
            match unload_nothing(handle) {
                Err(BAD_PARAMETER) => std::thread::yield_now(),
                Err(BAD_HANDLE) => return Ok(()),
                other => return Err(std::format!("unload on a live handle answered {other:?}")),
            }
        }
        return Err("the closer never closed the handle in use".into());
    }
    for _ in 0..3 {
        match unload_nothing(handle) {
            Err(BAD_PARAMETER) => {}
            Err(BAD_HANDLE) => return Ok(()),
            other => return Err(std::format!("unload on a live handle answered {other:?}")),
        }
        match last_error(handle) {
            Ok(message) if message == b"no loaded context has id 7" => {}
            Err(BAD_HANDLE) => return Ok(()),
            other => return Err(std::format!("last_error answered {other:?}")),
        }
    }
    match close(handle) as u32 {
        0 | BAD_HANDLE => Ok(()),
        other => Err(std::format!("close answered {other:#x}")),
    }
}

#[test]
fn racing_calls_closes_and_stale_handles_answer_only_what_they_may() {
    let published: Arc<[AtomicU64; WORKERS]> = Arc::new([const { AtomicU64::new(0) }; WORKERS]);
    let done = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..WORKERS)
        .map(|index| {
            let published = Arc::clone(&published);
            std::thread::spawn(move || -> Result<(), std::string::String> {
                for round in 0..ROUNDS {
                    worker_round(&published[index], round == 0)?;
                }
                Ok(())
            })
        })
        .collect();
    let closer = {
        let (published, done) = (Arc::clone(&published), Arc::clone(&done));
        std::thread::spawn(move || -> Result<u32, std::string::String> {
            let mut closed = 0u32;
            while !done.load(Ordering::Acquire) {
                for slot in published.iter() {
                    match close(slot.load(Ordering::Acquire)) as u32 {
                        0 => closed += 1,
                        BAD_HANDLE | BUSY => {}
                        other => return Err(std::format!("close of an in-use handle answered {other:#x}")),
                    }
                }
                std::thread::yield_now();
            }
            Ok(closed)
        })
    };
    let prowler = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || -> Result<(), std::string::String> {
            let stale = open().ok_or("open failed")?;
            if close(stale) != 0 {
                return Err("closing a fresh handle failed".into());
            }
            let mut random = 0x9E37_79B9_7F4A_7C15u64;
            while !done.load(Ordering::Acquire) {
                random ^= random << 13;
                random ^= random >> 7;
                random ^= random << 17;
                for handle in [stale, random, random & 0xFFFF_FFFF_FFFF_FF03] {
                    if handle == 0 {
                        continue;
                    }
                    match unload_nothing(handle) {
                        Err(BAD_HANDLE) => {}
                        other => return Err(std::format!("a stale or random handle {handle:#x} answered {other:?}")),
                    }
                }
                std::thread::yield_now();
            }
            Ok(())
        })
    };
    let results: Vec<_> = workers.into_iter().map(|worker| worker.join().expect("a worker panicked")).collect();
    done.store(true, Ordering::Release);
    let closed = closer.join().expect("the closer panicked");
    let prowled = prowler.join().expect("the prowler panicked");
    for result in results {
        result.unwrap();
    }
    let closed = closed.unwrap();
    prowled.unwrap();
    // Each worker's first handle was closed under it by the closer, at least.
    assert!(closed >= WORKERS as u32, "the closer closed {closed} handles in use, fewer than the {WORKERS} workers");
    // Every handle the workers used is closed now: none answers anything but BAD_HANDLE.
    for slot in published.iter() {
        assert_eq!(unload_nothing(slot.load(Ordering::Acquire)), Err(BAD_HANDLE));
    }
}
