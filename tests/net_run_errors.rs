//! lpai-net-run refuses bad inputs with one clear message and a non-zero exit, writing no result: the whole input
//! list is checked before the first inference, so a bad list leaves no `Result_` directory. A refusal from the skel's
//! side (a backend it cannot load, a load it refuses) leaves the run's record alone, holding the error.
//! A bare backend name (no `/`) is not refused but left to the dynamic loader's search.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

struct Outcome {
    success: bool,
    stderr: String,
}

fn lpai_net_run(args: &[String], cwd: &Path) -> Outcome {
    lpai_net_run_with_library_path(args, cwd, None)
}

/// Runs lpai-net-run on the release host skel, with `LD_LIBRARY_PATH` set to `library_path` when given.
fn lpai_net_run_with_library_path(args: &[String], cwd: &Path, library_path: Option<&Path>) -> Outcome {
    let exe = common::artifact("target/debug/lpai-net-run", "cargo build -p lpai-net-run");
    let mut command = Command::new(exe);
    command.args(args).current_dir(cwd).env("LPAI_DIRECT_SKEL", common::host_skel());
    if let Some(directory) = library_path {
        command.env("LD_LIBRARY_PATH", directory);
    }
    let output = command.output().unwrap();
    Outcome { success: output.status.success(), stderr: String::from_utf8_lossy(&output.stderr).into_owned() }
}

fn backend() -> PathBuf {
    common::qnn_lib_dir().join("libQnnHtp.so")
}

/// Arguments for the kws_conv fixture, run from its directory, writing into `output`.
fn kws_args(backend: &Path, binary: &Path, list: &str, output: &Path) -> Vec<String> {
    vec![
        format!("--backend={}", backend.display()),
        format!("--retrieve_context={}", binary.display()),
        format!("--input_list={list}"),
        format!("--output_dir={}", output.display()),
    ]
}

fn assert_refused(outcome: &Outcome, output: &Path, expected: &[&str]) {
    assert!(!outcome.success, "expected a failure, got success; stderr:\n{}", outcome.stderr);
    let errors: Vec<&str> = outcome.stderr.lines().filter(|line| line.contains("error:")).collect();
    assert_eq!(errors.len(), 1, "expected one error line:\n{}", outcome.stderr);
    for fragment in expected {
        assert!(errors[0].contains(fragment), "error line lacks {fragment:?}:\n{}", errors[0]);
    }
    let written = if output.exists() { common::files_below(output) } else { Vec::new() };
    match written.as_slice() {
        [] => {}
        [record] if record == Path::new("lpai_net_run.json") => {
            let record: serde_json::Value =
                serde_json::from_slice(&std::fs::read(output.join(record)).unwrap()).unwrap();
            let error = record["error"].as_str().unwrap_or_default();
            assert!(!error.is_empty() && errors[0].ends_with(error), "the record's error is not the line's: {record}");
        }
        _ => panic!("output was written: {written:?}"),
    }
}

#[test]
fn missing_and_truncated_context_binaries_are_refused() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("kws_conv");
    let output = work.path().join("out");
    let missing = work.path().join("absent.bin");
    let outcome = lpai_net_run(&kws_args(&backend(), &missing, "input_list_float.txt", &output), &fixture);
    assert_refused(&outcome, &output, &["context binary", "absent.bin"]);

    let truncated = work.path().join("truncated.bin");
    let whole = std::fs::read(fixture.join("kws_conv_qnn.bin")).unwrap();
    std::fs::write(&truncated, &whole[..whole.len() / 3]).unwrap();
    let outcome = lpai_net_run(&kws_args(&backend(), &truncated, "input_list_float.txt", &output), &fixture);
    assert_refused(&outcome, &output, &["truncated.bin", "not a usable QNN context binary"]);
}

#[test]
fn an_input_file_of_the_wrong_size_names_tensor_and_sizes() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("kws_conv");
    let short = work.path().join("short.raw");
    std::fs::write(&short, vec![0u8; 1956]).unwrap();
    let list = work.path().join("list.txt");
    let good = fixture.join("inputs/float/0_0.raw");
    std::fs::write(&list, format!("mfcc:={}\nmfcc:={}\n", good.display(), short.display())).unwrap();
    let output = work.path().join("out");
    let binary = fixture.join("kws_conv_qnn.bin");
    let outcome = lpai_net_run(&kws_args(&backend(), &binary, list.to_str().unwrap(), &output), &fixture);
    assert_refused(&outcome, &output, &["line 2", "'mfcc'", "short.raw", "1956 bytes", "expected 1960"]);
}

#[test]
fn an_input_line_with_the_wrong_number_of_entries_is_refused() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("multi_io");
    let list = work.path().join("list.txt");
    std::fs::write(&list, "inputs/float/0_0.raw inputs/float/0_1.raw\ninputs/float/1_0.raw\n").unwrap();
    let output = work.path().join("out");
    let binary = fixture.join("multi_io_qnn.bin");
    let outcome = lpai_net_run(&kws_args(&backend(), &binary, list.to_str().unwrap(), &output), &fixture);
    assert_refused(&outcome, &output, &["line 2", "1 entries", "2 inputs"]);
}

#[test]
fn a_missing_or_foreign_backend_library_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("kws_conv");
    let binary = fixture.join("kws_conv_qnn.bin");
    let absent = work.path().join("libQnnNothing.so");
    let output = work.path().join("out-absent");
    let outcome = lpai_net_run(&kws_args(&absent, &binary, "input_list_float.txt", &output), &fixture);
    assert_refused(&outcome, &output, &["libQnnNothing.so", "does not exist"]);

    let system = common::qnn_lib_dir().join("libQnnSystem.so");
    let output = work.path().join("out-system");
    let outcome = lpai_net_run(&kws_args(&system, &binary, "input_list_float.txt", &output), &fixture);
    assert_refused(&outcome, &output, &["libQnnSystem.so", "not a QNN library", "QnnInterface_getProviders"]);

    let text = fixture.join("input_list_float.txt");
    let output = work.path().join("out-text");
    let outcome = lpai_net_run(&kws_args(&text, &binary, "input_list_float.txt", &output), &fixture);
    // Named first, as the backend: not as a missing libQnnSystem beside it.
    assert_refused(&outcome, &output, &["input_list_float.txt (from --backend) is not a shared object"]);
    assert!(!outcome.stderr.contains("libQnnSystem"), "{}", outcome.stderr);
}

#[test]
fn a_refused_persistent_binary_is_reported_clearly() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("kws_conv");
    let output = work.path().join("out");
    let mut args = kws_args(&backend(), &fixture.join("kws_conv_qnn.bin"), "input_list_float.txt", &output);
    args.push("--persistent_binary".into());
    let outcome = lpai_net_run(&args, &fixture);
    assert_refused(&outcome, &output, &["does not take persistent binaries", "--persistent_binary"]);
}

#[test]
fn a_config_file_with_a_typo_names_the_key() {
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("kws_conv");
    let output = work.path().join("out");
    let config = work.path().join("lpaiParams.conf");
    std::fs::write(&config, r#"{"lpai_graph": {"execute": {"ftrt": 5}}}"#).unwrap();
    let mut args = kws_args(&backend(), &fixture.join("kws_conv_qnn.bin"), "input_list_float.txt", &output);
    args.push(format!("--config_file={}", config.display()));
    let outcome = lpai_net_run(&args, &fixture);
    assert_refused(&outcome, &output, &["lpaiParams.conf", "unknown field `ftrt`"]);
}

#[test]
fn a_good_run_from_the_fixture_directory_writes_every_result() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("kws_conv");
    let output = work.path().join("out");
    let args = kws_args(&backend(), &fixture.join("kws_conv_qnn.bin"), "input_list_float.txt", &output);
    let outcome = lpai_net_run(&args, &fixture);
    assert!(outcome.success, "{}", outcome.stderr);
    let written = common::result_files(&output);
    let expected: Vec<PathBuf> = (0..3).map(|i| PathBuf::from(format!("Result_{i}/logits.raw"))).collect();
    assert_eq!(written, expected);
}

#[test]
fn an_output_name_the_graph_lacks_is_refused_with_the_graph_outputs() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("multi_io");
    let list = work.path().join("list.txt");
    let lines = std::fs::read_to_string(fixture.join("input_list_float.txt")).unwrap();
    std::fs::write(&list, format!("#vec_out logits\n{lines}")).unwrap();
    let output = work.path().join("out");
    let binary = fixture.join("multi_io_qnn.bin");
    let outcome = lpai_net_run(&kws_args(&backend(), &binary, list.to_str().unwrap(), &output), &fixture);
    assert_refused(&outcome, &output, &["line 1", "no output named 'logits'", "seq_out", "vec_out"]);
}

#[test]
fn a_bare_backend_name_is_left_to_the_dynamic_loader() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("kws_conv");
    let output = work.path().join("out");
    let binary = fixture.join("kws_conv_qnn.bin");
    let mut args = kws_args(Path::new("libQnnHtp.so"), &binary, "input_list_float.txt", &output);
    args.push("--transport=local".into());
    let outcome = lpai_net_run_with_library_path(&args, &fixture, Some(&common::qnn_lib_dir()));
    assert!(outcome.success, "{}", outcome.stderr);
    assert_eq!(common::result_files(&output).len(), 3);

    let args = kws_args(Path::new("libQnnNothing.so"), &binary, "input_list_float.txt", &output.join("none"));
    let outcome = lpai_net_run(&args, &fixture);
    assert_refused(&outcome, &output.join("none"), &["libQnnNothing.so", "cannot be loaded"]);
    assert!(!outcome.stderr.contains("does not exist"), "{}", outcome.stderr);
}

#[test]
fn an_op_package_the_backend_cannot_open_stops_the_run_in_either_mode_naming_it_and_qnns_error() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("kws_conv");
    let binary = fixture.join("kws_conv_qnn.bin");
    // libQnnHtp's own answers: a file that does not exist and a file that is not a library are both NOT_FOUND.
    let packages = ["/nonexistent/libNoOps.so:NoOps_interfaceProvider", "input_list_float.txt:NoOps_interfaceProvider"];
    for (index, (package, mode)) in packages.iter().flat_map(|p| [(p, None), (p, Some("--direct_mode"))]).enumerate() {
        let output = work.path().join(format!("out-{index}"));
        let mut args = kws_args(&backend(), &binary, "input_list_float.txt", &output);
        args.extend([format!("--op_packages={package}")].into_iter().chain(mode.map(String::from)));
        let outcome = lpai_net_run(&args, &fixture);
        let named = format!("op package {package}: backendRegisterOpPackage failed");
        assert_refused(
            &outcome,
            &output,
            &["--op_packages: ", &named, "QNN_BACKEND_ERROR_OP_PACKAGE_NOT_FOUND (4005)"],
        );
    }
}

#[test]
fn a_malformed_op_packages_value_is_refused_in_one_line_naming_the_flag_and_the_entry() {
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("kws_conv");
    let binary = fixture.join("kws_conv_qnn.bin");
    for (value, says) in [
        ("libA.so:ProvideA,libB.so", "entry 2 'libB.so' has no interface provider: write PATH:PROVIDER[:TARGET]"),
        ("libA.so:P:DSP:x", "entry 1 'libA.so:P:DSP:x' has more than three fields"),
        ("a:b,c:d,e:f,g:h,i:j", "entry 5 'i:j' is one too many: at most 4 op packages are registered"),
    ] {
        let output = work.path().join("out");
        let mut args = kws_args(&backend(), &binary, "input_list_float.txt", &output);
        args.push(format!("--op_packages={value}"));
        let outcome = lpai_net_run(&args, &fixture);
        assert_refused(&outcome, &output, &["--op_packages", says]);
    }
}
