//! FARF log messages for the PD's `HAP_debug_v2(level, file, line, format, ...)`: the message itself is the
//! format, with every `%` doubled, and no variadic arguments follow. So no caller depends on how a target passes
//! variadic arguments (in registers for `hexagon-unknown-linux-musl`, on the stack for QuRT's own toolchain), and
//! the PD prints exactly the message.

use core::ffi::CStr;

/// Bytes a format buffer needs for a message of `message_bytes`: every byte may be a doubled `%`, plus the NUL.
pub const fn format_capacity(message_bytes: usize) -> usize {
    2 * message_bytes + 1
}

/// Writes `message` as a format into `buffer`: `%` doubled, NUL bytes shown as `?`, cut where the buffer ends (never
/// inside a doubled `%`), NUL-terminated. An empty buffer gives an empty string.
pub fn format_of<'b>(message: &[u8], buffer: &'b mut [u8]) -> &'b CStr {
    let room = buffer.len().saturating_sub(1);
    let mut length = 0;
    for &byte in message {
        let (bytes, count): (&[u8], usize) = match byte {
            b'%' => (b"%%", 2),
            0 => (b"?", 1),
            _ => (core::slice::from_ref(&byte), 1),
        };
        if length + count > room {
            break;
        }
        for (slot, &byte) in buffer.iter_mut().skip(length).zip(bytes) {
            *slot = byte;
        }
        length += count;
    }
    match buffer.get_mut(length) {
        Some(end) => *end = 0,
        None => return c"",
    }
    CStr::from_bytes_until_nul(buffer).unwrap_or(c"")
}

/// The message a format made by [`format_of`] prints: each `%%` as one `%` (what a printf-style sink writes).
pub fn message_of(format: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let mut bytes = format.iter().copied().peekable();
    core::iter::from_fn(move || {
        let byte = bytes.next()?;
        if byte == b'%' && bytes.peek() == Some(&b'%') {
            bytes.next();
        }
        Some(byte)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_signs_are_doubled_and_come_back_single() {
        let mut buffer = [0u8; format_capacity(12)];
        let format = format_of(b"100% of 5%d\0x", &mut buffer);
        assert_eq!(format.to_bytes(), b"100%% of 5%%d?x".as_slice());
        let mut printed = [0u8; 32];
        let count = message_of(format.to_bytes()).zip(printed.iter_mut()).map(|(byte, slot)| *slot = byte).count();
        assert_eq!(&printed[..count], b"100% of 5%d?x");
    }

    #[test]
    fn a_short_buffer_cuts_the_message_but_never_a_doubled_percent() {
        let mut buffer = [0xFFu8; 5];
        assert_eq!(format_of(b"ab%cd", &mut buffer).to_bytes(), b"ab%%".as_slice());
        let mut buffer = [0xFFu8; 4];
        assert_eq!(format_of(b"ab%cd", &mut buffer).to_bytes(), b"ab".as_slice());
        assert_eq!(format_of(b"ab", &mut []).to_bytes(), b"".as_slice());
    }
}
