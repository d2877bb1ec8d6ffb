//! The virtual aDSP: `lpai-net-run --transport qemu` runs the contract-model fixtures on the Hexagon skel `.so`
//! (loaded by the PD shell under qemu-hexagon, with the Hexagon contract model of libQnnLpai dlopen'ed by it) and
//! writes exactly the outputs the fixture script computed; `--transport local` (the host builds of the same
//! skel and model) writes byte-identical files. By default the skel loads no system library: the host build of the
//! contract model's libQnnSystem reads the metadata on the HLOS side and the skel gets the record; with
//! `--dsp_system_library` the skel loads the Hexagon build itself, with the same outputs, and a record that does
//! not match its binary is refused by name. Without qemu-hexagon on PATH, `--transport qemu` fails with one line
//! saying so.

mod common;

use lpai_direct_stub::stub::Named;
use lpai_net_run::net_run;
use std::path::{Path, PathBuf};

/// The fixtures made for the contract model by `scripts/make_contract_fixtures.py`.
const CONTRACT_FIXTURES: [&str; 2] = ["contract_single", "contract_stream"];
/// Input lines per contract fixture.
const LINES: usize = 4;

/// A host build of the contract model.
fn host_model(file: &str) -> PathBuf {
    common::artifact(
        &format!("target/release/{file}"),
        "cargo build --release -p lpai-contract-lpai -p lpai-contract-system",
    )
}

fn context_binary(name: &str) -> PathBuf {
    let directory = common::fixture(name);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(directory.join("manifest.json")).unwrap()).unwrap();
    directory.join(manifest["context_binary"].as_str().expect("manifest names its context binary"))
}

/// Runs fixture `name` in `mode` ("float" or "native") through `transport`, writing into `output`, plus `extra`
/// flags.
fn run_fixture(
    name: &str,
    mode: &str,
    transport: &str,
    output: &Path,
    work: &Path,
    extra: &[&str],
) -> net_run::RunRecord {
    let list = common::absolute_input_list(name, mode, work);
    let (skel, backend) = match transport {
        "qemu" => (common::virtual_adsp("liblpai_direct_skel.so"), common::virtual_adsp("libQnnLpaiContract.so")),
        _ => (common::host_skel(), host_model("libQnnLpaiContract.so")),
    };
    // The HLOS side's libQnnSystem: the host build, whatever the skel runs on.
    let system = host_model("libQnnSystemContract.so");
    let mut args = vec![
        "lpai-net-run".to_string(),
        format!("--transport={transport}"),
        format!("--skel={}", skel.display()),
        format!("--backend={}", backend.display()),
        format!("--system_library={}", system.display()),
        format!("--retrieve_context={}", context_binary(name).display()),
        format!("--input_list={}", list.display()),
        format!("--output_dir={}", output.display()),
    ];
    if transport == "qemu" {
        args.push(format!("--pd_shell={}", common::virtual_adsp("lpai-pd-shell").display()));
    }
    if mode == "native" {
        args.extend(["--use_native_input_files".to_string(), "--use_native_output_files".to_string()]);
    }
    args.extend(extra.iter().map(|flag| flag.to_string()));
    net_run::run(&common::settings(args)).unwrap_or_else(|error| panic!("{name} {mode} {transport}: {error:#}"))
}

#[test]
fn the_hexagon_skel_runs_the_contract_fixtures_and_matches_the_host_build_byte_for_byte() {
    let work = tempfile::tempdir().unwrap();
    for name in CONTRACT_FIXTURES {
        for mode in ["float", "native"] {
            let reference = common::fixture(name).join("reference").join(mode);
            let expected = common::files_below(&reference);
            assert!(!expected.is_empty(), "{name} {mode}: no reference files");
            for transport in ["qemu", "local"] {
                let output = work.path().join(format!("{name}-{mode}-{transport}"));
                let summary = run_fixture(name, mode, transport, &output, work.path(), &[]);
                assert_eq!(summary.transport.name(), transport, "{name} {mode}");
                if transport == "qemu" {
                    let skel = common::virtual_adsp("liblpai_direct_skel.so");
                    assert!(summary.skel_place.contains(&skel.display().to_string()), "{}", summary.skel_place);
                }
                assert_eq!(
                    summary.times.dsp_execute_us.len(),
                    LINES,
                    "{name} {mode} {transport}: one execution a line"
                );
                assert_eq!(common::result_files(&output), expected, "{name} {mode} {transport}: result files");
                for file in &expected {
                    let ours = std::fs::read(output.join(file)).unwrap();
                    let wanted = std::fs::read(reference.join(file)).unwrap();
                    assert!(ours == wanted, "{name} {mode} {transport}: {} differs from the fixture", file.display());
                }
            }
            let (qemu, local) =
                (work.path().join(format!("{name}-{mode}-qemu")), work.path().join(format!("{name}-{mode}-local")));
            for file in &expected {
                assert_eq!(std::fs::read(qemu.join(file)).unwrap(), std::fs::read(local.join(file)).unwrap());
            }
        }
    }
}

#[test]
fn without_qemu_hexagon_on_path_the_qemu_transport_fails_with_one_line() {
    let exe = common::artifact("target/debug/lpai-net-run", "cargo build -p lpai-net-run");
    let empty = tempfile::tempdir().unwrap();
    let name = "contract_single";
    let output = empty.path().join("out");
    let result = std::process::Command::new(exe)
        .args([
            "--transport=qemu".to_string(),
            format!("--backend={}", common::virtual_adsp("libQnnLpaiContract.so").display()),
            format!("--retrieve_context={}", context_binary(name).display()),
            format!("--input_list={}", common::fixture(name).join("input_list_float.txt").display()),
            format!("--output_dir={}", output.display()),
        ])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success(), "expected a failure; stderr:\n{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line:\n{stderr}");
    assert!(lines[0].contains("qemu-hexagon is not on PATH"), "{stderr}");
    assert_eq!(common::files_below(&output), [PathBuf::from("lpai_net_run.json")], "only the record may be written");
}

#[test]
fn a_missing_pd_shell_or_skel_is_named_with_the_flag_that_named_it() {
    let work = tempfile::tempdir().unwrap();
    let name = "contract_single";
    for (flag, what) in [("--pd_shell", "PD shell"), ("--skel", "Hexagon skel")] {
        let mut args = vec![
            "lpai-net-run".to_string(),
            "--transport=qemu".to_string(),
            format!("--backend={}", common::virtual_adsp("libQnnLpaiContract.so").display()),
            format!("--retrieve_context={}", context_binary(name).display()),
            format!("--input_list={}", common::fixture(name).join("input_list_float.txt").display()),
            format!("--output_dir={}", work.path().join("out").display()),
        ];
        args.push(format!("{flag}=/nonexistent/file.so"));
        let error = net_run::run(&common::settings(args)).expect_err("a missing file must be refused");
        assert_eq!(format!("{error:#}"), format!("the {what} /nonexistent/file.so does not exist (named by {flag})"));
    }
}

#[test]
fn the_hexagon_skel_reads_the_context_binary_from_the_file_system_itself() {
    let work = tempfile::tempdir().unwrap();
    let name = "contract_stream";
    let output = work.path().join("out");
    run_fixture(name, "native", "qemu", &output, work.path(), &["--dsp_reads_context"]);
    let reference = common::fixture(name).join("reference/native");
    for file in common::files_below(&reference) {
        assert!(std::fs::read(output.join(&file)).unwrap() == std::fs::read(reference.join(&file)).unwrap());
    }
}

/// The arguments of a contract_single run through the qemu transport, plus `extra`.
fn qemu_args(work: &Path, extra: &[String]) -> Vec<String> {
    let name = "contract_single";
    let mut args = vec![
        "lpai-net-run".to_string(),
        "--transport=qemu".to_string(),
        format!("--backend={}", common::virtual_adsp("libQnnLpaiContract.so").display()),
        format!("--system_library={}", host_model("libQnnSystemContract.so").display()),
        format!("--retrieve_context={}", context_binary(name).display()),
        format!("--input_list={}", common::absolute_input_list(name, "native", work).display()),
        format!("--output_dir={}", work.join("out").display()),
        "--use_native_input_files".to_string(),
        "--use_native_output_files".to_string(),
    ];
    args.extend(extra.iter().cloned());
    args
}

#[test]
fn a_skel_the_pd_loader_refuses_is_reported_with_the_loaders_reason() {
    let work = tempfile::tempdir().unwrap();
    // The panic-probe build is left as linked: lpai-skel-fixup never added DT_HEXAGON_VER to it.
    let probe = common::artifact(
        "target/hexagon-panic-probe/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so",
        "scripts/build-hexagon.sh",
    );
    let error = net_run::run(&common::settings(qemu_args(work.path(), &[format!("--skel={}", probe.display())])))
        .expect_err("the shell must refuse the skel");
    let message = format!("{error:#}");
    assert!(message.starts_with("the virtual aDSP did not start (exit status: 1): lpai-pd-shell: "), "{message}");
    assert!(message.ends_with("has no DT_HEXAGON_VER (the aDSP loader requires version 3)"), "{message}");
    assert_eq!(common::files_below(&work.path().join("out")), [PathBuf::from("lpai_net_run.json")], "the record alone");
}

#[test]
fn a_shell_that_answers_garbage_is_reported_as_such() {
    let work = tempfile::tempdir().unwrap();
    // The self-test program writes text on stdout, not frames.
    let not_a_shell = common::artifact(
        "target/hexagon-selftest/hexagon-unknown-linux-musl/release/lpai-dsp-selftest",
        "scripts/build-hexagon.sh",
    );
    let args = qemu_args(work.path(), &[format!("--pd_shell={}", not_a_shell.display())]);
    let error = net_run::run(&common::settings(args)).expect_err("garbage must be refused");
    assert_eq!(
        format!("{error:#}"),
        format!("the PD shell {} answered garbage instead of its ready frame", not_a_shell.display())
    );
}

#[test]
fn a_shell_that_dies_mid_session_fails_the_next_call_with_what_happened() {
    use lpai_direct_stub::stub::{fastrpc, Qemu, QemuOptions, Stub};
    let options = QemuOptions {
        skel: Some(common::virtual_adsp("liblpai_direct_skel.so")),
        shell: Some(common::virtual_adsp("lpai-pd-shell")),
        trace: None,
        ..QemuOptions::default()
    };
    let qemu = Qemu::start(&options).unwrap_or_else(|error| panic!("{error}"));
    let process = qemu.process_id();
    let mut stub = Stub::open(Box::new(qemu), &fastrpc::skel_uri(fastrpc::Domain::Adsp, None)).unwrap();
    assert!(stub.last_error().is_ok());
    let killed = std::process::Command::new("kill").args(["-9", &process.to_string()]).status().unwrap();
    assert!(killed.success());
    let error = stub.last_error().expect_err("the shell is gone");
    let message = error.to_string();
    assert!(message.contains("last_error failed in the Hexagon skel"), "{message}");
    assert!(message.contains("invoke: the PD shell exited (signal: 9"), "{message}");
    assert!(stub.transport().failure().is_some());
}

#[test]
fn direct_mode_on_the_hexagon_skel_reads_and_writes_through_the_shells_files() {
    let work = tempfile::tempdir().unwrap();
    for name in CONTRACT_FIXTURES {
        for mode in ["float", "native"] {
            // The host build beside it: the contract model's thread executes while the skel reads and writes.
            for transport in ["qemu", "local"] {
                let output = work.path().join(format!("{name}-{mode}-{transport}-direct"));
                let summary = run_fixture(name, mode, transport, &output, work.path(), &["--direct_mode"]);
                assert_eq!(summary.times.dsp_execute_us.len(), LINES, "{name} {mode}");
                let reference = common::fixture(name).join("reference").join(mode);
                let expected = common::files_below(&reference);
                assert_eq!(common::result_files(&output), expected, "{name} {mode} {transport}");
                for file in &expected {
                    let wanted = std::fs::read(reference.join(file)).unwrap();
                    let ours = std::fs::read(output.join(file)).unwrap();
                    assert!(ours == wanted, "{name} {mode} {transport}: {}", file.display());
                }
                let record: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(output.join("lpai_net_run.json")).unwrap()).unwrap();
                assert_eq!((record["mode"].as_str(), record["transport"].as_str()), (Some("direct"), Some(transport)));
                assert_eq!(record["skel_calls"], 8, "{name} {mode} {transport}");
                assert!(record["dsp_load_us"].is_u64() && record["dsp_finalize_us"].is_u64(), "{record}");
                let hidden =
                    record["dsp_file_io_hidden_us"].as_u64().unwrap_or_else(|| panic!("no hidden I/O: {record}"));
                let file_io: u64 = record["dsp_file_io_us"].as_array().unwrap().iter().filter_map(|t| t.as_u64()).sum();
                eprintln!("{name} {mode} {transport}: DSP file I/O {file_io} us, {hidden} us of it hidden");
                assert!(
                    hidden <= file_io + LINES as u64,
                    "{name} {mode} {transport}: hidden {hidden} us of {file_io} us"
                );
                if transport == "qemu" {
                    // The contract model completes graphExecuteAsync inside the call on Hexagon (the virtual aDSP
                    // has no thread to run it on): no file I/O can overlap an execution.
                    assert_eq!(hidden, 0, "{name} {mode}: {record}");
                }
            }
        }
    }
}

#[test]
fn the_hexagon_skel_with_its_own_system_library_gives_the_outputs_it_gives_with_the_record() {
    let work = tempfile::tempdir().unwrap();
    let dsp_system = format!("--dsp_system_library={}", common::virtual_adsp("libQnnSystemContract.so").display());
    for name in CONTRACT_FIXTURES {
        for mode in ["float", "native"] {
            let with_record = work.path().join(format!("{name}-{mode}-record"));
            let with_library = work.path().join(format!("{name}-{mode}-library"));
            run_fixture(name, mode, "qemu", &with_record, work.path(), &[]);
            run_fixture(name, mode, "qemu", &with_library, work.path(), &[&dsp_system]);
            let expected = common::files_below(&common::fixture(name).join("reference").join(mode));
            assert_eq!(common::result_files(&with_record), expected, "{name} {mode}");
            assert_eq!(common::result_files(&with_library), expected, "{name} {mode}");
            for file in &expected {
                let (a, b) =
                    (std::fs::read(with_record.join(file)).unwrap(), std::fs::read(with_library.join(file)).unwrap());
                assert!(a == b, "{name} {mode}: {} differs", file.display());
            }
        }
    }
}

#[test]
fn the_hexagon_skel_refuses_a_record_that_does_not_match_the_binary_by_name() {
    use lpai_direct_stub::stub::{fastrpc, LoadRequest, Qemu, QemuOptions, Stub};
    use lpai_net_run::metadata;
    let options = QemuOptions {
        skel: Some(common::virtual_adsp("liblpai_direct_skel.so")),
        shell: Some(common::virtual_adsp("lpai-pd-shell")),
        trace: None,
        ..QemuOptions::default()
    };
    let qemu = Qemu::start(&options).unwrap_or_else(|error| panic!("{error}"));
    let mut stub = Stub::open(Box::new(qemu), &fastrpc::skel_uri(fastrpc::Domain::Adsp, None)).unwrap();
    let configuration = common::configuration(&common::virtual_adsp("libQnnLpaiContract.so"), None);
    stub.configure(&configuration).unwrap();
    let system = host_model("libQnnSystemContract.so");
    let record_of = |name: &str| {
        metadata::record_in_this_process(&system, &std::fs::read(context_binary(name)).unwrap(), name).unwrap()
    };
    let binary = std::fs::read(context_binary("contract_single")).unwrap();
    let (own, other) = (record_of("contract_single"), record_of("contract_stream"));
    let message = stub.load(&LoadRequest::bytes(&binary).with_record(&other)).unwrap_err().to_string();
    let expected = "the metadata record was made for another binary (the SHA-256 it carries is not the binary's)";
    assert!(message.contains(expected) && message.contains("the Hexagon skel"), "{message}");
    let mut flipped = binary.clone();
    *flipped.last_mut().unwrap() ^= 1;
    let message = stub.load(&LoadRequest::bytes(&flipped).with_record(&own)).unwrap_err().to_string();
    assert!(message.contains(expected), "{message}");
    let renamed = common::changed_record(&own, Some("renamed"), None);
    let message = stub.load(&LoadRequest::bytes(&binary).with_record(&renamed)).unwrap_err().to_string();
    assert!(message.contains("names graph renamed, which the context binary does not have"), "{message}");

    let wrong_id = common::changed_record(&own, None, Some(99));
    let context = stub.load(&LoadRequest::bytes(&binary).with_record(&wrong_id)).unwrap().context;
    let (inputs, mut outputs) = (vec![0u8; 16], vec![0u8; 16]);
    let message = stub.execute(context, 0, 0, &inputs, &mut outputs).unwrap_err().to_string();
    assert!(
        message.contains("graph single: graphExecute refused the tensors the metadata record describes"),
        "{message}"
    );
    let context = stub.load(&LoadRequest::bytes(&binary).with_record(&own)).unwrap().context;
    stub.execute(context, 0, 0, &inputs, &mut outputs).unwrap();
}
