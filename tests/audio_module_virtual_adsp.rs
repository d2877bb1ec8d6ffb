//! The audio module on Hexagon: the module `.so` that `scripts/build-hexagon.sh` ships (its v73 build in
//! `target/virtual-adsp/` when the shipped one is for a newer CPU than qemu-hexagon emulates), loaded by the PD
//! shell's own ELF loader under qemu-hexagon (`lpai-pd-shell --capi`), runs a PCM stream against the Hexagon build
//! of the contract model of libQnnLpai; the host build of the same module runs the same session against the host
//! build of the contract model, through the same session driver (`lpai_pd_shell::capi_session`). The two
//! transcripts are the same, event for event and byte for byte, except for what differs by design: the instance
//! memory the module asks (its state is laid out for each target) and the DSP clock ticks of each inference. Every
//! Hexagon result's scores are also held, bit for bit, to the contract model's documented formula for the window
//! the module was fed (computed here from the fixture's manifest, not by the model's code), so that a bug the two
//! builds share does not pass. Besides the plain sessions, each thing the real SPF does that they do not (the
//! cases of `tests/c/capi_harness.c`) is a session of its own: the PCM layouts SPF delivers, event registration
//! with `max_data_len` unset, the output format asked for before the input format, the result read before the
//! first inference, end of frame and end of stream on the input, frames of 1, 5 and 10 ms, the configuration
//! after start; and no session's module raises an event from `end`. `LPAI_CAPI_LIBRARY` and
//! `LPAI_CAPI_HEXAGON_MODULE` name other builds of the module (host and Hexagon) to run, e.g. older ones.

mod common;

use lpai_direct::capi::{event, media_format, property, stream_flags, GetStaticPropertiesFn, InitFn, PortInfo};
use lpai_direct::capi::{EBADPARAM, ENOTREADY, EOK, EUNSUPPORTED};
use lpai_direct_skel::audio::ids::{self, ResultHeader, RESULT_HEADER_BYTES};
use lpai_direct_skel::audio::module::{PACKETS_PER_ELEMENT, PACKETS_PER_FRAME, PACKETS_PER_INFERENCE};
use lpai_pd_shell::capi_session::{self, EntryPoints, RECORD_ENDED, RECORD_EVENT, RECORD_OPENED, RECORD_STEP};
use lpai_pd_shell::capi_session::{DEINTERLEAVED_PACKED, DEINTERLEAVED_UNPACKED, INTERLEAVED, METADATA_SET};
use lpai_pd_shell::capi_session::{STEP_GET_PARAM, STEP_PROCESS, STEP_PROCESS_LAYOUT};
use lpai_pd_shell::capi_session::{STEP_SET_PARAM, STEP_SET_PROPERTY};
use lpai_pd_shell::session_writer::SessionWriter as Session;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The contract fixture whose model the stream runs: u8 [1,16] in, u8 [1,16] out.
const FIXTURE: &str = "contract_single";
/// Its first input's elements: the module's window.
const WINDOW: usize = 16;
/// Bytes of the result record the module gives for that model: the header and 16 floats.
const RESULT_BYTES: usize = RESULT_HEADER_BYTES + 4 * WINDOW;
/// Where the dsp_ticks field sits in a result record.
const TICKS: std::ops::Range<usize> = 16..24;

/// One record of a transcript, owned.
#[derive(Debug, Clone, PartialEq)]
struct Record {
    kind: u32,
    value: u32,
    bytes: Vec<u8>,
}

fn records(mut transcript: Vec<u8>) -> Vec<Record> {
    capi_session::records(&mut transcript)
        .map(|record| record.map(|r| Record { kind: r.kind, value: r.value, bytes: r.bytes.to_vec() }))
        .collect::<Result<_, usize>>()
        .unwrap_or_else(|offset| panic!("the transcript is cut short at byte {offset}"))
}

/// The configuration text for the module with the contract model at `directory`.
fn configuration(directory: &Path, extra: &str) -> Vec<u8> {
    let library = |name: &str| directory.join(name).display().to_string();
    let text = format!(
        "backend={}\nsystem_library={}\n{extra}\0",
        library("libQnnLpaiContract.so"),
        library("libQnnSystemContract.so")
    );
    text.into_bytes()
}

/// Runs the session on the host build of the module, in this process.
fn run_on_host(session: &[u8]) -> Vec<Record> {
    let module = match std::env::var_os("LPAI_CAPI_LIBRARY") {
        Some(path) => std::path::PathBuf::from(path),
        None => common::artifact("target/release/liblpai_direct_capi.so", "cargo build --release -p lpai-direct-capi"),
    };
    // SAFETY: the project's own module; loading it runs no initializer that could misbehave.
    let library = unsafe { libloading::Library::new(&module) }.unwrap();
    // SAFETY: the module's two CAPI entry points, with their C signatures.
    let entry_points = unsafe {
        EntryPoints {
            get_static_properties: *library
                .get::<GetStaticPropertiesFn>(b"capi_lpai_direct_get_static_properties\0")
                .unwrap(),
            init: *library.get::<InitFn>(b"capi_lpai_direct_init\0").unwrap(),
        }
    };
    let (mut session, mut instance, mut transcript) = (session.to_vec(), vec![0u64; 8192], vec![0u8; 16 << 20]);
    // SAFETY: the module's entry points, alive while `library` is.
    let length = unsafe { capi_session::run(entry_points, &mut session, &mut instance, &mut transcript) }.unwrap();
    transcript.truncate(length);
    records(transcript)
}

/// Runs the session on the Hexagon module in the virtual aDSP; answers its records and what it wrote on stderr.
fn run_on_hexagon(session: &[u8]) -> (Vec<Record>, String) {
    let mut child = Command::new("qemu-hexagon")
        .args(["-cpu", "v73"])
        .arg(common::virtual_adsp("lpai-pd-shell"))
        .arg("--capi")
        .arg(
            std::env::var_os("LPAI_CAPI_HEXAGON_MODULE")
                .map_or_else(|| common::virtual_adsp("liblpai_direct_capi.so"), Into::into),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("qemu-hexagon (scripts/setup.sh installs it): {error}"));
    let mut input = child.stdin.take().unwrap();
    let session = session.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&session));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let errors = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "lpai-pd-shell --capi: {}\n{errors}", output.status);
    (records(output.stdout), errors)
}

/// The kind of step each of `session`'s steps is, in order, its value and its bytes.
fn steps(session: &Session) -> Vec<(u32, u32, Vec<u8>)> {
    let mut bytes = session.bytes().to_vec();
    capi_session::records(&mut bytes).map(|step| step.map(|s| (s.kind, s.value, s.bytes.to_vec())).unwrap()).collect()
}

/// Whether a transcript record holds a result record: a result event, or a get_param step's answer.
fn holds_result(record: &Record, step: Option<u32>) -> bool {
    let event = record.kind == RECORD_EVENT && record.value == event::DATA_TO_DSP_CLIENT_V2;
    event || (record.kind == RECORD_STEP && step == Some(STEP_GET_PARAM))
}

/// Each record with the kind of the step it belongs to (`None` before the first and after the last).
fn with_steps<'r>(session: &Session, records: &'r [Record]) -> Vec<(Option<u32>, &'r Record)> {
    let mut kinds = steps(session).into_iter().map(|(kind, _, _)| kind);
    let mut current = kinds.next();
    let mut annotated = Vec::new();
    for record in records {
        let step = if record.kind == RECORD_OPENED || record.kind == RECORD_ENDED { None } else { current };
        annotated.push((step, record));
        if record.kind == RECORD_STEP {
            current = kinds.next();
        }
    }
    annotated
}

/// Runs `session` on both builds; checks the transcripts agree but for the instance memory and the DSP ticks, and
/// that neither module raised an event from `end` (SPF destroyed its bypass before `end`: GT/core/src/gen_topo.c
/// gen_topo_destroy_module); answers the host's records, Hexagon's and Hexagon's stderr.
fn run_on_both(what: &str, hexagon_session: &Session, host_session: &Session) -> (Vec<Record>, Vec<Record>, String) {
    let (hexagon, said) = run_on_hexagon(hexagon_session.bytes());
    let host = run_on_host(host_session.bytes());
    assert_eq!(hexagon.len(), host.len(), "{what}: the transcripts differ in length:\n{hexagon:?}\n{host:?}");
    for (index, ((step, hexagon), host)) in with_steps(host_session, &hexagon).into_iter().zip(&host).enumerate() {
        let mut mended = hexagon.clone();
        if hexagon.kind == RECORD_OPENED {
            // INIT_MEMORY_REQUIREMENT differs by target; STACK_SIZE does not.
            mended.bytes[..4].copy_from_slice(&host.bytes[..4]);
        } else if holds_result(hexagon, step) && hexagon.bytes.len() >= RESULT_BYTES {
            let at = hexagon.bytes.len() - RESULT_BYTES;
            let ticks = at + TICKS.start..at + TICKS.end;
            if hexagon.bytes[at..at + 4] != [0; 4] {
                assert!(hexagon.bytes[ticks.clone()] != [0; 8], "{what}: record {index}: no DSP ticks on Hexagon");
            }
            mended.bytes[ticks.clone()].copy_from_slice(&host.bytes[ticks]);
        }
        assert_eq!(&mended, host, "{what}: record {index} differs between Hexagon and the host");
    }
    for (target, records) in [("Hexagon", &hexagon), ("the host", &host)] {
        let before_end = &records[records.len() - 2];
        assert!(
            before_end.kind != RECORD_EVENT,
            "{what}: no-event-from-end: {target}'s module raised {before_end:?} from end()"
        );
        assert_eq!(records[records.len() - 1].kind, RECORD_ENDED);
    }
    (host, hexagon, said)
}

/// Checks every call of a transcript answered EOK.
fn all_answered_eok(records: &[Record], what: &str) {
    for record in records {
        if matches!(record.kind, RECORD_OPENED | RECORD_STEP | RECORD_ENDED) {
            assert_eq!(record.value, EOK, "{what}: a call failed: {record:?}");
        }
    }
}

/// The answers of the session's steps, in order.
fn answers(records: &[Record]) -> Vec<&Record> {
    records.iter().filter(|record| record.kind == RECORD_STEP).collect()
}

/// Writes the session for the Hexagon contract model's directory and for the host build's, runs both with
/// [`run_on_both`]; answers the host's session and records, Hexagon's records and Hexagon's stderr.
fn run_written(what: &str, write: impl Fn(&Path) -> Session) -> (Session, Vec<Record>, Vec<Record>, String) {
    let hexagon = write(common::virtual_adsp("libQnnLpaiContract.so").parent().unwrap());
    let host_model = common::artifact(
        "target/release/libQnnLpaiContract.so",
        "cargo build --release -p lpai-contract-lpai -p lpai-contract-system",
    );
    let host = write(host_model.parent().unwrap());
    let (host_records, hexagon_records, said) = run_on_both(what, &hexagon, &host);
    (host, host_records, hexagon_records, said)
}

/// The result events' result records (after the client's address, token and event id).
fn result_records(records: &[Record]) -> Vec<&[u8]> {
    let events = records.iter().filter(|r| r.kind == RECORD_EVENT && r.value == event::DATA_TO_DSP_CLIENT_V2);
    events
        .map(|record| {
            assert_eq!(record.bytes[..8], common::CLIENT.0.to_le_bytes());
            assert_eq!(record.bytes[8..12], common::CLIENT.1.to_le_bytes());
            assert_eq!(record.bytes[12..16], ids::EVENT_ID_RESULT.to_le_bytes());
            assert_eq!(record.bytes.len(), 16 + RESULT_BYTES);
            &record.bytes[16..]
        })
        .collect()
}

/// The result events' headers.
fn results(records: &[Record]) -> Vec<ResultHeader> {
    result_records(records).into_iter().map(|record| ResultHeader::decode(record).unwrap()).collect()
}

/// What the contract fixture documents of its one input and output (its manifest, written by
/// `scripts/make_contract_fixtures.py`): their scale and zero point, and the output's formula.
struct Contract {
    input: (f32, i64),
    output: (f32, i64),
    multiplier: i64,
    addend: i64,
    shift: u32,
    step: i64,
}

impl Contract {
    fn documented() -> Contract {
        let text = std::fs::read_to_string(common::fixture(FIXTURE).join("manifest.json")).unwrap();
        let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
        let (input, output) = (&manifest["inputs"][0], &manifest["outputs"][0]);
        let encoding = |tensor: &serde_json::Value| {
            assert_eq!(
                (tensor["native_dtype"].as_str(), &tensor["shape"]),
                (Some("uint8"), &serde_json::json!([1, WINDOW]))
            );
            (tensor["scale"].as_f64().unwrap() as f32, tensor["zero_point"].as_i64().unwrap())
        };
        let formula = &output["contract_formula"];
        let number = |name: &str| formula[name].as_i64().unwrap();
        assert_eq!(number("source"), 0);
        Contract {
            input: encoding(input),
            output: encoding(output),
            multiplier: number("multiplier"),
            addend: number("addend"),
            shift: number("shift") as u32,
            step: number("step"),
        }
    }

    /// The scores the record holds for `window` (floats, as the module makes the samples) at the model's frame
    /// `frame` (its executions before this one): each sample quantized as ONNX's QuantizeLinear does,
    /// `q = saturate(round_half_to_even(x / scale) + zero_point)`; each output `clamp((q[i mod 16] * multiplier +
    /// addend + frame * step) >> shift)` to u8; dequantized as `(out - zero_point) * scale` in float32.
    fn scores(&self, window: &[f32], frame: u32) -> Vec<u8> {
        assert_eq!(window.len(), WINDOW);
        let quantized: Vec<i64> = window
            .iter()
            .map(|&x| ((x / self.input.0).round_ties_even() as i64 + self.input.1).clamp(0, 255))
            .collect();
        (0..WINDOW)
            .map(|i| {
                let acc = quantized[i % quantized.len()] * self.multiplier + self.addend + i64::from(frame) * self.step;
                let out = (acc >> self.shift).clamp(0, 255);
                (out - self.output.1) as f32 * self.output.0
            })
            .flat_map(f32::to_le_bytes)
            .collect()
    }
}

/// Checks each Hexagon result's scores against the contract formula for `windows[i]` at frame `frames[i]`.
fn hexagon_results_follow_the_contract(hexagon: &[Record], windows: &[Vec<f32>], frames: &[u32]) {
    let contract = Contract::documented();
    let records = result_records(hexagon);
    assert_eq!((records.len(), windows.len()), (frames.len(), frames.len()));
    for (index, ((record, window), &frame)) in records.iter().zip(windows).zip(frames).enumerate() {
        let (scores, expected) = (&record[RESULT_HEADER_BYTES..], contract.scores(window, frame));
        let (ours, formula) = (common::floats(scores), common::floats(&expected));
        assert!(scores == expected, "Hexagon result {index} (frame {frame}): {ours:?}, the formula: {formula:?}");
    }
}

/// A process step's input: its layout, flags, timestamp and frame bytes.
fn process_input(kind: u32, bytes: &[u8]) -> Option<(u32, u32, &[u8], &[u8])> {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let version_2 = 1 << stream_flags::VERSION_SHIFT;
    match kind {
        STEP_PROCESS => {
            Some((DEINTERLEAVED_UNPACKED, stream_flags::TIMESTAMP_VALID | version_2, &bytes[..8], &bytes[8..]))
        }
        STEP_PROCESS_LAYOUT => Some((word(0), word(4), &bytes[8..16], &bytes[16..])),
        _ => None,
    }
}

/// Checks every process step gave the audio back untouched in its layout (one output buffer holding every channel
/// for interleaved and packed frames, one per channel for unpacked, each as long as its input), the timestamp as
/// SPF preset it, and the output's flags as SPF preset them (the input's timestamp-valid, ts_continue and erasure,
/// version 2; its end_of_frame and marker_eos never: SPF's gen_topo_module_process undoes a module's change to
/// them, "module is not supposed to propagate metadata") with only marker_1..3 copied from the input, and no
/// metadata list.
fn audio_passes_through(session: &Session, records: &[Record]) {
    let mut processed = 0;
    for ((kind, channels, bytes), answer) in steps(session).into_iter().zip(answers(records)) {
        let Some((layout, flags, timestamp, frame)) = process_input(kind, &bytes) else {
            continue;
        };
        let buffers = (answer.bytes.len() - 12 - frame.len()) / 4;
        let version_2 = 1 << stream_flags::VERSION_SHIFT;
        let carried = stream_flags::TIMESTAMP_VALID | stream_flags::TIMESTAMP_CONTINUE | stream_flags::ERASURE;
        let markers = 0x38;
        let expected_flags = (flags & (carried | markers)) | version_2;
        let output_flags = u32::from_le_bytes(answer.bytes[..4].try_into().unwrap());
        assert_eq!(output_flags & METADATA_SET, 0, "step {processed}: the module set the output's metadata list");
        assert_eq!(
            output_flags, expected_flags,
            "step {processed}: the output's flags (input 0x{flags:x}): the framework's end_of_frame and marker_eos changed"
        );
        assert_eq!(answer.bytes[4..12], timestamp[..], "the output stream's timestamp");
        assert_eq!(answer.bytes[12 + 4 * buffers..], frame[..], "a frame's audio changed (layout {layout})");
        let expected_buffers = if layout == DEINTERLEAVED_UNPACKED { channels as usize } else { 1 };
        assert_eq!(buffers, expected_buffers, "step {processed}: the output buffers (layout {layout})");
        for length in answer.bytes[12..12 + 4 * buffers].chunks_exact(4) {
            let length = u32::from_le_bytes(length.try_into().unwrap()) as usize;
            assert_eq!(length, frame.len() / buffers, "an output buffer's length (layout {layout})");
        }
        processed += 1;
    }
    assert!(processed > 0);
}

fn q15_bytes(samples: &[i16]) -> Vec<u8> {
    samples.iter().flat_map(|sample| sample.to_ne_bytes()).collect()
}

fn model() -> Vec<u8> {
    std::fs::read(common::fixture(FIXTURE).join("contract_single.bin")).unwrap()
}

#[test]
fn stereo_q15_with_channel_1_and_a_hop_gives_the_host_builds_results_on_hexagon() {
    // 120 samples per channel in frames of 24, a hop of 10: windows end at samples 16, 26, ..., 116.
    let tone: Vec<i16> = (0..120).map(|n| ((n as f64 * 0.3).sin() * 30_000.0) as i16).collect();
    let other: Vec<i16> = (0..120).map(|n| (n * 517 % 60_000 - 30_000) as i16).collect();
    let write = |directory: &Path| {
        let mut session = Session::default();
        let format = lpai_pd_shell::session_writer::media_format_v2(0, 2, 16, 15, media_format::DEINTERLEAVED_UNPACKED);
        session
            .step(STEP_SET_PARAM, ids::PARAM_ID_CONFIG, &configuration(directory, "channel=1\nhop=10\n"))
            .step(STEP_SET_PROPERTY, property::INPUT_MEDIA_FORMAT_V2, &format)
            .step(STEP_SET_PROPERTY, property::REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2, &common::client_registration())
            .step(STEP_SET_PARAM, ids::PARAM_ID_MODEL, &model())
            .frames(&[q15_bytes(&other), q15_bytes(&tone)], 2, 24, 48_000, 1_000_000)
            .step(STEP_GET_PARAM, ids::PARAM_ID_RESULT, &[0; RESULT_BYTES])
            .step(STEP_SET_PROPERTY, property::ALGORITHMIC_RESET, &[])
            .frames(&[q15_bytes(&other[..16]), q15_bytes(&tone[..16])], 2, 16, 48_000, 0);
        session
    };
    let (host, records, hexagon, said) = run_written("stereo Q15", write);
    all_answered_eok(&records, "stereo Q15");
    // The model loaded on the module's load stack of the default size, using no more than three quarters of it
    // (the module warns past that, and fails the load at its end).
    assert!(!said.contains("load_stack="), "the Hexagon load outgrew the default load stack: {said}");
    let results = results(&records);
    let counts: Vec<u32> = results.iter().map(|header| header.inferences).collect();
    assert_eq!(counts, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 1], "eleven windows, then one after the reset");
    assert!(results.iter().all(|header| header.output_bytes == 4 * WINDOW as u32 && header.dsp_ticks > 0));
    audio_passes_through(&host, &records);
    // Channel 1's windows of 16 every 10 samples, then the first again after the reset; the model's frame counter
    // (in its persistent memory) is not reset with the module's window: the twelfth execution is frame 11.
    let fed: Vec<f32> = tone.iter().map(|&sample| common::pcm_float(sample.into(), 15)).collect();
    let mut windows = common::audio_windows(&fed, WINDOW, 10);
    windows.push(windows[0].clone());
    hexagon_results_follow_the_contract(&hexagon, &windows, &(0..12).collect::<Vec<u32>>());
}

#[test]
fn six_channels_of_q31_with_channel_5_and_the_model_by_path_give_the_host_builds_results_on_hexagon() {
    let samples: Vec<Vec<u8>> = (0..6)
        .map(|channel| {
            let sample = |n: i64| (((n * 7919 + channel * 104_729) % 4001 - 2000) * 1_000_000) as i32;
            (0..100).flat_map(|n| sample(n).to_ne_bytes()).collect()
        })
        .collect();
    let write = |directory: &Path| {
        let mut session = Session::default();
        let format = lpai_pd_shell::session_writer::media_format_v2(0, 6, 32, 31, media_format::DEINTERLEAVED_UNPACKED);
        let mut path = common::fixture(FIXTURE).join("contract_single.bin").display().to_string().into_bytes();
        path.push(0);
        session
            .step(STEP_SET_PARAM, ids::PARAM_ID_CONFIG, &configuration(directory, "channel=5\n"))
            .step(STEP_SET_PROPERTY, property::INPUT_MEDIA_FORMAT_V2, &format)
            .step(STEP_SET_PROPERTY, property::REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2, &common::client_registration())
            .step(STEP_SET_PARAM, ids::PARAM_ID_MODEL_PATH, &path)
            .frames(&samples, 4, 20, 48_000, 0);
        session
    };
    let (host, records, hexagon, _) = run_written("six channels of Q31", write);
    all_answered_eok(&records, "six channels of Q31");
    // 100 samples, a window (and hop) of 16: six windows.
    let counts: Vec<u32> = results(&records).iter().map(|header| header.inferences).collect();
    assert_eq!(counts, [1, 2, 3, 4, 5, 6]);
    audio_passes_through(&host, &records);
    let channel_5: Vec<f32> = samples[5]
        .chunks_exact(4)
        .map(|sample| common::pcm_float(i32::from_ne_bytes(sample.try_into().unwrap()), 31))
        .collect();
    let windows = common::audio_windows(&channel_5, WINDOW, 0);
    hexagon_results_follow_the_contract(&hexagon, &windows, &[0, 1, 2, 3, 4, 5]);
}

/// The stereo session of the layout cases: channel 1 (a tone) and channel 0 (other samples), 120 samples each.
fn stereo_channels() -> (Vec<i16>, Vec<i16>) {
    let tone: Vec<i16> = (0..120).map(|n| ((n as f64 * 0.3).sin() * 30_000.0) as i16).collect();
    let other: Vec<i16> = (0..120).map(|n| (n * 517 % 60_000 - 30_000) as i16).collect();
    (other, tone)
}

/// The plain opening of a session: the configuration, the input format, the client's registration, the model.
fn opening(session: &mut Session, directory: &Path, extra: &str, channels: u32, layout: u32) {
    let format = lpai_pd_shell::session_writer::media_format_v2(0, channels, 16, 15, layout);
    session
        .step(STEP_SET_PARAM, ids::PARAM_ID_CONFIG, &configuration(directory, extra))
        .step(STEP_SET_PROPERTY, property::INPUT_MEDIA_FORMAT_V2, &format)
        .step(STEP_SET_PROPERTY, property::REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2, &common::client_registration())
        .step(STEP_SET_PARAM, ids::PARAM_ID_MODEL, &model());
}

/// Every input flag a plain frame has: the timestamp valid, stream data version 2.
fn plain_flags(_call: usize, _calls: usize) -> u32 {
    stream_flags::TIMESTAMP_VALID | (1 << stream_flags::VERSION_SHIFT)
}

/// The layouts SPF delivers (the C harness's `lay_out`): interleaved from a shared-memory write endpoint, mono and
/// stereo, deinterleaved packed and unpacked, in frames of 24; each gives the host build's results on Hexagon, the
/// contract's scores for channel 1's windows, and the audio back in its layout.
#[test]
fn every_layout_spf_delivers_gives_the_host_builds_results_on_hexagon() {
    let (other, tone) = stereo_channels();
    let fed: Vec<f32> = tone.iter().map(|&sample| common::pcm_float(sample.into(), 15)).collect();
    let windows = common::audio_windows(&fed, WINDOW, 10);
    let cases = [
        ("interleaved mono (channel 0)", "channel=0\nhop=10\n", 1, INTERLEAVED),
        ("interleaved stereo (channel 1)", "channel=1\nhop=10\n", 2, INTERLEAVED),
        ("deinterleaved packed stereo", "channel=1\nhop=10\n", 2, DEINTERLEAVED_PACKED),
        ("deinterleaved unpacked stereo", "channel=1\nhop=10\n", 2, DEINTERLEAVED_UNPACKED),
    ];
    for (what, extra, channels, layout) in cases {
        let pcm = if channels == 1 { vec![q15_bytes(&tone)] } else { vec![q15_bytes(&other), q15_bytes(&tone)] };
        let write = |directory: &Path| {
            let mut session = Session::default();
            opening(&mut session, directory, extra, channels, layout);
            session.layout_frames(&pcm, 2, &[(24, 1)], 48_000, 1_000_000, layout, plain_flags);
            session
        };
        let (host, records, hexagon, _) = run_written(what, write);
        all_answered_eok(&records, what);
        assert_eq!(results(&records).len(), windows.len(), "{what}: the results");
        audio_passes_through(&host, &records);
        hexagon_results_follow_the_contract(&hexagon, &windows, &(0..windows.len() as u32).collect::<Vec<u32>>());
    }
}

/// The C harness's `registration` case on Hexagon: REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2 as SPF's
/// gen_topo_capi_register_event_v2 makes it (the target's struct, 32 bytes on Hexagon, 40 on the host; its
/// `max_data_len` and the event configuration's left unset: 0, 1, actual - 1, 0xFFFFFFFF; `actual_data_len`
/// counting a configuration that is not inline), a deregistration between; every call succeeds and the results
/// reach the client.
#[test]
fn registration_with_max_data_len_unset_succeeds_on_hexagon() {
    let tone: Vec<i16> = stereo_channels().1;
    let write = |directory: &Path| {
        let mut session = Session::default();
        let format = lpai_pd_shell::session_writer::media_format_v2(0, 1, 16, 15, DEINTERLEAVED_UNPACKED);
        session.step(STEP_SET_PARAM, ids::PARAM_ID_CONFIG, &configuration(directory, "hop=10\n")).step(
            STEP_SET_PARAM,
            ids::PARAM_ID_MODEL,
            &model(),
        );
        let (address, token) = common::CLIENT;
        let actual = |config: usize| (size_of::<lpai_direct::capi::RegisterEventToDspClientV2>() + config) as u32;
        for (is_register, max, config_max, config) in [
            (true, 0, u32::MAX, &[][..]),
            (false, 1, 0, &[0u8; 4][..]),
            (true, actual(0) - 1, 1, &[][..]),
            (true, u32::MAX, actual(4) - 1, &[0u8; 4][..]),
        ] {
            session.register_as_spf(address, token, ids::EVENT_ID_RESULT, is_register, max, config_max, config);
        }
        session.step(STEP_SET_PROPERTY, property::INPUT_MEDIA_FORMAT_V2, &format).layout_frames(
            &[q15_bytes(&tone)],
            2,
            &[(24, 1)],
            48_000,
            0,
            DEINTERLEAVED_UNPACKED,
            plain_flags,
        );
        session
    };
    let (_, records, hexagon, _) = run_written("registration", write);
    all_answered_eok(&records, "registration");
    let fed: Vec<f32> = tone.iter().map(|&sample| common::pcm_float(sample.into(), 15)).collect();
    let windows = common::audio_windows(&fed, WINDOW, 10);
    assert_eq!(results(&records).len(), windows.len(), "registration: the results reach the client");
    hexagon_results_follow_the_contract(&hexagon, &windows, &(0..windows.len() as u32).collect::<Vec<u32>>());
}

/// The C harness's `format-query` and `result-before-inference` cases on Hexagon: the output format asked for on
/// output 0 (SIZE, V2 into 100 bytes, v1 into 64) before any input format, as SPF's prepare does, refused without
/// a trace (ENOTREADY, ENOTREADY, EUNSUPPORTED, no byte written); the real input format then taken and raised back
/// (its V2 payload echoed); and get_param of the result after start, before the first inference, reading the
/// whole record as zeros (into a room filled with 0xA5).
#[test]
fn the_format_query_before_the_input_format_and_the_result_before_the_first_inference_on_hexagon() {
    let tone: Vec<i16> = stereo_channels().1;
    let output = PortInfo { is_valid: 1, is_input_port: 0, port_index: 0 };
    let format = lpai_pd_shell::session_writer::media_format_v2(0, 1, 16, 15, DEINTERLEAVED_UNPACKED);
    let write = |directory: &Path| {
        let mut session = Session::default();
        session
            .step(STEP_SET_PARAM, ids::PARAM_ID_CONFIG, &configuration(directory, "hop=10\n"))
            .step(STEP_SET_PARAM, ids::PARAM_ID_MODEL, &model())
            .step(STEP_SET_PROPERTY, property::REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2, &common::client_registration())
            .get_property(property::OUTPUT_MEDIA_FORMAT_SIZE, output, 4)
            .get_property(property::OUTPUT_MEDIA_FORMAT_V2, output, 100)
            .get_property(property::OUTPUT_MEDIA_FORMAT, output, 64)
            .step(STEP_SET_PROPERTY, property::INPUT_MEDIA_FORMAT_V2, &format)
            .get_property(property::OUTPUT_MEDIA_FORMAT_V2, output, 100)
            .step(STEP_GET_PARAM, ids::PARAM_ID_RESULT, &[0xA5; RESULT_BYTES])
            .layout_frames(&[q15_bytes(&tone)], 2, &[(24, 1)], 48_000, 0, DEINTERLEAVED_UNPACKED, plain_flags);
        session
    };
    let (host, records, _, _) = run_written("format-query and result-before-inference", write);
    let answered = answers(&records);
    let queries: Vec<(u32, &[u8])> = answered[3..6].iter().map(|record| (record.value, &record.bytes[..])).collect();
    let nothing = &[0u8; 4][..];
    assert_eq!(queries, [(ENOTREADY, nothing), (ENOTREADY, nothing), (EUNSUPPORTED, nothing)], "format-query");
    assert_eq!(answered[6].value, EOK, "format-query: the input format after the queries");
    let echoed = 36 + 2;
    let raised: Vec<&Record> =
        records.iter().filter(|r| r.kind == RECORD_EVENT && r.value == event::OUTPUT_MEDIA_FORMAT_UPDATED_V2).collect();
    assert_eq!(raised.len(), 1, "format-query: one output format raised");
    assert_eq!(raised[0].bytes, format[..echoed], "format-query: the input format raised back");
    let mut v2 = (echoed as u32).to_le_bytes().to_vec();
    v2.extend(&format[..echoed]);
    assert_eq!((answered[7].value, &answered[7].bytes), (EOK, &v2), "format-query: OUTPUT_MEDIA_FORMAT_V2 after it");
    assert_eq!(answered[8].value, EOK, "result-before-inference: get_param's answer");
    assert_eq!(answered[8].bytes, [0; RESULT_BYTES], "result-before-inference: the record before the first inference");
    assert!(!results(&records).is_empty(), "format-query: the results after it");
    audio_passes_through(&host, &records);
}

/// The C harness's `stream-flags` case on Hexagon: end of frame on every third input frame and end of stream on
/// the last (plus marker_1, which a module must propagate); the output's flags stay as SPF preset them.
#[test]
fn end_of_frame_and_end_of_stream_leave_the_frameworks_output_flags_alone_on_hexagon() {
    let (other, tone) = stereo_channels();
    let flags = |call: usize, calls: usize| {
        let mut flags = plain_flags(call, calls) | 1 << 3;
        if call % 3 == 2 {
            flags |= stream_flags::END_OF_FRAME;
        }
        if call + 1 == calls {
            flags |= stream_flags::END_OF_FRAME | stream_flags::MARKER_EOS;
        }
        flags
    };
    for layout in [DEINTERLEAVED_UNPACKED, INTERLEAVED] {
        let write = |directory: &Path| {
            let mut session = Session::default();
            opening(&mut session, directory, "channel=1\nhop=10\n", 2, layout);
            session.layout_frames(&[q15_bytes(&other), q15_bytes(&tone)], 2, &[(24, 1)], 48_000, 0, layout, flags);
            session
        };
        let (host, records, _, _) = run_written(&format!("stream-flags (layout {layout})"), write);
        all_answered_eok(&records, "stream-flags");
        audio_passes_through(&host, &records);
        assert_eq!(results(&records).len(), 11, "stream-flags (layout {layout}): the results");
    }
}

/// KPPS and code and data bandwidth at 48 kHz for `frame` samples per call, on the contract model (window 16,
/// 16 uint8 outputs) with a hop of 160 and Q15 input, as the module's decision gives them: packets/s =
/// ceil(48000 / frame) × PACKETS_PER_FRAME + 48000 × (550 + 8 × (min(window, hop) + window + outputs)) / hop, KPPS its
/// thousands rounded up, code 16 bytes a packet; data 48000 × (16 × (2 + 4) + 16 × (4 + 1) + 16 × (1 + 4) + 24) /
/// 160, whatever the frame.
fn votes_for(frame: u64) -> (u32, u32, u32) {
    let packets = 48_000u64.div_ceil(frame) * PACKETS_PER_FRAME
        + 48_000 * (PACKETS_PER_INFERENCE + PACKETS_PER_ELEMENT * (16 + 16 + 16)) / 160;
    let data = 48_000 * (16 * 6 + 16 * 5 + 16 * 5 + 24) / 160;
    (packets.div_ceil(1000) as u32, (packets * 16) as u32, data as u32)
}

/// The votes on Hexagon: frames of 1 ms, then 5, then 10 (48, 240 and 480 samples at 48 kHz); the vote at the
/// input format is for SPF's shortest frame (1 ms), and the first call of each new frame votes again, once.
#[test]
fn the_votes_follow_frames_of_1_5_and_10_ms_on_hexagon() {
    let tone: Vec<i16> = (0..4800).map(|n| ((n as f64 * 0.01).sin() * 20_000.0) as i16).collect();
    let write = |directory: &Path| {
        let mut session = Session::default();
        // In SPF's order: the model with the graph's calibration, the input format with the first data.
        let format = lpai_pd_shell::session_writer::media_format_v2(0, 1, 16, 15, DEINTERLEAVED_UNPACKED);
        session
            .step(STEP_SET_PARAM, ids::PARAM_ID_CONFIG, &configuration(directory, "hop=160\n"))
            .step(STEP_SET_PARAM, ids::PARAM_ID_MODEL, &model())
            .step(STEP_SET_PROPERTY, property::REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2, &common::client_registration())
            .step(STEP_SET_PROPERTY, property::INPUT_MEDIA_FORMAT_V2, &format);
        let frames = [(48, 20), (240, 8), (480, 1)];
        session.layout_frames(&[q15_bytes(&tone)], 2, &frames, 48_000, 0, DEINTERLEAVED_UNPACKED, plain_flags);
        session
    };
    let (_, records, _, _) = run_written("votes", write);
    all_answered_eok(&records, "votes");
    let votes: Vec<(u32, Vec<u8>)> = records
        .iter()
        .filter(|r| r.kind == RECORD_EVENT && (r.value == event::KPPS || r.value == event::BANDWIDTH))
        .map(|r| (r.value, r.bytes.clone()))
        .collect();
    let mut expected = Vec::new();
    for frame in [48, 240, 480] {
        let (kpps, code, data) = votes_for(frame);
        expected.push((event::KPPS, kpps.to_le_bytes().to_vec()));
        expected.push((event::BANDWIDTH, [code.to_le_bytes(), data.to_le_bytes()].concat()));
    }
    assert_eq!(votes, expected, "votes (frames of 1, 5 and 10 ms): KPPS and BANDWIDTH");
    assert_eq!(results(&records).len(), 30, "votes: the results");
}

/// The C harness's `config-after-start` case on Hexagon: after frames have run, a configuration with another
/// backend is refused (EBADPARAM, saying which key and what to do), one with the same model keys and another
/// channel and hop is taken, and the results follow it from a new window.
#[test]
fn configuration_after_start_takes_channel_and_hop_and_refuses_model_keys_on_hexagon() {
    let (other, tone) = stereo_channels();
    let write = |directory: &Path| {
        let mut session = Session::default();
        opening(&mut session, directory, "channel=1\nhop=10\n", 2, DEINTERLEAVED_UNPACKED);
        let (first_other, first_tone) = (q15_bytes(&other[..48]), q15_bytes(&tone[..48]));
        session.layout_frames(
            &[first_other, first_tone],
            2,
            &[(24, 1)],
            48_000,
            0,
            DEINTERLEAVED_UNPACKED,
            plain_flags,
        );
        let refused = format!("backend={}/libQnnOther.so\nchannel=0\nhop=20\n\0", directory.display()).into_bytes();
        session.step(STEP_SET_PARAM, ids::PARAM_ID_CONFIG, &refused).step(
            STEP_SET_PARAM,
            ids::PARAM_ID_CONFIG,
            &configuration(directory, "channel=0\nhop=20\n"),
        );
        let (rest_other, rest_tone) = (q15_bytes(&other[48..]), q15_bytes(&tone[48..]));
        session.layout_frames(
            &[rest_other, rest_tone],
            2,
            &[(24, 1)],
            48_000,
            1000,
            DEINTERLEAVED_UNPACKED,
            plain_flags,
        );
        session
    };
    let (_, records, hexagon, said) = run_written("config-after-start", write);
    let answered = answers(&records);
    // The opening's four steps, two frames, then the two configurations.
    assert_eq!(answered[6].value, EBADPARAM, "config-after-start: a new backend after start is refused");
    assert_eq!(answered[7].value, EOK, "config-after-start: a new channel and hop after start are taken");
    assert!(said.contains("configuration key backend changes the model"), "config-after-start: the refusal: {said}");
    // Channel 1 every 10 samples over the first 48 (windows ending at 16, 26, 36, 46), then channel 0 in a new
    // window from sample 48, every 20 (ending at 64, 84, 104).
    let float = |samples: &[i16]| samples.iter().map(|&s| common::pcm_float(s.into(), 15)).collect::<Vec<f32>>();
    let mut windows = common::audio_windows(&float(&tone[..48]), WINDOW, 10);
    windows.extend(common::audio_windows(&float(&other[48..]), WINDOW, 20));
    let counts: Vec<u32> = results(&records).iter().map(|header| header.inferences).collect();
    let frames: Vec<u32> = (0..windows.len() as u32).collect();
    assert_eq!(counts, frames.iter().map(|frame| frame + 1).collect::<Vec<u32>>(), "config-after-start: the results");
    hexagon_results_follow_the_contract(&hexagon, &windows, &frames);
}
