//! The input list `stage` writes: lpai-net-run's own reader (`input_list`) tells the lines apart, each input file
//! is placed under `inputs/` once, and every entry is written back as its device path.

use super::assemble::Placed;
use super::layout::INPUTS_DIR;
use crate::input_list::{self, Entry, ListLine};
use anyhow::{bail, Context as _, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The input list read and rewritten: its text with device paths, and the files to copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListPlan {
    /// The list as the device reads it.
    pub text: String,
    /// The input files, each once, to copy under `inputs/`.
    pub files: Vec<Placed>,
}

/// Reads the input list: `#` lines and blank lines are kept as they are; each entry (`name:=path` or a bare path,
/// taken from the current directory when relative, as lpai-net-run reads it) must name a file, which goes under
/// `inputs/` by its file name (`inputs/<n>/` when another file already has that name) and is written back as its
/// device path.
pub fn plan_input_list(list: &Path, device_dir: &str) -> Result<ListPlan> {
    let text = std::fs::read_to_string(list).with_context(|| format!("cannot read input list {}", list.display()))?;
    let mut by_source: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    let mut taken: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    let mut files = Vec::new();
    let mut lines = Vec::new();
    let mut inferences = 0;
    for (number, raw, line) in input_list::lines(&text) {
        let ListLine::Inference(entries) = line else {
            lines.push(raw.to_string());
            continue;
        };
        inferences += 1;
        let mut rewritten = Vec::new();
        for Entry { name, path } in entries {
            let source = Path::new(path);
            let canonical = std::fs::canonicalize(source).ok().filter(|path| path.is_file()).with_context(|| {
                format!(
                    "input list {} line {}: {path} is not a file (relative paths are taken from the current \
                     directory, as lpai-net-run reads them)",
                    list.display(),
                    number
                )
            })?;
            let destination = match by_source.get(&canonical) {
                Some(destination) => destination.clone(),
                None => {
                    let base = PathBuf::from(canonical.file_name().unwrap_or_default());
                    let mut destination = Path::new(INPUTS_DIR).join(&base);
                    let mut counter = 1;
                    while taken.contains_key(&destination) {
                        destination = Path::new(INPUTS_DIR).join(counter.to_string()).join(&base);
                        counter += 1;
                    }
                    taken.insert(destination.clone(), canonical.clone());
                    by_source.insert(canonical.clone(), destination.clone());
                    files.push(Placed {
                        source: canonical.clone(),
                        named_by: format!("input list {} line {}", list.display(), number),
                        destination: destination.clone(),
                        executable: false,
                    });
                    destination
                }
            };
            let device_path = format!("{device_dir}/{}", destination.display());
            if device_path.contains(char::is_whitespace) {
                bail!(
                    "input list {} line {}: {path} would be {device_path} on the device, and an input list cannot \
                     hold a path with spaces",
                    list.display(),
                    number
                );
            }
            rewritten.push(match name {
                Some(name) => format!("{name}:={device_path}"),
                None => device_path,
            });
        }
        lines.push(rewritten.join(" "));
    }
    if inferences == 0 {
        bail!("input list {} has no inference lines", list.display());
    }
    Ok(ListPlan { text: lines.join("\n") + "\n", files })
}
