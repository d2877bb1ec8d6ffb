//! The shell's command line: `lpai-pd-shell [--library-path DIR[:DIR...]] [--map FILE] [--restart-after N]
//! [--require-signature] [--no-lpai-engine] [--raw-log] [--check | --capi] SKEL.so`.

use crate::text::Escaped;
use core::fmt;

/// The usage line, appended to every usage error.
pub const USAGE: &str = "usage: lpai-pd-shell [--library-path DIR[:DIR...]] [--map FILE] [--restart-after N] \
                         [--require-signature] [--no-lpai-engine] [--raw-log] [--check | --capi] SKEL.so";

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
    /// `--restart-after N`: the PD dies at its N-th event (`crate::restart`), as a PD restart would end it.
    pub restart_after: Option<u32>,
    /// `--require-signature`: a signed PD, which loads only libraries carrying the test signature
    /// (`crate::signature`).
    pub require_signature: bool,
    /// `--no-lpai-engine`: a DSP without an LPAI engine (the virtual hardware reports 0 eNPU cores).
    pub no_lpai_engine: bool,
    /// `--raw-log`: the DSP's log lines are printed as a device's log carries them, message records as `lpai:` and
    /// `lpai+` lines, not in words (`crate::pd::services::configure_log`).
    pub raw_log: bool,
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
    /// `--restart-after` at the end, without its N.
    MissingRestartAfter,
    /// `--restart-after` with a value that is not a decimal number from 1 to 4294967295.
    BadRestartAfter(&'a [u8]),
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
            UsageError::MissingRestartAfter => formatter.write_str("--restart-after needs N")?,
            UsageError::BadRestartAfter(value) => {
                write!(formatter, "--restart-after needs a decimal N from 1 to {}, not {}", u32::MAX, Escaped(value))?
            }
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
            restart_after: None,
            require_signature: false,
            no_lpai_engine: false,
            raw_log: false,
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
                true if argument == b"--require-signature" => {
                    parsed.require_signature = true;
                    continue;
                }
                true if argument == b"--no-lpai-engine" => {
                    parsed.no_lpai_engine = true;
                    continue;
                }
                true if argument == b"--raw-log" => {
                    parsed.raw_log = true;
                    continue;
                }
                true if argument == b"--restart-after" => {
                    let value = arguments.next().ok_or(UsageError::MissingRestartAfter)?;
                    parsed.restart_after = Some(event_count(value).ok_or(UsageError::BadRestartAfter(value))?);
                    continue;
                }
                true if argument.starts_with(b"--restart-after=") => {
                    let value = argument.get(b"--restart-after=".len()..).unwrap_or_default();
                    parsed.restart_after = Some(event_count(value).ok_or(UsageError::BadRestartAfter(value))?);
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

/// A decimal event count from 1 to `u32::MAX`: digits only (no sign, no spaces); `None` otherwise.
fn event_count(value: &[u8]) -> Option<u32> {
    if value.is_empty() {
        return None;
    }
    let mut count = 0u32;
    for &byte in value {
        let digit = match byte {
            b'0'..=b'9' => u32::from(byte - b'0'),
            _ => return None,
        };
        count = count.checked_mul(10)?.checked_add(digit)?;
    }
    (count >= 1).then_some(count)
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
        assert!(
            !parsed.require_signature && !parsed.no_lpai_engine && !parsed.raw_log && parsed.restart_after.is_none()
        );
    }

    #[test]
    fn the_pd_options_are_read() {
        let parsed = parse(&["--restart-after", "12", "--require-signature", "--no-lpai-engine", "skel.so"]).unwrap();
        assert_eq!(parsed.restart_after, Some(12));
        assert!(parsed.require_signature && parsed.no_lpai_engine && !parsed.check && !parsed.raw_log);
        assert!(parse(&["--raw-log", "skel.so"]).unwrap().raw_log);
        assert_eq!(parse(&["--restart-after=1", "skel.so"]).unwrap().restart_after, Some(1));
        assert_eq!(parse(&["--restart-after", "007", "skel.so"]).unwrap().restart_after, Some(7));
        assert_eq!(parse(&["--restart-after", "4294967295", "s.so"]).unwrap().restart_after, Some(u32::MAX));
        // The last one given counts.
        assert_eq!(parse(&["--restart-after", "3", "--restart-after=5", "s.so"]).unwrap().restart_after, Some(5));
    }

    #[test]
    fn a_bad_restart_count_is_a_usage_error_naming_it() {
        for bad in ["0", "", "-3", "+3", "3x", " 3", "4294967296", "99999999999999999999", "0x10"] {
            assert_eq!(
                parse(&["--restart-after", bad, "skel.so"]),
                Err(UsageError::BadRestartAfter(bad.as_bytes())),
                "{bad:?}"
            );
        }
        assert_eq!(parse(&["--restart-after=", "skel.so"]), Err(UsageError::BadRestartAfter(b"")));
        assert_eq!(parse(&["skel.so", "--restart-after"]), Err(UsageError::MissingRestartAfter));
        let message = UsageError::BadRestartAfter(b"0").to_string();
        assert_eq!(message, format!("--restart-after needs a decimal N from 1 to 4294967295, not 0 ({USAGE})"));
        assert!(UsageError::BadRestartAfter(b"\n").to_string().contains("not \\x0a ("));
        assert!(USAGE.contains("[--restart-after N] [--require-signature] [--no-lpai-engine] [--raw-log]"));
        assert!(!USAGE.contains("  "), "{USAGE}");
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
