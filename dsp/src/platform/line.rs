//! One log line or message on the stack, said in parts (text, numbers, values that say themselves) and cut with
//! `...` when full: no formatting machinery and no panic paths, so an error message costs the skel a call per part.

/// Capacity of one log line or message; longer ones are cut and end in `...`.
pub const LOG_LINE_BYTES: usize = 256;

/// Room for text before a cut line's `...`.
const ROOM: usize = LOG_LINE_BYTES - 3;

/// A message being said: keeps what fits and ends a longer one in `...`.
pub struct Line {
    text: heapless::String<LOG_LINE_BYTES>,
    cut: bool,
}

impl Line {
    /// An empty line.
    pub const fn new() -> Line {
        Line { text: heapless::String::new(), cut: false }
    }

    /// Empties the line.
    pub fn clear(&mut self) {
        self.text.clear();
        self.cut = false;
    }

    /// The text so far.
    pub fn as_str(&self) -> &str {
        self.text.as_str()
    }

    /// Adds `text`, or as much of it as fits (whole characters) and then `...`.
    #[inline(never)]
    pub fn text(&mut self, text: &str) {
        if self.cut {
            return;
        }
        let room = ROOM.saturating_sub(self.text.len());
        if text.len() <= room {
            let _ = self.text.push_str(text);
            return;
        }
        let mut end = room;
        while !text.is_char_boundary(end) {
            end = end.saturating_sub(1);
        }
        let _ = self.text.push_str(text.get(..end).unwrap_or(""));
        let _ = self.text.push_str("...");
        self.cut = true;
    }

    /// Adds `value` in decimal.
    #[inline(never)]
    pub fn unsigned(&mut self, value: u64) {
        self.digits(value, 10, 1);
    }

    /// Adds `value` in decimal, with a `-` when negative.
    #[inline(never)]
    pub fn signed(&mut self, value: i64) {
        if value < 0 {
            self.text("-");
        }
        self.unsigned(value.unsigned_abs());
    }

    /// Adds `value`'s digits in `base` (10 or 16, lowercase), at least `width` of them.
    fn digits(&mut self, value: u64, base: u64, width: usize) {
        let mut digits = [b'0'; 20];
        let (mut at, mut rest) = (digits.len(), value);
        while at > 0 && (rest != 0 || digits.len() - at < width) {
            at -= 1;
            if let Some(slot) = digits.get_mut(at) {
                *slot = b"0123456789abcdef".get((rest % base) as usize).copied().unwrap_or(b'?');
            }
            rest /= base;
        }
        if at == digits.len() {
            at -= 1;
        }
        self.text(core::str::from_utf8(digits.get(at..).unwrap_or(&[])).unwrap_or("?"));
    }
}

impl Default for Line {
    fn default() -> Self {
        Line::new()
    }
}

/// Something a message can say: text, a number, or a value that says itself in parts.
pub trait Say {
    /// Says `self` into `line`.
    fn say(&self, line: &mut Line);
}

impl Say for str {
    fn say(&self, line: &mut Line) {
        line.text(self);
    }
}

impl<T: Say + ?Sized> Say for &T {
    fn say(&self, line: &mut Line) {
        (**self).say(line);
    }
}

impl Say for bool {
    fn say(&self, line: &mut Line) {
        line.text(if *self { "true" } else { "false" });
    }
}

impl Say for Line {
    fn say(&self, line: &mut Line) {
        line.text(self.as_str());
    }
}

macro_rules! say_unsigned {
    ($($type:ty),*) => {$(
        impl Say for $type {
            fn say(&self, line: &mut Line) {
                line.unsigned(*self as u64);
            }
        }
    )*};
}
say_unsigned!(u8, u16, u32, u64, usize);

macro_rules! say_signed {
    ($($type:ty),*) => {$(
        impl Say for $type {
            fn say(&self, line: &mut Line) {
                line.signed(*self as i64);
            }
        }
    )*};
}
say_signed!(i8, i16, i32, i64, isize);

/// A number said in hexadecimal after `0x`, with at least `digits` digits.
#[derive(Clone, Copy)]
pub struct Hex {
    value: u64,
    digits: usize,
}

impl Hex {
    /// `value` as `0x` and its digits (as `{:#x}` writes it).
    pub fn of(value: impl TryInto<u64>) -> Hex {
        Hex::padded(value, 1)
    }

    /// `value` with at least `digits` digits after `0x` (`Hex::padded(v, 4)` writes what `{:#06x}` does).
    pub fn padded(value: impl TryInto<u64>, digits: usize) -> Hex {
        Hex { value: value.try_into().unwrap_or(u64::MAX), digits }
    }
}

impl Say for Hex {
    fn say(&self, line: &mut Line) {
        line.text("0x");
        line.digits(self.value, 16, self.digits);
    }
}

/// Says parts into a [`Line`] (a `&mut Line`): `say!(line, "read ", bytes, " at ", Hex::of(address))`.
#[macro_export]
macro_rules! say {
    ($line:expr, $($part:expr),+ $(,)?) => {{
        let line: &mut $crate::platform::Line = $line;
        $( $crate::platform::Say::say(&$part, line); )+
    }};
}

/// Logs parts through the platform at a [`Level`](crate::platform::Level), said on the stack only when that
/// level is written: `log!(Level::Info, "graph ", name, ": ", count, " inputs")`.
#[macro_export]
macro_rules! log {
    ($level:expr, $($part:expr),+ $(,)?) => {{
        let level = $level;
        if $crate::platform::log_enabled(level) {
            let mut line = $crate::platform::Line::new();
            $crate::say!(&mut line, $($part),+);
            $crate::platform::write_log(level, &line);
        }
    }};
}

/// Says parts into a new [`Line`].
#[macro_export]
macro_rules! message {
    ($($part:expr),+ $(,)?) => {{
        let mut line = $crate::platform::Line::new();
        $crate::say!(&mut line, $($part),+);
        line
    }};
}
