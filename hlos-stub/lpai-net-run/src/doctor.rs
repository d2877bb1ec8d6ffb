//! `lpai-net-run doctor`: the checks a first run on a device goes through, in order and without running a model,
//! one line each (`ok: ...`, or `FAILED: <cause>; <what to do>`, the rest then `skipped`): the FastRPC library, the
//! domain, the PD, the skel on the DSP loader's path, the version handshake, the DSP side's libraries, the backend
//! on that domain, and optionally a context binary's versions against the backend's. A check fails on what the
//! library or the skel answered (codes and fields, never a message's wording); what this side only infers (the
//! search path of a static PD's daemon, which it cannot read) is said, not failed.

use crate::metadata::{BinaryMetadata, HostSystemLibrary};
use lpai_direct::aee;
use lpai_direct::version::INTERFACE;
use lpai_direct_stub::stub::fastrpc::{self, Domain, FastRpc, FastRpcOptions};
use lpai_direct_stub::stub::first_contact::{self, BackendFacts, Configured, SkelSearch};
use lpai_direct_stub::stub::{address::SKEL_FILE_NAME, StubError};
use lpai_direct_stub::stub::{
    stub_version, BackendInfo, Configuration, DspLibrary, LibraryFailure, Named, SkelVersion, Stub,
};
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
    let search = SkelSearch::run(domain, options.pd);
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
    if !report.add(handshake(stub.skel_version(), stub.skel_warning())) {
        return report.finish();
    }
    let (loaded, created) = match libraries_and_backend(&mut stub, settings) {
        Ok(checks) => checks,
        Err(why) => {
            report.add(Outcome::Failed(why));
            return report.finish();
        }
    };
    report.add(Outcome::Ok(loaded));
    let backend = match created {
        Ok(backend) => backend,
        Err(why) => {
            report.add(Outcome::Failed(why));
            return report.finish();
        }
    };
    report.add(Outcome::Ok(backend_created(domain, &backend)));
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
    if !search.is_the_loaders() {
        let seen = match search.loaded() {
            Some(first) => format!("this process's path finds {} first", first.described()),
            None => format!("this process's path has no {SKEL_FILE_NAME}"),
        };
        return Outcome::Ok(format!("the PD opened {}; {seen}", search.skel_source()));
    }
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

/// The handshake's check: the skel's version against this stub's, and the stub's warning, if any.
fn handshake(skel: &SkelVersion, warning: Option<&str>) -> Outcome {
    let stub = stub_version();
    let warning = warning.map(|warning| format!("; warning: {warning}")).unwrap_or_default();
    match skel.interface() {
        Some(interface) if *skel != SkelVersion::Unversioned && interface == INTERFACE => {
            Outcome::Ok(format!("skel {skel}; stub {stub}{warning}"))
        }
        Some(interface) if *skel != SkelVersion::Unversioned && interface.major == INTERFACE.major => {
            let works = match interface < INTERFACE {
                true => format!("the stub refuses by name each method of a later interface than {interface}"),
                false => format!("the skel also has methods newer than this stub's interface {INTERFACE}, unused here"),
            };
            Outcome::Ok(format!("skel {skel}; stub {stub}: the run works; {works}{warning}"))
        }
        _ => Outcome::Failed(format!(
            "the skel is {skel} and the stub speaks interface {INTERFACE}; stage the skel of this build (lpai-net-run \
             stage)"
        )),
    }
}

/// What the libraries' check found (`Err`: why it failed) and, when it passed, what the backend's check found
/// (`Err`: why it failed).
type LibrariesAndBackend = Result<(String, Result<BackendInfo, String>), String>;

/// The checks of the DSP side's libraries and of the backend: configures the skel with the backend and system
/// library (which loads both and creates the backend), then asks it to describe them (`probe`). A failed configure
/// is placed by the library the skel names and its code ([`Stub::library_failure`]).
fn libraries_and_backend(stub: &mut Stub, settings: &DoctorSettings) -> LibrariesAndBackend {
    let path = |path: &PathBuf| {
        CString::new(path.as_os_str().as_bytes())
            .map_err(|_| format!("{} holds a NUL byte, which no library path can hold", path.display()))
    };
    let system_library = settings.dsp_system_library.as_ref().map(path).transpose()?.unwrap_or_default();
    let configuration = Configuration::with_libraries(path(&settings.backend)?, system_library, 0);
    match stub.configure(&configuration) {
        Ok(()) => match stub.probe() {
            Ok(backend) => Ok((libraries_found(settings, &backend), Ok(backend))),
            Err(error) => Ok((libraries_loaded(settings), Err(error.to_string()))),
        },
        Err(error) => {
            let failure = stub.library_failure(&error, settings.dsp_system_library.is_some());
            configure_failed(settings, &failure, &error)
        }
    }
}

/// The two checks after a failed configure, from where it stopped: a library that did not load, or loaded but is
/// refused, fails the libraries' check; a backend refused after loading fails the backend's; a configure refused
/// before loading, or one the skel does not place, fails the libraries' check with the skel's own words.
fn configure_failed(settings: &DoctorSettings, failure: &LibraryFailure, error: &StubError) -> LibrariesAndBackend {
    let configured = Configured {
        backend: &settings.backend,
        system_library: settings.dsp_system_library.as_deref(),
        domain: settings.fastrpc.domain,
        pd: settings.fastrpc.pd,
    };
    let said = error.to_string();
    let explained = first_contact::configure_failure(failure, &configured, &said);
    let failed = match failure {
        LibraryFailure::Unloadable(_) => {
            explained.map_or(said.clone(), |line| format!("{line} (the skel says: {said})"))
        }
        LibraryFailure::Refused(DspLibrary::System) => explained.unwrap_or(said),
        LibraryFailure::Refused(DspLibrary::Backend) => {
            let backend = settings.backend.display();
            let loaded = format!("the DSP side loads the backend {backend}; it fails after loading (below)");
            return Ok((loaded, Err(explained.unwrap_or(said))));
        }
        LibraryFailure::Neither => format!("the skel refused the configuration before loading a library: {said}"),
        LibraryFailure::Unknown(why) => format!("{said} ({why})"),
    };
    Err(failed)
}

/// The libraries' check when configure loaded them but `probe` could not describe them.
fn libraries_loaded(settings: &DoctorSettings) -> String {
    let system = match &settings.dsp_system_library {
        Some(system) => format!(" and the system library {}", system.display()),
        None => String::new(),
    };
    format!("the DSP side loads the backend {}{system} (configure succeeded)", settings.backend.display())
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

#[cfg(test)]
mod tests {
    use super::*;
    use lpai_direct::version::Version;

    fn settings(domain: Domain) -> DoctorSettings {
        DoctorSettings {
            fastrpc: FastRpcOptions { domain, ..FastRpcOptions::default() },
            backend: "libQnnLpai.so".into(),
            dsp_system_library: Some("libQnnSystem.so".into()),
            retrieve_context: None,
            system_library: None,
        }
    }

    fn skel(minor: u32) -> SkelVersion {
        let interface = Version { major: INTERFACE.major, minor };
        SkelVersion::Known { interface, hex_version: 73, build_id: "b".into() }
    }

    #[test]
    fn the_handshake_says_which_side_has_the_newer_methods() {
        let Outcome::Ok(newer) = handshake(&skel(INTERFACE.minor + 1), None) else { panic!("a newer minor fails") };
        assert!(!newer.contains("lacks") && !newer.contains("refuses"), "{newer}");
        let expected = format!("the run works; the skel also has methods newer than this stub's interface {INTERFACE}");
        assert!(newer.contains(&expected), "{newer}");
        let Outcome::Ok(older) = handshake(&skel(0), Some("an older skel may shadow")) else { panic!("older fails") };
        assert!(older.contains("the stub refuses by name each method of a later interface than 1.0"), "{older}");
        assert!(older.ends_with("; warning: an older skel may shadow"), "{older}");
        let Outcome::Ok(same) = handshake(&skel(INTERFACE.minor), None) else { panic!("the same version fails") };
        assert!(!same.contains("the run works"), "{same}");
    }

    #[test]
    fn a_failed_configure_is_attributed_by_the_library_the_skel_names() {
        let error = StubError::Call {
            method: "configure",
            place: "adsp".into(),
            code: aee::dsp(aee::EUNABLETOLOAD) as u32,
            code_name: "AEE_EUNABLETOLOAD",
            message: "the skel's words".into(),
        };
        let said = format!("(the skel says: {error})");
        let adsp = settings(Domain::Adsp);
        let failed = |failure| configure_failed(&adsp, &failure, &error).unwrap_err();
        let backend = failed(LibraryFailure::Unloadable(DspLibrary::Backend));
        assert!(backend.contains(" the backend libQnnLpai.so") && backend.ends_with(&said), "{backend}");
        let system = failed(LibraryFailure::Unloadable(DspLibrary::System));
        assert!(system.contains(" the system library libQnnSystem.so") && system.ends_with(&said), "{system}");
        let refused = failed(LibraryFailure::Refused(DspLibrary::System));
        assert!(refused.starts_with("the DSP side loads the system library libQnnSystem.so but cannot use it"));
        let before = failed(LibraryFailure::Neither);
        assert!(before.starts_with("the skel refused the configuration before loading a library: configure failed"));
        assert!(failed(LibraryFailure::Unknown("the skel does not say".into())).ends_with("(the skel does not say)"));
        let after = LibraryFailure::Refused(DspLibrary::Backend);
        let (loaded, created) = configure_failed(&adsp, &after, &error).unwrap();
        assert!(loaded.starts_with("the DSP side loads the backend libQnnLpai.so"), "{loaded}");
        assert_eq!(created, Err(error.to_string()));
        let (_, created) = configure_failed(&settings(Domain::Cdsp), &after, &error).unwrap();
        assert!(created.unwrap_err().starts_with("the backend cannot be created on the cdsp"));
    }
}
