//! The profiling report end to end, on the kws_conv fixture with the real libQnnHtp.so through the local transport:
//! every record a run writes (traditional and direct mode, with and without `--profiling_level`, a failed run's)
//! validates against the committed schema `hlos-stub/lpai-net-run/schema/lpai_net_run.schema.json`; a profiled
//! run's Chrome trace is JSON with `traceEvents` on a host and a DSP execute track; `lpai-net-run chart` draws
//! well-formed SVG; the command prints the profile table.

mod common;

use lpai_net_run::net_run;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn schema() -> Value {
    let path = common::root().join("hlos-stub/lpai-net-run/schema/lpai_net_run.schema.json");
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The schema's complaints about `record`, one line each (none: it validates).
fn schema_errors(record: &Value) -> Vec<String> {
    let validator = jsonschema::draft202012::new(&schema()).expect("the committed schema compiles");
    validator.iter_errors(record).map(|error| format!("{}: {error}", error.instance_path())).collect()
}

fn assert_valid(record: &Value, what: &str) {
    let errors = schema_errors(record);
    assert!(errors.is_empty(), "{what}: the record does not match the schema:\n{}\n{record:#}", errors.join("\n"));
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display())))
        .unwrap_or_else(|error| panic!("{} is not JSON: {error}", path.display()))
}

fn record(output: &Path) -> Value {
    read_json(&output.join("lpai_net_run.json"))
}

/// An lpaiParams.conf in `work` setting `fps` (the graph's performance, and so the profile's frame budget).
fn config_with_fps(work: &Path, fps: u32) -> PathBuf {
    let path = work.join(format!("lpaiParams_{fps}.conf"));
    std::fs::write(&path, format!(r#"{{"lpai_graph": {{"execute": {{"fps": {fps}}}}}}}"#)).unwrap();
    path
}

/// Runs kws_conv's float list (`inferences` of them) into `output`, with `extra` flags.
fn run_kws(work: &Path, output: &Path, inferences: u32, extra: &[String]) -> Result<net_run::RunRecord, String> {
    let binary = common::fixture("kws_conv").join("kws_conv_qnn.bin");
    let list = common::absolute_input_list("kws_conv", "float", work);
    let mut flags = vec![format!("--num_inferences={inferences}")];
    flags.extend(extra.iter().cloned());
    net_run::run(&common::settings(common::net_run_args(&binary, &list, output, false, &flags)))
        .map_err(|error| format!("{error:#}"))
}

fn flags(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| item.to_string()).collect()
}

#[test]
fn the_committed_schema_is_a_draft_2020_12_schema_that_catches_drift() {
    let schema = schema();
    if let Err(error) = jsonschema::meta::validate(&schema) {
        panic!("the schema is not a valid JSON Schema: {error}");
    }
    let good = serde_json::json!({
        "mode": "direct", "transport": "local", "inferences": 1, "skel_calls": 7, "dsp_execute_us": [5],
        "host_round_trip_us": [], "load_us": 9, "dsp_load_us": 8, "dsp_finalize_us": 1, "arena_high_water_bytes": 4,
        "lpai_memory": {"scratch_bytes": 128, "scratch_type": "tcm", "persistent_bytes": 64, "persistent_type": "ddr"}
    });
    assert_valid(&good, "a plain direct record");
    let mut unknown_memory = good.clone();
    unknown_memory["lpai_memory"]["scratch_type"] = "sram".into();
    assert!(!schema_errors(&unknown_memory).is_empty(), "a memory type the settings do not name is refused");
    let mut extra = good.clone();
    extra["renamed_field"] = 1.into();
    assert!(schema_errors(&extra).iter().any(|error| error.contains("renamed_field")), "{:?}", schema_errors(&extra));
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("skel_calls");
    assert!(schema_errors(&missing).iter().any(|error| error.contains("skel_calls")), "{:?}", schema_errors(&missing));
    let mut profile_drift = good.clone();
    profile_drift["profile"] = serde_json::json!({"percentile_method": "nearest-rank", "load": {"host_us": 9},
                                                 "events": [], "p95": 3});
    assert!(!schema_errors(&profile_drift).is_empty(), "an unknown key in the profile is refused");
    let mut wrong_unit = profile_drift.clone();
    wrong_unit["profile"].as_object_mut().unwrap().remove("p95");
    assert_valid(&wrong_unit, "a minimal profile");
    wrong_unit["profile"]["events"] = serde_json::json!([{"identifier": "x", "value": 1, "unit": "seconds",
                                                          "unit_code": 1, "event_type": 400, "depth": 0}]);
    assert!(!schema_errors(&wrong_unit).is_empty(), "an event unit the schema does not name is refused");
}

#[test]
fn every_record_a_run_writes_validates_against_the_schema() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let config = config_with_fps(work.path(), 50);
    let profiled = ["--profiling_level=basic".to_string(), format!("--config_file={}", config.display())];
    for direct in [false, true] {
        let mode = if direct { "direct" } else { "traditional" };
        let mode_flags = if direct { flags(&["--direct_mode"]) } else { Vec::new() };
        // Without profiling: no profile in the record, no trace.
        let plain = work.path().join(format!("{mode}-plain"));
        run_kws(work.path(), &plain, 4, &mode_flags).unwrap();
        let recorded = record(&plain);
        assert_valid(&recorded, &format!("{mode}, not profiled"));
        assert!(recorded.get("profile").is_none(), "{recorded:#}");
        assert!(!plain.join("profile.trace.json").exists());

        // Profiled, with the config file's fps: the profile with its budget.
        let output = work.path().join(format!("{mode}-profiled"));
        let extra: Vec<String> = mode_flags.iter().chain(&profiled).cloned().collect();
        run_kws(work.path(), &output, 5, &extra).unwrap();
        let recorded = record(&output);
        assert_valid(&recorded, &format!("{mode}, profiled"));
        let profile = &recorded["profile"];
        assert_eq!(profile["percentile_method"], "nearest-rank");
        let mut times: Vec<u64> =
            recorded["dsp_execute_us"].as_array().unwrap().iter().map(|time| time.as_u64().unwrap()).collect();
        times.sort_unstable();
        // Five times: p50 is the third (rank ⌈2.5⌉), p90 and p99 the fifth.
        let stats = &profile["dsp_execute_us"];
        assert_eq!(
            [&stats["count"], &stats["min"], &stats["p50"], &stats["p90"], &stats["max"]],
            [5, times[0], times[2], times[4], times[4]]
        );
        assert_eq!(profile["budget"]["fps"], 50);
        assert_eq!(profile["budget"]["budget_us"], 20000.0);
        let over = times.iter().filter(|&&time| time > 20000).count();
        assert_eq!(profile["budget"]["dsp_execute"]["over_budget"], over);
        let event = profile["events"].as_array().unwrap().iter().find(|event| event["event_type"] == 400);
        let event = event.unwrap_or_else(|| panic!("no EXECUTE event: {profile:#}"));
        assert_eq!(
            (&event["unit"], &event["event_type_name"]),
            (&"us".into(), &"QNN_PROFILE_EVENTTYPE_EXECUTE".into())
        );
        if direct {
            assert!(profile.get("ipc").is_none() && profile.get("host_round_trip_us").is_none(), "{profile:#}");
            assert_eq!(profile["load"]["dsp_us"], recorded["dsp_load_us"]);
        } else {
            let round_trips = recorded["host_round_trip_us"].as_array().unwrap();
            let executes = recorded["dsp_execute_us"].as_array().unwrap();
            let expected: Vec<i64> = round_trips
                .iter()
                .zip(executes)
                .map(|(trip, execute)| trip.as_i64().unwrap() - execute.as_i64().unwrap())
                .collect();
            let ipc: Vec<i64> =
                profile["ipc"]["per_inference_us"].as_array().unwrap().iter().map(|us| us.as_i64().unwrap()).collect();
            assert_eq!(ipc, expected);
            assert_eq!(profile["host_round_trip_us"]["count"], 5);
            assert_eq!(
                profile["budget"]["host_round_trip"]["over_budget_share"].as_f64().map(|share| share <= 1.0),
                Some(true)
            );
        }
        assert_trace(&output.join("profile.trace.json"), direct, 5);
    }
}

/// The trace parses as JSON with `traceEvents`: named host and DSP execute tracks, and `inferences` DSP execute
/// spans (and as many host round trips in traditional mode) laid after the load.
fn assert_trace(path: &Path, direct: bool, inferences: usize) {
    let trace = read_json(path);
    let events = trace["traceEvents"].as_array().unwrap_or_else(|| panic!("{}: no traceEvents array", path.display()));
    let track = |name: &str| {
        let named = events.iter().find(|event| event["ph"] == "M" && event["args"]["name"] == name);
        named.unwrap_or_else(|| panic!("{}: no track named {name}", path.display()))["tid"].clone()
    };
    let (host, dsp) = (track("host"), track("DSP execute"));
    assert_ne!(host, dsp);
    let spans = |tid: &Value| {
        events.iter().filter(|event| event["ph"] == "X" && &event["tid"] == tid).cloned().collect::<Vec<Value>>()
    };
    let executes = spans(&dsp);
    assert_eq!(executes.len(), inferences, "{trace:#}");
    let host_spans = spans(&host);
    assert_eq!(host_spans[0]["name"], "load");
    assert_eq!(host_spans.len(), if direct { 1 } else { 1 + inferences }, "{trace:#}");
    for event in events.iter().filter(|event| event["ph"] == "X") {
        assert!(event["ts"].as_f64().is_some() && event["dur"].as_u64().is_some(), "{event}");
    }
    let load_end = host_spans[0]["dur"].as_f64().unwrap();
    assert!(executes.iter().all(|execute| execute["ts"].as_f64().unwrap() >= load_end), "{trace:#}");
}

#[test]
fn a_failed_runs_record_validates_with_its_error_and_profile() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    for direct in [false, true] {
        let output = work.path().join(format!("failed-{direct}"));
        // The first result file's name is taken by a directory: the run stops there.
        std::fs::create_dir_all(output.join("Result_0/logits.raw")).unwrap();
        let mut extra = flags(&["--profiling_level=basic"]);
        if direct {
            extra.push("--direct_mode".to_string());
        }
        let error = run_kws(work.path(), &output, 2, &extra).unwrap_err();
        assert!(error.contains("Result_0/logits.raw"), "{error}");
        let recorded = record(&output);
        assert_valid(&recorded, &format!("failed, direct {direct}"));
        assert!(recorded["error"].as_str().unwrap().contains("Result_0/logits.raw"), "{recorded:#}");
        assert_eq!(recorded["profile"]["percentile_method"], "nearest-rank");
        // The trace of what ran is written too.
        let trace = read_json(&output.join("profile.trace.json"));
        assert!(trace["traceEvents"].is_array());
    }
}

fn lpai_net_run(args: &[String]) -> std::process::Output {
    let exe = common::artifact("target/release/lpai-net-run", "cargo build --release -p lpai-net-run");
    Command::new(exe).args(args).output().unwrap()
}

#[test]
fn the_command_prints_the_table_and_charts_direct_against_traditional() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let runs = work.path().join("runs");
    let binary = common::fixture("kws_conv").join("kws_conv_qnn.bin");
    let list = common::absolute_input_list("kws_conv", "float", work.path());
    let config = config_with_fps(work.path(), 20);
    for mode in ["direct", "traditional"] {
        let mut extra = flags(&["--profiling_level=basic", "--num_inferences=6"]);
        extra.push(format!("--config_file={}", config.display()));
        if mode == "direct" {
            extra.push("--direct_mode".to_string());
        }
        let args = common::net_run_args(&binary, &list, &runs.join(mode), false, &extra);
        let output = lpai_net_run(&args[1..]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{mode}: {}", String::from_utf8_lossy(&output.stderr));
        let header = format!("profile (6 inference(s), {mode} mode, microseconds, nearest-rank percentiles):");
        assert!(stdout.lines().any(|line| line == header), "{stdout}");
        let dsp_row = stdout.lines().find(|line| line.starts_with("  DSP execute ")).expect("a DSP execute row");
        assert_eq!(dsp_row.split_whitespace().nth(2), Some("6"), "{dsp_row}");
        assert!(stdout.contains("  budget: 50000.0 us a frame at 20 fps"), "{stdout}");
        assert_eq!(stdout.contains("  IPC share of the round trips: "), mode == "traditional", "{stdout}");
    }

    let output = lpai_net_run(&flags(&["chart", &runs.display().to_string()]));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let svg_path = runs.join("latency.svg");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("lpai-net-run: latency chart written to {}\n", svg_path.display())
    );
    let text = std::fs::read_to_string(&svg_path).unwrap();
    let document = roxmltree::Document::parse(&text).unwrap_or_else(|error| panic!("not well-formed XML: {error}"));
    assert_eq!(document.root_element().tag_name().name(), "svg");
    let series: Vec<String> = document
        .descendants()
        .filter(|node| node.attribute("class") == Some("series"))
        .map(|node| {
            node.children()
                .find(|child| child.has_tag_name("title"))
                .and_then(|title| title.text())
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert_eq!(
        series,
        ["direct, local: DSP execute", "traditional, local: DSP execute", "traditional, local: host round trip"]
    );
    let legend: Vec<&str> = document
        .descendants()
        .filter(|node| node.attribute("class") == Some("legend"))
        .filter_map(|node| node.text())
        .collect();
    assert_eq!(legend.len(), 3, "{legend:?}");
    assert!(legend.iter().all(|entry| entry.contains(": n 6, p50 ")), "{legend:?}");
    // The 20 fps budget: a line on the axis, or (far beyond the times) named in the legend.
    assert!(text.contains("budget 50000 us (20 fps)"), "{text}");

    // A directory without a record is refused, naming it, and nothing is written.
    let empty = work.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let output = lpai_net_run(&flags(&["chart", &empty.display().to_string()]));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.starts_with("lpai-net-run: error: no lpai_net_run.json in ")
            && stderr.contains(&empty.display().to_string()),
        "{stderr}"
    );
    assert!(!empty.join("latency.svg").exists());
}
