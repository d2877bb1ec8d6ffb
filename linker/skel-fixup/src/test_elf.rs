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

/// Compiles `source` (C) with `.stack_sizes` records and links it with the skel's linker script and version script.
pub fn shared_object(source: &str) -> SharedObject {
    let linker = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("linker/skel-fixup has a parent");
    let directory = tempfile::tempdir().expect("a temporary directory");
    let c_file = directory.path().join("skel.c");
    let object = directory.path().join("skel.o");
    let path = directory.path().join("skel.so");
    std::fs::write(&c_file, source).expect("writing the C file");
    let text = |path: &Path| path.to_str().expect("a UTF-8 path").to_string();
    run(
        "clang-19",
        &[
            "--target=hexagon-unknown-linux-musl",
            "-mcpu=hexagonv73",
            "-O2",
            "-fPIC",
            "-ffreestanding",
            "-fstack-size-section",
            "-c",
            &text(&c_file),
            "-o",
            &text(&object),
        ],
    );
    run(
        "ld.lld-19",
        &[
            "-shared",
            "-z",
            "now",
            &format!("-T{}", text(&linker.join("skel.ld"))),
            &format!("--version-script={}", text(&linker.join("skel.ver"))),
            &text(&object),
            "-o",
            &text(&path),
        ],
    );
    SharedObject { _directory: directory, path }
}
