//! What a newcomer's terminal shows: lpai-net-run on the real libQnnHtp.so under a pseudo-terminal (`script`),
//! as a person runs it, prints its own lines and none of the emulator's ` # LIBNATIVE:` notice, which the
//! backend prints on every run (the tool filters C's stdout: `lpai_net_run::backend_output`).

mod common;

use std::process::Command;

#[test]
fn a_run_on_a_terminal_shows_no_libnative_notice() {
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("kws_conv");
    let net_run = common::artifact("target/release/lpai-net-run", "cargo build --release -p lpai-net-run");
    let command = format!(
        "{} --backend={} --retrieve_context={} --input_list=input_list_float.txt --output_dir={}",
        net_run.display(),
        common::qnn_lib_dir().join("libQnnHtp.so").display(),
        fixture.join("kws_conv_qnn.bin").display(),
        work.path().join("out").display()
    );
    let _guard = common::qnn_lock();
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(&fixture)
        .env("LPAI_DIRECT_SKEL", common::host_skel())
        .output()
        .expect("script (util-linux) runs");
    let terminal = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{terminal}");
    assert!(terminal.contains("lpai-net-run: 3 inference(s) of graph"), "{terminal}");
    assert!(!terminal.contains("LIBNATIVE"), "the emulator's notice reached the terminal:\n{terminal}");
}
