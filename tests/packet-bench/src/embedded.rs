//! One frame of the embedding API: the Rust sensor-style loop (`dsp/examples/sensor_loop.rs`, a static qemu-hexagon
//! program with the contract model built in) run under the per-packet trace on the contract fixture; a frame's
//! window runs from the entry of the pre-bound `Embed::execute_frame` to the loop's next own packet. The example
//! also reports its arena's high-water mark, with the binary used in place.

use crate::symbols::Symbols;
use crate::trace::{self, Layout, Owner, Window};
use anyhow::{bail, Context};
use std::io::BufReader;
use std::path::Path;

/// The example's own functions (the caller) and the contract model's (the backend), by name.
struct Program {
    symbols: Symbols,
    entry: u32,
}

impl Layout for Program {
    fn owner(&self, address: u32) -> Owner<'_> {
        match self.symbols.function_at(address) {
            Some(function) if function.name.contains("lpai_contract") => Owner::Backend,
            Some(function) if function.name.contains("sensor_loop::") || function.name == "lpai_program_main" => {
                Owner::Caller
            }
            function => Owner::Ours(function),
        }
    }

    fn starts_call(&self, address: u32) -> bool {
        address == self.entry
    }
}

/// What the example measured: the median frame's packets, and the arena's high-water mark with the binary in place.
pub struct Embedded {
    /// The median frame.
    pub frame: Window,
    /// Bytes of the arena used.
    pub arena_used: u64,
}

/// The example's figures on the contract fixture, its packets traced into `trace`.
pub fn count(root: &Path, trace: &Path) -> anyhow::Result<Embedded> {
    let program = root.join("target/hexagon-embed/hexagon-unknown-linux-musl/release/examples/sensor-loop");
    let fixture = root.join("tests/fixtures/contract_single");
    let symbols = Symbols::read(&program, 0)?;
    let entry_name = "<lpai_direct_skel::embed::Embed<lpai_direct_skel::runtime::owner::Borrowed>>::execute_frame";
    let entry = symbols.address_of(entry_name).with_context(|| format!("{} has no {entry_name}", program.display()))?;
    let frames: Vec<_> = (0..4).map(|line| fixture.join(format!("inputs/native/{line}_0.raw"))).collect();
    let status = trace::traced_qemu(trace)
        .arg(&program)
        .args(["libQnnLpaiContract.so", "libQnnSystemContract.so"])
        .arg(fixture.join("contract_single.bin"))
        .args(&frames)
        .output()
        .context("running qemu-hexagon")?;
    let (stdout, stderr) = (String::from_utf8_lossy(&status.stdout), String::from_utf8_lossy(&status.stderr));
    if !status.status.success() {
        bail!("{} failed: {}", program.display(), stderr.trim());
    }
    if !stdout.contains("binary in place: yes") {
        bail!("{} copied the binary into its arena: the arena figure needs it in place", program.display());
    }
    let arena_used = stderr
        .lines()
        .find_map(|line| line.split("arena high-water mark ").nth(1)?.split(' ').next()?.parse().ok())
        .with_context(|| format!("{} printed no arena high-water mark: {stderr}", program.display()))?;
    let file = std::fs::File::open(trace).with_context(|| format!("reading the trace {}", trace.display()))?;
    let layout = Program { symbols, entry };
    let windows = trace::windows(BufReader::with_capacity(1 << 20, file), &layout)?;
    std::fs::remove_file(trace).ok();
    let mut frames: Vec<Window> = windows.into_iter().filter(|window| window.backend > 0).collect();
    if frames.is_empty() {
        bail!("the trace of {} holds no frame that reached the backend", program.display());
    }
    frames.sort_by_key(Window::ours_total);
    Ok(Embedded { frame: frames.swap_remove((frames.len() - 1) / 2), arena_used })
}
