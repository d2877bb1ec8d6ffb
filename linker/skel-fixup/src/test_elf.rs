//! Test helper: compiles a small C file into a Hexagon shared object laid out like the skel (clang-19, ld.lld-19).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A built shared object, deleted with its directory when dropped.
pub struct SharedObject {
    /// Keeps the directory alive.
    _directory: tempfile::TempDir,
    /// The `.so`.
    pub path: PathBuf,
}

fn run(program: &str, arguments: &[&str]) {
    let output = Command::new(program)
        .args(arguments)
        .output()
        .unwrap_or_else(|error| panic!("cannot start {program}: {error} (scripts/setup.sh installs it)"));
    assert!(output.status.success(), "{program} {arguments:?} failed: {}", String::from_utf8_lossy(&output.stderr));
}

/// The linker script a test library is linked with.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// `linker/skel.ld`, as the skel is.
    Skel,
    /// `linker/skel.ld` with its discarding of unwind tables taken out.
    KeepingUnwindTables,
}

/// Compiles `source` (C) with `.stack_sizes` records and links it with the skel's linker script and version script.
pub fn shared_object(source: &str) -> SharedObject {
    build(source, &[], Script::Skel)
}

/// As [`shared_object`], compiled with unwind tables, linked with `script`.
pub fn shared_object_with_unwind_tables(source: &str, script: Script) -> SharedObject {
    build(source, &["-funwind-tables"], script)
}

fn build(source: &str, extra_flags: &[&str], script: Script) -> SharedObject {
    let linker = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("linker/skel-fixup has a parent");
    let directory = tempfile::tempdir().expect("a temporary directory");
    let c_file = directory.path().join("skel.c");
    let object = directory.path().join("skel.o");
    let path = directory.path().join("skel.so");
    std::fs::write(&c_file, source).expect("writing the C file");
    let text = |path: &Path| path.to_str().expect("a UTF-8 path").to_string();
    let mut script_path = linker.join("skel.ld");
    if script == Script::KeepingUnwindTables {
        let skel = std::fs::read_to_string(&script_path).expect("reading linker/skel.ld");
        let keeping: String = skel.lines().filter(|line| !line.contains("*(.eh_frame")).collect::<Vec<_>>().join("\n");
        assert_ne!(keeping.lines().count(), skel.lines().count(), "linker/skel.ld no longer discards .eh_frame");
        script_path = directory.path().join("keeping.ld");
        std::fs::write(&script_path, keeping).expect("writing the linker script");
    }
    let (c_text, object_text) = (text(&c_file), text(&object));
    let mut compile = vec!["--target=hexagon-unknown-linux-musl", "-mcpu=hexagonv73", "-O2", "-fPIC", "-ffreestanding"];
    compile.extend_from_slice(&["-fstack-size-section", "-c", &c_text, "-o", &object_text]);
    compile.extend_from_slice(extra_flags);
    run("clang-19", &compile);
    run(
        "ld.lld-19",
        &[
            "-shared",
            "-z",
            "now",
            &format!("-T{}", text(&script_path)),
            &format!("--version-script={}", text(&linker.join("skel.ver"))),
            &text(&object),
            "-o",
            &text(&path),
        ],
    );
    SharedObject { _directory: directory, path }
}
