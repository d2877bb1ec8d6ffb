//! `OUTPUT_DIR/qnn-profiling-data_<n>.csv`: a profiled run's QNN profile events in the CSV that ONNX Runtime's QNN
//! execution provider writes (and qnn-profile-viewer's CSV output has): a header line, then one row an event, in
//! the order QNN lists them, each top-level event followed by its sub-events.
//!
//! The columns are [`HEADER`]'s. `Msg Timestamp` is the event's extended-data timestamp, 0: the log carries the
//! events as extended data with timestamp 0 ([`crate::profile_log`]), as HTP's own extended data has it. `Message`
//! names the event type as ORT does ([`message`]), `Time` is the value, `Unit of Measurement` the unit
//! ([`unit()`]), `Timing Source` is always `BACKEND`, `Event Level` `ROOT` for a top-level event and `SUB-EVENT`
//! below it, `Event Identifier` the backend's name for the event (`NULL` when it has none). As in ORT's file,
//! nothing is quoted; a line break in an identifier is written as a space, so that each event stays one row.

use lpai_direct::qnn::profile::{ProfileEventType, ProfileEventUnit};
use lpai_direct_stub::stub::ProfileEvent;
use std::fmt::Write as _;

/// The header line (without its line break).
pub const HEADER: &str = "Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier";

/// The `Msg Timestamp` of every row: the timestamp the log gives the events.
pub const TIMESTAMP: u64 = 0;

/// The `Message` of an event of QNN type `event_type`, as ORT writes it.
pub fn message(event_type: u32) -> &'static str {
    match ProfileEventType(event_type) {
        ProfileEventType::INIT => "INIT",
        ProfileEventType::FINALIZE => "FINALIZE",
        ProfileEventType::EXECUTE => "EXECUTE",
        ProfileEventType::NODE => "NODE",
        ProfileEventType::EXECUTE_QUEUE_WAIT => "EXECUTE QUEUE WAIT",
        ProfileEventType::EXECUTE_PREPROCESS => "EXECUTE PREPROCESS",
        ProfileEventType::EXECUTE_DEVICE => "EXECUTE DEVICE",
        ProfileEventType::EXECUTE_POSTPROCESS => "EXECUTE POSTPROCESS",
        ProfileEventType::DEINIT => "DE-INIT",
        _ if event_type >= ProfileEventType::BACKEND.0 => "BACKEND",
        _ => "UNKNOWN",
    }
}

/// The `Unit of Measurement` of QNN unit `unit`, as ORT writes it (NONE and unknown units are `UNKNOWN`).
pub fn unit(unit: u32) -> &'static str {
    match ProfileEventUnit(unit) {
        ProfileEventUnit::MICROSEC => "US",
        ProfileEventUnit::BYTES => "BYTES",
        ProfileEventUnit::CYCLES => "CYCLES",
        ProfileEventUnit::COUNT => "COUNT",
        ProfileEventUnit::OBJECT => "OBJECT",
        ProfileEventUnit::BACKEND => "BACKEND",
        _ => "UNKNOWN",
    }
}

/// The `Event Level` of an event at `depth` (0 top level).
pub fn level(depth: u32) -> &'static str {
    if depth == 0 {
        "ROOT"
    } else {
        "SUB-EVENT"
    }
}

/// The `Event Identifier` of a backend's name for an event: `NULL` for none, line breaks as spaces.
fn identifier(name: &str) -> String {
    if name.is_empty() {
        return "NULL".into();
    }
    name.chars().map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c }).collect()
}

/// The whole file: [`HEADER`], then one row an event; every line ends with a line break.
pub fn render<'e>(events: impl IntoIterator<Item = &'e ProfileEvent>) -> String {
    let mut text = format!("{HEADER}\n");
    for event in events {
        let _ = writeln!(
            text,
            "{TIMESTAMP},{},{},{},BACKEND,{},{}",
            message(event.event_type),
            event.value,
            unit(event.unit),
            level(event.depth),
            identifier(&event.identifier)
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(event_type: u32, unit: u32, value: u64, depth: u32, identifier: &str) -> ProfileEvent {
        ProfileEvent { event_type, unit, value, depth, identifier: identifier.into() }
    }

    #[test]
    fn each_event_is_a_row_in_ort_s_columns_and_names() {
        let events = [
            event(8001, 4, 0, 0, "Number of HVX threads used"),
            event(3003, 3, 274934, 0, "Accelerator (execute) time (cycles)"),
            event(404, 3, 93007, 1, "conv1_token_1:OpId_23 (cycles)"),
            event(400, 1, 2354, 0, "QNN (execute) time"),
            event(100, 2, 7, 0, ""),
            event(600, 6, 1, 1, "two\nlines"),
        ];
        assert_eq!(
            render(&events),
            "Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier\n\
             0,BACKEND,0,COUNT,BACKEND,ROOT,Number of HVX threads used\n\
             0,BACKEND,274934,CYCLES,BACKEND,ROOT,Accelerator (execute) time (cycles)\n\
             0,NODE,93007,CYCLES,BACKEND,SUB-EVENT,conv1_token_1:OpId_23 (cycles)\n\
             0,EXECUTE,2354,US,BACKEND,ROOT,QNN (execute) time\n\
             0,INIT,7,BYTES,BACKEND,ROOT,NULL\n\
             0,UNKNOWN,1,UNKNOWN,BACKEND,SUB-EVENT,two lines\n"
        );
        assert_eq!(render(&[]), format!("{HEADER}\n"));
    }

    #[test]
    fn every_message_and_unit_ort_names() {
        let messages: Vec<&str> =
            [100, 300, 400, 404, 405, 406, 407, 408, 500, 600, 999, 1000, 3004].into_iter().map(message).collect();
        assert_eq!(
            messages,
            [
                "INIT",
                "FINALIZE",
                "EXECUTE",
                "NODE",
                "EXECUTE QUEUE WAIT",
                "EXECUTE PREPROCESS",
                "EXECUTE DEVICE",
                "EXECUTE POSTPROCESS",
                "DE-INIT",
                "UNKNOWN",
                "UNKNOWN",
                "BACKEND",
                "BACKEND"
            ]
        );
        let units: Vec<&str> = [1, 2, 3, 4, 5, 6, 7, 1000].into_iter().map(unit).collect();
        assert_eq!(units, ["US", "BYTES", "CYCLES", "COUNT", "OBJECT", "UNKNOWN", "UNKNOWN", "BACKEND"]);
        assert_eq!((level(0), level(1), level(2)), ("ROOT", "SUB-EVENT", "SUB-EVENT"));
    }
}
