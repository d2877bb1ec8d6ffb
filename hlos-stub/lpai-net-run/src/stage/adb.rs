//! `stage --push`: finds `adb` on `PATH` and runs the commands with it, stopping at the first that fails.

use super::shell::AdbCommand;
use anyhow::{anyhow, bail, Context as _, Result};
use std::path::{Path, PathBuf};

/// The first `program` in the directories of `path` (a `PATH` value) that is an executable file.
pub fn find_program(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = path?;
    std::env::split_paths(path).map(|directory| directory.join(program)).find(|candidate| {
        std::fs::metadata(candidate)
            .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
    })
}

/// The `adb` that `--push` runs: the first on `path` (a `PATH` value); an error when there is none.
pub fn adb_on_path(path: Option<&std::ffi::OsStr>) -> Result<PathBuf> {
    find_program("adb", path).context(
        "--push runs adb, which is not on PATH (install the Android platform tools, or leave out --push and run the \
         commands yourself)",
    )
}

/// Runs `commands` in order with `adb`, each with this process's stdin, stdout and stderr; stops at the first that
/// cannot start or fails, naming it.
pub fn push(commands: &[AdbCommand], adb: &Path) -> Result<()> {
    for command in commands {
        let status = std::process::Command::new(adb)
            .args(&command.args)
            .status()
            .map_err(|error| anyhow!("cannot start {} for `{command}`: {error}", adb.display()))?;
        if !status.success() {
            bail!("`{command}` failed ({status}); the commands after it were not run");
        }
    }
    Ok(())
}
