//! A reader for the binary profile log that libQnnSystem's System Profile API writes (the file qnn-profile-viewer
//! reads): its record framing, and the FlatBuffers tables inside each record as far as the bytes establish them.
//!
//! No public description of this format exists. What is read here was established from ONNX Runtime's QNN EP logs
//! (onnxruntime-qnn 2.7.0, whose libQnnSystem ships with QNN 2.51), written at basic and at detailed profiling and in
//! separate runs, held against what ORT passes to the API (QnnSystemProfile_ProfileData_t, the serialization
//! header config) and against the CSV ORT writes beside the log from the same events; and from logs written through
//! the same libQnnSystem with chosen values (`the_log_reader_reads_back_chosen_values` in tests/qnn_profile_log.rs
//! writes one), which name the fields ORT's logs never have.
//!
//! Established, and read strictly (anything else is an error naming the byte offset):
//! - Framing: the file is a sequence of records, each a little-endian u32 length then that many bytes, and it ends
//!   at a record boundary. A serialization target writes one record, holding every ProfileData_t given to it
//!   (ORT makes a target for each QNN call, so its records hold one each).
//! - Each record is one FlatBuffers buffer: a u32 offset of the root table; a table starts with an i32 that, taken
//!   from the table's position, gives its vtable; a vtable is a u16 vtable size, a u16 table size and one u16
//!   offset per field (0: the field is absent and takes the schema's default, 0 for every field here: an event's
//!   absent value is a Time of 0 in ORT's CSV); references to strings, vectors and tables are u32 offsets from where
//!   they are stored; a string is a u32 length, its bytes and a NUL; a vector is a u32 count and that many
//!   references.
//! - The tables, by field index:
//!   - root: 0 the header table (only in a file's first record), 1 a vector of profile-data tables (one per
//!     ProfileData_t given to the target, in order).
//!   - header: 0 a u32 that is 0x358637BD in every log (a marker); 1 a u64 wall-clock time in microseconds since
//!     the epoch; 2 a u64 on the steady clock of the records' times; 3 a table of which only field 0 (a u32, 2)
//!     and field 3 (a byte, 1) are ever present; 4 appVersion; 5 backendVersion; 6 appName (strings).
//!   - profile data: 0 a table {0 a u64 steady-clock time after the stop time, 1 the ProfileData_t's index
//!     among the target's (u64)}; 1 methodType (a
//!     byte); 2 a table {0 startTime, 1 stopTime, 2 startMem, 3 stopMem (u64 each), 4 a byte}; 3 a byte; 4 the root
//!     events (a vector of event tables); 5 graphName. Visibility PRIVATE sets both bytes (profile data's field 3
//!     and the times table's field 4) to 1; PUBLIC leaves both absent.
//!   - event: 0 identifier; 1 type (u32); 2 the value when it is an unsigned 64-bit one (u64); 3 unit (u32);
//!     4 sub-events (a vector of event tables, absent when there are none); 5 the value's kind (u32: 2 for basic
//!     event data and for an extended UINT_64 scalar, 3 for a FLOAT_32 scalar); 7 a FLOAT_32 value (f32);
//!     10 the extended data's timestamp (u64).
//!
//! Not established, so not read: what the header's marker and field 3 table mean; the other value kinds (an
//! event's fields 6, 8 and 9) and any field beyond the ones above: a table with a field present that is not listed
//! is refused. Field widths are the gaps the vtables leave: methodType and the visibility bytes are one byte, the
//! other scalars read as u32 fit four bytes, the times, memory and u64 values eight. The bytes themselves cannot be
//! compared between two logs: the layout (table sizes, padding, where the serializer put each vtable) follows string
//! lengths and which values are 0, so logs are compared through what this reads.

use std::fmt;

/// One record: where its length prefix starts in the file, and the bytes after the prefix.
pub struct Record<'a> {
    pub offset: usize,
    pub bytes: &'a [u8],
}

/// Splits a log file into its records, refusing a file that does not end at a record boundary.
pub fn records(file: &[u8]) -> Result<Vec<Record<'_>>, String> {
    let mut found = Vec::new();
    let mut offset = 0;
    while offset < file.len() {
        let length = read_u32(file, offset)
            .ok_or(format!("byte {offset}: {} byte(s) left, too few for a record length", file.len() - offset))?
            as usize;
        if length == 0 {
            return Err(format!("byte {offset}: a record of length 0"));
        }
        let start = offset + 4;
        let end = start + length;
        if end > file.len() {
            return Err(format!(
                "byte {offset}: a record of {length} bytes runs past the end of the file ({} bytes)",
                file.len()
            ));
        }
        found.push(Record { offset, bytes: &file[start..end] });
        offset = end;
    }
    Ok(found)
}

/// A whole log, decoded.
#[derive(Debug)]
pub struct Log {
    pub records: Vec<LogRecord>,
}

/// One record, decoded.
#[derive(Debug)]
pub struct LogRecord {
    /// Where the record's length prefix is in the file.
    pub offset: usize,
    pub header: Option<Header>,
    pub data: Vec<ProfileData>,
}

/// The serialization header: the record that opens a new file.
#[derive(Debug)]
pub struct Header {
    pub marker: u32,
    pub wall_clock_us: u64,
    /// Field 2: a time on the steady clock of the records' times (the library's, when it made the target).
    pub steady_us: u64,
    /// The field 3 table's field 0 and field 3 (meaning not established).
    pub field_3: (u32, u8),
    pub app_version: String,
    pub backend_version: String,
    pub app_name: String,
}

/// One QnnSystemProfile_ProfileData_t.
#[derive(Debug)]
pub struct ProfileData {
    /// Field 0's time (steady clock, after `stop_us`).
    pub written_us: u64,
    /// Field 0's index: its place among the data the target was given (0 first).
    pub index: u64,
    pub method: u8,
    pub start_us: u64,
    pub stop_us: u64,
    pub start_mem: u64,
    pub stop_mem: u64,
    /// Profile data's field 3 and the times table's field 4: 1 each when visibility is PRIVATE.
    pub visibility: (u8, u8),
    pub events: Vec<Event>,
    pub graph_name: String,
}

/// One profile event.
#[derive(Debug)]
pub struct Event {
    pub identifier: String,
    pub event_type: u32,
    pub value: u64,
    pub unit: u32,
    pub value_kind: u32,
    pub float_value: Option<f32>,
    pub timestamp: u64,
    pub sub_events: Vec<Event>,
}

/// Decodes a whole log file: its framing, then every record's tables.
pub fn parse(file: &[u8]) -> Result<Log, String> {
    let mut decoded = Vec::new();
    for record in records(file)? {
        let context = |error: String| format!("record at byte {}: {error}", record.offset);
        let root = Table::root(record.bytes).map_err(context)?;
        let parsed = parse_record(&root).map_err(context)?;
        decoded.push(LogRecord { offset: record.offset, header: parsed.0, data: parsed.1 });
    }
    Ok(Log { records: decoded })
}

fn parse_record(root: &Table) -> Result<(Option<Header>, Vec<ProfileData>), String> {
    root.only_fields("the root table", &[0, 1])?;
    let header = root.table(0)?.map(|table| parse_header(&table)).transpose()?;
    let data = root.tables(1)?.ok_or("the root table has no profile data (field 1)")?;
    let data = data.iter().map(parse_data).collect::<Result<Vec<_>, _>>()?;
    Ok((header, data))
}

fn parse_header(table: &Table) -> Result<Header, String> {
    table.only_fields("the header", &[0, 1, 2, 3, 4, 5, 6])?;
    let inner = table.table(3)?.ok_or("the header has no field 3 table")?;
    inner.only_fields("the header's field 3 table", &[0, 3])?;
    Ok(Header {
        marker: table.scalar(0, 4)?.unwrap_or(0) as u32,
        wall_clock_us: table.scalar(1, 8)?.unwrap_or(0),
        steady_us: table.scalar(2, 8)?.unwrap_or(0),
        field_3: (inner.scalar(0, 4)?.unwrap_or(0) as u32, inner.scalar(3, 1)?.unwrap_or(0) as u8),
        app_version: table.string(4)?.unwrap_or_default(),
        backend_version: table.string(5)?.unwrap_or_default(),
        app_name: table.string(6)?.unwrap_or_default(),
    })
}

fn parse_data(table: &Table) -> Result<ProfileData, String> {
    table.only_fields("a profile-data table", &[0, 1, 2, 3, 4, 5])?;
    let written = table.table(0)?.ok_or("a profile-data table has no field 0 table")?;
    written.only_fields("a profile-data table's field 0 table", &[0, 1])?;
    let times = table.table(2)?.ok_or("a profile-data table has no times (field 2)")?;
    times.only_fields("a profile-data table's times", &[0, 1, 2, 3, 4])?;
    let events = table.tables(4)?.unwrap_or_default();
    Ok(ProfileData {
        written_us: written.scalar(0, 8)?.unwrap_or(0),
        index: written.scalar(1, 8)?.unwrap_or(0),
        method: table.scalar(1, 1)?.unwrap_or(0) as u8,
        start_us: times.scalar(0, 8)?.unwrap_or(0),
        stop_us: times.scalar(1, 8)?.unwrap_or(0),
        start_mem: times.scalar(2, 8)?.unwrap_or(0),
        stop_mem: times.scalar(3, 8)?.unwrap_or(0),
        visibility: (table.scalar(3, 1)?.unwrap_or(0) as u8, times.scalar(4, 1)?.unwrap_or(0) as u8),
        events: events.iter().map(|event| parse_event(event, 0)).collect::<Result<_, _>>()?,
        graph_name: table.string(5)?.unwrap_or_default(),
    })
}

/// How deep sub-events may nest before the reader takes the file for a loop (ORT's logs nest one level).
const DEEPEST_SUB_EVENT: usize = 8;

fn parse_event(table: &Table, depth: usize) -> Result<Event, String> {
    if depth > DEEPEST_SUB_EVENT {
        return Err(format!("the event at byte {} is nested deeper than {DEEPEST_SUB_EVENT}", table.position));
    }
    table.only_fields("an event table", &[0, 1, 2, 3, 4, 5, 7, 10])?;
    let sub_events = table.tables(4)?.unwrap_or_default();
    Ok(Event {
        identifier: table.string(0)?.unwrap_or_default(),
        event_type: table.scalar(1, 4)?.unwrap_or(0) as u32,
        value: table.scalar(2, 8)?.unwrap_or(0),
        unit: table.scalar(3, 4)?.unwrap_or(0) as u32,
        value_kind: table.scalar(5, 4)?.unwrap_or(0) as u32,
        float_value: table.scalar(7, 4)?.map(|bits| f32::from_bits(bits as u32)),
        timestamp: table.scalar(10, 8)?.unwrap_or(0),
        sub_events: sub_events.iter().map(|event| parse_event(event, depth + 1)).collect::<Result<_, _>>()?,
    })
}

/// A FlatBuffers table in one record's bytes.
struct Table<'a> {
    buffer: &'a [u8],
    position: usize,
    size: usize,
    /// Each field's offset in the table (0: absent).
    fields: Vec<usize>,
}

impl<'a> Table<'a> {
    fn root(buffer: &'a [u8]) -> Result<Table<'a>, String> {
        let position = read_u32(buffer, 0).ok_or("no root offset")? as usize;
        Table::at(buffer, position)
    }

    fn at(buffer: &'a [u8], position: usize) -> Result<Table<'a>, String> {
        let back = read_u32(buffer, position).ok_or(format!("a table at byte {position} is past the end"))? as i32;
        let vtable = usize::try_from(position as i64 - back as i64)
            .map_err(|_| format!("table at {position}: its vtable would be before the record"))?;
        let vtable_size =
            read_u16(buffer, vtable).ok_or(format!("table at {position}: its vtable {vtable} is outside"))?;
        let size = read_u16(buffer, vtable + 2).ok_or(format!("table at {position}: vtable {vtable} is cut"))? as usize;
        if vtable_size < 4 || vtable_size % 2 != 0 || vtable + vtable_size as usize > buffer.len() {
            return Err(format!("table at {position}: vtable {vtable} has a bad size {vtable_size}"));
        }
        if size < 4 || position + size > buffer.len() {
            return Err(format!("table at {position}: its size {size} runs past the record ({} bytes)", buffer.len()));
        }
        let fields: Vec<usize> = (0..(vtable_size as usize - 4) / 2)
            .map(|index| read_u16(buffer, vtable + 4 + 2 * index).unwrap() as usize)
            .collect();
        if let Some(index) = fields.iter().position(|&offset| (offset != 0 && offset < 4) || offset >= size) {
            return Err(format!(
                "table at {position}: field {index}'s offset {} is outside its {size} bytes",
                fields[index]
            ));
        }
        Ok(Table { buffer, position, size, fields })
    }

    fn present(&self, index: usize) -> Option<usize> {
        self.fields.get(index).copied().filter(|&offset| offset != 0).map(|offset| self.position + offset)
    }

    /// Fails if a field other than `allowed` is present.
    fn only_fields(&self, what: &str, allowed: &[usize]) -> Result<(), String> {
        match (0..self.fields.len()).find(|index| self.present(*index).is_some() && !allowed.contains(index)) {
            Some(index) => Err(format!("{what} (byte {}) has field {index}, which no ORT log has", self.position)),
            None => Ok(()),
        }
    }

    fn scalar(&self, index: usize, width: usize) -> Result<Option<u64>, String> {
        let Some(at) = self.present(index) else { return Ok(None) };
        if at + width > self.position + self.size {
            return Err(format!(
                "table at {}: field {index} ({width} bytes at {at}) runs past the table",
                self.position
            ));
        }
        let mut bytes = [0u8; 8];
        bytes[..width].copy_from_slice(&self.buffer[at..at + width]);
        Ok(Some(u64::from_le_bytes(bytes)))
    }

    fn reference(&self, index: usize) -> Result<Option<usize>, String> {
        let Some(at) = self.present(index) else { return Ok(None) };
        let relative = read_u32(self.buffer, at).ok_or(format!("field {index} at {at} is cut"))? as usize;
        let target = at + relative;
        if relative == 0 || target >= self.buffer.len() {
            return Err(format!("table at {}: field {index} refers to byte {target}, outside", self.position));
        }
        Ok(Some(target))
    }

    fn string(&self, index: usize) -> Result<Option<String>, String> {
        let Some(at) = self.reference(index)? else { return Ok(None) };
        let length = read_u32(self.buffer, at).ok_or(format!("string at {at} is cut"))? as usize;
        let text = self.buffer.get(at + 4..at + 4 + length).ok_or(format!("string at {at} runs past the record"))?;
        if self.buffer.get(at + 4 + length) != Some(&0) {
            return Err(format!("string at {at} ({length} bytes) has no NUL after it"));
        }
        String::from_utf8(text.to_vec()).map(Some).map_err(|_| format!("string at {at} is not UTF-8"))
    }

    fn table(&self, index: usize) -> Result<Option<Table<'a>>, String> {
        self.reference(index)?.map(|at| Table::at(self.buffer, at)).transpose()
    }

    fn tables(&self, index: usize) -> Result<Option<Vec<Table<'a>>>, String> {
        let Some(at) = self.reference(index)? else { return Ok(None) };
        let count = read_u32(self.buffer, at).ok_or(format!("vector at {at} is cut"))? as usize;
        let mut found = Vec::new();
        for slot in (0..count).map(|element| at + 4 + 4 * element) {
            let relative = read_u32(self.buffer, slot).ok_or(format!("vector at {at}: element at {slot} is cut"))?;
            found.push(Table::at(self.buffer, slot + relative as usize)?);
        }
        Ok(Some(found))
    }
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at.checked_add(4)?)?.try_into().unwrap()))
}

fn read_u16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at.checked_add(2)?)?.try_into().unwrap()))
}

impl fmt::Display for Event {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(
            formatter,
            "{:?} (type {}, unit {}, value kind {})",
            self.identifier, self.event_type, self.unit, self.value_kind
        )
    }
}
