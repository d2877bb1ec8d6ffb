//! The net-run job through the stub: open the skel on a transport, configure it, load the context (with the
//! metadata record read here by the HLOS side's libQnnSystem, unless the skel has its own), check the whole input
//! list, then run every line and write its outputs. Every transport runs this same code.

use crate::direct;
use crate::file_kinds::{self, FileKinds, FileSettings};
use crate::graph_io;
use crate::input_list;
use crate::input_list::InputList;
use crate::lpai_config::LpaiConfig;
use crate::metadata;
use crate::net_run_config::{self, NetRunConfig};
use crate::output;
use crate::run_record::{self, RunRecord};
use crate::settings::PerfProfile;
pub use crate::settings::Settings;
use crate::stub::fastrpc::{self, FastRpc, FastRpcOptions, Pd};
use crate::stub::first_contact;
use crate::stub::StubError;
use crate::stub::{default_transport_trying, flags, Configuration, GraphDescription, ProfileEvent, SkelVersion, Stub};
use crate::stub::{Local, Qemu, QemuOptions, SkelLocation, TransportKind, PRIORITY_UNCHANGED, TARGET_DEFAULT};
use crate::stub::{Named, Transport};
use anyhow::{anyhow, bail, Context as _, Result};
use lpai_direct::qnn::lpai;
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
            let options =
                QemuOptions { skel: settings.skel.clone(), shell: settings.pd_shell.clone(), ..QemuOptions::default() };
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

/// The input lists of a run: one for the graph chosen (`--graph_name`, else the first), or qnn-net-run's
/// comma-separated list with one entry per graph of the binary, `__` skipping a graph. Answers (graph index, list)
/// pairs in graph order, and whether the lists were given per graph (results then go to `Result_<i>/<graph>/`). A
/// path that exists as it is counts as one list even if it holds a comma.
fn graph_lists(
    settings: &Settings,
    graphs: &[GraphDescription],
    config: &NetRunConfig,
) -> Result<(Vec<(usize, PathBuf)>, bool)> {
    let names: Vec<&str> = graphs.iter().map(|graph| graph.name.as_str()).collect();
    let given = settings.input_list.to_string_lossy().into_owned();
    let entries: Vec<&str> =
        if settings.input_list.exists() { vec![given.as_str()] } else { given.split(',').collect() };
    let chosen: Vec<(usize, PathBuf)> = if entries.len() == 1 {
        let index = match &settings.graph_name {
            Some(name) => names
                .iter()
                .position(|graph| graph == name)
                .with_context(|| format!("the context has no graph '{name}' (graphs: {})", names.join(", ")))?,
            None => 0,
        };
        if index >= graphs.len() {
            bail!("the context binary holds no graph");
        }
        vec![(index, settings.input_list.clone())]
    } else {
        if settings.graph_name.is_some() {
            bail!("--graph_name picks one graph, but --input_list gives {} lists (one per graph)", entries.len());
        }
        if entries.len() != graphs.len() {
            bail!(
                "--input_list gives {} comma-separated lists, but the context has {} graphs ({}); give one list per \
                 graph, `__` for a graph to skip",
                entries.len(),
                graphs.len(),
                names.join(", ")
            );
        }
        entries
            .iter()
            .enumerate()
            .filter(|(_, entry)| entry.trim() != "__")
            .map(|(index, entry)| (index, PathBuf::from(entry.trim())))
            .collect()
    };
    if chosen.is_empty() {
        bail!("--input_list skips every graph (`__` for each)");
    }
    for (index, _) in &chosen {
        if !config.enabled(names[*index]) {
            bail!(
                "graph {} is not in the config file's context_configs.enable_graphs; leave it out (`__` in \
                 --input_list, or another --graph_name)",
                names[*index]
            );
        }
    }
    Ok((chosen, entries.len() > 1))
}

/// The LPAI performance for a graph: `--perf_profile`'s ftrt_ratio and client type over the config file's, with the
/// config file's fps, affinity and core selection (or LPAI's defaults); `None` when neither asks for any.
fn graph_performance(settings: &Settings, lpai: &LpaiConfig) -> Option<(lpai::PerfCfg, lpai::CoreAffinity)> {
    let from_profile = settings.perf_profile.and_then(PerfProfile::lpai);
    if lpai.perf.is_none() && from_profile.is_none() {
        return None;
    }
    let mut perf = lpai.perf.unwrap_or_default();
    if let Some((ftrt_ratio, real_time)) = from_profile {
        perf.ftrt_ratio = ftrt_ratio;
        perf.client_type =
            if real_time { lpai::ClientPerfType::REAL_TIME } else { lpai::ClientPerfType::NON_REAL_TIME };
    }
    Some((perf, lpai.affinity.unwrap_or(lpai::CoreAffinity::DEFAULT)))
}

/// The `load` flags: PERSISTENT_BINARY (`--persistent_binary` or the config file's `is_persistent_binary`), island
/// mode (the conf's `lpai_direct.island`) and the context priority.
fn load_flags(settings: &Settings, config: &NetRunConfig) -> u32 {
    let persistent = settings.persistent_binary || config.persistent_binary;
    let priority = config.context_priority.and_then(lpai_direct::wire::load_priority).unwrap_or(0);
    (if persistent { flags::PERSISTENT_BINARY } else { 0 })
        | (if config.lpai.island { lpai_direct::wire::LOAD_ISLAND } else { 0 })
        | priority
}

/// Runs the job the settings describe: the up-front checks (files, config, the binary's metadata read here), then
/// [`open_and_load`] on the skel, the input lists checked against the graphs, and the inferences. A run that fails
/// where it meets the DSP side (choosing the transport, the skel's open, its configure or load) or during the
/// inferences writes its record with the error too.
pub fn run(settings: &Settings) -> Result<Summary> {
    let binary_path = &settings.retrieve_context;
    std::fs::metadata(binary_path)
        .with_context(|| format!("context binary {} cannot be read", binary_path.display()))?;
    let native_inputs = match &settings.native_input_tensor_names {
        Some(text) => file_kinds::parse_native_input_names(text)?,
        None => Vec::new(),
    };
    let config = match &settings.config_file {
        Some(path) => net_run_config::read(path)?,
        None => NetRunConfig::default(),
    };
    for warning in &config.warnings {
        eprintln!("lpai-net-run: warning: {warning}");
    }
    let lpai = &config.lpai;
    let mode = if settings.direct_mode { "direct" } else { "traditional" };
    let (transport, note) = match transport(settings) {
        Ok(chosen) => chosen,
        Err(error) => {
            // The transport asked for, or the one the default tried first.
            let asked = settings.transport.map(Named::name);
            let tried = if cfg!(target_arch = "aarch64") { "fastrpc" } else { "local" };
            let transport = asked.unwrap_or(if settings.pd != Pd::User { "fastrpc" } else { tried }).to_string();
            let mut record = RunRecord { mode, transport, ..RunRecord::default() };
            return Err(recorded(settings, &mut record, error));
        }
    };
    if let Some(note) = note {
        eprintln!("lpai-net-run: note: {note}");
    }
    // A bare library name (no `/`) is left to the dynamic loader's search.
    let is_path = settings.backend.as_os_str().as_bytes().contains(&b'/');
    // The local and qemu transports open libraries from this machine's file system.
    if transport.name() != "fastrpc" && is_path && !settings.backend.is_file() {
        bail!("backend library {} does not exist", settings.backend.display());
    }
    // Every binary is read and checked here, by libQnnSystem in a process of its own, before anything reaches the
    // skel: a binary that crashes the vendor reader is reported as corrupt, and the skel gets the record (with the
    // binary's hash) unless it reads the metadata itself.
    let what = format!("context binary {}", binary_path.display());
    let binary = std::fs::read(binary_path).with_context(|| format!("cannot read {}", binary_path.display()))?;
    let library = metadata::HostSystemLibrary::load(&system_library_path(settings)).map_err(|error| {
        let default = match settings.system_library {
            Some(_) => String::new(),
            None => format!(", by default the one beside --backend {}", settings.backend.display()),
        };
        anyhow!(
            "{error:#} (--system_library names the HLOS side's libQnnSystem{default}, which reads and checks the \
             binary's metadata before the skel sees it)"
        )
    })?;
    let checked = library.read(&binary, &what)?;
    let mut record = RunRecord { mode, transport: transport.name().to_string(), ..RunRecord::default() };
    let load = LoadInputs { binary: &binary, what: &what, metadata: &checked, config: &config };
    let opened = open_and_load(transport, settings, &load, &mut record);
    let (mut stub, context, graphs, configuration) = match opened {
        Ok(opened) => opened,
        Err((error, calls)) => {
            record.skel_calls = calls;
            return Err(recorded(settings, &mut record, error));
        }
    };
    let (lists, per_graph) = graph_lists(settings, &graphs, &config)?;
    let running: Vec<&GraphDescription> = lists.iter().map(|(index, _)| &graphs[*index]).collect();
    if let Some(message) = file_kinds::unknown_native_inputs(&native_inputs, &running) {
        bail!(message);
    }
    let file_settings = FileSettings {
        all_inputs_native: settings.use_native_input_files,
        native_inputs: &native_inputs,
        output_data_type: settings.output_data_type,
    };
    // Every list is checked against its graph before the first inference runs.
    let mut plans = Vec::new();
    for (graph_index, list_path) in &lists {
        let graph = &graphs[*graph_index];
        let all_outputs: Vec<usize> = (0..graph.outputs.len()).collect();
        let float_inputs = FileKinds::new(graph, &file_settings, &all_outputs)?.float_inputs;
        let output_names: Vec<&str> = graph.outputs.iter().map(|tensor| tensor.name.as_str()).collect();
        let expected = graph_io::expected_inputs(graph, &float_inputs);
        let mut list = input_list::read(list_path, &expected, &output_names)?;
        if let Some(count) = settings.num_inferences {
            // qnn-net-run's --num_inferences: the list's lines over and over.
            list.lines = list.lines.iter().cycle().take(count).cloned().collect();
        }
        let kinds = FileKinds::new(graph, &file_settings, &list.outputs)?;
        plans.push((*graph_index, list, kinds));
    }
    let graph_names: Vec<&str> = running.iter().map(|graph| graph.name.as_str()).collect();
    let first = running[0];
    let mut summary = Summary {
        transport: stub.transport().name().to_string(),
        skel_place: stub.transport().place(),
        graph: graph_names.join(", "),
        arena_used: first.arena_used as usize,
        arena_capacity: first.arena_capacity as usize,
        lpai_memory: (first.scratch_bytes, first.persistent_bytes),
        ..Summary::default()
    };
    record.arena_high_water_bytes = summary.arena_used;
    let ran = (|| -> Result<()> {
        for (graph_index, list, kinds) in &plans {
            let graph = &graphs[*graph_index];
            let priority = config.graph(&graph.name).and_then(|setting| setting.priority);
            let performance = graph_performance(settings, lpai);
            if performance.is_some() || priority.is_some() {
                let (perf, affinity) = performance.unwrap_or((lpai::PerfCfg::default(), lpai::CoreAffinity::DEFAULT));
                let what = format!("setting the performance of graph {}", graph.name);
                let priority = priority.unwrap_or(PRIORITY_UNCHANGED);
                stub.set_performance(context, *graph_index as u32, perf, affinity, priority).map_err(failed(what))?;
            }
            let plan = Plan {
                context,
                graph_index: *graph_index,
                graph,
                list,
                kinds,
                result_subdir: per_graph.then_some(graph.name.as_str()),
            };
            run_inferences(&mut stub, &plan, settings, &mut summary, &mut record)?;
        }
        if configuration.profiling_level != 0 {
            summary.profile = stub.profile(context).map_err(failed("reading the profile".into()))?;
        }
        stub.unload(context).map_err(failed("unloading the context".into()))?;
        Ok(())
    })();
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
    if let (Err(error), Err(unwritten)) = (&outcome, &written) {
        // A full disk or an unwritable output directory stops the run and its record alike: say both.
        bail!("{error:#}; the run's record could not be written either: {unwritten:#}");
    }
    outcome?;
    written?;
    traced?;
    summary.record = record;
    Ok(summary)
}

/// Writes the record of a run that failed with `error`, and answers the error (with the record's own failure when
/// it could not be written either).
fn recorded(settings: &Settings, record: &mut RunRecord, error: anyhow::Error) -> anyhow::Error {
    record.error = Some(format!("{error:#}"));
    match run_record::write(&settings.output_dir, record) {
        Ok(()) => error,
        Err(unwritten) => anyhow!("{error:#}; the run's record could not be written either: {unwritten:#}"),
    }
}

/// What the load needs from the up-front checks.
struct LoadInputs<'a> {
    binary: &'a [u8],
    what: &'a str,
    metadata: &'a metadata::BinaryMetadata,
    config: &'a NetRunConfig,
}

/// An open skel with the context loaded: the stub, the context id, its graphs, the configuration sent.
type Opened = (Stub, i32, Vec<GraphDescription>, Configuration);

/// Opens the skel (with the version handshake), configures it, loads the context and describes its graphs; on
/// failure answers the error, explained where the first contact with a device can be ([`first_contact`]), with the
/// calls made.
fn open_and_load(
    transport: Box<dyn Transport>,
    settings: &Settings,
    load: &LoadInputs<'_>,
    record: &mut RunRecord,
) -> std::result::Result<Opened, (anyhow::Error, u32)> {
    let uri = fastrpc::skel_uri(settings.domain, settings.session);
    let fastrpc = transport.name() == "fastrpc";
    let mut stub = Stub::open(transport, &uri).map_err(|error| (anyhow!("opening the skel: {error}"), 1))?;
    if let SkelVersion::Unversioned = stub.skel_version() {
        eprintln!(
            "lpai-net-run: warning: the skel {} is from before the version handshake (it does not answer `version`): \
             it runs as interface 1.0; stage the skel of this build",
            stub.transport().skel_source()
        );
    }
    let fail = |stub: &mut Stub, error: anyhow::Error| (error, stub.calls() + 1);
    let lpai = &load.config.lpai;
    // Without a system library of its own (the default) the skel gets the metadata record read here.
    let dsp_system_library = match &settings.dsp_system_library {
        Some(path) => c_path(path).map_err(|error| fail(&mut stub, error))?,
        None => CString::default(),
    };
    let configuration = Configuration {
        backend: c_path(&settings.backend).map_err(|error| fail(&mut stub, error))?,
        system_library: dsp_system_library,
        log_level: settings.log_level,
        profiling_level: qnn_profiling_level(settings, lpai),
        lpai_hw_version: lpai.hw_version.unwrap_or(0),
        lpai_target: lpai.target.unwrap_or(TARGET_DEFAULT),
        arena_bytes: settings.arena_bytes.or(load.config.memory_limit_hint).unwrap_or(0),
    };
    if let Err(error) = stub.configure(&configuration) {
        let explained = if fastrpc { configure_failure(settings, &error) } else { None };
        let error = anyhow!("configuring the skel: {}", explained.unwrap_or_else(|| error.to_string()));
        return Err(fail(&mut stub, error));
    }
    let record_bytes = settings.dsp_system_library.is_none().then_some(load.metadata.record.as_slice());
    let load_flags = load_flags(settings, load.config);
    let load_started = Instant::now();
    let binary_path = &settings.retrieve_context;
    let loaded = match (settings.dsp_reads_context, record_bytes) {
        (true, None) => path_for_skel(binary_path).map(|path| stub.load_file(&path, load_flags)),
        (true, Some(record)) => {
            path_for_skel(binary_path).map(|path| stub.load_file_with_metadata(&path, record, load_flags))
        }
        (false, None) => Ok(stub.load(load.binary, load_flags)),
        (false, Some(record)) => Ok(stub.load_with_metadata(load.binary, record, load_flags)),
    };
    let (context, graph_count) = match loaded {
        Ok(Ok(loaded)) => loaded,
        Ok(Err(error)) => {
            let error = load_failure(&mut stub, load, load_flags, error);
            return Err(fail(&mut stub, error));
        }
        Err(error) => return Err(fail(&mut stub, error)),
    };
    record.load_us = load_started.elapsed().as_micros() as u64;
    let mut graphs = Vec::new();
    for index in 0..graph_count {
        match stub.describe(context, index) {
            Ok(graph) => graphs.push(graph),
            Err(error) => return Err(fail(&mut stub, anyhow!("describing graph {index}: {error}"))),
        }
    }
    Ok((stub, context, graphs, configuration))
}

/// A failed configure on a device, explained: a library the DSP side cannot load (named, with the directories
/// searched), or a backend that does not create on a domain other than the aDSP; `None` when neither applies.
fn configure_failure(settings: &Settings, error: &StubError) -> Option<String> {
    let code = error.code()?;
    let search = crate::stub::dsp_search::SearchPath::from_environment();
    if lpai_direct::aee::plain(code) == lpai_direct::aee::EUNABLETOLOAD {
        let which_system = error.to_string().contains("system library");
        let (which, name) = match (which_system, &settings.dsp_system_library) {
            (true, Some(system)) => (first_contact::DspLibrary::System, system),
            _ => (first_contact::DspLibrary::Backend, &settings.backend),
        };
        return Some(first_contact::library_missing(which, &name.to_string_lossy(), settings.domain, &search));
    }
    (settings.domain != fastrpc::Domain::Adsp).then(|| first_contact::wrong_domain(settings.domain, &error.to_string()))
}

/// The one-line error for a backend that refuses PERSISTENT_BINARY (libQnnHtp does; LPAI needs it).
pub const PERSISTENT_BINARY_REFUSED: &str = "the backend does not take persistent binaries (the config file's \
     context_configs.is_persistent_binary, or --persistent_binary, asks for one); only LPAI backends do: leave it out \
     for this backend";

/// A failed load, with what a refused PERSISTENT_BINARY means instead of the skel's long story, and, when the
/// binary's versions (its metadata, read here) are ones the skel's backend does not take, both versions.
fn load_failure(stub: &mut Stub, load: &LoadInputs<'_>, load_flags: u32, error: StubError) -> anyhow::Error {
    let what = load.what;
    let persistent = load_flags & flags::PERSISTENT_BINARY != 0;
    if persistent && error.to_string().contains("refused the PERSISTENT_BINARY context config") {
        return anyhow!("{what}: {PERSISTENT_BINARY_REFUSED}");
    }
    let facts = &load.metadata.facts;
    let made_for = (facts.core_api_version, facts.backend_api_version);
    if let Ok(backend) = stub.probe() {
        if !first_contact::binary_accepted(made_for, (backend.core_api, backend.backend_api)) {
            let backend = first_contact::BackendFacts {
                provider: &backend.provider,
                build_id: &backend.build_id,
                core_api: backend.core_api,
                backend_api: backend.backend_api,
            };
            let line = first_contact::binary_version_refused(what, made_for, facts.build_id.as_deref(), &backend);
            return anyhow!("{line} (the skel says: {error})");
        }
    }
    anyhow!("{what}: {error}")
}

/// Runs one graph's inferences (directly on the skel or one call each); with `--duration`, over and over until
/// that many seconds have passed.
fn run_inferences(
    stub: &mut Stub,
    plan: &Plan<'_>,
    settings: &Settings,
    summary: &mut Summary,
    record: &mut RunRecord,
) -> Result<()> {
    let started = Instant::now();
    let mut first_result = 0;
    loop {
        let ran = if settings.direct_mode {
            let outcome = direct::run_job(stub, plan, &settings.output_dir, settings.keep_num_outputs, first_result)?;
            let clock_hz = u128::from(outcome.report.clock_hz.max(1));
            let micros = |ticks: u64| (u128::from(ticks) * 1_000_000 / clock_hz) as u64;
            record.dsp_load_us = Some(micros(outcome.report.load_ticks));
            record.dsp_finalize_us = Some(micros(outcome.report.finalize_ticks));
            let count = outcome.execute_micros.len();
            summary.execute_micros.extend(outcome.execute_micros);
            record.dsp_in_memory_us.extend(outcome.in_memory_micros);
            record.dsp_file_io_us.extend(outcome.file_io_micros);
            count
        } else {
            let deadline = settings.duration.map(|seconds| (started, seconds));
            run_traditional(stub, plan, settings, first_result, deadline, summary, record)?
        };
        first_result += ran;
        let done = settings.duration.is_none_or(|seconds| started.elapsed().as_secs_f64() >= seconds);
        if done || ran == 0 {
            return Ok(());
        }
    }
}

/// What one graph's inferences work on, after the up-front checks.
pub struct Plan<'a> {
    /// The loaded context.
    pub context: i32,
    /// The graph's index in it.
    pub graph_index: usize,
    /// The graph.
    pub graph: &'a GraphDescription,
    /// The checked input list.
    pub list: &'a InputList,
    /// How each input and output file is kept.
    pub kinds: &'a FileKinds,
    /// Results go to `Result_<i>/<this>/` (runs of several graphs).
    pub result_subdir: Option<&'a str>,
}

impl Plan<'_> {
    /// The directory inference `result_index`'s files go to (`lpai_direct::job::ResultPath`, the skel's layout too).
    pub fn result_directory(&self, output_dir: &Path, result_index: usize) -> PathBuf {
        let index = u32::try_from(result_index).unwrap_or(u32::MAX);
        let path = lpai_direct::job::ResultPath::new(index, self.result_subdir.map(str::as_bytes));
        output_dir.join(String::from_utf8_lossy(&path.parts().concat()).as_ref())
    }
}

/// The traditional loop: one `execute` call per inference, inputs read and results written here; results are
/// numbered from `first_result`. With a deadline (start, seconds) it stops after the inference that reaches it.
/// Answers how many inferences ran.
fn run_traditional(
    stub: &mut Stub,
    plan: &Plan<'_>,
    settings: &Settings,
    first_result: usize,
    deadline: Option<(Instant, f64)>,
    summary: &mut Summary,
    record: &mut RunRecord,
) -> Result<usize> {
    let Plan { context, graph_index, graph, list, kinds, .. } = *plan;
    let execute_flags = kinds.execute_flags();
    let (float_in, float_out) = (execute_flags & flags::FLOAT_INPUTS != 0, execute_flags & flags::FLOAT_OUTPUTS != 0);
    let input_sizes = graph_io::wire_sizes(&graph.inputs, float_in);
    let output_sizes = graph_io::wire_sizes(&graph.outputs, float_out);
    let offsets = |sizes: &[usize]| -> Vec<usize> {
        sizes.iter().scan(0, |at, size| Some(std::mem::replace(at, *at + size))).collect()
    };
    let (input_offsets, output_offsets) = (offsets(&input_sizes), offsets(&output_sizes));
    let mut inputs = stub.transport().buffer(input_sizes.iter().sum());
    let mut outputs = stub.transport().buffer(output_sizes.iter().sum());
    let progress = match deadline {
        Some(_) => indicatif::ProgressBar::new_spinner(),
        None => indicatif::ProgressBar::new(list.lines.len() as u64),
    };
    let mut ran = 0;
    for (position, line) in list.lines.iter().enumerate() {
        for (index, file) in line.files.iter().enumerate() {
            let slot = &mut inputs[input_offsets[index]..input_offsets[index] + input_sizes[index]];
            if float_in || !kinds.float_inputs[index] {
                read_input(file, slot)?;
            } else {
                // A float file for a tensor that travels native: converted here, as the skel would.
                let tensor = &graph.inputs[index];
                let mut float_bytes = vec![0u8; graph_io::wire_bytes(true, tensor)];
                read_input(file, &mut float_bytes)?;
                file_kinds::quantize_input(tensor, &float_bytes, slot)
                    .with_context(|| format!("input list line {}", line.number))?;
            }
        }
        let started = Instant::now();
        let executed = match stub.execute(context, graph_index as u32, execute_flags, &inputs, &mut outputs) {
            Ok(executed) => executed,
            Err(error) if error.code().is_some_and(first_contact::is_pd_restart) => {
                let (first, during) = (first_result, first_result + position);
                bail!(
                    "{} (input list line {}; {error})",
                    first_contact::pd_restarted(first, during, "written here"),
                    line.number
                )
            }
            Err(error) => return Err(anyhow!("input list line {}: {error}", line.number)),
        };
        record.host_round_trip_us.push(started.elapsed().as_micros() as u64);
        summary.execute_micros.push(graph.micros(executed.dsp_ticks));
        progress.inc(1);
        ran += 1;
        let result_index = first_result + position;
        if !settings.keep_num_outputs.is_some_and(|keep| result_index >= keep) {
            let directory = plan.result_directory(&settings.output_dir, result_index);
            output::create_directory(&directory)?;
            for file in &kinds.outputs {
                let index = file.index as usize;
                let slot = &outputs[output_offsets[index]..output_offsets[index] + output_sizes[index]];
                let path = directory.join(&file.file_name);
                if float_out || !file.float {
                    output::write_whole(&path, slot)?;
                } else {
                    let bytes = file_kinds::output_file_bytes(&graph.outputs[index], file, slot)?;
                    output::write_whole(&path, &bytes)?;
                }
            }
        }
        if deadline.is_some_and(|(start, seconds)| start.elapsed().as_secs_f64() >= seconds) {
            break;
        }
    }
    progress.finish_and_clear();
    Ok(ran)
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
