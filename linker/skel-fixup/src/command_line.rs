//! The command line of `lpai-skel-fixup`: `LIBRARY.so SYMBOLS.txt[,SYMBOLS.txt...] [--exports PREFIX]`. The
//! second argument names one symbol list or several, separated by commas (no spaces); the library may leave
//! undefined any symbol of any of them (the skel: `linker/dsp-runtime-symbols.txt`; the contract model's PD
//! libraries: that list and `linker/virtual-hardware-symbols.txt`).

use anyhow::{bail, Context, Result};
use std::path::PathBuf;

/// The usage line.
pub const USAGE: &str = "usage: lpai-skel-fixup LIBRARY.so SYMBOLS.txt[,SYMBOLS.txt...] [--exports PREFIX]";

/// The export prefix of the skel, the default.
pub const SKEL_EXPORT_PREFIX: &str = "lpai_direct_";

/// A parsed command line.
#[derive(Debug, PartialEq, Eq)]
pub struct Arguments {
    /// The library to fix up and check, in place.
    pub library: PathBuf,
    /// The symbol lists, in the order given.
    pub symbol_lists: Vec<PathBuf>,
    /// Every export must start with it.
    pub export_prefix: String,
}

/// The paths of a comma-separated list argument; an empty entry (`a.txt,,b.txt`, a leading or trailing comma) is
/// an error.
pub fn symbol_list_paths(argument: &str) -> Result<Vec<PathBuf>> {
    let paths: Vec<PathBuf> = argument.split(',').map(PathBuf::from).collect();
    if paths.iter().any(|path| path.as_os_str().is_empty()) {
        bail!("the symbol lists {argument:?} have an empty entry (separate the files with single commas; {USAGE})");
    }
    Ok(paths)
}

impl Arguments {
    /// Parses the arguments after the program name.
    pub fn parse(arguments: &[String]) -> Result<Arguments> {
        let (library, lists, prefix) = match arguments {
            [library, lists] => (library, lists, SKEL_EXPORT_PREFIX),
            [library, lists, flag, prefix] if flag == "--exports" => (library, lists, prefix.as_str()),
            _ => bail!(USAGE),
        };
        Ok(Arguments {
            library: PathBuf::from(library),
            symbol_lists: symbol_list_paths(lists)?,
            export_prefix: prefix.to_string(),
        })
    }
}

/// The symbols of every list, in order, each once (read with [`crate::parse_symbol_list`]).
pub fn read_symbol_lists(paths: &[PathBuf]) -> Result<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        for name in crate::parse_symbol_list(&text) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(arguments: &[&str]) -> Vec<String> {
        arguments.iter().map(|argument| argument.to_string()).collect()
    }

    #[test]
    fn one_list_or_several_separated_by_commas() {
        let one = Arguments::parse(&strings(&["skel.so", "linker/dsp-runtime-symbols.txt"])).unwrap();
        assert_eq!(one.library, PathBuf::from("skel.so"));
        assert_eq!(one.symbol_lists, [PathBuf::from("linker/dsp-runtime-symbols.txt")]);
        assert_eq!(one.export_prefix, "lpai_direct_");
        let two = Arguments::parse(&strings(&["model.so", "a.txt,dir/b.txt", "--exports", "Qnn"])).unwrap();
        assert_eq!(two.symbol_lists, [PathBuf::from("a.txt"), PathBuf::from("dir/b.txt")]);
        assert_eq!(two.export_prefix, "Qnn");
    }

    #[test]
    fn bad_command_lines_say_the_usage() {
        for bad in [&["skel.so"][..], &["skel.so", "a.txt", "--exports"], &["skel.so", "a.txt", "--prefix", "x"]] {
            assert_eq!(Arguments::parse(&strings(bad)).unwrap_err().to_string(), USAGE, "{bad:?}");
        }
        for lists in ["a.txt,", ",a.txt", "a.txt,,b.txt", ""] {
            let error = Arguments::parse(&strings(&["skel.so", lists])).unwrap_err().to_string();
            assert!(error.contains("have an empty entry") && error.contains(USAGE), "{lists:?}: {error}");
        }
    }

    #[test]
    fn the_lists_are_read_in_order_each_name_once() {
        let directory = tempfile::tempdir().unwrap();
        let first = directory.path().join("runtime.txt");
        let second = directory.path().join("hardware.txt");
        std::fs::write(&first, "# the runtime\nmalloc\nfree\n\n").unwrap();
        std::fs::write(&second, "# the hardware\n  lpai_vd_enpu_cores\nfree\n").unwrap();
        let names = read_symbol_lists(&[first.clone(), second.clone()]).unwrap();
        assert_eq!(names, ["malloc", "free", "lpai_vd_enpu_cores"]);
        let missing = directory.path().join("missing.txt");
        let error = read_symbol_lists(&[first, missing.clone()]).unwrap_err().to_string();
        assert_eq!(error, format!("reading {}", missing.display()));
    }

    #[test]
    fn the_repository_lists_combine() {
        let linker = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let argument = format!(
            "{},{}",
            linker.join("dsp-runtime-symbols.txt").display(),
            linker.join("virtual-hardware-symbols.txt").display()
        );
        let names = read_symbol_lists(&symbol_list_paths(&argument).unwrap()).unwrap();
        assert_eq!(names.first().map(String::as_str), Some("HAP_perf_get_qtimer_count"));
        assert_eq!(names.last().map(String::as_str), Some("lpai_vd_enpu_cores"));
        assert!(names.iter().any(|name| name == "malloc"));
    }

    #[test]
    fn a_library_needing_a_hardware_service_passes_only_with_the_hardware_list() {
        let source = "extern unsigned int lpai_vd_enpu_cores(void);\nextern void *malloc(unsigned long);\n\
            int lpai_direct_open(int size) { return lpai_vd_enpu_cores() && malloc(size) != 0; }\n";
        let built = crate::test_elf::shared_object(source);
        let mut bytes = std::fs::read(&built.path).unwrap();
        crate::fix_up(&mut bytes).unwrap();
        let linker = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let runtime = linker.join("dsp-runtime-symbols.txt");
        let both = [runtime.clone(), linker.join("virtual-hardware-symbols.txt")];
        let error = crate::check(&bytes, "lpai_direct_", &read_symbol_lists(&[runtime]).unwrap()).unwrap_err();
        assert!(error.to_string().contains("lpai_vd_enpu_cores"), "{error}");
        let report = crate::check(&bytes, "lpai_direct_", &read_symbol_lists(&both).unwrap()).unwrap();
        assert_eq!(report.undefined.len(), 2, "{report:?}");
    }
}
