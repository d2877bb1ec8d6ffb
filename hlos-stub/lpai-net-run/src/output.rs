//! Writing result files whole or not at all: each is written beside its final name and renamed into place.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The tensor's name with path separators made safe.
fn safe_name(tensor: &str) -> String {
    tensor.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '_' } else { c }).collect()
}

/// The file name qnn-net-run gives an output tensor: its name with path separators made safe, plus `.raw`.
pub fn file_name(tensor: &str) -> String {
    format!("{}.raw", safe_name(tensor))
}

/// The file name qnn-net-run gives an output tensor's native bytes next to its float32 file: `<name>_native.raw`.
pub fn native_file_name(tensor: &str) -> String {
    format!("{}_native.raw", safe_name(tensor))
}

/// Creates one result directory (and its missing parents), as `create_dir_all` does. The directory is usually new
/// and its parent already there, so a plain `mkdir` comes first: `create_dir_all` compares the path with the empty
/// path and walks its components before it even tries, on every inference.
pub fn create_directory(directory: &Path) -> Result<()> {
    if std::fs::create_dir(directory).is_ok() {
        return Ok(());
    }
    std::fs::create_dir_all(directory).with_context(|| format!("cannot create {}", directory.display()))
}

/// Writes `bytes` to `path` through a temporary sibling and a rename, so readers never see a partial file.
pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    // The name's own bytes plus the suffix: no lossy UTF-8 formatting of the path on every result file.
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let result = write_and_rename(&partial, path, bytes);
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}

/// Writes `bytes` to `partial`, flushed to the disk, and renames it to `path`.
fn write_and_rename(partial: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::File::create(partial)?;
    file.write_all(bytes)?;
    file.sync_data()?;
    std::fs::rename(partial, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_safe_and_files_appear_whole() {
        assert_eq!(file_name("a/b:c"), "a_b_c.raw");
        assert_eq!(native_file_name("a/b"), "a_b_native.raw");
        let dir = std::env::temp_dir().join(format!("lpai-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.raw");
        write_whole(&path, &[1, 2, 3]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), [1, 2, 3]);
        assert!(!dir.join("x.raw.partial").exists());
        // A new directory, one that already exists, one with a missing parent.
        for _ in 0..2 {
            create_directory(&dir.join("Result_0")).unwrap();
            create_directory(&dir.join("deeper/Result_1")).unwrap();
        }
        assert!(dir.join("Result_0").is_dir() && dir.join("deeper/Result_1").is_dir());
        std::fs::write(dir.join("file"), [0]).unwrap();
        assert!(format!("{:#}", create_directory(&dir.join("file/Result_2")).unwrap_err()).contains("cannot create"));
        let error = write_whole(&dir.join("missing/y.raw"), &[1]).unwrap_err();
        assert!(format!("{error:#}").contains("missing/y.raw"));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
