//! `malloc` and `free`: each allocation its own anonymous mapping, behind a 16-byte header.

use crate::pd::system::Mapping;
use core::ffi::c_void;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// Bytes before each allocation: the mark, the mapping's size, padding to keep the result 16-aligned.
const HEADER_BYTES: usize = 16;
/// Marks a live allocation in its header (cleared on free).
const MARK: u32 = 0x1A1_0CA7;

/// Blocks `malloc` answered that `free` has not taken back, and the bytes asked for them.
static LIVE_BLOCKS: AtomicU32 = AtomicU32::new(0);
static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// The heap the loaded libraries hold right now: blocks not freed, and their bytes.
pub fn heap_in_use() -> (u32, u64) {
    (LIVE_BLOCKS.load(Ordering::Relaxed), LIVE_BYTES.load(Ordering::Relaxed) as u64)
}

/// `void* malloc(size_t bytes)`: 16-byte aligned memory, zeroed; null when there is none. `malloc(0)` answers
/// a valid pointer too.
pub extern "C" fn malloc(bytes: usize) -> *mut c_void {
    let Some(total) = bytes.checked_add(HEADER_BYTES) else { return core::ptr::null_mut() };
    let Ok(mut mapping) = Mapping::new(total) else { return core::ptr::null_mut() };
    let mapped = mapping.bytes() as u32;
    let header = mapping.as_mut_slice();
    header[..4].copy_from_slice(&MARK.to_le_bytes());
    header[4..8].copy_from_slice(&mapped.to_le_bytes());
    let start = mapping.address();
    // The mapping now belongs to the allocation; `free` unmaps it.
    core::mem::forget(mapping);
    LIVE_BLOCKS.fetch_add(1, Ordering::Relaxed);
    LIVE_BYTES.fetch_add(bytes, Ordering::Relaxed);
    start.wrapping_add(HEADER_BYTES).cast()
}

/// `void free(void* memory)`: null is a no-op; a pointer `malloc` did not answer is reported and left alone
/// (when its header is readable at all).
///
/// # Safety
/// `memory` must be null or a pointer `malloc` answered and `free` has not taken back yet.
pub unsafe extern "C" fn free(memory: *mut c_void) {
    if memory.is_null() {
        return;
    }
    let header = memory.cast::<u8>().wrapping_sub(HEADER_BYTES).cast::<u32>();
    // SAFETY: a pointer from `malloc` has its 16-byte header just before it, in the same mapping.
    let (mark, bytes) = unsafe { (header.read(), header.add(1).read()) };
    if mark != MARK {
        crate::say!("lpai-pd-shell: free({memory:p}): not a pointer malloc answered (or freed twice); ignored");
        return;
    }
    // SAFETY: as above; clearing the mark lets a second free of the same pointer be noticed if the mapping were
    // reused, and it is unmapped right after.
    unsafe { header.write(0) };
    // SAFETY: the header describes the mapping `malloc` made and forgot; nothing uses it after `free`.
    let mapping = unsafe { Mapping::adopt(header.cast(), bytes as usize) };
    drop(mapping);
    LIVE_BLOCKS.fetch_sub(1, Ordering::Relaxed);
    LIVE_BYTES.fetch_sub((bytes as usize).saturating_sub(HEADER_BYTES), Ordering::Relaxed);
}
