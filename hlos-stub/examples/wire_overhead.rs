//! Benchmark: one kws_conv inference through the runtime called directly, and through the stub (encode,
//! local transport into the host skel library, skel decode and dispatch), on the real libQnnHtp.so. Prints
//! mean, median and 99th percentile per path, and the cost the stub/skel wire adds.
//!
//! `cargo run --release -p lpai-direct-hlos --example wire_overhead -- QNN_LIB_DIR FIXTURE_DIR [RUNS]`; the
//! host skel is found as the local transport finds it (`$LPAI_DIRECT_SKEL`, else `target/release/`).

use lpai_direct_skel::runtime::SystemLibrary;
use lpai_direct_skel::runtime::{Arena, Backend, BackendOptions, BinarySource, Context, ContextOptions};
use lpai_direct_stub::stub::{fastrpc, flags, Configuration, Local, SkelLocation, Stub};
use std::ffi::CString;
use std::path::PathBuf;
use std::time::Instant;

fn summary(name: &str, mut micros: Vec<f64>) -> f64 {
    micros.sort_by(f64::total_cmp);
    let mean = micros.iter().sum::<f64>() / micros.len() as f64;
    let median = micros[micros.len() / 2];
    let p99 = micros[(micros.len() * 99 / 100).min(micros.len() - 1)];
    println!("{name:<28} mean {mean:>9.1} us   median {median:>9.1} us   p99 {p99:>9.1} us   ({} runs)", micros.len());
    median
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(qnn), Some(fixture)) = (args.next().map(PathBuf::from), args.next().map(PathBuf::from)) else {
        anyhow::bail!("usage: wire_overhead QNN_LIB_DIR FIXTURE_DIR [RUNS]");
    };
    let runs: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(200);
    let c_path = |p: PathBuf| CString::new(p.to_string_lossy().into_owned()).unwrap_or_default();
    let binary_path = fixture.join("kws_conv_qnn.bin");
    let input = std::fs::read(fixture.join("inputs/float/0_0.raw"))?;

    let backend = Backend::load(&c_path(qnn.join("libQnnHtp.so")), &BackendOptions::default())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let system = SystemLibrary::load(&c_path(qnn.join("libQnnSystem.so"))).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut memory = vec![0u8; 4 << 20];
    let arena = Arena::new(&mut memory);
    let binary = c_path(binary_path.clone());
    let mut context = Context::load(&backend, &system, &arena, BinarySource::File(&binary), &ContextOptions::default())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let graph = context.graph_mut(0).ok_or_else(|| anyhow::anyhow!("no graph"))?;
    let mut output = vec![0u8; graph.output(0).map_or(0, |o| o.elements * 4)];
    let mut direct = Vec::with_capacity(runs);
    for run in 0..runs + 10 {
        let start = Instant::now();
        graph.write_input_float(0, &input).map_err(|e| anyhow::anyhow!("{e}"))?;
        graph.execute().map_err(|e| anyhow::anyhow!("{e}"))?;
        graph.read_output_float(0, &mut output).map_err(|e| anyhow::anyhow!("{e}"))?;
        if run >= 10 {
            direct.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    println!("kws_conv, float in and out, libQnnHtp.so (x86 emulator of the NPU), first 10 runs not counted");
    println!("arena high-water mark of the direct context: {} bytes", arena.used());
    let direct_median = summary("runtime called directly", direct);

    let local = Local::load(&SkelLocation::Search)?;
    println!("host skel: {}", local.path().display());
    let mut stub = Stub::open(Box::new(local), &fastrpc::skel_uri(fastrpc::Domain::Adsp, None))?;
    stub.configure(&Configuration {
        backend: c_path(qnn.join("libQnnHtp.so")),
        system_library: c_path(qnn.join("libQnnSystem.so")),
        log_level: 1,
        profiling_level: 0,
        lpai_hw_version: 0,
        lpai_target: lpai_direct_stub::stub::TARGET_DEFAULT,
        arena_bytes: 4 << 20,
    })?;
    let (context_id, _) = stub.load(&std::fs::read(&binary_path)?, 0)?;
    let mut through_stub = Vec::with_capacity(runs);
    let execute_flags = flags::FLOAT_INPUTS | flags::FLOAT_OUTPUTS;
    for run in 0..runs + 10 {
        let start = Instant::now();
        stub.execute(context_id, 0, execute_flags, &input, &mut output)?;
        if run >= 10 {
            through_stub.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    let stub_median = summary("through the stub (local)", through_stub);
    println!("wire path (encode, validate, dispatch) adds {:+.1} us at the median", stub_median - direct_median);
    Ok(())
}
