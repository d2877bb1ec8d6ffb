//! The lock around the model's state: a host mutex, or on Hexagon the PD's QuRT mutex (blocking, never spinning).
//!
//! [`with_state`] holds the lock only for its closure. The closure never calls back into the lock and never logs:
//! callers return what went wrong and report it after the lock is released.

use crate::state::State;

#[cfg(not(target_arch = "hexagon"))]
static STATE: std::sync::Mutex<State> = std::sync::Mutex::new(State::INITIAL);

/// Runs `action` on the state under the lock.
#[cfg(not(target_arch = "hexagon"))]
pub(crate) fn with_state<R>(action: impl FnOnce(&mut State) -> R) -> R {
    // A poisoned lock only means another thread panicked in a test; the state itself is always consistent
    // between calls, because every closure validates before it writes.
    let mut state = STATE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    action(&mut state)
}

#[cfg(target_arch = "hexagon")]
mod qurt {
    use super::State;
    use core::cell::UnsafeCell;

    /// `qurt_mutex_t`: four 32-bit words, 8-byte aligned.
    #[repr(C, align(8))]
    pub(super) struct QurtMutex([u32; 4]);

    extern "C" {
        fn qurt_mutex_lock(mutex: *mut QurtMutex);
        fn qurt_mutex_unlock(mutex: *mut QurtMutex);
    }

    /// The mutex and the state it guards.
    pub(super) struct Locked {
        mutex: UnsafeCell<QurtMutex>,
        state: UnsafeCell<State>,
    }

    // SAFETY: the mutex words are only touched by `qurt_mutex_lock`/`qurt_mutex_unlock`, which QuRT makes safe to
    // call from any thread of the PD; the state is only reached between those two calls.
    unsafe impl Sync for Locked {}

    /// Statically initialised as `QURT_MUTEX_INIT` does: holder 0xFE, count 0, queue 0x1F, wait count 0.
    pub(super) static LOCKED: Locked =
        Locked { mutex: UnsafeCell::new(QurtMutex([0xFE, 0, 0x1F, 0])), state: UnsafeCell::new(State::INITIAL) };

    impl Locked {
        pub(super) fn run<R>(&self, action: impl FnOnce(&mut State) -> R) -> R {
            // SAFETY: a statically initialised QuRT mutex; this thread does not hold it (no closure re-enters).
            unsafe { qurt_mutex_lock(self.mutex.get()) };
            // SAFETY: the mutex is held, so this is the only reference to the state until it is released below.
            let result = action(unsafe { &mut *self.state.get() });
            // SAFETY: this thread holds the mutex (nothing on Hexagon unwinds past this point).
            unsafe { qurt_mutex_unlock(self.mutex.get()) };
            result
        }
    }
}

/// Runs `action` on the state under the lock.
#[cfg(target_arch = "hexagon")]
pub(crate) fn with_state<R>(action: impl FnOnce(&mut State) -> R) -> R {
    qurt::LOCKED.run(action)
}
