//! Programs built for other CPUs, run under qemu: the Hexagon self-test executable, and the aarch64 CLI, which
//! falls back from FastRPC to the aarch64 host skel beside it.

mod common;

#[test]
fn hexagon_self_tests_pass_under_qemu() {
    let exe = common::artifact(
        "target/hexagon-selftest/hexagon-unknown-linux-musl/release/lpai-dsp-selftest",
        "scripts/build-hexagon.sh",
    );
    let output = common::run("qemu-hexagon", &["-cpu", "v73", exe.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let counts: Vec<u32> = last.split(|c: char| !c.is_ascii_digit()).filter_map(|n| n.parse().ok()).collect();
    assert!(last.ends_with(" failed") && counts.len() == 2, "no summary line:\n{stdout}");
    assert!(counts[0] > 0 && counts[1] == 0, "Hexagon self-tests failed:\n{stdout}");
    assert!(output.status.success(), "{stdout}");
}

#[test]
fn aarch64_lpai_net_run_prints_its_help_under_qemu() {
    let exe = common::artifact("target/aarch64-unknown-linux-gnu/release/lpai-net-run", "scripts/build-hlos.sh");
    let output = common::run("qemu-aarch64", &["-L", "/usr/aarch64-linux-gnu", exe.to_str().unwrap(), "--help"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    for flag in ["--backend", "--retrieve_context", "--input_list", "--output_dir", "--use_native_output_files"] {
        assert!(stdout.contains(flag), "--help does not mention {flag}:\n{stdout}");
    }
}

#[test]
fn aarch64_lpai_net_run_falls_back_to_the_aarch64_skel_beside_it() {
    let exe = common::artifact("target/aarch64-unknown-linux-gnu/release/lpai-net-run", "scripts/build-hlos.sh");
    let skel =
        common::artifact("target/aarch64-unknown-linux-gnu/release/liblpai_direct_skel.so", "scripts/build-hlos.sh");
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("kws_conv");
    let output = std::process::Command::new("qemu-aarch64")
        .args(["-L", "/usr/aarch64-linux-gnu"])
        .arg(&exe)
        .args(["--backend", "libQnnLpai.so", "--retrieve_context"])
        .arg(fixture.join("kws_conv_qnn.bin"))
        .arg("--input_list")
        .arg(fixture.join("input_list_float.txt"))
        .arg("--output_dir")
        .arg(work.path().join("out"))
        .env_remove("LPAI_DIRECT_SKEL")
        .output()
        .expect("qemu-aarch64 runs (scripts/setup.sh installs it)");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let skel = skel.canonicalize().unwrap();
    let note = stderr.lines().find(|line| line.contains("note:")).unwrap_or_default();
    assert!(note.contains("FastRPC is not available: tried libadsprpc.so"), "{stderr}");
    assert!(note.ends_with(&format!("using the local transport (the host skel {})", skel.display())), "{stderr}");
    // The aarch64 skel was loaded; before anything is sent to it, the binary is checked with the HLOS side's
    // libQnnSystem, and this machine has no aarch64 libQnnSystem.so, so the run stops there, saying so.
    assert!(!output.status.success(), "{stderr}");
    let error = stderr.lines().find(|line| line.contains("error:")).unwrap_or_default();
    assert!(error.contains("the system library libQnnSystem.so cannot be loaded"), "{stderr}");
    assert!(error.contains("before the skel sees it"), "{stderr}");
}
