//! The PD's completion signals: one fixed pool of [`SIGNAL_SLOTS`] platform signals outside any arena, each made
//! at its first claim and never ended. A thread that blocks for a frame claims one for the wait and gives it back
//! after. Because the signals outlive every arena, a backend's notify thread may still set one after the memory of
//! the frame it completed is gone: the late set only wakes the slot's next holder early, who looks at its own
//! frame's state again and waits on.

use super::{Current, Platform, PlatformError, Woken};
use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicU32, Ordering};

/// How many threads of the PD may block for a frame at once (each a `qurt_signal_t` of 16 bytes kept for the life
/// of the PD; a wait beyond them is refused, the frame left in flight to poll or wait for again).
pub const SIGNAL_SLOTS: usize = 4;

/// Every slot's bit.
const ALL_SLOTS: u32 = (1 << SIGNAL_SLOTS) - 1;

/// A slot's storage: written once by [`claim`] (the first claimant, which holds the slot alone), then shared.
struct Slot(UnsafeCell<MaybeUninit<<Current as Platform>::Signal>>);

// SAFETY: the storage is written once, by the one thread holding the slot's claim, before its bit in `MADE` is
// published; afterwards it is only shared, and the platform's signals are `Sync`.
unsafe impl Sync for Slot {}

static POOL: [Slot; SIGNAL_SLOTS] = [const { Slot(UnsafeCell::new(MaybeUninit::uninit())) }; SIGNAL_SLOTS];
/// The slots claimed now, one bit each.
static CLAIMED: AtomicU32 = AtomicU32::new(0);
/// The slots whose signal was made (once, at the first claim).
static MADE: AtomicU32 = AtomicU32::new(0);

/// A slot of the pool, claimed by one graph. Only [`claim`] makes one, so its index is always in the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalSlot(u8);

impl SignalSlot {
    /// The slot's index, to keep in memory a notify thread reads.
    pub fn index(self) -> u32 {
        u32::from(self.0)
    }

    /// The slot with `index` (as [`SignalSlot::index`] gave it); `None` beyond the pool.
    pub fn from_index(index: u32) -> Option<SignalSlot> {
        (index < SIGNAL_SLOTS as u32).then_some(SignalSlot(index as u8))
    }

    fn signal(self) -> Option<&'static <Current as Platform>::Signal> {
        let slot = POOL.get(usize::from(self.0))?;
        // SAFETY: a `SignalSlot` exists only after `claim` made its signal (published in `MADE` before it returned),
        // and the storage is never written again.
        Some(unsafe { (*slot.0.get()).assume_init_ref() })
    }
}

/// Claims a free slot, making its signal at the slot's first claim; `None` when all [`SIGNAL_SLOTS`] are held.
pub fn claim() -> Option<SignalSlot> {
    let mut claimed = CLAIMED.load(Ordering::Relaxed);
    // Retries only when another thread claimed or released a slot in between (lock-free; nothing waits).
    let bit = loop {
        let free = !claimed & ALL_SLOTS;
        if free == 0 {
            return None;
        }
        let bit = free & free.wrapping_neg();
        match CLAIMED.compare_exchange_weak(claimed, claimed | bit, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => break bit,
            Err(now) => claimed = now,
        }
    };
    let index = bit.trailing_zeros();
    if MADE.load(Ordering::Acquire) & bit == 0 {
        let slot = POOL.get(index as usize)?;
        // SAFETY: this thread holds the slot's claim and its signal was never made, so nothing else touches the
        // storage; static storage stays where it is for the life of the PD.
        unsafe { Current::signal_init((*slot.0.get()).as_mut_ptr()) };
        MADE.fetch_or(bit, Ordering::Release);
    }
    SignalSlot::from_index(index)
}

/// Gives a slot back. A set still on its way from a late notifier is harmless: it wakes the next holder early.
pub fn release(slot: SignalSlot) {
    CLAIMED.fetch_and(!(1 << slot.0), Ordering::Release);
}

/// Sets the slot's signal (from any thread).
pub fn set(slot: SignalSlot) {
    if let Some(signal) = slot.signal() {
        Current::signal_set(signal);
    }
}

/// Waits at most `micros` for the slot's signal ([`Platform::signal_wait`]).
pub fn wait(slot: SignalSlot, micros: u64) -> Result<Woken, PlatformError> {
    let signal = slot.signal().ok_or(PlatformError::Unsupported)?;
    Current::signal_wait(signal, micros)
}

/// Slots claimed now (host builds: for leak checks in tests).
#[cfg(not(target_arch = "hexagon"))]
pub fn claimed() -> usize {
    CLAIMED.load(Ordering::Relaxed).count_ones() as usize
}
