//! A CAPI session: the framework's side of an audio module (AudioReach CAPI), as SPF drives it, run from a script
//! of steps and written down as a transcript. The same session runs the host build of the module in a test and its
//! Hexagon build in the virtual aDSP (`lpai-pd-shell --capi`), and the two transcripts are compared.
//!
//! A session and a transcript are both a run of records, each `u32 kind, u32 value, u32 length`, then `length`
//! bytes and zeros up to a multiple of 4 (little-endian, as on both targets).
//!
//! Session steps, after the driver has asked the static properties and called init:
//! - [`STEP_SET_PROPERTY`]: value a property id, bytes its payload (`set_properties`, one property);
//! - [`STEP_SET_PARAM`]: value a parameter id, bytes its payload (`set_param`);
//! - [`STEP_GET_PARAM`]: value a parameter id, bytes the buffer lent to `get_param`;
//! - [`STEP_PROCESS`]: value the channel count, bytes an `i64` timestamp then the channels' samples in equal parts
//!   (`process` in place, one deinterleaved buffer per channel, the same buffers as input and output).
//!
//! Transcript records: [`RECORD_OPENED`] (value init's answer; bytes INIT_MEMORY_REQUIREMENT and STACK_SIZE as
//! `u32`s), then per step the [`RECORD_EVENT`]s it raised (value the event id; bytes its payload, for
//! DATA_TO_DSP_CLIENT_V2 preceded by `u64 dest_address, u32 token, u32 event_id`) and one [`RECORD_STEP`] (value
//! the call's answer; bytes: for a process, `u32 flags, i64 timestamp` of the output stream, each output buffer's
//! `u32 actual_data_len`, then the channels' bytes after the call; for a get_param, the bytes it filled), and last
//! [`RECORD_ENDED`] (value end's answer). Test infrastructure, not a device artifact.

use core::cell::Cell;
use core::ffi::c_void;
use lpai_direct::capi::{event, property, stream_flags, Buffer, CapiError, EventCallbackInfo, EventInfo};
use lpai_direct::capi::{EventDataToDspClientV2, FunctionTable, GetStaticPropertiesFn, InitFn, Instance, PortInfo};
use lpai_direct::capi::{Property, PropertyList, StreamData, EOK};

/// Step: `set_properties` with one property.
pub const STEP_SET_PROPERTY: u32 = 1;
/// Step: `set_param`.
pub const STEP_SET_PARAM: u32 = 2;
/// Step: `get_param`.
pub const STEP_GET_PARAM: u32 = 3;
/// Step: `process` one frame in place.
pub const STEP_PROCESS: u32 = 4;
/// Transcript: init's answer and the static properties.
pub const RECORD_OPENED: u32 = 0x10;
/// Transcript: an event the module raised.
pub const RECORD_EVENT: u32 = 0x11;
/// Transcript: a step's answer and what it gave back.
pub const RECORD_STEP: u32 = 0x12;
/// Transcript: end's answer.
pub const RECORD_ENDED: u32 = 0x13;
/// Channels a process step may carry.
pub const MAX_CHANNELS: usize = 32;

/// The module's two entry points.
#[derive(Clone, Copy)]
pub struct EntryPoints {
    /// `<tag>_get_static_properties`.
    pub get_static_properties: GetStaticPropertiesFn,
    /// `<tag>_init`.
    pub init: InitFn,
}

/// Why a session could not run to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionError {
    /// The record at this byte offset of the session is cut short, of an unknown kind, or a process step whose
    /// bytes do not split into its channels.
    Malformed {
        /// Where the record starts.
        offset: usize,
    },
    /// The module asks for more instance memory than the driver was given.
    InstanceTooBig {
        /// What it asks.
        bytes: u32,
    },
    /// The transcript buffer is full.
    TranscriptFull,
}

/// One record of a session or transcript.
pub struct Record<'a> {
    /// Its kind.
    pub kind: u32,
    /// Its value.
    pub value: u32,
    /// Its bytes.
    pub bytes: &'a mut [u8],
}

/// Splits the next record off `rest`; `None` when it is cut short.
fn next_record<'a>(rest: &mut &'a mut [u8]) -> Option<Record<'a>> {
    let taken = core::mem::take(rest);
    let word = |at: usize| Some(u32::from_le_bytes(taken.get(at..at + 4)?.try_into().ok()?));
    let (kind, value, length) = (word(0)?, word(4)?, word(8)? as usize);
    let padded = length.checked_add(3)? & !3;
    if taken.len() - 12 < padded {
        return None;
    }
    let (record, after) = taken.split_at_mut(12 + padded);
    *rest = after;
    Some(Record { kind, value, bytes: &mut record[12..12 + length] })
}

/// Iterates over the records of `bytes`; a record cut short ends it with `Err(offset)`.
pub fn records(bytes: &mut [u8]) -> impl Iterator<Item = Result<Record<'_>, usize>> {
    let total = bytes.len();
    let mut rest = bytes;
    let mut failed = false;
    core::iter::from_fn(move || {
        if rest.is_empty() || failed {
            return None;
        }
        let offset = total - rest.len();
        let record = next_record(&mut rest).ok_or(offset);
        failed = record.is_err();
        Some(record)
    })
}

/// The transcript being written: shared by the driver and the event callback, which the module calls while the
/// driver waits for it, so its bytes and cursor are cells.
struct Transcript<'t> {
    bytes: &'t [Cell<u8>],
    used: Cell<usize>,
    full: Cell<bool>,
}

impl Transcript<'_> {
    fn put(&self, bytes: &[u8]) {
        let start = self.used.get();
        match self.bytes.get(start..start + bytes.len()) {
            Some(cells) if !self.full.get() => {
                cells.iter().zip(bytes).for_each(|(cell, byte)| cell.set(*byte));
                self.used.set(start + bytes.len());
            }
            _ => self.full.set(true),
        }
    }

    /// Writes a record whose bytes are the concatenation of `parts`.
    fn record(&self, kind: u32, value: u32, parts: &[&[u8]]) {
        let length: usize = parts.iter().map(|part| part.len()).sum();
        self.put(&kind.to_le_bytes());
        self.put(&value.to_le_bytes());
        self.put(&(length as u32).to_le_bytes());
        parts.iter().for_each(|part| self.put(part));
        self.put(&[0; 3][..length.wrapping_neg() & 3]);
    }
}

/// The bytes a buffer lent to the driver holds.
///
/// # Safety
/// `buffer.data` points at `actual_data_len` readable bytes, or the length is 0.
unsafe fn filled(buffer: &Buffer) -> &[u8] {
    match buffer.data.is_null() || buffer.actual_data_len == 0 {
        true => &[],
        // SAFETY: the caller's promise.
        false => unsafe { core::slice::from_raw_parts(buffer.data.cast::<u8>(), buffer.actual_data_len as usize) },
    }
}

/// The framework's event callback: every event goes into the transcript.
///
/// # Safety
/// `context` is the session's transcript and `info` a valid event info for the call, as the module promises.
unsafe extern "C" fn raise(context: *mut c_void, id: u32, info: *mut EventInfo) -> CapiError {
    // SAFETY: the context given with the callback is the transcript, alive until `end` returns.
    let transcript = unsafe { &*context.cast::<Transcript<'_>>() };
    // SAFETY: the module's event info, valid for the call.
    let info = unsafe { &*info };
    let payload_bytes = info.payload.actual_data_len as usize;
    if id == event::DATA_TO_DSP_CLIENT_V2 && payload_bytes == size_of::<EventDataToDspClientV2>() {
        // SAFETY: this event's payload is a `capi_event_data_to_dsp_client_v2_t` (its length checked above).
        let data = unsafe { info.payload.data.cast::<EventDataToDspClientV2>().read_unaligned() };
        let client = [&data.dest_address.to_le_bytes()[..], &data.token.to_le_bytes(), &data.event_id.to_le_bytes()];
        // SAFETY: the client payload the module lends for the call.
        let payload = unsafe { filled(&data.payload) };
        transcript.record(RECORD_EVENT, id, &[client[0], client[1], client[2], payload]);
    } else {
        // SAFETY: the event's payload, lent for the call.
        transcript.record(RECORD_EVENT, id, &[unsafe { filled(&info.payload) }]);
    }
    EOK
}

/// A buffer lending `bytes`, all of them filled.
fn lent(bytes: &mut [u8]) -> Buffer {
    let length = bytes.len() as u32;
    Buffer { data: bytes.as_mut_ptr().cast(), actual_data_len: length, max_data_len: length }
}

/// One property over `payload`.
fn property(id: u32, payload: &mut [u8]) -> Property {
    Property { id, payload: lent(payload), port_info: PortInfo::default() }
}

/// Asks one static property, a `u32`.
fn static_word(entry_points: EntryPoints, id: u32) -> (CapiError, u32) {
    let mut bytes = [0u8; 4];
    let mut properties = [property(id, &mut bytes)];
    let mut list = PropertyList { count: 1, properties: properties.as_mut_ptr() };
    // SAFETY: a one-property list whose payload lives for the call; no init list.
    let answer = unsafe { (entry_points.get_static_properties)(core::ptr::null_mut(), &mut list) };
    (answer, u32::from_ne_bytes(bytes))
}

/// Runs `session` on the module: static properties, init (into `instance`, zeroed), the steps, end. Writes the
/// transcript into `transcript` and answers its length.
///
/// # Safety
/// `entry_points` must be a CAPI module's entry points, which keep the CAPI contract.
pub unsafe fn run(
    entry_points: EntryPoints,
    session: &mut [u8],
    instance: &mut [u64],
    transcript: &mut [u8],
) -> Result<usize, SessionError> {
    let transcript =
        Transcript { bytes: Cell::from_mut(transcript).as_slice_of_cells(), used: 0.into(), full: false.into() };
    let (_, memory_bytes) = static_word(entry_points, property::INIT_MEMORY_REQUIREMENT);
    let (_, stack_bytes) = static_word(entry_points, property::STACK_SIZE);
    if memory_bytes as usize > size_of_val(instance) {
        return Err(SessionError::InstanceTooBig { bytes: memory_bytes });
    }
    instance.fill(0);
    let module = instance.as_mut_ptr().cast::<Instance>();
    let mut callback =
        EventCallbackInfo { callback: Some(raise), context: (&transcript as *const Transcript<'_>).cast_mut().cast() };
    // SAFETY: the callback info's own bytes, alive through init, which copies them.
    let callback_bytes = unsafe {
        core::slice::from_raw_parts_mut((&mut callback as *mut EventCallbackInfo).cast::<u8>(), size_of_val(&callback))
    };
    let (mut heap, mut ports) = (1u32.to_ne_bytes(), [1u8, 0, 0, 0, 1, 0, 0, 0]);
    let mut init = [
        property(property::EVENT_CALLBACK_INFO, callback_bytes),
        property(property::HEAP_ID, &mut heap),
        property(property::PORT_NUM_INFO, &mut ports),
    ];
    let mut list = PropertyList { count: init.len() as u32, properties: init.as_mut_ptr() };
    // SAFETY: zeroed, 8-aligned instance memory of the size the module asked, kept until after `end`.
    let answer = unsafe { (entry_points.init)(module, &mut list) };
    transcript.record(RECORD_OPENED, answer, &[&memory_bytes.to_le_bytes(), &stack_bytes.to_le_bytes()]);
    if answer == EOK {
        // SAFETY: init succeeded: the instance's first field is the module's function table, which lives as long as
        // the module's code.
        let table = unsafe { *(*module).table };
        let steps = run_steps(&table, module, session, &transcript);
        // SAFETY: the module init set up; nothing uses it afterwards.
        let ended = unsafe { (table.end)(module) };
        transcript.record(RECORD_ENDED, ended, &[]);
        steps?;
    }
    match transcript.full.get() {
        true => Err(SessionError::TranscriptFull),
        false => Ok(transcript.used.get()),
    }
}

/// Runs every step of `session` on the live module.
fn run_steps(
    table: &FunctionTable,
    module: *mut Instance,
    session: &mut [u8],
    transcript: &Transcript<'_>,
) -> Result<(), SessionError> {
    let total = session.len();
    let mut rest = session;
    while !rest.is_empty() {
        let offset = total - rest.len();
        let malformed = SessionError::Malformed { offset };
        let step = next_record(&mut rest).ok_or(malformed)?;
        let port = PortInfo::default();
        match step.kind {
            STEP_SET_PROPERTY => {
                let mut properties = [property(step.value, step.bytes)];
                let mut list = PropertyList { count: 1, properties: properties.as_mut_ptr() };
                // SAFETY: a live module and a list whose payload lives for the call.
                let answer = unsafe { (table.set_properties)(module, &mut list) };
                transcript.record(RECORD_STEP, answer, &[]);
            }
            STEP_SET_PARAM => {
                // SAFETY: a live module and a payload that lives for the call.
                let answer = unsafe { (table.set_param)(module, step.value, &port, &mut lent(step.bytes)) };
                transcript.record(RECORD_STEP, answer, &[]);
            }
            STEP_GET_PARAM => {
                let mut buffer = Buffer { actual_data_len: 0, ..lent(step.bytes) };
                // SAFETY: a live module and a buffer of `max_data_len` writable bytes.
                let answer = unsafe { (table.get_param)(module, step.value, &port, &mut buffer) };
                buffer.actual_data_len = buffer.actual_data_len.min(buffer.max_data_len);
                // SAFETY: the module filled `actual_data_len` bytes of the step's buffer (clamped to its length).
                transcript.record(RECORD_STEP, answer, &[unsafe { filled(&buffer) }]);
            }
            STEP_PROCESS => process(table, module, step, transcript).ok_or(malformed)?,
            _ => return Err(malformed),
        }
    }
    Ok(())
}

/// One process step: the frame's channels in place; `None` when its bytes do not split into its channels.
fn process(table: &FunctionTable, module: *mut Instance, step: Record<'_>, transcript: &Transcript<'_>) -> Option<()> {
    let channels = step.value as usize;
    let (timestamp, samples) = step.bytes.split_at_mut_checked(8)?;
    let timestamp = i64::from_le_bytes((&*timestamp).try_into().ok()?);
    if !(1..=MAX_CHANNELS).contains(&channels) || samples.len() % channels != 0 {
        return None;
    }
    let each = samples.len() / channels;
    let empty = Buffer { data: core::ptr::null_mut(), actual_data_len: 0, max_data_len: 0 };
    let mut inputs = [empty; MAX_CHANNELS];
    for (buffer, bytes) in inputs.iter_mut().zip(samples.chunks_exact_mut(each.max(1))) {
        *buffer = lent(bytes);
    }
    let mut outputs = inputs.map(|buffer| Buffer { actual_data_len: 0, ..buffer });
    let flags = stream_flags::TIMESTAMP_VALID | (1 << stream_flags::VERSION_SHIFT);
    let mut input = StreamData { flags, timestamp, buffers: inputs.as_mut_ptr(), buffer_count: channels as u32 };
    let mut output =
        StreamData { flags: 0, timestamp: 0, buffers: outputs.as_mut_ptr(), buffer_count: channels as u32 };
    let (mut input_port, mut output_port) = (&mut input as *mut StreamData, &mut output as *mut StreamData);
    // SAFETY: a live module; the streams and buffers live for the call, the outputs on the inputs' memory.
    let answer = unsafe { (table.process)(module, &mut input_port, &mut output_port) };
    let mut lengths = [0u8; 4 * MAX_CHANNELS];
    for (bytes, buffer) in lengths.chunks_exact_mut(4).zip(&outputs[..channels]) {
        bytes.copy_from_slice(&buffer.actual_data_len.to_le_bytes());
    }
    let header = [&output.flags.to_le_bytes()[..], &output.timestamp.to_le_bytes(), &lengths[..4 * channels]];
    transcript.record(RECORD_STEP, answer, &[header[0], header[1], header[2], samples]);
    Some(())
}
