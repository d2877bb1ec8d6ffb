//! A caller-provided memory arena: aligned bump allocation, no heap, with a reported high-water mark.
//!
//! Everything the runtime keeps for a loaded model (the context binary, tensor tables, LPAI scratch and
//! persistent memory, quantization buffers) is carved out of one buffer the caller owns. Allocations are never
//! freed one by one; the whole arena goes when the caller drops its buffer.

use crate::platform::{Line, Message, Say};
use crate::say;
use core::cell::Cell;
use core::marker::PhantomData;

/// Not enough room left in the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArenaFull {
    /// What the allocation asked for, in bytes.
    pub requested: usize,
    /// Alignment asked for.
    pub align: usize,
    /// Bytes still free before alignment.
    pub available: usize,
    /// The arena's whole capacity.
    pub capacity: usize,
}

impl Say for ArenaFull {
    fn say(&self, f: &mut Line) {
        say!(f, Message::ArenaFull, self.requested, self.align, self.available, self.capacity)
    }
}

/// A bump allocator over a caller's buffer; allocations live as long as the buffer borrow `'buffer`.
pub struct Arena<'buffer> {
    base: *mut u8,
    capacity: usize,
    used: Cell<usize>,
    _buffer: PhantomData<&'buffer mut [u8]>,
}

impl<'buffer> Arena<'buffer> {
    /// Takes the whole buffer for the arena.
    pub fn new(buffer: &'buffer mut [u8]) -> Self {
        Arena { base: buffer.as_mut_ptr(), capacity: buffer.len(), used: Cell::new(0), _buffer: PhantomData }
    }

    /// Bytes handed out so far, alignment padding included: the high-water mark, since nothing is freed.
    pub fn used(&self) -> usize {
        self.used.get()
    }

    /// The buffer's size.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Hands out `size` zeroed bytes starting at a multiple of `align` (a power of two; 0 counts as 1). Out of
    /// line: every allocation of every type shares this one copy.
    #[inline(never)]
    pub fn bytes(&self, size: usize, align: usize) -> Result<&'buffer mut [u8], ArenaFull> {
        let align = align.max(1);
        let full =
            ArenaFull { requested: size, align, available: self.capacity - self.used.get(), capacity: self.capacity };
        if !align.is_power_of_two() {
            return Err(full);
        }
        let address = self.base as usize + self.used.get();
        let padding = address.wrapping_neg() & (align - 1);
        let start = self.used.get().checked_add(padding).ok_or(full)?;
        let end = start.checked_add(size).filter(|&end| end <= self.capacity).ok_or(full)?;
        self.used.set(end);
        // SAFETY: [start, end) lies inside the caller's buffer, which `'buffer` keeps borrowed, and no other
        // allocation overlaps it because `used` only grows.
        let slice = unsafe { core::slice::from_raw_parts_mut(self.base.add(start), size) };
        slice.fill(0);
        Ok(slice)
    }

    /// Hands out `count` copies of `value`, aligned for `T`.
    pub fn slice<T: Copy>(&self, count: usize, value: T) -> Result<&'buffer mut [T], ArenaFull> {
        let items = self.items(core::mem::size_of::<T>(), count, core::mem::align_of::<T>())?.cast::<T>();
        for index in 0..count {
            // SAFETY: `items` points at room for `count` properly aligned `T` slots.
            unsafe { items.add(index).write(value) };
        }
        // SAFETY: every slot was just initialised; the memory is exclusively ours for `'buffer`.
        Ok(unsafe { core::slice::from_raw_parts_mut(items, count) })
    }

    /// Zeroed room for `count` items of `item_bytes` each, aligned to `align`: [`slice`](Arena::slice)'s part that
    /// does not depend on the type, out of line so that each type's copy is only its fill loop.
    #[inline(never)]
    fn items(&self, item_bytes: usize, count: usize, align: usize) -> Result<*mut u8, ArenaFull> {
        let size = item_bytes.checked_mul(count).ok_or(ArenaFull {
            requested: usize::MAX,
            align,
            available: self.capacity - self.used.get(),
            capacity: self.capacity,
        })?;
        Ok(self.bytes(size, align)?.as_mut_ptr())
    }
}
