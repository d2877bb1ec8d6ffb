//! `malloc` and `free`: each allocation its own anonymous mapping, behind a 16-byte header.

use crate::pd::system::Mapping;
use core::ffi::c_void;

/// Bytes before each allocation: the mark, the mapping's size, padding to keep the result 16-aligned.
const HEADER_BYTES: usize = 16;
/// Marks a live allocation in its header (cleared on free).
const MARK: u32 = 0x1A1_0CA7;

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
}
