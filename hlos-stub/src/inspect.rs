//! `lpai-net-run inspect`: reads a context binary's metadata with libQnnSystem on this machine, describes its graphs
//! and tensors, and writes the metadata record (`--emit_metadata`) whole or not at all: the file firmware without an
//! HLOS keeps beside its binary, and what the skel loads with when its PD has no libQnnSystem.

use crate::metadata;
use crate::output;
use anyhow::{Context as _, Result};
use std::path::PathBuf;

/// What `inspect` reads and writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InspectSettings {
    /// The context binary.
    pub binary: PathBuf,
    /// libQnnSystem on this machine (a bare name is left to the dynamic loader's search).
    pub system_library: PathBuf,
    /// Where to write the metadata record, if anywhere.
    pub emit_metadata: Option<PathBuf>,
}

/// Reads the binary's metadata; answers its description (graphs and tensors, one a line) after writing the record
/// when asked to.
pub fn inspect(settings: &InspectSettings) -> Result<String> {
    let path = &settings.binary;
    let binary = std::fs::read(path).with_context(|| format!("context binary {} cannot be read", path.display()))?;
    let what = format!("context binary {}", path.display());
    let record = metadata::read_record(&settings.system_library, &binary, &what)?;
    let text = metadata::describe(&metadata::parse(&record)?);
    if let Some(file) = &settings.emit_metadata {
        output::write_whole(file, &record)?;
    }
    Ok(text)
}
