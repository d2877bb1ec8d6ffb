//! `rpcmem_alloc`, `rpcmem_free`, `rpcmem_to_fd` (quic/fastrpc `inc/rpcmem.h`): the virtual device copies buffers
//! to its PDs, so shared memory is ordinary heap memory here, with no file descriptor.

use std::ffi::{c_int, c_void};

/// Bytes kept in front of each block: its layout's size.
const HEADER: usize = 16;

/// `void* rpcmem_alloc(int heapid, uint32_t flags, int size)`: null for a size of 0 or less (as the library).
#[no_mangle]
pub extern "C" fn rpcmem_alloc(_heap: c_int, _flags: u32, size: c_int) -> *mut c_void {
    let Some(bytes) = usize::try_from(size).ok().filter(|&bytes| bytes > 0).and_then(|bytes| bytes.checked_add(HEADER))
    else {
        return std::ptr::null_mut();
    };
    let Ok(layout) = std::alloc::Layout::from_size_align(bytes, HEADER) else { return std::ptr::null_mut() };
    // SAFETY: a layout of at least HEADER + 1 bytes; its size goes in front of the block for rpcmem_free.
    unsafe {
        let block = std::alloc::alloc(layout);
        if block.is_null() {
            return block.cast();
        }
        block.cast::<usize>().write(layout.size());
        block.add(HEADER).cast()
    }
}

/// `void rpcmem_free(void* pointer)`: null is ignored.
///
/// # Safety
/// `pointer` null or from [`rpcmem_alloc`], not freed yet.
#[no_mangle]
pub unsafe extern "C" fn rpcmem_free(pointer: *mut c_void) {
    if pointer.is_null() {
        return;
    }
    // SAFETY: rpcmem_alloc put the block's size HEADER bytes before the pointer it returned.
    unsafe {
        let block = pointer.cast::<u8>().sub(HEADER);
        let size = block.cast::<usize>().read();
        std::alloc::dealloc(block, std::alloc::Layout::from_size_align_unchecked(size, HEADER));
    }
}

/// `int rpcmem_to_fd(void* pointer)`: -1, as for memory the library does not know: nothing here has a descriptor.
#[no_mangle]
pub extern "C" fn rpcmem_to_fd(_pointer: *mut c_void) -> c_int {
    -1
}
