//! Where the DSP loader looks for a library it is asked to load (the skel a URI names, the backend the skel
//! `dlopen`s), as the FastRPC library serves it from the HLOS file system (quic/fastrpc `apps_std_imp.c`,
//! `apps_std_fopen_with_env`, `get_dirlist_from_env`): the value of `ADSP_LIBRARY_PATH` (or of `DSP_LIBRARY_PATH`,
//! which the library takes instead when it is set) with its default path appended, split at every `;` (empty
//! entries kept); in each directory first the domain's own subdirectory (`<dir>/adsp/<name>`), then
//! `<dir>/<name>`; an empty entry is the bare name, from the current directory. The first file that opens wins. The stub's diagnoses say where the skel and its libraries were looked for with
//! it, and the virtual device's stand-in libadsprpc finds them with it.

use std::path::{Path, PathBuf};

/// The variable the DSP loader's search reads.
pub const VARIABLE: &str = "ADSP_LIBRARY_PATH";
/// The variable the FastRPC library reads instead of [`VARIABLE`] when it is set.
pub const OVERRIDE_VARIABLE: &str = "DSP_LIBRARY_PATH";
/// The default path appended to the variable's value (quic/fastrpc `DSP_SEARCH_PATH`): alone (variable unset) its
/// leading and trailing empty entries are the current directory; after a value, its leading `;` separates.
pub const DEFAULT_PATH: &str = ";/usr/lib/rfsa/adsp;/vendor/lib/rfsa/adsp;/vendor/dsp/;/usr/lib/dsp/;";

/// One directory of the search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directory {
    /// The directory as written (empty: the current directory).
    pub path: String,
    /// Whether it comes from the variable (else from the defaults).
    pub from_variable: bool,
}

impl Directory {
    /// The directory for messages: `.` for the current directory.
    pub fn shown(&self) -> &str {
        if self.path.is_empty() {
            "."
        } else {
            &self.path
        }
    }
}

/// A file the search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The file.
    pub path: PathBuf,
    /// The directory of the search it was found through.
    pub directory: Directory,
}

/// The search path of one process: its variable's directories, then the defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchPath {
    /// The variable that was read and its value, when set.
    pub variable: Option<(&'static str, String)>,
    /// Every directory in search order.
    pub directories: Vec<Directory>,
}

impl SearchPath {
    /// The search this process's environment gives.
    pub fn from_environment() -> SearchPath {
        let read = |name: &'static str| std::env::var(name).ok().map(|value| (name, value));
        SearchPath::new(read(OVERRIDE_VARIABLE).or_else(|| read(VARIABLE)))
    }

    /// The search for a variable's value (`None`: not set).
    pub fn new(variable: Option<(&'static str, String)>) -> SearchPath {
        let value = variable.as_ref().map_or("", |(_, value)| value.as_str());
        let from_variable = variable.as_ref().map_or(0, |_| value.split(';').count());
        let directories = format!("{value}{DEFAULT_PATH}")
            .split(';')
            .enumerate()
            .map(|(index, path)| Directory { path: path.to_string(), from_variable: index < from_variable })
            .collect();
        SearchPath { variable, directories }
    }

    /// Every path the loader tries for `name` on the DSP domain whose subsystem is `subsystem` (`adsp`), in order,
    /// with its directory; a path tried twice is kept once, at its first place.
    pub fn candidates(&self, name: &str, subsystem: &str) -> Vec<Found> {
        let mut candidates: Vec<Found> = Vec::new();
        for directory in &self.directories {
            let base = Path::new(&directory.path);
            let tried = match directory.path.is_empty() {
                true => vec![PathBuf::from(name)],
                false => vec![base.join(subsystem).join(name), base.join(name)],
            };
            for path in tried {
                if !candidates.iter().any(|known| known.path == path) {
                    candidates.push(Found { path, directory: directory.clone() });
                }
            }
        }
        candidates
    }

    /// Every file of that name the loader could open, in search order: the first is the one it loads.
    pub fn find_all(&self, name: &str, subsystem: &str) -> Vec<Found> {
        self.candidates(name, subsystem).into_iter().filter(|found| std::fs::File::open(&found.path).is_ok()).collect()
    }

    /// The directories for messages: `/a, /b (ADSP_LIBRARY_PATH), then /usr/lib/rfsa/adsp, ..., . (the FastRPC
    /// library's defaults)`, each once (the loader tries each also in its `<subsystem>/` subdirectory first).
    pub fn describe(&self) -> String {
        let list = |from_variable: bool| {
            let mut shown: Vec<&str> = Vec::new();
            for directory in self.directories.iter().filter(|d| d.from_variable == from_variable) {
                if !shown.contains(&directory.shown()) {
                    shown.push(directory.shown());
                }
            }
            shown.join(", ")
        };
        let defaults = format!("{} (the FastRPC library's defaults)", list(false));
        match &self.variable {
            Some((name, _)) => format!("{} ({name}), then {defaults}", list(true)),
            None => format!("{defaults}; {VARIABLE} is not set"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_comes_first_then_the_defaults_each_with_the_subsystem_first() {
        let search = SearchPath::new(Some((VARIABLE, "/data/x/adsp;/vendor/lib/rfsa/adsp".into())));
        let shown: Vec<&str> = search.directories.iter().map(Directory::shown).collect();
        let defaults = ["/usr/lib/rfsa/adsp", "/vendor/lib/rfsa/adsp", "/vendor/dsp/", "/usr/lib/dsp/", "."];
        assert_eq!(shown[..2], ["/data/x/adsp", "/vendor/lib/rfsa/adsp"]);
        assert_eq!(shown[2..], defaults);
        let paths: Vec<PathBuf> =
            search.candidates("liblpai_direct_skel.so", "adsp").into_iter().map(|f| f.path).collect();
        assert_eq!(paths[0], PathBuf::from("/data/x/adsp/adsp/liblpai_direct_skel.so"));
        assert_eq!(paths[1], PathBuf::from("/data/x/adsp/liblpai_direct_skel.so"));
        // /vendor/lib/rfsa/adsp appears twice: searched once, at its first place; the current directory last, by
        // the bare name only.
        assert_eq!(paths.len(), 11);
        assert_eq!(paths[10], PathBuf::from("liblpai_direct_skel.so"));
        assert_eq!(
            search.describe(),
            "/data/x/adsp, /vendor/lib/rfsa/adsp (ADSP_LIBRARY_PATH), then /usr/lib/rfsa/adsp, \
             /vendor/lib/rfsa/adsp, /vendor/dsp/, /usr/lib/dsp/, . (the FastRPC library's defaults)"
        );
        let unset = SearchPath::new(None);
        let shown: Vec<&str> = unset.directories.iter().map(Directory::shown).collect();
        assert_eq!(shown, [".", "/usr/lib/rfsa/adsp", "/vendor/lib/rfsa/adsp", "/vendor/dsp/", "/usr/lib/dsp/", "."]);
        assert!(unset.describe().ends_with("; ADSP_LIBRARY_PATH is not set"), "{}", unset.describe());
    }

    #[test]
    fn files_are_found_in_search_order() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("first"), dir.path().join("second"));
        std::fs::create_dir_all(second.join("adsp")).unwrap();
        std::fs::create_dir_all(&first).unwrap();
        std::fs::write(first.join("lib.so"), b"1").unwrap();
        std::fs::write(second.join("adsp/lib.so"), b"2").unwrap();
        let value = format!("{};{}", first.display(), second.display());
        let found = SearchPath::new(Some((VARIABLE, value))).find_all("lib.so", "adsp");
        let paths: Vec<&Path> = found.iter().map(|f| f.path.as_path()).collect();
        assert_eq!(paths, [first.join("lib.so").as_path(), second.join("adsp/lib.so").as_path()]);
        assert!(found.iter().all(|f| f.directory.from_variable));
    }
}
