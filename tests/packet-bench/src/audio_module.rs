//! The audio module's frames: the module `.so` of the virtual aDSP, loaded by the PD shell (`--capi`) under the
//! per-packet trace, runs 48 kHz stereo Q15 streams in 10 ms frames (480 samples) on channel 1 against the contract
//! model: one with a 480-sample window and an inference every other frame (a hop of 960), one with the 16-sample
//! contract fixture and an inference every frame. Each `process` call is a window, from the entry of the module's
//! `process` to its return; the backend's packets and the framework's (the event callback, PD services) are
//! counted apart.

use crate::pd::PdLayout;
use crate::trace::{self, median, Window};
use anyhow::{bail, Context};
use lpai_direct::capi::{media_format, property};
use lpai_direct_skel::audio::ids::{EVENT_ID_RESULT, PARAM_ID_CONFIG, PARAM_ID_MODEL};
use lpai_pd_shell::capi_session::{STEP_SET_PARAM, STEP_SET_PROPERTY};
use lpai_pd_shell::session_writer::{client_registration, media_format_v2, SessionWriter};
use std::io::{BufReader, Write};
use std::path::Path;
use std::process::Stdio;

/// Samples per channel in a frame: 10 ms at 48 kHz.
pub const FRAME_SAMPLES: u32 = 480;
/// Frames in the stream.
const FRAMES: usize = 20;
/// The entry point whose calls are frames.
const PROCESS: &str = "lpai_direct_capi::process";

/// The median frames of the two streams.
pub struct Frames {
    /// A frame that ran no inference.
    pub without_inference: Window,
    /// A frame that ran an inference on the 480-sample window.
    pub with_inference_480: Window,
    /// A frame that ran an inference on the 16-sample window.
    pub with_inference_16: Window,
}

fn session(virtual_adsp: &Path, model: &[u8], hop: u32) -> SessionWriter {
    let library = |name: &str| virtual_adsp.join(name).display().to_string();
    let configuration = format!(
        "backend={}\nsystem_library={}\nchannel=1\nhop={hop}\n\0",
        library("libQnnLpaiContract.so"),
        library("libQnnSystemContract.so"),
    );
    let samples = FRAMES * FRAME_SAMPLES as usize;
    let channel = |step: usize| -> Vec<u8> {
        (0..samples).flat_map(|n| (((n * step) % 40_000) as i16 - 20_000).to_ne_bytes()).collect()
    };
    let mut session = SessionWriter::default();
    let format = media_format_v2(media_format::FIXED_POINT, 2, 16, 15, media_format::DEINTERLEAVED_UNPACKED);
    let client = client_registration(1, 1, EVENT_ID_RESULT);
    session
        .step(STEP_SET_PARAM, PARAM_ID_CONFIG, configuration.as_bytes())
        .step(STEP_SET_PROPERTY, property::INPUT_MEDIA_FORMAT_V2, &format)
        .step(STEP_SET_PROPERTY, property::REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2, &client)
        .step(STEP_SET_PARAM, PARAM_ID_MODEL, model)
        .frames(&[channel(37), channel(101)], 2, FRAME_SAMPLES as usize, 48_000, 0);
    session
}

/// Runs one stream traced into `trace`: every frame's window.
fn stream(virtual_adsp: &Path, model: &[u8], hop: u32, trace: &Path) -> anyhow::Result<Vec<Window>> {
    let module = virtual_adsp.join("liblpai_direct_capi.so");
    let session = session(virtual_adsp, model, hop);
    let mut map = trace.as_os_str().to_owned();
    map.push(".map");
    std::fs::write(&map, b"")?;
    let mut child = trace::traced_qemu(trace)
        .arg(virtual_adsp.join("lpai-pd-shell"))
        .arg("--map")
        .arg(&map)
        .arg("--capi")
        .arg(&module)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("running qemu-hexagon")?;
    child.stdin.take().context("no pipe to the shell")?.write_all(session.bytes())?;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        bail!("lpai-pd-shell --capi failed: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    let layout = PdLayout::new(Path::new(&map), &module, &lpai_skel_fixup::stack::CAPI_ENTRY_POINTS)?;
    let process = layout.address_of(PROCESS).with_context(|| format!("{} has no {PROCESS}", module.display()))?;
    let file = std::fs::File::open(trace).with_context(|| format!("reading the trace {}", trace.display()))?;
    let windows = trace::windows(BufReader::with_capacity(1 << 20, file), &layout)?;
    std::fs::remove_file(trace).ok();
    std::fs::remove_file(&map).ok();
    let frames: Vec<Window> = windows.into_iter().filter(|window| window.entry == process).collect();
    if frames.len() != FRAMES {
        bail!("the trace holds {} process calls, but the stream had {FRAMES} frames", frames.len());
    }
    Ok(frames)
}

/// The median frame of `frames` by our packets.
fn median_frame(mut frames: Vec<Window>, what: &str) -> anyhow::Result<Window> {
    let middle = median(frames.iter().map(Window::ours_total).collect());
    let index = frames.iter().position(|frame| frame.ours_total() == middle).with_context(|| format!("no {what}"))?;
    Ok(frames.swap_remove(index))
}

/// Runs both streams (traced into `trace`) and takes their median frames.
pub fn count(virtual_adsp: &Path, fixture_binary: &Path, trace: &Path) -> anyhow::Result<Frames> {
    let wide = crate::skel_calls::wide_binary(FRAME_SAMPLES)?;
    let (with, without): (Vec<Window>, Vec<Window>) =
        stream(virtual_adsp, &wide, 2 * FRAME_SAMPLES, trace)?.into_iter().partition(|window| window.backend > 0);
    let small = std::fs::read(fixture_binary).with_context(|| format!("reading {}", fixture_binary.display()))?;
    let every = stream(virtual_adsp, &small, FRAME_SAMPLES, trace)?;
    if every.iter().any(|window| window.backend == 0) {
        bail!("a frame of the 16-sample stream ran no inference");
    }
    Ok(Frames {
        without_inference: median_frame(without, "frame without an inference")?,
        with_inference_480: median_frame(with, "frame with an inference")?,
        with_inference_16: median_frame(every, "frame of the 16-sample stream")?,
    })
}
