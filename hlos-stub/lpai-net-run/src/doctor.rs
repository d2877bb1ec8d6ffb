//! `lpai-net-run doctor`: the checks a first run on a device goes through, in order and without running a model,
//! one line each (`ok: ...`, or `FAILED: <cause>; <what to do>`, the rest then `skipped`): the FastRPC library, the
//! domain, the PD, the skel on the DSP loader's path, the version handshake, the DSP side's libraries, the backend
//! on that domain, and optionally a context binary's versions against the backend's.

use crate::metadata::{BinaryMetadata, HostSystemLibrary};
use lpai_direct::aee;
use lpai_direct::version::INTERFACE;
use lpai_direct_stub::stub::fastrpc::{self, Domain, FastRpc, FastRpcOptions};
use lpai_direct_stub::stub::first_contact::{self, BackendFacts, DspLibrary, SkelSearch};
use lpai_direct_stub::stub::{stub_version, BackendInfo, Configuration, Named, SkelVersion, Stub, StubError};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// What `doctor` checks.
#[derive(Clone, Debug)]
pub struct DoctorSettings {
    /// How to reach the DSP (domain, session, PD, unsigned PD, FastRPC library).
    pub fastrpc: FastRpcOptions,
    /// The backend the skel loads (libQnnLpai.so).
    pub backend: PathBuf,
    /// The DSP side's libQnnSystem (`None`: none, as a run without `--dsp_system_library`).
    pub dsp_system_library: Option<PathBuf>,
    /// A context binary to check against the backend.
    pub retrieve_context: Option<PathBuf>,
    /// The HLOS side's libQnnSystem that reads the binary's metadata (`None`: beside the backend).
    pub system_library: Option<PathBuf>,
}

/// One check's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It passed: what was found.
    Ok(String),
    /// It failed: the cause and what to do.
    Failed(String),
    /// Not run: a check before it failed, or it was not asked for.
    Skipped(String),
}

/// A check and how it went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// What is checked.
    pub name: &'static str,
    /// How it went.
    pub outcome: Outcome,
}

impl std::fmt::Display for Check {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.outcome {
            Outcome::Ok(found) => write!(formatter, "{}: ok: {found}", self.name),
            Outcome::Failed(why) => write!(formatter, "{}: FAILED: {why}", self.name),
            Outcome::Skipped(why) => write!(formatter, "{}: skipped: {why}", self.name),
        }
    }
}

/// The checks, in order.
pub const CHECKS: [&str; 8] = [
    "FastRPC library",
    "domain",
    "PD",
    "skel on the DSP loader's path",
    "version handshake",
    "DSP-side libraries",
    "backend on the domain",
    "context binary",
];

/// Collects the checks as they are made; after a failure the rest are skipped.
struct Report {
    checks: Vec<Check>,
}

impl Report {
    fn passing(&self) -> bool {
        self.checks.iter().all(|check| !matches!(check.outcome, Outcome::Failed(_)))
    }

    fn add(&mut self, outcome: Outcome) -> bool {
        let name = CHECKS[self.checks.len()];
        self.checks.push(Check { name, outcome });
        self.passing()
    }

    fn finish(mut self) -> Vec<Check> {
        while self.checks.len() < CHECKS.len() {
            let reason = "needs the checks above".to_string();
            self.checks.push(Check { name: CHECKS[self.checks.len()], outcome: Outcome::Skipped(reason) });
        }
        self.checks
    }
}

/// Runs the checks; every one is in the answer, in [`CHECKS`] order.
pub fn run(settings: &DoctorSettings) -> Vec<Check> {
    // Read first, before FastRPC is loaded and opened (an open starts its threads): the reader forks.
    let binary = read_binary(settings);
    let mut report = Report { checks: Vec::new() };
    let options = &settings.fastrpc;
    let domain = options.domain;
    let transport = match FastRpc::load(options.clone()) {
        Ok(transport) => transport,
        Err(unavailable) => {
            report.add(Outcome::Failed(format!(
                "{unavailable}; install the platform's FastRPC library (it comes with the DSP images), or name it \
                 with --fastrpc_library FILE"
            )));
            return report.finish();
        }
    };
    report.add(Outcome::Ok(format!("{} loads and exports FastRPC's handle API", transport.library_name())));
    let answered = match transport.domain_supported() {
        Ok(true) => Outcome::Ok(format!("this device has the {} (DSPRPC_GET_DSP_INFO)", domain.uri_name())),
        Ok(false) => Outcome::Failed(format!(
            "this device has no {}; LPAI runs on the aDSP: use --domain adsp",
            domain.uri_name()
        )),
        Err(code) => Outcome::Ok(format!(
            "the library cannot say whether the {} exists ({}), so the open below tells",
            domain.uri_name(),
            aee::name(code as u32)
        )),
    };
    if !report.add(answered) {
        return report.finish();
    }
    let search = SkelSearch::run(domain);
    let uri = fastrpc::skel_uri(domain, options.session);
    let opened = Stub::open(Box::new(transport), &uri);
    let (pd, skel) = match &opened {
        Err(StubError::Call { code, message, .. }) if pd_failure(*code, options) => {
            (Outcome::Failed(message.clone()), Outcome::Skipped("needs the PD".into()))
        }
        Err(StubError::Call { message, .. }) => (pd_opened(options), Outcome::Failed(message.clone())),
        _ => (pd_opened(options), skel_found(&search)),
    };
    if !report.add(pd) || !report.add(skel) {
        return report.finish();
    }
    let mut stub = match opened {
        Ok(stub) => stub,
        Err(error) => {
            report.add(Outcome::Failed(error.to_string()));
            return report.finish();
        }
    };
    if !report.add(handshake(stub.skel_version())) {
        return report.finish();
    }
    let libraries = configure(&mut stub, settings).and_then(|()| stub.probe().map_err(|error| error.to_string()));
    let backend = match libraries {
        Ok(backend) => {
            report.add(Outcome::Ok(libraries_found(settings, &backend)));
            report.add(Outcome::Ok(backend_created(domain, &backend)));
            backend
        }
        Err(why) => {
            report.add(why_libraries(settings, &why));
            if report.passing() {
                let explained = match domain {
                    Domain::Adsp => why,
                    _ => first_contact::wrong_domain(domain, &why),
                };
                report.add(Outcome::Failed(explained));
            }
            return report.finish();
        }
    };
    report.add(binary_check(binary, &backend));
    report.finish()
}

/// Whether an open that failed with `code` failed at the PD (the driver, the session mode, a static PD), not at the
/// skel.
fn pd_failure(code: u32, options: &FastRpcOptions) -> bool {
    match code {
        aee::ECONNREFUSED | aee::EALREADYLOADED => true,
        aee::EBADPERMS | aee::ERPC => options.pd != fastrpc::Pd::User,
        _ => false,
    }
}

fn pd_opened(options: &FastRpcOptions) -> Outcome {
    let signed = if options.unsigned_pd { "unsigned" } else { "signed" };
    Outcome::Ok(format!("the {} PD on the {} opens ({signed})", options.pd.name(), options.domain.uri_name()))
}

fn skel_found(search: &SkelSearch) -> Outcome {
    let Some(loaded) = search.loaded() else {
        return Outcome::Failed(search.described());
    };
    let others: Vec<String> = search.found.iter().skip(1).map(|file| file.described()).collect();
    let others = match others.is_empty() {
        true => String::new(),
        false => format!("; later on the path, not loaded: {}", others.join("; ")),
    };
    Outcome::Ok(format!("{}{others}", loaded.described()))
}

fn handshake(skel: &SkelVersion) -> Outcome {
    let stub = stub_version();
    match skel.interface() {
        Some(interface) if *skel != SkelVersion::Unversioned && interface == INTERFACE => {
            Outcome::Ok(format!("skel {skel}; stub {stub}"))
        }
        Some(interface) if *skel != SkelVersion::Unversioned && interface.major == INTERFACE.major => {
            Outcome::Ok(format!(
                "skel {skel}; stub {stub}: the run works, but the skel lacks the methods after interface {interface}"
            ))
        }
        _ => Outcome::Failed(format!(
            "the skel is {skel} and the stub speaks interface {INTERFACE}; stage the skel of this build (lpai-net-run \
             stage)"
        )),
    }
}

/// Configures the skel with the backend and system library (which loads both and creates the backend).
fn configure(stub: &mut Stub, settings: &DoctorSettings) -> Result<(), String> {
    let path = |path: &PathBuf| {
        CString::new(path.as_os_str().as_bytes()).map_err(|_| format!("{} holds a NUL", path.display()))
    };
    let system_library = match &settings.dsp_system_library {
        Some(system) => path(system)?,
        None => CString::default(),
    };
    let configuration = Configuration::with_libraries(path(&settings.backend)?, system_library, 0);
    stub.configure(&configuration).map_err(|error| match error.code() {
        Some(code) if aee::plain(code) == aee::EUNABLETOLOAD => format!("{UNLOADABLE}{error}"),
        _ => error.to_string(),
    })
}

/// Marks a configure failure that was a library the DSP side could not load.
const UNLOADABLE: &str = "unloadable: ";

fn why_libraries(settings: &DoctorSettings, why: &str) -> Outcome {
    let Some(skel_said) = why.strip_prefix(UNLOADABLE) else {
        return Outcome::Ok("the DSP side loads the backend (it failed after loading)".into());
    };
    let (which, name) = match (skel_said.contains("system library"), &settings.dsp_system_library) {
        (true, Some(system)) => (DspLibrary::System, system),
        _ => (DspLibrary::Backend, &settings.backend),
    };
    let search = lpai_direct_stub::stub::dsp_search::SearchPath::from_environment();
    let line = first_contact::library_missing(which, &name.to_string_lossy(), settings.fastrpc.domain, &search);
    Outcome::Failed(format!("{line} (the skel says: {skel_said})"))
}

fn libraries_found(settings: &DoctorSettings, backend: &BackendInfo) -> String {
    let system = match (&settings.dsp_system_library, backend.system_api) {
        (Some(system), Some(api)) => format!("; the system library {} (system API {})", system.display(), dotted(api)),
        _ => "; no DSP-side system library (each load sends the metadata record read here)".to_string(),
    };
    format!("the backend {}{system}", settings.backend.display())
}

fn backend_created(domain: Domain, backend: &BackendInfo) -> String {
    let build = if backend.build_id.is_empty() { String::new() } else { format!(", build {}", backend.build_id) };
    format!(
        "{} (backend id {}) creates on the {}: core API {}, backend API {}{build}",
        backend.provider,
        backend.backend_id,
        domain.uri_name(),
        dotted(backend.core_api),
        dotted(backend.backend_api)
    )
}

fn dotted(version: lpai_direct::qnn::Version) -> String {
    format!("{}.{}.{}", version.major, version.minor, version.patch)
}

/// The binary `--retrieve_context` names, as the HLOS side's libQnnSystem reads it: its name in messages and what
/// was read, or why nothing was; `None` without `--retrieve_context`.
type ReadBinary = Option<(String, Result<BinaryMetadata, String>)>;

/// Reads the binary for [`binary_check`]. It must run before any thread starts (see [`HostSystemLibrary::read`]).
fn read_binary(settings: &DoctorSettings) -> ReadBinary {
    let binary = settings.retrieve_context.as_ref()?;
    let system = settings.system_library.clone().unwrap_or_else(|| settings.backend.with_file_name("libQnnSystem.so"));
    let what = format!("context binary {}", binary.display());
    let read = std::fs::read(binary).map_err(|error| format!("cannot read {what}: {error}")).and_then(|bytes| {
        let library = HostSystemLibrary::load(&system).map_err(|error| format!("{error:#}"))?;
        // SAFETY: `run` reads first, before FastRPC's library is loaded or opened: doctor has started no thread; no
        // code of this crate or of the stub calls libQnnSystem on another thread, and the C library's fork handlers
        // free its allocator and stdio locks in the child.
        unsafe { library.read(&bytes, &what) }.map_err(|error| format!("{error:#}"))
    });
    Some((what, read))
}

/// The binary's versions (read by the HLOS side's libQnnSystem) against the backend's.
fn binary_check(binary: ReadBinary, backend: &BackendInfo) -> Outcome {
    let Some((what, read)) = binary else {
        return Outcome::Skipped("no --retrieve_context given".into());
    };
    let facts = match read {
        Ok(metadata) => metadata.facts,
        Err(why) => return Outcome::Failed(format!("{why}; check the file, and --system_library (the HLOS side's)")),
    };
    let made_for = (facts.core_api_version, facts.backend_api_version);
    if first_contact::binary_accepted(made_for, (backend.core_api, backend.backend_api)) {
        return Outcome::Ok(format!(
            "{what}: made for backend API {} (core API {}), which the backend takes",
            dotted(made_for.1),
            dotted(made_for.0)
        ));
    }
    let facts_of_backend = BackendFacts {
        provider: &backend.provider,
        build_id: &backend.build_id,
        core_api: backend.core_api,
        backend_api: backend.backend_api,
    };
    Outcome::Failed(first_contact::binary_version_refused(
        &what,
        made_for,
        facts.build_id.as_deref(),
        &facts_of_backend,
    ))
}
