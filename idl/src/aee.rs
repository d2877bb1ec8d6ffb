//! AEEStdErr codes, the error numbers FastRPC calls answer with, and their names: the one table the codec, the
//! skel and the stub share.

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
/// A symbol the call needs is missing.
pub const ENOSUCHSYMBOL: u32 = 0x42;
/// The connection was refused (FastRPC could not reach the domain).
pub const ECONNREFUSED: u32 = 0x72;
/// An unsigned module was refused (the PD is signed-only).
pub const EUNSIGNEDMOD: u32 = 0x81;
/// The FastRPC layer itself failed.
pub const ERPC: u32 = 0x200;

/// The code as the DSP side returns it: `0x80000400 + code` (success stays 0).
pub const fn dsp(code: u32) -> i32 {
    if code == SUCCESS {
        0
    } else {
        (DSP_OFFSET + code) as i32
    }
}

/// The name of an AEE code, given with or without the DSP offset ("an error" for codes without a name here).
pub const fn name(code: u32) -> &'static str {
    let plain = if code > DSP_OFFSET { code - DSP_OFFSET } else { code };
    match plain {
        EFAILED => "AEE_EFAILED",
        ENOMEMORY => "AEE_ENOMEMORY",
        EBADSTATE => "AEE_EBADSTATE",
        EBADPARM => "AEE_EBADPARM",
        EUNSUPPORTED => "AEE_EUNSUPPORTED",
        EINVHANDLE => "AEE_EINVHANDLE",
        ENOSUCHSYMBOL => "AEE_ENOSUCHSYMBOL",
        ECONNREFUSED => "AEE_ECONNREFUSED",
        EUNSIGNEDMOD => "AEE_EUNSIGNEDMOD",
        ERPC => "AEE_ERPC",
        _ => "an error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_accept_codes_with_and_without_the_dsp_offset() {
        assert_eq!(name(EBADPARM), "AEE_EBADPARM");
        assert_eq!(name(dsp(EBADPARM) as u32), "AEE_EBADPARM");
        assert_eq!(name(dsp(ERPC) as u32), "AEE_ERPC");
        assert_eq!(name(ECONNREFUSED), "AEE_ECONNREFUSED");
        assert_eq!(name(0x7777), "an error");
    }
}
