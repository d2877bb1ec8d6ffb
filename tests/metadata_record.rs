//! The metadata record on the real libQnnHtp.so: without a system library on the skel's side (the default: the HLOS
//! side reads the metadata and sends the record) every fixture gives the same outputs as with one; a record that
//! does not match its binary is refused by name; `lpai-net-run inspect` writes the record the skel loads with.

mod common;

use lpai_direct_stub::stub::{fastrpc, LoadRequest, Loaded, Local, SkelLocation, Stub};
use lpai_net_run::metadata;
use lpai_net_run::net_run;
use std::path::{Path, PathBuf};

fn binary_of(name: &str) -> PathBuf {
    common::fixture(name).join(format!("{name}_qnn.bin"))
}

fn system_library() -> PathBuf {
    common::qnn_lib_dir().join("libQnnSystem.so")
}

/// Runs fixture `name` in `mode` on the input list in `lists` with `extra` flags, writing into `output`.
fn run(name: &str, lists: &Path, mode: &str, output: &Path, work: &Path, extra: &[String]) -> net_run::RunRecord {
    let label = output.file_name().unwrap().to_str().unwrap();
    let list = common::absolute_list_in(lists, mode, work, label);
    let args = common::net_run_args(&binary_of(name), &list, output, mode == "native", extra);
    net_run::run(&common::settings(args)).unwrap_or_else(|error| panic!("{name} {mode} {extra:?}: {error:#}"))
}

fn assert_same_results(a: &Path, b: &Path, what: &str) {
    let files = common::result_files(a);
    assert!(!files.is_empty(), "{what}: no results");
    assert_eq!(files, common::result_files(b), "{what}: different result files");
    for file in &files {
        assert!(
            std::fs::read(a.join(file)).unwrap() == std::fs::read(b.join(file)).unwrap(),
            "{what}: {}",
            file.display()
        );
    }
}

#[test]
fn every_fixture_gives_the_same_outputs_with_the_record_as_with_a_dsp_system_library() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let dsp_system = format!("--dsp_system_library={}", system_library().display());
    let mut runs: Vec<(&str, PathBuf, Vec<String>)> =
        common::FIXTURES.iter().map(|name| (*name, common::fixture(name), Vec::new())).collect();
    // Both graphs of the two-graph binary, and the skel reading the binary itself with the record sent along.
    let two_graphs = common::fixture("two_graphs");
    let two =
        metadata::parse(&record_of("two_graphs")).unwrap().graphs().map(|g| g.name.to_string()).collect::<Vec<_>>();
    assert_eq!(two.len(), 2);
    for (index, graph) in two.iter().enumerate() {
        let lists = two_graphs.join("graphs").join(index.to_string());
        runs.push(("two_graphs", lists, vec![format!("--graph_name={graph}")]));
    }
    runs.push(("kws_conv", common::fixture("kws_conv"), vec!["--dsp_reads_context".to_string()]));
    for (index, (name, lists, extra)) in runs.iter().enumerate() {
        for mode in ["float", "native"] {
            let with_record = work.path().join(format!("{index}-{mode}-record"));
            let with_library = work.path().join(format!("{index}-{mode}-library"));
            let record_run = run(name, lists, mode, &with_record, work.path(), extra);
            let library_extra: Vec<String> = extra.iter().cloned().chain([dsp_system.clone()]).collect();
            let library_run = run(name, lists, mode, &with_library, work.path(), &library_extra);
            assert_eq!(record_run.graph_names, library_run.graph_names, "{name} {mode}");
            assert_same_results(&with_record, &with_library, &format!("{name} {mode} {extra:?}"));
        }
    }
}

/// A stub on the host skel with the real HTP backend and no system library on the skel's side.
fn stub_without_system_library() -> Stub {
    let local = Local::load(&SkelLocation::File { path: common::host_skel(), named_by: "the test" }).unwrap();
    let mut stub = Stub::open(Box::new(local), &fastrpc::skel_uri(fastrpc::Domain::Adsp, None)).unwrap();
    let configuration = common::configuration(&common::qnn_lib_dir().join("libQnnHtp.so"), None);
    stub.configure(&configuration).unwrap();
    stub
}

fn record_of(name: &str) -> Vec<u8> {
    let binary = std::fs::read(binary_of(name)).unwrap();
    metadata::record_in_this_process(&system_library(), &binary, name).unwrap()
}

#[test]
fn a_record_that_does_not_match_the_binary_is_refused_by_name() {
    let _guard = common::qnn_lock();
    let mut stub = stub_without_system_library();
    let binary = std::fs::read(binary_of("kws_conv")).unwrap();
    let own = record_of("kws_conv");
    let graph = metadata::parse(&own).unwrap().graphs().next().unwrap().name.to_string();

    let plain = stub.load(&LoadRequest::bytes(&binary)).unwrap_err().to_string();
    assert!(plain.contains("configure named no system library") && plain.contains("load_with_metadata"), "{plain}");

    // Another binary's record, and this record with a binary one bit away: refused before the backend sees them.
    let other = record_of("multi_io");
    let message = stub.load(&LoadRequest::bytes(&binary).with_record(&other)).unwrap_err().to_string();
    let expected = "the metadata record was made for another binary (the SHA-256 it carries is not the binary's)";
    assert!(message.contains(expected) && message.contains("AEE_EBADPARM"), "{message}");
    let mut flipped = binary.clone();
    flipped[40_000] ^= 1;
    let message = stub.load(&LoadRequest::bytes(&flipped).with_record(&own)).unwrap_err().to_string();
    assert!(message.contains(expected), "{message}");

    let renamed = common::changed_record(&own, Some("renamed_graph"), None);
    let message = stub.load(&LoadRequest::bytes(&binary).with_record(&renamed)).unwrap_err().to_string();
    assert!(message.contains("names graph renamed_graph, which the context binary does not have"), "{message}");

    let malformed = &own[..own.len() - 3];
    let message = stub.load(&LoadRequest::bytes(&binary).with_record(malformed)).unwrap_err().to_string();
    assert!(message.contains("load_with_metadata: the metadata record is malformed (byte"), "{message}");

    let wrong_id = common::changed_record(&own, None, Some(77));
    let Loaded { context, graph_count } = stub.load(&LoadRequest::bytes(&binary).with_record(&wrong_id)).unwrap();
    assert_eq!(graph_count, 1);
    let description = stub.describe(context, 0).unwrap();
    assert_eq!(description.inputs[0].id, 77);
    let mut outputs = vec![0u8; description.outputs[0].native_bytes];
    let inputs = vec![0u8; description.inputs[0].native_bytes];
    let message = stub.execute(context, 0, 0, &inputs, &mut outputs).unwrap_err().to_string();
    let expected = format!("graph {graph}: graphExecute refused the tensors the metadata record describes");
    assert!(message.contains(&expected) && message.contains("AEE_EBADPARM"), "{message}");

    let context = stub.load(&LoadRequest::bytes(&binary).with_record(&own)).unwrap().context;
    stub.execute(context, 0, 0, &inputs, &mut outputs).unwrap();
}

#[test]
fn inspect_describes_the_binary_and_writes_the_record_whole_or_not_at_all() {
    let exe = common::artifact("target/debug/lpai-net-run", "cargo build -p lpai-net-run");
    let work = tempfile::tempdir().unwrap();
    let emitted = work.path().join("kws_conv.lpmd");
    let system = format!("--system_library={}", system_library().display());
    let output = std::process::Command::new(&exe)
        .args([
            "inspect".as_ref(),
            binary_of("kws_conv").as_os_str(),
            system.as_ref(),
            "--emit_metadata".as_ref(),
            emitted.as_os_str(),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains(": 1 input(s), 1 output(s)\n"), "{stdout}");
    assert!(stdout.contains("  input  mfcc id 1 APP_WRITE UFIXED_POINT_8 [1, 1, 49, 10] scale "), "{stdout}");
    assert!(stdout.contains("  output logits id 2 APP_READ UFIXED_POINT_8 [1, 12] scale "), "{stdout}");
    assert_eq!(std::fs::read(&emitted).unwrap(), record_of("kws_conv"));

    let truncated = work.path().join("truncated.bin");
    let whole = std::fs::read(binary_of("kws_conv")).unwrap();
    std::fs::write(&truncated, &whole[..whole.len() / 3]).unwrap();
    let refused = work.path().join("refused.lpmd");
    let output = std::process::Command::new(&exe)
        .args([
            "inspect".as_ref(),
            truncated.as_os_str(),
            system.as_ref(),
            "--emit_metadata".as_ref(),
            refused.as_os_str(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("truncated.bin: not a usable QNN context binary"), "{stderr}");
    assert!(!refused.exists() && std::fs::read_dir(work.path()).unwrap().count() == 2, "nothing half-written");
}
