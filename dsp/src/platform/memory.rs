//! Memory from the platform's heap ([`Platform::allocate`]): bytes owned by one value ([`Memory`]: a context's
//! arena, a job's buffers, a module's window), or one value shared by several owners ([`Shared`]: a handle's
//! libraries and the contexts loaded on them); released when the last owner drops.

use super::{Current, Platform};
use core::ops::Deref;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};

/// `bytes` of memory from [`Platform::allocate`], released when dropped.
pub struct Memory {
    start: NonNull<u8>,
    bytes: usize,
}

impl Memory {
    /// `bytes` of memory from the PD heap (8-aligned at least); `None` when it has none to give.
    pub fn allocate(bytes: usize) -> Option<Memory> {
        Current::allocate(bytes).ok().map(|start| Memory { start, bytes })
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.bytes
    }

    /// The memory, to read.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `allocate` gave `bytes` bytes, owned by this value alone until it drops; `&self` allows no
        // mutable borrow meanwhile.
        unsafe { core::slice::from_raw_parts(self.start.as_ptr(), self.bytes) }
    }

    /// The memory, for the one owner.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `allocate` gave `bytes` bytes, owned by this value alone until it drops; `&mut self` makes
        // this borrow the only one.
        unsafe { core::slice::from_raw_parts_mut(self.start.as_ptr(), self.bytes) }
    }

    /// The memory as a pointer, the same for as long as this value lives (for an owner that hands it out itself).
    pub fn as_ptr(&mut self) -> NonNull<[u8]> {
        NonNull::slice_from_raw_parts(self.start, self.bytes)
    }
}

impl AsRef<[u8]> for Memory {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

impl AsMut<[u8]> for Memory {
    fn as_mut(&mut self) -> &mut [u8] {
        self.bytes_mut()
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // SAFETY: exactly what `allocate` gave; owners drop whatever borrows the memory first.
        unsafe { Current::release(self.start, self.bytes) };
    }
}

/// A value on the PD heap that several owners share, read-only, at an address that never changes: dropped in
/// place, and its memory released, when the last owner drops.
pub struct Shared<T> {
    cell: NonNull<SharedCell<T>>,
}

struct SharedCell<T> {
    owners: AtomicUsize,
    value: T,
}

impl<T> Shared<T> {
    /// Moves `value` to the PD heap; gives it back when the heap has no room.
    pub fn new(value: T) -> Result<Shared<T>, T> {
        const { assert!(core::mem::align_of::<SharedCell<T>>() <= 8, "Platform::allocate promises 8 bytes") };
        let Ok(memory) = Current::allocate(core::mem::size_of::<SharedCell<T>>()) else { return Err(value) };
        let cell = memory.cast::<SharedCell<T>>();
        // SAFETY: fresh memory of the cell's size and (at most 8-byte) alignment, written once before any read.
        unsafe { cell.as_ptr().write(SharedCell { owners: AtomicUsize::new(1), value }) };
        Ok(Shared { cell })
    }

    fn cell(&self) -> &SharedCell<T> {
        // SAFETY: written by `new` and alive while any owner (this one included) lives; only shared borrows.
        unsafe { self.cell.as_ref() }
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Shared<T> {
        // Saturates instead of wrapping: a count that cannot grow keeps the value for good, never frees it early.
        let owners = &self.cell().owners;
        let _ = owners.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |count| count.checked_add(1));
        Shared { cell: self.cell }
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.cell().value
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        let owners = &self.cell().owners;
        if owners.load(Ordering::Acquire) == usize::MAX || owners.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        // SAFETY: this was the last owner: nothing else refers to the value or its memory, which `new` allocated
        // with exactly this size.
        unsafe {
            self.cell.as_ptr().drop_in_place();
            Current::release(self.cell.cast(), core::mem::size_of::<SharedCell<T>>());
        }
    }
}
