//! The net-run job through the stub: open the skel on a transport, configure it, load the context (with the
//! metadata record read here by the HLOS side's libQnnSystem, unless the skel has its own), check the whole input
//! list, then run every line and write its outputs. Every transport runs this same code.

use crate::direct;
use crate::graph_io;
use crate::input_list;
use crate::input_list::InputList;
use crate::lpai_config::{self, LpaiConfig};
use crate::metadata;
use crate::output;
use crate::run_record::{self, RunRecord};
pub use crate::settings::Settings;
use crate::stub::fastrpc::{self, FastRpc, FastRpcOptions, Pd};
use crate::stub::{default_transport_trying, flags, Configuration, GraphDescription, ProfileEvent, Stub, StubError};
use crate::stub::{Local, Qemu, QemuOptions, SkelLocation, TransportKind, PRIORITY_UNCHANGED, TARGET_DEFAULT};
use crate::stub::{Named, Transport};
use anyhow::{anyhow, bail, Context as _, Result};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What a run did, for the closing lines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// The transport that carried the calls.
    pub transport: String,
    /// Where the skel ran (for the local and qemu transports: which skel file).
    pub skel_place: String,
    /// The graph that ran.
    pub graph: String,
    /// Execute time of each inference on the skel's clock, in microseconds.
    pub execute_micros: Vec<u64>,
    /// Arena bytes the context uses (its high-water mark).
    pub arena_used: usize,
    /// The context arena's size.
    pub arena_capacity: usize,
    /// LPAI scratch and persistent bytes of the graph.
    pub lpai_memory: (u32, u32),
    /// Profile events in the order QNN lists them.
    pub profile: Vec<ProfileEvent>,
    /// What `lpai_net_run.json` records (mode, skel calls, round trips, load time).
    pub record: RunRecord,
}

fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes()).with_context(|| format!("{} contains a NUL byte", path.display()))
}

/// The HLOS side's libQnnSystem: `--system_library`, else libQnnSystem.so beside the backend (a bare name when the
/// backend is one).
fn system_library_path(settings: &Settings) -> PathBuf {
    settings.system_library.clone().unwrap_or_else(|| settings.backend.with_file_name("libQnnSystem.so"))
}

/// The profiling level asked for, else the config file's, else off.
fn qnn_profiling_level(settings: &Settings, lpai: &LpaiConfig) -> u32 {
    settings.profiling_level.unwrap_or(lpai.profiling_level.unwrap_or(0))
}

/// Where the local transport finds the skel: `--skel`, else the default search.
pub fn skel_location(settings: &Settings) -> SkelLocation {
    match &settings.skel {
        Some(path) => SkelLocation::File { path: path.clone(), named_by: "--skel" },
        None => SkelLocation::Search,
    }
}

/// The transport the settings ask for (or the default one), and a note for stderr when the default fell back
/// from FastRPC to local (on aarch64), saying why FastRPC was not available and which skel is used instead.
pub fn transport(settings: &Settings) -> Result<(Box<dyn Transport>, Option<String>)> {
    transport_trying(settings, cfg!(target_arch = "aarch64"))
}

/// [`transport`], trying FastRPC for the default only when `try_fastrpc` (so hosts can test the fallback).
///
/// A PD other than the user PD ([`Settings::pd`]) is reached through FastRPC only: the default transport is then
/// FastRPC (no fallback), and an explicit local or qemu transport is refused.
pub fn transport_trying(settings: &Settings, try_fastrpc: bool) -> Result<(Box<dyn Transport>, Option<String>)> {
    let fastrpc_options = FastRpcOptions {
        domain: settings.domain,
        pd: settings.pd,
        session: settings.session,
        unsigned_pd: settings.unsigned_pd,
        libraries: settings.fastrpc_library.iter().cloned().collect(),
    };
    let skel = skel_location(settings);
    if settings.pd != Pd::User {
        match settings.transport {
            Some(kind @ (TransportKind::Local | TransportKind::Qemu)) => bail!(
                "--pd {} picks a PD on a DSP through FastRPC, which the {} transport does not use (leave out --pd, or \
                 use --transport fastrpc)",
                settings.pd.name(),
                kind.name()
            ),
            Some(TransportKind::Fastrpc) | None => return Ok((Box::new(FastRpc::load(fastrpc_options)?), None)),
        }
    }
    match settings.transport {
        Some(TransportKind::Local) => Ok((Box::new(Local::load(&skel)?), None)),
        Some(TransportKind::Fastrpc) => Ok((Box::new(FastRpc::load(fastrpc_options)?), None)),
        Some(TransportKind::Qemu) => {
            let options = QemuOptions { skel: settings.skel.clone(), shell: settings.pd_shell.clone() };
            Ok((Box::new(Qemu::start(&options)?), None))
        }
        None => {
            let (chosen, unavailable) = default_transport_trying(fastrpc_options, &skel, try_fastrpc)?;
            let note = unavailable.map(|why| format!("{why}; using the local transport ({})", chosen.place()));
            Ok((chosen, note))
        }
    }
}

/// The skel's message for a failed call, prefixed with what was being done.
fn failed(what: String) -> impl FnOnce(StubError) -> anyhow::Error {
    move |error| anyhow!("{what}: {error}")
}

/// The context binary's path for a skel that reads it itself: absolute, so it does not depend on the skel's
/// current directory.
fn path_for_skel(binary: &Path) -> Result<CString> {
    let absolute =
        std::fs::canonicalize(binary).with_context(|| format!("context binary {} does not exist", binary.display()))?;
    c_path(&absolute)
}

/// Reads one input file into its place in the inputs buffer; the file must still have the size the list check
/// saw.
fn read_input(file: &Path, destination: &mut [u8]) -> Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read input file {}", file.display()))?;
    if bytes.len() != destination.len() {
        bail!(
            "input file {} now has {} bytes, expected {}: it changed after the input list was checked",
            file.display(),
            bytes.len(),
            destination.len()
        );
    }
    destination.copy_from_slice(&bytes);
    Ok(())
}

/// Runs the job the settings describe.
pub fn run(settings: &Settings) -> Result<Summary> {
    let binary_path = &settings.retrieve_context;
    std::fs::metadata(binary_path)
        .with_context(|| format!("context binary {} cannot be read", binary_path.display()))?;
    let (transport, note) = transport(settings)?;
    if let Some(note) = note {
        eprintln!("lpai-net-run: note: {note}");
    }
    // A bare library name (no `/`) is left to the dynamic loader's search.
    let is_path = settings.backend.as_os_str().as_bytes().contains(&b'/');
    // The local and qemu transports open libraries from this machine's file system.
    if transport.name() != "fastrpc" && is_path && !settings.backend.is_file() {
        bail!("backend library {} does not exist", settings.backend.display());
    }
    let lpai = match &settings.config_file {
        Some(path) => lpai_config::read(path)?,
        None => LpaiConfig::default(),
    };
    let uri = fastrpc::skel_uri(settings.domain, settings.session);
    let mut stub = Stub::open(transport, &uri).map_err(failed("opening the skel".into()))?;
    // Without a system library of its own (the default) the skel gets the metadata record read here.
    let dsp_system_library = match &settings.dsp_system_library {
        Some(path) => c_path(path)?,
        None => CString::default(),
    };
    let configuration = Configuration {
        backend: c_path(&settings.backend)?,
        system_library: dsp_system_library,
        log_level: settings.log_level,
        profiling_level: qnn_profiling_level(settings, &lpai),
        lpai_hw_version: lpai.hw_version.unwrap_or(0),
        lpai_target: lpai.target.unwrap_or(TARGET_DEFAULT),
        arena_bytes: settings.arena_bytes.unwrap_or(0),
    };
    stub.configure(&configuration).map_err(|error| anyhow!("{error}"))?;

    let load_flags = if settings.persistent_binary { flags::PERSISTENT_BINARY } else { 0 };
    let what = format!("context binary {}", binary_path.display());
    let binary = if settings.dsp_reads_context && settings.dsp_system_library.is_some() {
        Vec::new()
    } else {
        std::fs::read(binary_path).with_context(|| format!("cannot read {}", binary_path.display()))?
    };
    let record = match settings.dsp_system_library {
        Some(_) => None,
        None => {
            let library = metadata::HostSystemLibrary::load(&system_library_path(settings)).map_err(|error| {
                anyhow!(
                    "{error:#} (--system_library names the HLOS side's libQnnSystem, which reads the binary's metadata \
                     for the skel; --dsp_system_library FILE has the skel read it with its own)"
                )
            })?;
            Some(library.record(&binary, &what)?)
        }
    };
    let load_started = Instant::now();
    let (context, graph_count) = match (settings.dsp_reads_context, &record) {
        (true, None) => stub.load_file(&path_for_skel(binary_path)?, load_flags),
        (true, Some(record)) => stub.load_file_with_metadata(&path_for_skel(binary_path)?, record, load_flags),
        (false, None) => stub.load(&binary, load_flags),
        (false, Some(record)) => stub.load_with_metadata(&binary, record, load_flags),
    }
    .map_err(failed(what))?;
    let load_us = load_started.elapsed().as_micros() as u64;

    let mut graphs = Vec::new();
    for index in 0..graph_count {
        graphs.push(stub.describe(context, index).map_err(failed(format!("describing graph {index}")))?);
    }
    let graph_index = match &settings.graph_name {
        Some(name) => graphs.iter().position(|g| &g.name == name).with_context(|| {
            let names: Vec<&str> = graphs.iter().map(|g| g.name.as_str()).collect();
            format!("the context has no graph '{name}' (graphs: {})", names.join(", "))
        })?,
        None => 0,
    };
    let graph = graphs.get(graph_index).context("the context binary holds no graph")?;
    let float_in = !settings.use_native_input_files;
    let float_out = !settings.use_native_output_files;
    graph_io::check_float_conversion(graph, float_in, float_out)?;
    if let (Some(perf), Some(affinity)) = (lpai.perf, lpai.affinity) {
        let what = format!("setting LPAI performance of graph {}", graph.name);
        stub.set_performance(context, graph_index as u32, perf, affinity, PRIORITY_UNCHANGED).map_err(failed(what))?;
    }
    let output_names: Vec<&str> = graph.outputs.iter().map(|tensor| tensor.name.as_str()).collect();
    let expected = graph_io::expected_inputs(graph, settings.use_native_input_files);
    let mut list = input_list::read(&settings.input_list, &expected, &output_names)?;
    if let Some(count) = settings.num_inferences {
        // qnn-net-run's --num_inferences: the list's lines over and over.
        list.lines = list.lines.iter().cycle().take(count).cloned().collect();
    }

    let execute_flags =
        if float_in { flags::FLOAT_INPUTS } else { 0 } | if float_out { flags::FLOAT_OUTPUTS } else { 0 };
    let mut summary = Summary {
        transport: stub.transport().name().to_string(),
        skel_place: stub.transport().place(),
        graph: graph.name.clone(),
        arena_used: graph.arena_used as usize,
        arena_capacity: graph.arena_capacity as usize,
        lpai_memory: (graph.scratch_bytes, graph.persistent_bytes),
        ..Summary::default()
    };
    let mut record = RunRecord {
        mode: if settings.direct_mode { "direct" } else { "traditional" },
        transport: summary.transport.clone(),
        inferences: list.lines.len(),
        load_us,
        arena_high_water_bytes: summary.arena_used,
        ..RunRecord::default()
    };
    let plan = Plan { context, graph_index, graph, list: &list, execute_flags };
    let ran = run_inferences(&mut stub, &plan, settings, configuration.profiling_level, &mut summary, &mut record);
    // Every run that passed the checks records itself, a failed one too (with what it did and why it stopped).
    record.inferences = summary.execute_micros.len();
    record.dsp_execute_us = summary.execute_micros.clone();
    // The close that ends the run counts too.
    record.skel_calls = stub.calls() + 1;
    let closed = stub.close().map_err(failed("closing the skel".into()));
    let outcome = ran.and(closed);
    record.error = outcome.as_ref().err().map(|error| format!("{error:#}"));
    if configuration.profiling_level != 0 {
        crate::profile::complete(&mut record, lpai.perf.map(|perf| perf.fps), &summary.profile);
    }
    let written = run_record::write(&settings.output_dir, &record);
    let traced = crate::trace::write_if_profiled(&settings.output_dir, &record);
    outcome?;
    written?;
    traced?;
    summary.record = record;
    Ok(summary)
}

/// Runs the inferences (directly on the skel or one call each), reads the profile and unloads the context.
fn run_inferences(
    stub: &mut Stub,
    plan: &Plan<'_>,
    settings: &Settings,
    profiling_level: u32,
    summary: &mut Summary,
    record: &mut RunRecord,
) -> Result<()> {
    if settings.direct_mode {
        let outcome = direct::run_job(stub, plan, &settings.output_dir, settings.keep_num_outputs)?;
        summary.execute_micros = outcome.execute_micros;
        let clock_hz = u128::from(outcome.report.clock_hz.max(1));
        let micros = |ticks: u64| (u128::from(ticks) * 1_000_000 / clock_hz) as u64;
        record.dsp_load_us = Some(micros(outcome.report.load_ticks));
        record.dsp_finalize_us = Some(micros(outcome.report.finalize_ticks));
    } else {
        run_traditional(stub, plan, &settings.output_dir, settings.keep_num_outputs, summary, record)?;
    }
    if profiling_level != 0 {
        summary.profile = stub.profile(plan.context).map_err(failed("reading the profile".into()))?;
    }
    stub.unload(plan.context).map_err(failed("unloading the context".into()))?;
    Ok(())
}

/// What the inferences of a run work on, after the up-front checks.
pub struct Plan<'a> {
    /// The loaded context.
    pub context: i32,
    /// The graph's index in it.
    pub graph_index: usize,
    /// The graph.
    pub graph: &'a GraphDescription,
    /// The checked input list.
    pub list: &'a InputList,
    /// `execute`'s float flags.
    pub execute_flags: u32,
}

/// The traditional loop: one `execute` call per inference, inputs read and results written here.
fn run_traditional(
    stub: &mut Stub,
    plan: &Plan<'_>,
    output_dir: &Path,
    keep: Option<usize>,
    summary: &mut Summary,
    record: &mut RunRecord,
) -> Result<()> {
    let Plan { context, graph_index, graph, list, execute_flags } = *plan;
    let (float_in, float_out) = (execute_flags & flags::FLOAT_INPUTS != 0, execute_flags & flags::FLOAT_OUTPUTS != 0);
    let input_sizes = graph_io::wire_sizes(&graph.inputs, float_in);
    let output_sizes = graph_io::wire_sizes(&graph.outputs, float_out);
    let output_offsets: Vec<usize> =
        output_sizes.iter().scan(0, |at, size| Some(std::mem::replace(at, *at + size))).collect();
    let mut inputs = stub.transport().buffer(input_sizes.iter().sum());
    let mut outputs = stub.transport().buffer(output_sizes.iter().sum());
    let progress = indicatif::ProgressBar::new(list.lines.len() as u64);
    for (result_index, line) in list.lines.iter().enumerate() {
        let mut offset = 0;
        for (file, size) in line.files.iter().zip(&input_sizes) {
            read_input(file, &mut inputs[offset..offset + size])?;
            offset += size;
        }
        let started = Instant::now();
        let executed = stub
            .execute(context, graph_index as u32, execute_flags, &inputs, &mut outputs)
            .map_err(failed(format!("input list line {}", line.number)))?;
        record.host_round_trip_us.push(started.elapsed().as_micros() as u64);
        summary.execute_micros.push(graph.micros(executed.dsp_ticks));
        progress.inc(1);
        if keep.is_some_and(|keep| result_index >= keep) {
            continue;
        }
        let directory = output_dir.join(format!("Result_{result_index}"));
        std::fs::create_dir_all(&directory).with_context(|| format!("cannot create {}", directory.display()))?;
        for &index in &list.outputs {
            let (offset, size) = (output_offsets[index], output_sizes[index]);
            let file = directory.join(output::file_name(&graph.outputs[index].name));
            output::write_whole(&file, &outputs[offset..offset + size])?;
        }
    }
    progress.finish_and_clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_file_that_changed_size_is_named_instead_of_panicking() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("grown.raw");
        std::fs::write(&file, [1u8; 6]).unwrap();
        let mut destination = [0u8; 4];
        let message = read_input(&file, &mut destination).unwrap_err().to_string();
        assert!(message.contains("grown.raw") && message.contains("6 bytes, expected 4"), "{message}");
        std::fs::write(&file, [7u8; 4]).unwrap();
        read_input(&file, &mut destination).unwrap();
        assert_eq!(destination, [7; 4]);
    }

    #[test]
    fn the_config_file_profiling_level_counts_when_the_setting_is_absent() {
        let mut settings = Settings::new("b", "c", "l");
        let lpai = LpaiConfig { profiling_level: Some(2), ..LpaiConfig::default() };
        assert_eq!(qnn_profiling_level(&settings, &lpai), 2);
        assert_eq!(qnn_profiling_level(&settings, &LpaiConfig::default()), 0);
        settings.profiling_level = Some(crate::settings::PROFILE_BASIC);
        assert_eq!(qnn_profiling_level(&settings, &lpai), 1);
    }

    #[test]
    fn a_named_skel_that_is_missing_is_named_with_its_flag() {
        let mut settings = Settings::new("b", "c", "l");
        settings.transport = Some(TransportKind::Local);
        settings.skel = Some("/nonexistent/liblpai_direct_skel.so".into());
        let message = transport_trying(&settings, false).err().unwrap().to_string();
        assert_eq!(message, "the skel library /nonexistent/liblpai_direct_skel.so (from --skel) does not exist");
        settings.transport = None;
        settings.fastrpc_library = Some("/nonexistent/libadsprpc.so".into());
        let message = transport_trying(&settings, true).err().unwrap().to_string();
        assert!(message.contains("/nonexistent/libadsprpc.so") && message.contains("(from --skel)"), "{message}");
    }

    #[test]
    fn another_pd_than_the_user_pd_needs_the_fastrpc_transport() {
        let mut settings = Settings::new("b", "c", "l");
        settings.pd = Pd::Audio;
        settings.fastrpc_library = Some("/nonexistent/libadsprpc.so".into());
        for (kind, name) in [(TransportKind::Local, "local"), (TransportKind::Qemu, "qemu")] {
            settings.transport = Some(kind);
            let message = transport_trying(&settings, false).err().unwrap().to_string();
            let expected = format!(
                "--pd audio picks a PD on a DSP through FastRPC, which the {name} transport does not use (leave out \
                 --pd, or use --transport fastrpc)"
            );
            assert_eq!(message, expected);
        }
        // The default transport is FastRPC then, with no fallback to local, even where FastRPC is not the default.
        settings.transport = None;
        let message = transport_trying(&settings, false).err().unwrap().to_string();
        assert!(message.starts_with("FastRPC is not available: tried /nonexistent/libadsprpc.so"), "{message}");
    }

    #[test]
    fn the_skel_gets_an_absolute_context_path() {
        // Unit tests run in the package directory, so this relative path exists.
        let sent = path_for_skel(Path::new("src/../Cargo.toml")).unwrap();
        let sent = PathBuf::from(sent.to_str().unwrap());
        assert_eq!(sent, std::env::current_dir().unwrap().join("Cargo.toml").canonicalize().unwrap());
        assert!(sent.is_absolute());
        let message = path_for_skel(Path::new("absent.bin")).unwrap_err().to_string();
        assert!(message.contains("absent.bin") && message.contains("does not exist"), "{message}");
    }
}
