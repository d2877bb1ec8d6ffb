//! The PD's ELF loader, as the aDSP's loader does it, on byte slices: [`Layout::parse`] checks the file's header
//! and program headers and plans the image; [`load`] copies the segments into an image, checks the dynamic
//! section (DT_HEXAGON_VER, no DT_NEEDED, only PD services undefined) and applies the relocations. The caller
//! maps the memory, protects the pages ([`Layout::protection_runs`]) and runs the initializers. The file is
//! untrusted: every offset and size is checked, and anything the loader does not understand is refused.

mod dynamic;
mod header;
mod load;
mod refusal;
mod relocations;
mod symbols;
#[cfg(test)]
mod tests;

pub use header::{Layout, Segment, MAX_IMAGE_BYTES, MAX_SEGMENTS, PAGE_SIZE, PROT_EXEC, PROT_READ, PROT_WRITE};
pub use load::{load, Loaded, MAX_INITIALIZERS};
pub use refusal::{Name, Refusal};
pub use relocations::relocation_name;
pub use symbols::{Symbol, SymbolTable};

/// The little-endian `u16` at `offset`, if inside `bytes`.
fn u16_at(bytes: &[u8], offset: usize) -> Option<u16> {
    let end = offset.checked_add(2)?;
    bytes.get(offset..end).map(|word| u16::from_le_bytes([word[0], word[1]]))
}

/// The little-endian `u32` at `offset`, if inside `bytes`.
fn u32_at(bytes: &[u8], offset: usize) -> Option<u32> {
    let end = offset.checked_add(4)?;
    bytes.get(offset..end).map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]]))
}

/// Writes a little-endian `u32` at `offset`; `None` if it does not fit.
fn put_u32(bytes: &mut [u8], offset: usize, value: u32) -> Option<()> {
    let end = offset.checked_add(4)?;
    bytes.get_mut(offset..end)?.copy_from_slice(&value.to_le_bytes());
    Some(())
}
