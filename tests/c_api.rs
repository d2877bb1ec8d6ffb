//! The C ABI library `liblpai_direct_stub.so` and its header, used from C exactly as an HLOS application
//! would: a program compiled by the system C compiler runs a fixture through the local transport (which finds
//! the host skel library by its default search, or is given one) and compares the result with ONNX Runtime's;
//! `LPAI_DIRECT_SKEL` overrides the search, and a wrong one is named.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Compiles tests/c/stub_kws.c against the header and the library into `work`.
fn compile_program(library: &Path, work: &Path) -> PathBuf {
    let program = work.join("stub_kws");
    let root = common::root();
    let compiled = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&program)
        .arg(root.join("tests/c/stub_kws.c"))
        .arg("-I")
        .arg(root.join("hlos-stub/lpai-direct-stub/include"))
        .arg("-L")
        .arg(library.parent().unwrap())
        .arg("-llpai_direct_stub")
        .status()
        .expect("the C compiler (cc) runs");
    assert!(compiled.success(), "compiling tests/c/stub_kws.c against the header failed");
    program
}

/// Runs the program on kws_conv with `LPAI_DIRECT_SKEL` set to `skel_variable` (or removed).
fn run_program(program: &Path, library: &Path, skel_variable: Option<&str>) -> Output {
    let qnn = common::qnn_lib_dir();
    let mut command = Command::new(program);
    command
        .arg(qnn.join("libQnnHtp.so"))
        .arg(qnn.join("libQnnSystem.so"))
        .arg(common::fixture("kws_conv"))
        .arg(common::host_skel())
        .env("LD_LIBRARY_PATH", library.parent().unwrap());
    match skel_variable {
        Some(value) => command.env("LPAI_DIRECT_SKEL", value),
        None => command.env_remove("LPAI_DIRECT_SKEL"),
    };
    command.output().unwrap()
}

#[test]
fn a_c_program_runs_a_fixture_through_the_stub_library() {
    let _guard = common::qnn_lock();
    let library =
        common::artifact("target/release/liblpai_direct_stub.so", "cargo build --release -p lpai-direct-stub");
    let work = tempfile::tempdir().unwrap();
    let program = compile_program(&library, work.path());
    // Nothing beside the program: the default search ends in the workspace's target/release/.
    assert!(!work.path().join("liblpai_direct_skel.so").exists());
    let output = run_program(&program, &library, None);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "exit {:?}\n{stdout}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("identical to ONNX Runtime's"), "{stdout}");
}

#[test]
fn the_skel_variable_overrides_the_search_and_a_wrong_one_is_named() {
    let library =
        common::artifact("target/release/liblpai_direct_stub.so", "cargo build --release -p lpai-direct-stub");
    let work = tempfile::tempdir().unwrap();
    let program = compile_program(&library, work.path());
    let output = run_program(&program, &library, Some("/nonexistent/liblpai_direct_skel.so"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("lpai_direct_stub_open(\"local\", \"adsp\", &stub) failed: 0x80000401"), "{stderr}");
    let expected = "the skel library /nonexistent/liblpai_direct_skel.so (from $LPAI_DIRECT_SKEL) does not exist";
    assert!(stderr.contains(expected), "{stderr}");
}
