//! Meeting the skel: open it on the transport (with the version handshake), configure it, load the context (with
//! the metadata record read by the HLOS side, unless the skel has a libQnnSystem of its own) and describe its
//! graphs; a failure is explained where the first contact with a device can be (`first_contact`).

use super::readouts::Readouts;
use crate::lpai_config::LpaiConfig;
use crate::metadata::BinaryMetadata;
use crate::net_run_config::NetRunConfig;
use crate::settings::Settings;
use crate::times::monotonic_us;
use anyhow::{anyhow, Context as _, Result};
use lpai_direct_stub::stub::{fastrpc, first_contact};
use lpai_direct_stub::stub::{flags, Configuration, GraphDescription, SkelVersion, Stub, StubError, Transport};
use lpai_direct_stub::stub::{Binary, LoadRequest, Loaded, TransportKind, TARGET_DEFAULT};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Instant;

/// What the load needs from the up-front checks.
pub struct LoadInputs<'a> {
    /// The context binary's bytes.
    pub binary: &'a [u8],
    /// The binary as messages name it.
    pub what: &'a str,
    /// What the HLOS side's libQnnSystem read of it.
    pub metadata: &'a BinaryMetadata,
    /// The config file's settings.
    pub config: &'a NetRunConfig,
}

/// An open skel with the context loaded.
pub struct Opened {
    /// The stub, open on the skel.
    pub stub: Stub,
    /// The loaded context's id.
    pub context: i32,
    /// Its graphs, in context order.
    pub graphs: Vec<GraphDescription>,
    /// The load call as the host saw it, in microseconds.
    pub load_us: u64,
    /// The profile read after each stub call that ran QNN (the load's first), when the run profiles (as the
    /// configuration sent asked).
    pub readouts: Readouts,
}

/// Why the skel could not be opened, configured or loaded (or its graphs described), and what was done until then.
pub struct OpenFailure {
    /// What went wrong, explained.
    pub error: anyhow::Error,
    /// The stub-to-skel calls made, the close that ends the stub counted.
    pub skel_calls: u32,
    /// The load call as the host saw it, in microseconds, when the context was loaded (else 0).
    pub load_us: u64,
}

/// A path as the skel takes it.
fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes()).with_context(|| format!("{} contains a NUL byte", path.display()))
}

/// The context binary's path for a skel that reads it itself: absolute, so it does not depend on the skel's
/// current directory.
fn path_for_skel(binary: &Path) -> Result<CString> {
    let absolute =
        std::fs::canonicalize(binary).with_context(|| format!("context binary {} does not exist", binary.display()))?;
    c_path(&absolute)
}

/// The profiling level asked for, else the config file's, else off.
fn qnn_profiling_level(settings: &Settings, lpai: &LpaiConfig) -> u32 {
    settings.profiling_level.unwrap_or(lpai.profiling_level.unwrap_or(0))
}

/// The `load` flags: PERSISTENT_BINARY (`--persistent_binary` or the config file's `is_persistent_binary`), island
/// mode (the conf's `lpai_direct.island`) and the context priority.
fn load_flags(settings: &Settings, config: &NetRunConfig) -> u32 {
    let persistent = settings.persistent_binary || config.persistent_binary;
    let priority = config.context_priority.and_then(lpai_direct::wire::load_priority).unwrap_or(0);
    (if persistent { flags::PERSISTENT_BINARY } else { 0 })
        | (if config.lpai.island { lpai_direct::wire::LOAD_ISLAND } else { 0 })
        | lpai_direct::wire::load_placement(config.lpai.memory)
        | priority
}

/// Opens the skel on `transport` (of `kind`), configures it, loads the context and describes its graphs.
pub fn open_and_load(
    transport: Box<dyn Transport>,
    kind: TransportKind,
    settings: &Settings,
    load: &LoadInputs<'_>,
) -> std::result::Result<Opened, OpenFailure> {
    let uri = fastrpc::skel_uri(settings.domain, settings.session);
    let opened = Stub::open(transport, &uri);
    let mut stub = opened.map_err(|error| OpenFailure {
        error: anyhow!("opening the skel: {error}"),
        skel_calls: 1,
        load_us: 0,
    })?;
    if let SkelVersion::Unversioned = stub.skel_version() {
        eprintln!(
            "lpai-net-run: warning: the skel {} is from before the version handshake (it does not answer `version`): \
             it runs as interface 1.0; stage the skel of this build",
            stub.transport().skel_source()
        );
    }
    if let Some(warning) = stub.skel_warning() {
        eprintln!("lpai-net-run: warning: {warning}");
    }
    let fail = |stub: &mut Stub, error: anyhow::Error| OpenFailure { error, skel_calls: stub.calls() + 1, load_us: 0 };
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
        let explained = match kind {
            TransportKind::Fastrpc => configure_failure(&mut stub, settings, &error),
            TransportKind::Local | TransportKind::Qemu => None,
        };
        let error = anyhow!("configuring the skel: {}", explained.unwrap_or_else(|| error.to_string()));
        return Err(fail(&mut stub, error));
    }
    register_op_packages(&mut stub, settings).map_err(|error| fail(&mut stub, error))?;
    let record_bytes = settings.dsp_system_library.is_none().then_some(load.metadata.record.as_slice());
    let load_flags = load_flags(settings, load.config);
    let load_started = Instant::now();
    let load_started_us = monotonic_us();
    // A skel that reads the binary itself gets its absolute path; else it gets the bytes read here.
    let path = settings.dsp_reads_context.then(|| path_for_skel(&settings.retrieve_context));
    let path = path.transpose().map_err(|error| fail(&mut stub, error))?;
    let binary = match &path {
        Some(path) => Binary::File(path),
        None => Binary::Bytes(load.binary),
    };
    let request = LoadRequest { binary, record: record_bytes, flags: load_flags };
    let Loaded { context, graph_count } = match stub.load(&request) {
        Ok(loaded) => loaded,
        Err(error) => {
            let error = load_failure(&mut stub, load, load_flags, error);
            return Err(fail(&mut stub, error));
        }
    };
    let load_us = load_started.elapsed().as_micros() as u64;
    let mut readouts = Readouts::new(configuration.profiling_level != 0);
    readouts.read(&mut stub, context, "the load", (load_started_us, monotonic_us()));
    let mut graphs = Vec::new();
    for index in 0..graph_count {
        match stub.describe(context, index) {
            Ok(graph) => graphs.push(graph),
            Err(error) => {
                let error = anyhow!("describing graph {index}: {error}");
                return Err(OpenFailure { load_us, ..fail(&mut stub, error) });
            }
        }
    }
    Ok(Opened { stub, context, graphs, load_us, readouts })
}

/// Registers each `--op_packages` package once, in order, after configure and before the load; the first refusal
/// stops the run naming the package (the skel's message says QNN's error).
fn register_op_packages(stub: &mut Stub, settings: &Settings) -> Result<()> {
    for package in &settings.op_packages {
        let path = c_path(&package.path)?;
        let provider = CString::new(package.interface_provider.as_str())
            .with_context(|| format!("--op_packages: {} contains a NUL byte", package.interface_provider))?;
        let target = package.target.as_deref().map(CString::new).transpose()?;
        stub.register_op_package(&path, &provider, target.as_deref())
            .map_err(|error| anyhow!("--op_packages: {error}"))?;
    }
    Ok(())
}

/// A failed configure on a device, explained where the skel says it stopped (`first_contact::configure_failure`);
/// `None` when its own message says it all.
fn configure_failure(stub: &mut Stub, settings: &Settings, error: &StubError) -> Option<String> {
    let failure = stub.library_failure(error, settings.dsp_system_library.is_some());
    let configured = first_contact::Configured {
        backend: &settings.backend,
        system_library: settings.dsp_system_library.as_deref(),
        domain: settings.domain,
        pd: settings.pd,
    };
    first_contact::configure_failure(&failure, &configured, &error.to_string())
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

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
