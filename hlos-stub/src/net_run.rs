//! The net-run job through the stub: open the skel on a transport, configure it, load the context, check the
//! whole input list, then run every line and write its outputs. Every transport runs this same code.

use crate::cli::{LogLevel, Options, ProfilingLevel, TransportKind};
use crate::input_list::{self, ExpectedInput};
use crate::lpai_config::{self, LpaiConfig};
use crate::output;
use crate::stub::fastrpc::{self, FastRpc, FastRpcOptions};
use crate::stub::local::Local;
use crate::stub::{flags, Configuration, GraphDescription, Stub, StubError, TensorDescription, Transport};
use crate::stub::{PRIORITY_UNCHANGED, TARGET_DEFAULT};
use anyhow::{anyhow, bail, Context as _, Result};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// One profile event, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileLine {
    /// QNN event type (EXECUTE 400, NODE 404, ...).
    pub event_type: u32,
    /// QNN unit (MICROSEC 1, CYCLES 3, ...).
    pub unit: u32,
    /// The measurement.
    pub value: u64,
    /// The backend's name for the event.
    pub identifier: String,
    /// 0 top level, 1 sub-event.
    pub depth: u32,
}

/// What a run did, for the closing lines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// The transport that carried the calls.
    pub transport: String,
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
    pub profile: Vec<ProfileLine>,
}

fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes()).with_context(|| format!("{} contains a NUL byte", path.display()))
}

fn system_library_path(options: &Options) -> PathBuf {
    if let Some(path) = &options.system_library {
        return path.clone();
    }
    let beside = options.backend.with_file_name("libQnnSystem.so");
    if beside.exists() || options.backend.parent().is_some_and(|p| !p.as_os_str().is_empty()) {
        beside
    } else {
        PathBuf::from("libQnnSystem.so")
    }
}

fn qnn_log_level(level: LogLevel) -> u32 {
    match level {
        LogLevel::Error => 1,
        LogLevel::Warn => 2,
        LogLevel::Info => 3,
        LogLevel::Verbose => 4,
        LogLevel::Debug => 5,
    }
}

/// The transport the options ask for (or the default one).
pub fn transport(options: &Options) -> Result<Box<dyn Transport>> {
    let fastrpc_options = FastRpcOptions {
        domain: options.domain,
        session: options.session,
        unsigned_pd: options.unsigned_pd,
        libraries: options.fastrpc_library.iter().cloned().collect(),
    };
    match options.transport {
        Some(TransportKind::Local) => Ok(Box::new(Local)),
        Some(TransportKind::Fastrpc) => Ok(Box::new(FastRpc::load(fastrpc_options)?)),
        None if cfg!(target_arch = "aarch64") => match FastRpc::load(fastrpc_options) {
            Ok(fastrpc) => Ok(Box::new(fastrpc)),
            Err(_) => Ok(Box::new(Local)),
        },
        None => Ok(Box::new(Local)),
    }
}

fn expected_inputs(graph: &GraphDescription, native: bool) -> Vec<ExpectedInput> {
    graph
        .inputs
        .iter()
        .map(|tensor| {
            let native_size = (tensor.native_bytes, format!("{} {} elements", tensor.elements, data_type_name(tensor)));
            let float_size = (tensor.elements * 4, format!("{} float32 elements", tensor.elements));
            let (expected, other, hint) = if native {
                (native_size, float_size, "it looks like float32 data: drop --use_native_input_files")
            } else {
                (float_size, native_size, "it looks like native data: pass --use_native_input_files")
            };
            let other_kind = (other.0 != expected.0).then(|| (other.0, hint.to_string()));
            ExpectedInput { name: tensor.name.clone(), bytes: expected.0, what: expected.1, other_kind }
        })
        .collect()
}

fn data_type_name(tensor: &TensorDescription) -> &'static str {
    let name = lpai_direct::qnn::DataType(tensor.data_type).c_name().unwrap_or("unknown");
    name.trim_start_matches("QNN_DATATYPE_")
}

/// The skel's message for a failed call, prefixed with what was being done.
fn failed(what: String) -> impl FnOnce(StubError) -> anyhow::Error {
    move |error| anyhow!("{what}: {error}")
}

/// Runs the job the options describe.
pub fn run(options: &Options) -> Result<Summary> {
    let binary_path = &options.retrieve_context;
    let binary_size = std::fs::metadata(binary_path)
        .with_context(|| format!("context binary {} cannot be read", binary_path.display()))?
        .len();
    let transport = transport(options)?;
    let local = transport.name() == "local";
    if local && !options.backend.is_file() {
        bail!("backend library {} does not exist", options.backend.display());
    }
    let lpai = match &options.config_file {
        Some(path) => lpai_config::read(path)?,
        None => LpaiConfig::default(),
    };
    let uri = fastrpc::skel_uri(options.domain, options.session);
    let mut stub = Stub::open(transport, &uri).map_err(failed("opening the skel".into()))?;
    let system_library = system_library_path(options);
    let configuration = Configuration {
        backend: c_path(&options.backend)?,
        system_library: c_path(&system_library)?,
        log_level: qnn_log_level(options.log_level),
        profiling_level: options.profiling_level.map_or(lpai.profiling_level.unwrap_or(0), |level| match level {
            ProfilingLevel::Basic => 1,
            ProfilingLevel::Detailed => 2,
            ProfilingLevel::Backend => 1000,
        }),
        lpai_hw_version: lpai.hw_version.unwrap_or(0),
        lpai_target: lpai.target.unwrap_or(TARGET_DEFAULT),
        arena_bytes: options.arena_bytes.unwrap_or(0),
    };
    stub.configure(&configuration).map_err(|error| anyhow!("{error}"))?;

    let load_flags = if options.persistent_binary { flags::PERSISTENT_BINARY } else { 0 };
    let what = format!("context binary {}", binary_path.display());
    let (context, graph_count) = if options.dsp_reads_context {
        stub.load_file(&c_path(binary_path)?, load_flags)
    } else {
        let binary = std::fs::read(binary_path).with_context(|| format!("cannot read {}", binary_path.display()))?;
        debug_assert_eq!(binary.len() as u64, binary_size);
        stub.load(&binary, load_flags)
    }
    .map_err(failed(what))?;

    let mut graphs = Vec::new();
    for index in 0..graph_count {
        graphs.push(stub.describe(context, index).map_err(failed(format!("describing graph {index}")))?);
    }
    let graph_index = match &options.graph_name {
        Some(name) => graphs.iter().position(|g| &g.name == name).with_context(|| {
            let names: Vec<&str> = graphs.iter().map(|g| g.name.as_str()).collect();
            format!("the context has no graph '{name}' (graphs: {})", names.join(", "))
        })?,
        None => 0,
    };
    let graph = graphs.get(graph_index).context("the context binary holds no graph")?;
    if let (Some(perf), Some(affinity)) = (lpai.perf, lpai.affinity) {
        let what = format!("setting LPAI performance of graph {}", graph.name);
        stub.set_performance(context, graph_index as u32, perf, affinity, PRIORITY_UNCHANGED).map_err(failed(what))?;
    }
    let lines = input_list::read(&options.input_list, &expected_inputs(graph, options.use_native_input_files))?;

    let float_in = !options.use_native_input_files;
    let float_out = !options.use_native_output_files;
    let input_sizes: Vec<usize> =
        graph.inputs.iter().map(|t| if float_in { t.elements * 4 } else { t.native_bytes }).collect();
    let output_sizes: Vec<usize> =
        graph.outputs.iter().map(|t| if float_out { t.elements * 4 } else { t.native_bytes }).collect();
    let execute_flags =
        if float_in { flags::FLOAT_INPUTS } else { 0 } | if float_out { flags::FLOAT_OUTPUTS } else { 0 };
    let mut inputs = stub.transport().buffer(input_sizes.iter().sum());
    let mut outputs = stub.transport().buffer(output_sizes.iter().sum());

    let mut summary = Summary {
        transport: stub.transport().name().to_string(),
        graph: graph.name.clone(),
        arena_used: graph.arena_used as usize,
        arena_capacity: graph.arena_capacity as usize,
        lpai_memory: (graph.scratch_bytes, graph.persistent_bytes),
        ..Summary::default()
    };
    let progress = indicatif::ProgressBar::new(lines.len() as u64);
    for (result_index, line) in lines.iter().enumerate() {
        let mut offset = 0;
        for (file, size) in line.files.iter().zip(&input_sizes) {
            let bytes = std::fs::read(file).with_context(|| format!("cannot read input file {}", file.display()))?;
            inputs[offset..offset + size].copy_from_slice(&bytes);
            offset += size;
        }
        let executed = stub
            .execute(context, graph_index as u32, execute_flags, &inputs, &mut outputs)
            .map_err(failed(format!("input list line {}", line.number)))?;
        summary.execute_micros.push(graph.micros(executed.dsp_ticks));
        let directory = options.output_dir.join(format!("Result_{result_index}"));
        std::fs::create_dir_all(&directory).with_context(|| format!("cannot create {}", directory.display()))?;
        let mut offset = 0;
        for (tensor, size) in graph.outputs.iter().zip(&output_sizes) {
            output::write_whole(&directory.join(output::file_name(&tensor.name)), &outputs[offset..offset + size])?;
            offset += size;
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    drop((inputs, outputs));
    if options.profiling_level.is_some() {
        let events = stub.profile(context).map_err(failed("reading the profile".into()))?;
        summary.profile = events
            .into_iter()
            .map(|e| ProfileLine {
                event_type: e.event_type,
                unit: e.unit,
                value: e.value,
                identifier: e.identifier,
                depth: e.depth,
            })
            .collect();
    }
    stub.unload(context).map_err(failed("unloading the context".into()))?;
    Ok(summary)
}
