//! The workspace this library was built in: where the build scripts leave what the stub and `stage` fall back on
//! when nothing names a file (the host skel in `target/release/`, the virtual aDSP in `target/virtual-adsp/`, the
//! Hexagon and HLOS builds).

use std::path::{Path, PathBuf};

/// The workspace root: two levels above this package (`hlos-stub/lpai-direct-stub`).
pub fn root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.ancestors().nth(2).unwrap_or(manifest).to_path_buf()
}
