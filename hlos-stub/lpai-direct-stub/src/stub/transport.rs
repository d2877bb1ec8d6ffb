//! How stub calls reach the skel: one interface, with a FastRPC implementation (a real DSP), a local one (the
//! skel's code in this process) and a qemu one (the Hexagon skel under qemu-hexagon), all reached through the
//! same encoded `remote_arg`s.

use lpai_direct::codec::RemoteArg;
use std::ffi::CStr;
use std::ptr::NonNull;

/// A way to open, invoke and close skel handles.
pub trait Transport {
    /// Short name for messages (`local`, `fastrpc`).
    fn name(&self) -> &'static str;
    /// Where the skel runs, for messages ("this process", "the adsp").
    fn place(&self) -> String;
    /// Which skel file this transport reaches, for messages: the library it loaded, or the one the DSP loader
    /// finds first on its search path (by default, [`Transport::place`]).
    fn skel_source(&self) -> String {
        self.place()
    }
    /// For a transport whose skel the DSP loader finds on its search path (FastRPC): that search and every skel
    /// file on it; `None` for transports that load one named file.
    fn skel_search(&self) -> Option<super::first_contact::SkelSearch> {
        None
    }
    /// Opens a handle on the skel.
    fn open(&mut self, uri: &CStr) -> Result<u64, i32>;
    /// Invokes one method.
    ///
    /// # Safety
    /// `args` must point to the `remote_arg` array `scalars` describes, every buffer valid for its length
    /// until the call returns.
    unsafe fn invoke(&mut self, handle: u64, scalars: u32, args: *mut RemoteArg) -> i32;
    /// Closes a handle.
    fn close(&mut self, handle: u64) -> i32;
    /// Why the transport itself failed (the skel's process is gone, say), once it has; calls then answer a
    /// transport error code and this says what happened.
    fn failure(&self) -> Option<String> {
        None
    }
    /// A buffer for inputs or outputs; shared (zero-copy) memory where the transport has it.
    fn buffer(&mut self, bytes: usize) -> IoBuffer {
        IoBuffer::heap(bytes)
    }
}

/// Memory for call inputs and outputs: ordinary heap memory, or transport-shared memory (rpcmem) that
/// FastRPC maps to the DSP instead of copying.
pub struct IoBuffer {
    memory: Memory,
    len: usize,
}

enum Memory {
    Heap(Vec<u8>),
    Shared { pointer: NonNull<u8>, release: Box<dyn Fn(*mut u8)> },
}

impl IoBuffer {
    /// `bytes` zeroed bytes of heap memory.
    pub fn heap(bytes: usize) -> IoBuffer {
        IoBuffer { memory: Memory::Heap(vec![0; bytes]), len: bytes }
    }

    /// Wraps shared memory that `release` frees.
    ///
    /// # Safety
    /// `pointer` must be valid for reads and writes of `bytes` bytes until `release` is called with it.
    pub unsafe fn shared(pointer: NonNull<u8>, bytes: usize, release: Box<dyn Fn(*mut u8)>) -> IoBuffer {
        IoBuffer { memory: Memory::Shared { pointer, release }, len: bytes }
    }

    /// Whether the buffer is transport-shared memory.
    pub fn is_shared(&self) -> bool {
        matches!(self.memory, Memory::Shared { .. })
    }
}

impl std::ops::Deref for IoBuffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.memory {
            Memory::Heap(bytes) => bytes,
            // SAFETY: valid for `len` bytes until released (the constructor's contract).
            Memory::Shared { pointer, .. } => unsafe { std::slice::from_raw_parts(pointer.as_ptr(), self.len) },
        }
    }
}

impl std::ops::DerefMut for IoBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        match &mut self.memory {
            Memory::Heap(bytes) => bytes,
            // SAFETY: as for `deref`, and `&mut self` makes this the only borrow.
            Memory::Shared { pointer, .. } => unsafe { std::slice::from_raw_parts_mut(pointer.as_ptr(), self.len) },
        }
    }
}

impl Drop for IoBuffer {
    fn drop(&mut self) {
        if let Memory::Shared { pointer, release } = &self.memory {
            release(pointer.as_ptr());
        }
    }
}
