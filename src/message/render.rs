//! Puts records in words: each message's template with its `{}` places filled by its items, in the one shape the
//! DSP's lines always had: at most [`ROOM`] bytes of text (cut at a character boundary), then `...`.

use super::encoding::{self, Reader};
use super::Message;

/// Bytes of a rendered line, `...` included.
pub const LINE_BYTES: usize = 256;
/// Bytes of text before a cut line's `...`.
pub const ROOM: usize = LINE_BYTES - 3;

/// A record in words: at most [`LINE_BYTES`] bytes, ending in `...` when it was cut (by the writer or here).
pub struct Rendered {
    bytes: [u8; LINE_BYTES],
    length: usize,
    cut: bool,
}

impl Rendered {
    fn new() -> Rendered {
        Rendered { bytes: [0; LINE_BYTES], length: 0, cut: false }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        let bytes = self.bytes.get(..self.length).unwrap_or_default();
        core::str::from_utf8(bytes).unwrap_or("(a message that is not UTF-8)")
    }

    /// Adds `text`, or as much of it as fits (whole characters) and then `...`.
    fn text(&mut self, text: &str) {
        if self.cut {
            return;
        }
        let room = ROOM.saturating_sub(self.length);
        let mut end = text.len().min(room);
        while !text.is_char_boundary(end) {
            end = end.saturating_sub(1);
        }
        self.push(text.as_bytes().get(..end).unwrap_or_default());
        if end < text.len() {
            self.end_cut();
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if let Some(slot) = self.bytes.get_mut(self.length) {
                *slot = byte;
                self.length += 1;
            }
        }
    }

    /// Ends the line in `...`, once.
    fn end_cut(&mut self) {
        if !self.cut {
            self.push(b"...");
            self.cut = true;
        }
    }

    /// Adds `value`'s digits in `base` (10 or 16, lowercase), at least `width` of them.
    fn digits(&mut self, value: u64, base: u64, width: usize) {
        let mut digits = [b'0'; 64];
        let (mut at, mut rest) = (digits.len(), value);
        while at > 0 && (rest != 0 || digits.len() - at < width.max(1)) {
            at -= 1;
            if let Some(slot) = digits.get_mut(at) {
                *slot = b"0123456789abcdef".get((rest % base) as usize).copied().unwrap_or(b'?');
            }
            rest /= base;
        }
        self.text(core::str::from_utf8(digits.get(at..).unwrap_or_default()).unwrap_or("?"));
    }
}

impl core::fmt::Display for Rendered {
    fn fmt(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

impl core::fmt::Debug for Rendered {
    fn fmt(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Debug::fmt(self.as_str(), formatter)
    }
}

/// `record` in words, with this build's table.
pub fn render(record: &[u8]) -> Rendered {
    render_with(record, |id| Message::from_id(id).map(Message::template))
}

/// `record` in words, each message's template from `template` (a firmware's optional table, or none: a message
/// without one is said as `message #ID(argument, ...)`).
pub fn render_with(record: &[u8], template: impl Fn(u16) -> Option<&'static str> + Copy) -> Rendered {
    let mut out = Rendered::new();
    let Some((&flags, items)) = record.split_first() else { return out };
    let mut reader = Reader::new(items);
    while reader.peek().is_some() && !out.cut {
        if item(&mut reader, &mut out, template).is_none() {
            break;
        }
    }
    if flags & encoding::CUT != 0 {
        out.end_cut();
    }
    out
}

/// A signed number in decimal, with a `-` when negative.
fn signed(out: &mut Rendered, value: i64) {
    if value < 0 {
        out.text("-");
    }
    out.digits(value.unsigned_abs(), 10, 1);
}

/// Renders one item; `None` at the end of the record (or at a byte no item starts with).
fn item(
    reader: &mut Reader<'_>,
    out: &mut Rendered,
    template: impl Fn(u16) -> Option<&'static str> + Copy,
) -> Option<()> {
    match reader.byte()? {
        encoding::MESSAGE => message(reader, out, template),
        encoding::UNSIGNED => {
            out.digits(reader.leb128()?, 10, 1);
            Some(())
        }
        encoding::SIGNED => {
            signed(out, encoding::unzigzag(reader.leb128()?));
            Some(())
        }
        encoding::HEX => {
            let width = reader.byte()?;
            out.text("0x");
            out.digits(reader.leb128()?, 16, usize::from(width));
            Some(())
        }
        encoding::TEXT => {
            let length = usize::try_from(reader.leb128()?).ok()?;
            let bytes = reader.take(length);
            out.text(core::str::from_utf8(bytes).unwrap_or("(text that is not UTF-8)"));
            Some(())
        }
        encoding::QNN_ERROR => {
            let code = u32::try_from(reader.leb128()?).unwrap_or(u32::MAX);
            out.text(crate::qnn::error::error_name(code));
            Some(())
        }
        encoding::BOOLEAN => {
            out.text(if reader.byte()? != 0 { "true" } else { "false" });
            Some(())
        }
        encoding::DATA_TYPE => {
            let value = u32::try_from(reader.leb128()?).unwrap_or(u32::MAX);
            out.text(crate::qnn::DataType(value).c_name().unwrap_or("an unknown data type"));
            Some(())
        }
        encoding::METHOD => {
            let id = reader.leb128()?;
            match crate::codec::METHODS.iter().find(|method| u64::from(method.id) == id) {
                Some(method) => out.text(method.name),
                None => {
                    out.text("method ");
                    out.digits(id, 10, 1);
                }
            }
            Some(())
        }
        encoding::ERRNO => {
            let code = encoding::unzigzag(reader.leb128()?);
            signed(out, code);
            if let Some(meaning) = errno_meaning(code) {
                out.text(" (");
                out.text(meaning);
                out.text(")");
            }
            Some(())
        }
        _ => None,
    }
}

/// Renders a message (after its tag): its template's text with each `{}` filled by the next item, up to its end.
fn message(
    reader: &mut Reader<'_>,
    out: &mut Rendered,
    template: impl Fn(u16) -> Option<&'static str> + Copy,
) -> Option<()> {
    let id = reader.u16()?;
    let Some(text) = template(id) else { return unknown(id, reader, out, template) };
    let mut pieces = text.split("{}");
    if let Some(first) = pieces.next() {
        out.text(first);
    }
    for piece in pieces {
        if reader.peek() == Some(encoding::END) || reader.peek().is_none() {
            out.text("?");
        } else {
            item(reader, out, template)?;
        }
        out.text(piece);
    }
    // Arguments beyond the template's places (never written by a checked call site) are skipped.
    while reader.peek()? != encoding::END {
        item(reader, &mut Rendered::new(), template)?;
    }
    reader.byte().map(drop)
}

/// A message with no template: `message #ID(argument, ...)`.
fn unknown(
    id: u16,
    reader: &mut Reader<'_>,
    out: &mut Rendered,
    template: impl Fn(u16) -> Option<&'static str> + Copy,
) -> Option<()> {
    out.text("message #");
    out.digits(u64::from(id), 10, 1);
    out.text("(");
    let mut first = true;
    while reader.peek()? != encoding::END {
        if !first {
            out.text(", ");
        }
        first = false;
        item(reader, out, template)?;
    }
    out.text(")");
    reader.byte().map(drop)
}

/// What the errno values a file service most often answers mean (every platform's file services answer errno
/// numbers: the host's and Linux user mode's own, the aDSP's `apps_std` the HLOS side's), so that a full disk or a
/// read-only directory reads as such in a message.
fn errno_meaning(code: i64) -> Option<&'static str> {
    Some(match code {
        1 => "operation not permitted",
        5 => "input/output error",
        12 => "out of memory",
        13 => "permission denied",
        17 => "file exists",
        20 => "not a directory",
        21 => "is a directory",
        24 => "too many open files",
        27 => "file too large",
        28 => "no space left on device",
        30 => "read-only file system",
        36 => "file name too long",
        122 => "disk quota exceeded",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::encoding::*;
    use super::*;

    /// A record with a message of `id` and the items after it.
    fn record(flags: u8, id: u16, items: &[u8]) -> [u8; 64] {
        let mut bytes = [0u8; 64];
        bytes[0] = flags;
        bytes[1] = MESSAGE;
        bytes[2..4].copy_from_slice(&id.to_le_bytes());
        bytes[4..4 + items.len()].copy_from_slice(items);
        bytes[4 + items.len()] = END;
        bytes
    }

    fn length(bytes: &[u8; 64]) -> usize {
        // The record ends at the message's END: the last non-zero byte's next.
        bytes.iter().rposition(|&byte| byte != 0).map_or(1, |end| end + 2)
    }

    #[test]
    fn templates_take_their_items_in_order_and_unknown_messages_say_their_arguments() {
        let templates = |id: u16| match id {
            1 => Some("a {} of {} at {}, {} ({})"),
            _ => None,
        };
        let items = [UNSIGNED, 42, SIGNED, 3, HEX, 4, 0x1f, TEXT, 2, b'o', b'k', QNN_ERROR, 0x96, 0x2f];
        let bytes = record(0, 1, &items);
        let text = render_with(&bytes[..length(&bytes)], templates);
        assert_eq!(text.as_str(), "a 42 of -2 at 0x001f, ok (QNN_GRAPH_ERROR_EARLY_TERMINATION)");
        let bytes = record(0, 9, &[UNSIGNED, 7, BOOLEAN, 1]);
        assert_eq!(render_with(&bytes[..length(&bytes)], templates).as_str(), "message #9(7, true)");
    }

    #[test]
    fn a_method_id_is_said_by_its_name() {
        let bytes = record(0, 9, &[METHOD, crate::codec::execute::ID as u8, METHOD, 40]);
        assert_eq!(render_with(&bytes[..length(&bytes)], |_| None).as_str(), "message #9(execute, method 40)");
    }

    #[test]
    fn a_cut_record_and_a_long_text_end_in_three_dots_at_the_old_width() {
        let bytes = record(CUT, 9, &[UNSIGNED, 7]);
        assert_eq!(render_with(&bytes[..length(&bytes)], |_| None).as_str(), "message #9(7)...");
        let mut long = [0u8; 600];
        long[0] = 0;
        long[1] = TEXT;
        let mut size = [0u8; 10];
        let used = leb128(500, &mut size);
        long[2..2 + used].copy_from_slice(&size[..used]);
        long[2 + used..2 + used + 500].fill(b'x');
        let text = render(&long[..2 + used + 500]);
        assert_eq!(text.as_str().len(), ROOM + 3);
        assert!(text.as_str().ends_with("x..."));
    }
}
