//! Result files: their names and directories (each is written whole or not at all by [`crate::whole::write`]).

use anyhow::{Context, Result};
use std::path::Path;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_safe_and_directories_made() {
        assert_eq!(file_name("a/b:c"), "a_b_c.raw");
        assert_eq!(native_file_name("a/b"), "a_b_native.raw");
        let dir = std::env::temp_dir().join(format!("lpai-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A new directory, one that already exists, one with a missing parent.
        for _ in 0..2 {
            create_directory(&dir.join("Result_0")).unwrap();
            create_directory(&dir.join("deeper/Result_1")).unwrap();
        }
        assert!(dir.join("Result_0").is_dir() && dir.join("deeper/Result_1").is_dir());
        std::fs::write(dir.join("file"), [0]).unwrap();
        assert!(format!("{:#}", create_directory(&dir.join("file/Result_2")).unwrap_err()).contains("cannot create"));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
