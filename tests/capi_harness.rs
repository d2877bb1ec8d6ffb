//! The audio module's shared object `liblpai_direct_capi.so` driven from C exactly as SPF drives a CAPI module
//! (`tests/c/capi_harness.c`: guard bytes around every buffer lent to the module; two lives of the module, each
//! giving back every memory block and library it took; no event from `end`; the framework's stream flags checked
//! against their snapshot after every process call), on the real libQnnHtp.so: its results equal, bit for bit,
//! ONNX Runtime's on its QNN execution provider for the windows it was fed (`scripts/ort_audio_scores.py`), the
//! audio comes out as it went in, in the layout it went in, and formats it cannot handle are refused with an error
//! code, no crash. Every session runs on a stack of exactly the size SPF gives the container thread for the
//! module's STACK_SIZE, with a guard page below it, model loads included (which the module makes on a stack of its
//! own). Each case the real SPF showed (the harness's CASE argument) has a test of its own.
//! `LPAI_CAPI_LIBRARY` names another build of the module to drive (e.g. an older one, to see the cases fail).

mod common;

use lpai_direct_skel::audio::module::{PACKETS_PER_ELEMENT, PACKETS_PER_FRAME, PACKETS_PER_INFERENCE};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Compiles the harness against the module's shared object into `work`.
fn compile_harness(library: &Path, work: &Path) -> PathBuf {
    let program = work.join("capi_harness");
    let compiled = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&program)
        .arg(common::root().join("tests/c/capi_harness.c"))
        .arg("-L")
        .arg(library.parent().unwrap())
        .arg("-llpai_direct_capi")
        .status()
        .expect("the C compiler (cc) runs");
    assert!(compiled.success(), "compiling tests/c/capi_harness.c failed");
    program
}

/// CAPI's layouts (`data_interleaving`).
const INTERLEAVED: u32 = 0;
const DEINTERLEAVED_PACKED: u32 = 1;
const DEINTERLEAVED_UNPACKED: u32 = 2;

/// A run of the harness: the PCM (interleaved), its format and layout, the configuration's extra lines, the
/// frames, the case and its arguments; answers the process output, the result records and the audio that came out
/// (interleaved again).
struct Run<'a> {
    extra_config: &'a str,
    pcm: Vec<u8>,
    channels: u32,
    bits: u32,
    q: u32,
    frames: &'a str,
    format: (u32, u32),
    case: &'a str,
    case_arguments: Vec<PathBuf>,
}

impl Run<'_> {
    fn plain(extra_config: &str, pcm: Vec<u8>, channels: u32, bits: u32, q: u32) -> Run<'_> {
        Run {
            extra_config,
            pcm,
            channels,
            bits,
            q,
            frames: "64",
            format: (0, DEINTERLEAVED_UNPACKED),
            case: "plain",
            case_arguments: Vec::new(),
        }
    }

    fn go(&self, harness: &Harness) -> (Output, Vec<u8>, Vec<u8>) {
        let work = harness.work.path();
        let config = work.join("config.txt");
        std::fs::write(&config, configuration(self.extra_config)).unwrap();
        let pcm = work.join("in.pcm");
        std::fs::write(&pcm, &self.pcm).unwrap();
        let (results, audio) = (work.join("results.bin"), work.join("out.pcm"));
        let output = Command::new(&harness.program)
            .arg(&config)
            .arg(common::fixture("audio_frame/audio_frame_qnn.bin"))
            .arg(&pcm)
            .args([self.channels, self.bits, self.q].map(|n| n.to_string()))
            .arg(self.frames)
            .arg(&results)
            .arg(&audio)
            .args([self.format.0, self.format.1].map(|n| n.to_string()))
            .arg(self.case)
            .args(&self.case_arguments)
            .env("LD_LIBRARY_PATH", harness.library.parent().unwrap())
            .output()
            .unwrap();
        (output, std::fs::read(results).unwrap_or_default(), std::fs::read(audio).unwrap_or_default())
    }

    /// Runs and checks the harness held every check and the module took the format: answers stdout, the records
    /// and the audio.
    fn passes(&self, harness: &Harness, what: &str) -> (String, Vec<u8>, Vec<u8>) {
        let (output, records, audio) = self.go(harness);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{what}: the harness failed:\n{stdout}{stderr}");
        assert!(!stdout.contains("format refused"), "{what}: the module refused the media format:\n{stdout}{stderr}");
        (stdout, records, audio)
    }
}

/// The configuration text: the real HTP backend, then `extra`.
fn configuration(extra: &str) -> String {
    let qnn = common::qnn_lib_dir();
    format!(
        "backend={}\nsystem_library={}\n{extra}",
        qnn.join("libQnnHtp.so").display(),
        qnn.join("libQnnSystem.so").display()
    )
}

/// The compiled harness, the module it drives and its working directory.
struct Harness {
    program: PathBuf,
    library: PathBuf,
    work: tempfile::TempDir,
}

impl Harness {
    fn new() -> Harness {
        let library = match std::env::var_os("LPAI_CAPI_LIBRARY") {
            Some(path) => PathBuf::from(path),
            None => {
                common::artifact("target/release/liblpai_direct_capi.so", "cargo build --release -p lpai-direct-capi")
            }
        };
        let work = tempfile::tempdir().unwrap();
        let program = compile_harness(&library, work.path());
        Harness { program, library, work }
    }
}

/// Splits result records (24-byte header, then `output_bytes` of floats) into their float parts.
fn scores_of(records: &[u8]) -> Vec<Vec<u8>> {
    let mut scores = Vec::new();
    let mut rest = records;
    while rest.len() >= 24 {
        let output_bytes = u32::from_le_bytes(rest[4..8].try_into().unwrap()) as usize;
        scores.push(rest[24..24 + output_bytes].to_vec());
        rest = &rest[24 + output_bytes..];
    }
    assert!(rest.is_empty(), "a result record is cut short");
    scores
}

/// Interleaves `channels` (each a run of native samples) into one PCM stream.
fn interleave<T: Copy>(channels: &[Vec<T>], bytes: impl Fn(T) -> Vec<u8>) -> Vec<u8> {
    let mut pcm = Vec::new();
    for n in 0..channels[0].len() {
        for channel in channels {
            pcm.extend(bytes(channel[n]));
        }
    }
    pcm
}

/// A Q15 tone of `length` samples.
fn tone(length: usize) -> Vec<i16> {
    (0..length).map(|n| ((n as f64 * 0.05).sin() * 25_000.0) as i16).collect()
}

/// ORT's scores for the windows of `length`-sample windows every `hop` of a Q15 channel.
fn q15_references(channel: &[i16], hop: usize, work: &Path) -> Vec<Vec<u8>> {
    let fed: Vec<f32> = channel.iter().map(|&sample| common::pcm_float(sample.into(), 15)).collect();
    let windows = common::audio_windows(&fed, 160, hop);
    common::ort_scores("audio_frame", &windows, work)
}

#[test]
fn the_shared_object_driven_from_c_gives_orts_results_and_passes_the_audio_through() {
    let _guard = common::qnn_lock();
    let harness = Harness::new();
    // Stereo Q15, channel 1, a hop of 100 against the window of 160, frames of 64: windows end at 160 .. 560.
    let tone = tone(600);
    let other: Vec<i16> = (0..600).map(|n| n as i16 * 51).collect();
    let pcm = interleave(&[other, tone.clone()], |sample: i16| sample.to_ne_bytes().to_vec());
    let run = Run::plain("channel=1\nhop=100\n", pcm.clone(), 2, 16, 15);
    let (stdout, records, audio) = run.passes(&harness, "plain: stereo Q15, unpacked");
    let stack = lpai_direct_skel::audio::module::STACK_BYTES;
    assert!(stdout.contains(&format!("results 5 stack {stack}")), "{stdout}");
    // Both lives ran, model loads included, on a stack of exactly the size SPF gives the container thread for
    // that STACK_SIZE (the largest module's, at least 1024, plus 1024 for SPF's own frames), guard page below.
    let thread = stack.max(1024) + 1024;
    let lives = stdout.lines().filter(|line| line.starts_with(&format!("spf thread {thread} used "))).count();
    assert_eq!(lives, 2, "two lives on SPF's {thread}-byte stack: {stdout}");
    // The loads ran on the module's load stack, within its default size.
    let load = stdout.lines().find_map(|line| line.strip_prefix("load stack used ")).expect("the load stack's use");
    let load: usize = load.parse().unwrap();
    let default = lpai_direct_skel::audio::config::DEFAULT_LOAD_STACK_BYTES as usize;
    assert!(load > 0 && load < default, "the load stack's deepest use: {load} bytes of {default}");
    assert_eq!(audio, pcm, "the audio came out changed");
    let references = q15_references(&tone, 100, harness.work.path());
    assert_eq!(references.len(), 5);
    assert_eq!(scores_of(&records), references);

    // Six channels of Q31 at 48 kHz, channel 5, frames of 100, the default hop (the window).
    let chirp: Vec<i32> = (0..480).map(|n| ((n as f64 * n as f64 * 0.0005).cos() * 1.9e9) as i32).collect();
    let mut pcm = Vec::new();
    for (n, &sample) in chirp.iter().enumerate() {
        for channel in 0..6 {
            let value = if channel == 5 { sample } else { (n as i32).wrapping_mul(channel + 7) };
            pcm.extend(value.to_ne_bytes());
        }
    }
    let run = Run { frames: "100", ..Run::plain("channel=5\n", pcm.clone(), 6, 32, 31) };
    let (_, records, audio) = run.passes(&harness, "plain: six channels of Q31, unpacked");
    assert_eq!(audio, pcm);
    // Channel 5's windows, ending at samples 160, 320 and 480.
    let fed: Vec<f32> = chirp.iter().map(|&sample| common::pcm_float(sample, 31)).collect();
    let windows = common::audio_windows(&fed, 160, 0);
    assert_eq!(windows.len(), 3);
    assert_eq!(scores_of(&records), common::ort_scores("audio_frame", &windows, harness.work.path()));
}

/// The layouts SPF hands a module (the harness's `lay_out`): interleaved from a shared-memory write endpoint, mono
/// and stereo, deinterleaved packed and unpacked; each gives the same results, bit for bit, as ORT's for the
/// channel's windows, and the audio back byte for byte in its layout.
#[test]
fn every_layout_spf_delivers_gives_orts_results_and_the_audio_back_in_its_layout() {
    let _guard = common::qnn_lock();
    let harness = Harness::new();
    let tone = tone(600);
    let other: Vec<i16> = (0..600).map(|n| (n as i16).wrapping_mul(-313)).collect();
    let references = q15_references(&tone, 100, harness.work.path());
    let mono = interleave(std::slice::from_ref(&tone), |sample: i16| sample.to_ne_bytes().to_vec());
    let stereo = interleave(&[other, tone.clone()], |sample: i16| sample.to_ne_bytes().to_vec());
    let cases = [
        ("interleaved mono (layout 0, channel 0)", "channel=0\nhop=100\n", &mono, 1, INTERLEAVED),
        ("interleaved stereo (layout 0, channel 1)", "channel=1\nhop=100\n", &stereo, 2, INTERLEAVED),
        ("deinterleaved packed stereo (layout 1, channel 1)", "channel=1\nhop=100\n", &stereo, 2, DEINTERLEAVED_PACKED),
        (
            "deinterleaved unpacked stereo (layout 2, channel 1)",
            "channel=1\nhop=100\n",
            &stereo,
            2,
            DEINTERLEAVED_UNPACKED,
        ),
    ];
    for (what, extra, pcm, channels, layout) in cases {
        let run = Run { format: (0, layout), ..Run::plain(extra, pcm.clone(), channels, 16, 15) };
        let (stdout, records, audio) = run.passes(&harness, what);
        assert!(stdout.contains("results 5 stack"), "{what}: {stdout}");
        assert!(audio == *pcm, "{what}: the audio came out changed");
        assert!(scores_of(&records) == references, "{what}: the results are not ORT's for channel {}", channels - 1);
    }

    // Six channels of Q31, interleaved, channel 5: the plain case's references.
    let chirp: Vec<i32> = (0..480).map(|n| ((n as f64 * n as f64 * 0.0005).cos() * 1.9e9) as i32).collect();
    let channels: Vec<Vec<i32>> = (0..6)
        .map(|c| if c == 5 { chirp.clone() } else { (0..480).map(|n: i32| n.wrapping_mul(c + 7)).collect() })
        .collect();
    let pcm = interleave(&channels, |sample: i32| sample.to_ne_bytes().to_vec());
    let fed: Vec<f32> = chirp.iter().map(|&sample| common::pcm_float(sample, 31)).collect();
    let references = common::ort_scores("audio_frame", &common::audio_windows(&fed, 160, 0), harness.work.path());
    for (what, layout) in [
        ("interleaved six channels of Q31 (channel 5)", INTERLEAVED),
        ("packed six channels of Q31", DEINTERLEAVED_PACKED),
    ] {
        let run = Run { frames: "100", format: (0, layout), ..Run::plain("channel=5\n", pcm.clone(), 6, 32, 31) };
        let (_, records, audio) = run.passes(&harness, what);
        assert!(audio == pcm, "{what}: the audio came out changed");
        assert!(scores_of(&records) == references, "{what}: the results are not ORT's for channel 5");
    }
}

#[test]
fn floating_point_and_unknown_layouts_are_refused_with_badparam_from_c() {
    let harness = Harness::new();
    for (data_format, interleaving) in [(1, DEINTERLEAVED_UNPACKED), (0, 4), (0, u32::MAX)] {
        let run = Run { format: (data_format, interleaving), ..Run::plain("", vec![0; 4 * 160], 2, 16, 15) };
        let (output, records, _) = run.go(&harness);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
        assert!(stdout.contains("format refused 0x2"), "{data_format}/{interleaving}: {stdout}");
        assert!(records.is_empty());
    }
}

/// The harness's `registration` case: REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2 as SPF's gen_topo_capi_register_event_v2
/// makes it, max_data_len unset (0, 1, actual - 1, 0xFFFFFFFF), actual_data_len counting an event configuration
/// that is not inline; every registration succeeds and the results arrive.
#[test]
fn registration_with_max_data_len_unset_succeeds_and_the_results_arrive() {
    let _guard = common::qnn_lock();
    let harness = Harness::new();
    let tone = tone(600);
    let pcm = interleave(std::slice::from_ref(&tone), |sample: i16| sample.to_ne_bytes().to_vec());
    let run = Run { case: "registration", ..Run::plain("hop=100\n", pcm, 1, 16, 15) };
    let (stdout, records, _) = run.passes(&harness, "registration");
    assert!(stdout.contains("results 5 stack"), "registration: {stdout}");
    assert!(scores_of(&records) == q15_references(&tone, 100, harness.work.path()), "registration: the results");
}

/// The harness's `format-query` case: the output format asked for (SIZE, V2, v1) before any input format, as
/// SPF's prepare does; refused without keeping state, then the real input format is taken and raised back.
#[test]
fn the_output_format_asked_before_the_input_format_leaves_the_module_taking_it() {
    let _guard = common::qnn_lock();
    let harness = Harness::new();
    let tone = tone(600);
    let pcm = interleave(std::slice::from_ref(&tone), |sample: i16| sample.to_ne_bytes().to_vec());
    let run = Run { case: "format-query", ..Run::plain("hop=100\n", pcm.clone(), 1, 16, 15) };
    let (stdout, records, audio) = run.passes(&harness, "format-query");
    let queries: Vec<&str> = stdout.lines().filter(|line| line.starts_with("query ")).collect();
    let answered = [
        "query 0x30003 answered 0x20 with 0 bytes",
        "query 0x40003 answered 0x20 with 0 bytes",
        "query 0x40001 answered 0x4 with 0 bytes",
    ];
    assert_eq!(queries, [answered, answered].concat(), "format-query: the answers before the input format (two lives)");
    assert!(stdout.contains("results 5 stack"), "format-query: {stdout}");
    assert!(audio == pcm, "format-query: the audio came out changed");
    assert!(scores_of(&records) == q15_references(&tone, 100, harness.work.path()), "format-query: the results");
}

/// The harness's `result-before-inference` case: get_param of the result after start, before the first
/// inference, reads the record's 40 bytes (audio_frame: the header and 4 scores), all zero.
#[test]
fn the_result_before_the_first_inference_reads_all_zeros() {
    let _guard = common::qnn_lock();
    let harness = Harness::new();
    let pcm = interleave(std::slice::from_ref(&tone(320)), |sample: i16| sample.to_ne_bytes().to_vec());
    let run = Run { case: "result-before-inference", ..Run::plain("", pcm, 1, 16, 15) };
    let (stdout, records, _) = run.passes(&harness, "result-before-inference");
    let zeros = stdout.lines().filter(|line| *line == "result before inference 40 zero bytes").count();
    assert_eq!(zeros, 2, "result-before-inference: both lives read 40 zero bytes: {stdout}");
    assert_eq!(scores_of(&records).len(), 2, "result-before-inference: the results after it");
}

/// The harness's `stream-flags` case: end of frame on every third input frame and end of stream on the last; the
/// output's end_of_frame, marker_eos and metadata list stay as SPF preset them (the harness compares them with
/// their snapshot after every call), and the results and audio are the plain case's.
#[test]
fn end_of_frame_and_end_of_stream_on_the_input_leave_the_frameworks_output_flags_alone() {
    let _guard = common::qnn_lock();
    let harness = Harness::new();
    let tone = tone(600);
    let other: Vec<i16> = (0..600).map(|n| n as i16 * 51).collect();
    let pcm = interleave(&[other, tone.clone()], |sample: i16| sample.to_ne_bytes().to_vec());
    for layout in [DEINTERLEAVED_UNPACKED, INTERLEAVED] {
        let run = Run {
            case: "stream-flags",
            format: (0, layout),
            ..Run::plain("channel=1\nhop=100\n", pcm.clone(), 2, 16, 15)
        };
        let what = format!("stream-flags (layout {layout})");
        let (stdout, records, audio) = run.passes(&harness, &what);
        assert!(stdout.contains("results 5 stack"), "{what}: {stdout}");
        assert!(audio == pcm, "{what}: the audio came out changed");
        assert!(scores_of(&records) == q15_references(&tone, 100, harness.work.path()), "{what}: the results");
    }
}

/// KPPS and code bandwidth for `frame` samples per call at 48 kHz on audio_frame (window 160, 4 uint8 outputs)
/// with a hop of 100, Q15, as the module's decision gives them: packets/s = ceil(48000 / frame) × PACKETS_PER_FRAME + 48000 ×
/// (550 + 8 × (min(window, hop) + window + outputs)) / hop; KPPS its thousands rounded up; code 16 bytes a
/// packet. The data bandwidth does not depend on the frame: 48000 × (100 × (2 + 4) + 160 × (4 + 1) + 4 × (1 + 4)
/// + 24) / 100.
fn votes_for(frame: u64) -> (u32, u32, u32) {
    let packets = 48_000u64.div_ceil(frame) * PACKETS_PER_FRAME
        + 48_000 * (PACKETS_PER_INFERENCE + PACKETS_PER_ELEMENT * (100 + 160 + 4)) / 100;
    let data = 48_000 * (100 * 6 + 160 * 5 + 4 * 5 + 24) / 100;
    (packets.div_ceil(1000) as u32, (packets * 16) as u32, data as u32)
}

/// The harness's votes, per process-call frame: `frames` lists frames of 1, 5 and 10 ms; after the first vote
/// (at the input format, for SPF's shortest frame, 1 ms) each change of frame is voted once, at the first call of
/// the new frame.
#[test]
fn the_kpps_and_bandwidth_votes_follow_frames_of_1_5_and_10_ms() {
    let _guard = common::qnn_lock();
    let harness = Harness::new();
    assert_eq!(votes_for(48), (1448, 23_164_160, 693_120), "the decision's worked example (1 ms)");
    let tone = tone(4800);
    let pcm = interleave(std::slice::from_ref(&tone), |sample: i16| sample.to_ne_bytes().to_vec());
    // 20 frames of 1 ms, 8 of 5 ms, then 10 ms frames to the end (4 of them).
    let run = Run { frames: "48x20,240x8,480", ..Run::plain("hop=100\n", pcm, 1, 16, 15) };
    let (stdout, records, _) = run.passes(&harness, "votes (frames of 1, 5 and 10 ms)");
    let votes: Vec<&str> = stdout.lines().filter(|line| line.starts_with("vote ")).collect();
    let mut expected = Vec::new();
    for (samples, frame) in [(48, 0), (240, 240), (480, 480)] {
        let (kpps, code, data) = votes_for(samples);
        expected.push(format!("vote kpps {kpps} frame {frame}"));
        expected.push(format!("vote bandwidth {code} {data} frame {frame}"));
    }
    let expected = [expected.clone(), expected].concat();
    assert_eq!(votes, expected, "votes (frames of 1, 5 and 10 ms): the votes of both lives");
    assert!(scores_of(&records) == q15_references(&tone, 100, harness.work.path()), "votes: the results");
}

/// The harness's `config-after-start` case: after start a configuration changing the backend is refused (it
/// needs a new model), saying so; one giving the same model keys with another channel and hop is taken, and the
/// results follow it.
#[test]
fn configuration_after_start_takes_channel_and_hop_and_refuses_model_keys() {
    let _guard = common::qnn_lock();
    let harness = Harness::new();
    let tone = tone(600);
    let other: Vec<i16> = (0..600).map(|n| n as i16 * 51).collect();
    let pcm = interleave(&[tone.clone(), other], |sample: i16| sample.to_ne_bytes().to_vec());
    let (refused, taken) = (harness.work.path().join("refused.txt"), harness.work.path().join("taken.txt"));
    let qnn = common::qnn_lib_dir();
    let other_backend = format!(
        "backend={}\nsystem_library={}\nchannel=1\nhop=50\n",
        qnn.join("libQnnGpu.so").display(),
        qnn.join("libQnnSystem.so").display()
    );
    std::fs::write(&refused, other_backend).unwrap();
    std::fs::write(&taken, configuration("channel=0\nhop=50\n")).unwrap();
    let run = Run {
        case: "config-after-start",
        case_arguments: vec![refused, taken],
        ..Run::plain("channel=1\nhop=100\n", pcm, 2, 16, 15)
    };
    let (output, records, _) = run.go(&harness);
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "config-after-start: the harness failed:\n{stdout}{stderr}");
    assert!(stdout.contains("later configuration refused 0x2"), "config-after-start: {stdout}");
    assert!(
        stderr.contains("configuration key backend changes the model"),
        "config-after-start: the refusal: {stderr}"
    );
    // Channel 0 with a hop of 50: windows end at 160, 210, .., 560.
    let references = q15_references(&tone, 50, harness.work.path());
    assert_eq!(references.len(), 9);
    assert!(scores_of(&records) == references, "config-after-start: the results are not channel 0's every 50 samples");
}
