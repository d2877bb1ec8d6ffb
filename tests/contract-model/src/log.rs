//! Log lines of the model: `contract: rule <rule-name>: <what was wrong>`, or `contract: <what happened>` for
//! modelled behaviour that is not a breach, formatted without `core::fmt`.
//!
//! On Hexagon a line goes to the PD's `HAP_debug_v2`, as the message itself in the format (`lpai_direct::farf`);
//! on a host it goes to stderr and is also kept per thread, so tests can read what a call
//! logged ([`crate::take_log_lines`]).

/// Bytes one line holds; longer text is cut.
const LINE_BYTES: usize = 240;

/// A log line being built (panic-free: every append is bounds-checked and cut at the end of the buffer).
#[derive(Clone, Copy)]
pub(crate) struct Line {
    bytes: [u8; LINE_BYTES],
    length: usize,
}

impl Line {
    /// `contract: rule <name>: `.
    pub(crate) fn rule(name: &str) -> Line {
        Line { bytes: [0; LINE_BYTES], length: 0 }.text("contract: rule ").text(name).text(": ")
    }

    /// `contract: <text>`: a line that names no rule.
    pub(crate) fn message(text: &str) -> Line {
        Line { bytes: [0; LINE_BYTES], length: 0 }.text("contract: ").text(text)
    }

    /// Appends text.
    pub(crate) fn text(mut self, text: &str) -> Line {
        for &byte in text.as_bytes() {
            self.push(byte);
        }
        self
    }

    /// Appends a name field up to its first NUL (non-ASCII bytes as `?`).
    pub(crate) fn name(mut self, name: &[u8]) -> Line {
        for &byte in name.iter().take_while(|&&byte| byte != 0) {
            self.push(if (0x20..=0x7E).contains(&byte) { byte } else { b'?' });
        }
        self
    }

    /// Appends an unsigned number in decimal.
    pub(crate) fn num(mut self, value: u64) -> Line {
        let mut digits = [0u8; 20];
        let mut count = 0;
        let mut rest = value;
        loop {
            if let Some(slot) = digits.get_mut(count) {
                *slot = b'0' + (rest % 10) as u8;
            }
            count += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        for &digit in digits.iter().take(count).rev() {
            self.push(digit);
        }
        self
    }

    /// Appends a number in hexadecimal with a `0x` prefix.
    pub(crate) fn hex(mut self, value: u64) -> Line {
        self = self.text("0x");
        let digits = (64 - value.leading_zeros()).div_ceil(4).max(1);
        for index in (0..digits).rev() {
            let nibble = (value >> (4 * index)) & 0xF;
            self.push(b"0123456789abcdef".get(nibble as usize).copied().unwrap_or(b'?'));
        }
        self
    }

    /// Appends a version as `major.minor.patch`.
    pub(crate) fn version(self, version: lpai_direct::qnn::Version) -> Line {
        self.num(version.major.into()).text(".").num(version.minor.into()).text(".").num(version.patch.into())
    }

    fn push(&mut self, byte: u8) {
        if let Some(slot) = self.bytes.get_mut(self.length) {
            *slot = byte;
            self.length += 1;
        }
    }

    /// The text so far.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.length).unwrap_or(&[])
    }

    /// Writes the line to the platform's log.
    pub(crate) fn emit(&self) {
        platform::write(self.as_bytes());
    }
}

#[cfg(target_arch = "hexagon")]
mod platform {
    use core::ffi::{c_char, c_int};

    /// `HAP_LEVEL_ERROR`.
    const HAP_LEVEL_ERROR: c_int = 3;

    extern "C" {
        /// The PD's FARF sink (variadic in C; called with a format that has no conversions).
        fn HAP_debug_v2(level: c_int, file: *const c_char, line: c_int, format: *const c_char, ...);
    }

    pub(super) fn write(message: &[u8]) {
        // The message is the format itself, `%` doubled, with no variadic arguments (lpai_direct::farf).
        let mut buffer = [0u8; lpai_direct::farf::format_capacity(super::LINE_BYTES)];
        let format = lpai_direct::farf::format_of(message, &mut buffer);
        // SAFETY: both strings are NUL-terminated; the format has no conversion, so nothing variadic is read.
        unsafe { HAP_debug_v2(HAP_LEVEL_ERROR, c"lpai_contract".as_ptr(), 0, format.as_ptr()) }
    }
}

#[cfg(not(target_arch = "hexagon"))]
mod platform {
    use std::cell::RefCell;
    use std::string::String;
    use std::vec::Vec;

    /// Lines kept per thread; older ones are dropped (a process that never takes them stays bounded).
    const KEPT: usize = 256;

    std::thread_local! {
        /// Lines logged by this thread since the last [`take`] (the last [`KEPT`]).
        static LINES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    }

    pub(super) fn write(message: &[u8]) {
        let text = String::from_utf8_lossy(message).into_owned();
        std::eprintln!("{text}");
        LINES.with(|lines| {
            let mut lines = lines.borrow_mut();
            if lines.len() >= KEPT {
                lines.remove(0);
            }
            lines.push(text);
        });
    }

    pub(crate) fn take() -> Vec<String> {
        LINES.with(|lines| core::mem::take(&mut *lines.borrow_mut()))
    }
}

#[cfg(not(target_arch = "hexagon"))]
pub(crate) use platform::take;
