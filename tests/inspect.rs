//! `lpai-net-run inspect` end to end: kws_conv read with the real libQnnSystem, as text and as JSON, compared with
//! what the fixture's manifest documents (build id, binary info version, graph name, tensor ids, names, shapes, data
//! types, scale bits and offsets); contract_single loaded through the host skel on the contract model of libQnnLpai,
//! whose scratch and persistent sizes the fixture documents; errors that name the file at fault and write nothing.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn exe() -> PathBuf {
    common::artifact("target/release/lpai-net-run", "cargo build --release -p lpai-net-run")
}

fn contract_library(name: &str) -> PathBuf {
    common::artifact(
        &format!("target/release/{name}"),
        "cargo build --release -p lpai-contract-lpai -p lpai-contract-system",
    )
}

fn inspect(args: &[&str]) -> Output {
    std::process::Command::new(exe()).arg("inspect").args(args).output().unwrap()
}

fn text(output: &Output) -> (String, String) {
    (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned())
}

fn manifest(fixture: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(common::fixture(fixture).join("manifest.json")).unwrap()).unwrap()
}

/// Checks one tensor of `inspect --json` against its manifest entry: name, id, shape, data type, scale (its f32 bits)
/// and QNN offset.
fn assert_tensor(reported: &Value, documented: &Value) {
    let name = documented["qnn_name"].as_str().unwrap();
    assert_eq!(reported["name"], documented["qnn_name"], "{name}");
    assert_eq!(reported["id"], documented["qnn_id"], "{name}");
    assert_eq!(reported["dimensions"], documented["shape"], "{name}");
    let data_type = documented["qnn_data_type"].as_str().unwrap().split(' ').next().unwrap();
    assert_eq!(reported["data_type"], data_type, "{name}");
    let quantization = &reported["quantization"];
    assert_eq!(quantization["encoding"], "SCALE_OFFSET", "{name}");
    let bits = documented["scale_f32_bits"].as_str().unwrap().trim_start_matches("0x");
    let scale = quantization["scale"].as_f64().unwrap() as f32;
    assert_eq!(scale.to_bits(), u32::from_str_radix(bits, 16).unwrap(), "{name}: scale {scale}");
    assert_eq!(quantization["offset"], documented["qnn_offset"], "{name}");
}

fn assert_graph(graph: &Value, documented: &Value) {
    assert_eq!(graph["name"], documented["graph_name"]);
    let (inputs, outputs) = (graph["inputs"].as_array().unwrap(), graph["outputs"].as_array().unwrap());
    let (expected_inputs, expected_outputs) =
        (documented["inputs"].as_array().unwrap(), documented["outputs"].as_array().unwrap());
    assert_eq!((inputs.len(), outputs.len()), (expected_inputs.len(), expected_outputs.len()));
    for (reported, expected) in inputs.iter().zip(expected_inputs).chain(outputs.iter().zip(expected_outputs)) {
        assert_tensor(reported, expected);
    }
    assert_eq!(inputs[0]["tensor_type"], "APP_WRITE");
    assert_eq!(outputs[0]["tensor_type"], "APP_READ");
}

#[test]
fn kws_conv_is_described_as_its_manifest_documents_in_text_and_json() {
    let binary = common::fixture("kws_conv").join("kws_conv_qnn.bin");
    let system = common::qnn_lib_dir().join("libQnnSystem.so");
    let system_flag = format!("--system_library={}", system.display());
    let documented = manifest("kws_conv");
    let build_id = documented["qnn_binary"]["build_id"].as_str().unwrap();
    let graph_name = documented["graph_name"].as_str().unwrap();

    let output = inspect(&[binary.to_str().unwrap(), &system_flag]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    let bytes = std::fs::metadata(&binary).unwrap().len();
    for line in [
        format!("binary: {} ({bytes} bytes)\n", binary.display()),
        format!("read with: {}\n", system.display()),
        format!("binary info version: {}\n", documented["qnn_binary"]["binary_info_version"]),
        "backend id: 6 (HTP)\n".to_string(),
        format!("build id: {build_id}\n"),
        format!("graph {graph_name}: 1 input(s), 1 output(s)\n"),
        "  input  mfcc id 1 APP_WRITE UFIXED_POINT_8 [1, 1, 49, 10] scale 0.08062776 offset -151\n".to_string(),
        "  output logits id 2 APP_READ UFIXED_POINT_8 [1, 12] scale 0.05616111 offset -110\n".to_string(),
    ] {
        assert!(stdout.contains(&line), "missing {line:?} in\n{stdout}");
    }
    assert!(!stdout.contains("memory:") && !stdout.contains("load:"), "no backend, no load: {stdout}");

    let output = inspect(&[binary.to_str().unwrap(), &system_flag, "--json"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"));
    assert_eq!(json["format"], 1);
    assert_eq!(json["binary_bytes"], bytes);
    let info = &json["binary_info"];
    assert_eq!(info["version"], documented["qnn_binary"]["binary_info_version"]);
    assert_eq!((info["backend_id"].as_u64(), info["backend"].as_str()), (Some(6), Some("HTP")));
    assert_eq!(info["build_id"], build_id);
    // The versions the QNN 2.51 libraries that prepared the fixtures speak (core API 2.40, HTP backend API 5.51).
    assert_eq!(
        (info["core_api_version"].as_str(), info["backend_api_version"].as_str()),
        (Some("2.40.0"), Some("5.51.0"))
    );
    let blob = info["context_blob_bytes"].as_u64().unwrap();
    assert!(blob > 0 && blob <= bytes, "context blob {blob} of a {bytes}-byte binary");
    // Binary info version 3 records a SoC model and no hardware-info blob.
    assert!(info["soc_model"].is_u64() && info["hw_info_blob_version"].is_null(), "{info}");
    let graphs = json["graphs"].as_array().unwrap();
    assert_eq!(graphs.len(), 1);
    assert_graph(&graphs[0], &documented);
    assert!(graphs[0]["memory"].is_null() && json["load"].is_null());
}

#[test]
fn contract_single_on_the_contract_backend_reports_its_lpai_memory() {
    let binary = common::fixture("contract_single").join("contract_single.bin");
    let backend = contract_library("libQnnLpaiContract.so");
    let system = contract_library("libQnnSystemContract.so");
    let skel = common::host_skel();
    let documented = manifest("contract_single");
    let (scratch, persistent) = (
        documented["contract_model"]["scratch_bytes"].as_u64().unwrap(),
        documented["contract_model"]["persistent_bytes"].as_u64().unwrap(),
    );
    assert!(scratch > 0 && persistent > 0);
    let work = tempfile::tempdir().unwrap();
    let record = work.path().join("contract_single.lpmd");
    let args = [
        binary.display().to_string(),
        format!("--backend={}", backend.display()),
        format!("--system_library={}", system.display()),
        format!("--skel={}", skel.display()),
        format!("--emit_metadata={}", record.display()),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();

    let output = inspect(&args);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("backend id: 12 (LPAI)\n"), "{stdout}");
    let memory = format!("  memory: scratch {scratch} bytes (ddr), persistent {persistent} bytes (ddr)\n");
    assert!(stdout
        .contains(&format!("  output out id 2 APP_READ UFIXED_POINT_8 [1, 16] scale 0.125 offset -100\n{memory}")));
    let load = format!("load: backend {} through the host skel {}: arena used ", backend.display(), skel.display());
    assert!(stdout.contains(&load), "{stdout}");
    // The contract model's ENPU_CORE_NUM and ENPU_CORE_INFO (tests/contract-model/src/backend.rs).
    assert!(stdout.contains("\neNPU cores: 1 (core 0: 256 MACs, version 6)\n"), "{stdout}");
    assert!(stdout.ends_with(&format!("lpai-net-run: metadata record written to {}\n", record.display())));
    let written = std::fs::read(&record).unwrap();
    assert_eq!(&written[..4], b"LPMD");

    std::fs::remove_file(&record).unwrap();
    let json_args: Vec<&str> = args.iter().copied().chain(["--json"]).collect();
    let output = inspect(&json_args);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    // stdout holds the JSON object alone; the note about the record goes to stderr.
    let json: Value = serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"));
    assert!(stderr.contains("metadata record written to"), "{stderr}");
    assert_eq!(std::fs::read(&record).unwrap(), written, "the same record both times");
    assert_eq!(
        (json["binary_info"]["backend_id"].as_u64(), json["binary_info"]["backend"].as_str()),
        (Some(12), Some("LPAI"))
    );
    let graph = &json["graphs"][0];
    assert_graph(graph, &documented);
    assert_eq!(
        graph["memory"],
        serde_json::json!({"scratch_bytes": scratch, "persistent_bytes": persistent, "scratch_type": "ddr", "persistent_type": "ddr"})
    );
    let load = &json["load"];
    assert_eq!(load["backend"], backend.display().to_string());
    assert_eq!(load["skel"], skel.display().to_string());
    assert_eq!(load["enpu_cores"], 1);
    assert_eq!(load["enpu_core_info"], serde_json::json!([{"index": 0, "macs": 256, "version": 6}]));
    let (used, capacity) = (load["arena_used_bytes"].as_u64().unwrap(), load["arena_capacity_bytes"].as_u64().unwrap());
    // The arena holds at least the binary, both tensors and both LPAI memories.
    let binary_bytes = json["binary_bytes"].as_u64().unwrap();
    assert!(used >= binary_bytes + 32 + scratch + persistent && used <= capacity, "arena {used} of {capacity}");
}

/// Runs `inspect` with `args` and checks it fails with one error line containing `expected`, writing no record.
fn assert_refused(args: &[String], record: &Path, expected: &str) {
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    let emit = format!("--emit_metadata={}", record.display());
    args.push(&emit);
    let output = inspect(&args);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{args:?}: {stdout}{stderr}");
    assert!(stderr.starts_with("lpai-net-run: error: ") && stderr.lines().count() == 1, "{stderr}");
    assert!(stderr.contains(expected), "{args:?}: expected {expected:?} in {stderr}");
    assert!(!record.exists(), "{args:?}: a record was written");
}

#[test]
fn errors_name_the_file_at_fault_and_write_no_record() {
    let work = tempfile::tempdir().unwrap();
    let record = work.path().join("never.lpmd");
    let binary = common::fixture("contract_single").join("contract_single.bin").display().to_string();
    let system = format!("--system_library={}", contract_library("libQnnSystemContract.so").display());
    let backend = format!("--backend={}", contract_library("libQnnLpaiContract.so").display());
    let skel = format!("--skel={}", common::host_skel().display());
    let cases = [
        (vec!["absent.bin".to_string(), system.clone()], "context binary absent.bin cannot be read".to_string()),
        (
            vec![binary.clone(), "--system_library=/nonexistent/libQnnSystem.so".into()],
            "the system library /nonexistent/libQnnSystem.so cannot be loaded".into(),
        ),
        (
            vec![binary.clone(), system.clone(), "--backend=/nonexistent/libQnnLpai.so".into(), skel.clone()],
            "backend library /nonexistent/libQnnLpai.so (from --backend) does not exist".into(),
        ),
        (
            vec![binary.clone(), system.clone(), backend.clone(), "--skel=/nonexistent/skel.so".into()],
            "the skel library /nonexistent/skel.so (from --skel) does not exist".into(),
        ),
        // A library that is not a QNN backend is named by the skel; a backend that refuses the binary is named with
        // the binary.
        (
            vec![
                binary.clone(),
                system.clone(),
                format!("--backend={}", contract_library("libQnnSystemContract.so").display()),
                skel.clone(),
            ],
            format!("backend {}: not a QNN library", contract_library("libQnnSystemContract.so").display()),
        ),
        (
            vec![
                binary.clone(),
                system.clone(),
                format!("--backend={}", common::qnn_lib_dir().join("libQnnHtp.so").display()),
                skel,
            ],
            format!(
                "context binary {binary} does not load on backend {}: ",
                common::qnn_lib_dir().join("libQnnHtp.so").display()
            ),
        ),
    ];
    for (args, expected) in cases {
        assert_refused(&args, &record, &expected);
    }
}
