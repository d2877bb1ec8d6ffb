//! Memory from the platform's heap ([`Platform::allocate`]: a context's arena, a job's buffers, a module's model),
//! owned by one value and released when it drops.

use super::{Current, Platform};
use core::ptr::NonNull;

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

    /// The memory for as long as the caller says.
    ///
    /// # Safety
    /// The memory must outlive `'m` (this value is not dropped before), and nothing else may use it during `'m`
    /// (no other call of this function or of [`Memory::bytes_mut`] while the borrow lives).
    pub unsafe fn bytes_for<'m>(&mut self) -> &'m mut [u8] {
        // SAFETY: `allocate` gave `bytes` bytes; the caller promises the rest.
        unsafe { core::slice::from_raw_parts_mut(self.start.as_ptr(), self.bytes) }
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // SAFETY: exactly what `allocate` gave; owners drop whatever borrows the memory first.
        unsafe { Current::release(self.start, self.bytes) };
    }
}
