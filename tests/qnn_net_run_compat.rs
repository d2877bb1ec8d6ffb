//! lpai-net-run as a drop-in for `qnn-net-run --direct_mode`: a qnn-net-run-style invocation (config.json with
//! `is_persistent_binary`, an lpaiParams.conf, an input list with a comment line) runs unchanged through the virtual
//! aDSP on a contract-model fixture, and the same config fails on libQnnHtp with the documented one-line error;
//! `--output_data_type float_and_native` and `--native_input_tensor_names` write and read what qnn-net-run does, in
//! both modes; a comma-separated input list runs each graph into `Result_<i>/<graph name>/`; `--duration` loops
//! until its time is up; qnn-net-run flags that mean nothing here are refused with one line.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn net_run_binary() -> PathBuf {
    common::artifact("target/release/lpai-net-run", "cargo build --release -p lpai-net-run")
}

/// Runs the lpai-net-run executable in `directory`.
fn lpai_net_run(directory: &Path, args: &[String]) -> Output {
    Command::new(net_run_binary()).current_dir(directory).args(args).output().unwrap()
}

/// stderr's lines from lpai-net-run itself (the QNN libraries log on stderr too).
fn own_lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|line| line.starts_with("lpai-net-run"))
        .map(str::to_string)
        .collect()
}

fn succeeded(output: &Output) {
    assert!(
        output.status.success(),
        "lpai-net-run failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn same_bytes(ours: &Path, reference: &Path) {
    let (a, b) = (std::fs::read(ours).unwrap(), std::fs::read(reference).unwrap());
    assert!(a == b, "{} differs from {}", ours.display(), reference.display());
}

/// A qnn-net-run-style work directory: config.json pointing at lpaiParams.conf with `is_persistent_binary`, and the
/// fixture's float input list with an output-names line and a comment line, paths relative to the fixture.
fn qnn_net_run_files(work: &Path, fixture: &Path, output_name: &str) -> PathBuf {
    std::fs::write(
        work.join("lpaiParams.conf"),
        r#"{"lpai_backend": {"target_env": "adsp", "enable_hw_ver": "v6"},
            "lpai_graph": {"execute": {"fps": 100, "ftrt_ratio": 10, "client_type": "real_time"}}}"#,
    )
    .unwrap();
    std::fs::write(
        work.join("config.json"),
        r#"{"backend_extensions": {"shared_library_path": "libQnnLpaiNetRunExtensions.so",
                                   "config_file_path": "lpaiParams.conf"},
            "context_configs": {"is_persistent_binary": true}}"#,
    )
    .unwrap();
    let absolute = common::absolute_list_in(fixture, "float", work, "absolute");
    let mut list = format!("#{output_name}\n");
    for (index, line) in std::fs::read_to_string(absolute).unwrap().lines().enumerate() {
        list.push_str(line);
        list.push('\n');
        if index == 0 {
            list.push_str("# a comment line, skipped as qnn-net-run skips it\n");
        }
    }
    std::fs::write(work.join("input_list.txt"), list).unwrap();
    work.join("config.json")
}

#[test]
fn a_qnn_net_run_invocation_runs_unchanged_on_the_virtual_adsp_and_htp_refuses_its_persistent_binary() {
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("contract_single");
    qnn_net_run_files(work.path(), &fixture, "out");
    let virtual_adsp =
        |file: &str| common::artifact(&format!("target/virtual-adsp/{file}"), "scripts/build-hexagon.sh");
    let system = common::artifact(
        "target/release/libQnnSystemContract.so",
        "cargo build --release -p lpai-contract-lpai -p lpai-contract-system",
    );
    let mut args: Vec<String> = [
        format!("--backend={}", virtual_adsp("libQnnLpaiContract.so").display()),
        format!("--retrieve_context={}", fixture.join("contract_single.bin").display()),
        "--input_list=input_list.txt".to_string(),
        "--config_file=config.json".to_string(),
        "--output_dir=output".to_string(),
        "--direct_mode".to_string(),
        format!("--system_library={}", system.display()),
    ]
    .to_vec();
    // What only this machine needs: the virtual aDSP in place of a device (its default skel and PD shell).
    args.push("--transport=qemu".to_string());
    // The contract model has no QNN profiling: the run goes on without QNN events, timed on the DSP clock.
    args.push("--profiling_level=basic".to_string());
    let output = lpai_net_run(work.path(), &args);
    succeeded(&output);
    let written = common::result_files(&work.path().join("output"));
    assert_eq!(written.len(), 4, "{written:?}");
    for file in &written {
        same_bytes(&work.path().join("output").join(file), &fixture.join("reference/float").join(file));
    }
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(work.path().join("output/lpai_net_run.json")).unwrap()).unwrap();
    assert_eq!((record["mode"].as_str(), record["transport"].as_str()), (Some("direct"), Some("qemu")));
    assert_eq!(record["profile"]["dsp_execute_us"]["count"], 4);
    assert_eq!(record["profile"]["events"], serde_json::json!([]));

    // Both kinds of output from the Hexagon skel: float in out.raw, native in out_native.raw.
    args.retain(|flag| !flag.starts_with("--output_dir"));
    args.extend(["--output_dir=both".to_string(), "--output_data_type=float_and_native".to_string()]);
    succeeded(&lpai_net_run(work.path(), &args));
    for result in 0..4 {
        let (ours, reference) = (work.path().join(format!("both/Result_{result}")), fixture.join("reference"));
        same_bytes(&ours.join("out.raw"), &reference.join(format!("float/Result_{result}/out.raw")));
        same_bytes(&ours.join("out_native.raw"), &reference.join(format!("native/Result_{result}/out.raw")));
    }
    assert_eq!(common::result_files(&work.path().join("both")).len(), 8);

    // The same config on the real libQnnHtp, which refuses persistent binaries: one line, exit status 1.
    let _guard = common::qnn_lock();
    let kws = common::fixture("kws_conv");
    qnn_net_run_files(work.path(), &kws, "logits");
    let htp: Vec<String> = vec![
        format!("--backend={}", common::qnn_lib_dir().join("libQnnHtp.so").display()),
        format!("--retrieve_context={}", kws.join("kws_conv_qnn.bin").display()),
        "--input_list=input_list.txt".to_string(),
        "--config_file=config.json".to_string(),
        "--output_dir=htp".to_string(),
        "--direct_mode".to_string(),
    ];
    let refused = lpai_net_run(work.path(), &htp);
    assert_eq!(refused.status.code(), Some(1));
    let expected = format!(
        "lpai-net-run: error: context binary {}: {}",
        kws.join("kws_conv_qnn.bin").display(),
        lpai_net_run::net_run::PERSISTENT_BINARY_REFUSED
    );
    assert_eq!(own_lines(&refused), vec![expected]);
    assert!(!work.path().join("htp/Result_0").exists());
}

/// Runs kws_conv or multi_io through the local transport on the real libQnnHtp.
fn run_htp(name: &str, list: &Path, output: &Path, extra: &[&str]) {
    let binary = common::fixture(name).join(format!("{name}_qnn.bin"));
    let extra: Vec<String> = extra.iter().map(|flag| flag.to_string()).collect();
    let settings = common::settings(common::net_run_args(&binary, list, output, false, &extra));
    lpai_net_run::net_run::run(&settings).unwrap_or_else(|error| panic!("{name} {extra:?}: {error:#}"));
}

#[test]
fn float_and_native_outputs_and_per_tensor_native_inputs_match_ort_in_both_modes() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let kws = common::fixture("kws_conv");
    let list = common::absolute_input_list("kws_conv", "float", work.path());
    for mode in [&[][..], &["--direct_mode"][..]] {
        let output = work.path().join(format!("both{}", mode.len()));
        run_htp("kws_conv", &list, &output, &[&["--output_data_type=float_and_native"], mode].concat());
        let mut expected = Vec::new();
        for result in 0..3 {
            expected.push(PathBuf::from(format!("Result_{result}/logits.raw")));
            expected.push(PathBuf::from(format!("Result_{result}/logits_native.raw")));
            let directory = output.join(format!("Result_{result}"));
            same_bytes(&directory.join("logits.raw"), &kws.join(format!("reference/float/Result_{result}/logits.raw")));
            same_bytes(
                &directory.join("logits_native.raw"),
                &kws.join(format!("reference/native/Result_{result}/logits.raw")),
            );
        }
        expected.sort();
        assert_eq!(common::result_files(&output), expected, "{mode:?}");
    }

    // multi_io: the first input native, the others float; the float outputs are ORT's.
    let multi_io = common::fixture("multi_io");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(multi_io.join("manifest.json")).unwrap()).unwrap();
    let first_input = manifest["inputs"][0]["qnn_name"].as_str().unwrap().to_string();
    let float_lines = std::fs::read_to_string(multi_io.join("input_list_float.txt")).unwrap();
    let native_lines = std::fs::read_to_string(multi_io.join("input_list_native.txt")).unwrap();
    let mixed: Vec<String> = float_lines
        .lines()
        .zip(native_lines.lines())
        .map(|(float, native)| {
            let native_entry = native.split_whitespace().find(|e| e.starts_with(&format!("{first_input}:="))).unwrap();
            let others = float.split_whitespace().filter(|e| !e.starts_with(&format!("{first_input}:=")));
            std::iter::once(native_entry)
                .chain(others)
                .map(|entry| {
                    let (name, path) = entry.split_once(":=").unwrap();
                    format!("{name}:={}", multi_io.join(path).display())
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let mixed_list = work.path().join("mixed.txt");
    std::fs::write(&mixed_list, mixed.join("\n") + "\n").unwrap();
    for (index, mode) in [&[][..], &["--direct_mode"][..]].into_iter().enumerate() {
        let output = work.path().join(format!("mixed{index}"));
        let names = format!("--native_input_tensor_names={first_input}");
        run_htp("multi_io", &mixed_list, &output, &[&[names.as_str()], mode].concat());
        let files = common::result_files(&output);
        assert!(!files.is_empty());
        assert_eq!(files, common::result_files(&multi_io.join("reference/float")));
        for file in &files {
            same_bytes(&output.join(file), &multi_io.join("reference/float").join(file));
        }
    }
}

#[test]
fn comma_separated_lists_run_each_graph_into_its_own_directory_and_double_underscore_skips_one() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("two_graphs");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture.join("manifest.json")).unwrap()).unwrap();
    let graphs: Vec<(String, PathBuf)> = manifest["graphs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|graph| (graph["graph_name"].as_str().unwrap().to_string(), fixture.join(graph["dir"].as_str().unwrap())))
        .collect();
    let lists: Vec<PathBuf> = graphs
        .iter()
        .enumerate()
        .map(|(index, (_, dir))| common::absolute_list_in(dir, "float", work.path(), &format!("graph{index}")))
        .collect();
    let binary = fixture.join("two_graphs_qnn.bin");
    let run = |list: String, output: &Path, extra: &[&str]| {
        let extra: Vec<String> = extra.iter().map(|flag| flag.to_string()).collect();
        let settings = common::settings(common::net_run_args(&binary, Path::new(&list), output, false, &extra));
        lpai_net_run::net_run::run(&settings)
    };
    let both = format!("{},{}", lists[0].display(), lists[1].display());
    for (index, mode) in [&[][..], &["--direct_mode"][..]].into_iter().enumerate() {
        let output = work.path().join(format!("both{index}"));
        run(both.clone(), &output, mode).unwrap();
        let mut expected = Vec::new();
        for (name, dir) in &graphs {
            for file in common::result_files(&dir.join("reference/float")) {
                let mut parts = file.components();
                let result = parts.next().unwrap().as_os_str().to_owned();
                let ours = PathBuf::from(&result).join(name).join(parts.as_path());
                same_bytes(&output.join(&ours), &dir.join("reference/float").join(&file));
                expected.push(ours);
            }
        }
        expected.sort();
        assert_eq!(common::result_files(&output), expected, "{mode:?}");
    }
    let skipped = work.path().join("skipped");
    run(format!("__,{}", lists[1].display()), &skipped, &[]).unwrap();
    let files = common::result_files(&skipped);
    assert!(!files.is_empty(), "graph 1 ran");
    assert!(files.iter().all(|file| file.iter().nth(1).unwrap() == graphs[1].0.as_str()), "{files:?}");
    assert!(!skipped.join("Result_0").join(&graphs[0].0).exists());
    let message = format!("{:#}", run(lists[0].display().to_string() + ",x,y", &skipped, &[]).unwrap_err());
    assert!(message.contains("gives 3 comma-separated lists, but the context has 2 graphs"), "{message}");
}

#[test]
fn duration_loops_over_the_list_until_its_time_is_up_in_both_modes() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let list = common::absolute_input_list("kws_conv", "float", work.path());
    for (index, mode) in [&[][..], &["--direct_mode"][..]].into_iter().enumerate() {
        let output = work.path().join(format!("timed{index}"));
        let started = std::time::Instant::now();
        run_htp("kws_conv", &list, &output, &[&["--duration=0.3"], mode].concat());
        assert!(started.elapsed().as_secs_f64() >= 0.3);
        let record: serde_json::Value =
            serde_json::from_slice(&std::fs::read(output.join("lpai_net_run.json")).unwrap()).unwrap();
        let inferences = record["inferences"].as_u64().unwrap() as usize;
        // However fast the machine: at least one whole pass of the 3-line list, then whole passes or a part.
        assert!(inferences >= 3, "{mode:?}: {inferences} inferences, less than one pass of the list");
        let written = common::result_files(&output);
        assert_eq!(written.len(), inferences, "{mode:?}: a result per inference, numbered on");
        let reference = common::fixture("kws_conv").join("reference/float");
        for result in 0..inferences {
            let file = format!("Result_{result}/logits.raw");
            same_bytes(&output.join(&file), &reference.join(format!("Result_{}/logits.raw", result % 3)));
        }
    }
}

#[test]
fn qnn_net_run_flags_that_mean_nothing_here_are_refused_with_one_line() {
    let work = tempfile::tempdir().unwrap();
    let args: Vec<String> =
        ["--model=libmodel.so", "--backend=b", "--input_list=l"].iter().map(|flag| flag.to_string()).collect();
    let output = lpai_net_run(work.path(), &args);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        vec![
            "lpai-net-run: error: --model is a qnn-net-run flag lpai-net-run does not take: lpai-net-run runs \
             offline-prepared context binaries only: pass --retrieve_context"
        ]
    );
    let version = lpai_net_run(work.path(), &["--version".to_string()]);
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("lpai-net-run "), "{version:?}");
}
