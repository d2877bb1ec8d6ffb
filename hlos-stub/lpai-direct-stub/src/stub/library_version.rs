//! The version record (`lpai_direct::version`) of a stub or skel file, read from its `.lpai_direct.version`
//! section without loading it: what `stage` checks, `doctor` reports and the first-contact diagnoses compare.

use lpai_direct::version::{Record, RECORD_BYTES, SECTION};
use std::path::Path;

/// Why a file's record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file cannot be read.
    #[error("cannot be read: {0}")]
    Read(std::io::Error),
    /// The file is not an ELF file goblin reads.
    #[error("is not an ELF file ({0})")]
    NotElf(String),
    /// The file has no version section: a library from before versioning, or not an lpai-direct one.
    #[error("has no {SECTION} section (a build from before the version handshake, or not an lpai-direct library)")]
    NoSection,
    /// The section does not hold a record.
    #[error("has a malformed {SECTION} section")]
    Malformed,
}

/// The record in the ELF file at `path`.
pub fn read(path: &Path) -> Result<Record, RecordError> {
    let bytes = std::fs::read(path).map_err(RecordError::Read)?;
    record_in(&bytes)
}

/// The record in the bytes of an ELF file.
pub fn record_in(bytes: &[u8]) -> Result<Record, RecordError> {
    let start = record_offset(bytes)?;
    Record::parse(&bytes[start..]).ok_or(RecordError::Malformed)
}

/// Where the record of the ELF file `bytes` starts (the version section holds at least a record's bytes there),
/// for [`record_in`] and for tools and tests that patch a copy.
pub fn record_offset(bytes: &[u8]) -> Result<usize, RecordError> {
    let elf = goblin::elf::Elf::parse(bytes).map_err(|error| RecordError::NotElf(error.to_string()))?;
    let header = elf
        .section_headers
        .iter()
        .find(|header| elf.shdr_strtab.get_at(header.sh_name) == Some(SECTION))
        .ok_or(RecordError::NoSection)?;
    let start = usize::try_from(header.sh_offset).map_err(|_| RecordError::Malformed)?;
    let end = usize::try_from(header.sh_size).ok().and_then(|size| start.checked_add(size));
    match end {
        Some(end) if end - start >= RECORD_BYTES && end <= bytes.len() => Ok(start),
        _ => Err(RecordError::Malformed),
    }
}
