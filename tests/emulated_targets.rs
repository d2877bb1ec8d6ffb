//! Programs built for other CPUs, run under qemu: the Hexagon self-test executable and the aarch64 CLI.

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
fn the_hexagon_bench_executable_completes_every_call() {
    let exe = common::artifact(
        "target/hexagon-selftest/hexagon-unknown-linux-musl/release/lpai-dsp-bench",
        "scripts/build-hexagon.sh",
    );
    let output = common::run("qemu-hexagon", &["-cpu", "v73", exe.to_str().unwrap()]);
    assert!(output.status.success(), "a skel call in the bench failed: {}", String::from_utf8_lossy(&output.stderr));
}
