//! One lock for the targets that drive process-wide state (the contract model's backend, the fake system library's
//! current answer), so that the replay test's threads take turns.

use std::sync::{Mutex, MutexGuard, PoisonError};

static LOCK: Mutex<()> = Mutex::new(());

/// Holds the lock until dropped; a panic of an earlier holder (a failed replay) does not block the others.
pub(crate) fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}
