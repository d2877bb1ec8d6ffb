//! The header the model keeps at the start of a graph's persistent memory: magic, token, frame and call counters.
//!
//! Layout (16 bytes, little-endian u32s): magic [`MAGIC`], token (unique per context and graph), frames (completed
//! or early-terminated executions: the `n` of the next output), calls (graphExecute calls that passed the rules).

/// The header's first word: `PSTM` read as little-endian bytes.
pub const MAGIC: u32 = 0x4D54_5350;
/// Bytes of the header.
pub const HEADER_BYTES: usize = 16;

/// The persistent header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// [`MAGIC`] when intact.
    pub magic: u32,
    /// The graph's token.
    pub token: u32,
    /// Frames counted so far.
    pub frames: u32,
    /// graphExecute calls counted so far.
    pub calls: u32,
}

impl Header {
    /// The header graphFinalize writes.
    pub fn fresh(token: u32) -> Header {
        Header { magic: MAGIC, token, frames: 0, calls: 0 }
    }

    /// Decodes 16 bytes.
    pub fn from_bytes(bytes: [u8; HEADER_BYTES]) -> Header {
        let [m0, m1, m2, m3, t0, t1, t2, t3, f0, f1, f2, f3, c0, c1, c2, c3] = bytes;
        Header {
            magic: u32::from_le_bytes([m0, m1, m2, m3]),
            token: u32::from_le_bytes([t0, t1, t2, t3]),
            frames: u32::from_le_bytes([f0, f1, f2, f3]),
            calls: u32::from_le_bytes([c0, c1, c2, c3]),
        }
    }

    /// Encodes to 16 bytes.
    pub fn to_bytes(self) -> [u8; HEADER_BYTES] {
        let [m0, m1, m2, m3] = self.magic.to_le_bytes();
        let [t0, t1, t2, t3] = self.token.to_le_bytes();
        let [f0, f1, f2, f3] = self.frames.to_le_bytes();
        let [c0, c1, c2, c3] = self.calls.to_le_bytes();
        [m0, m1, m2, m3, t0, t1, t2, t3, f0, f1, f2, f3, c0, c1, c2, c3]
    }
}

/// Reads the header at `addr`.
///
/// # Safety
/// `addr` (an exposed address) points at [`HEADER_BYTES`] readable bytes.
pub(crate) unsafe fn read(addr: usize) -> Header {
    let mut bytes = [0u8; HEADER_BYTES];
    // SAFETY: per the caller; `bytes` is a local buffer of the same size (copy tolerates nothing overlapping it).
    unsafe { core::ptr::copy(core::ptr::with_exposed_provenance::<u8>(addr), bytes.as_mut_ptr(), HEADER_BYTES) };
    Header::from_bytes(bytes)
}

/// Writes the header at `addr`.
///
/// # Safety
/// `addr` (an exposed address) points at [`HEADER_BYTES`] writable bytes.
pub(crate) unsafe fn write(addr: usize, header: Header) {
    let bytes = header.to_bytes();
    // SAFETY: per the caller.
    unsafe { core::ptr::copy(bytes.as_ptr(), core::ptr::with_exposed_provenance_mut::<u8>(addr), HEADER_BYTES) };
}
