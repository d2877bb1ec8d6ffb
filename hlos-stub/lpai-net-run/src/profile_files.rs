//! A profiled run's files for Qualcomm's tools, in the output directory: `qnn-profiling-data_<n>.log` (the binary
//! log qnn-profile-viewer reads, as qnn-net-run names it; [`crate::profile_log`]) and `qnn-profiling-data_<n>.csv`
//! (ORT's CSV; [`crate::profile_csv`]), with the first `n` from 0 for which neither name is taken, so that an
//! earlier run's files are kept. Each is written whole or not at all ([`crate::whole`]), and never over a file
//! that took its name after the number was chosen (another run's). Neither file fails the run: a library without
//! the System Profile API gets one info line and the CSV only, a failure one warning line naming the file and the
//! error.

use crate::metadata::HostSystemLibrary;
use crate::profile_csv;
use crate::profile_log::{self, Context, Readout};
use crate::whole::{self, Existing};
use anyhow::{anyhow, bail};
use std::path::Path;

/// The files' name before `_<n>`.
pub const STEM: &str = "qnn-profiling-data";

/// The log's and the CSV's file names for number `index`.
pub fn names(index: u64) -> (String, String) {
    (format!("{STEM}_{index}.log"), format!("{STEM}_{index}.csv"))
}

/// The first number from 0 whose log and CSV names are both free in `directory`.
pub fn free_index(directory: &Path) -> Option<u64> {
    (0..u64::MAX).find(|&index| {
        let (log, csv) = names(index);
        !directory.join(log).exists() && !directory.join(csv).exists()
    })
}

/// Writes `directory/file_name` whole through `write` (given the temporary file's directory and name), never over
/// a file of that name; answers why not, in one line.
pub fn write_whole_via(
    directory: &Path,
    file_name: &str,
    write: impl FnOnce(&Path, &str) -> Result<(), String>,
) -> Result<(), String> {
    let written = whole::write_via(&directory.join(file_name), Existing::Keep, |temporary| {
        let (Some(parent), Some(name)) = (temporary.parent(), temporary.file_name().and_then(|name| name.to_str()))
        else {
            bail!("{} is no file name", temporary.display());
        };
        write(parent, name).map_err(|error| anyhow!(error))?;
        // The log's library may report success and write nothing: that is no log.
        if std::fs::metadata(temporary).map(|metadata| metadata.len()).unwrap_or(0) == 0 {
            bail!("nothing was written to {}", temporary.display());
        }
        Ok(())
    });
    written.map_err(|error| format!("{error:#}"))
}

/// What [`write()`] wrote: the file names, in the output directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The log's file name, when written.
    pub log: Option<String>,
    /// The CSV's file name, when written.
    pub csv: Option<String>,
    /// The number in the names (0 unless an earlier run's files took it).
    pub index: u64,
}

/// Writes the log (through `system`, when it has the System Profile API) and the CSV of the `readouts` (one per
/// stub call whose events were read) into `output_dir`, printing an info or warning line for a file it does not
/// write; never fails.
pub fn write(output_dir: &Path, system: &HostSystemLibrary, readouts: &[Readout], context: &Context) -> Written {
    let warn = |what: &str, error: &str| eprintln!("lpai-net-run: warning: {what} was not written: {error}");
    let Some(index) = free_index(output_dir) else {
        warn(&format!("no {STEM}_<n> log or CSV in {}", output_dir.display()), "every number is taken");
        return Written::default();
    };
    let (log_name, csv_name) = names(index);
    let mut written = Written { index, ..Written::default() };
    match system.profile_api() {
        Ok(api) => {
            let directory = std::path::absolute(output_dir).unwrap_or_else(|_| output_dir.to_path_buf());
            let log = write_whole_via(&directory, &log_name, |directory, temporary| {
                profile_log::write(&api, directory, temporary, context, readouts)
            });
            match log {
                Ok(_) => written.log = Some(log_name),
                Err(error) => warn(&output_dir.join(&log_name).display().to_string(), &error),
            }
        }
        Err(unavailable) => eprintln!(
            "lpai-net-run: info: libQnnSystem {} has no System Profile API ({unavailable}): no {STEM} log",
            system.path().display()
        ),
    }
    let text = profile_csv::render(readouts.iter().flat_map(|readout| &readout.events));
    let csv = write_whole_via(output_dir, &csv_name, |directory, temporary| {
        let path = directory.join(temporary);
        std::fs::write(&path, &text).map_err(|error| format!("cannot write {}: {error}", path.display()))
    });
    match csv {
        Ok(_) => written.csv = Some(csv_name),
        Err(error) => warn(&output_dir.join(&csv_name).display().to_string(), &error),
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_number_free_for_both_files_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(free_index(dir.path()), Some(0));
        std::fs::write(dir.path().join("qnn-profiling-data_0.log"), b"x").unwrap();
        assert_eq!(free_index(dir.path()), Some(1), "0's log is taken");
        std::fs::write(dir.path().join("qnn-profiling-data_1.csv"), b"x").unwrap();
        assert_eq!(free_index(dir.path()), Some(2), "1's CSV is taken");
        assert_eq!(names(2), ("qnn-profiling-data_2.log".into(), "qnn-profiling-data_2.csv".into()));
    }

    #[test]
    fn a_failed_write_leaves_no_file_and_a_good_one_only_the_final_name() {
        let dir = tempfile::tempdir().unwrap();
        let listing = || {
            let mut names: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        // A refusal after a partial write leaves nothing; the writer is given a new, empty temporary file.
        let refused = write_whole_via(dir.path(), "a.log", |directory, temporary| {
            let path = directory.join(temporary);
            assert_eq!(std::fs::read(&path).unwrap(), b"", "a new temporary file");
            std::fs::write(path, b"header only").unwrap();
            Err("systemProfileCreateSerializationTarget answered QNN_COMMON_ERROR_NOT_SUPPORTED (1000)".into())
        });
        assert_eq!(
            refused.unwrap_err(),
            "systemProfileCreateSerializationTarget answered QNN_COMMON_ERROR_NOT_SUPPORTED (1000)"
        );
        assert!(listing().is_empty(), "{:?}", listing());
        // Success without a byte written is a failure too.
        let empty = write_whole_via(dir.path(), "a.log", |_, _| Ok(()));
        assert!(empty.unwrap_err().starts_with("nothing was written to "));
        assert!(listing().is_empty(), "{:?}", listing());
        let written = write_whole_via(dir.path(), "a.log", |directory, temporary| {
            std::fs::write(directory.join(temporary), b"whole").map_err(|error| error.to_string())
        });
        assert_eq!(written, Ok(()));
        assert_eq!(listing(), ["a.log"]);
        assert_eq!(std::fs::read(dir.path().join("a.log")).unwrap(), b"whole");
        // A file that took the name meanwhile is kept, and the new one dropped.
        let taken = write_whole_via(dir.path(), "a.log", |directory, temporary| {
            std::fs::write(directory.join(temporary), b"later").map_err(|error| error.to_string())
        });
        assert!(taken.unwrap_err().starts_with("cannot rename "));
        assert_eq!(
            (listing(), std::fs::read(dir.path().join("a.log")).unwrap()),
            (vec!["a.log".to_string()], b"whole".to_vec())
        );
    }
}
