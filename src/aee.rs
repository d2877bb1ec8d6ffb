//! AEEStdErr codes, the error numbers FastRPC calls answer with.

/// Offset every AEE code carries when the DSP side returns it.
pub const DSP_OFFSET: u32 = 0x8000_0400;
/// Success.
pub const SUCCESS: u32 = 0;
/// Generic failure.
pub const EFAILED: u32 = 0x1;
/// Out of memory.
pub const ENOMEMORY: u32 = 0x2;
/// Called in the wrong state.
pub const EBADSTATE: u32 = 0xD;
/// A parameter is invalid.
pub const EBADPARM: u32 = 0xE;
/// The method or feature is not supported.
pub const EUNSUPPORTED: u32 = 0x14;
/// The handle is not valid.
pub const EINVHANDLE: u32 = 0x2C;

/// The code as the DSP side returns it: `0x80000400 + code` (success stays 0).
pub const fn dsp(code: u32) -> i32 {
    if code == SUCCESS {
        0
    } else {
        (DSP_OFFSET + code) as i32
    }
}
/// A symbol the call needs is missing.
pub const ENOSUCHSYMBOL: u32 = 0x42;
