//! Messages said on the DSP as an id and its arguments, put in words on the HLOS side.
//!
//! The DSP never carries a message's text: its code writes a compact record ([`encoding`]) of which message it
//! says ([`Message`], one table) and the values that fill the message's `{}` places: numbers, names and
//! paths it only knows at run time, QNN error codes (named here), and other messages (a runtime error inside a job's
//! failure). The stub, `lpai-net-run` and the tests render records in the very words the DSP used to build itself
//! ([`render()`]); a captured DSP log, whose lines carry the records in hex, is rendered the same way. The table is
//! compiled into both sides from this one file (`src/message/table.rs`); the build id both sides carry in their
//! version records ends in a hash of that file, so a skel whose table differs from the stub's is named as such.
//!
//! Why not `defmt`: defmt keeps its strings in a section of the DSP binary and the host decodes with that ELF file at
//! hand; here the stub renders a skel's messages with no access to the skel's file (the audio and sensor PDs load it
//! from their own path), and the embedding's C API renders with a table the firmware may link or leave out. Keeping
//! the table in the core, shared by construction, does both with a record format of a page.

pub mod encoding;
pub mod log;
pub mod render;
mod table;

pub use log::{log_line, log_line_capacity};
pub use render::{render, render_with, Rendered};
pub use table::Message;

/// Counts the `{}` places in a template (the arguments its message takes): a `const fn`, so that each call site's
/// argument count is checked when it compiles.
pub const fn places(template: &str) -> usize {
    let bytes = template.as_bytes();
    let (mut index, mut count) = (0, 0);
    while index + 1 < bytes.len() {
        if bytes[index] == b'{' && bytes[index + 1] == b'}' {
            count += 1;
            index += 2;
        } else {
            index += 1;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_counted_and_every_message_has_an_id_that_reads_back() {
        assert_eq!(places("a {} b {} c"), 2);
        assert_eq!(places("{}{}"), 2);
        assert_eq!(places("no places, even with { or }"), 0);
        for id in 0..table::COUNT as u16 {
            let message = Message::from_id(id).unwrap_or_else(|| panic!("id {id} has no message"));
            assert_eq!(message as u16, id);
        }
        assert_eq!(Message::from_id(table::COUNT as u16), None);
    }
}
