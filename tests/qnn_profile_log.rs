//! lpai-net-run's profiles for Qualcomm's tools held to ONNX Runtime's: with `--profiling_level`, lpai-net-run
//! writes `qnn-profiling-data_<n>.log` (libQnnSystem's System Profile API, the log qnn-profile-viewer reads) and
//! `qnn-profiling-data_<n>.csv` (the CSV ORT's QNN EP writes). ORT's QNN EP (`scripts/ort_profile.py`) profiles the
//! same context binary (kws_conv) on the same inputs with the same real libQnnHtp.so and libQnnSystem, at the same
//! level, and writes its own pair. For traditional and direct mode, at basic and detailed profiling:
//! - CSV: ORT's header line byte for byte; seven columns in every row; the same Event Level and Timing Source
//!   values; units among ORT's and the same (Message, Unit, Event Level) kinds; SUB-EVENT rows only under a ROOT row;
//!   every row one event of the log beside it (the same type, value, unit, level and identifier, in order).
//! - Log (read by `common/qnn_log.rs`, which says what the bytes establish): whole records up to the end of the
//!   file; the header in the first record only, with ORT's marker and field 3 table; the same profile data, in
//!   order (method type, graph name, visibility, memory), each with the same events (identifier, type, unit, value
//!   kind, sub-events), their times on one steady clock. What may differ: times and values, the header's wall
//!   clock, the app name and version strings.
//! - The files are whole, no other file of theirs is left in OUTPUT_DIR, and a second run in the same directory
//!   writes `_1` and leaves `_0` byte-identical.
//!
//! The comparison is itself checked: two ORT runs at one level compare equal, basic and detailed do not; the
//! reader refuses a cut or padded log and a field no log has, and reads back a log written through libQnnSystem
//! with chosen values.

mod common;
#[path = "common/qnn_log.rs"]
mod qnn_log;

use qnn_log::{Event, Log};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The header line of ORT's CSV (and, the issue says, of qnn-profile-viewer's CSV output).
const CSV_HEADER: &str = "Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier";
const LEVELS: [&str; 2] = ["basic", "detailed"];

/// One producer's pair of outputs, read into memory.
struct Profile {
    csv: String,
    log: Vec<u8>,
    what: String,
}

impl Profile {
    fn read(csv: &Path, log: &Path, what: String) -> Profile {
        let read =
            |path: &Path| std::fs::read(path).unwrap_or_else(|error| panic!("{what}: {}: {error}", path.display()));
        let csv = String::from_utf8(read(csv)).unwrap_or_else(|_| panic!("{what}: {} is not UTF-8", csv.display()));
        Profile { csv, log: read(log), what }
    }

    fn parsed(&self) -> Log {
        qnn_log::parse(&self.log).unwrap_or_else(|error| panic!("{}: the log is not whole: {error}", self.what))
    }
}

/// ORT's profile of kws_conv at `level` in a new directory below `work`.
fn run_ort(level: &str, work: &Path, label: &str) -> Profile {
    let python = common::root().join(".venv/bin/python");
    assert!(python.exists(), "{} is missing: run scripts/setup.sh first", python.display());
    let output = work.join(label);
    let ran = Command::new(&python)
        .arg(common::root().join("scripts/ort_profile.py"))
        .arg(common::fixture("kws_conv"))
        .arg(level)
        .arg(&output)
        .arg("ort")
        .output()
        .unwrap_or_else(|error| panic!("cannot start {}: {error}", python.display()));
    let said = format!("{}{}", String::from_utf8_lossy(&ran.stdout), String::from_utf8_lossy(&ran.stderr));
    assert!(ran.status.success(), "scripts/ort_profile.py {level} failed ({}):\n{said}", ran.status);
    Profile::read(&output.join("ort.csv"), &output.join("ort_qnn.log"), format!("ORT {level} ({label})"))
}

/// ORT's profile at `level`, run once for the whole test binary (under the QNN lock, which the caller holds).
fn ort(level: &str) -> &'static Profile {
    static RUNS: [OnceLock<Profile>; 2] = [OnceLock::new(), OnceLock::new()];
    let index = LEVELS.iter().position(|known| *known == level).unwrap();
    RUNS[index].get_or_init(|| {
        let work = tempfile::tempdir().unwrap();
        run_ort(level, work.path(), &format!("ort-{level}"))
    })
}

fn net_run_binary() -> PathBuf {
    common::artifact("target/release/lpai-net-run", "cargo build --release -p lpai-net-run")
}

/// Runs lpai-net-run on kws_conv's float list into `output` at `level`, in direct mode or not.
fn run_ours(work: &Path, output: &Path, level: &str, direct: bool) {
    let binary = common::fixture("kws_conv").join("kws_conv_qnn.bin");
    let list = common::absolute_input_list("kws_conv", "float", work);
    let mut extra = vec![format!("--profiling_level={level}")];
    if direct {
        extra.push("--direct_mode".to_string());
    }
    let args = common::net_run_args(&binary, &list, output, false, &extra);
    let ran = Command::new(net_run_binary()).args(&args[1..]).output().unwrap();
    assert!(
        ran.status.success(),
        "lpai-net-run {} failed ({}):\n{}{}",
        args[1..].join(" "),
        ran.status,
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
}

/// The names of the files directly in `directory`, sorted.
fn names_in(directory: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Fails if `directory` holds a profile file other than `qnn-profiling-data_<i>.{log,csv}` for i < `runs`, or any
/// file that looks left behind by an unfinished write.
fn assert_only_whole_profile_files(directory: &Path, runs: usize, what: &str) {
    let names = names_in(directory);
    let profile: BTreeSet<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|name| name.contains("qnn-profiling") || name.contains("qnn_profiling"))
        .collect();
    let expected: BTreeSet<String> =
        (0..runs).flat_map(|run| ["log", "csv"].map(|kind| format!("qnn-profiling-data_{run}.{kind}"))).collect();
    let expected: BTreeSet<&str> = expected.iter().map(String::as_str).collect();
    assert_eq!(profile, expected, "{what}: the profile files in {}", directory.display());
    let left: Vec<&String> = names
        .iter()
        .filter(|name| {
            let lower = name.to_lowercase();
            name.starts_with('.')
                || name.ends_with('~')
                || ["tmp", "temp", "part"].iter().any(|word| lower.contains(word))
        })
        .collect();
    assert!(left.is_empty(), "{what}: {} holds what looks like an unfinished write: {left:?}", directory.display());
}

/// ORT's text for an event type in the CSV's Message column.
fn message(event_type: u32) -> &'static str {
    match event_type {
        100 => "INIT",
        300 => "FINALIZE",
        400 => "EXECUTE",
        404 => "NODE",
        405 => "EXECUTE QUEUE WAIT",
        406 => "EXECUTE PREPROCESS",
        407 => "EXECUTE DEVICE",
        408 => "EXECUTE POSTPROCESS",
        500 => "DE-INIT",
        1000.. => "BACKEND",
        _ => "UNKNOWN",
    }
}

/// ORT's text for an event unit in the CSV's Unit of Measurement column.
fn unit(code: u32) -> &'static str {
    match code {
        1 => "US",
        2 => "BYTES",
        3 => "CYCLES",
        4 => "COUNT",
        5 => "OBJECT",
        1000 => "BACKEND",
        _ => "UNKNOWN",
    }
}

/// The CSV's data rows, each split at its commas (ORT does not quote).
fn rows(csv: &str) -> Vec<Vec<&str>> {
    csv.lines().skip(1).map(|line| line.split(',').collect()).collect()
}

/// What is wrong with one CSV on its own: the header, line endings, column counts, the form of each column.
fn csv_faults(csv: &str) -> Vec<String> {
    let mut faults = Vec::new();
    if csv.lines().next() != Some(CSV_HEADER) {
        faults.push(format!("the first line is {:?}, not ORT's header {CSV_HEADER:?}", csv.lines().next()));
    }
    if !csv.ends_with('\n') || csv.contains('\r') {
        faults.push("the file does not end with a newline, or has a carriage return".to_string());
    }
    let mut previous_level = None;
    for (index, row) in rows(csv).iter().enumerate() {
        let line = index + 2;
        if row.len() != 7 {
            faults.push(format!("line {line}: {} columns, not 7: {row:?}", row.len()));
            continue;
        }
        if row[0] != "UNKNOWN" && row[0].parse::<u64>().is_err() {
            faults.push(format!("line {line}: Msg Timestamp {:?} is neither a number nor UNKNOWN", row[0]));
        }
        if row[2].parse::<u64>().is_err() {
            faults.push(format!("line {line}: Time {:?} is not a whole number", row[2]));
        }
        if row[5] == "SUB-EVENT" && previous_level.is_none() {
            faults.push(format!("line {line}: a SUB-EVENT row with no ROOT row before it"));
        }
        previous_level = Some(row[5]);
    }
    faults
}

fn column_values(csv: &str, column: usize) -> BTreeSet<&str> {
    rows(csv).iter().filter_map(|row| row.get(column).copied()).collect()
}

/// The (Message, Unit of Measurement, Event Level) of each row.
fn event_kinds(csv: &str) -> BTreeSet<(String, String, String)> {
    rows(csv)
        .iter()
        .filter(|row| row.len() == 7)
        .map(|row| (row[1].to_string(), row[3].to_string(), row[5].to_string()))
        .collect()
}

/// How `ours` CSV differs from `theirs` (ORT's), where it must not.
fn csv_differences(ours: &str, theirs: &str) -> Vec<String> {
    let mut differences = csv_faults(ours);
    for (column, name) in [(4, "Timing Source"), (5, "Event Level")] {
        let (mine, oracle) = (column_values(ours, column), column_values(theirs, column));
        if mine != oracle {
            differences.push(format!("{name} values {mine:?}, ORT's {oracle:?}"));
        }
    }
    let oracle_units = column_values(theirs, 3);
    let stray: BTreeSet<&str> = column_values(ours, 3).difference(&oracle_units).copied().collect();
    if !stray.is_empty() {
        differences.push(format!("units {stray:?} that ORT's CSV has not (it has {oracle_units:?})"));
    }
    let stray: Vec<_> = event_kinds(ours).difference(&event_kinds(theirs)).cloned().collect();
    if !stray.is_empty() {
        differences.push(format!("event kinds (Message, Unit, Event Level) that ORT's CSV has not: {stray:?}"));
    }
    differences
}

/// The rows a CSV written from `log` has, as ORT writes them (Msg Timestamp aside).
fn expected_rows(log: &Log) -> Vec<String> {
    fn add(event: &Event, level: &str, into: &mut Vec<String>) {
        let (message, unit) = (message(event.event_type), unit(event.unit));
        into.push(format!("{message},{},{unit},BACKEND,{level},{}", event.value, event.identifier));
        for sub_event in &event.sub_events {
            add(sub_event, "SUB-EVENT", into);
        }
    }
    let mut expected = Vec::new();
    for data in log.records.iter().flat_map(|record| &record.data) {
        for event in &data.events {
            add(event, "ROOT", &mut expected);
        }
    }
    expected
}

/// Where the CSV's rows are not the log's events.
fn csv_against_log(csv: &str, log: &Log) -> Vec<String> {
    let written: Vec<String> =
        csv.lines().skip(1).map(|line| line.split_once(',').map_or("", |(_, rest)| rest).to_string()).collect();
    let expected = expected_rows(log);
    let mut differences: Vec<String> = written
        .iter()
        .zip(&expected)
        .enumerate()
        .filter(|(_, (row, event))| row != event)
        .map(|(index, (row, event))| format!("CSV line {}: {row:?}, the log's event gives {event:?}", index + 2))
        .collect();
    if written.len() != expected.len() {
        differences.push(format!("the CSV has {} rows, the log {} events", written.len(), expected.len()));
    }
    differences
}

/// How the events `ours` differ from `theirs` where they must not, `at` naming the place.
fn event_differences(ours: &[Event], theirs: &[Event], at: &str, into: &mut Vec<String>) {
    if ours.len() != theirs.len() {
        let names = |events: &[Event]| events.iter().map(|event| event.identifier.clone()).collect::<Vec<_>>();
        into.push(format!("{at}: {} events {:?}, ORT's {} {:?}", ours.len(), names(ours), theirs.len(), names(theirs)));
        return;
    }
    for (index, (mine, oracle)) in ours.iter().zip(theirs).enumerate() {
        let same = mine.identifier == oracle.identifier
            && mine.event_type == oracle.event_type
            && mine.unit == oracle.unit
            && mine.value_kind == oracle.value_kind
            && mine.float_value.is_some() == oracle.float_value.is_some();
        if !same {
            into.push(format!("{at}, event {index}: {mine}, ORT's {oracle}"));
        }
        event_differences(
            &mine.sub_events,
            &oracle.sub_events,
            &format!("{at}, sub-events of {:?}", oracle.identifier),
            into,
        );
    }
}

/// What is wrong with one log on its own: the header only first, the times of each record on one clock.
fn log_faults(log: &Log) -> Vec<String> {
    let mut faults = Vec::new();
    for (index, record) in log.records.iter().enumerate() {
        let at = format!("record {index} (byte {})", record.offset);
        if record.header.is_some() != (index == 0) {
            faults
                .push(format!("{at}: a header {}", if index == 0 { "is missing" } else { "that only the first has" }));
        }
        if record.data.len() != 1 {
            faults.push(format!("{at}: {} profile-data tables, ORT writes one a record", record.data.len()));
        }
        for data in &record.data {
            if !(data.start_us <= data.stop_us && data.stop_us <= data.written_us) {
                faults.push(format!(
                    "{at}: start {} stop {} and field 0's time {} are not in order on one clock",
                    data.start_us, data.stop_us, data.written_us
                ));
            }
        }
    }
    if let Some(first) = log.records.first() {
        let written = first.data.first().map_or(0, |data| data.written_us);
        if let Some(header) = first.header.as_ref().filter(|header| header.steady_us > written) {
            faults.push(format!(
                "the header's steady time {} is after the first record's field 0 time {written}: not one clock",
                header.steady_us
            ));
        }
    }
    if let Some(header) = log.records.first().and_then(|record| record.header.as_ref()) {
        for (name, text) in [("app name", &header.app_name), ("app version", &header.app_version)] {
            if text.is_empty() {
                faults.push(format!("the header's {name} is empty"));
            }
        }
        let parts: Vec<&str> = header.backend_version.split('.').collect();
        if parts.len() != 3 || parts.iter().any(|part| part.parse::<u32>().is_err()) {
            faults.push(format!("the header's backend version {:?} is not MAJOR.MINOR.PATCH", header.backend_version));
        }
    }
    faults
}

/// How `ours` log differs from `theirs` (ORT's) where it must not.
fn log_differences(ours: &Log, theirs: &Log) -> Vec<String> {
    let mut differences = log_faults(ours);
    if let (Some(mine), Some(oracle)) = (
        ours.records.first().and_then(|record| record.header.as_ref()),
        theirs.records.first().and_then(|record| record.header.as_ref()),
    ) {
        if (mine.marker, mine.field_3) != (oracle.marker, oracle.field_3) {
            differences.push(format!(
                "the header's marker and field 3 table {:#x} {:?}, ORT's {:#x} {:?}",
                mine.marker, mine.field_3, oracle.marker, oracle.field_3
            ));
        }
        let hour = 3_600_000_000;
        if mine.wall_clock_us.abs_diff(oracle.wall_clock_us) > hour {
            differences.push(format!(
                "the header's wall clock {} us is more than an hour from ORT's {} us",
                mine.wall_clock_us, oracle.wall_clock_us
            ));
        }
    }
    for (offset, mine) in all_data(ours) {
        let at = format!("the record at byte {offset} (method {})", mine.method);
        let Some((_, oracle)) = all_data(theirs).into_iter().rev().find(|(_, data)| data.method == mine.method) else {
            differences.push(format!("{at}: ORT's log has no record of this method type; ORT's:\n{}", outline(theirs)));
            continue;
        };
        let memory = |data: &qnn_log::ProfileData| (data.visibility, data.start_mem, data.stop_mem);
        if memory(mine) != memory(oracle) {
            differences.push(format!(
                "{at}: visibility bytes, startMem and stopMem {:?}, ORT's {:?}",
                memory(mine),
                memory(oracle)
            ));
        }
        if mine.graph_name != oracle.graph_name {
            differences.push(format!("{at}: graph {:?}, ORT's {:?}", mine.graph_name, oracle.graph_name));
        }
        event_differences(&mine.events, &oracle.events, &at, &mut differences);
    }
    differences
}

/// Where `ours` does not profile every QNN call ORT's does: the method types of the records in order (ORT: the
/// load, then one execute per inference), the CSV's event kinds and its number of rows.
fn coverage_differences(ours: &Profile, theirs: &Profile) -> Vec<String> {
    let mut differences = Vec::new();
    let (our_log, their_log) = (ours.parsed(), theirs.parsed());
    let methods = |log: &Log| all_data(log).into_iter().map(|(_, data)| data.method).collect::<Vec<_>>();
    if methods(&our_log) != methods(&their_log) {
        differences.push(format!(
            "log: the records' method types {:?}, ORT's {:?}; ours:\n{}ORT's:\n{}",
            methods(&our_log),
            methods(&their_log),
            outline(&our_log),
            outline(&their_log)
        ));
    }
    let missing: Vec<_> = event_kinds(&theirs.csv).difference(&event_kinds(&ours.csv)).cloned().collect();
    if !missing.is_empty() {
        differences.push(format!("CSV: event kinds (Message, Unit, Event Level) only ORT's has: {missing:?}"));
    }
    let count = |csv: &str| rows(csv).len();
    if count(&ours.csv) != count(&theirs.csv) {
        differences.push(format!("CSV: {} rows, ORT's {}", count(&ours.csv), count(&theirs.csv)));
    }
    differences
}

/// One line per profile-data table of a log: its method type and its root events' identifiers.
fn outline(log: &Log) -> String {
    let line = |(offset, data): (usize, &qnn_log::ProfileData)| {
        let names: Vec<&str> = data.events.iter().map(|event| event.identifier.as_str()).collect();
        format!("  record at byte {offset}: method {}, events {names:?}\n", data.method)
    };
    all_data(log).into_iter().map(line).collect()
}

/// Every profile-data table of a log, with the byte offset of its record.
fn all_data(log: &Log) -> Vec<(usize, &qnn_log::ProfileData)> {
    log.records.iter().flat_map(|record| record.data.iter().map(move |data| (record.offset, data))).collect()
}

/// Every difference between two profiles that must not be there, each line naming its file.
fn differences(ours: &Profile, theirs: &Profile) -> Vec<String> {
    let (our_log, their_log) = (ours.parsed(), theirs.parsed());
    let mut found = Vec::new();
    found.extend(csv_differences(&ours.csv, &theirs.csv).into_iter().map(|line| format!("CSV: {line}")));
    found.extend(csv_against_log(&ours.csv, &our_log).into_iter().map(|line| format!("CSV against its log: {line}")));
    found.extend(log_differences(&our_log, &their_log).into_iter().map(|line| format!("log: {line}")));
    found
}

fn assert_same(ours: &Profile, theirs: &Profile) {
    // The oracle is held to its own rules first: a fault there is the comparison's, not ours.
    let their_faults: Vec<String> = csv_faults(&theirs.csv)
        .into_iter()
        .chain(csv_against_log(&theirs.csv, &theirs.parsed()))
        .chain(log_faults(&theirs.parsed()))
        .collect();
    assert!(
        their_faults.is_empty(),
        "{} breaks the rules it is the oracle for:\n{}",
        theirs.what,
        their_faults.join("\n")
    );
    let found = differences(ours, theirs);
    assert!(found.is_empty(), "{} differs from {}:\n{}", ours.what, theirs.what, found.join("\n"));
}

/// Runs lpai-net-run twice into one directory at `level` and holds both runs to ORT's profile.
fn matches_ort(level: &str, direct: bool) {
    let _guard = common::qnn_lock();
    let mode = if direct { "direct" } else { "traditional" };
    let oracle = ort(level);
    let work = tempfile::tempdir().unwrap();
    let output = work.path().join("output");
    let file = |run: usize, kind: &str| output.join(format!("qnn-profiling-data_{run}.{kind}"));

    run_ours(work.path(), &output, level, direct);
    assert_only_whole_profile_files(&output, 1, &format!("{mode} {level}, first run"));
    let first = Profile::read(&file(0, "csv"), &file(0, "log"), format!("lpai-net-run {mode} {level}, run 0"));
    assert_same(&first, oracle);

    run_ours(work.path(), &output, level, direct);
    assert_only_whole_profile_files(&output, 2, &format!("{mode} {level}, second run"));
    let again = Profile::read(&file(0, "csv"), &file(0, "log"), format!("lpai-net-run {mode} {level}, run 0 again"));
    assert!(again.csv == first.csv, "{}: the second run changed {}", again.what, file(0, "csv").display());
    assert!(again.log == first.log, "{}: the second run changed {}", again.what, file(0, "log").display());
    let second = Profile::read(&file(1, "csv"), &file(1, "log"), format!("lpai-net-run {mode} {level}, run 1"));
    assert_same(&second, oracle);
}

#[test]
fn traditional_mode_at_basic_profiling_matches_ort() {
    matches_ort("basic", false);
}

#[test]
fn traditional_mode_at_detailed_profiling_matches_ort() {
    matches_ort("detailed", false);
}

#[test]
fn direct_mode_at_basic_profiling_matches_ort() {
    matches_ort("basic", true);
}

#[test]
fn direct_mode_at_detailed_profiling_matches_ort() {
    matches_ort("detailed", true);
}

/// Runs lpai-net-run once at `level` in each mode and holds its records to the QNN calls ORT profiles. Traditional
/// mode makes the calls ORT makes (the load, then one execute per inference) and must profile each of them alike.
/// Direct mode runs the whole list in one call: its log has the load's record and the job's, which holds the last
/// inference's events (what the skel's profile holds after the job), so its method types are the load and one
/// execute, with every event kind ORT's has.
fn profiles_every_call_ort_does(level: &str) {
    let _guard = common::qnn_lock();
    let oracle = ort(level);
    let work = tempfile::tempdir().unwrap();
    let mut found = Vec::new();
    for direct in [false, true] {
        let mode = if direct { "direct" } else { "traditional" };
        let output = work.path().join(mode);
        run_ours(work.path(), &output, level, direct);
        let file = |kind: &str| output.join(format!("qnn-profiling-data_0.{kind}"));
        let ours = Profile::read(&file("csv"), &file("log"), format!("lpai-net-run {mode} {level}"));
        let differences =
            if direct { job_coverage_differences(&ours, oracle) } else { coverage_differences(&ours, oracle) };
        found.extend(differences.into_iter().map(|line| format!("{mode} mode: {line}")));
    }
    assert!(found.is_empty(), "lpai-net-run at {level} does not profile the calls ORT does:\n{}", found.join("\n"));
}

/// Where a direct-mode log does not cover what ORT's does in one job: the method types must be ORT's first (the
/// load) and one execute, and the CSV must have every event kind ORT's has.
fn job_coverage_differences(ours: &Profile, theirs: &Profile) -> Vec<String> {
    let methods = |log: &Log| all_data(log).into_iter().map(|(_, data)| data.method).collect::<Vec<_>>();
    let (our_methods, their_methods) = (methods(&ours.parsed()), methods(&theirs.parsed()));
    let expected: Vec<_> = their_methods.iter().take(2).copied().collect();
    let mut differences = Vec::new();
    if our_methods != expected {
        differences.push(format!(
            "log: the records' method types {our_methods:?}, expected ORT's load and one execute {expected:?}"
        ));
    }
    let missing: Vec<_> = event_kinds(&theirs.csv).difference(&event_kinds(&ours.csv)).cloned().collect();
    if !missing.is_empty() {
        differences.push(format!("CSV: event kinds (Message, Unit, Event Level) only ORT's has: {missing:?}"));
    }
    differences
}

#[test]
fn at_basic_profiling_the_log_has_a_record_for_every_qnn_call_ort_profiles() {
    profiles_every_call_ort_does("basic");
}

#[test]
fn at_detailed_profiling_the_log_has_a_record_for_every_qnn_call_ort_profiles() {
    profiles_every_call_ort_does("detailed");
}

#[test]
fn the_comparison_passes_two_ort_runs_and_tells_basic_from_detailed() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let basic = ort("basic");
    let again = run_ort("basic", work.path(), "basic-again");
    assert_same(&again, basic);
    assert!(again.log != basic.log, "two ORT runs wrote the same bytes: the times in them do not vary");

    let detailed = ort("detailed");
    let found = differences(detailed, basic);
    let says = |text: &str| found.iter().any(|line| line.contains(text));
    assert!(says("CSV: Event Level values"), "basic and detailed have the same event levels:\n{}", found.join("\n"));
    assert!(says("units {\"CYCLES\"}"), "detailed's cycle counts are not told apart:\n{}", found.join("\n"));
    assert!(says("log: the record at byte"), "basic and detailed logs have the same events:\n{}", found.join("\n"));

    // Coverage: two runs profile the same calls; a log of the load alone, with its CSV rows, does not.
    let found = coverage_differences(&again, basic);
    assert!(found.is_empty(), "two ORT runs profile different calls:\n{}", found.join("\n"));
    let records = qnn_log::records(&basic.log).unwrap();
    let load_only = Profile {
        csv: basic.csv.lines().take(3).map(|line| format!("{line}\n")).collect(),
        log: basic.log[..records[1].offset].to_vec(),
        what: "ORT basic, its load record alone".to_string(),
    };
    assert_same(&load_only, basic);
    let found = coverage_differences(&load_only, basic);
    let says = |text: &str| found.iter().any(|line| line.contains(text));
    assert!(says("log: the records' method types [4], ORT's [4, 1, 1, 1]"), "{}", found.join("\n"));
    assert!(says("only ORT's has: [(\"BACKEND\", \"COUNT\", \"ROOT\"), (\"EXECUTE\""), "{}", found.join("\n"));
    assert!(says("CSV: 2 rows, ORT's 11"), "{}", found.join("\n"));
}

#[test]
fn the_log_reader_refuses_a_log_that_is_not_whole() {
    let _guard = common::qnn_lock();
    let log = &ort("basic").log;
    let parsed = qnn_log::parse(log).unwrap();
    assert!(parsed.records.len() >= 2, "{parsed:?}");
    let header = parsed.records[0].header.as_ref().expect("the first record is the header");
    assert_eq!((header.app_name.as_str(), header.marker), ("OnnxRuntime", 0x3586_37BD), "{header:?}");

    let cut = qnn_log::parse(&log[..log.len() - 1]).unwrap_err();
    assert!(cut.contains("runs past the end of the file"), "{cut}");
    let mut trailing = log.clone();
    trailing.extend([0, 0]);
    let trailing = qnn_log::parse(&trailing).unwrap_err();
    assert!(trailing.contains("too few for a record length"), "{trailing}");
    let mut bad_root = log.clone();
    bad_root[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    let bad_root = qnn_log::parse(&bad_root).unwrap_err();
    assert!(bad_root.starts_with("record at byte 0: a table at byte"), "{bad_root}");
    // A field no ORT log has: the root's vtable (record byte 4) grown from 8 to 10 bytes reads a third field
    // offset, the next two bytes (the root table's own first bytes, 8: inside the table, so present).
    let root_vtable = 4 + 4;
    let mut extra_field = log.clone();
    extra_field[root_vtable..root_vtable + 2].copy_from_slice(&10u16.to_le_bytes());
    let extra_field = qnn_log::parse(&extra_field);
    let extra_field = extra_field.expect_err("a root table with a third field still parses");
    assert!(extra_field.contains("the root table (byte 12) has field 2, which no ORT log has"), "{extra_field}");
}

/// What [`write_chosen_log`] gives the API, as the reader must read it back.
mod chosen {
    pub const APP: (&str, &str, &str) = ("chosen-app", "7.8", "9.10.11");
    /// The first record: times and memory set, PRIVATE; a basic event with a basic sub-event, an extended FLOAT_32
    /// event with a timestamp, an extended UINT_64 event of value 0.
    pub const TIMES: [u64; 4] = [0x1111, 0x2222, 0x3333, 0x4444];
    pub const BASIC: (u32, u32, u64, &str) = (400, 1, 0x5555, "basic");
    pub const SUB: (u32, u32, u64, &str) = (404, 3, 0x6666, "sub");
    pub const FLOAT: (u32, u32, f32, u64, &str) = (1000, 4, 1.5, 0x8888, "float");
    pub const ZERO: (u32, u32, &str) = (1001, 2, "zero");
    pub const GRAPHS: [&str; 2] = ["graph-a", "graph-b"];
}

/// Writes `chosen.log` in `directory` through the real libQnnSystem's System Profile API (lpai-direct's
/// declarations): one target given a ProfileData_t with everything in [`chosen`], then twice a second one (PUBLIC,
/// times 0, method FINALIZE, no events); then another target on the same file given the second once.
fn write_chosen_log(directory: &Path) -> Vec<u8> {
    use lpai_direct::qnn::system_profile::*;
    use lpai_direct::qnn::{
        DataType, ProfileEventData, ProfileEventType, ProfileEventUnit, SystemInterface, SystemInterfaceGetProvidersFn,
        SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL, SYSTEM_PROFILE_API,
    };
    use std::ffi::CString;
    let path = common::qnn_lib_dir().join("libQnnSystem.so");
    // SAFETY: libQnnSystem is made to be loaded by applications; it stays loaded until this function returns.
    let library =
        unsafe { libloading::Library::new(&path) }.unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    // SAFETY: libQnnSystem exports QnnSystemInterface_getProviders with this signature.
    let get_providers = unsafe {
        library.get::<SystemInterfaceGetProvidersFn>(SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL.to_bytes_with_nul())
    }
    .unwrap();
    let (mut list, mut count): (*mut *const SystemInterface, u32) = (std::ptr::null_mut(), 0);
    // SAFETY: valid out-pointers; the answer is the library's and lives while it is loaded.
    assert_eq!(unsafe { get_providers(&mut list, &mut count) }, 0);
    assert!(count > 0 && !list.is_null());
    // SAFETY: the library listed `count` > 0 providers.
    let interface = unsafe { &**list };
    let version = interface.system_api_version;
    assert!(version.major == SYSTEM_PROFILE_API.major && version.minor >= SYSTEM_PROFILE_API.minor, "{version:?}");
    let table = &interface.table;
    let (create, serialize, free) = (
        table.system_profile_create_serialization_target.expect("createSerializationTarget"),
        table.system_profile_serialize_event_data.expect("serializeEventData"),
        table.system_profile_free_serialization_target.expect("freeSerializationTarget"),
    );

    let text = |value: &str| CString::new(value).unwrap();
    let (app_name, app_version, backend_version) = (text(chosen::APP.0), text(chosen::APP.1), text(chosen::APP.2));
    let (file_name, file_directory) = (text("chosen.log"), text(directory.to_str().unwrap()));
    let identifiers = [chosen::BASIC.3, chosen::SUB.3, chosen::FLOAT.4, chosen::ZERO.2].map(text);
    let graphs = chosen::GRAPHS.map(text);
    let header = SerializationFileHeader {
        app_name: app_name.as_ptr(),
        app_version: app_version.as_ptr(),
        backend_version: backend_version.as_ptr(),
    };
    let mut config = SerializationTargetConfig {
        config_type: SerializationTargetConfigType::SERIALIZATION_HEADER,
        value: SerializationTargetConfigValue { serialization_header: header },
    };
    let target = SerializationTarget {
        target_type: SerializationTargetType::FILE,
        file: SerializationTargetFile { file_name: file_name.as_ptr(), file_directory: file_directory.as_ptr() },
    };
    let basic = |(event_type, unit, value, _): (u32, u32, u64, &str), identifier: &CString| ProfileEventData {
        event_type: ProfileEventType(event_type),
        unit: ProfileEventUnit(unit),
        value,
        identifier: identifier.as_ptr(),
    };
    let extended = |event_type: u32, unit: u32, value: Scalar, timestamp: u64, identifier: &CString| {
        let v1 = ExtendedEventDataV1 {
            event_type: ProfileEventType(event_type),
            unit: ProfileEventUnit(unit),
            value: ExtendedEventValue { value },
            timestamp,
            identifier: identifier.as_ptr(),
        };
        ProfileEventDataKinds { extended_event_data: ExtendedEventData { version: ExtendedEventDataVersion::V1, v1 } }
    };
    let event = |data_type, data, sub_events: &mut [ProfileEventV1]| ProfileEventV1 {
        data_type,
        data,
        sub_events: if sub_events.is_empty() { std::ptr::null_mut() } else { sub_events.as_mut_ptr() },
        num_sub_events: sub_events.len() as u32,
    };
    let mut sub = [event(
        EventDataType::EVENT_DATA,
        ProfileEventDataKinds { event_data: basic(chosen::SUB, &identifiers[1]) },
        &mut [],
    )];
    let float = Scalar { data_type: DataType::FLOAT_32, value: ScalarValue { float_value: chosen::FLOAT.2 } };
    let zero = Scalar { data_type: DataType::UINT_64, value: ScalarValue { uint64_value: 0 } };
    let mut events = [
        event(
            EventDataType::EVENT_DATA,
            ProfileEventDataKinds { event_data: basic(chosen::BASIC, &identifiers[0]) },
            &mut sub,
        ),
        event(
            EventDataType::EXTENDED_EVENT_DATA,
            extended(chosen::FLOAT.0, chosen::FLOAT.1, float, chosen::FLOAT.3, &identifiers[2]),
            &mut [],
        ),
        event(
            EventDataType::EXTENDED_EVENT_DATA,
            extended(chosen::ZERO.0, chosen::ZERO.1, zero, 0, &identifiers[3]),
            &mut [],
        ),
    ];
    let [start_time, stop_time, start_mem, stop_mem] = chosen::TIMES;
    let first = ProfileData {
        version: ProfileDataVersion::V1,
        v1: ProfileDataV1 {
            header: HeaderV1 {
                start_time,
                stop_time,
                start_mem,
                stop_mem,
                method_type: MethodType::BACKEND_EXECUTE,
                visibility: Visibility::PRIVATE,
                graph_name: graphs[0].as_ptr(),
            },
            profiling_events: events.as_mut_ptr(),
            num_profiling_events: events.len() as u32,
        },
    };
    let second = ProfileData {
        version: ProfileDataVersion::V1,
        v1: ProfileDataV1 {
            header: HeaderV1 {
                method_type: MethodType::BACKEND_FINALIZE,
                graph_name: graphs[1].as_ptr(),
                ..HeaderV1::INIT
            },
            profiling_events: std::ptr::null_mut(),
            num_profiling_events: 0,
        },
    };
    for target_data in [&[&first, &second, &second][..], &[&second]] {
        let mut handle: SerializationTargetHandle = std::ptr::null_mut();
        // SAFETY: every pointer given lives until `free` returns; the handle is freed once.
        unsafe {
            assert_eq!(create(target, &mut config, 1, &mut handle), 0, "createSerializationTarget");
            for data in target_data {
                let mut pointer: *const ProfileData = *data;
                assert_eq!(serialize(handle, &mut pointer, 1), 0, "serializeEventData");
            }
            assert_eq!(free(handle), 0, "freeSerializationTarget");
        }
    }
    std::fs::read(directory.join("chosen.log")).unwrap()
}

#[test]
fn the_log_reader_reads_back_chosen_values() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let log = qnn_log::parse(&write_chosen_log(work.path())).unwrap_or_else(|error| panic!("{error}"));
    // One record a target; the header only in the new file's first.
    let counts: Vec<(bool, usize)> =
        log.records.iter().map(|record| (record.header.is_some(), record.data.len())).collect();
    assert_eq!(counts, [(true, 3), (false, 1)], "(header, profile data) of each record: {log:#?}");
    let header = log.records[0].header.as_ref().unwrap();
    let strings = (header.app_name.as_str(), header.app_version.as_str(), header.backend_version.as_str());
    assert_eq!(strings, chosen::APP, "{header:?}");
    assert_eq!((header.marker, header.field_3), (0x3586_37BD, (2, 1)), "{header:?}");
    let now_us = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_micros() as u64;
    assert!(now_us.abs_diff(header.wall_clock_us) < 60_000_000, "wall clock {} us, now {now_us}", header.wall_clock_us);

    let first = &log.records[0].data[0];
    let read = [first.start_us, first.stop_us, first.start_mem, first.stop_mem];
    assert_eq!((read, first.method, first.visibility), (chosen::TIMES, 1, (1, 1)), "{first:#?}");
    assert_eq!(first.graph_name, chosen::GRAPHS[0]);
    let shown = |event: &Event| (event.event_type, event.unit, event.value, event.identifier.clone(), event.value_kind);
    let [basic, float, zero] = &first.events[..] else { panic!("three events: {first:#?}") };
    let (event_type, unit, value, identifier) = chosen::BASIC;
    assert_eq!(shown(basic), (event_type, unit, value, identifier.to_string(), 2), "{basic:#?}");
    let [sub] = &basic.sub_events[..] else { panic!("one sub-event: {basic:#?}") };
    let (event_type, unit, value, identifier) = chosen::SUB;
    assert_eq!(shown(sub), (event_type, unit, value, identifier.to_string(), 2), "{sub:#?}");
    let (event_type, unit, value, timestamp, identifier) = chosen::FLOAT;
    assert_eq!(shown(float), (event_type, unit, 0, identifier.to_string(), 3), "{float:#?}");
    assert_eq!((float.float_value, float.timestamp), (Some(value), timestamp), "{float:#?}");
    let (event_type, unit, identifier) = chosen::ZERO;
    assert_eq!(shown(zero), (event_type, unit, 0, identifier.to_string(), 2), "{zero:#?}");
    assert_eq!((zero.float_value, zero.timestamp, zero.sub_events.len()), (None, 0, 0), "{zero:#?}");

    let seconds = log.records.iter().flat_map(|record| &record.data).skip(1);
    let indexes: Vec<u64> = log.records.iter().flat_map(|record| &record.data).map(|data| data.index).collect();
    assert_eq!(indexes, [0, 1, 2, 0], "each profile data's index in its target");
    for second in seconds {
        let read = [second.start_us, second.stop_us, second.start_mem, second.stop_mem];
        assert_eq!((read, second.method, second.visibility), ([0; 4], 2, (0, 0)), "{second:#?}");
        assert_eq!((second.graph_name.as_str(), second.events.len()), (chosen::GRAPHS[1], 0), "{second:#?}");
    }
}
