//! Direct mode: `lpai-net-run --direct_mode` hands the whole input list to the skel in one `run_job` call, which
//! reads the inputs and writes the results itself. On the real libQnnHtp.so its files equal the traditional path's
//! bit for bit; its stub-to-skel calls do not grow with the list; every run records itself in
//! `lpai_net_run.json`; failures on the skel's side come back naming the file at fault, leaving nothing half-written.

mod common;

use lpai_direct::job::{self, OutputFile};
use lpai_direct_stub::stub::{LoadRequest, Local, SkelLocation, Stub};
use lpai_net_run::net_run;
use std::path::Path;

fn run(binary: &Path, list: &Path, output: &Path, native: bool, direct: bool) -> net_run::RunRecord {
    let extra = if direct { vec!["--direct_mode".to_string()] } else { Vec::new() };
    let settings = common::settings(common::net_run_args(binary, list, output, native, &extra));
    net_run::run(&settings).unwrap_or_else(|error| panic!("{}: {error:#}", binary.display()))
}

fn record(output: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(output.join("lpai_net_run.json")).unwrap()).unwrap()
}

#[test]
fn direct_mode_writes_the_traditional_paths_files_bit_for_bit_for_every_fixture() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    for name in common::FIXTURES {
        let binary = common::fixture(name).join(format!("{name}_qnn.bin"));
        for mode in ["float", "native"] {
            let list = common::absolute_input_list(name, mode, work.path());
            let (direct, traditional) = (
                work.path().join(format!("{name}-{mode}-direct")),
                work.path().join(format!("{name}-{mode}-traditional")),
            );
            let summary = run(&binary, &list, &direct, mode == "native", true);
            run(&binary, &list, &traditional, mode == "native", false);
            let files = common::result_files(&traditional);
            assert_eq!(common::result_files(&direct), files, "{name} {mode}");
            let reference = common::fixture(name).join("reference").join(mode);
            for file in &files {
                let ours = std::fs::read(direct.join(file)).unwrap();
                assert!(ours == std::fs::read(traditional.join(file)).unwrap(), "{name} {mode}: {}", file.display());
                assert!(
                    ours == std::fs::read(reference.join(file)).unwrap(),
                    "{name} {mode}: {} vs ORT",
                    file.display()
                );
            }
            let recorded = record(&direct);
            assert_eq!(recorded["mode"], "direct");
            assert_eq!(recorded["transport"], "local");
            assert_eq!(recorded["inferences"], 3);
            assert_eq!(recorded["dsp_execute_us"].as_array().unwrap().len(), 3);
            assert_eq!(summary.times.dsp_execute_us.len(), 3);
            assert_eq!(record(&traditional)["mode"], "traditional");
            assert_eq!(record(&traditional)["host_round_trip_us"].as_array().unwrap().len(), 3);
        }
    }
}

/// An input list of `lines` lines, cycling through kws_conv's three float inputs.
fn long_list(work: &Path, lines: usize) -> std::path::PathBuf {
    let inputs = common::fixture("kws_conv").join("inputs/float");
    let text: String =
        (0..lines).map(|line| format!("{}\n", inputs.join(format!("{}_0.raw", line % 3)).display())).collect();
    let list = work.join(format!("list_{lines}.txt"));
    std::fs::write(&list, text).unwrap();
    list
}

#[test]
fn skel_calls_stay_the_same_in_direct_mode_and_grow_with_the_list_in_traditional_mode() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let binary = common::fixture("kws_conv").join("kws_conv_qnn.bin");
    let mut calls = Vec::new();
    for (lines, direct) in [(1, true), (30, true), (1, false), (30, false)] {
        let output = work.path().join(format!("out-{lines}-{direct}"));
        run(&binary, &long_list(work.path(), lines), &output, false, direct);
        let recorded = record(&output);
        assert_eq!(recorded["inferences"], lines);
        assert_eq!(common::result_files(&output).len(), lines);
        calls.push(recorded["skel_calls"].as_u64().unwrap());
    }
    // open, version, configure, load, describe, run_job, unload, close; traditional: one execute per line instead
    // of run_job.
    assert_eq!(calls, [8, 8, 8, 37]);
}

/// A stub on the host skel with the real HTP backend and kws_conv loaded; answers the stub and the context id.
fn loaded_stub() -> (Stub, i32) {
    let local = Local::load(&SkelLocation::File { path: common::host_skel(), named_by: "the test" }).unwrap();
    let uri = lpai_direct_stub::stub::fastrpc::skel_uri(lpai_direct_stub::stub::fastrpc::Domain::Adsp, None);
    let mut stub = Stub::open(Box::new(local), &uri).unwrap();
    let qnn = common::qnn_lib_dir();
    let configuration = common::configuration(&qnn.join("libQnnHtp.so"), Some(&qnn.join("libQnnSystem.so")));
    stub.configure(&configuration).unwrap();
    let binary = std::fs::read(common::fixture("kws_conv/kws_conv_qnn.bin")).unwrap();
    let context = stub.load(&LoadRequest::bytes(&binary)).unwrap().context;
    (stub, context)
}

/// A job for kws_conv's native inputs: `inputs` per inference, results under `output_dir`.
fn job(context: i32, output_dir: &Path, inputs: &[&Path]) -> Vec<u8> {
    let output_dir = output_dir.to_str().unwrap();
    let fields = job::Fields::new(context, 0, output_dir);
    let outputs = [OutputFile { index: 0, file_name: "logits.raw", float: false }];
    let paths: Vec<[&str; 1]> = inputs.iter().map(|input| [input.to_str().unwrap()]).collect();
    let inferences: Vec<&[&str]> = paths.iter().map(|path| &path[..]).collect();
    let mut bytes = Vec::new();
    job::encode(&fields, &outputs, &inferences, &mut |part| bytes.extend_from_slice(part)).unwrap();
    bytes
}

#[test]
fn failures_on_the_skels_side_name_the_file_and_leave_nothing_half_written() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let (mut stub, context) = loaded_stub();
    let good = common::fixture("kws_conv/inputs/native/0_0.raw");
    let missing = work.path().join("missing.raw");
    let short = work.path().join("short.raw");
    std::fs::write(&short, [0u8; 7]).unwrap();
    let output = work.path().join("out");
    for (bad, fragment) in [(&missing, "not found"), (&short, "holds 7 bytes, the tensor takes 490")] {
        let error = stub.run_job(&job(context, &output, &[&good, bad])).unwrap_err().to_string();
        assert!(error.contains(&format!("inference 2: {}: {fragment}", bad.display())), "{error}");
        assert!(!output.exists(), "the whole job is checked before the first inference: {error}");
    }
    // A directory the skel cannot create: a path under a regular file.
    let blocked = short.join("out");
    let error = stub.run_job(&job(context, &blocked, &[&good])).unwrap_err().to_string();
    assert!(error.contains(&blocked.display().to_string()), "{error}");
    // A result file that cannot be written: its name is taken by a directory.
    std::fs::create_dir_all(output.join("Result_0/logits.raw")).unwrap();
    let error = stub.run_job(&job(context, &output, &[&good])).unwrap_err().to_string();
    assert!(error.contains("inference 1: ") && error.contains("Result_0/logits.raw"), "{error}");
    let leftovers: Vec<_> =
        common::files_below(&output).into_iter().filter(|file| file.to_string_lossy().ends_with(".partial")).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A malformed job is refused whole, naming the byte where it goes wrong.
    let error = stub.run_job(b"lpai-job 1\n").unwrap_err().to_string();
    assert!(error.contains("run_job: byte 0 of the job: not a job"), "{error}");
    let error = stub.run_job(&job(context, &output, &[&good])[..50]).unwrap_err().to_string();
    assert!(error.contains("run_job: byte 48 of the job: the job ends inside this field"), "{error}");
    // A good job after the failures runs, and reports what it did.
    let fine = work.path().join("fine");
    let report = stub.run_job(&job(context, &fine, &[&good, &good])).unwrap();
    assert_eq!((report.inferences, report.bytes_read), (2, 2 * 490));
    // Each inference committed to the job's record file, under the job's token (0 here).
    let record = std::fs::read(fine.join("lpai_dsp_job.bin.00000000.partial")).unwrap();
    assert_eq!((record.len(), job::records(&record).filter(|record| record.execute_us > 0).count()), (24, 2));
    stub.close().unwrap();
}

#[test]
fn a_run_that_fails_after_its_checks_still_records_what_it_did_and_why() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let binary = common::fixture("kws_conv").join("kws_conv_qnn.bin");
    let output = work.path().join("out");
    // The first result file's name is taken by a directory: the skel cannot write it.
    std::fs::create_dir_all(output.join("Result_0/logits.raw")).unwrap();
    let settings = common::settings(common::net_run_args(
        &binary,
        &long_list(work.path(), 2),
        &output,
        false,
        &["--direct_mode".to_string()],
    ));
    let error = format!("{:#}", net_run::run(&settings).unwrap_err());
    assert!(error.contains("Result_0/logits.raw"), "{error}");
    let recorded = record(&output);
    assert_eq!(recorded["mode"], "direct");
    assert_eq!(recorded["inferences"], 0);
    assert_eq!(recorded["skel_calls"], 8, "open, version, configure, load, describe, run_job, last_error, close");
    assert!(recorded["error"].as_str().unwrap().contains("Result_0/logits.raw"), "{recorded}");
}

#[test]
fn a_run_a_job_cannot_carry_is_refused_naming_the_path_at_fault() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let binary = common::fixture("kws_conv").join("kws_conv_qnn.bin");
    // An output directory longer than the 511 bytes a job's path may have.
    let mut output = work.path().to_path_buf();
    while output.as_os_str().len() <= 511 {
        output.push("d".repeat(100));
    }
    let extra = ["--direct_mode".to_string()];
    let settings = common::settings(common::net_run_args(&binary, &long_list(work.path(), 1), &output, false, &extra));
    let error = format!("{:#}", net_run::run(&settings).unwrap_err());
    let expected = format!("the output directory {}: a path or name is longer than 511 bytes", output.display());
    assert!(error.contains(&expected), "{error}");
}

#[test]
fn num_inferences_cycles_through_the_list_and_keep_num_outputs_keeps_the_first_results() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let binary = common::fixture("kws_conv").join("kws_conv_qnn.bin");
    // A 4-line list: kws_conv's float inputs 0, 1, 2, 0.
    let list = long_list(work.path(), 4);
    let reference = common::fixture("kws_conv").join("reference/float");
    for direct in [false, true] {
        let output = work.path().join(format!("cycled-{direct}"));
        let mut extra = vec!["--num_inferences=10".to_string()];
        if direct {
            extra.push("--direct_mode".to_string());
        }
        net_run::run(&common::settings(common::net_run_args(&binary, &list, &output, false, &extra))).unwrap();
        let written = common::result_files(&output);
        assert_eq!(written.len(), 10, "direct {direct}: {written:?}");
        for result in 0..10 {
            let file = format!("Result_{result}/logits.raw");
            let wanted = reference.join(format!("Result_{}/logits.raw", (result % 4) % 3));
            assert!(std::fs::read(output.join(&file)).unwrap() == std::fs::read(wanted).unwrap(), "{file}");
        }
        assert_eq!(record(&output)["inferences"], 10);

        let kept = work.path().join(format!("kept-{direct}"));
        extra.push("--keep_num_outputs=3".to_string());
        net_run::run(&common::settings(common::net_run_args(&binary, &list, &kept, false, &extra))).unwrap();
        let expected: Vec<_> = (0..3).map(|i| std::path::PathBuf::from(format!("Result_{i}/logits.raw"))).collect();
        assert_eq!(common::result_files(&kept), expected, "direct {direct}");
        assert_eq!(record(&kept)["inferences"], 10, "every inference runs; only the first 3 are saved");
    }
}

#[test]
fn direct_mode_records_each_inferences_in_memory_span_around_its_execute_and_its_file_io_apart() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let binary = common::fixture("kws_conv").join("kws_conv_qnn.bin");
    let list = long_list(work.path(), 3);
    for (mode, native) in [("float", false), ("native", true)] {
        let output = work.path().join(format!("spans-{mode}"));
        let extra = ["--direct_mode".to_string(), "--num_inferences=12".to_string()];
        let list = if native { common::absolute_input_list("kws_conv", "native", work.path()) } else { list.clone() };
        net_run::run(&common::settings(common::net_run_args(&binary, &list, &output, native, &extra))).unwrap();
        let recorded = record(&output);
        let times = |key: &str| -> Vec<u64> {
            recorded[key]
                .as_array()
                .unwrap_or_else(|| panic!("{mode}: no {key}"))
                .iter()
                .map(|t| t.as_u64().unwrap())
                .collect()
        };
        let (execute, in_memory, file_io) =
            (times("dsp_execute_us"), times("dsp_in_memory_us"), times("dsp_file_io_us"));
        assert_eq!((execute.len(), in_memory.len(), file_io.len()), (12, 12, 12), "{mode}: one of each per inference");
        for (inference, (span, executed)) in in_memory.iter().zip(&execute).enumerate() {
            assert!(*executed > 0, "{mode}: inference {inference} executed in no time");
            assert!(span >= executed, "{mode}: inference {inference}: span {span} us < execute {executed} us");
        }
        // The skel's spans file beside the results: two u32 a inference, the same figures as the record.
        let spans = std::fs::read(output.join("lpai_dsp_spans_us.bin")).unwrap();
        assert_eq!(spans.len(), 12 * 8);
        let words: Vec<u64> =
            spans.chunks_exact(4).map(|four| u64::from(u32::from_le_bytes(four.try_into().unwrap()))).collect();
        let pairs: Vec<(u64, u64)> = words.chunks_exact(2).map(|pair| (pair[0], pair[1])).collect();
        assert_eq!(pairs, in_memory.iter().copied().zip(file_io.iter().copied()).collect::<Vec<_>>(), "{mode}");
        // x86 libQnnHtp executes synchronously (graphExecuteAsync: NOT_SUPPORTED), so no I/O overlaps an execution.
        assert_eq!(recorded["dsp_file_io_hidden_us"], 0, "{mode}");
    }
    // Traditional mode has no in-memory span of the skel's: its lists stay empty.
    let output = work.path().join("spans-traditional");
    net_run::run(&common::settings(common::net_run_args(&binary, &list, &output, false, &[]))).unwrap();
    let recorded = record(&output);
    assert_eq!(recorded["dsp_in_memory_us"], serde_json::json!([]));
    assert_eq!(recorded["dsp_file_io_us"], serde_json::json!([]));
    assert!(recorded.get("dsp_file_io_hidden_us").is_none(), "traditional mode hides no file I/O: {recorded}");
}
