//! The binary profile log qnn-profile-viewer reads, written by the HLOS side's libQnnSystem through its System
//! Profile API (`lpai_direct::qnn::system_profile`), in the order ONNX Runtime's QNN execution provider calls it,
//! once for each record: create a file target with the serialization header config, serialize the record, free
//! the target (the library writes the header only into a new file, so the first record carries it).
//!
//! What goes into the API's fields:
//! - header config: `appName` `lpai-net-run`, `appVersion` its version, `backendVersion` the QNN core API these
//!   declarations speak (`DECLARED_CORE_API`, as ORT writes the QNN API version of its build). The API has no
//!   place for the backend library's or the binary's path (the run's record names both).
//! - one record per QNN call the events came from ([`records`]): `methodType` from the top-level event types,
//!   `graphName` the graphs that ran, `startTime` and `stopTime` when the stub call that carried it started and
//!   stopped on the host's monotonic clock (microseconds, as ORT's steady clock; the skel's events have no time of
//!   their own), `visibility` PUBLIC; `startMem` and `stopMem` are left 0 (unset), as ORT leaves them.
//! - each event as extended event data version 1: type, unit, the value as a `UINT_64` scalar, identifier, and
//!   timestamp 0 (unknown: the skel reads basic event data, which has none; HTP's own extended data has 0 there
//!   too). Sub-events hang under their top-level event.

use crate::metadata::HostSystemLibrary;
use lpai_direct::qnn::error::{code as error_code, error_name};
use lpai_direct::qnn::profile::{ProfileEventType, ProfileEventUnit};
use lpai_direct::qnn::system_profile::{
    self as sp, CreateSerializationTargetFn, FreeSerializationTargetFn, MethodType, SerializeEventDataFn,
};
use lpai_direct::qnn::{DataType, ErrorHandle, SystemInterfaceTable, Version, DECLARED_CORE_API, SYSTEM_PROFILE_API};
use lpai_direct_stub::stub::ProfileEvent;
use std::ffi::CString;
use std::path::Path;

/// The app name the header gives.
pub const APP_NAME: &str = "lpai-net-run";

/// The three System Profile functions of a libQnnSystem that has them.
#[derive(Clone, Copy, Debug)]
pub struct ProfileApi {
    create: CreateSerializationTargetFn,
    serialize: SerializeEventDataFn,
    free: FreeSerializationTargetFn,
}

/// Why a libQnnSystem cannot write the log, as the info line says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unavailable {
    /// Its system API is older than [`SYSTEM_PROFILE_API`] (or of another major version): its table may end
    /// before the entries, which are not read.
    TooOld(Version),
    /// Its table leaves this entry null.
    NullEntry(Version, &'static str),
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |v: &Version| format!("{}.{}.{}", v.major, v.minor, v.patch);
        let needed = format!("{}.{}", SYSTEM_PROFILE_API.major, SYSTEM_PROFILE_API.minor);
        match self {
            Unavailable::TooOld(version) => write!(f, "system API {}; needs {needed}", shown(version)),
            Unavailable::NullEntry(version, entry) => {
                write!(f, "system API {}, but its {entry} entry is null", shown(version))
            }
        }
    }
}

/// The System Profile functions of a provider of system API `version`, whose table `table` reads: the table is
/// read only when the version is one that has them ([`SYSTEM_PROFILE_API`] or later, same major version).
pub fn profile_api(version: Version, table: impl FnOnce() -> SystemInterfaceTable) -> Result<ProfileApi, Unavailable> {
    if version.major != SYSTEM_PROFILE_API.major || version.minor < SYSTEM_PROFILE_API.minor {
        return Err(Unavailable::TooOld(version));
    }
    let table = table();
    let null = |entry| Unavailable::NullEntry(version, entry);
    Ok(ProfileApi {
        create: table
            .system_profile_create_serialization_target
            .ok_or(null("systemProfileCreateSerializationTarget"))?,
        serialize: table.system_profile_serialize_event_data.ok_or(null("systemProfileSerializeEventData"))?,
        free: table.system_profile_free_serialization_target.ok_or(null("systemProfileFreeSerializationTarget"))?,
    })
}

/// One readout of the skel's profile (its `profile` call) after a stub call: the events QNN recorded for it, and
/// when that call started and stopped on the host's monotonic clock, in microseconds ([`crate::times::monotonic_us`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Readout {
    /// The events, in QNN's order.
    pub events: Vec<ProfileEvent>,
    /// When the call started.
    pub started_us: u64,
    /// When it stopped.
    pub stopped_us: u64,
}

/// One record of the log: the top-level events of one QNN call, each with its sub-events.
#[derive(Debug, PartialEq)]
pub struct Record<'e> {
    /// The call.
    pub method: MethodType,
    /// When the stub call that carried it started and stopped (host monotonic microseconds).
    pub started_us: u64,
    /// See `started_us`.
    pub stopped_us: u64,
    /// Its top-level events, each with its sub-events.
    pub events: Vec<(&'e ProfileEvent, Vec<&'e ProfileEvent>)>,
}

/// The method whose events a top-level event of type `event_type` ends: INIT ends the context's creation from
/// the binary, FINALIZE a finalize, EXECUTE an execute, DE-INIT the release; other types (the backend's own)
/// belong to the call whose event follows them.
fn method_ended_by(event_type: u32) -> Option<MethodType> {
    match ProfileEventType(event_type) {
        ProfileEventType::INIT => Some(MethodType::BACKEND_CREATE_FROM_BINARY),
        ProfileEventType::FINALIZE => Some(MethodType::BACKEND_FINALIZE),
        ProfileEventType::EXECUTE => Some(MethodType::BACKEND_EXECUTE),
        ProfileEventType::DEINIT => Some(MethodType::BACKEND_DEINIT),
        _ => None,
    }
}

/// Each readout's events, in QNN's order, as records carrying the readout's times: a sub-event (depth 1 or more)
/// goes under the top-level event before it (one with none before it counts as top-level), and a record ends at
/// each top-level event that names its call (`method_ended_by`). Events after the last such one in a readout
/// make a record of method NONE.
pub fn records(readouts: &[Readout]) -> Vec<Record<'_>> {
    readouts.iter().flat_map(records_of).collect()
}

/// One readout's records ([`records`]).
fn records_of(readout: &Readout) -> Vec<Record<'_>> {
    let (started_us, stopped_us) = (readout.started_us, readout.stopped_us);
    let mut records = Vec::new();
    let mut pending: Vec<(&ProfileEvent, Vec<&ProfileEvent>)> = Vec::new();
    let mut ended = |pending: &mut Vec<_>, method| {
        if !pending.is_empty() {
            records.push(Record { method, started_us, stopped_us, events: std::mem::take(pending) });
        }
    };
    for event in &readout.events {
        match pending.last_mut() {
            Some((_, subs)) if event.depth > 0 => subs.push(event),
            _ => {
                // The record so far ends before a top-level event when the last one named its call.
                if let Some(method) = pending.last().and_then(|(last, _)| method_ended_by(last.event_type)) {
                    ended(&mut pending, method);
                }
                pending.push((event, Vec::new()));
            }
        }
    }
    let method = pending.last().and_then(|(last, _)| method_ended_by(last.event_type)).unwrap_or(MethodType::NONE);
    ended(&mut pending, method);
    records
}

/// The run's context the log carries.
#[derive(Clone, Debug)]
pub struct Context<'a> {
    /// The graphs that ran (the records' `graphName`).
    pub graph_name: &'a str,
}

/// Text as C wants it: NUL bytes (which C cannot carry) dropped.
fn c_text(text: &str) -> CString {
    CString::new(text.replace('\0', "")).unwrap_or_default()
}

/// What a QNN status says, for messages: its name and code.
fn status_text(function: &str, status: ErrorHandle) -> String {
    let code = error_code(status);
    format!("{function} answered {} ({code})", error_name(code))
}

/// An event as the API carries it: extended data, no sub-events yet.
fn system_event(event: &ProfileEvent, identifier: &CString) -> sp::ProfileEventV1 {
    let value = sp::Scalar { data_type: DataType::UINT_64, value: sp::ScalarValue { uint64_value: event.value } };
    let v1 = sp::ExtendedEventDataV1 {
        event_type: ProfileEventType(event.event_type),
        unit: ProfileEventUnit(event.unit),
        value: sp::ExtendedEventValue { value },
        timestamp: 0,
        identifier: identifier.as_ptr(),
    };
    let extended_event_data = sp::ExtendedEventData { version: sp::ExtendedEventDataVersion::V1, v1 };
    sp::ProfileEventV1 {
        data_type: sp::EventDataType::EXTENDED_EVENT_DATA,
        data: sp::ProfileEventDataKinds { extended_event_data },
        sub_events: std::ptr::null_mut(),
        num_sub_events: 0,
    }
}

/// A count as the API's `uint32_t`.
fn count(length: usize, what: &str) -> Result<u32, String> {
    u32::try_from(length).map_err(|_| format!("{length} {what} are more than the API can carry"))
}

/// Serializes one record through the target `handle`.
fn serialize_record(
    api: &ProfileApi,
    handle: sp::SerializationTargetHandle,
    record: &Record,
    graph: &CString,
) -> Result<(), String> {
    let identifiers: Vec<(CString, Vec<CString>)> = record
        .events
        .iter()
        .map(|(event, subs)| (c_text(&event.identifier), subs.iter().map(|sub| c_text(&sub.identifier)).collect()))
        .collect();
    let mut sub_events: Vec<Vec<sp::ProfileEventV1>> = record
        .events
        .iter()
        .zip(&identifiers)
        .map(|((_, subs), (_, names))| subs.iter().zip(names).map(|(sub, name)| system_event(sub, name)).collect())
        .collect();
    let mut events = Vec::with_capacity(record.events.len());
    for (((event, _), (name, _)), subs) in record.events.iter().zip(&identifiers).zip(&mut sub_events) {
        let mut system = system_event(event, name);
        if !subs.is_empty() {
            (system.sub_events, system.num_sub_events) = (subs.as_mut_ptr(), count(subs.len(), "sub-events")?);
        }
        events.push(system);
    }
    let header = sp::HeaderV1 {
        start_time: record.started_us,
        stop_time: record.stopped_us,
        method_type: record.method,
        graph_name: graph.as_ptr(),
        ..sp::HeaderV1::INIT
    };
    let v1 = sp::ProfileDataV1 {
        header,
        profiling_events: events.as_mut_ptr(),
        num_profiling_events: count(events.len(), "events")?,
    };
    let data = sp::ProfileData { version: sp::ProfileDataVersion::V1, v1 };
    let mut list: *const sp::ProfileData = &data;
    // SAFETY: a live target; one record whose events, sub-events and strings all live until after the call.
    let status = unsafe { (api.serialize)(handle, &mut list, 1) };
    match error_code(status) {
        0 => Ok(()),
        _ => Err(status_text("systemProfileSerializeEventData", status)),
    }
}

/// Writes the log of the `readouts` as `directory/file_name` through libQnnSystem's `api`, for each record: create a
/// target with the header config, serialize the record, free the target. The library appends to the file and may leave a partial
/// one behind on failure: the caller writes to a fresh temporary name and renames it ([`crate::profile_files`]).
pub fn write(
    api: &ProfileApi,
    directory: &Path,
    file_name: &str,
    context: &Context,
    readouts: &[Readout],
) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt as _;
    let directory = CString::new(directory.as_os_str().as_bytes())
        .map_err(|_| format!("the directory {} has a NUL byte", directory.display()))?;
    let file_name = c_text(file_name);
    let (app_name, app_version) = (c_text(APP_NAME), c_text(env!("CARGO_PKG_VERSION")));
    let core = DECLARED_CORE_API;
    let backend_version = c_text(&format!("{}.{}.{}", core.major, core.minor, core.patch));
    let serialization_header = sp::SerializationFileHeader {
        app_name: app_name.as_ptr(),
        app_version: app_version.as_ptr(),
        backend_version: backend_version.as_ptr(),
    };
    let mut config = sp::SerializationTargetConfig {
        config_type: sp::SerializationTargetConfigType::SERIALIZATION_HEADER,
        value: sp::SerializationTargetConfigValue { serialization_header },
    };
    let target = sp::SerializationTarget {
        target_type: sp::SerializationTargetType::FILE,
        file: sp::SerializationTargetFile { file_name: file_name.as_ptr(), file_directory: directory.as_ptr() },
    };
    let graph = c_text(context.graph_name);
    let records = records(readouts);
    if records.is_empty() {
        // A target on the new file writes the header: the log exists, with no record.
        return with_target(api, target, &mut config, |_| Ok(()));
    }
    records.iter().try_for_each(|record| {
        with_target(api, target, &mut config, |handle| serialize_record(api, handle, record, &graph))
    })
}

/// Creates a target on `target` with `config`, runs `serialize` on it and frees it (on every path): libQnnSystem
/// writes what a target serialized as one length-prefixed block when it is freed, so each record gets its own
/// target, as ORT gives each QNN call's events.
fn with_target(
    api: &ProfileApi,
    target: sp::SerializationTarget,
    config: &mut sp::SerializationTargetConfig,
    serialize: impl FnOnce(sp::SerializationTargetHandle) -> Result<(), String>,
) -> Result<(), String> {
    let mut handle: sp::SerializationTargetHandle = std::ptr::null_mut();
    // SAFETY: the target's and the config's strings outlive the call (the caller's); a valid out-pointer.
    let status = unsafe { (api.create)(target, config, 1, &mut handle) };
    if error_code(status) != 0 {
        return Err(status_text("systemProfileCreateSerializationTarget", status));
    }
    if handle.is_null() {
        return Err("systemProfileCreateSerializationTarget answered no target".into());
    }
    let serialized = serialize(handle);
    // SAFETY: the target created above, freed once.
    let status = unsafe { (api.free)(handle) };
    serialized?;
    match error_code(status) {
        0 => Ok(()),
        _ => Err(status_text("systemProfileFreeSerializationTarget", status)),
    }
}

impl HostSystemLibrary {
    /// Its System Profile functions, or why it has none ([`profile_api`]).
    pub fn profile_api(&self) -> Result<ProfileApi, Unavailable> {
        profile_api(self.system_api_version(), || *self.table())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(event_type: u32, depth: u32) -> ProfileEvent {
        ProfileEvent { event_type, unit: 1, value: 5, depth, identifier: format!("e{event_type}") }
    }

    #[test]
    fn the_table_is_read_only_from_a_version_that_has_the_entries() {
        let never = || -> SystemInterfaceTable { panic!("the table of an older version was read") };
        assert_eq!(profile_api(Version::new(1, 6, 9), never).unwrap_err(), Unavailable::TooOld(Version::new(1, 6, 9)));
        let too_old = profile_api(Version::new(1, 3, 0), never).unwrap_err();
        assert_eq!(too_old.to_string(), "system API 1.3.0; needs 1.7");
        assert!(matches!(profile_api(Version::new(2, 9, 0), never), Err(Unavailable::TooOld(_))));
        let empty = profile_api(Version::new(1, 15, 0), SystemInterfaceTable::default).unwrap_err();
        assert_eq!(
            empty.to_string(),
            "system API 1.15.0, but its systemProfileCreateSerializationTarget entry is null"
        );
        unsafe extern "C" fn create(
            _: sp::SerializationTarget,
            _: *mut sp::SerializationTargetConfig,
            _: u32,
            _: *mut sp::SerializationTargetHandle,
        ) -> ErrorHandle {
            0
        }
        unsafe extern "C" fn free(_: sp::SerializationTargetHandle) -> ErrorHandle {
            0
        }
        let partial = || SystemInterfaceTable {
            system_profile_create_serialization_target: Some(create),
            system_profile_free_serialization_target: Some(free),
            ..SystemInterfaceTable::default()
        };
        let missing = profile_api(Version::new(1, 7, 0), partial).unwrap_err();
        assert_eq!(missing, Unavailable::NullEntry(Version::new(1, 7, 0), "systemProfileSerializeEventData"));
    }

    #[test]
    fn events_become_one_record_per_call_their_types_name() {
        let htp_execute = [event(8001, 0), event(3003, 0), event(404, 1), event(404, 1), event(3004, 0), event(400, 0)];
        let readout = |events: &[ProfileEvent]| Readout { events: events.to_vec(), started_us: 7, stopped_us: 9 };
        let methods = |readouts: &[Readout]| {
            records(readouts).into_iter().map(|r| (r.method, r.events.len())).collect::<Vec<_>>()
        };
        let records_of = |events: &[ProfileEvent]| methods(&[readout(events)]);
        assert_eq!(records_of(&htp_execute), [(MethodType::BACKEND_EXECUTE, 4)]);
        let one = [readout(&htp_execute)];
        let execute = &records(&one)[0];
        assert_eq!((execute.started_us, execute.stopped_us), (7, 9), "a record carries its readout's times");
        assert_eq!(execute.events[1].1.len(), 2, "the node events hang under the cycles event");
        let whole = [event(100, 0), event(300, 0), event(3004, 0), event(400, 0), event(400, 0), event(3010, 0)];
        assert_eq!(
            records_of(&whole),
            [
                (MethodType::BACKEND_CREATE_FROM_BINARY, 1),
                (MethodType::BACKEND_FINALIZE, 1),
                (MethodType::BACKEND_EXECUTE, 2),
                (MethodType::BACKEND_EXECUTE, 1),
                (MethodType::NONE, 1)
            ]
        );
        // A sub-event with no top-level event before it counts as one; no events, no records.
        assert_eq!(records_of(&[event(404, 1), event(404, 1)]), [(MethodType::NONE, 1)]);
        assert!(records(&[]).is_empty());
        // Each readout is split on its own: a readout's trailing backend events never join the next readout's call.
        let load = readout(&[event(3010, 0)]);
        let execute = readout(&[event(3004, 0), event(400, 0)]);
        assert_eq!(methods(&[load, execute]), [(MethodType::NONE, 1), (MethodType::BACKEND_EXECUTE, 2)]);
    }
}
