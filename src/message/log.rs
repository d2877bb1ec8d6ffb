//! A record in DSP log lines: `lpai:` and its bytes in lowercase hex, the line's whole format for the PD's
//! `HAP_debug_v2` (no `%`, so nothing variadic is read). A record longer than [`PIECE_BYTES`] is logged in pieces,
//! each but the last after `lpai+` (so the PD's log call needs a small buffer on its stack); [`record_in`] reads a
//! piece back and the reader joins them (`lpai-net-run render-log`).

use core::ffi::CStr;

/// What starts a record's last (or only) piece in a log line.
pub const PREFIX: &str = "lpai:";

/// What starts a piece the next `lpai` piece continues.
pub const CONTINUES: &str = "lpai+";

/// Record bytes a log line carries at most.
pub const PIECE_BYTES: usize = 128;

/// Logs `record` in pieces of at most [`PIECE_BYTES`], each as a NUL-terminated line given to `emit`.
pub fn log_pieces(record: &[u8], mut emit: impl FnMut(&CStr)) {
    let mut buffer = [0u8; log_line_capacity(PIECE_BYTES)];
    let mut pieces = record.chunks(PIECE_BYTES).peekable();
    while let Some(piece) = pieces.next() {
        let prefix = if pieces.peek().is_some() { CONTINUES } else { PREFIX };
        emit(write_line(prefix, piece, &mut buffer));
    }
}

/// Bytes a log line needs for a record of `record_bytes`: the prefix, two hex digits a byte, the NUL.
pub const fn log_line_capacity(record_bytes: usize) -> usize {
    PREFIX.len() + 2 * record_bytes + 1
}

/// Writes `record` as a log line into `buffer` (cut at a whole byte where the buffer ends), NUL-terminated.
pub fn log_line<'b>(record: &[u8], buffer: &'b mut [u8]) -> &'b CStr {
    write_line(PREFIX, record, buffer)
}

fn write_line<'b>(prefix: &str, record: &[u8], buffer: &'b mut [u8]) -> &'b CStr {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut length = 0;
    for &byte in prefix.as_bytes() {
        if let Some(slot) = buffer.get_mut(length) {
            *slot = byte;
            length += 1;
        }
    }
    for &byte in record {
        if length + 3 > buffer.len() {
            break;
        }
        for digit in [byte >> 4, byte & 15] {
            if let (Some(slot), Some(&digit)) = (buffer.get_mut(length), DIGITS.get(usize::from(digit))) {
                *slot = digit;
                length += 1;
            }
        }
    }
    match buffer.get_mut(length) {
        Some(end) => *end = 0,
        None => return c"",
    }
    CStr::from_bytes_until_nul(buffer).unwrap_or(c"")
}

/// A record's piece found in a log line.
pub struct Piece {
    /// Where its token (`lpai:` or `lpai+` and the hex digits) starts in the line.
    pub start: usize,
    /// Where the token ends.
    pub end: usize,
    /// The bytes it carries.
    pub record: RecordBytes,
    /// Whether the record goes on in the next piece (`lpai+`).
    pub continues: bool,
}

/// The first piece of a record a log line carries (an `lpai:` or `lpai+` token and its hex digits up to the first
/// other character).
pub fn record_in(line: &str) -> Option<Piece> {
    line.match_indices("lpai").find_map(|(start, _)| piece_at(line, start))
}

/// The piece whose token starts at `start` of `line`, if one does.
fn piece_at(line: &str, start: usize) -> Option<Piece> {
    let continues = match line.get(start..start + PREFIX.len())? {
        PREFIX => false,
        CONTINUES => true,
        _ => return None,
    };
    let digits = line.get(start + PREFIX.len()..)?;
    let count = digits.bytes().take_while(u8::is_ascii_hexdigit).count() / 2 * 2;
    let mut record = RecordBytes { bytes: [0; 256], length: 0 };
    for pair in digits.as_bytes().get(..count)?.chunks(2) {
        let byte = u8::from_str_radix(core::str::from_utf8(pair).ok()?, 16).ok()?;
        *record.bytes.get_mut(record.length)? = byte;
        record.length += 1;
    }
    (record.length > 0).then_some(Piece { start, end: start + PREFIX.len() + count, record, continues })
}

/// A record read back from a log line.
pub struct RecordBytes {
    bytes: [u8; 256],
    length: usize,
}

impl RecordBytes {
    /// Its bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.length).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::string::{String, ToString};
    use std::vec::Vec;

    #[test]
    fn a_record_goes_into_a_log_line_and_comes_back() {
        let record = [0u8, 1, 2, 0, 2, 42, 0];
        let mut buffer = [0u8; log_line_capacity(7)];
        let line = log_line(&record, &mut buffer);
        assert_eq!(line.to_str(), Ok("lpai:00010200022a00"));
        let captured = "12-07 10:00:00.123 adsp lpai_direct:0: lpai:00010200022a00 (more)";
        let found = record_in(captured).unwrap();
        assert_eq!(found.record.as_bytes(), record);
        assert_eq!(&captured[found.start..found.end], "lpai:00010200022a00");
        assert!(!found.continues);
        assert!(record_in("no record here").is_none());
        assert_eq!(record_in("lpai: alone, then lpai:01").map(|found| found.start), Some(18));
        let mut small = [0u8; 9];
        assert_eq!(log_line(&record, &mut small).to_str(), Ok("lpai:00"), "cut at a whole byte");
    }

    #[test]
    fn a_long_record_is_logged_in_pieces_that_join_back() {
        let record: Vec<u8> = (0..=255u8).chain(0..44).collect();
        let mut lines: Vec<String> = Vec::new();
        log_pieces(&record, |line| lines.push(line.to_str().unwrap().to_string()));
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("lpai+") && lines[1].starts_with("lpai+") && lines[2].starts_with("lpai:"));
        let mut joined = Vec::new();
        for line in &lines {
            let piece = record_in(line).unwrap();
            assert_eq!(piece.continues, !line.starts_with("lpai:"));
            joined.extend_from_slice(piece.record.as_bytes());
        }
        assert_eq!(joined, record);
    }
}
