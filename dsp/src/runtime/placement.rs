//! Where the context binary goes for the backend: the caller's own bytes where they are when they meet the
//! backend's start and size alignment, otherwise a copy (or the file's bytes) in the arena, aligned as it asks.

use super::arena::Arena;
use super::backend::BackendProperties;
use super::error::RuntimeError;
use super::load::{Binary, PersistentBinary};
use crate::log;
use crate::platform::{Current, Hex, Level, Message, Platform};

/// The binary as the backend gets it.
pub(crate) struct Placed<'a> {
    /// The bytes handed to contextCreateFromBinary; they stay where they are for `'a`.
    pub(crate) bytes: &'a [u8],
    /// Whether they are the caller's own (no copy).
    pub(crate) in_place: bool,
}

/// Arena bytes a copy of a binary of `length` bytes may take: its length rounded up to the size alignment, plus
/// the worst start padding. `None` on overflow.
pub fn room_for_copy(length: usize, properties: &BackendProperties) -> Option<usize> {
    let rounded = length.checked_next_multiple_of(properties.size_alignment.max(1))?;
    rounded.checked_add(properties.start_alignment.max(1) - 1)
}

/// Places `binary` for a backend of `properties`, copying or reading it into `arena` unless it can be used in place.
pub(crate) fn place<'a>(
    properties: &BackendProperties,
    arena: &Arena<'a>,
    binary: Binary<'a, '_>,
) -> Result<Placed<'a>, RuntimeError> {
    match binary {
        Binary::InPlace(persistent) => place_persistent(properties, arena, persistent),
        other => Ok(Placed { bytes: copy_into(properties, arena, other)?, in_place: false }),
    }
}

/// Reads or copies the binary into an aligned arena buffer.
fn copy_into<'a>(
    properties: &BackendProperties,
    arena: &Arena<'a>,
    binary: Binary<'_, '_>,
) -> Result<&'a mut [u8], RuntimeError> {
    let length = binary.length()?;
    let size = length as u64;
    if length == 0 {
        return Err(RuntimeError::BinarySize(0));
    }
    let rounded = length.checked_next_multiple_of(properties.size_alignment).ok_or(RuntimeError::BinarySize(size))?;
    let buffer = arena.bytes(rounded, properties.start_alignment)?;
    let target = buffer.get_mut(..length).ok_or(RuntimeError::BinarySize(size))?;
    match binary {
        Binary::InPlace(persistent) => {
            lpai_direct::codec::copy_prefix(target, persistent.bytes());
        }
        Binary::Copy(bytes) => {
            lpai_direct::codec::copy_prefix(target, bytes);
        }
        Binary::File(path) => {
            let read = Current::read_file(path, target)
                .map_err(|error| RuntimeError::Platform { what: Message::StepReadingContextBinary, error })?;
            if read != length {
                return Err(RuntimeError::BinarySize(read as u64));
            }
        }
    }
    Ok(target)
}

/// Uses a caller's persistent binary where it is when its start and its memory (binary plus padding) meet the
/// backend's start and size alignment; otherwise copies it into the arena and says why.
fn place_persistent<'a>(
    properties: &BackendProperties,
    arena: &Arena<'a>,
    binary: PersistentBinary<'a>,
) -> Result<Placed<'a>, RuntimeError> {
    let bytes = binary.bytes();
    if bytes.is_empty() {
        return Err(RuntimeError::BinarySize(0));
    }
    let address = bytes.as_ptr() as usize;
    let start_aligned = address.is_multiple_of(properties.start_alignment);
    let rounded = bytes.len().checked_next_multiple_of(properties.size_alignment);
    let size_aligned = rounded.is_some_and(|rounded| rounded <= binary.memory().len());
    if start_aligned && size_aligned {
        log!(Level::Info, Message::BinaryInPlace, Hex::of(address), bytes.len());
        return Ok(Placed { bytes, in_place: true });
    }
    if !start_aligned {
        log!(Level::Warn, Message::BinaryMisaligned, Hex::of(address), bytes.len(), properties.start_alignment);
    } else {
        let (length, memory, granule) = (bytes.len(), binary.memory().len(), properties.size_alignment);
        log!(Level::Warn, Message::BinaryNotPadded, Hex::of(address), length, memory, granule);
    }
    let copy = copy_into(properties, arena, Binary::InPlace(binary))?;
    Ok(Placed { bytes: copy, in_place: false })
}
