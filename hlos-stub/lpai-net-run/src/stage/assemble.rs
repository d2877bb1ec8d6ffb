//! Assembling the staged directory whole or not at all: every file gets a place of its own, the directory is built
//! under a temporary name beside its final one and renamed into place ([`crate::whole::directory_via`]), and a
//! failure removes what was built.

use super::layout::{ADSP_DIR, INPUTS_DIR, OUTPUT_DIR};
use anyhow::{bail, Context as _, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One file to place: where it comes from, who named it, where it goes (relative to the root).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The file to copy.
    pub source: PathBuf,
    /// Who named it, for messages (a flag, a default, an input list line).
    pub named_by: String,
    /// Its place, relative to the root.
    pub destination: PathBuf,
    /// Whether it is a program (mode 755, else 644).
    pub executable: bool,
}

/// Two files for one place would lose one: refuses a file whose place the layout, a file `stage` writes (`written`,
/// by name) or an earlier file already takes.
pub fn check_destinations(placed: &[Placed], written: &[(&str, String)]) -> Result<()> {
    let mut destinations: BTreeMap<PathBuf, String> = BTreeMap::new();
    let reserved = written.iter().map(|(name, _)| (PathBuf::from(name), "stage itself".to_string()));
    let fixed = [INPUTS_DIR, ADSP_DIR, OUTPUT_DIR].map(|name| (PathBuf::from(name), "stage's layout".to_string()));
    for (destination, named_by) in reserved.chain(fixed) {
        destinations.insert(destination, named_by);
    }
    for file in placed {
        if let Some(first) = destinations.insert(file.destination.clone(), file.named_by.clone()) {
            bail!(
                "{} ({}) would be staged as {}, which {first} already uses",
                file.source.display(),
                file.named_by,
                file.destination.display()
            );
        }
    }
    Ok(())
}

/// Every file below `directory`, relative to it, sorted.
pub fn files_below(directory: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(next) = pending.pop() {
        let entries = std::fs::read_dir(&next).with_context(|| format!("cannot list {}", next.display()))?;
        for entry in entries {
            let path = entry.with_context(|| format!("cannot list {}", next.display()))?.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(relative) = path.strip_prefix(directory) {
                found.push(relative.to_path_buf());
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Builds the directory under a temporary name beside `output_dir` (`<name>.<token>.partial`, its token unique to
/// this stage) and renames it into place; on any failure removes it, so nothing half-made remains.
pub fn assemble(output_dir: &Path, placed: &[Placed], written: &[(&str, String)]) -> Result<PathBuf> {
    crate::whole::directory_via(output_dir, |partial| build(partial, placed, written))?;
    Ok(output_dir.to_path_buf())
}

/// Copies and writes every file into `partial`.
fn build(partial: &Path, placed: &[Placed], written: &[(&str, String)]) -> Result<()> {
    std::fs::create_dir_all(partial.join(ADSP_DIR)).with_context(|| format!("cannot create {}", partial.display()))?;
    for file in placed {
        let destination = partial.join(&file.destination);
        if let Some(parent) = destination.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::copy(&file.source, &destination).with_context(|| {
            format!("cannot copy {} ({}) to {}", file.source.display(), file.named_by, destination.display())
        })?;
        set_mode(&destination, if file.executable { 0o755 } else { 0o644 })?;
    }
    for (name, text) in written {
        let destination = partial.join(name);
        std::fs::write(&destination, text).with_context(|| format!("cannot write {}", destination.display()))?;
    }
    Ok(())
}

fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot set the permissions of {}", path.display()))
}
