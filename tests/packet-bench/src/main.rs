//! `lpai-packet-bench`: counts the Hexagon packets our code executes, deterministically, under qemu-hexagon's
//! per-packet trace: each skel call of the shipped skel `.so` as the virtual aDSP loads and runs it (by phase), and
//! one frame of the embedding API, and frames of the audio module (AudioReach CAPI) as the PD shell runs it. The backend (the contract model of libQnnLpai) and the PD shell's services are
//! counted apart, attributed by address from the libraries' symbol tables; no marker code is added to the skel.
//!
//! ```text
//! lpai-packet-bench [--out FILE] [--batch N] [--functions] [--keep-trace]
//! ```
//! (default `target/bench/packets.json`, 5 calls of each kind; `--functions` also prints where each kind of call
//! spends its packets, function by function; `--keep-trace` leaves the skel calls' trace in `target/bench/`).
//! Needs `scripts/build-hexagon.sh`'s `target/virtual-adsp/` and `target/hexagon-embed/`.

#![forbid(unsafe_code)]

mod audio_module;
mod embedded;
mod pd;
mod phases;
mod skel_calls;
mod symbols;
mod trace;

use anyhow::{bail, Context};
use phases::Phase;
use serde_json::{json, Map, Value};
use skel_calls::{Call, WIDE_ELEMENTS};
use std::path::{Path, PathBuf};
use trace::{median, Window};

/// Median packets of `windows` that `count` picks.
fn median_of(windows: &[&Window], count: impl Fn(&Window) -> u64) -> u64 {
    median(windows.iter().map(|window| count(window)).collect())
}

/// `{phase: median packets}` over `windows`, and the PD services our code called (the clock among them), which
/// are not ours and not in the phases' sum.
fn phases(windows: &[&Window]) -> Value {
    let entries =
        Phase::ALL.iter().map(|&phase| (phase.key().to_string(), json!(median_of(windows, |w| w.phase(phase)))));
    let mut phases: Map<_, _> = entries.collect();
    phases.insert("pd_services_called".to_string(), json!(median_of(windows, |w| w.other)));
    Value::Object(phases)
}
/// Per element, to two decimals.
fn per_element(packets: u64, elements: u32) -> f64 {
    (packets as f64 / f64::from(elements) * 100.0).round() / 100.0
}

/// What a model needs in any arena, from its fixture's manifest: its tensors' native bytes and the LPAI scratch and
/// persistent memory. The arena's use beyond it is the runtime's overhead (the binary is used in place).
fn model_memory(fixture: &Path) -> anyhow::Result<u64> {
    let path = fixture.join("manifest.json");
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let manifest: Value = serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let element_bytes = |dtype: &str| match dtype {
        "uint8" | "int8" => Some(1),
        "uint16" | "int16" => Some(2),
        "float32" => Some(4),
        _ => None,
    };
    let tensors = manifest["inputs"].as_array().into_iter().chain(manifest["outputs"].as_array()).flatten();
    let mut bytes = 0u64;
    for tensor in tensors {
        let elements: u64 = tensor["shape"].as_array().into_iter().flatten().filter_map(Value::as_u64).product();
        let element = tensor["native_dtype"].as_str().and_then(element_bytes);
        bytes += elements * element.with_context(|| format!("{}: a tensor without a native type", path.display()))?;
    }
    let model = &manifest["contract_model"];
    let lpai = ["scratch_bytes", "persistent_bytes"].map(|key| model[key].as_u64());
    Ok(bytes + lpai.into_iter().flatten().sum::<u64>())
}

/// Our functions in `window`, most packets first.
fn print_functions(call: &str, window: Option<&Window>) {
    let mut functions: Vec<_> = window.map(|window| window.functions.iter().collect()).unwrap_or_default();
    functions.sort_by_key(|(_, &packets)| std::cmp::Reverse(packets));
    println!("{call}: packets by function");
    for (name, packets) in functions {
        println!("  {packets:>7}  {name}");
    }
}

fn run() -> anyhow::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize()?;
    let mut out = root.join("target/bench/packets.json");
    let mut batch = 5;
    let mut by_function = false;
    let mut keep_trace = false;
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--out" => out = PathBuf::from(arguments.next().context("--out needs FILE")?),
            "--functions" => by_function = true,
            "--keep-trace" => keep_trace = true,
            "--batch" => batch = arguments.next().context("--batch needs N")?.parse().context("--batch N")?,
            other => {
                bail!("unknown argument {other:?} (usage: lpai-packet-bench [--out FILE] [--batch N] [--functions] [--keep-trace])")
            }
        }
    }
    let bench = root.join("target/bench");
    std::fs::create_dir_all(&bench)?;
    let virtual_adsp = root.join("target/virtual-adsp");
    let fixture = root.join("tests/fixtures/contract_single/contract_single.bin");
    let trace = bench.join("skel-calls.trace");
    let counted = skel_calls::count(&virtual_adsp, &fixture, &trace, batch)?;
    let (trivial, native) = (counted.of(Call::LastError), counted.of(Call::ExecuteNative));
    let (float, wide) = (counted.of(Call::ExecuteFloat), counted.of(Call::ExecuteWide));
    if by_function {
        for (name, windows) in [("last_error", &trivial), ("execute native", &native), ("execute float", &float)] {
            print_functions(name, windows.first().copied());
        }
    }
    let embedded = embedded::count(&root, &bench.join("embedded.trace"))?;
    let audio = audio_module::count(&virtual_adsp, &fixture, &bench.join("audio-module.trace"))?;
    let (quiet, wide_frame, small_frame) =
        (&audio.without_inference, &audio.with_inference_480, &audio.with_inference_16);
    // An inference's own packets on top of a frame's, for a window of 480 and of 16 samples: a base and a cost per
    // element of the samples converted, the window quantized and the outputs dequantized (480 or 16 each).
    let inference = |frame: &Window| frame.ours_total().saturating_sub(quiet.ours_total());
    let element = (inference(wide_frame) as f64 - inference(small_frame) as f64) / (3.0 * (480.0 - 16.0));
    let base = inference(small_frame) as f64 - element * 48.0;
    let frame = &embedded.frame;
    let arena_overhead = embedded.arena_used.checked_sub(model_memory(&root.join("tests/fixtures/contract_single"))?);
    if !keep_trace {
        std::fs::remove_file(&trace).ok();
    }
    let figures = json!({
        "packets_trivial_call": median_of(&trivial, Window::ours_total),
        "packets_per_inference_native": median_of(&native, Window::ours_total),
        "packets_per_inference_float_16": median_of(&float, Window::ours_total),
        "packets_per_element_quantize": per_element(median_of(&wide, |w| w.quantize), WIDE_ELEMENTS),
        "packets_per_element_dequantize": per_element(median_of(&wide, |w| w.dequantize), WIDE_ELEMENTS),
        "packets_per_frame_embedded": frame.ours_total(),
        "packets_phases_trivial_call": phases(&trivial),
        "packets_phases_per_inference_native": phases(&native),
        "packets_phases_per_inference_float_16": phases(&float),
        "packets_backend_per_inference_native": median_of(&native, |w| w.backend),
        "packets_pd_services_per_inference_native": median_of(&native, |w| w.other),
        "packets_backend_per_frame_embedded": frame.backend,
        "packets_audio_frame_480": quiet.ours_total(),
        "packets_audio_frame_480_with_inference_480": wide_frame.ours_total(),
        "packets_audio_frame_480_with_inference_16": small_frame.ours_total(),
        "packets_audio_per_inference_base": base.round(),
        "packets_audio_per_inference_element": (element * 100.0).round() / 100.0,
        "packets_framework_per_audio_inference": small_frame.other,
        "arena_used_embedded_bytes": embedded.arena_used,
        "arena_overhead_bytes": arena_overhead,
    });
    println!("Hexagon packets (qemu-hexagon -cpu v73, per-packet trace; ours only, the backend and PD services apart)");
    for (name, value) in figures.as_object().into_iter().flatten() {
        println!("  {name:<44} {value}");
    }
    if by_function {
        print_functions("embedded frame", Some(frame));
        print_functions("audio frame", Some(quiet));
        print_functions("audio frame with an inference (480)", Some(wide_frame));
        print_functions("audio frame with an inference (16)", Some(small_frame));
    }
    let partial = out.with_extension("json.partial");
    std::fs::write(&partial, serde_json::to_string_pretty(&figures)? + "\n")?;
    std::fs::rename(&partial, &out)?;
    println!("written to {}", out.display());
    check_votes(quiet.ours_total() as f64, base, element)
}

/// Fails when a measured cost outgrew the constant the audio module votes KPPS and BANDWIDTH with.
fn check_votes(per_frame: f64, per_inference: f64, per_element: f64) -> anyhow::Result<()> {
    use lpai_direct_skel::audio::module::{PACKETS_PER_ELEMENT, PACKETS_PER_FRAME, PACKETS_PER_INFERENCE};
    let votes = [
        ("PACKETS_PER_FRAME", per_frame, PACKETS_PER_FRAME),
        ("PACKETS_PER_INFERENCE", per_inference, PACKETS_PER_INFERENCE),
        ("PACKETS_PER_ELEMENT", per_element, PACKETS_PER_ELEMENT),
    ];
    for (name, measured, constant) in votes {
        if measured > constant as f64 {
            bail!("the audio module votes with {name} = {constant}, under the {measured:.2} packets measured: raise it in dsp/src/audio/module.rs");
        }
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("lpai-packet-bench: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
