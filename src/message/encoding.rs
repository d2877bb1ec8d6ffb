//! A message record, byte by byte: what the DSP writes and [`super::render()`] reads. A changed item changes the
//! build id (`build.rs` hashes this file with the table).
//!
//! ```text
//! record := flags item*            flags: bit 0 set when the writer ran out of room (the text ends in "...")
//! item   := MESSAGE id:u16le item* END    a message of the table, its arguments, in order
//!         | UNSIGNED leb128               a number, in decimal
//!         | SIGNED zigzag-leb128          a signed number, in decimal
//!         | HEX width:u8 leb128           a number after 0x, in lowercase hex digits, at least `width` of them
//!         | TEXT leb128-length bytes      text known only at run time (a name, a path): UTF-8, shown as it is
//!         | QNN_ERROR leb128              a QNN error code, shown by its C name (QNN_GRAPH_ERROR_..., or
//!                                         "unknown QNN error")
//!         | BOOLEAN u8                    true or false
//!         | ERRNO zigzag-leb128           a platform error number, in decimal, with what it means when known
//!                                         ("28 (no space left on device)")
//!         | DATA_TYPE leb128              a Qnn_DataType_t, shown by its C name (QNN_DATATYPE_...), or "an unknown
//!                                         data type"
//!         | METHOD leb128                 a method id of the interface, shown by its IDL name ("method 40" when
//!                                         the interface has no such method)
//! ```
//! Items at the top level are rendered one after the other; a message's `{}` places take its items in order.

/// A message of the table follows (its id, little-endian, then its arguments up to [`END`]).
pub const MESSAGE: u8 = 1;
/// The end of a message's arguments.
pub const END: u8 = 0;
/// An unsigned number follows (LEB128).
pub const UNSIGNED: u8 = 2;
/// A signed number follows (zigzag, then LEB128).
pub const SIGNED: u8 = 3;
/// A hexadecimal number follows: its least digit count (one byte), then the value (LEB128).
pub const HEX: u8 = 4;
/// Text follows: its length (LEB128), then its bytes.
pub const TEXT: u8 = 5;
/// A QNN error code follows (LEB128), shown by its name.
pub const QNN_ERROR: u8 = 6;
/// A truth value follows (one byte, 0 or 1).
pub const BOOLEAN: u8 = 7;

/// A platform error number follows (zigzag, then LEB128), shown with its meaning when known.
pub const ERRNO: u8 = 8;

/// A `Qnn_DataType_t` follows (LEB128), shown by its C name.
pub const DATA_TYPE: u8 = 9;

/// A method id of the interface follows (LEB128), shown by its IDL name.
pub const METHOD: u8 = 10;

/// The flag bit of a record cut short.
pub const CUT: u8 = 1;

/// Writes `value` in LEB128 into `out` (at most 10 bytes); answers how many bytes it took.
pub fn leb128(mut value: u64, out: &mut [u8; 10]) -> usize {
    let mut length = 0;
    for slot in out.iter_mut() {
        let low = (value & 0x7f) as u8;
        value >>= 7;
        length += 1;
        if value == 0 {
            *slot = low;
            break;
        }
        *slot = low | 0x80;
    }
    length
}

/// `value` zigzagged: small magnitudes, either sign, take few LEB128 bytes.
pub const fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// The signed value of a zigzagged one.
pub const fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

/// Reads a record's items; every read answers `None` at the end of the bytes (a record cut short ends anywhere).
pub struct Reader<'r> {
    bytes: &'r [u8],
}

impl<'r> Reader<'r> {
    /// A reader of `items` (a record without its flags byte).
    pub fn new(items: &'r [u8]) -> Reader<'r> {
        Reader { bytes: items }
    }

    /// The next byte.
    pub fn byte(&mut self) -> Option<u8> {
        let (&first, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        Some(first)
    }

    /// The next byte, unread.
    pub fn peek(&self) -> Option<u8> {
        self.bytes.first().copied()
    }

    /// A little-endian u16.
    pub fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes([self.byte()?, self.byte()?]))
    }

    /// A LEB128 number (at most 64 bits; longer ones answer `None`).
    pub fn leb128(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// Up to `length` bytes (fewer when the record ends first).
    pub fn take(&mut self, length: usize) -> &'r [u8] {
        let length = length.min(self.bytes.len());
        let (taken, rest) = self.bytes.split_at(length);
        self.bytes = rest;
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip_through_leb128_and_zigzag() {
        for value in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut out = [0u8; 10];
            let length = leb128(value, &mut out);
            assert_eq!(Reader::new(&out[..length]).leb128(), Some(value));
        }
        for value in [0i64, -1, 1, i64::MIN, i64::MAX, -300] {
            assert_eq!(unzigzag(zigzag(value)), value);
        }
        let mut out = [0u8; 10];
        assert_eq!(leb128(127, &mut out), 1);
        assert_eq!(leb128(128, &mut out), 2);
        assert_eq!(Reader::new(&[0x80]).leb128(), None, "a number cut short");
    }
}
