//! lpai-net-run's job on the real libQnnHtp.so: every fixture, every input line, float and native mode, equals
//! ONNX Runtime's QNN execution provider bit for bit; several contexts can be loaded at once; an output-names
//! line writes only the outputs it names; profiling asked for by flag or config file is reported.

mod common;

use lpai_net_run::net_run;

fn run_fixture(name: &str, mode: &str, output: &std::path::Path, work: &std::path::Path) -> net_run::RunRecord {
    let directory = common::fixture(name);
    let list = common::absolute_input_list(name, mode, work);
    let binary = directory.join(format!("{name}_qnn.bin"));
    let args = common::net_run_args(&binary, &list, output, mode == "native", &[]);
    net_run::run(&common::settings(args)).unwrap_or_else(|error| panic!("{name} {mode}: {error:#}"))
}

#[test]
fn every_fixture_equals_ort_bit_for_bit_in_float_and_native_mode() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    for name in common::FIXTURES {
        for mode in ["float", "native"] {
            let output = work.path().join(format!("{name}-{mode}"));
            let summary = run_fixture(name, mode, &output, work.path());
            let reference = common::fixture(name).join("reference").join(mode);
            let expected = common::files_below(&reference);
            assert_eq!(common::result_files(&output), expected, "{name} {mode}: different result files");
            assert_eq!(summary.times.dsp_execute_us.len(), 3, "{name} {mode}: one execution per input line");
            for file in &expected {
                let ours = std::fs::read(output.join(file)).unwrap();
                let ort = std::fs::read(reference.join(file)).unwrap();
                assert!(ours == ort, "{name} {mode}: {} differs from ORT on the QNN EP", file.display());
            }
            assert!(
                summary.arena_high_water_bytes
                    > std::fs::metadata(common::fixture(name).join(format!("{name}_qnn.bin"))).unwrap().len() as usize
            );
        }
    }
}

#[test]
fn two_contexts_live_at_once_on_one_backend() {
    use lpai_direct_skel::platform::VendorCalls;
    use lpai_direct_skel::runtime::{Arena, BackendOptions, Binary, Context, Libraries, LoadRequest};
    let _guard = common::qnn_lock();
    let qnn = common::qnn_lib_dir();
    let c_path = |p: std::path::PathBuf| std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    let (backend, system) = (c_path(qnn.join("libQnnHtp.so")), c_path(qnn.join("libQnnSystem.so")));
    let libraries = Libraries::open(&backend, Some(&system), &BackendOptions::default()).unwrap();
    let mut memory = vec![0u8; 4 << 20];
    let arena = Arena::new(&mut memory);
    let kws = std::fs::read(common::fixture("kws_conv/kws_conv_qnn.bin")).unwrap();
    let u16_path = c_path(common::fixture("u16_act/u16_act_qnn.bin"));
    let mut first =
        Context::load(&VendorCalls::lock(), &libraries, &arena, &LoadRequest::new(Binary::Copy(&kws))).unwrap();
    let mut second =
        Context::load(&VendorCalls::lock(), &libraries, &arena, &LoadRequest::new(Binary::File(&u16_path))).unwrap();
    for (context, fixture) in [(&mut first, "kws_conv"), (&mut second, "u16_act")] {
        let graph = context.graph_mut(0).unwrap();
        let input = std::fs::read(common::fixture(fixture).join("inputs/native/1_0.raw")).unwrap();
        graph.write_input(0, &input).unwrap();
        assert_eq!(graph.execute().unwrap().attempts, 1);
        let name = graph.output(0).unwrap().name.to_string();
        let reference = std::fs::read(common::fixture(fixture).join(format!("reference/native/Result_1/{name}.raw")));
        assert_eq!(graph.output_bytes(0).unwrap(), reference.unwrap().as_slice(), "{fixture}");
    }
    drop(first);
    let graph = second.graph_mut(0).unwrap();
    assert!(graph.execute().is_ok(), "the second context still runs after the first is freed");
}

#[test]
fn basic_profiling_reports_the_execute_time() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let directory = common::fixture("kws_conv");
    let list = common::absolute_input_list("kws_conv", "float", work.path());
    let binary = directory.join("kws_conv_qnn.bin");
    let extra = ["--profiling_level=basic".to_string()];
    let settings = common::settings(common::net_run_args(&binary, &list, &work.path().join("out"), false, &extra));
    let summary = net_run::run(&settings).unwrap();
    let events = &summary.profile.as_ref().expect("a profile").events;
    let execute = events.iter().find(|event| event.event_type == 400).expect("an EXECUTE event");
    assert_eq!(execute.unit_code, 1, "QNN reports execute time in microseconds");
    assert!(execute.value > 0);
}

#[test]
fn both_graphs_of_a_two_graph_context_equal_ort() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let fixture = common::fixture("two_graphs");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture.join("manifest.json")).unwrap()).unwrap();
    let graphs = manifest["graphs"].as_array().expect("a graphs list");
    assert_eq!(graphs.len(), 2);
    for (index, graph) in graphs.iter().enumerate() {
        let name = graph["graph_name"].as_str().unwrap();
        let directory = fixture.join("graphs").join(index.to_string());
        for mode in ["float", "native"] {
            let list = common::absolute_list_in(&directory, mode, work.path(), &format!("graph{index}"));
            let output = work.path().join(format!("graph{index}-{mode}"));
            let binary = fixture.join("two_graphs_qnn.bin");
            let extra = [format!("--graph_name={name}")];
            let args = common::net_run_args(&binary, &list, &output, mode == "native", &extra);
            let summary = net_run::run(&common::settings(args)).unwrap();
            assert_eq!(summary.graph_names, name);
            let reference = directory.join("reference").join(mode);
            let expected = common::files_below(&reference);
            assert_eq!(common::result_files(&output), expected, "graph {index} {mode}");
            for file in &expected {
                let same = std::fs::read(output.join(file)).unwrap() == std::fs::read(reference.join(file)).unwrap();
                assert!(same, "graph {index} {mode}: {} differs from ORT", file.display());
            }
        }
    }
}

#[test]
fn an_output_names_line_writes_only_the_outputs_it_names() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let directory = common::fixture("multi_io");
    let list = common::absolute_input_list("multi_io", "float", work.path());
    let lines = std::fs::read_to_string(&list).unwrap();
    std::fs::write(&list, format!("#vec_out\n{lines}# a later comment\n")).unwrap();
    let output = work.path().join("out");
    let binary = directory.join("multi_io_qnn.bin");
    let settings = common::settings(common::net_run_args(&binary, &list, &output, false, &[]));
    let summary = net_run::run(&settings).unwrap();
    assert_eq!(summary.times.dsp_execute_us.len(), 3);
    let written = common::result_files(&output);
    let expected: Vec<_> = (0..3).map(|i| std::path::PathBuf::from(format!("Result_{i}/vec_out.raw"))).collect();
    assert_eq!(written, expected);
    for file in &expected {
        let reference = std::fs::read(directory.join("reference/float").join(file)).unwrap();
        assert!(std::fs::read(output.join(file)).unwrap() == reference, "{} differs from ORT", file.display());
    }
}

#[test]
fn profiling_asked_for_by_the_config_file_is_reported() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let directory = common::fixture("kws_conv");
    let list = common::absolute_input_list("kws_conv", "float", work.path());
    let config = work.path().join("lpaiParams.conf");
    std::fs::write(&config, r#"{"lpai_profile": {"level": "basic"}}"#).unwrap();
    let binary = directory.join("kws_conv_qnn.bin");
    let extra = [format!("--config_file={}", config.display())];
    let settings = common::settings(common::net_run_args(&binary, &list, &work.path().join("out"), false, &extra));
    let summary = net_run::run(&settings).unwrap();
    let events = &summary.profile.as_ref().expect("a profile").events;
    assert!(events.iter().any(|event| event.event_type == 400), "no EXECUTE event: {events:?}");
}
