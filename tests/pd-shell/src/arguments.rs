//! The shell's command line: `lpai-pd-shell [--library-path DIR[:DIR...]] [--map FILE] [--check | --capi] SKEL.so`.

use crate::text::Escaped;
use core::fmt;

/// The usage line, appended to every usage error.
pub const USAGE: &str = "usage: lpai-pd-shell [--library-path DIR[:DIR...]] [--map FILE] [--check | --capi] SKEL.so";

/// How many `--library-path` options one command line may give.
pub const MAX_LIBRARY_PATH_OPTIONS: usize = 8;

/// A parsed command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arguments<'a> {
    /// `--check`: load the skel, report, exit.
    pub check: bool,
    /// `--capi`: SKEL.so is an audio module (AudioReach CAPI) to run a session on (`crate::capi_session`).
    pub capi: bool,
    /// The skel library (or the audio module).
    pub skel: &'a [u8],
    /// `--map FILE`: where each library loaded goes, a line per load (`START BYTES BIAS PATH`), for tools that attribute
    /// addresses of an execution trace to the libraries' symbols.
    pub map: Option<&'a [u8]>,
    library_paths: [&'a [u8]; MAX_LIBRARY_PATH_OPTIONS],
    library_path_count: usize,
}

/// What is wrong with a command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UsageError<'a> {
    /// An option the shell does not know.
    UnknownOption(&'a [u8]),
    /// `--library-path` at the end, without its directories.
    MissingLibraryPath,
    /// `--map` at the end, without its file.
    MissingMapFile,
    /// More than [`MAX_LIBRARY_PATH_OPTIONS`] `--library-path` options.
    TooManyLibraryPaths,
    /// No SKEL.so.
    NoSkel,
    /// A second library after SKEL.so.
    ExtraArgument(&'a [u8]),
}

impl fmt::Display for UsageError<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::UnknownOption(option) => write!(formatter, "unknown option {}", Escaped(option))?,
            UsageError::MissingLibraryPath => formatter.write_str("--library-path needs DIR[:DIR...]")?,
            UsageError::MissingMapFile => formatter.write_str("--map needs FILE")?,
            UsageError::TooManyLibraryPaths => {
                write!(formatter, "more than {MAX_LIBRARY_PATH_OPTIONS} --library-path options")?
            }
            UsageError::NoSkel => formatter.write_str("no SKEL.so given")?,
            UsageError::ExtraArgument(argument) => {
                write!(formatter, "one SKEL.so only, but {} follows it", Escaped(argument))?
            }
        }
        write!(formatter, " ({USAGE})")
    }
}

impl<'a> Arguments<'a> {
    /// Parses the arguments after the program name. `--` ends the options.
    pub fn parse(arguments: impl IntoIterator<Item = &'a [u8]>) -> Result<Arguments<'a>, UsageError<'a>> {
        let mut parsed = Arguments {
            check: false,
            capi: false,
            skel: &[],
            map: None,
            library_paths: [&[]; MAX_LIBRARY_PATH_OPTIONS],
            library_path_count: 0,
        };
        let mut skel = None;
        let mut options_ended = false;
        let mut arguments = arguments.into_iter();
        while let Some(argument) = arguments.next() {
            let option = !options_ended && argument.starts_with(b"-") && argument.len() > 1;
            let value = match option {
                false => {
                    if skel.is_some() {
                        return Err(UsageError::ExtraArgument(argument));
                    }
                    skel = Some(argument);
                    continue;
                }
                true if argument == b"--" => {
                    options_ended = true;
                    continue;
                }
                true if argument == b"--check" => {
                    parsed.check = true;
                    continue;
                }
                true if argument == b"--capi" => {
                    parsed.capi = true;
                    continue;
                }
                true if argument == b"--map" => {
                    parsed.map = Some(arguments.next().ok_or(UsageError::MissingMapFile)?);
                    continue;
                }
                true if argument == b"--library-path" => arguments.next().ok_or(UsageError::MissingLibraryPath)?,
                true => match argument.strip_prefix(b"--library-path=") {
                    Some(value) => value,
                    None => return Err(UsageError::UnknownOption(argument)),
                },
            };
            let slot =
                parsed.library_paths.get_mut(parsed.library_path_count).ok_or(UsageError::TooManyLibraryPaths)?;
            *slot = value;
            parsed.library_path_count += 1;
        }
        parsed.skel = skel.ok_or(UsageError::NoSkel)?;
        Ok(parsed)
    }

    /// Every `--library-path` directory, in order (empty entries skipped).
    pub fn library_directories(self) -> impl Iterator<Item = &'a [u8]> {
        self.library_paths
            .into_iter()
            .take(self.library_path_count)
            .flat_map(|paths| paths.split(|&byte| byte == b':'))
            .filter(|directory| !directory.is_empty())
    }
}

/// The directory part of a path: everything before the last `/` (`/` for a file in the root), `.` without one.
pub fn directory_of(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&byte| byte == b'/') {
        Some(0) => b"/",
        Some(slash) => &path[..slash],
        None => b".",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<'a>(arguments: &[&'a str]) -> Result<Arguments<'a>, UsageError<'a>> {
        Arguments::parse(arguments.iter().map(|argument| argument.as_bytes()))
    }

    #[test]
    fn options_and_the_skel_are_read_in_any_order() {
        let parsed = parse(&["--library-path", "/a:/b", "--check", "skel.so", "--library-path=/c::/d"]).unwrap();
        assert!(parsed.check);
        assert_eq!(parsed.skel, b"skel.so");
        let directories: Vec<&[u8]> = parsed.library_directories().collect();
        assert_eq!(directories, [&b"/a"[..], b"/b", b"/c", b"/d"]);
        assert_eq!(parsed.map, None);
        let plain = parse(&["--", "-odd.so"]).unwrap();
        assert!(!plain.check && plain.skel == b"-odd.so" && plain.library_directories().count() == 0);
        assert_eq!(parse(&["--map", "/tmp/m", "skel.so"]).unwrap().map, Some(&b"/tmp/m"[..]));
        assert!(parse(&["--capi", "module.so"]).unwrap().capi && !parsed.capi);
    }

    #[test]
    fn usage_errors_name_the_problem_and_show_the_usage() {
        assert_eq!(parse(&["--check"]), Err(UsageError::NoSkel));
        assert_eq!(parse(&["a.so", "b.so"]), Err(UsageError::ExtraArgument(b"b.so")));
        assert_eq!(parse(&["a.so", "--library-path"]), Err(UsageError::MissingLibraryPath));
        assert_eq!(parse(&["a.so", "--map"]), Err(UsageError::MissingMapFile));
        assert_eq!(parse(&["--verbose", "a.so"]), Err(UsageError::UnknownOption(b"--verbose")));
        let many = ["--library-path=/x"; MAX_LIBRARY_PATH_OPTIONS + 1];
        assert_eq!(parse(&many), Err(UsageError::TooManyLibraryPaths));
        let message = UsageError::UnknownOption(b"-x").to_string();
        assert_eq!(message, format!("unknown option -x ({USAGE})"));
    }

    #[test]
    fn the_directory_of_a_path() {
        assert_eq!(directory_of(b"/work/skel.so"), b"/work");
        assert_eq!(directory_of(b"/skel.so"), b"/");
        assert_eq!(directory_of(b"skel.so"), b".");
        assert_eq!(directory_of(b"lib/skel.so"), b"lib");
    }
}
