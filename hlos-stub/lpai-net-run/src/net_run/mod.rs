//! The net-run job through the stub, in three steps: prepare (the up-front checks: the files and the config, the
//! binary's metadata read here by the HLOS side's libQnnSystem, then the transport), execute (open the skel, load
//! the context, check every input list against its graph, run every line and write its outputs) and record what
//! the run did (`lpai_net_run.json`, and a profiled run's trace). Every transport runs this same code.

mod direct;
mod inferences;
mod lists;
mod open;
mod plan;
mod readouts;
mod traditional;
pub mod transport;
mod unfinished;

pub use crate::run_record::RunRecord;
pub use crate::settings::Settings;
pub use open::PERSISTENT_BINARY_REFUSED;
pub use transport::{transport, transport_trying, ChosenTransport};

use crate::file_kinds::{self, NativeInputName};
use crate::metadata::{BinaryMetadata, HostSystemLibrary};
use crate::net_run_config::{self, NetRunConfig};
use crate::run_record::{self, Mode};
use crate::trace;
use crate::{profile, profile_files, profile_log};
use anyhow::{anyhow, bail, Context as _, Result};
use inferences::{failed, run_lists};
use lists::Lists;
use lpai_direct_stub::stub::GraphDescription;
use open::{LoadInputs, Opened};
use readouts::Held;
use std::path::PathBuf;

/// What the up-front checks found: everything the run needs before it meets the skel.
struct Prepared {
    checked: Checked,
    /// The HLOS side's libQnnSystem that read the metadata.
    system_library: HostSystemLibrary,
    transport: ChosenTransport,
}

/// What the up-front checks read.
struct Checked {
    config: NetRunConfig,
    native_inputs: Vec<NativeInputName>,
    /// The context binary's bytes.
    binary: Vec<u8>,
    /// The binary as messages name it.
    what: String,
    metadata: BinaryMetadata,
}

/// How running the lists went, for the record.
struct Ran {
    /// The run's outcome, its last step (closing the skel) included.
    outcome: Result<()>,
    /// The profile read after each stub call that ran QNN, when the run profiled (a window of a long run's).
    readouts: Held,
    /// Whether the run profiled.
    profiling: bool,
}

/// Runs the job the settings describe and answers its record, in three steps: the up-front checks (`prepare`), the
/// run on the skel (`execute`: open, load, check the input lists against the graphs, run them, close) and the record
/// (`record_run`). A run that fails where it meets the DSP side (choosing the transport, the skel's open, its
/// configure or load) or during the inferences writes its record with the error too.
pub fn run(settings: &Settings) -> Result<RunRecord> {
    let mode = Mode::of(settings.direct_mode);
    // The HLOS side's libQnnSystem stays loaded to the end of the run, as it was loaded first; a profiled run
    // writes its QNN profile log through it.
    let Prepared { checked, system_library, transport } = prepare(settings, mode)?;
    let mut record = RunRecord::new(mode, transport.kind);
    let ran = execute(settings, &checked, transport, &mut record)?;
    record_run(settings, record, ran, &checked.config, &system_library)
}

/// The up-front checks: the binary is there, the native input names and the config file read, the transport
/// prepared (a backend it opens here must exist), the binary's metadata read by the HLOS side's libQnnSystem, and
/// only then the transport started. A transport that cannot be prepared or started writes the run's record.
fn prepare(settings: &Settings, mode: Mode) -> Result<Prepared> {
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
    let unchosen = |error| recorded(settings, &mut RunRecord::new(mode, transport::attempted(settings)), error);
    let ready = transport::prepare(settings).map_err(unchosen)?;
    if let Some(note) = &ready.note {
        eprintln!("lpai-net-run: note: {note}");
    }
    transport::check_backend(settings, ready.kind)?;
    let ((binary, what), system_library, metadata) = read_binary(settings)?;
    // Started only now: the qemu transport starts a thread, and the read above forks.
    let chosen = ready.start().map_err(unchosen)?;
    let checked = Checked { config, native_inputs, binary, what, metadata };
    Ok(Prepared { checked, system_library, transport: chosen })
}

/// Opens the skel on the transport and loads the context (a failure writes the record), checks every input list
/// against its graph, runs the lists and closes the skel; answers how that went, for [`record_run`].
fn execute(settings: &Settings, checked: &Checked, transport: ChosenTransport, record: &mut RunRecord) -> Result<Ran> {
    let load = LoadInputs {
        binary: &checked.binary,
        what: &checked.what,
        metadata: &checked.metadata,
        config: &checked.config,
    };
    let mut opened = match open::open_and_load(transport.transport, transport.kind, settings, &load) {
        Ok(opened) => opened,
        Err(failure) => {
            (record.skel_calls, record.times.load_us) = (failure.skel_calls, failure.load_us);
            return Err(recorded(settings, record, failure.error));
        }
    };
    record.times.load_us = opened.load_us;
    // What the lists are checked against and what runs come from the binary: a mismatch or a refusal names it
    // (a flipped shape in a corrupt binary reads as inputs of the wrong size).
    let lists = lists::check(settings, &opened.graphs, &checked.config, &checked.native_inputs)
        .with_context(|| checked.what.clone())?;
    describe(record, &mut opened, &lists, checked.config.lpai.memory);
    let ran = run_lists(&mut opened, &lists, settings, &checked.config, record).with_context(|| checked.what.clone());
    let Opened { stub, readouts, .. } = opened;
    record.inferences = record.times.dsp_execute_us.len();
    // The close that ends the run counts too.
    record.skel_calls = stub.calls() + 1;
    let closed = stub.close().map_err(failed("closing the skel".into()));
    Ok(Ran { outcome: ran.and(closed), profiling: readouts.profiling, readouts: readouts.into_held() })
}

/// What the closing lines print of the graphs that run: where the skel runs, their names, and the first one's
/// memory (its arena high-water mark is the record's too).
fn describe(
    record: &mut RunRecord,
    opened: &mut Opened,
    lists: &Lists,
    placement: lpai_direct::qnn::lpai::MemoryPlacement,
) {
    record.skel_place = opened.stub.transport().place();
    let running: Vec<&GraphDescription> = lists.graphs.iter().map(|list| &opened.graphs[list.graph_index]).collect();
    let names: Vec<&str> = running.iter().map(|graph| graph.name.as_str()).collect();
    let first = running[0];
    record.graph_names = names.join(", ");
    (record.arena_high_water_bytes, record.arena_capacity_bytes) =
        (first.arena_used as usize, first.arena_capacity as usize);
    record.lpai_memory = crate::run_record::LpaiMemoryRecord {
        scratch_bytes: first.scratch_bytes,
        persistent_bytes: first.persistent_bytes,
        ..crate::run_record::LpaiMemoryRecord::placed(placement)
    };
}

/// Completes the record of a run that passed its checks (a failed one too, with what it did and why it stopped: its
/// error, and the profile when it profiled) and writes it, with a profiled run's trace, QNN profile log and CSV
/// (the log through `system_library`; neither fails the run); answers the record, or the run's error (with the
/// record's own failure when it could not be written either).
fn record_run(
    settings: &Settings,
    mut record: RunRecord,
    ran: Ran,
    config: &NetRunConfig,
    system_library: &HostSystemLibrary,
) -> Result<RunRecord> {
    record.error = ran.outcome.as_ref().err().map(|error| format!("{error:#}"));
    if ran.profiling {
        // The record keeps the last call's events (the last inference's, or the load's when none ran), as before.
        let Held { list, left_out } = &ran.readouts;
        let last = list.last().map_or(&[][..], |readout| readout.events.as_slice());
        record.profile = Some(profile::of(&record.times, config.lpai.perf.map(|perf| perf.fps), last));
        if *left_out > 0 {
            eprintln!(
                "lpai-net-run: info: the QNN profile files hold {} calls' events, the first and the latest: {left_out} \
                 calls between were left out to bound the run's memory",
                list.len()
            );
        }
        let context = profile_log::Context { graph_name: &record.graph_names };
        record.qnn_profile_files = profile_files::write(&settings.output_dir, system_library, list, &context);
    }
    let written = run_record::write(&settings.output_dir, &record);
    let traced = trace::write_if_profiled(&settings.output_dir, &record);
    if let (Err(error), Err(unwritten)) = (&ran.outcome, &written) {
        // A full disk or an unwritable output directory stops the run and its record alike: say both.
        bail!("{error:#}; the run's record could not be written either: {unwritten:#}");
    }
    ran.outcome?;
    written?;
    traced?;
    Ok(record)
}

/// The HLOS side's libQnnSystem: `--system_library`, else libQnnSystem.so beside the backend (a bare name when the
/// backend is one).
fn system_library_path(settings: &Settings) -> PathBuf {
    settings.system_library.clone().unwrap_or_else(|| settings.backend.with_file_name("libQnnSystem.so"))
}

/// Reads the binary (its bytes, and the binary as messages name it), and checks it by libQnnSystem in a process of
/// its own, before anything reaches the skel: a binary that crashes the vendor reader is reported as corrupt, and
/// the skel gets the record (with the binary's hash) unless it reads the metadata itself.
fn read_binary(settings: &Settings) -> Result<((Vec<u8>, String), HostSystemLibrary, BinaryMetadata)> {
    let binary_path = &settings.retrieve_context;
    let what = format!("context binary {}", binary_path.display());
    let binary = std::fs::read(binary_path).with_context(|| format!("cannot read {}", binary_path.display()))?;
    let library = HostSystemLibrary::load(&system_library_path(settings)).map_err(|error| {
        let default = match settings.system_library {
            Some(_) => String::new(),
            None => format!(", by default the one beside --backend {}", settings.backend.display()),
        };
        anyhow!(
            "{error:#} (--system_library names the HLOS side's libQnnSystem{default}, which reads and checks the \
             binary's metadata before the skel sees it)"
        )
    })?;
    // SAFETY: the run has started no thread: its transport is prepared, not started (see `transport`); no code of
    // this crate or of the stub calls libQnnSystem on another thread, and the C library's fork handlers free its
    // allocator and stdio locks in the child.
    let metadata = unsafe { library.read(&binary, &what) }?;
    Ok(((binary, what), library, metadata))
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
