//! One log line or message on the stack, as a record (`lpai_direct::message`): which message of the core's table it
//! says and the values that fill it, never its words (the HLOS side renders them). No formatting machinery and no
//! panic paths: a message costs a call per value, and one that outgrows the line is cut (it then renders with `...`).

use lpai_direct::message::encoding::{self, leb128};
use lpai_direct::message::{Message, Rendered};

/// Capacity of one record (its flags byte included); a longer message is cut.
pub const LOG_LINE_BYTES: usize = 256;

/// A message being said, as a record.
pub struct Line {
    /// The flags byte, then the items.
    bytes: [u8; LOG_LINE_BYTES],
    length: usize,
}

impl Line {
    /// An empty line.
    pub const fn new() -> Line {
        Line { bytes: [0; LOG_LINE_BYTES], length: 1 }
    }

    /// A line saying `value`.
    pub fn of(value: &(impl Say + ?Sized)) -> Line {
        let mut line = Line::new();
        value.say(&mut line);
        line
    }

    /// Empties the line.
    pub fn clear(&mut self) {
        self.bytes[0] = 0;
        self.length = 1;
    }

    /// Whether nothing was said.
    pub fn is_empty(&self) -> bool {
        self.length <= 1
    }

    /// The record: the flags byte, then the items.
    pub fn record(&self) -> &[u8] {
        self.bytes.get(..self.length).unwrap_or_default()
    }

    /// The record in words, with the core's table (host tools and tests; a device build never renders).
    pub fn rendered(&self) -> Rendered {
        lpai_direct::message::render(self.record())
    }

    fn cut(&self) -> bool {
        self.bytes[0] & encoding::CUT != 0
    }

    /// Appends `parts` whole, or marks the line cut and appends nothing more.
    #[inline(never)]
    fn push(&mut self, parts: &[&[u8]]) {
        if self.cut() {
            return;
        }
        let length = parts.iter().fold(0usize, |total, part| total.saturating_add(part.len()));
        let Some(room) = self.length.checked_add(length).and_then(|end| self.bytes.get_mut(self.length..end)) else {
            self.bytes[0] |= encoding::CUT;
            return;
        };
        let mut at = 0;
        for part in parts {
            lpai_direct::codec::copy_prefix(room.get_mut(at..).unwrap_or_default(), part);
            at += part.len();
        }
        self.length += length;
    }

    /// Starts `message`: the values said next fill its places, up to [`Line::end`].
    #[inline(never)]
    pub fn begin(&mut self, message: Message) {
        let id = (message as u16).to_le_bytes();
        self.push(&[&[encoding::MESSAGE], &id]);
    }

    /// Ends the message begun last.
    #[inline(never)]
    pub fn end(&mut self) {
        self.push(&[&[encoding::END]]);
    }

    fn number(&mut self, tag: u8, value: u64) {
        let mut digits = [0u8; 10];
        let length = leb128(value, &mut digits);
        self.push(&[&[tag], digits.get(..length).unwrap_or_default()]);
    }

    /// Says `value` in decimal.
    #[inline(never)]
    pub fn unsigned(&mut self, value: u64) {
        self.number(encoding::UNSIGNED, value);
    }

    /// Says `value` in decimal, with a `-` when negative.
    #[inline(never)]
    pub fn signed(&mut self, value: i64) {
        self.number(encoding::SIGNED, encoding::zigzag(value));
    }

    /// Says `value` after `0x` in at least `width` hex digits.
    #[inline(never)]
    pub fn hex(&mut self, value: u64, width: u8) {
        let mut digits = [0u8; 10];
        let length = leb128(value, &mut digits);
        self.push(&[&[encoding::HEX, width], digits.get(..length).unwrap_or_default()]);
    }

    /// Says a QNN error code by its name.
    #[inline(never)]
    pub fn qnn_error(&mut self, code: u32) {
        self.number(encoding::QNN_ERROR, u64::from(code));
    }

    /// Says a `Qnn_DataType_t` by its C name.
    #[inline(never)]
    pub fn data_type(&mut self, value: u32) {
        self.number(encoding::DATA_TYPE, u64::from(value));
    }

    /// Says text known only at run time (a name, a path); as much of it as fits (whole characters), then the line
    /// is cut.
    #[inline(never)]
    pub fn text(&mut self, text: &str) {
        if self.cut() {
            return;
        }
        let mut size = [0u8; 10];
        let mut fitting = text.len();
        loop {
            let used = leb128(fitting as u64, &mut size);
            let room = LOG_LINE_BYTES.saturating_sub(self.length).saturating_sub(1 + used);
            if fitting <= room {
                break;
            }
            fitting = room;
            while !text.is_char_boundary(fitting) {
                fitting -= 1;
            }
        }
        let used = leb128(fitting as u64, &mut size);
        let bytes = text.as_bytes().get(..fitting).unwrap_or_default();
        self.push(&[&[encoding::TEXT], size.get(..used).unwrap_or_default(), bytes]);
        if fitting < text.len() {
            self.bytes[0] |= encoding::CUT;
        }
    }

    /// Appends another line's items (its message, said inside this one).
    pub fn line(&mut self, other: &Line) {
        self.push(&[other.record().get(1..).unwrap_or_default()]);
        if other.cut() {
            self.bytes[0] |= encoding::CUT;
        }
    }
}

impl Default for Line {
    fn default() -> Self {
        Line::new()
    }
}

/// Something a message can say: a value that fills one of its places (a number, run-time text, another message).
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
        line.push(&[&[encoding::BOOLEAN, u8::from(*self)]]);
    }
}

impl Say for Line {
    fn say(&self, line: &mut Line) {
        line.line(self);
    }
}

/// A message of the core's table with no places, said as itself.
impl Say for Message {
    fn say(&self, line: &mut Line) {
        line.begin(*self);
        line.end();
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
    digits: u8,
}

impl Hex {
    /// `value` as `0x` and its digits (as `{:#x}` writes it).
    pub fn of(value: impl TryInto<u64>) -> Hex {
        Hex::padded(value, 1)
    }

    /// `value` with at least `digits` digits after `0x` (`Hex::padded(v, 4)` writes what `{:#06x}` does).
    pub fn padded(value: impl TryInto<u64>, digits: u8) -> Hex {
        Hex { value: value.try_into().unwrap_or(u64::MAX), digits }
    }
}

impl Say for Hex {
    fn say(&self, line: &mut Line) {
        line.hex(self.value, self.digits);
    }
}

/// A platform error number, said with what it means when the HLOS side knows it ("28 (no space left on device)").
#[derive(Clone, Copy)]
pub struct Errno(pub i32);

impl Say for Errno {
    fn say(&self, line: &mut Line) {
        line.number(encoding::ERRNO, encoding::zigzag(i64::from(self.0)));
    }
}

/// A QNN error code, said by its C name (on the HLOS side: the names are not on the DSP).
#[derive(Clone, Copy)]
pub struct QnnError(pub u32);

impl Say for QnnError {
    fn say(&self, line: &mut Line) {
        line.qnn_error(self.0);
    }
}

/// A method of the interface, by its id; said by its IDL name (on the HLOS side: the names are not on the DSP).
#[derive(Clone, Copy)]
pub struct MethodId(pub u32);

impl Say for MethodId {
    fn say(&self, line: &mut Line) {
        line.number(encoding::METHOD, u64::from(self.0));
    }
}

/// How many values a `say!` gives (its argument count, checked against the message's places when it compiles).
#[doc(hidden)]
#[macro_export]
macro_rules! count_values {
    () => { 0usize };
    ($head:expr $(, $tail:expr)*) => { 1usize + $crate::count_values!($($tail),*) };
}

/// Says a message of the core's table with the values that fill its places into a [`Line`] (a `&mut Line`):
/// `say!(line, Message::ReadAt, bytes, Hex::of(address))`. A call whose value count is not the message's place
/// count does not compile.
#[macro_export]
macro_rules! say {
    ($line:expr, $message:expr $(, $value:expr)* $(,)?) => {{
        const {
            assert!(
                $message.places() == $crate::count_values!($($value),*),
                "this message's places and the values given differ"
            )
        };
        let line: &mut $crate::platform::Line = $line;
        line.begin($message);
        $( $crate::platform::Say::say(&$value, line); )*
        line.end();
    }};
}

/// Logs a message through the platform at a [`Level`](crate::platform::Level), said on the stack only when that
/// level is written: `log!(Level::Info, Message::GraphInputs, name, count)`, or `log!(Level::Warn, error)` for a
/// value that says itself.
#[macro_export]
macro_rules! log {
    ($level:expr, $value:expr $(,)?) => {{
        let level = $level;
        if $crate::platform::log_enabled(level) {
            // Said into a line in place (not `Line::of`, whose returned line is a second copy on the stack).
            let mut line = $crate::platform::Line::new();
            $crate::platform::Say::say(&$value, &mut line);
            $crate::platform::write_log(level, &line);
        }
    }};
    ($level:expr, $message:expr, $($value:expr),+ $(,)?) => {{
        let level = $level;
        if $crate::platform::log_enabled(level) {
            let mut line = $crate::platform::Line::new();
            $crate::say!(&mut line, $message, $($value),+);
            $crate::platform::write_log(level, &line);
        }
    }};
}

/// A new [`Line`]: `message!(value)` says one value that says itself (an error), `message!(Message::X, values..)` a
/// message of the table.
#[macro_export]
macro_rules! message {
    ($value:expr $(,)?) => {
        $crate::platform::Line::of(&$value)
    };
    ($message:expr, $($value:expr),+ $(,)?) => {{
        let mut line = $crate::platform::Line::new();
        $crate::say!(&mut line, $message, $($value),+);
        line
    }};
}
