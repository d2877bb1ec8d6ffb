//! The audio module on Hexagon: the module `.so` that `scripts/build-hexagon.sh` ships (its v73 build in
//! `target/virtual-adsp/` when the shipped one is for a newer CPU than qemu-hexagon emulates), loaded by the PD
//! shell's own ELF loader under qemu-hexagon (`lpai-pd-shell --capi`), runs a PCM stream against the Hexagon build
//! of the contract model of libQnnLpai; the host build of the same module runs the same session against the host
//! build of the contract model, through the same session driver (`lpai_pd_shell::capi_session`). The two
//! transcripts are the same, event for event and byte for byte, except for what differs by design: the instance
//! memory the module asks (its state is laid out for each target) and the DSP clock ticks of each inference. Every
//! Hexagon result's scores are also held, bit for bit, to the contract model's documented formula for the window
//! the module was fed (computed here from the fixture's manifest, not by the model's code), so that a bug the two
//! builds share does not pass.

mod common;

use lpai_direct::capi::{event, media_format, property, GetStaticPropertiesFn, InitFn, EOK};
use lpai_direct_skel::audio::ids::{self, ResultHeader, RESULT_HEADER_BYTES};
use lpai_pd_shell::capi_session::{self, EntryPoints, RECORD_ENDED, RECORD_EVENT, RECORD_OPENED, RECORD_STEP};
use lpai_pd_shell::capi_session::{STEP_GET_PARAM, STEP_PROCESS, STEP_SET_PARAM, STEP_SET_PROPERTY};
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
    let module = common::artifact("target/release/liblpai_direct_capi.so", "cargo build --release -p lpai-direct-capi");
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

/// Runs the session on the Hexagon module in the virtual aDSP.
fn run_on_hexagon(session: &[u8]) -> Vec<Record> {
    let mut child = Command::new("qemu-hexagon")
        .args(["-cpu", "v73"])
        .arg(common::virtual_adsp("lpai-pd-shell"))
        .arg("--capi")
        .arg(common::virtual_adsp("liblpai_direct_capi.so"))
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
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "lpai-pd-shell --capi: {}\n{errors}", output.status);
    records(output.stdout)
}

/// The kind of step each of `session`'s steps is, in order, and its bytes.
fn steps(session: &Session) -> Vec<(u32, Vec<u8>)> {
    let mut bytes = session.bytes().to_vec();
    capi_session::records(&mut bytes).map(|step| step.map(|s| (s.kind, s.bytes.to_vec())).unwrap()).collect()
}

/// Whether a transcript record holds a result record: a result event, or a get_param step's answer.
fn holds_result(record: &Record, step: Option<u32>) -> bool {
    let event = record.kind == RECORD_EVENT && record.value == event::DATA_TO_DSP_CLIENT_V2;
    event || (record.kind == RECORD_STEP && step == Some(STEP_GET_PARAM))
}

/// Each record with the kind of the step it belongs to (`None` before the first and after the last).
fn with_steps<'r>(session: &Session, records: &'r [Record]) -> Vec<(Option<u32>, &'r Record)> {
    let mut kinds = steps(session).into_iter().map(|(kind, _)| kind);
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

/// Runs `session` on both builds; checks every call answered EOK and the transcripts agree but for the instance
/// memory and the DSP ticks; answers the host's records and Hexagon's.
fn run_on_both(hexagon_session: &Session, host_session: &Session) -> (Vec<Record>, Vec<Record>) {
    let hexagon = run_on_hexagon(hexagon_session.bytes());
    let host = run_on_host(host_session.bytes());
    assert_eq!(hexagon.len(), host.len(), "the transcripts differ in length:\n{hexagon:?}\n{host:?}");
    for (index, ((step, hexagon), host)) in with_steps(host_session, &hexagon).into_iter().zip(&host).enumerate() {
        let mut mended = hexagon.clone();
        if hexagon.kind == RECORD_OPENED {
            // INIT_MEMORY_REQUIREMENT differs by target; STACK_SIZE does not.
            mended.bytes[..4].copy_from_slice(&host.bytes[..4]);
        } else if holds_result(hexagon, step) && hexagon.bytes.len() >= RESULT_BYTES {
            let at = hexagon.bytes.len() - RESULT_BYTES;
            let ticks = at + TICKS.start..at + TICKS.end;
            assert!(hexagon.bytes[ticks.clone()] != [0; 8], "record {index}: no DSP ticks on Hexagon");
            mended.bytes[ticks.clone()].copy_from_slice(&host.bytes[ticks]);
        }
        assert_eq!(&mended, host, "record {index} differs between Hexagon and the host");
    }
    for record in &host {
        if matches!(record.kind, RECORD_OPENED | RECORD_STEP | RECORD_ENDED) {
            assert_eq!(record.value, EOK, "a call failed: {record:?}");
        }
    }
    (host, hexagon)
}

/// Writes the session for the Hexagon contract model's directory and for the host build's, runs both with
/// [`run_on_both`]; answers the host's session and records, and Hexagon's records.
fn run_written(write: impl Fn(&Path) -> Session) -> (Session, Vec<Record>, Vec<Record>) {
    let hexagon = write(common::virtual_adsp("libQnnLpaiContract.so").parent().unwrap());
    let host_model = common::artifact(
        "target/release/libQnnLpaiContract.so",
        "cargo build --release -p lpai-contract-lpai -p lpai-contract-system",
    );
    let host = write(host_model.parent().unwrap());
    let (host_records, hexagon_records) = run_on_both(&hexagon, &host);
    (host, host_records, hexagon_records)
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

/// Checks every process step gave the audio back untouched, each output buffer as long as its input, and the
/// timestamp passed on.
fn audio_passes_through(session: &Session, records: &[Record]) {
    let answers = records.iter().filter(|record| record.kind == RECORD_STEP);
    let mut processed = 0;
    for ((kind, bytes), answer) in steps(session).into_iter().zip(answers) {
        if kind != STEP_PROCESS {
            continue;
        }
        let (timestamp, frame) = bytes.split_at(8);
        let channels = (answer.bytes.len() - 12 - frame.len()) / 4;
        assert_eq!(answer.bytes[4..12], timestamp[..], "the output stream's timestamp");
        assert_eq!(answer.bytes[12 + 4 * channels..], frame[..], "a frame's audio changed");
        for length in answer.bytes[12..12 + 4 * channels].chunks_exact(4) {
            let length = u32::from_le_bytes(length.try_into().unwrap()) as usize;
            assert_eq!(length, frame.len() / channels, "an output buffer's length");
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
    let (host, records, hexagon) = run_written(write);
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
    let (host, records, hexagon) = run_written(write);
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
