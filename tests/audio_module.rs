//! The audio module (AudioReach CAPI, `dsp/capi`) driven as SPF drives it, on the real libQnnHtp.so with the
//! audio_frame fixture: static properties, init, configuration, media format, model, client registration, frames
//! of stereo PCM in place; every result equals, bit for bit, ONNX Runtime's on its QNN execution provider for the
//! windows the module was fed (cut from the test's PCM by window and hop, the samples as x / 2^q; the fixture's
//! EPContext wrapper run by `scripts/ort_audio_scores.py`, so neither the runtime nor the quantizer the module
//! shares with lpai-net-run takes part; one stream holds the values where quantization is easiest to get wrong),
//! and the audio passes through untouched, in every PCM layout SPF can hand a module. Formats and frames the module
//! cannot handle are refused with an error code. The other cases are what the real SPF does that a harness written
//! from CAPI's headers may not (docs/src/audio.md): event registration with `max_data_len` unset, the output
//! format asked before the input format, the result read before the first inference, framework-owned stream flags,
//! frames of 1, 5 and 10 ms, the configuration sent after the model.

mod common;

use core::ffi::c_void;
use lpai_direct::capi::{self, event, media_format, property, Buffer, CapiError, EventCallbackInfo, EventInfo};
use lpai_direct::capi::{FunctionTable, Instance, PortInfo, Property, PropertyList, StreamData};
use lpai_direct::capi::{EBADPARAM, ENEEDMORE, ENOTREADY, EOK, EUNSUPPORTED};
use lpai_direct_capi::{capi_lpai_direct_get_static_properties, capi_lpai_direct_init};
use lpai_direct_skel::audio::config::DEFAULT_LOAD_STACK_BYTES;
use lpai_direct_skel::audio::ids::{self, ResultHeader, RESULT_HEADER_BYTES};
use lpai_direct_skel::audio::module::{PACKETS_PER_ELEMENT, PACKETS_PER_FRAME, PACKETS_PER_INFERENCE};

/// An event the module raised: its id, port and payload (for DATA_TO_DSP_CLIENT_V2: the client's token, event
/// id and the result record).
#[derive(Debug)]
struct Raised {
    id: u32,
    port: PortInfo,
    bytes: Vec<u8>,
    client: Option<(u64, u32, u32)>,
}

#[derive(Default)]
struct Recorder {
    events: Vec<Raised>,
}

/// The framework's event callback: records every event.
unsafe extern "C" fn record(context: *mut c_void, id: u32, info: *mut EventInfo) -> CapiError {
    // SAFETY: the context is the test's recorder, given with the callback, alive while the module lives.
    let recorder = unsafe { &mut *context.cast::<Recorder>() };
    // SAFETY: the module passes a valid event info for the call.
    let info = unsafe { &*info };
    let bytes = |buffer: &Buffer| {
        assert!(buffer.actual_data_len <= buffer.max_data_len);
        // SAFETY: the module's payload: `actual_data_len` bytes at `data`, alive for the call.
        unsafe { std::slice::from_raw_parts(buffer.data.cast::<u8>(), buffer.actual_data_len as usize) }.to_vec()
    };
    let (payload, client) = if id == event::DATA_TO_DSP_CLIENT_V2 {
        assert_eq!(info.payload.actual_data_len as usize, size_of::<capi::EventDataToDspClientV2>());
        // SAFETY: this event's payload is a `capi_event_data_to_dsp_client_v2_t` (its length checked above).
        let data = unsafe { &*info.payload.data.cast::<capi::EventDataToDspClientV2>() };
        (bytes(&data.payload), Some((data.dest_address, data.token, data.event_id)))
    } else {
        (bytes(&info.payload), None)
    };
    recorder.events.push(Raised { id, port: info.port_info, bytes: payload, client });
    EOK
}

fn property(id: u32, bytes: &mut [u8]) -> Property {
    let length = bytes.len() as u32;
    Property {
        id,
        payload: Buffer { data: bytes.as_mut_ptr().cast(), actual_data_len: length, max_data_len: length },
        port_info: PortInfo::default(),
    }
}

fn set_properties(table: &FunctionTable, instance: *mut Instance, properties: &mut [Property]) -> CapiError {
    let mut list = PropertyList { count: properties.len() as u32, properties: properties.as_mut_ptr() };
    // SAFETY: a live instance and a list whose payloads live for the call.
    unsafe { (table.set_properties)(instance, &mut list) }
}

/// Asks the static properties of `properties`.
fn query_static(properties: &mut [Property]) -> CapiError {
    let mut list = PropertyList { count: properties.len() as u32, properties: properties.as_mut_ptr() };
    // SAFETY: a list whose payloads live for the call; the init list is not read.
    unsafe { capi_lpai_direct_get_static_properties(std::ptr::null_mut(), &mut list) }
}

fn end(table: &FunctionTable, instance: *mut Instance) -> CapiError {
    // SAFETY: the instance memory the test keeps; an ended one is refused by its state, not read past.
    unsafe { (table.end)(instance) }
}

fn get_properties(table: &FunctionTable, instance: *mut Instance, properties: &mut [Property]) -> CapiError {
    let mut list = PropertyList { count: properties.len() as u32, properties: properties.as_mut_ptr() };
    // SAFETY: a live instance and a list whose payloads live for the call.
    unsafe { (table.get_properties)(instance, &mut list) }
}

/// get_param into `room` bytes (prefilled 0xA5, actual = max = room, as SPF asks): the answer and the bytes set.
fn get_param(table: &FunctionTable, instance: *mut Instance, id: u32, room: usize) -> (CapiError, Vec<u8>) {
    let mut bytes = vec![0xA5u8; room];
    let mut buffer =
        Buffer { data: bytes.as_mut_ptr().cast(), actual_data_len: room as u32, max_data_len: room as u32 };
    // SAFETY: a live instance and a buffer that lives for the call.
    let answer = unsafe { (table.get_param)(instance, id, &PortInfo::default(), &mut buffer) };
    assert!(buffer.actual_data_len as usize <= room);
    bytes.truncate(buffer.actual_data_len as usize);
    (answer, bytes)
}

fn set_param(table: &FunctionTable, instance: *mut Instance, id: u32, bytes: &mut [u8]) -> CapiError {
    let length = bytes.len() as u32;
    let mut buffer = Buffer { data: bytes.as_mut_ptr().cast(), actual_data_len: length, max_data_len: length };
    // SAFETY: a live instance and a payload that lives for the call.
    unsafe { (table.set_param)(instance, id, &PortInfo::default(), &mut buffer) }
}

/// A HEAP_ID as SPF gives a module in an island container: an island heap (0xA, the island bit 0x8 set) with
/// tracking bits above the low four (posal_memory.h, MODIFY_HEAP_ID_FOR_MEM_TRACKING).
const ISLAND_HEAP: u32 = 0x0003_4040 | 0xA;

/// A module set up in instance memory the size it asked for, with the recorder's callback.
struct Spf {
    memory: Vec<u64>,
    recorder: Box<Recorder>,
}

impl Spf {
    fn static_word(id: u32) -> u32 {
        let mut bytes = [0u8; 4];
        assert_eq!(query_static(&mut [property(id, &mut bytes)]), EOK);
        u32::from_ne_bytes(bytes)
    }

    /// A module in a container that is no island one (heap 7: the island bit, 0x8, clear).
    fn new() -> Spf {
        Spf::with_heap(7)
    }

    /// A module given `heap` as its HEAP_ID.
    fn with_heap(heap: u32) -> Spf {
        let bytes = Spf::static_word(property::INIT_MEMORY_REQUIREMENT) as usize;
        let mut spf = Spf { memory: vec![0u64; bytes.div_ceil(8)], recorder: Box::default() };
        let mut callback =
            EventCallbackInfo { callback: Some(record), context: (&mut *spf.recorder as *mut Recorder).cast() };
        // SAFETY: the callback info's own bytes, alive through init, which copies them.
        let callback_bytes = unsafe {
            std::slice::from_raw_parts_mut(
                (&mut callback as *mut EventCallbackInfo).cast::<u8>(),
                size_of::<EventCallbackInfo>(),
            )
        };
        let (mut heap, mut ports) = (heap.to_ne_bytes(), [1u32, 1].map(u32::to_ne_bytes).concat());
        let mut init = [
            property(property::EVENT_CALLBACK_INFO, callback_bytes),
            property(property::HEAP_ID, &mut heap),
            property(property::PORT_NUM_INFO, &mut ports),
        ];
        let mut list = PropertyList { count: 3, properties: init.as_mut_ptr() };
        // SAFETY: zeroed, 8-aligned instance memory of the size the module asked for, kept by the test.
        assert_eq!(unsafe { capi_lpai_direct_init(spf.instance(), &mut list) }, EOK);
        spf
    }

    fn instance(&mut self) -> *mut Instance {
        self.memory.as_mut_ptr().cast()
    }

    fn table(&mut self) -> &'static FunctionTable {
        // SAFETY: init wrote the instance, whose first field points at the module's static function table.
        unsafe { &*(*self.instance()).table }
    }

    fn taken(&mut self) -> Vec<Raised> {
        std::mem::take(&mut self.recorder.events)
    }
}

fn configuration(extra: &str) -> Vec<u8> {
    let qnn = common::qnn_lib_dir();
    let text = format!(
        "backend={}\nsystem_library={}\n{extra}\0",
        qnn.join("libQnnHtp.so").display(),
        qnn.join("libQnnSystem.so").display()
    );
    text.into_bytes()
}

/// Lays one frame of deinterleaved channels (each channel's samples as native bytes, `sample_bytes` each) out as
/// `interleaving` says: one buffer (interleaved, packed) or one per channel (unpacked, unpacked V2).
fn lay_out(channels: &[Vec<u8>], sample_bytes: usize, interleaving: u32) -> Vec<Vec<u8>> {
    match interleaving {
        media_format::INTERLEAVED => {
            let samples = channels[0].len() / sample_bytes;
            let sample =
                |index: usize| channels.iter().flat_map(move |bytes| &bytes[index * sample_bytes..][..sample_bytes]);
            vec![(0..samples).flat_map(sample).copied().collect()]
        }
        media_format::DEINTERLEAVED_PACKED => vec![channels.concat()],
        _ => channels.to_vec(),
    }
}

/// The lengths SPF leaves stale in the channel buffers after the first of an unpacked V2 frame (actual above max:
/// a module that read them would refuse the frame).
const STALE: Buffer = Buffer { data: std::ptr::null_mut(), actual_data_len: 7, max_data_len: 3 };

/// Stream flags SPF presets on a SISO module's output (timestamp valid, stream data version 1).
const PRESET: u32 = capi::stream_flags::TIMESTAMP_VALID | (1 << capi::stream_flags::VERSION_SHIFT);

/// Runs deinterleaved audio (each channel's samples as native bytes, `sample_bytes` each) through `process` in
/// place, laid out as `interleaving` says, `frame` samples at a time, at 48 kHz from `timestamp`; checks the audio
/// comes out untouched with the lengths SPF reads for the layout, and the output's flags and timestamp as SPF
/// preset them.
fn process_frames(
    spf: &mut Spf,
    channels: &[Vec<u8>],
    sample_bytes: usize,
    frame: usize,
    timestamp: i64,
    interleaving: u32,
) {
    let table = spf.table();
    let instance = spf.instance();
    let length = channels[0].len() / sample_bytes;
    let v2 = interleaving == media_format::DEINTERLEAVED_UNPACKED_V2;
    for (number, start) in (0..length).step_by(frame).enumerate() {
        let end = (start + frame).min(length);
        let cut: Vec<Vec<u8>> =
            channels.iter().map(|bytes| bytes[start * sample_bytes..end * sample_bytes].to_vec()).collect();
        let mut data = lay_out(&cut, sample_bytes, interleaving);
        let before = data.clone();
        let mut inputs: Vec<Buffer> = data
            .iter_mut()
            .enumerate()
            .map(|(index, bytes)| match (v2, index) {
                (true, 1..) => Buffer { data: bytes.as_mut_ptr().cast(), ..STALE },
                _ => Buffer {
                    data: bytes.as_mut_ptr().cast(),
                    actual_data_len: bytes.len() as u32,
                    max_data_len: bytes.len() as u32,
                },
            })
            .collect();
        let mut outputs: Vec<Buffer> = inputs
            .iter()
            .enumerate()
            .map(|(index, buffer)| if v2 && index > 0 { *buffer } else { Buffer { actual_data_len: 0, ..*buffer } })
            .collect();
        let at = timestamp + (start as i64) * 1_000_000 / 48_000;
        let mut input = StreamData {
            flags: PRESET,
            timestamp: at,
            buffers: inputs.as_mut_ptr(),
            buffer_count: inputs.len() as u32,
        };
        let mut output = StreamData {
            flags: PRESET,
            timestamp: at,
            buffers: outputs.as_mut_ptr(),
            buffer_count: outputs.len() as u32,
        };
        let (mut input_port, mut output_port) = (&mut input as *mut StreamData, &mut output as *mut StreamData);
        // SAFETY: a live instance; the streams and buffers live for the call, the outputs on the inputs' memory.
        let answer = unsafe { (table.process)(instance, &mut input_port, &mut output_port) };
        assert_eq!(answer, EOK, "frame {number} (interleaving {interleaving})");
        assert_eq!(data, before, "frame {number}: the audio changed");
        for (index, buffer) in outputs.iter().enumerate() {
            let expected = if v2 && index > 0 { STALE.actual_data_len } else { data[index].len() as u32 };
            assert_eq!(buffer.actual_data_len, expected, "frame {number} buffer {index} (interleaving {interleaving})");
        }
        assert_eq!((output.timestamp, output.flags), (at, PRESET), "frame {number}: the output's flags");
    }
}

fn q15_bytes(samples: &[i16]) -> Vec<u8> {
    samples.iter().flat_map(|sample| sample.to_ne_bytes()).collect()
}

/// The result events among `events`.
fn result_events(events: Vec<Raised>) -> Vec<Raised> {
    events.into_iter().filter(|event| event.id == event::DATA_TO_DSP_CLIENT_V2).collect()
}

/// Checks each result's scores (the float32 values after its header) are ORT's for its window, bit for bit.
fn scores_are_orts(results: &[Raised], expected: &[Vec<u8>]) {
    assert_eq!(results.len(), expected.len());
    for (index, (result, expected)) in results.iter().zip(expected).enumerate() {
        let scores = &result.bytes[RESULT_HEADER_BYTES..];
        let (ours, ort) = (common::floats(scores), common::floats(expected));
        assert!(scores == expected, "result {index}: {ours:?} differs from ORT on the QNN EP: {ort:?}");
    }
}

/// Registers the test's client for the result event.
fn register(table: &FunctionTable, instance: *mut Instance) {
    let mut registration = common::client_registration();
    let mut properties = [property(property::REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2, &mut registration)];
    assert_eq!(set_properties(table, instance, &mut properties), EOK);
}

#[test]
fn static_properties_are_what_spf_asks_for() {
    assert!(Spf::static_word(property::INIT_MEMORY_REQUIREMENT) as usize >= size_of::<Instance>());
    assert_eq!(Spf::static_word(property::STACK_SIZE), lpai_direct_skel::audio::module::STACK_BYTES);
    assert_eq!(Spf::static_word(property::NUM_NEEDED_FRAMEWORK_EXTENSIONS), 0);
    let (mut in_place, mut buffering) = ([9u8], [9u8]);
    let mut unknown = [1u8; 4];
    let mut properties = [
        property(property::IS_INPLACE, &mut in_place),
        property(property::REQUIRES_DATA_BUFFERING, &mut buffering),
        property(property::MAX_METADATA_SIZE, &mut unknown),
    ];
    let answer = query_static(&mut properties);
    assert_eq!(answer, EUNSUPPORTED, "an unknown property is unsupported, the rest answered");
    assert_eq!((in_place, buffering, properties[2].payload.actual_data_len), ([1], [0], 0));
    // INTERFACE_EXTENSIONS: ten extensions asked about, none supported.
    let descriptor = size_of::<capi::InterfaceExtensionDescriptor>();
    let first = size_of::<usize>();
    let mut bytes = vec![0xEEu8; first + 10 * descriptor];
    bytes[..4].copy_from_slice(&10u32.to_ne_bytes());
    for index in 0..10 {
        bytes[first + index * descriptor + 4] = 1;
    }
    assert_eq!(query_static(&mut [property(property::INTERFACE_EXTENSIONS, &mut bytes)]), EOK);
    assert!((0..10).all(|index| bytes[first + index * descriptor + 4] == 0));
}

#[test]
fn stereo_frames_give_orts_results_on_channel_1_with_a_hop_and_pass_the_audio_through() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let mut spf = Spf::new();
    let table = spf.table();
    let instance = spf.instance();
    let started = spf.taken();
    assert_eq!(started.iter().map(|e| (e.id, e.bytes.clone())).collect::<Vec<_>>(), [(event::PROCESS_STATE, vec![0])]);
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut configuration("channel=1\nhop=100\n")), EOK);
    let mut format = lpai_pd_shell::session_writer::media_format_v2(0, 2, 16, 15, media_format::DEINTERLEAVED_UNPACKED);
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut format)]), EOK);
    let echoed = spf.taken();
    assert_eq!(echoed.len(), 1);
    assert_eq!(
        (echoed[0].id, echoed[0].port),
        (event::OUTPUT_MEDIA_FORMAT_UPDATED_V2, PortInfo { is_valid: 1, is_input_port: 0, port_index: 0 })
    );
    assert_eq!(echoed[0].bytes, format[..40]);
    register(table, instance);
    let mut model = std::fs::read(common::fixture("audio_frame/audio_frame_qnn.bin")).unwrap();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_MODEL, &mut model), EOK);
    let loaded = spf.taken();
    let loaded: Vec<(u32, Vec<u8>)> = loaded.into_iter().map(|e| (e.id, e.bytes)).collect();
    // The cost votes at 48 kHz, a hop of 100 and a window of 160 uint8 samples with 4 uint8 outputs: per second
    // 1,000 frames at 170 packets (PACKETS_PER_FRAME) and 480 inferences at 550 + 8 x (100 + 160 + 4) packets:
    // 1,447,760 packets, 1,448
    // KPPS, 16 bytes of code per packet; data per inference: 100 x 6 + 160 x 5 + 4 x 5 + 24 bytes. No island vote:
    // the container is no island one.
    let words = |values: &[u32]| values.iter().flat_map(|value| value.to_ne_bytes()).collect::<Vec<u8>>();
    assert_eq!(
        loaded,
        [
            (event::KPPS, words(&[1_448])),
            (event::BANDWIDTH, words(&[23_164_160, 693_120])),
            (event::PROCESS_STATE, vec![1]),
        ]
    );
    // The load ran on the module's load stack, within the default size.
    let used = lpai_direct_skel::audio::stack::deepest_use();
    assert!(used > 0 && used < DEFAULT_LOAD_STACK_BYTES as usize, "the load stack's deepest use: {used} bytes");

    // 600 samples per channel, frames of 64: windows end at samples 160, 260, 360, 460 and 560.
    let tone: Vec<i16> = (0..600).map(|n| ((n as f64 * 0.07).sin() * 20_000.0) as i16).collect();
    let other: Vec<i16> = (0..600).map(|n| (n * 37 % 2000 - 1000) as i16).collect();
    process_frames(
        &mut spf,
        &[q15_bytes(&other), q15_bytes(&tone)],
        2,
        64,
        1_000_000,
        media_format::DEINTERLEAVED_UNPACKED,
    );
    let results = result_events(spf.taken());
    let ends = [160usize, 260, 360, 460, 560];
    assert_eq!(results.len(), ends.len());
    // The windows of channel 1 as the module cuts them (160 samples every 100), each scored by ORT on the QNN EP.
    let fed: Vec<f32> = tone.iter().map(|&sample| common::pcm_float(sample.into(), 15)).collect();
    let windows = common::audio_windows(&fed, 160, 100);
    assert_eq!(windows.len(), ends.len());
    let expected = common::ort_scores("audio_frame", &windows, work.path());
    for (index, (result, end)) in results.iter().zip(ends).enumerate() {
        assert_eq!(result.client, Some((common::CLIENT.0, common::CLIENT.1, ids::EVENT_ID_RESULT)));
        let header = ResultHeader::decode(&result.bytes).unwrap();
        assert_eq!((header.inferences, header.output_bytes), (index as u32 + 1, 16));
        // The last sample's time: its frame's timestamp plus the samples before it in the frame.
        let (last, frame_start) = (end as u64 - 1, (end as u64 - 1) / 64 * 64);
        let expected_us = 1_000_000 + frame_start * 1_000_000 / 48_000 + (last - frame_start) * 1_000_000 / 48_000;
        assert_eq!(header.timestamp_us, expected_us, "result {index}");
        assert!(header.dsp_ticks > 0);
    }
    scores_are_orts(&results, &expected);
    // get_param gives the last result.
    let mut last = vec![0u8; RESULT_HEADER_BYTES + 16];
    let length = last.len() as u32;
    let mut buffer = Buffer { data: last.as_mut_ptr().cast(), actual_data_len: 0, max_data_len: length };
    // SAFETY: a live instance and a buffer that lives for the call.
    let answer = unsafe { (table.get_param)(instance, ids::PARAM_ID_RESULT, &PortInfo::default(), &mut buffer) };
    assert_eq!((answer, buffer.actual_data_len), (EOK, length));
    assert_eq!(last, results[4].bytes);
    // ALGORITHMIC_RESET clears the window and the count: the next 160 samples give inference 1 again.
    assert_eq!(set_properties(table, instance, &mut [property(property::ALGORITHMIC_RESET, &mut [])]), EOK);
    process_frames(&mut spf, &[vec![0; 320], q15_bytes(&tone[..160])], 2, 160, 0, media_format::DEINTERLEAVED_UNPACKED);
    let again = result_events(spf.taken());
    assert_eq!(again.len(), 1);
    assert_eq!(ResultHeader::decode(&again[0].bytes).unwrap().inferences, 1);
    assert!(again[0].bytes[RESULT_HEADER_BYTES..] == expected[0][..]);
    assert_eq!(end(table, instance), EOK);
    // SPF destroys the module's bypass before end(): an event raised there (PROCESS_STATE off) would leak one.
    assert!(spf.taken().is_empty(), "end() raises no event");
    assert_eq!(end(table, instance), EBADPARAM, "an ended module is not live");
}

#[test]
fn formats_the_module_cannot_handle_are_refused_and_six_channels_at_48k_work() {
    let mut spf = Spf::new();
    let table = spf.table();
    let instance = spf.instance();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut configuration("channel=5\n")), EOK);
    for (data_format, bits, q, interleaving) in [
        (media_format::FLOATING_POINT, 32, 31, media_format::DEINTERLEAVED_UNPACKED),
        (media_format::FIXED_POINT, 16, 15, 4),
        (media_format::FIXED_POINT, 16, 15, media_format::UNKNOWN),
        (media_format::FIXED_POINT, 24, 23, media_format::DEINTERLEAVED_UNPACKED),
    ] {
        let mut format = lpai_pd_shell::session_writer::media_format_v2(data_format, 6, bits, q, interleaving);
        let answer = set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut format)]);
        assert_eq!(answer, EBADPARAM, "{data_format} {bits}/{q} {interleaving}");
    }
    assert!(spf.taken().iter().all(|e| e.id == event::PROCESS_STATE), "no output format raised for a refused one");
    let mut four = lpai_pd_shell::session_writer::media_format_v2(0, 4, 16, 15, media_format::DEINTERLEAVED_UNPACKED);
    assert_eq!(
        set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut four)]),
        EBADPARAM,
        "channel 5 of 4"
    );
    let mut six = lpai_pd_shell::session_writer::media_format_v2(0, 6, 32, 31, media_format::DEINTERLEAVED_UNPACKED_V2);
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut six)]), EOK);
    assert_eq!(end(table, instance), EOK);
}

#[test]
fn six_channels_of_q31_at_48k_with_channel_5_and_frames_unlike_the_window_give_orts_results() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let mut spf = Spf::with_heap(ISLAND_HEAP);
    let table = spf.table();
    let instance = spf.instance();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut configuration("channel=5\nisland=1\n")), EOK);
    let mut model = std::fs::read(common::fixture("audio_frame/audio_frame_qnn.bin")).unwrap();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_MODEL, &mut model), EOK);
    let mut six = lpai_pd_shell::session_writer::media_format_v2(0, 6, 32, 31, media_format::DEINTERLEAVED_UNPACKED);
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut six)]), EOK);
    let raised: Vec<u32> = spf.taken().iter().map(|event| event.id).collect();
    assert!(raised.contains(&event::ISLAND_VOTE) && raised.contains(&event::KPPS), "{raised:?}");
    register(table, instance);
    // Channel 5 a chirp in Q31, the others other signals; frames of 100 samples; windows of 160 every 160 samples.
    let chirp: Vec<i32> = (0..500).map(|n| ((n as f64 * n as f64 * 0.0004).sin() * 1.5e9) as i32).collect();
    let mut channels: Vec<Vec<u8>> = (0..5)
        .map(|channel| (0..500).flat_map(|n: i32| n.wrapping_mul((channel + 3) * 1_000_000).to_ne_bytes()).collect())
        .collect();
    channels.push(chirp.iter().flat_map(|sample| sample.to_ne_bytes()).collect());
    process_frames(&mut spf, &channels, 4, 100, 0, media_format::DEINTERLEAVED_UNPACKED);
    let results = result_events(spf.taken());
    let ends = [160usize, 320, 480];
    assert_eq!(results.len(), ends.len());
    // Channel 5's windows (160 samples, the default hop: the window), the samples as x / 2^31.
    let fed: Vec<f32> = chirp.iter().map(|&sample| common::pcm_float(sample, 31)).collect();
    let windows = common::audio_windows(&fed, 160, 0);
    assert_eq!(windows.len(), ends.len());
    scores_are_orts(&results, &common::ort_scores("audio_frame", &windows, work.path()));
    assert_eq!(end(table, instance), EOK);
}

#[test]
fn q31_samples_on_the_quantizations_edges_give_orts_results() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    // The values where the input's quantization (ONNX QuantizeLinear: float32 division by the scale, rounded half
    // to even, saturated) is easiest to get wrong: k * scale and (k +- 1/2) * scale in float32 for every k whose
    // k + zero point runs from 3 below 0 to 3 past 255; of these 786, 460 are exact ties, and a reciprocal
    // multiply, rounding half away from zero or a division in float64 would each quantize over a hundred of them
    // differently.
    let text = std::fs::read_to_string(common::fixture("audio_frame/manifest.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
    let (scale, zero_point) = (
        manifest["inputs"][0]["scale"].as_f64().unwrap() as f32,
        manifest["inputs"][0]["zero_point"].as_i64().unwrap(),
    );
    let mut edges: Vec<i32> = Vec::new();
    for k in -zero_point - 3..=255 - zero_point + 3 {
        for half in [0.0, 0.5, -0.5] {
            // Each value in Q31: exact (a float32 of at least 2^-8 is a whole number of 2^-31), or the nearest.
            let value = ((k as f64 + half) * f64::from(scale)) as f32;
            edges.push((f64::from(value) * 2f64.powi(31)).round() as i32);
        }
    }
    // Mono Q31, interleaved (as SPF's shared-memory write endpoint delivers it), the default hop (the window): five
    // windows of 160, the last one ending in the first values again.
    let samples: Vec<i32> = edges.iter().cycle().take(800).copied().collect();
    let mut spf = Spf::new();
    let table = spf.table();
    let instance = spf.instance();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut configuration("")), EOK);
    let mut mono = lpai_pd_shell::session_writer::media_format_v2(0, 1, 32, 31, media_format::INTERLEAVED);
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut mono)]), EOK);
    register(table, instance);
    let mut model = std::fs::read(common::fixture("audio_frame/audio_frame_qnn.bin")).unwrap();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_MODEL, &mut model), EOK);
    spf.taken();
    let bytes: Vec<u8> = samples.iter().flat_map(|sample| sample.to_ne_bytes()).collect();
    process_frames(&mut spf, &[bytes], 4, 96, 0, media_format::INTERLEAVED);
    let results = result_events(spf.taken());
    let fed: Vec<f32> = samples.iter().map(|&sample| common::pcm_float(sample, 31)).collect();
    let windows = common::audio_windows(&fed, 160, 0);
    assert_eq!((results.len(), windows.len()), (5, 5));
    scores_are_orts(&results, &common::ort_scores("audio_frame", &windows, work.path()));
    assert_eq!(end(table, instance), EOK);
}

#[test]
fn the_configurations_op_packages_are_registered_before_the_model_and_a_malformed_one_is_refused() {
    let _guard = common::qnn_lock();
    let mut spf = Spf::new();
    let table = spf.table();
    let instance = spf.instance();
    let mut malformed = configuration("op_packages=libNoOps.so\n");
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut malformed), EBADPARAM);
    // libQnnHtp cannot open the package, so the model that follows does not load (without the registration it
    // would: the same model loads in the other tests).
    let mut absent = configuration("op_packages=/nonexistent/libNoOps.so:NoOps_interfaceProvider\n");
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut absent), EOK);
    let mut model = std::fs::read(common::fixture("audio_frame/audio_frame_qnn.bin")).unwrap();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_MODEL, &mut model), capi::EFAILED);
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut configuration("")), EOK);
    assert_eq!(set_param(table, instance, ids::PARAM_ID_MODEL, &mut model), EOK, "the same model without the package");
    assert_eq!(end(table, instance), EOK);
}

/// A session as the stereo test's: channel 1, a hop of 100, 16-bit stereo at 48 kHz in `interleaving` (through a
/// version 1 format when `v1`), the client registered, the audio_frame model; 600 samples in frames of 64. Its
/// result events.
fn stereo_results(interleaving: u32, v1: bool, tone: &[i16], other: &[i16]) -> Vec<Raised> {
    let mut spf = Spf::new();
    let table = spf.table();
    let instance = spf.instance();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut configuration("channel=1\nhop=100\n")), EOK);
    let mut format = lpai_pd_shell::session_writer::media_format_v2(0, 2, 16, 15, interleaving);
    let answer = if v1 {
        // Version 1: the header, then bitstream_format, num_channels, bits, q, rate, signed, interleaving, 16 types.
        let words = [0, media_format::PCM, 2, 16, 15, 48_000, 1, interleaving];
        let mut bytes: Vec<u8> = words.iter().flat_map(|word| word.to_ne_bytes()).collect();
        bytes.extend((1..=16u16).flat_map(u16::to_ne_bytes));
        set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT, &mut bytes)])
    } else {
        set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut format)])
    };
    assert_eq!(answer, EOK, "interleaving {interleaving}, v1 {v1}");
    let raised = spf.taken();
    let echoed = raised.iter().find(|e| e.id == event::OUTPUT_MEDIA_FORMAT_UPDATED_V2).expect("the output format");
    let echoed_interleaving = u32::from_ne_bytes(echoed.bytes[32..36].try_into().unwrap());
    assert_eq!(echoed_interleaving, interleaving, "the output format says the input's layout");
    register(table, instance);
    let mut model = std::fs::read(common::fixture("audio_frame/audio_frame_qnn.bin")).unwrap();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_MODEL, &mut model), EOK);
    process_frames(&mut spf, &[q15_bytes(other), q15_bytes(tone)], 2, 64, 0, interleaving);
    let results = result_events(spf.taken());
    assert_eq!(end(table, instance), EOK);
    results
}

#[test]
fn every_layout_gives_orts_results_and_passes_the_audio_through_in_its_own_layout() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let tone: Vec<i16> = (0..600).map(|n| ((n as f64 * 0.05).cos() * 15_000.0) as i16).collect();
    let other: Vec<i16> = (0..600).map(|n| (n * 53 % 3000 - 1500) as i16).collect();
    let fed: Vec<f32> = tone.iter().map(|&sample| common::pcm_float(sample.into(), 15)).collect();
    let expected = common::ort_scores("audio_frame", &common::audio_windows(&fed, 160, 100), work.path());
    for (interleaving, v1) in [
        (media_format::INTERLEAVED, false),
        (media_format::DEINTERLEAVED_PACKED, false),
        (media_format::DEINTERLEAVED_UNPACKED, false),
        (media_format::DEINTERLEAVED_UNPACKED_V2, false),
        (media_format::INTERLEAVED, true),
        (media_format::DEINTERLEAVED_PACKED, true),
    ] {
        let results = stereo_results(interleaving, v1, &tone, &other);
        assert_eq!(results.len(), 5, "interleaving {interleaving}, v1 {v1}");
        scores_are_orts(&results, &expected);
    }
}

/// One frame of `buffers` (their lengths as given) through `process` in place: the answer and the output lengths.
fn process_raw(spf: &mut Spf, inputs: &mut [Buffer], flags: u32, output_flags: u32) -> (CapiError, Vec<u32>, u32) {
    let table = spf.table();
    let instance = spf.instance();
    let mut outputs: Vec<Buffer> = inputs.iter().map(|buffer| Buffer { actual_data_len: 0, ..*buffer }).collect();
    let mut input = StreamData { flags, timestamp: 5, buffers: inputs.as_mut_ptr(), buffer_count: inputs.len() as u32 };
    let mut output = StreamData {
        flags: output_flags,
        timestamp: 9,
        buffers: outputs.as_mut_ptr(),
        buffer_count: outputs.len() as u32,
    };
    let (mut input_port, mut output_port) = (&mut input as *mut StreamData, &mut output as *mut StreamData);
    // SAFETY: a live instance; the streams and buffers live for the call, the outputs on the inputs' memory.
    let answer = unsafe { (table.process)(instance, &mut input_port, &mut output_port) };
    assert_eq!(output.timestamp, 9, "the output's timestamp is the framework's");
    (answer, outputs.iter().map(|buffer| buffer.actual_data_len).collect(), output.flags)
}

fn buffer(bytes: &mut [u8], actual: u32, max: u32) -> Buffer {
    Buffer { data: bytes.as_mut_ptr().cast(), actual_data_len: actual, max_data_len: max }
}

#[test]
fn frames_the_module_cannot_read_are_refused_with_the_output_lengths_zero() {
    let mut spf = Spf::new();
    let table = spf.table();
    let instance = spf.instance();
    let mut left = vec![1u8; 64];
    let mut right = vec![2u8; 64];
    for (interleaving, case, lengths) in [
        (media_format::DEINTERLEAVED_UNPACKED, "one buffer for two unpacked channels", vec![(64, 64)]),
        (media_format::DEINTERLEAVED_UNPACKED, "channels of different lengths", vec![(64, 64), (32, 64)]),
        (media_format::DEINTERLEAVED_UNPACKED, "an odd byte of a Q15 channel", vec![(63, 64), (63, 64)]),
        (media_format::DEINTERLEAVED_UNPACKED, "actual above max", vec![(64, 32), (64, 32)]),
        (media_format::DEINTERLEAVED_UNPACKED_V2, "the first buffer's actual above its max", vec![(64, 32), (64, 64)]),
        (media_format::INTERLEAVED, "half a stereo Q15 frame", vec![(62, 64)]),
        (media_format::DEINTERLEAVED_PACKED, "half a stereo Q15 frame", vec![(2, 64)]),
        (media_format::INTERLEAVED, "no buffer at all", vec![]),
    ] {
        let mut format = lpai_pd_shell::session_writer::media_format_v2(0, 2, 16, 15, interleaving);
        assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut format)]), EOK);
        let mut inputs: Vec<Buffer> = lengths
            .iter()
            .zip([&mut left, &mut right])
            .map(|(&(actual, max), bytes)| buffer(bytes, actual, max))
            .collect();
        let (answer, outputs, _) = process_raw(&mut spf, &mut inputs, PRESET, PRESET);
        assert_eq!(answer, EBADPARAM, "{case} (interleaving {interleaving})");
        let spf_reads = if interleaving == media_format::DEINTERLEAVED_UNPACKED_V2 { 1 } else { outputs.len() };
        assert!(outputs[..spf_reads].iter().all(|&length| length == 0), "{case}: {outputs:?}");
    }
    // A V2 frame whose second buffer has stale lengths, and more buffers than the layout needs, are read.
    let mut format =
        lpai_pd_shell::session_writer::media_format_v2(0, 2, 16, 15, media_format::DEINTERLEAVED_UNPACKED_V2);
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut format)]), EOK);
    let mut inputs = [buffer(&mut left, 64, 64), buffer(&mut right, 7, 3)];
    assert_eq!(process_raw(&mut spf, &mut inputs, PRESET, PRESET).0, EOK);
    let mut format = lpai_pd_shell::session_writer::media_format_v2(0, 2, 16, 15, media_format::INTERLEAVED);
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut format)]), EOK);
    let mut inputs = [buffer(&mut left, 64, 64), buffer(&mut right, 7, 3)];
    assert_eq!(process_raw(&mut spf, &mut inputs, PRESET, PRESET), (EOK, vec![64, 0], PRESET));
    assert_eq!(end(table, instance), EOK);
}

#[test]
fn the_markers_pass_to_the_output_and_the_frameworks_flags_are_left_as_it_set_them() {
    use capi::stream_flags::{END_OF_FRAME, ERASURE, MARKER_EOS, TIMESTAMP_CONTINUE, TIMESTAMP_VALID};
    let (marker_1, marker_3) = (1 << 3, 1 << 5);
    let mut spf = Spf::new();
    let table = spf.table();
    let instance = spf.instance();
    let mut mono = lpai_pd_shell::session_writer::media_format_v2(0, 1, 16, 15, media_format::INTERLEAVED);
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut mono)]), EOK);
    let mut samples = vec![3u8; 96];
    let version = 1 << capi::stream_flags::VERSION_SHIFT;
    let input = TIMESTAMP_VALID | END_OF_FRAME | MARKER_EOS | marker_1 | marker_3 | ERASURE | version;
    let preset = TIMESTAMP_VALID | TIMESTAMP_CONTINUE | version;
    let mut inputs = [buffer(&mut samples, 96, 96)];
    let (answer, lengths, flags) = process_raw(&mut spf, &mut inputs, input, preset);
    assert_eq!((answer, lengths), (EOK, vec![96]));
    assert_eq!(flags, preset | marker_1 | marker_3, "{flags:#x}: only the markers come from the input");
    // A marker the input does not have is not left on the output.
    let (_, _, flags) = process_raw(&mut spf, &mut inputs, TIMESTAMP_VALID | version, preset | marker_1 | END_OF_FRAME);
    assert_eq!(flags, preset | END_OF_FRAME, "{flags:#x}");
    assert_eq!(end(table, instance), EOK);
}

/// A REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2 as SPF makes it: the struct on its stack, its event configuration
/// elsewhere (`config`), the property's `actual_data_len` the struct's size plus the configuration's, `max_data_len`
/// left as the stack held it (`max`), and the configuration's own `max_data_len` unset too.
fn register_as_spf(spf: &mut Spf, is_register: u8, max: u32, config: &mut [u8]) -> CapiError {
    let table = spf.table();
    let instance = spf.instance();
    let mut registration = capi::RegisterEventToDspClientV2 {
        dest_address: common::CLIENT.0,
        token: common::CLIENT.1,
        event_id: ids::EVENT_ID_RESULT,
        is_register,
        event_config: Buffer {
            data: config.as_mut_ptr().cast(),
            actual_data_len: config.len() as u32,
            max_data_len: max,
        },
    };
    let fixed = size_of::<capi::RegisterEventToDspClientV2>() as u32;
    let mut properties = [Property {
        id: property::REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2,
        payload: Buffer {
            data: (&mut registration as *mut capi::RegisterEventToDspClientV2).cast(),
            actual_data_len: fixed + config.len() as u32,
            max_data_len: max,
        },
        port_info: PortInfo::default(),
    }];
    set_properties(table, instance, &mut properties)
}

#[test]
fn event_registration_reads_its_struct_whatever_max_data_len_holds_and_the_client_gets_the_results() {
    let _guard = common::qnn_lock();
    let mut spf = Spf::new();
    let table = spf.table();
    let instance = spf.instance();
    let fixed = size_of::<capi::RegisterEventToDspClientV2>() as u32;
    assert_eq!(fixed, if cfg!(target_pointer_width = "64") { 40 } else { 32 });
    let mut config = [0x5Au8; 12];
    for max in [0, 1, fixed - 1, fixed, fixed + 12, 0xFFFF_FFFF] {
        assert_eq!(register_as_spf(&mut spf, 1, max, &mut config), EOK, "max_data_len {max}");
        assert_eq!(register_as_spf(&mut spf, 1, max, &mut []), EOK, "max_data_len {max}, no configuration");
    }
    // Shorter than the struct: more is needed.
    let mut short = common::client_registration();
    short.truncate(fixed as usize - 1);
    let answer =
        set_properties(table, instance, &mut [property(property::REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2, &mut short)]);
    assert_eq!(answer, ENEEDMORE);
    // Version 1 (which SPF tries only when V2 fails) is not supported, whatever its max_data_len.
    for max in [0, 0xFFFF_FFFF] {
        let mut v1 = [ids::EVENT_ID_RESULT.to_ne_bytes(), [1, 0, 0, 0]].concat();
        let mut properties = [property(property::REGISTER_EVENT_DATA_TO_DSP_CLIENT, &mut v1)];
        properties[0].payload.max_data_len = max;
        assert_eq!(set_properties(table, instance, &mut properties), EUNSUPPORTED);
        assert_eq!(properties[0].payload.actual_data_len, 0);
    }
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut configuration("")), EOK);
    let mut mono = lpai_pd_shell::session_writer::media_format_v2(0, 1, 16, 15, media_format::INTERLEAVED);
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut mono)]), EOK);
    let mut model = std::fs::read(common::fixture("audio_frame/audio_frame_qnn.bin")).unwrap();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_MODEL, &mut model), EOK);
    let samples: Vec<i16> = (0..320).map(|n| (n * 101 % 4000 - 2000) as i16).collect();
    process_frames(&mut spf, &[q15_bytes(&samples[..160])], 2, 80, 0, media_format::INTERLEAVED);
    let results = result_events(spf.taken());
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].client, Some((common::CLIENT.0, common::CLIENT.1, ids::EVENT_ID_RESULT)));
    // Deregistered (max_data_len unset again): no more result events, the inferences go on.
    assert_eq!(register_as_spf(&mut spf, 0, 3, &mut config), EOK);
    process_frames(&mut spf, &[q15_bytes(&samples[160..])], 2, 80, 0, media_format::INTERLEAVED);
    assert!(result_events(spf.taken()).is_empty());
    let (answer, record) = get_param(table, instance, ids::PARAM_ID_RESULT, 64);
    assert_eq!((answer, ResultHeader::decode(&record).unwrap().inferences), (EOK, 2));
    assert_eq!(end(table, instance), EOK);
}

#[test]
fn the_result_before_the_first_inference_is_all_zeros() {
    let _guard = common::qnn_lock();
    let mut spf = Spf::new();
    let table = spf.table();
    let instance = spf.instance();
    assert_eq!(get_param(table, instance, ids::PARAM_ID_RESULT, 64), (ENOTREADY, vec![]), "no model, no record");
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut configuration("")), EOK);
    let mut model = std::fs::read(common::fixture("audio_frame/audio_frame_qnn.bin")).unwrap();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_MODEL, &mut model), EOK);
    // The record: 24 bytes of header, then 4 float32 scores; all 0 until the first inference.
    assert_eq!(get_param(table, instance, ids::PARAM_ID_RESULT, 64), (EOK, vec![0; RESULT_HEADER_BYTES + 16]));
    assert_eq!(get_param(table, instance, ids::PARAM_ID_RESULT, RESULT_HEADER_BYTES + 15), (ENEEDMORE, vec![]));
    assert_eq!(get_param(table, instance, ids::PARAM_ID_METADATA, 64).0, EUNSUPPORTED);
    let mut mono = lpai_pd_shell::session_writer::media_format_v2(0, 1, 16, 15, media_format::INTERLEAVED);
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut mono)]), EOK);
    process_frames(&mut spf, &[q15_bytes(&[1000; 159])], 2, 53, 0, media_format::INTERLEAVED);
    assert_eq!(get_param(table, instance, ids::PARAM_ID_RESULT, 64), (EOK, vec![0; 40]), "159 of 160 samples");
    process_frames(&mut spf, &[q15_bytes(&[1000])], 2, 1, 0, media_format::INTERLEAVED);
    let (_, record) = get_param(table, instance, ids::PARAM_ID_RESULT, 64);
    assert_eq!(
        (ResultHeader::decode(&record).unwrap().inferences, ResultHeader::decode(&record).unwrap().output_bytes),
        (1, 16)
    );
    assert_eq!(end(table, instance), EOK);
}

#[test]
fn the_output_format_asked_before_any_input_format_is_refused_and_keeps_nothing() {
    let mut spf = Spf::new();
    let table = spf.table();
    let instance = spf.instance();
    spf.taken();
    // SPF's prepare: OUTPUT_MEDIA_FORMAT_SIZE (max 4, actual 0), then V2 into 100 bytes, then version 1.
    let query = |spf: &mut Spf, id: u32, room: usize| {
        let mut bytes = vec![0xA5u8; room];
        let mut properties = [property(id, &mut bytes)];
        properties[0].payload.actual_data_len = 0;
        properties[0].port_info = PortInfo { is_valid: 1, is_input_port: 0, port_index: 0 };
        let answer = get_properties(spf.table(), spf.instance(), &mut properties);
        let length = properties[0].payload.actual_data_len as usize;
        (answer, bytes[..length].to_vec())
    };
    for _ in 0..2 {
        assert_eq!(query(&mut spf, property::OUTPUT_MEDIA_FORMAT_SIZE, 4), (ENOTREADY, vec![]));
        assert_eq!(query(&mut spf, property::OUTPUT_MEDIA_FORMAT_V2, 100), (ENOTREADY, vec![]));
        assert_eq!(query(&mut spf, property::OUTPUT_MEDIA_FORMAT, 100), (EUNSUPPORTED, vec![]));
    }
    assert!(spf.taken().is_empty(), "a query raises nothing");
    let mut stereo = lpai_pd_shell::session_writer::media_format_v2(0, 2, 16, 15, media_format::INTERLEAVED);
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut stereo)]), EOK);
    let raised = spf.taken();
    assert_eq!(raised.iter().map(|event| event.id).collect::<Vec<_>>(), [event::OUTPUT_MEDIA_FORMAT_UPDATED_V2]);
    assert_eq!(raised[0].bytes, stereo[..40]);
    assert_eq!(query(&mut spf, property::OUTPUT_MEDIA_FORMAT_SIZE, 4), (EOK, 36u32.to_ne_bytes().to_vec()));
    assert_eq!(query(&mut spf, property::OUTPUT_MEDIA_FORMAT_V2, 100), (EOK, stereo[..40].to_vec()));
    assert_eq!(end(table, instance), EOK);
    assert!(spf.taken().is_empty(), "end() raises no event");
}

/// The KPPS and BANDWIDTH votes among `events`, as (KPPS, code bytes/s, data bytes/s).
fn votes(events: &[Raised]) -> Vec<(u32, u32, u32)> {
    let word = |bytes: &[u8], at: usize| u32::from_ne_bytes(bytes[at..at + 4].try_into().unwrap());
    let kpps: Vec<u32> = events.iter().filter(|e| e.id == event::KPPS).map(|e| word(&e.bytes, 0)).collect();
    let bandwidth: Vec<(u32, u32)> =
        events.iter().filter(|e| e.id == event::BANDWIDTH).map(|e| (word(&e.bytes, 0), word(&e.bytes, 4))).collect();
    assert_eq!(kpps.len(), bandwidth.len(), "KPPS and BANDWIDTH come together");
    kpps.into_iter().zip(bandwidth).map(|(kpps, (code, data))| (kpps, code, data)).collect()
}

#[test]
fn the_votes_follow_the_frame_the_module_gets() {
    let _guard = common::qnn_lock();
    let mut spf = Spf::new();
    let table = spf.table();
    let instance = spf.instance();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut configuration("hop=100\n")), EOK);
    let mut model = std::fs::read(common::fixture("audio_frame/audio_frame_qnn.bin")).unwrap();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_MODEL, &mut model), EOK);
    let mut mono = lpai_pd_shell::session_writer::media_format_v2(0, 1, 16, 15, media_format::INTERLEAVED);
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut mono)]), EOK);
    // 48 kHz, a hop of 100, the window 160 uint8, 4 uint8 outputs: 1,277,760 packets a second of inferences, and
    // PACKETS_PER_FRAME a frame; data 693,120 B/s whatever the frame.
    let vote = |frames: u32| {
        let packets = 1_277_760 + frames * PACKETS_PER_FRAME as u32;
        (packets.div_ceil(1000), packets * 16, 693_120)
    };
    assert_eq!(votes(&spf.taken()), [vote(1000)], "before any frame: 1 ms frames, SPF's shortest");
    let silence = q15_bytes(&[0; 4800]);
    let frames = [(48, vec![]), (240, vec![vote(200)]), (240, vec![]), (480, vec![vote(100)]), (48, vec![vote(1000)])];
    for (frame, expected) in frames {
        process_frames(&mut spf, &[silence[..frame * 2 * 4].to_vec()], 2, frame, 0, media_format::INTERLEAVED);
        assert_eq!(votes(&spf.taken()), expected, "frames of {frame} samples");
    }
    // A partial frame at the end of a stream (end_of_frame) does not move the vote.
    let mut partial = silence[..100].to_vec();
    let (answer, _, _) = process_raw(&mut spf, &mut [buffer(&mut partial, 100, 100)], PRESET | 2, PRESET);
    assert_eq!((answer, votes(&spf.taken())), (EOK, vec![]));
    // 44.1 kHz: SPF's 1 ms frame is 44 samples, 1,003 frames a second, until a frame comes.
    let mut cd = lpai_pd_shell::session_writer::media_format_v2(0, 1, 16, 15, media_format::INTERLEAVED);
    cd[24..28].copy_from_slice(&44_100u32.to_ne_bytes());
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut cd)]), EOK);
    let packets = 44_100u64 * 2662 / 100 + 1003 * PACKETS_PER_FRAME;
    assert_eq!(votes(&spf.taken())[0].0 as u64, packets.div_ceil(1000));
    assert_eq!(end(table, instance), EOK);
}

#[test]
fn the_configuration_after_the_model_changes_channel_and_hop_at_once_and_refuses_what_shapes_the_model() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let mut spf = Spf::new();
    let table = spf.table();
    let instance = spf.instance();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut configuration("channel=1\nhop=100\n")), EOK);
    let mut stereo = lpai_pd_shell::session_writer::media_format_v2(0, 2, 16, 15, media_format::INTERLEAVED);
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut stereo)]), EOK);
    register(table, instance);
    let mut model = std::fs::read(common::fixture("audio_frame/audio_frame_qnn.bin")).unwrap();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_MODEL, &mut model), EOK);
    let left: Vec<i16> = (0..900).map(|n| ((n as f64 * 0.031).sin() * 12_000.0) as i16).collect();
    let right: Vec<i16> = (0..900).map(|n| (n * 71 % 5000 - 2500) as i16).collect();
    // 200 samples on channel 1: one result (at 160).
    process_frames(
        &mut spf,
        &[q15_bytes(&left[..200]), q15_bytes(&right[..200])],
        2,
        100,
        0,
        media_format::INTERLEAVED,
    );
    assert_eq!(result_events(spf.taken()).len(), 1);
    // Refused, naming nothing changed: a key that shapes the model (left out, so back to its default, or changed),
    // a channel the format does not have.
    for refused in ["channel=0\nhop=50\nisland=1\n", "channel=0\nhop=50\nfps=30\n", "channel=2\n"] {
        assert_eq!(
            set_param(table, instance, ids::PARAM_ID_CONFIG, &mut configuration(refused)),
            EBADPARAM,
            "{refused}"
        );
    }
    let mut without_backend = b"channel=0\nhop=50\n\0".to_vec();
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut without_backend), EBADPARAM);
    assert!(spf.taken().is_empty(), "a refused configuration raises nothing");
    // Taken: channel 0 and a hop of 50 from the next frame on, the window empty again; the votes follow the hop.
    assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut configuration("channel=0\nhop=50\n")), EOK);
    let per_inference = PACKETS_PER_INFERENCE as u32 + PACKETS_PER_ELEMENT as u32 * (50 + 160 + 4);
    let packets = 48_000 * per_inference / 50 + 480 * PACKETS_PER_FRAME as u32;
    assert_eq!(votes(&spf.taken()).first().map(|vote| vote.0), Some(packets.div_ceil(1000)));
    process_frames(
        &mut spf,
        &[q15_bytes(&left[200..]), q15_bytes(&right[200..])],
        2,
        100,
        0,
        media_format::INTERLEAVED,
    );
    let results = result_events(spf.taken());
    let fed: Vec<f32> = left[200..].iter().map(|&sample| common::pcm_float(sample.into(), 15)).collect();
    let windows = common::audio_windows(&fed, 160, 50);
    assert_eq!((results.len(), windows.len()), (11, 11), "700 samples: windows ending at 160, 210, ..., 660");
    scores_are_orts(&results, &common::ort_scores("audio_frame", &windows, work.path()));
    let header = ResultHeader::decode(&results[0].bytes).unwrap();
    assert_eq!(header.inferences, 2, "the count goes on");
    assert_eq!(end(table, instance), EOK);
}

/// The island vote for each (HEAP_ID, `island=`) after a model's load: none outside an island container, where SPF
/// would only log it as an error; in one, 0 (for island) or 1 (against) as configured.
#[test]
fn the_island_vote_is_raised_only_in_an_island_container() {
    let _guard = common::qnn_lock();
    for (heap, island, expected) in [
        (7, "island=1\n", None),
        (0x0003_4040, "island=0\n", None),
        (ISLAND_HEAP, "island=0\n", Some(1u32)),
        (ISLAND_HEAP, "island=1\n", Some(0)),
    ] {
        let mut spf = Spf::with_heap(heap);
        let table = spf.table();
        let instance = spf.instance();
        assert_eq!(set_param(table, instance, ids::PARAM_ID_CONFIG, &mut configuration(island)), EOK);
        let mut model = std::fs::read(common::fixture("audio_frame/audio_frame_qnn.bin")).unwrap();
        assert_eq!(set_param(table, instance, ids::PARAM_ID_MODEL, &mut model), EOK);
        let votes: Vec<u32> = spf
            .taken()
            .iter()
            .filter(|event| event.id == event::ISLAND_VOTE)
            .map(|event| u32::from_ne_bytes(event.bytes[..4].try_into().unwrap()))
            .collect();
        assert_eq!(votes, Vec::from_iter(expected), "heap {heap:#x}, {island}");
        assert_eq!(end(table, instance), EOK);
    }
}

/// One unpacked stereo frame of 64 bytes a channel into output buffers apart from the input (`rooms` bytes each):
/// the answer and the output lengths.
fn process_apart(spf: &mut Spf, interleaving: u32, rooms: [u32; 2]) -> (CapiError, Vec<u32>) {
    let mut format = lpai_pd_shell::session_writer::media_format_v2(0, 2, 16, 15, interleaving);
    let (table, instance) = (spf.table(), spf.instance());
    assert_eq!(set_properties(table, instance, &mut [property(property::INPUT_MEDIA_FORMAT_V2, &mut format)]), EOK);
    let (mut left, mut right) = (vec![1u8; 64], vec![2u8; 64]);
    let mut inputs = [buffer(&mut left, 64, 64), buffer(&mut right, 64, 64)];
    let (mut out_left, mut out_right) = (vec![0u8; 64], vec![0u8; 64]);
    let mut outputs = [buffer(&mut out_left, 0, rooms[0]), buffer(&mut out_right, 0, rooms[1])];
    let mut input = StreamData { flags: PRESET, timestamp: 0, buffers: inputs.as_mut_ptr(), buffer_count: 2 };
    let mut output = StreamData { flags: PRESET, timestamp: 0, buffers: outputs.as_mut_ptr(), buffer_count: 2 };
    let (mut input_port, mut output_port) = (&mut input as *mut StreamData, &mut output as *mut StreamData);
    // SAFETY: a live instance; the streams and buffers live for the call, the outputs apart from the inputs.
    let answer = unsafe { (table.process)(instance, &mut input_port, &mut output_port) };
    (answer, outputs.iter().map(|buffer| buffer.actual_data_len).collect())
}

/// An output channel with less room than the frame: ENEEDMORE, and every output length SPF reads the same (0),
/// whichever channel is short: SPF's contract forbids unpacked channels of unequal lengths.
#[test]
fn an_output_channel_too_short_for_the_frame_leaves_the_unpacked_output_lengths_equal() {
    let mut spf = Spf::new();
    for (interleaving, rooms) in [
        (media_format::DEINTERLEAVED_UNPACKED, [64, 32]),
        (media_format::DEINTERLEAVED_UNPACKED, [32, 64]),
        (media_format::DEINTERLEAVED_UNPACKED_V2, [32, 64]),
    ] {
        let (answer, lengths) = process_apart(&mut spf, interleaving, rooms);
        assert_eq!(answer, ENEEDMORE, "interleaving {interleaving}, rooms {rooms:?}");
        let spf_reads = if interleaving == media_format::DEINTERLEAVED_UNPACKED_V2 { 1 } else { 2 };
        assert_eq!(lengths[..spf_reads], [0, 0][..spf_reads], "interleaving {interleaving}, rooms {rooms:?}");
    }
    assert_eq!(process_apart(&mut spf, media_format::DEINTERLEAVED_UNPACKED, [64, 64]), (EOK, vec![64, 64]));
    assert_eq!(end(spf.table(), spf.instance()), EOK);
}
