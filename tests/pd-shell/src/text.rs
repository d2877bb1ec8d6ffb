//! Bounded text on the stack: a line buffer that `core::fmt` writes into (cut, never overflowed) and a display
//! adapter for untrusted bytes.

use core::fmt;

/// A line of at most `N` bytes; a longer text is cut and ends in `...`.
pub struct Text<const N: usize> {
    bytes: [u8; N],
    length: usize,
    cut: bool,
}

impl<const N: usize> Text<N> {
    /// An empty line.
    pub const fn new() -> Self {
        Text { bytes: [0; N], length: 0, cut: false }
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.length]
    }

    /// Appends raw bytes (cut like formatted text).
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        if self.cut {
            return;
        }
        let room = N.saturating_sub(self.length);
        if bytes.len() <= room {
            self.bytes[self.length..self.length + bytes.len()].copy_from_slice(bytes);
            self.length += bytes.len();
            return;
        }
        // Keep three bytes for the ellipsis.
        let keep = N.saturating_sub(3).saturating_sub(self.length).min(bytes.len());
        self.bytes[self.length..self.length + keep].copy_from_slice(&bytes[..keep]);
        self.length += keep;
        let dots = N.saturating_sub(self.length).min(3);
        self.bytes[self.length..self.length + dots].copy_from_slice(&b"..."[..dots]);
        self.length += dots;
        self.cut = true;
    }
}

impl<const N: usize> Default for Text<N> {
    fn default() -> Self {
        Text::new()
    }
}

impl<const N: usize> fmt::Write for Text<N> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.push_bytes(text.as_bytes());
        Ok(())
    }
}

/// Displays bytes from an untrusted file or caller: printable ASCII as is, anything else as `\xNN`.
pub struct Escaped<'b>(pub &'b [u8]);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &byte in self.0 {
            if byte.is_ascii_graphic() || byte == b' ' {
                fmt::Write::write_char(formatter, byte as char)?;
            } else {
                write!(formatter, "\\x{byte:02x}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    #[test]
    fn long_text_is_cut_with_an_ellipsis() {
        let mut line = Text::<8>::new();
        line.write_str("0123456789").unwrap();
        assert_eq!(line.as_bytes(), b"01234...");
        line.push_bytes(b"more");
        assert_eq!(line.as_bytes(), b"01234...");
        let mut short = Text::<8>::new();
        short.push_bytes(b"ab");
        write!(short, "{}", 12).unwrap();
        assert_eq!(short.as_bytes(), b"ab12");
    }

    #[test]
    fn untrusted_bytes_are_escaped() {
        assert_eq!(std::format!("{}", Escaped(b"lib x.so\n\xff")), "lib x.so\\x0a\\xff");
    }
}
