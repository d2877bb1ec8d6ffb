//! FastRPC's `remote_arg` and the `sc` scalars word, laid out as the C library lays them out on each target.

use core::ffi::c_void;

/// `remote_buf`: a buffer pointer and its length (`size_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RemoteBuf {
    /// `pv`.
    pub pv: *mut c_void,
    /// `nLen`.
    pub len: usize,
}

/// `remote_dma_handle`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RemoteDmaHandle {
    /// `fd`.
    pub fd: i32,
    /// `offset`.
    pub offset: u32,
}

/// `remote_arg`: 16 bytes on aarch64 and x86_64, 8 on Hexagon.
#[repr(C)]
#[derive(Clone, Copy)]
pub union RemoteArg {
    /// A buffer.
    pub buf: RemoteBuf,
    /// `remote_handle`.
    pub h: u32,
    /// `remote_handle64`.
    pub h64: u64,
    /// `remote_dma_handle`.
    pub dma: RemoteDmaHandle,
}

impl RemoteArg {
    /// An argument describing a buffer.
    pub const fn buffer(pv: *mut c_void, len: usize) -> RemoteArg {
        RemoteArg { buf: RemoteBuf { pv, len } }
    }
}

const _: () = assert!(core::mem::size_of::<RemoteArg>() == if cfg!(target_pointer_width = "64") { 16 } else { 8 });

/// The 32-bit `sc` word's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scalars {
    /// Bits 31..29.
    pub attributes: u32,
    /// Bits 28..24 (31 means the real id is the first u32 of args\[0\]).
    pub method: u32,
    /// Bits 23..16.
    pub in_buffers: u32,
    /// Bits 15..8.
    pub out_buffers: u32,
    /// Bits 7..4.
    pub in_handles: u32,
    /// Bits 3..0.
    pub out_handles: u32,
}

impl Scalars {
    /// Splits a word into its fields.
    pub const fn of(word: u32) -> Scalars {
        Scalars {
            attributes: word >> 29,
            method: (word >> 24) & 0x1F,
            in_buffers: (word >> 16) & 0xFF,
            out_buffers: (word >> 8) & 0xFF,
            in_handles: (word >> 4) & 0xF,
            out_handles: word & 0xF,
        }
    }

    /// Packs the fields (each masked to its width).
    pub const fn word(self) -> u32 {
        ((self.attributes & 0x7) << 29)
            | ((self.method & 0x1F) << 24)
            | ((self.in_buffers & 0xFF) << 16)
            | ((self.out_buffers & 0xFF) << 8)
            | ((self.in_handles & 0xF) << 4)
            | (self.out_handles & 0xF)
    }

    /// Total number of `remote_arg` entries the word describes.
    pub const fn arg_count(self) -> usize {
        (self.in_buffers + self.out_buffers + self.in_handles + self.out_handles) as usize
    }
}

/// `sc` of `open(in string uri, rout remote_handle64 h)`.
pub const OPEN_SCALARS: u32 = 0x0002_0001;
/// `sc` of `close(in remote_handle64 h)`.
pub const CLOSE_SCALARS: u32 = 0x0100_0010;

/// Calls `open(in string uri, rout remote_handle64 h)` on the wire: builds the arguments `OPEN_SCALARS`
/// describes and hands them to `invoke` (a skel's invoke entry, or a FastRPC-like library); returns the handle
/// or the status.
pub fn call_open(uri: &core::ffi::CStr, invoke: impl FnOnce(u32, *mut RemoteArg) -> i32) -> Result<u64, i32> {
    let text = uri.to_bytes_with_nul();
    let Ok(count) = u32::try_from(text.len()) else {
        return Err(crate::aee::dsp(crate::aee::EBADPARM));
    };
    let mut count = count.to_le_bytes();
    let mut args = [
        RemoteArg::buffer(count.as_mut_ptr().cast(), count.len()),
        RemoteArg::buffer(text.as_ptr().cast_mut().cast(), text.len()),
        RemoteArg { h64: 0 },
    ];
    match invoke(OPEN_SCALARS, args.as_mut_ptr()) {
        // SAFETY: on success the callee wrote the handle into the output-handle argument.
        0 => Ok(unsafe { args[2].h64 }),
        status => Err(status),
    }
}

/// Calls `close(in remote_handle64 h)` on the wire through `invoke`; returns its status.
pub fn call_close(handle: u64, invoke: impl FnOnce(u32, *mut RemoteArg) -> i32) -> i32 {
    let mut args = [RemoteArg { h64: handle }];
    invoke(CLOSE_SCALARS, args.as_mut_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_round_trip_and_match_open_and_close() {
        let open = Scalars::of(OPEN_SCALARS);
        assert_eq!((open.method, open.in_buffers, open.out_buffers, open.out_handles), (0, 2, 0, 1));
        let close = Scalars::of(CLOSE_SCALARS);
        assert_eq!((close.method, close.in_handles, close.arg_count()), (1, 1, 1));
        for word in [0u32, 0xFFFF_FFFF, 0x0702_0200, 0x8123_4567] {
            assert_eq!(Scalars::of(word).word(), word);
        }
    }
}
