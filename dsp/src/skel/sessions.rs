//! The skel's handle table: several open handles at once, each with its own settings, libraries and contexts,
//! each used by one call at a time; a closed handle's number is never valid again.
//!
//! Sessions live in a static table and never move. A session's libraries sit in a separate static cell (see
//! `state`), so its contexts may borrow them while each call borrows the session itself; libraries are never
//! replaced while a context exists.

use super::state::Session;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU32, Ordering};

/// Most handles open at once.
pub const MAX_SESSIONS: usize = if cfg!(target_arch = "hexagon") { 4 } else { 16 };

const FREE: u32 = 0;
const IDLE: u32 = 1;
const BUSY: u32 = 2;
/// High bits of every handle this skel gives out ("LP").
const HANDLE_TAG: u64 = 0x4C50 << 48;

struct Slot {
    state: AtomicU32,
    session: UnsafeCell<Session>,
}

// SAFETY: a session is only touched by the thread that moved its slot to BUSY (see `lock`).
unsafe impl Sync for Slot {}

static SLOTS: [Slot; MAX_SESSIONS] =
    [const { Slot { state: AtomicU32::new(FREE), session: UnsafeCell::new(Session::EMPTY) } }; MAX_SESSIONS];

/// Why a handle was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandleError {
    /// Not a handle this skel gave out, or one already closed.
    Invalid,
    /// Every slot is in use.
    Full,
    /// Another call is using the handle right now (one call at a time per handle).
    Busy,
}

fn handle_of(slot: usize, generation: u32) -> u64 {
    HANDLE_TAG | (u64::from(generation) << 8) | slot as u64
}

fn slot_of(handle: u64) -> Option<(usize, u32)> {
    let slot = (handle & 0xFF) as usize;
    let generation = ((handle >> 8) & 0xFFFF_FFFF) as u32;
    (slot < MAX_SESSIONS && handle == handle_of(slot, generation)).then_some((slot, generation))
}

/// Exclusive use of one slot's session; the slot goes back to IDLE when the guard is dropped.
struct Guard<'s> {
    slot: &'s Slot,
    release_to: u32,
}

impl core::ops::Deref for Guard<'_> {
    type Target = Session;
    fn deref(&self) -> &Session {
        // SAFETY: this guard's thread moved the slot to BUSY, so no other reference to the session exists.
        unsafe { &*self.slot.session.get() }
    }
}

impl core::ops::DerefMut for Guard<'_> {
    fn deref_mut(&mut self) -> &mut Session {
        // SAFETY: as for `deref`; `&mut self` makes this the only borrow.
        unsafe { &mut *self.slot.session.get() }
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.slot.state.store(self.release_to, Ordering::Release);
    }
}

/// Takes a slot for exclusive use. From IDLE (an open handle): `Busy` while another call holds it, unless
/// `wait` (close waits for the running call to finish). From FREE: claims a free slot, `Invalid` if taken.
fn lock(slot: &Slot, from: u32, wait: bool) -> Result<Guard<'_>, HandleError> {
    loop {
        match slot.state.compare_exchange_weak(from, BUSY, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => return Ok(Guard { slot, release_to: IDLE }),
            Err(BUSY) if from == IDLE && wait => core::hint::spin_loop(),
            Err(BUSY) if from == IDLE => return Err(HandleError::Busy),
            Err(current) if current == from => core::hint::spin_loop(),
            Err(_) => return Err(HandleError::Invalid),
        }
    }
}

/// Opens a new session and returns its handle.
pub fn open() -> Result<u64, HandleError> {
    for (index, slot) in SLOTS.iter().enumerate() {
        if let Ok(mut session) = lock(slot, FREE, false) {
            session.table_index = index;
            session.reset();
            return Ok(handle_of(index, session.generation));
        }
    }
    Err(HandleError::Full)
}

/// Runs `work` on the session behind `handle`, with no other call touching it meanwhile.
pub fn with_session<R>(handle: u64, work: impl FnOnce(&mut Session) -> R) -> Result<R, HandleError> {
    let (index, generation) = slot_of(handle).ok_or(HandleError::Invalid)?;
    let mut session = lock(SLOTS.get(index).ok_or(HandleError::Invalid)?, IDLE, false)?;
    if session.generation != generation {
        return Err(HandleError::Invalid);
    }
    Ok(work(&mut session))
}

/// Closes `handle`: frees its contexts, then its libraries; the handle is invalid from then on.
pub fn close(handle: u64) -> Result<(), HandleError> {
    let (index, generation) = slot_of(handle).ok_or(HandleError::Invalid)?;
    let mut session = lock(SLOTS.get(index).ok_or(HandleError::Invalid)?, IDLE, true)?;
    if session.generation != generation {
        return Err(HandleError::Invalid);
    }
    session.reset();
    session.generation = session.generation.wrapping_add(1);
    session.release_to = FREE;
    Ok(())
}

crate::self_tests! {
    fn handles_are_distinct_and_dead_after_close() {
        let first = open();
        let second = open();
        check!(matches!((first, second), (Ok(a), Ok(b)) if a != b));
        let (Ok(first), Ok(second)) = (first, second) else {
            return Ok(());
        };
        check!(with_session(first, |_| 1) == Ok(1));
        check!(close(first).is_ok());
        check!(with_session(first, |_| 1) == Err(HandleError::Invalid));
        check!(close(first) == Err(HandleError::Invalid));
        check!(with_session(0, |_| 1) == Err(HandleError::Invalid));
        check!(with_session(second | 0xFF, |_| 1) == Err(HandleError::Invalid));
        check!(with_session(second | (0xAB << 40), |_| 1) == Err(HandleError::Invalid));
        let nested = with_session(second, |_| with_session(second, |_| 1));
        check!(nested == Ok(Err(HandleError::Busy)));
        check!(close(second).is_ok());
    }
}
