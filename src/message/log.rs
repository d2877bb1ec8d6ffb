//! A record in a DSP log line: `lpai:` and its bytes in lowercase hex, the line's whole format for the PD's
//! `HAP_debug_v2` (no `%`, so nothing variadic is read), and [`render_log_line`], which puts such lines back in words.

use core::ffi::CStr;

/// What starts a record in a log line.
pub const PREFIX: &str = "lpai:";

/// Bytes a log line needs for a record of `record_bytes`: the prefix, two hex digits a byte, the NUL.
pub const fn log_line_capacity(record_bytes: usize) -> usize {
    PREFIX.len() + 2 * record_bytes + 1
}

/// Writes `record` as a log line into `buffer` (cut at a whole byte where the buffer ends), NUL-terminated.
pub fn log_line<'b>(record: &[u8], buffer: &'b mut [u8]) -> &'b CStr {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut length = 0;
    for &byte in PREFIX.as_bytes() {
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

/// The record a log line's `lpai:` token carries (its hex digits up to the first other character), and where the
/// token starts and ends in `line`.
pub fn record_in(line: &str) -> Option<(usize, usize, RecordBytes)> {
    let start = line.find(PREFIX)?;
    let digits = line.get(start + PREFIX.len()..)?;
    let count = digits.bytes().take_while(u8::is_ascii_hexdigit).count() / 2 * 2;
    let mut record = RecordBytes { bytes: [0; 256], length: 0 };
    for pair in digits.as_bytes().get(..count)?.chunks(2) {
        let text = core::str::from_utf8(pair).ok()?;
        let byte = u8::from_str_radix(text, 16).ok()?;
        *record.bytes.get_mut(record.length)? = byte;
        record.length += 1;
    }
    (record.length > 0).then_some((start, start + PREFIX.len() + count, record))
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
    use super::*;

    #[test]
    fn a_record_goes_into_a_log_line_and_comes_back() {
        let record = [0u8, 1, 2, 0, 2, 42, 0];
        let mut buffer = [0u8; log_line_capacity(7)];
        let line = log_line(&record, &mut buffer);
        assert_eq!(line.to_str(), Ok("lpai:00010200022a00"));
        let captured = "12-07 10:00:00.123 adsp lpai_direct:0: lpai:00010200022a00 (more)";
        let (start, end, found) = record_in(captured).unwrap();
        assert_eq!(found.as_bytes(), record);
        assert_eq!(&captured[start..end], "lpai:00010200022a00");
        assert!(record_in("no record here").is_none());
        let mut small = [0u8; 9];
        assert_eq!(log_line(&record, &mut small).to_str(), Ok("lpai:00"), "cut at a whole byte");
    }
}
