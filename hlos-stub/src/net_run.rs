//! The net-run job in process: load the backend and the context, check the whole input list, then run every
//! line and write its outputs. The same job runs on the DSP through the stub once the transports land.

use crate::cli::{LogLevel, Options, ProfilingLevel};
use crate::input_list::{self, ExpectedInput};
use crate::output;
use anyhow::{anyhow, bail, Context as _, Result};
use lpai_direct::qnn::ProfileLevel;
use lpai_direct_skel::platform::{self, Level};
use lpai_direct_skel::runtime::{Arena, Backend, BackendOptions, BinarySource, Context, ContextOptions, Graph};
use lpai_direct_skel::runtime::{RuntimeError, SystemLibrary, TensorInfo};
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
    /// Provider that ran the graph.
    pub provider: String,
    /// Backend id of that provider.
    pub backend_id: u32,
    /// The graph that ran.
    pub graph: String,
    /// Execute time of each inference, in microseconds of the platform clock.
    pub execute_micros: Vec<u64>,
    /// Arena bytes in use at the end (the high-water mark).
    pub arena_used: usize,
    /// The arena's size.
    pub arena_capacity: usize,
    /// Profile events in the order QNN lists them.
    pub profile: Vec<ProfileLine>,
}

fn runtime_error(error: RuntimeError) -> anyhow::Error {
    anyhow!("{error}")
}

fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes()).with_context(|| format!("{} contains a NUL byte", path.display()))
}

fn system_library_path(options: &Options) -> PathBuf {
    if let Some(path) = &options.system_library {
        return path.clone();
    }
    let beside = options.backend.with_file_name("libQnnSystem.so");
    if beside.exists() {
        beside
    } else {
        PathBuf::from("libQnnSystem.so")
    }
}

fn platform_level(level: LogLevel) -> Level {
    match level {
        LogLevel::Error => Level::Error,
        LogLevel::Warn => Level::Warn,
        LogLevel::Info | LogLevel::Verbose => Level::Info,
        LogLevel::Debug => Level::Debug,
    }
}

/// Loads the backend, naming the file when it is missing or is not a QNN backend.
fn load_backend(path: &Path) -> Result<Backend> {
    if !path.is_file() {
        bail!("backend library {} does not exist", path.display());
    }
    Backend::load(&c_path(path)?, &BackendOptions::default()).map_err(|error| match error {
        RuntimeError::MissingSymbol(_) => {
            anyhow!("backend library {} is not a QNN backend: {error}", path.display())
        }
        RuntimeError::Platform { .. } => {
            anyhow!("backend library {} cannot be loaded (not a shared library for this CPU?): {error}", path.display())
        }
        other => anyhow!("backend library {}: {other}", path.display()),
    })
}

fn expected_inputs(graph: &Graph<'_>, native: bool) -> Result<Vec<ExpectedInput>> {
    (0..graph.input_count())
        .map(|index| {
            let info = graph.input(index).context("graph input without a usable description")?;
            let native_bytes = (info.bytes, format!("{} {} elements", info.elements, data_type_name(&info)));
            let float_bytes = (info.elements * 4, format!("{} float32 elements", info.elements));
            let (expected, other, hint) = if native {
                (native_bytes, float_bytes, "it looks like float32 data: drop --use_native_input_files")
            } else {
                (float_bytes, native_bytes, "it looks like native data: pass --use_native_input_files")
            };
            let other_kind = (other.0 != expected.0).then(|| (other.0, hint.to_string()));
            Ok(ExpectedInput { name: info.name.to_string(), bytes: expected.0, what: expected.1, other_kind })
        })
        .collect()
}

fn data_type_name(info: &TensorInfo<'_>) -> &'static str {
    info.data_type.c_name().unwrap_or("unknown").trim_start_matches("QNN_DATATYPE_")
}

/// Runs the job the options describe.
pub fn run(options: &Options) -> Result<Summary> {
    platform::set_log_level(platform_level(options.log_level));
    let binary_size = std::fs::metadata(&options.retrieve_context)
        .with_context(|| format!("context binary {} cannot be read", options.retrieve_context.display()))?
        .len();
    let backend = load_backend(&options.backend)?;
    let system_path = system_library_path(options);
    let system = SystemLibrary::load(&c_path(&system_path)?)
        .map_err(|error| anyhow!("system library {}: {error} (pass --system_library)", system_path.display()))?;

    let capacity = options.arena_bytes.unwrap_or(binary_size as usize + (256 << 20));
    let mut memory = vec![0u8; capacity];
    let arena = Arena::new(&mut memory);
    let context_options = ContextOptions {
        persistent_binary: options.persistent_binary,
        profiling: options.profiling_level.map(|level| match level {
            ProfilingLevel::Basic => ProfileLevel::BASIC,
            ProfilingLevel::Detailed => ProfileLevel::DETAILED,
            ProfilingLevel::Backend => ProfileLevel::BACKEND,
        }),
        ..ContextOptions::default()
    };
    let binary_path = c_path(&options.retrieve_context)?;
    let mut context = Context::load(&backend, &system, &arena, BinarySource::File(&binary_path), &context_options)
        .map_err(|error| anyhow!("context binary {}: {error}", options.retrieve_context.display()))?;

    let graph_index = match &options.graph_name {
        Some(name) => context.graph_index(name).with_context(|| {
            let names: Vec<String> =
                (0..context.graph_count()).filter_map(|i| context.graph(i)).map(|g| g.name().to_string()).collect();
            format!("the context has no graph '{name}' (graphs: {})", names.join(", "))
        })?,
        None => 0,
    };
    let graph = context.graph_mut(graph_index).context("the context binary holds no graph")?;
    let expected = expected_inputs(graph, options.use_native_input_files)?;
    let lines = input_list::read(&options.input_list, &expected)?;

    let mut summary = Summary {
        provider: backend.info().name.to_string(),
        backend_id: backend.info().backend_id,
        graph: graph.name().to_string(),
        ..Summary::default()
    };
    let progress = indicatif::ProgressBar::new(lines.len() as u64);
    for (result_index, line) in lines.iter().enumerate() {
        for (index, file) in line.files.iter().enumerate() {
            let bytes = std::fs::read(file).with_context(|| format!("cannot read input file {}", file.display()))?;
            let written = if options.use_native_input_files {
                graph.write_input(index, &bytes)
            } else {
                graph.write_input_float(index, &bytes)
            };
            written.map_err(|error| anyhow!("input list line {}: {error}", line.number))?;
        }
        let execution = graph.execute().map_err(|error| anyhow!("input list line {}: {error}", line.number))?;
        summary.execute_micros.push(execution.micros());
        write_outputs(
            graph,
            &options.output_dir.join(format!("Result_{result_index}")),
            options.use_native_output_files,
        )?;
        progress.inc(1);
    }
    progress.finish_and_clear();
    context
        .profile_events(|event| {
            summary.profile.push(ProfileLine {
                event_type: event.event_type,
                unit: event.unit,
                value: event.value,
                identifier: event.identifier.to_string(),
                depth: event.depth,
            })
        })
        .map_err(runtime_error)?;
    summary.arena_used = arena.used();
    summary.arena_capacity = arena.capacity();
    Ok(summary)
}

fn write_outputs(graph: &Graph<'_>, directory: &Path, native: bool) -> Result<()> {
    std::fs::create_dir_all(directory).with_context(|| format!("cannot create {}", directory.display()))?;
    for index in 0..graph.output_count() {
        let info = graph.output(index).context("graph output without a usable description")?;
        let path = directory.join(output::file_name(info.name));
        if native {
            output::write_whole(&path, graph.output_bytes(index).context("output buffer missing")?)?;
        } else {
            let mut floats = vec![0u8; info.elements * 4];
            graph.read_output_float(index, &mut floats).map_err(runtime_error)?;
            output::write_whole(&path, &floats)?;
        }
    }
    Ok(())
}
