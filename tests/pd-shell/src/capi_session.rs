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
//! - [`STEP_GET_PARAM`]: value a parameter id, bytes the buffer lent to `get_param` (`actual_data_len` =
//!   `max_data_len` = its length, as SPF's gen_topo_capi_get_param passes the client's room);
//! - [`STEP_PROCESS`]: value the channel count, bytes an `i64` timestamp then the channels' samples in equal parts
//!   (a [`STEP_PROCESS_LAYOUT`] of layout 2, the input flags timestamp-valid and version 2);
//! - [`STEP_PROCESS_LAYOUT`]: value the channel count, bytes `u32 layout` (CAPI's `data_interleaving`: 0
//!   interleaved, 1 deinterleaved packed, 2 deinterleaved unpacked), `u32` input stream flags, `i64` timestamp,
//!   then the frame's bytes in that layout: `process` in place, one buffer holding every channel for 0 and 1 (its
//!   `actual_data_len` counting them all), one buffer per channel for 2; the output stream preset as SPF's
//!   gen_topo_module_process presets it (the input's timestamp, its timestamp-valid, ts_continue and erasure
//!   flags, version 2; nothing else);
//! - [`STEP_SET_PROPERTY_AS_SPF`]: value the payload's `max_data_len` (SPF leaves it unset), bytes `u32` property
//!   id, `u32 port` ([`port_word`]), then the payload (its length the `actual_data_len`);
//! - [`STEP_REGISTER_AS_SPF`]: REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2 as SPF's gen_topo_capi_register_event_v2 makes
//!   it: value the payload's `max_data_len`, bytes `u64 dest_address, u32 token, u32 event_id, u32 is_register,
//!   u32 event_cfg.max_data_len`, then the event configuration; the driver builds the target's struct with
//!   `event_cfg` pointing at the configuration (not inline), the payload's `actual_data_len` the struct's size plus
//!   the configuration's length;
//! - [`STEP_GET_PROPERTY`]: value a property id, bytes `u32 port` ([`port_word`]) then the room lent to
//!   `get_properties` (`actual_data_len` 0).
//!
//! Transcript records: [`RECORD_OPENED`] (value init's answer; bytes INIT_MEMORY_REQUIREMENT and STACK_SIZE as
//! `u32`s), then per step the [`RECORD_EVENT`]s it raised (value the event id; bytes its payload, for
//! DATA_TO_DSP_CLIENT_V2 preceded by `u64 dest_address, u32 token, u32 event_id`) and one [`RECORD_STEP`] (value
//! the call's answer; bytes: for a process, `u32 flags` ([`METADATA_SET`] added when the module set a metadata
//! list), `i64 timestamp` of the output stream, each output buffer's
//! `u32 actual_data_len`, then the frame's bytes after the call; for a get_param, the bytes it filled; for a
//! get_properties, `u32 actual_data_len` then the bytes filled), and last [`RECORD_ENDED`] (value end's answer;
//! events raised inside `end` come just before it). Test infrastructure, not a device artifact.

use core::cell::Cell;
use core::ffi::c_void;
use lpai_direct::capi::{event, property, stream_flags, Buffer, CapiError, EventCallbackInfo, EventInfo};
use lpai_direct::capi::{EventDataToDspClientV2, FunctionTable, GetStaticPropertiesFn, InitFn, Instance, PortInfo};
use lpai_direct::capi::{Property, PropertyList, RegisterEventToDspClientV2, StreamData, StreamDataV2, EOK};

/// Step: `set_properties` with one property.
pub const STEP_SET_PROPERTY: u32 = 1;
/// Step: `set_param`.
pub const STEP_SET_PARAM: u32 = 2;
/// Step: `get_param`.
pub const STEP_GET_PARAM: u32 = 3;
/// Step: `process` one frame in place.
pub const STEP_PROCESS: u32 = 4;
/// Step: `process` one frame in place, in a given layout with given flags.
pub const STEP_PROCESS_LAYOUT: u32 = 5;
/// Step: `set_properties` with one property, its port and `max_data_len` given.
pub const STEP_SET_PROPERTY_AS_SPF: u32 = 6;
/// Step: REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2 as SPF makes it.
pub const STEP_REGISTER_AS_SPF: u32 = 7;
/// Step: `get_properties` with one property on a given port.
pub const STEP_GET_PROPERTY: u32 = 8;
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

/// Set in a process step's recorded output flags (a reserved bit) when the module set the output's metadata list.
pub const METADATA_SET: u32 = 1 << 31;

/// CAPI's layouts a process step lays its frame out in (`data_interleaving`).
pub const INTERLEAVED: u32 = 0;
/// See [`INTERLEAVED`].
pub const DEINTERLEAVED_PACKED: u32 = 1;
/// See [`INTERLEAVED`].
pub const DEINTERLEAVED_UNPACKED: u32 = 2;

/// A port as a step's `u32`: bit 0 `is_valid`, bit 1 `is_input_port`, bits 8 and up `port_index`.
pub fn port_word(port: PortInfo) -> u32 {
    u32::from(port.is_valid != 0) | u32::from(port.is_input_port != 0) << 1 | port.port_index << 8
}

/// The port a step's `u32` names ([`port_word`]).
fn port_of(word: u32) -> PortInfo {
    PortInfo { is_valid: (word & 1) as u8, is_input_port: (word >> 1 & 1) as u8, port_index: word >> 8 }
}

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

/// Splits a `u32` off the front of `bytes`.
fn take_word(bytes: &mut &mut [u8]) -> Option<u32> {
    let (word, rest) = core::mem::take(bytes).split_at_mut_checked(4)?;
    *bytes = rest;
    Some(u32::from_le_bytes((&*word).try_into().ok()?))
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
                set_properties(table, module, &mut properties, transcript);
            }
            STEP_SET_PROPERTY_AS_SPF => {
                let mut bytes = step.bytes;
                let id = take_word(&mut bytes).ok_or(malformed)?;
                let port_info = port_of(take_word(&mut bytes).ok_or(malformed)?);
                let payload = Buffer { max_data_len: step.value, ..lent(bytes) };
                set_properties(table, module, &mut [Property { id, payload, port_info }], transcript);
            }
            STEP_REGISTER_AS_SPF => register_as_spf(table, module, step, transcript).ok_or(malformed)?,
            STEP_GET_PROPERTY => {
                let mut bytes = step.bytes;
                let port = port_of(take_word(&mut bytes).ok_or(malformed)?);
                let room = Buffer { actual_data_len: 0, ..lent(bytes) };
                let mut properties = [Property { id: step.value, payload: room, port_info: port }];
                let mut list = PropertyList { count: 1, properties: properties.as_mut_ptr() };
                // SAFETY: a live module and a list whose room lives for the call.
                let answer = unsafe { (table.get_properties)(module, &mut list) };
                let mut filled_room = properties[0].payload;
                filled_room.actual_data_len = filled_room.actual_data_len.min(filled_room.max_data_len);
                let length = properties[0].payload.actual_data_len.to_le_bytes();
                // SAFETY: the module filled `actual_data_len` bytes of the step's room (clamped to its length).
                transcript.record(RECORD_STEP, answer, &[&length, unsafe { filled(&filled_room) }]);
            }
            STEP_SET_PARAM => {
                // SAFETY: a live module and a payload that lives for the call.
                let answer = unsafe { (table.set_param)(module, step.value, &port, &mut lent(step.bytes)) };
                transcript.record(RECORD_STEP, answer, &[]);
            }
            STEP_GET_PARAM => {
                let mut buffer = lent(step.bytes);
                // SAFETY: a live module and a buffer of `max_data_len` writable bytes.
                let answer = unsafe { (table.get_param)(module, step.value, &port, &mut buffer) };
                buffer.actual_data_len = buffer.actual_data_len.min(buffer.max_data_len);
                // SAFETY: the module filled `actual_data_len` bytes of the step's buffer (clamped to its length).
                transcript.record(RECORD_STEP, answer, &[unsafe { filled(&buffer) }]);
            }
            STEP_PROCESS => {
                let (timestamp, samples) = step.bytes.split_at_mut_checked(8).ok_or(malformed)?;
                let timestamp = i64::from_le_bytes((&*timestamp).try_into().map_err(|_| malformed)?);
                let flags = stream_flags::TIMESTAMP_VALID | (1 << stream_flags::VERSION_SHIFT);
                let frame = Frame { channels: step.value as usize, layout: DEINTERLEAVED_UNPACKED, flags, timestamp };
                process(table, module, frame, samples, transcript).ok_or(malformed)?
            }
            STEP_PROCESS_LAYOUT => {
                let mut bytes = step.bytes;
                let (layout, flags) =
                    (take_word(&mut bytes).ok_or(malformed)?, take_word(&mut bytes).ok_or(malformed)?);
                let (timestamp, samples) = bytes.split_at_mut_checked(8).ok_or(malformed)?;
                let timestamp = i64::from_le_bytes((&*timestamp).try_into().map_err(|_| malformed)?);
                let frame = Frame { channels: step.value as usize, layout, flags, timestamp };
                process(table, module, frame, samples, transcript).ok_or(malformed)?
            }
            _ => return Err(malformed),
        }
    }
    Ok(())
}

/// `set_properties` with `properties`, its answer into the transcript.
fn set_properties(
    table: &FunctionTable,
    module: *mut Instance,
    properties: &mut [Property],
    transcript: &Transcript<'_>,
) {
    let mut list = PropertyList { count: properties.len() as u32, properties: properties.as_mut_ptr() };
    // SAFETY: a live module and a list whose payloads live for the call.
    let answer = unsafe { (table.set_properties)(module, &mut list) };
    transcript.record(RECORD_STEP, answer, &[]);
}

/// A [`STEP_REGISTER_AS_SPF`]: the target's registration struct on the stack, its event configuration the step's
/// own bytes; `None` when the step is cut short.
fn register_as_spf(
    table: &FunctionTable,
    module: *mut Instance,
    step: Record<'_>,
    transcript: &Transcript<'_>,
) -> Option<()> {
    let mut bytes = step.bytes;
    let (low, high) = (take_word(&mut bytes)?, take_word(&mut bytes)?);
    let (token, event_id, is_register) = (take_word(&mut bytes)?, take_word(&mut bytes)?, take_word(&mut bytes)?);
    let event_config_max = take_word(&mut bytes)?;
    let event_config = Buffer { max_data_len: event_config_max, ..lent(bytes) };
    let mut registration = RegisterEventToDspClientV2 {
        dest_address: u64::from(low) | u64::from(high) << 32,
        token,
        event_id,
        is_register: u8::from(is_register != 0),
        event_config,
    };
    let actual = (size_of::<RegisterEventToDspClientV2>() as u32).checked_add(event_config.actual_data_len)?;
    let payload = Buffer {
        data: (&mut registration as *mut RegisterEventToDspClientV2).cast(),
        actual_data_len: actual,
        max_data_len: step.value,
    };
    let port_info = PortInfo { is_valid: 0, is_input_port: 0, port_index: 0x5A5A_5A5A };
    let id = lpai_direct::capi::property::REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2;
    set_properties(table, module, &mut [Property { id, payload, port_info }], transcript);
    Some(())
}

/// One frame of a process step: its channels, layout, input flags and timestamp.
struct Frame {
    channels: usize,
    layout: u32,
    flags: u32,
    timestamp: i64,
}

/// One process step: the frame's `samples` in place, in its layout; `None` when they do not split into its
/// channels or the layout is none of the three.
fn process(
    table: &FunctionTable,
    module: *mut Instance,
    frame: Frame,
    samples: &mut [u8],
    transcript: &Transcript<'_>,
) -> Option<()> {
    let channels = frame.channels;
    if !(1..=MAX_CHANNELS).contains(&channels)
        || !samples.len().is_multiple_of(channels)
        || frame.layout > DEINTERLEAVED_UNPACKED
    {
        return None;
    }
    let empty = Buffer { data: core::ptr::null_mut(), actual_data_len: 0, max_data_len: 0 };
    let mut inputs = [empty; MAX_CHANNELS];
    let buffers = if frame.layout == DEINTERLEAVED_UNPACKED {
        let each = samples.len() / channels;
        for (buffer, bytes) in inputs.iter_mut().zip(samples.chunks_exact_mut(each.max(1))) {
            *buffer = lent(bytes);
        }
        channels
    } else {
        inputs[0] = lent(samples);
        1
    };
    let mut outputs = inputs.map(|buffer| Buffer { actual_data_len: 0, ..buffer });
    let mut input = StreamDataV2 {
        flags: frame.flags,
        timestamp: frame.timestamp,
        buffers: inputs.as_mut_ptr(),
        buffer_count: buffers as u32,
        metadata_list: core::ptr::null_mut(),
    };
    // SPF's gen_topo_module_process presets a SISO module's empty output: the timestamp (less the algorithmic
    // delay, 0 here), its valid, ts_continue and erasure flags from the input, the stream data version.
    let carried = stream_flags::TIMESTAMP_VALID | stream_flags::TIMESTAMP_CONTINUE | stream_flags::ERASURE;
    let preset = (frame.flags & carried) | (1 << stream_flags::VERSION_SHIFT);
    let mut output = StreamDataV2 {
        flags: preset,
        timestamp: frame.timestamp,
        buffers: outputs.as_mut_ptr(),
        buffer_count: buffers as u32,
        metadata_list: core::ptr::null_mut(),
    };
    let input_port = (&mut input as *mut StreamDataV2).cast::<StreamData>();
    let output_port = (&mut output as *mut StreamDataV2).cast::<StreamData>();
    let (mut input_port, mut output_port) = (input_port, output_port);
    // SAFETY: a live module; the streams (version 2, whose first fields are a version 1 stream's) and buffers live
    // for the call, the outputs on the inputs' memory.
    let answer = unsafe { (table.process)(module, &mut input_port, &mut output_port) };
    let mut lengths = [0u8; 4 * MAX_CHANNELS];
    for (bytes, buffer) in lengths.chunks_exact_mut(4).zip(&outputs[..buffers]) {
        bytes.copy_from_slice(&buffer.actual_data_len.to_le_bytes());
    }
    // A module without the metadata extension must leave the metadata list alone: one it set shows as
    // [`METADATA_SET`] in the recorded flags.
    let flags = match output.metadata_list.is_null() {
        true => output.flags,
        false => output.flags | METADATA_SET,
    };
    let header = [&flags.to_le_bytes()[..], &output.timestamp.to_le_bytes(), &lengths[..4 * buffers]];
    transcript.record(RECORD_STEP, answer, &[header[0], header[1], header[2], samples]);
    Some(())
}
