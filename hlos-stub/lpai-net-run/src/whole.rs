//! Writing a file or a directory whole or not at all, the HLOS side's one way (result files, the run's record and
//! trace, the profile files, the staged directory): it is made under a temporary name beside its final one,
//! `<name>.<token>.partial` (`lpai_direct::temporary`, the rule the skel's writes follow too), with `tempfile`'s
//! random token, so two runs writing one directory never share a temporary name; it is renamed into place once
//! complete, and on any failure the temporary is removed and the final name left as it was.

use anyhow::{Context as _, Result};
use lpai_direct::temporary;
use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use tempfile::{Builder, NamedTempFile, TempDir};

/// What happens to a file that already has the final name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// It is replaced (results, the run's record: a later run's replace an earlier one's).
    Replace,
    /// It is kept and the write refused (a profile file whose number another run took meanwhile).
    Keep,
}

/// `tempfile`'s builder for `final_path`'s temporary name, with `mode` (before the umask, as `File::create` and
/// `create_dir` have it).
fn builder<'a>(prefix: &'a OsString, mode: u32) -> Builder<'a, 'static> {
    let mut builder = Builder::new();
    builder
        .prefix(prefix)
        .suffix(temporary::SUFFIX)
        .rand_bytes(temporary::TOKEN_CHARS)
        .permissions(std::fs::Permissions::from_mode(mode));
    builder
}

/// The final name's directory (`.` for a bare name) and its temporary names' prefix (`<name>.`).
fn place_of(final_path: &Path) -> Result<(PathBuf, OsString)> {
    let name = final_path.file_name().with_context(|| format!("{} has no file name", final_path.display()))?;
    let directory = match final_path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut prefix = name.to_os_string();
    prefix.push(".");
    Ok((directory, prefix))
}

/// A new empty file under a temporary name beside `final_path`.
fn temporary_beside(final_path: &Path) -> Result<NamedTempFile> {
    let (directory, prefix) = place_of(final_path)?;
    builder(&prefix, 0o666).tempfile_in(&directory).with_context(|| {
        format!("cannot create a temporary file for {} in {}", final_path.display(), directory.display())
    })
}

/// Renames the complete temporary `file` to `final_path`, as `existing` says.
fn place(file: NamedTempFile, final_path: &Path, existing: Existing) -> Result<()> {
    let persisted = match existing {
        Existing::Replace => file.persist(final_path),
        Existing::Keep => file.persist_noclobber(final_path),
    };
    persisted.map(drop).map_err(|error| {
        let (temporary, error) = (error.file.path().to_path_buf(), error.error);
        anyhow::anyhow!("cannot rename {} to {}: {error}", temporary.display(), final_path.display())
    })
}

/// Makes `final_path` whole or not at all: a new empty file under a temporary name beside it is given to `write`
/// by path (a library writes it by name), and renamed to `final_path` once `write` succeeded, as `existing` says;
/// otherwise it is removed and the error answered.
pub fn write_via(final_path: &Path, existing: Existing, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let file = temporary_beside(final_path)?;
    write(file.path())?;
    place(file, final_path, existing)
}

/// Writes `bytes` as the whole content of `path`, flushed to the disk, replacing a file of that name.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let written = temporary_beside(path).and_then(|mut file| {
        file.as_file_mut().write_all(bytes)?;
        file.as_file().sync_data()?;
        place(file, path, Existing::Replace)
    });
    written.with_context(|| format!("cannot write {}", path.display()))
}

/// Builds the directory `final_path` whole or not at all: `build` fills a new directory under a temporary name
/// beside it, which is then renamed to `final_path` (refused when a non-empty directory or a file has that name);
/// on any failure it is removed.
pub fn directory_via(final_path: &Path, build: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let (parent, prefix) = place_of(final_path)?;
    let built: TempDir = builder(&prefix, 0o777).tempdir_in(&parent).with_context(|| {
        format!("cannot create a temporary directory for {} in {}", final_path.display(), parent.display())
    })?;
    build(built.path())?;
    std::fs::rename(built.path(), final_path)
        .with_context(|| format!("cannot rename {} to {}", built.path().display(), final_path.display()))?;
    // Renamed: nothing is left under the temporary name to remove.
    let _ = built.keep();
    Ok(())
}

/// Whether `name` is a temporary name of this rule (the skel's or this side's).
pub fn is_temporary(name: &std::ffi::OsStr) -> bool {
    name.to_str().and_then(temporary::split).is_some()
}

/// The temporary name the skel writes `path` under in a job of `token`.
pub fn skel_temporary(path: &Path, token: &temporary::Token) -> PathBuf {
    use std::os::unix::ffi::OsStrExt as _;
    let mut name = path.as_os_str().to_owned();
    token.after_name().iter().for_each(|part| name.push(std::ffi::OsStr::from_bytes(part)));
    PathBuf::from(name)
}

/// An unused file's temporary name for `path`'s tests: a `NamedTempFile` kept in scope removes itself.
#[cfg(test)]
fn temporary_for(path: &Path) -> NamedTempFile {
    temporary_beside(path).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(directory: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_appears_whole_under_its_name_and_a_failure_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.raw");
        write(&path, &[1, 2, 3]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), [1, 2, 3]);
        write(&path, &[4]).unwrap();
        assert_eq!((std::fs::read(&path).unwrap(), names(dir.path())), (vec![4], vec!["x.raw".to_string()]));
        // A failing writer: the final name keeps its content, the temporary file is gone.
        let refused = write_via(&path, Existing::Replace, |temporary| {
            std::fs::write(temporary, b"half")?;
            anyhow::bail!("the writer gave up")
        });
        assert_eq!(refused.unwrap_err().to_string(), "the writer gave up");
        assert_eq!((std::fs::read(&path).unwrap(), names(dir.path())), (vec![4], vec!["x.raw".to_string()]));
        // Keep: a name that is taken is kept and the new file dropped.
        let kept = write_via(&path, Existing::Keep, |temporary| Ok(std::fs::write(temporary, b"later")?));
        assert!(format!("{:#}", kept.unwrap_err()).contains("to ") && std::fs::read(&path).unwrap() == [4]);
        assert_eq!(names(dir.path()), ["x.raw"]);
        let error = write(&dir.path().join("missing/y.raw"), &[1]).unwrap_err();
        assert!(format!("{error:#}").contains("missing/y.raw"), "{error:#}");
    }

    #[test]
    fn temporary_names_follow_the_rule_and_differ_between_writers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logits.raw");
        let (first, second) = (temporary_for(&path), temporary_for(&path));
        for file in [&first, &second] {
            let name = file.path().file_name().unwrap();
            assert!(is_temporary(name), "{name:?}");
            assert_eq!(temporary::split(name.to_str().unwrap()).unwrap().0, "logits.raw");
        }
        assert_ne!(first.path(), second.path());
        assert!(!is_temporary(std::ffi::OsStr::new("logits.raw")));
        let skel = skel_temporary(&path, &temporary::Token::of(0xbeef));
        assert_eq!(skel, dir.path().join("logits.raw.0000beef.partial"));
        assert!(is_temporary(skel.file_name().unwrap()));
    }

    #[test]
    fn a_directory_appears_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let staged = dir.path().join("staged");
        let refused = directory_via(&staged, |inside| {
            std::fs::write(inside.join("half"), b"x")?;
            anyhow::bail!("a copy failed")
        });
        assert_eq!(refused.unwrap_err().to_string(), "a copy failed");
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
        directory_via(&staged, |inside| Ok(std::fs::write(inside.join("whole"), b"x")?)).unwrap();
        assert_eq!((names(dir.path()), names(&staged)), (vec!["staged".to_string()], vec!["whole".to_string()]));
        // A directory of that name with something in it is never replaced.
        let again = directory_via(&staged, |inside| Ok(std::fs::write(inside.join("other"), b"y")?));
        assert!(format!("{:#}", again.unwrap_err()).contains("cannot rename"));
        assert_eq!((names(dir.path()), names(&staged)), (vec!["staged".to_string()], vec!["whole".to_string()]));
    }
}
