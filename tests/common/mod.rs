//! Helpers shared by the end-to-end tests: where the built artifacts are, and running programs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A built artifact, or a failure that says which script builds it.
pub fn artifact(relative: &str, built_by: &str) -> PathBuf {
    let path = root().join(relative);
    assert!(path.exists(), "{} is missing: run {built_by} first (scripts/test.sh does)", path.display());
    path
}

/// Runs a program to completion, failing the test if it cannot start.
pub fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("cannot start {program}: {error} (scripts/setup.sh installs it)"))
}
