//! One invoke, as the FastRPC framework makes it: every region of the request in its own memory between two
//! canaries, input bytes copied in, the rest zeroed; each buffer a pointer into its region (or null); after the
//! skel returns, the canaries and the input-only regions are checked.

use super::system::Mapping;
use core::ffi::c_int;
use lpai_direct::codec::RemoteArg;
use lpai_direct::shell_frame::{Invoke, GUARD_CANARY, GUARD_INPUT_CHANGED, MAX_BUFFERS, NO_REGION};

/// The skel's `int lpai_direct_skel_handle_invoke(uint64_t handle, uint32_t sc, remote_arg* args)`.
pub type InvokeFunction = unsafe extern "C" fn(u64, u32, *mut RemoteArg) -> c_int;

/// The bytes before and after every region.
pub const CANARY: [u8; 16] = *b"<lpai-pd-canary>";
const MAX_REGIONS: usize = MAX_BUFFERS as usize;
/// Buffers plus the (at most 15 + 15) handle entries.
const MAX_ARGUMENTS: usize = MAX_BUFFERS as usize + 30;

/// No memory for region `index` of `length` bytes.
pub struct NoMemory {
    /// The region.
    pub index: usize,
    /// Its length.
    pub length: u32,
}

/// The memory of one call, owned until the reply is written.
pub struct Call<'b> {
    request: Invoke<'b>,
    regions: [Option<Mapping>; MAX_REGIONS],
    /// What the skel answered.
    pub status: i32,
    /// [`GUARD_CANARY`] and [`GUARD_INPUT_CHANGED`] bits.
    pub guard: u32,
}

/// How many output buffers the `sc` word counts.
fn output_count(scalars: u32) -> usize {
    ((scalars >> 8) & 0xFF) as usize
}

impl<'b> Call<'b> {
    /// Sets up the regions and buffers of `request`, calls `invoke`, checks the guards.
    ///
    /// # Safety
    /// `invoke` must be the loaded skel's invoke entry point.
    pub unsafe fn make(invoke: InvokeFunction, request: Invoke<'b>) -> Result<Call<'b>, NoMemory> {
        let mut call = Call { request, regions: [const { None }; MAX_REGIONS], status: 0, guard: 0 };
        for (index, region) in request.regions().take(MAX_REGIONS).enumerate() {
            let length = region.length as usize;
            let no_memory = NoMemory { index, length: region.length };
            let mut memory = length.checked_add(32).and_then(|bytes| Mapping::new(bytes).ok()).ok_or(no_memory)?;
            let bytes = memory.as_mut_slice();
            bytes[..16].copy_from_slice(&CANARY);
            bytes[16 + length..32 + length].copy_from_slice(&CANARY);
            // A new mapping is zeroed; a region holding an input gets the caller's bytes.
            if let Some(contents) = region.contents {
                bytes[16..16 + length].copy_from_slice(contents);
            }
            call.regions[index] = Some(memory);
        }
        let mut arguments = [RemoteArg::buffer(core::ptr::null_mut(), 0); MAX_ARGUMENTS];
        for (argument, buffer) in arguments.iter_mut().zip(request.buffers()) {
            // Handle entries are NO_REGION with length 0: an all-zero remote_arg, a zero handle.
            let pointer = match call.regions.get(buffer.region as usize).and_then(Option::as_ref) {
                // Request::decode checked that the buffer lies inside its region.
                Some(memory) => memory.address().wrapping_add(16 + buffer.offset as usize),
                None => core::ptr::null_mut(),
            };
            *argument = RemoteArg::buffer(pointer.cast(), buffer.length as usize);
        }
        // SAFETY: the caller vouches for `invoke`; `arguments` holds one remote_arg per buffer and handle of the sc
        // word (Request::decode checked the counts), each pointing into live memory of its length, or null.
        call.status = unsafe { invoke(request.handle, request.scalars, arguments.as_mut_ptr()) };
        call.check_guards();
        Ok(call)
    }

    fn check_guards(&mut self) {
        let outputs = self.request.inputs as usize..self.request.inputs as usize + output_count(self.request.scalars);
        let mut holds_output = [false; MAX_REGIONS];
        for (index, buffer) in self.request.buffers().enumerate() {
            if let Some(holds) = holds_output.get_mut(buffer.region as usize).filter(|_| outputs.contains(&index)) {
                *holds = true;
            }
        }
        for (index, region) in self.request.regions().enumerate() {
            let Some(memory) = self.regions.get(index).and_then(Option::as_ref) else { continue };
            let (bytes, length) = (memory.as_slice(), region.length as usize);
            if bytes[..16] != CANARY || bytes[16 + length..32 + length] != CANARY {
                self.guard |= GUARD_CANARY;
            }
            let unchanged = match region.contents {
                Some(contents) => bytes[16..16 + length] == *contents,
                None => bytes[16..16 + length].iter().all(|&byte| byte == 0),
            };
            if !holds_output[index] && !unchanged {
                self.guard |= GUARD_INPUT_CHANGED;
            }
        }
    }

    /// Bytes of the reply body's output part: every output buffer that is not null.
    pub fn output_bytes(request: &Invoke<'_>) -> u64 {
        let outputs = request.buffers().skip(request.inputs as usize).take(output_count(request.scalars));
        outputs.filter(|buffer| buffer.region != NO_REGION).map(|buffer| u64::from(buffer.length)).sum()
    }

    /// The bytes of every output buffer that is not null, in order.
    pub fn outputs(&self) -> impl Iterator<Item = &[u8]> {
        let outputs =
            self.request.buffers().skip(self.request.inputs as usize).take(output_count(self.request.scalars));
        outputs.filter_map(|buffer| {
            let memory = self.regions.get(buffer.region as usize)?.as_ref()?;
            let start = 16 + buffer.offset as usize;
            memory.as_slice().get(start..start + buffer.length as usize)
        })
    }
}
