//! The audio module's shared object `liblpai_direct_capi.so` driven from C exactly as SPF drives a CAPI module
//! (`tests/c/capi_harness.c`: guard bytes around every buffer lent to the module; two lives of the module, each
//! giving back every memory block and library it took), on the real libQnnHtp.so: its results equal, bit for bit,
//! ONNX Runtime's on its QNN execution provider for the windows it was fed (`scripts/ort_audio_scores.py`), the
//! audio comes out as it went in, and formats it cannot handle are refused with an error code, no crash.

mod common;

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

/// A run of the harness: the PCM (interleaved), its layout and the configuration's extra lines; answers the
/// process output, the result records and the audio that came out.
struct Run<'a> {
    extra_config: &'a str,
    pcm: Vec<u8>,
    channels: u32,
    bits: u32,
    q: u32,
    frame: usize,
    format: Option<(u32, u32)>,
}

impl Run<'_> {
    fn go(&self, program: &Path, library: &Path, work: &Path) -> (Output, Vec<u8>, Vec<u8>) {
        let qnn = common::qnn_lib_dir();
        let config = work.join("config.txt");
        let text = format!(
            "backend={}\nsystem_library={}\n{}",
            qnn.join("libQnnHtp.so").display(),
            qnn.join("libQnnSystem.so").display(),
            self.extra_config
        );
        std::fs::write(&config, text).unwrap();
        let pcm = work.join("in.pcm");
        std::fs::write(&pcm, &self.pcm).unwrap();
        let (results, audio) = (work.join("results.bin"), work.join("out.pcm"));
        let mut command = Command::new(program);
        command
            .arg(&config)
            .arg(common::fixture("audio_frame/audio_frame_qnn.bin"))
            .arg(&pcm)
            .args([self.channels, self.bits, self.q].map(|n| n.to_string()))
            .arg(self.frame.to_string())
            .arg(&results)
            .arg(&audio)
            .env("LD_LIBRARY_PATH", library.parent().unwrap());
        if let Some((data_format, interleaving)) = self.format {
            command.args([data_format.to_string(), interleaving.to_string()]);
        }
        let output = command.output().unwrap();
        (output, std::fs::read(results).unwrap_or_default(), std::fs::read(audio).unwrap_or_default())
    }
}

fn library() -> PathBuf {
    common::artifact("target/release/liblpai_direct_capi.so", "cargo build --release -p lpai-direct-capi")
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

#[test]
fn the_shared_object_driven_from_c_gives_orts_results_and_passes_the_audio_through() {
    let _guard = common::qnn_lock();
    let library = library();
    let work = tempfile::tempdir().unwrap();
    let program = compile_harness(&library, work.path());
    // Stereo Q15, channel 1, a hop of 100 against the window of 160, frames of 64: windows end at 160 .. 560.
    let tone: Vec<i16> = (0..600).map(|n| ((n as f64 * 0.05).sin() * 25_000.0) as i16).collect();
    let pcm: Vec<u8> =
        (0..600).flat_map(|n| [(n as i16 * 51).to_ne_bytes(), tone[n].to_ne_bytes()]).flatten().collect();
    let run = Run {
        extra_config: "channel=1\nhop=100\n",
        pcm: pcm.clone(),
        channels: 2,
        bits: 16,
        q: 15,
        frame: 64,
        format: None,
    };
    let (output, records, audio) = run.go(&program, &library, work.path());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    let stack = lpai_direct_skel::audio::module::STACK_BYTES;
    assert!(stdout.contains(&format!("results 5 stack {stack}")), "{stdout}");
    assert_eq!(audio, pcm, "the audio came out changed");
    // Channel 1's windows, ending at samples 160, 260, .., 560.
    let fed: Vec<f32> = tone.iter().map(|&sample| common::pcm_float(sample.into(), 15)).collect();
    let windows = common::audio_windows(&fed, 160, 100);
    assert_eq!(windows.len(), 5);
    assert_eq!(scores_of(&records), common::ort_scores("audio_frame", &windows, work.path()));

    // Six channels of Q31 at 48 kHz, channel 5, frames of 100, the default hop (the window).
    let chirp: Vec<i32> = (0..480).map(|n| ((n as f64 * n as f64 * 0.0005).cos() * 1.9e9) as i32).collect();
    let mut pcm = Vec::new();
    for (n, &sample) in chirp.iter().enumerate() {
        for channel in 0..6 {
            let value = if channel == 5 { sample } else { (n as i32).wrapping_mul(channel + 7) };
            pcm.extend(value.to_ne_bytes());
        }
    }
    let run =
        Run { extra_config: "channel=5\n", pcm: pcm.clone(), channels: 6, bits: 32, q: 31, frame: 100, format: None };
    let (output, records, audio) = run.go(&program, &library, work.path());
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(audio, pcm);
    // Channel 5's windows, ending at samples 160, 320 and 480.
    let fed: Vec<f32> = chirp.iter().map(|&sample| common::pcm_float(sample, 31)).collect();
    let windows = common::audio_windows(&fed, 160, 0);
    assert_eq!(windows.len(), 3);
    assert_eq!(scores_of(&records), common::ort_scores("audio_frame", &windows, work.path()));
}

#[test]
fn floating_point_and_interleaved_formats_are_refused_with_badparam_from_c() {
    let library = library();
    let work = tempfile::tempdir().unwrap();
    let program = compile_harness(&library, work.path());
    for (data_format, interleaving) in [(1, 2), (0, 0)] {
        let run = Run {
            extra_config: "",
            pcm: vec![0; 4 * 160],
            channels: 2,
            bits: 16,
            q: 15,
            frame: 64,
            format: Some((data_format, interleaving)),
        };
        let (output, records, _) = run.go(&program, &library, work.path());
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
        assert!(stdout.contains("format refused 0x2"), "{data_format}/{interleaving}: {stdout}");
        assert!(records.is_empty());
    }
}
