//! `OUTPUT_DIR/profile.trace.json`: a profiled run's times as a Chrome trace (the JSON object form of the trace
//! event format), which Perfetto and chrome://tracing open. Written by a run that profiles, beside its record.
//!
//! One process, `lpai-net-run (<mode>, <transport>)`, with a track per clock: `host` (the load call as the host saw
//! it, and in traditional mode each inference's round trip), `DSP execute` (each inference's execute on the DSP
//! clock) and, in direct mode, `DSP load` (the load and its graphFinalize on the DSP clock). Complete events
//! (`ph` `X`), `ts` and `dur` in microseconds.
//!
//! The record holds durations, not start times, so the timeline is reconstructed: the load starts at 0 and the
//! inferences follow it end to end, with no gap between them (the host's own work between calls, reading inputs and
//! writing results, is left out). A span on the DSP's clock that a host span carried (a traditional inference's
//! execute, the direct mode's DSP load) is centred in that host span, since the record does not say how the
//! overhead splits between the way in and the way out; graphFinalize is drawn at the end of the DSP load, whose
//! last step it is. In direct mode the host made one call for the whole list, whose time is not recorded: the DSP
//! executes follow the load end to end, and the host track holds the load only.

use crate::run_record::RunRecord;
use crate::whole;
use anyhow::{Context, Result};
use lpai_direct_stub::stub::Named;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The trace's file name in the output directory.
pub const FILE_NAME: &str = "profile.trace.json";

/// The process id of every event.
const PROCESS: u32 = 1;
/// The host's track.
const HOST: u32 = 1;
/// The DSP execute times' track.
const DSP_EXECUTE: u32 = 2;
/// The DSP load's track (direct mode).
const DSP_LOAD: u32 = 3;

/// A complete event: `name` on track `thread`, from `start` for `duration` microseconds, with `args`.
fn span(name: &str, thread: u32, start: f64, duration: u64, args: Value) -> Value {
    json!({"name": name, "cat": "lpai-net-run", "ph": "X", "ts": start, "dur": duration, "pid": PROCESS,
           "tid": thread, "args": args})
}

/// A metadata event naming the process (`thread` `None`) or a thread.
fn name_of(thread: Option<u32>, name: &str) -> Value {
    match thread {
        None => json!({"name": "process_name", "ph": "M", "pid": PROCESS, "tid": 0, "args": {"name": name}}),
        Some(thread) => {
            json!({"name": "thread_name", "ph": "M", "pid": PROCESS, "tid": thread, "args": {"name": name}})
        }
    }
}

/// Where a span of `inner` microseconds starts when centred in one of `outer` starting at `start` (at `start`
/// when it is the longer one).
fn centred(start: f64, outer: u64, inner: u64) -> f64 {
    start + outer.saturating_sub(inner) as f64 / 2.0
}

/// The trace of `record`, as the module documentation lays it out.
pub fn document(record: &RunRecord) -> Value {
    let times = &record.times;
    let mut events = vec![
        name_of(None, &format!("lpai-net-run ({}, {})", record.mode.name(), record.transport.name())),
        name_of(Some(HOST), "host"),
        name_of(Some(DSP_EXECUTE), "DSP execute"),
        span("load", HOST, 0.0, times.load_us, json!({"load_us": times.load_us})),
    ];
    if let Some(dsp_load) = times.dsp_load_us {
        events.push(name_of(Some(DSP_LOAD), "DSP load"));
        let start = centred(0.0, times.load_us, dsp_load);
        events.push(span("load (DSP)", DSP_LOAD, start, dsp_load, json!({"dsp_load_us": dsp_load})));
        if let Some(finalize) = times.dsp_finalize_us {
            let finalize_start = start + dsp_load.saturating_sub(finalize) as f64;
            let args = json!({"dsp_finalize_us": finalize});
            events.push(span("graphFinalize", DSP_LOAD, finalize_start, finalize, args));
        }
    }
    let mut at = times.load_us as f64;
    if times.host_round_trip_us.is_empty() {
        for (index, &execute) in times.dsp_execute_us.iter().enumerate() {
            let args = json!({"inference": index, "dsp_execute_us": execute});
            events.push(span(&format!("execute {index}"), DSP_EXECUTE, at, execute, args));
            at += execute as f64;
        }
    } else {
        for (index, &round_trip) in times.host_round_trip_us.iter().enumerate() {
            let execute = times.dsp_execute_us.get(index).copied();
            let ipc = execute.map(|execute| i128::from(round_trip) - i128::from(execute));
            let args = json!({"inference": index, "host_round_trip_us": round_trip, "dsp_execute_us": execute,
                              "ipc_us": ipc.and_then(|ipc| i64::try_from(ipc).ok())});
            events.push(span(&format!("inference {index}"), HOST, at, round_trip, args));
            if let Some(execute) = execute {
                let args = json!({"inference": index, "dsp_execute_us": execute});
                events.push(span(
                    &format!("execute {index}"),
                    DSP_EXECUTE,
                    centred(at, round_trip, execute),
                    execute,
                    args,
                ));
            }
            at += round_trip as f64;
        }
    }
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "mode": record.mode.name(),
            "transport": record.transport.name(),
            "inferences": record.inferences,
            "timeline": "reconstructed from the record's durations, laid end to end",
        },
    })
}

/// Writes the trace of `record` into `output_dir`, whole or not at all, when the record has a profile; answers
/// the file written.
pub fn write_if_profiled(output_dir: &Path, record: &RunRecord) -> Result<Option<PathBuf>> {
    if record.profile.is_none() {
        return Ok(None);
    }
    std::fs::create_dir_all(output_dir).with_context(|| format!("cannot create {}", output_dir.display()))?;
    let path = output_dir.join(FILE_NAME);
    let text = serde_json::to_string(&document(record))?;
    whole::write(&path, text.as_bytes())?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_record::Mode;
    use crate::times::Times;
    use lpai_direct_stub::stub::TransportKind;

    /// Each complete event as (track, name, ts, dur).
    fn spans(trace: &Value) -> Vec<(u64, String, f64, u64)> {
        let events = trace["traceEvents"].as_array().unwrap();
        events
            .iter()
            .filter(|event| event["ph"] == "X")
            .map(|event| {
                let name = event["name"].as_str().unwrap().to_string();
                (event["tid"].as_u64().unwrap(), name, event["ts"].as_f64().unwrap(), event["dur"].as_u64().unwrap())
            })
            .collect()
    }

    fn track_names(trace: &Value) -> Vec<(u64, String)> {
        let events = trace["traceEvents"].as_array().unwrap();
        let named = events.iter().filter(|event| event["ph"] == "M");
        named
            .map(|event| (event["tid"].as_u64().unwrap(), event["args"]["name"].as_str().unwrap().to_string()))
            .collect()
    }

    #[test]
    fn traditional_inferences_follow_the_load_with_each_execute_centred_in_its_round_trip() {
        let mut record = RunRecord::new(Mode::Traditional, TransportKind::Local);
        record.inferences = 2;
        record.times = Times {
            dsp_execute_us: vec![100, 80],
            host_round_trip_us: vec![150, 90],
            load_us: 1000,
            ..Times::default()
        };
        let trace = document(&record);
        assert_eq!(
            spans(&trace),
            [
                (1, "load".to_string(), 0.0, 1000),
                (1, "inference 0".to_string(), 1000.0, 150),
                (2, "execute 0".to_string(), 1025.0, 100),
                (1, "inference 1".to_string(), 1150.0, 90),
                (2, "execute 1".to_string(), 1155.0, 80),
            ]
        );
        let names = track_names(&trace);
        assert_eq!(
            names,
            [(0, "lpai-net-run (traditional, local)".into()), (1, "host".into()), (2, "DSP execute".into())]
        );
        assert_eq!(trace["displayTimeUnit"], "ms");
        assert_eq!(trace["traceEvents"][4]["args"]["ipc_us"], 50);
    }

    #[test]
    fn direct_executes_follow_the_load_and_the_dsp_load_holds_its_finalize_at_its_end() {
        let mut record = RunRecord::new(Mode::Direct, TransportKind::Local);
        record.inferences = 3;
        record.times = Times {
            dsp_execute_us: vec![10, 20, 30],
            load_us: 500,
            dsp_load_us: Some(400),
            dsp_finalize_us: Some(100),
            ..Times::default()
        };
        let trace = document(&record);
        assert_eq!(
            spans(&trace),
            [
                (1, "load".to_string(), 0.0, 500),
                (3, "load (DSP)".to_string(), 50.0, 400),
                (3, "graphFinalize".to_string(), 350.0, 100),
                (2, "execute 0".to_string(), 500.0, 10),
                (2, "execute 1".to_string(), 510.0, 20),
                (2, "execute 2".to_string(), 530.0, 30),
            ]
        );
        assert!(track_names(&trace).contains(&(3, "DSP load".into())));
    }

    #[test]
    fn only_a_profiled_record_writes_a_trace() {
        let dir = tempfile::tempdir().unwrap();
        let mut record = RunRecord::new(Mode::Direct, TransportKind::Local);
        record.times.dsp_execute_us = vec![5];
        assert_eq!(write_if_profiled(dir.path(), &record).unwrap(), None);
        assert!(!dir.path().join(FILE_NAME).exists());
        record.profile = Some(crate::profile::of(&record.times, None, &[]));
        let written = write_if_profiled(&dir.path().join("new"), &record).unwrap().unwrap();
        let read: Value = serde_json::from_slice(&std::fs::read(&written).unwrap()).unwrap();
        assert_eq!(read, document(&record));
        let blocked = dir.path().join(FILE_NAME).join("under-a-file");
        std::fs::write(dir.path().join(FILE_NAME), b"").unwrap();
        let message = format!("{:#}", write_if_profiled(&blocked, &record).unwrap_err());
        assert!(message.contains("under-a-file"), "{message}");
    }
}
