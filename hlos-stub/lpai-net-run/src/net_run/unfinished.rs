//! The inference a PD restart stopped a direct-mode job in, and what the job wrote of it: the skel's record names
//! the inference (its whole records are the inferences that completed), and what the output directory held before
//! the job ([`Before`], looked at before it runs) tells the files the job placed from the files an earlier run left.
//! Only the job's own are removed: its temporary files, the result files it renamed into place, and a directory it
//! made that is then empty.

use super::plan::Plan;
use crate::whole;
use anyhow::{Context as _, Result};
use lpai_direct::temporary::Token;
use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

/// A file's identity: its device and inode. A file renamed over another has a new one.
type Identity = (u64, u64);

/// What the output directory held, before a job, of the places the job writes.
#[derive(Debug, Default)]
pub struct Before {
    /// In runs of several graphs, the indices in the job's range whose `Result_<i>` directory existed (it holds the
    /// graphs' own directories).
    tops: HashSet<usize>,
    /// For each result directory of the job's range that existed (`Result_<i>`, or `Result_<i>/<graph>` in runs of
    /// several graphs), the identity of each of the job's output files there, in the job's order.
    directories: HashMap<usize, Vec<Option<Identity>>>,
}

/// The identity of the file at `path`, when there is one.
fn identity(path: &Path) -> Option<Identity> {
    std::fs::symlink_metadata(path).ok().map(|metadata| (metadata.dev(), metadata.ino()))
}

impl Before {
    /// Looks at the result directories `results` (by index) in `output_dir`, one by one (a listing of the output
    /// directory would grow with every result a long run adds): whether each exists, and the job's output files in
    /// those that do.
    pub fn look(plan: &Plan<'_>, output_dir: &Path, results: std::ops::Range<usize>) -> Before {
        let mut before = Before::default();
        for index in results {
            let directory = plan.result_directory(output_dir, index);
            if directory.is_dir() {
                let files = plan.kinds.outputs.iter().map(|output| identity(&directory.join(&output.file_name)));
                before.directories.insert(index, files.collect());
            }
            let top = directory.parent().filter(|_| plan.result_subdir.is_some());
            if top.is_some_and(Path::is_dir) {
                before.tops.insert(index);
            }
        }
        before
    }
}

/// Removes `path` when it exists.
fn remove_file(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            Err(error).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Removes what the job under `token` wrote of the result `index` it stopped in: the temporary files of its outputs,
/// each output file that is not the one `before` saw there (the job renamed it into place), and the directories the
/// job made, once empty.
pub fn remove(plan: &Plan<'_>, output_dir: &Path, index: usize, token: &Token, before: &Before) -> Result<()> {
    let directory = plan.result_directory(output_dir, index);
    let earlier = before.directories.get(&index);
    for (position, output) in plan.kinds.outputs.iter().enumerate() {
        let file = directory.join(&output.file_name);
        remove_file(&whole::skel_temporary(&file, token))?;
        let found = identity(&file);
        if found.is_some() && found != earlier.and_then(|files| files.get(position).copied().flatten()) {
            remove_file(&file)?;
        }
    }
    // A directory is removed only when the job made it and nothing else was written into it since.
    let top = directory.parent().filter(|_| plan.result_subdir.is_some());
    let made = [(earlier.is_none(), Some(directory.as_path())), (!before.tops.contains(&index), top)];
    for (made_here, directory) in made {
        if let (true, Some(directory)) = (made_here, directory) {
            let empty = std::fs::read_dir(directory).is_ok_and(|mut entries| entries.next().is_none());
            if empty {
                std::fs::remove_dir(directory).with_context(|| format!("cannot remove {}", directory.display()))?;
            }
        }
    }
    Ok(())
}
