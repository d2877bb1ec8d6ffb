//! The C ABI library `liblpai_direct_stub.so` and its header, used from C exactly as an HLOS application
//! would: a program compiled by the system C compiler runs a fixture through the local transport and
//! compares the result with ONNX Runtime's.

mod common;

use std::process::Command;

#[test]
fn a_c_program_runs_a_fixture_through_the_stub_library() {
    let _guard = common::qnn_lock();
    let library =
        common::artifact("target/release/liblpai_direct_stub.so", "cargo build --release -p lpai-direct-hlos");
    let work = tempfile::tempdir().unwrap();
    let program = work.path().join("stub_kws");
    let root = common::root();
    let compiled = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&program)
        .arg(root.join("tests/c/stub_kws.c"))
        .arg("-I")
        .arg(root.join("hlos-stub/include"))
        .arg("-L")
        .arg(library.parent().unwrap())
        .arg("-llpai_direct_stub")
        .status()
        .expect("the C compiler (cc) runs");
    assert!(compiled.success(), "compiling tests/c/stub_kws.c against the header failed");
    let qnn = common::qnn_lib_dir();
    let output = Command::new(&program)
        .arg(qnn.join("libQnnHtp.so"))
        .arg(qnn.join("libQnnSystem.so"))
        .arg(common::fixture("kws_conv"))
        .env("LD_LIBRARY_PATH", library.parent().unwrap())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "exit {:?}\n{stdout}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("identical to ONNX Runtime's"), "{stdout}");
}
