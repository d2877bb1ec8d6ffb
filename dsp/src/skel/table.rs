//! The skel's handle table: several open handles at once, each used by one call at a time, none ever waited for.
//!
//! Each slot has one atomic word holding the slot's generation and status (free, idle, busy, closing), and a
//! pointer to its session, which lives in memory allocated when the handle opens. A handle carries its slot and
//! generation, so a closed handle's number never works again and a stale call is refused from the word alone,
//! without ever taking the slot. No method waits: a call on a busy handle answers busy at once, and a close that
//! arrives while a call runs marks the handle closing and returns; the running call then frees the session when it
//! ends and answers that the handle was closed under it.

use super::session::Session;
use core::cell::UnsafeCell;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, Ordering};

/// Most handles open at once.
pub(crate) const MAX_SESSIONS: usize = if cfg!(target_arch = "hexagon") { 4 } else { 16 };

const FREE: u32 = 0;
const IDLE: u32 = 1;
const BUSY: u32 = 2;
const CLOSING: u32 = 3;
const STATUS_BITS: u32 = 2;
const STATUS_MASK: u32 = (1 << STATUS_BITS) - 1;
/// Generations count in the word's upper 30 bits, wrapping.
pub(crate) const GENERATION_MASK: u32 = u32::MAX >> STATUS_BITS;
/// High bits of every handle this skel gives out ("LP").
const HANDLE_TAG: u64 = 0x4C50 << 48;

/// Why a handle was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HandleError {
    /// Not a handle this skel gave out, or one already closed (or closed while this call ran).
    Invalid,
    /// Every slot is in use.
    Full,
    /// The PD heap has no room for a new session.
    NoMemory,
    /// Another call is using the handle right now (one call at a time per handle).
    Busy,
}

pub(crate) struct Slot {
    /// `generation << 2 | status`.
    word: AtomicU32,
    /// The session, `Some` from open until the slot is freed.
    block: UnsafeCell<Option<NonNull<Session>>>,
}

// SAFETY: `block` is read or written only by the thread that moved `word` out of FREE (to open) or out of IDLE (to
// BUSY for a call, to CLOSING for a close), until that thread moves it on; the Acquire of that move and the Release
// of the next one order every access. A close that finds the slot BUSY only moves `word` to CLOSING, never touches
// `block`, and leaves the freeing to the call holding it.
unsafe impl Sync for Slot {}

static SLOTS: [Slot; MAX_SESSIONS] =
    [const { Slot { word: AtomicU32::new(FREE), block: UnsafeCell::new(None) } }; MAX_SESSIONS];

const fn word(generation: u32, status: u32) -> u32 {
    (generation << STATUS_BITS) | status
}

const fn generation_of(word: u32) -> u32 {
    word >> STATUS_BITS
}

pub(crate) fn handle_of(slot: usize, generation: u32) -> u64 {
    HANDLE_TAG | (u64::from(generation) << 8) | slot as u64
}

/// The slot and generation a handle names, if it is one this skel could have given out.
pub(crate) fn slot_of(handle: u64) -> Option<(&'static Slot, u32)> {
    let index = (handle & 0xFF) as usize;
    let generation = ((handle >> 8) & u64::from(GENERATION_MASK)) as u32;
    let slot = SLOTS.get(index)?;
    (handle == handle_of(index, generation)).then_some((slot, generation))
}

/// Exclusive use of one slot's session from a call, ended by [`Busy::finish`]. Builds for the DSP abort on panic,
/// so nothing can skip it there; an unwinding host test could only leave its own slot busy.
struct Busy {
    slot: &'static Slot,
    generation: u32,
}

impl Busy {
    /// Moves `slot` from IDLE to BUSY if `generation` is current. The word alone decides: a stale handle never
    /// changes it, so it never makes the slot's live owner see busy.
    fn take(slot: &'static Slot, generation: u32) -> Result<Busy, HandleError> {
        let idle = word(generation, IDLE);
        match slot.word.compare_exchange(idle, word(generation, BUSY), Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => Ok(Busy { slot, generation }),
            Err(seen) if generation_of(seen) == generation && seen & STATUS_MASK == BUSY => Err(HandleError::Busy),
            Err(_) => Err(HandleError::Invalid),
        }
    }

    /// The session's block.
    fn block(&self) -> Option<NonNull<Session>> {
        // SAFETY: this thread moved the word to BUSY (see `Slot`'s rule).
        unsafe { *self.slot.block.get() }
    }

    /// Ends the call: back to IDLE, or, when a close arrived meanwhile, frees the session and the slot. Answers
    /// whether the handle is still open.
    fn finish(self) -> bool {
        let (busy, idle) = (word(self.generation, BUSY), word(self.generation, IDLE));
        let still_open = self.slot.word.compare_exchange(busy, idle, Ordering::Release, Ordering::Relaxed).is_ok();
        if !still_open {
            // The only other move from BUSY is a close's, to CLOSING: this thread still owns the session.
            free(self.slot, self.generation);
        }
        still_open
    }
}

/// Frees the session of a slot this thread holds (see `Slot`'s rule) and makes the slot free for a new generation.
fn free(slot: &'static Slot, generation: u32) {
    // SAFETY: this thread holds the slot (see `Slot`'s rule).
    let block = unsafe { (*slot.block.get()).take() };
    if let Some(block) = block {
        // SAFETY: the block came from `Session::create`, and the slot no longer refers to it.
        unsafe { Session::destroy(block) };
    }
    let next = generation.wrapping_add(1) & GENERATION_MASK;
    slot.word.store(word(next, FREE), Ordering::Release);
}

/// How many slots hold a handle (open, in a call or closing), for the host build's resource report.
#[cfg(not(target_arch = "hexagon"))]
pub(super) fn open_count() -> usize {
    SLOTS.iter().filter(|slot| slot.word.load(Ordering::Relaxed) & STATUS_MASK != FREE).count()
}

/// Opens a new session and returns its handle.
pub(crate) fn open() -> Result<u64, HandleError> {
    for (index, slot) in SLOTS.iter().enumerate() {
        let seen = slot.word.load(Ordering::Relaxed);
        if seen & STATUS_MASK != FREE {
            continue;
        }
        let generation = generation_of(seen);
        let claimed = word(generation, BUSY);
        if slot.word.compare_exchange(seen, claimed, Ordering::Acquire, Ordering::Relaxed).is_err() {
            continue;
        }
        let Some(block) = Session::create() else {
            slot.word.store(seen, Ordering::Release);
            return Err(HandleError::NoMemory);
        };
        // SAFETY: this thread moved the word to BUSY.
        unsafe { *slot.block.get() = Some(block) };
        slot.word.store(word(generation, IDLE), Ordering::Release);
        return Ok(handle_of(index, generation));
    }
    Err(HandleError::Full)
}

/// Runs `work` on the session behind `handle`, with no other call touching it meanwhile. When the handle is
/// closed while `work` runs, the session is freed right after and the answer is `Invalid`.
pub(crate) fn with_session<R>(handle: u64, work: impl FnOnce(&mut Session) -> R) -> Result<R, HandleError> {
    let (slot, generation) = slot_of(handle).ok_or(HandleError::Invalid)?;
    let busy = Busy::take(slot, generation)?;
    let result = busy.block().map(|block| {
        // SAFETY: the block lives until `free`, which only the holder of the slot calls; this thread holds it.
        let session = unsafe { Session::of(block) };
        work(session)
    });
    match (busy.finish(), result) {
        (true, Some(result)) => Ok(result),
        _ => Err(HandleError::Invalid),
    }
}

/// Closes `handle`. An idle handle's session is freed now; a busy one is marked closing and freed by the call
/// that holds it when that call ends. Either way the handle refuses every call from now on.
pub(crate) fn close(handle: u64) -> Result<(), HandleError> {
    let (slot, generation) = slot_of(handle).ok_or(HandleError::Invalid)?;
    let (idle, busy, closing) = (word(generation, IDLE), word(generation, BUSY), word(generation, CLOSING));
    // Each retry follows a change another thread made (a call starting or ending), so this never waits; the
    // bound keeps even a flood of calls from holding a close here.
    for _ in 0..16 {
        // Idle: closing from now on (a call arriving meanwhile is refused as closed, not busy), then freed here.
        match slot.word.compare_exchange(idle, closing, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => {
                free(slot, generation);
                return Ok(());
            }
            // Busy: the running call frees the session when it ends.
            Err(seen) if seen == busy => {
                if slot.word.compare_exchange(busy, closing, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                    return Ok(());
                }
            }
            Err(_) => return Err(HandleError::Invalid),
        }
    }
    Err(HandleError::Busy)
}
