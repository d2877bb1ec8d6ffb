//! The QNN profile log and CSV written through the real libQnnSystem (the one scripts/setup.sh installs): both
//! files whole under the next free number, the log made of length-prefixed records that carry the header and the
//! events, and a refusal of the library leaving no file behind.

use lpai_direct::qnn::error::error_name;
use lpai_direct_stub::stub::ProfileEvent;
use lpai_net_run::metadata::HostSystemLibrary;
use lpai_net_run::profile_files::{self, write_whole_via};
use lpai_net_run::profile_log::{self, Context, Readout};
use std::path::{Path, PathBuf};

fn system_library() -> HostSystemLibrary {
    let recorded = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/qnn-lib-dir");
    let text = std::fs::read_to_string(&recorded).expect("scripts/setup.sh records the QNN library directory");
    HostSystemLibrary::load(&PathBuf::from(text.trim()).join("libQnnSystem.so")).unwrap()
}

fn events() -> Vec<ProfileEvent> {
    let event = |event_type, unit, value, depth, identifier: &str| ProfileEvent {
        event_type,
        unit,
        value,
        depth,
        identifier: identifier.into(),
    };
    vec![
        event(3003, 3, 274_934, 0, "Accelerator (execute) time (cycles)"),
        event(404, 3, 93_007, 1, "conv1:OpId_23 (cycles)"),
        event(400, 1, 2354, 0, "QNN (execute) time"),
        event(3010, 1, 12, 0, "after the last call"),
    ]
}

/// The events as the readouts of two calls: the execute's (its start and stop times), then the event after it.
fn readouts(events: &[ProfileEvent]) -> Vec<Readout> {
    let (execute, after) = events.split_at(events.len().min(3));
    let mut readouts = vec![Readout { events: execute.to_vec(), started_us: 1_000, stopped_us: 3_354 }];
    if !after.is_empty() {
        readouts.push(Readout { events: after.to_vec(), started_us: 4_000, stopped_us: 4_012 });
    }
    readouts
}

/// The lengths of the log's records: each a little-endian u32 length and that many bytes, to the end exactly.
fn record_lengths(log: &[u8]) -> Vec<usize> {
    let (mut lengths, mut offset) = (Vec::new(), 0usize);
    while offset < log.len() {
        let prefix: [u8; 4] = log[offset..offset + 4].try_into().unwrap();
        let length = u32::from_le_bytes(prefix) as usize;
        lengths.push(length);
        offset += 4 + length;
    }
    assert_eq!(offset, log.len(), "the records end where the file does");
    lengths
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle.as_bytes())
}

#[test]
fn both_files_are_written_whole_under_the_next_free_number() {
    let system = system_library();
    let dir = tempfile::tempdir().unwrap();
    let context = Context { graph_name: "kws_graph" };
    let first = profile_files::write(dir.path(), &system, &readouts(&events()), &context);
    assert_eq!(
        (first.log.as_deref(), first.csv.as_deref(), first.index),
        (Some("qnn-profiling-data_0.log"), Some("qnn-profiling-data_0.csv"), 0)
    );
    let log = std::fs::read(dir.path().join("qnn-profiling-data_0.log")).unwrap();
    // Two calls' records (the execute, and the event after it), the header in the first.
    assert_eq!(record_lengths(&log).len(), 2, "{log:?}");
    for text in ["lpai-net-run", env!("CARGO_PKG_VERSION"), "2.32.0", "kws_graph", "conv1:OpId_23 (cycles)"] {
        assert!(contains(&log, text), "the log carries {text:?}");
    }
    let csv = std::fs::read_to_string(dir.path().join("qnn-profiling-data_0.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert_eq!(csv.lines().nth(2), Some("0,NODE,93007,CYCLES,BACKEND,SUB-EVENT,conv1:OpId_23 (cycles)"));

    // A second run in the same directory keeps the first's files.
    let second = profile_files::write(dir.path(), &system, &readouts(&events()[..1]), &context);
    assert_eq!((second.log.as_deref(), second.index), (Some("qnn-profiling-data_1.log"), 1));
    assert_eq!(std::fs::read(dir.path().join("qnn-profiling-data_0.log")).unwrap(), log);
    let again = std::fs::read(dir.path().join("qnn-profiling-data_1.log")).unwrap();
    assert_eq!(record_lengths(&again).len(), 1, "a new file: its own header, one record");
    assert!(contains(&again, "lpai-net-run"));
    let mut names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "qnn-profiling-data_0.csv",
            "qnn-profiling-data_0.log",
            "qnn-profiling-data_1.csv",
            "qnn-profiling-data_1.log"
        ]
    );
}

#[test]
fn a_target_the_library_refuses_leaves_no_file() {
    let system = system_library();
    let api = system.profile_api().expect("the installed libQnnSystem has the System Profile API");
    let dir = tempfile::tempdir().unwrap();
    let context = Context { graph_name: "g" };
    // An empty file name: libQnnSystem refuses the target.
    let refused = write_whole_via(dir.path(), "x.log", |directory, _| {
        profile_log::write(&api, directory, "", &context, &readouts(&events()))
    });
    let error = refused.unwrap_err();
    assert!(error.starts_with("systemProfileCreateSerializationTarget answered "), "{error}");
    assert!(error.contains(error_name(1000)), "{error}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no file is left");
}
