//! First contact with a device: what each failure of the FastRPC library, the DSP loader or the skel usually
//! means there and what to do about it, one line each, worked out from the codes and fields the library and the
//! skel answer and from what this side can see (the DSP loader's search path and the skel files on it, the run's
//! options), never from the wording of a message. This process's search path is the loader's only for the user PD:
//! a static PD loads through its own daemon, whose path this process cannot read, and the lines say so. The codes
//! are the ones quic/fastrpc answers (see "When the device says no" in docs/src/on-a-device.md).

use super::address::{Domain, FastRpcOptions, Pd, SKEL_FILE_NAME};
use super::dsp_search::{Found, SearchPath};
use super::library_failure::{DspLibrary, LibraryFailure};
use super::library_version;
use super::names::Named;
use lpai_direct::aee;
use lpai_direct::qnn::Version as QnnVersion;
use lpai_direct::version::{Record, Version, INTERFACE};
use std::borrow::Cow;
use std::path::Path;

/// A skel file the DSP loader's search finds, and the version its file carries.
#[derive(Clone, Debug)]
pub struct SkelFile {
    /// Where it is and through which directory of the search.
    pub found: Found,
    /// Its version record, or why it has none.
    pub version: Result<Record, String>,
}

impl SkelFile {
    /// `FILE (interface 1.1, from the ADSP_LIBRARY_PATH directory DIR)`.
    pub fn described(&self) -> String {
        let version = match &self.version {
            Ok(record) => format!("interface {}", record.interface),
            Err(why) => format!("no version: it {why}"),
        };
        format!("{} ({version}, {})", self.found.path.display(), from_where(&self.found))
    }
}

/// `from the ADSP_LIBRARY_PATH directory /x` or `from the FastRPC default directory /x`.
fn from_where(found: &Found) -> String {
    let kind = if found.directory.from_variable { "ADSP_LIBRARY_PATH" } else { "FastRPC default" };
    format!("from the {kind} directory {}", found.directory.shown())
}

/// Where the DSP loader looks for the skel on one domain, and every copy it finds, first the one it loads (for the
/// user PD; see [`SkelSearch::is_the_loaders`]).
#[derive(Clone, Debug)]
pub struct SkelSearch {
    /// The search path of this process.
    pub search: SearchPath,
    /// Every skel file found, in search order.
    pub found: Vec<SkelFile>,
    /// The PD the skel is opened in.
    pub pd: Pd,
    /// The domain searched for.
    pub domain: Domain,
}

impl SkelSearch {
    /// Searches this process's search path for the skel, as the loader of `domain` would, for a skel opened in `pd`.
    pub fn run(domain: Domain, pd: Pd) -> SkelSearch {
        let search = SearchPath::from_environment();
        let found = search
            .find_all(SKEL_FILE_NAME, domain.uri_name())
            .into_iter()
            .map(|found| {
                let version = library_version::read(&found.path).map_err(|error| error.to_string());
                SkelFile { found, version }
            })
            .collect();
        SkelSearch { search, found, pd, domain }
    }

    /// Whether this process's search is the one the PD's loader makes: FastRPC serves the user PD's loads from this
    /// process; a static PD's (audio, sensors, root) are served by its own daemon, whose path this process cannot
    /// read.
    pub fn is_the_loaders(&self) -> bool {
        loads_through_this_process(self.pd)
    }

    /// The skel the PD opened, for messages: the first file of the search for the user PD; for a static PD, that
    /// it came from its daemon's path.
    pub fn skel_source(&self) -> String {
        match self.is_the_loaders() {
            true => self.described(),
            false => format!("{SKEL_FILE_NAME} of the {} PD ({})", self.pd.name(), daemon_path(self.pd, self.domain)),
        }
    }

    /// The file the loader loads: the first found.
    pub fn loaded(&self) -> Option<&SkelFile> {
        self.found.first()
    }

    /// The loaded skel for messages, or that none is on the path.
    pub fn described(&self) -> String {
        match self.loaded() {
            Some(file) => file.described(),
            None => format!("{SKEL_FILE_NAME} (on none of the directories the DSP loader searches)"),
        }
    }

    fn not_found(&self) -> String {
        format!(
            "the DSP loader finds no {SKEL_FILE_NAME}: it searched {}; push the skel to one of them (lpai-net-run stage \
             puts it in <device dir>/adsp) and name that directory in ADSP_LIBRARY_PATH",
            self.search.describe()
        )
    }
}

/// Whether `code` is the FastRPC library's answer after the DSP's PD (or the DSP) restarted: AEE_ECONNRESET, for
/// the call that was running and every later call of the session.
pub fn is_pd_restart(code: u32) -> bool {
    code == aee::ECONNRESET
}

/// What a failed invoke means, when the code says more than the skel could: a PD restart.
pub fn invoke_failure(code: u32, domain: Domain) -> Option<String> {
    is_pd_restart(code).then(|| {
        format!(
            "the connection to the {} was reset: the DSP's PD (or the DSP itself) restarted, and every later call of \
             this session fails; see the DSP's log for why",
            domain.uri_name()
        )
    })
}

/// The line for a PD restart during inference `during` (`None`: after the last one, before the call answered):
/// which inference, and which results this run wrote whole (`results`: from its first to the last it kept, which
/// `--keep_num_outputs` may end before `during`).
pub fn pd_restarted(results: core::ops::Range<usize>, during: Option<usize>, how: &str) -> String {
    let whole = match results.len() {
        0 => "no result was written".to_string(),
        1 => format!("Result_{} is whole", results.start),
        _ => format!("Result_{}..Result_{} are whole", results.start, results.end - 1),
    };
    match during {
        Some(during) => format!(
            "the DSP's PD restarted during inference {during}: {whole}, and nothing of inference {during} is left \
             ({how}); run again once the DSP is back"
        ),
        None => format!("the DSP's PD restarted after the last inference: {whole}; run again once the DSP is back"),
    }
}

/// Whether the PD's library loads are served from this process, so that this process's search path is its loader's:
/// the user PD's are (FastRPC serves them here); a static PD's (audio, sensors, root) are served by its own daemon.
pub fn loads_through_this_process(pd: Pd) -> bool {
    pd == Pd::User
}

/// The command of a static PD's own HLOS daemon, where known (the audio PD's).
fn daemon_command(pd: Pd, domain: Domain) -> Option<String> {
    (pd == Pd::Audio).then(|| format!("adsprpcd audiopd {}", domain.uri_name()))
}

/// Who serves a static PD's loads, and that this process cannot read its search path.
fn daemon_path(pd: Pd, domain: Domain) -> String {
    let daemon = match daemon_command(pd, domain) {
        Some(command) => format!("its daemon, {command}"),
        None => "its own daemon".to_string(),
    };
    format!("loaded through {daemon}, whose ADSP_LIBRARY_PATH this process cannot read")
}

/// What a failed open of the skel URI means (`refusal` says why a control open that came first failed, when one
/// did).
pub fn open_failure(code: u32, options: &FastRpcOptions, skel: &SkelSearch) -> String {
    let domain = options.domain.uri_name();
    let not_adsp = match options.domain {
        Domain::Adsp => String::new(),
        _ => format!("; LPAI runs on the aDSP, not the {domain}: use --domain adsp"),
    };
    if !aee::is_dsp(code) {
        return match code {
            aee::ECONNREFUSED => format!(
                "the FastRPC library cannot reach the {domain} (its device node /dev/fastrpc-{domain} does not open, or \
                 the driver refused this process a signed PD there){}{not_adsp}",
                if options.unsigned_pd { "" } else { "; try --unsigned_pd" }
            ),
            aee::EALREADYLOADED => format!(
                "this process has a FastRPC session on the {domain} open in the other mode (signed or unsigned): give \
                 every open of the process the same --unsigned_pd"
            ),
            aee::EBADPARM => format!("the FastRPC library refused the skel's URI (a domain it does not know?){not_adsp}"),
            aee::ECONNRESET => invoke_failure(code, options.domain).unwrap_or_default(),
            _ => format!("the FastRPC library could not open the skel on the {domain}{not_adsp}"),
        };
    }
    if !skel.is_the_loaders() {
        return format!(
            "the {} PD could not open {SKEL_FILE_NAME} (it is {}): put the skel of this build, signed for the device, \
             in a directory on that path (usually /vendor/lib/rfsa/adsp) or in the DSP image",
            options.pd.name(),
            daemon_path(options.pd, options.domain)
        );
    }
    let Some(loaded) = skel.loaded() else { return skel.not_found() };
    let file = loaded.described();
    match aee::plain(code) {
        aee::ENOSUCHSYMBOL => format!(
            "the DSP loaded {file} but it has no lpai_direct_skel_handle_invoke: it is not this lpai-direct skel (another \
             library of that name earlier on the path, or another build); stage the skel of this build"
        ),
        aee::ESTUBSKELVERMISMATCH => format!(
            "the DSP says the stub's IDL version is newer than the skel's ({file}): stage the skel of this build"
        ),
        _ if !options.unsigned_pd => format!(
            "the PD refused to load {file}: a signed PD refuses an unsigned module; sign it (the Hexagon SDK's \
             elfsigner.py, with a test signature on a development device) or run with --unsigned_pd"
        ),
        _ => format!(
            "the DSP could not load {file} although the PD is unsigned: it may be built for a newer Hexagon than this \
             DSP (rebuild it with the device's HEX_VER), or damaged{not_adsp}"
        ),
    }
}

/// After the handshake, a warning (never a refusal: the search may not be the one the PD's loader made, and the
/// skel's own answer is what the run goes by): when the skel answered an older interface than this stub's and this
/// process's search finds a copy whose file says it is newer after the first, the line says what the skel answered
/// and both files with their versions; for a static PD, that its loads follow its daemon's path instead.
pub fn shadowed(answered: Version, skel: &SkelSearch) -> Option<String> {
    if answered >= INTERFACE {
        return None;
    }
    let first = skel.loaded()?;
    let newer = skel.found.iter().skip(1).find(|file| file.version.as_ref().is_ok_and(|r| r.interface > answered))?;
    let runs = format!("it runs as interface {answered} (the stub refuses by name each method that needs a newer one)");
    let (first, newer) = (first.found.path.display(), newer.described());
    Some(match skel.is_the_loaders() {
        true => format!(
            "the skel answered interface {answered}, older than this stub's {INTERFACE}, and the DSP loader finds \
             {first} first, before {newer}: an older skel may shadow the one meant for this run; {runs}; remove the \
             older file or put the newer one's directory first in ADSP_LIBRARY_PATH"
        ),
        false => format!(
            "the skel answered interface {answered}, older than this stub's {INTERFACE}; this process's \
             ADSP_LIBRARY_PATH finds {first} first, before {newer}, but the {} PD's skel is {}; {runs}; put the skel \
             of this build on that path",
            skel.pd.name(),
            daemon_path(skel.pd, skel.domain)
        ),
    })
}

/// Whether a backend of the given core and backend API versions accepts a context binary made for the given ones:
/// the same major of each, and a minor no newer than the backend's (a binary from a newer SDK needs that SDK's
/// backend). This is the rule the contract model enforces (`rules::BINARY_VERSION`).
pub fn binary_accepted(binary: (QnnVersion, QnnVersion), backend: (QnnVersion, QnnVersion)) -> bool {
    let fits = |made: QnnVersion, runs: QnnVersion| made.major == runs.major && made.minor <= runs.minor;
    fits(binary.0, backend.0) && fits(binary.1, backend.1)
}

/// `2.32.0`.
fn dotted(version: QnnVersion) -> String {
    format!("{}.{}.{}", version.major, version.minor, version.patch)
}

/// The line for a binary the backend cannot take: its versions (from its metadata) and the backend's.
pub fn binary_version_refused(
    binary: &str,
    made_for: (QnnVersion, QnnVersion),
    build_id: Option<&str>,
    backend: &BackendFacts<'_>,
) -> String {
    let build = build_id.map(|id| format!(", build {id}")).unwrap_or_default();
    let backend_build = match backend.build_id {
        "" => String::new(),
        id => format!(" (build {id})"),
    };
    format!(
        "{binary} was made for backend API {} (core API {}{build}, from its metadata), but the backend on the DSP, \
         {}{backend_build}, is backend API {} (core API {}): a backend takes binaries of its own major and of no \
         newer minor; make the binary with the SDK of the device's backend, or stage the backend of the binary's SDK",
        dotted(made_for.1),
        dotted(made_for.0),
        backend.provider,
        dotted(backend.backend_api),
        dotted(backend.core_api),
    )
}

/// What the DSP side says of its backend, for [`binary_version_refused`].
#[derive(Clone, Copy, Debug)]
pub struct BackendFacts<'t> {
    /// The provider's name.
    pub provider: &'t str,
    /// Its build id.
    pub build_id: &'t str,
    /// Its core API version.
    pub core_api: QnnVersion,
    /// Its backend API version.
    pub backend_api: QnnVersion,
}

/// The libraries a run asks the skel to load, and where it runs: what a failed configure is explained with.
#[derive(Clone, Copy, Debug)]
pub struct Configured<'a> {
    /// The backend as `--backend` names it.
    pub backend: &'a Path,
    /// The DSP side's system library as `--dsp_system_library` names it; `None`: none.
    pub system_library: Option<&'a Path>,
    /// The domain.
    pub domain: Domain,
    /// The PD.
    pub pd: Pd,
}

impl Configured<'_> {
    /// The name `which` was configured with.
    pub fn name(&self, which: DspLibrary) -> Cow<'_, str> {
        match which {
            DspLibrary::Backend => self.backend.to_string_lossy(),
            DspLibrary::System => self.system_library.unwrap_or(Path::new("")).to_string_lossy(),
        }
    }
}

/// The line for a configure that failed where `failure` says (`skel_said`: the failure as the stub reported it), for
/// what only this side can add: a library that did not load (with the directories searched), a system library the
/// skel cannot use, a backend that does not create off the aDSP; `None` when the skel's own message says it all.
pub fn configure_failure(failure: &LibraryFailure, configured: &Configured<'_>, skel_said: &str) -> Option<String> {
    match failure {
        LibraryFailure::Unloadable(which) => Some(library_missing(*which, configured, &SearchPath::from_environment())),
        LibraryFailure::Refused(DspLibrary::System) => Some(format!(
            "the DSP side loads the system library {} but cannot use it (the skel says: {skel_said}): \
             --dsp_system_library must name the Hexagon libQnnSystem of the backend's SDK, or leave it out (each load \
             then sends the metadata record read here)",
            configured.name(DspLibrary::System)
        )),
        LibraryFailure::Refused(DspLibrary::Backend) if configured.domain != Domain::Adsp => {
            Some(wrong_domain(configured.domain, skel_said))
        }
        _ => None,
    }
}

/// The line for a library the DSP side could not load: its name and, for a bare name, every directory the DSP
/// loader searched (for the user PD: a static PD's loads follow its daemon's path).
pub fn library_missing(which: DspLibrary, configured: &Configured<'_>, search: &SearchPath) -> String {
    let (what, flag) = which.named();
    let name = configured.name(which);
    let domain = configured.domain;
    if name.contains('/') {
        return format!(
            "the DSP side cannot load the {what} {name} ({flag} names it by its path, which the DSP reads from the HLOS \
             file system): check that the file exists there and is a Hexagon library built for this DSP"
        );
    }
    if !loads_through_this_process(configured.pd) {
        return format!(
            "the DSP side cannot load the {what} {name}: the {} PD's libraries are {}; put it, signed for the device, \
             in a directory on that path (usually /vendor/lib/rfsa/adsp), or name it by its path with {flag}",
            configured.pd.name(),
            daemon_path(configured.pd, domain)
        );
    }
    let found = search.find_all(&name, domain.uri_name());
    match found.first() {
        None => format!(
            "the DSP side cannot find the {what} {name}: the DSP loader searched {}; stage it in <device dir>/adsp \
             (lpai-net-run stage does) or name it by its path with {flag}",
            search.describe()
        ),
        Some(found) => format!(
            "the DSP side found the {what} {name} at {} ({}) but cannot load it: in a signed PD it must be signed \
             like the skel (or run with --unsigned_pd); else it is not a Hexagon library for this DSP, or one of its \
             own libraries is missing",
            found.path.display(),
            from_where(found)
        ),
    }
}

/// The line for a backend that loaded but does not create on a domain that is not the aDSP.
pub fn wrong_domain(domain: Domain, skel_said: &str) -> String {
    format!(
        "the backend cannot be created on the {} (the skel says: {skel_said}): LPAI runs on the aDSP; use --domain adsp",
        domain.uri_name()
    )
}

/// What a refused control open (the name that attaches this process to a static PD) usually means.
pub fn control_refusal(pd: Pd, domain: Domain, name: &str) -> String {
    let daemon = daemon_command(pd, domain).map(|command| format!(" ({command})")).unwrap_or_default();
    format!(
        "the FastRPC library refused the control name {name} that attaches this process to the {} PD on {}: usually \
         this process lacks the privileges for that PD (root, the platform's SELinux policy), or the PD's own \
         daemon{daemon} is not running or the platform lets only that daemon attach to it",
        pd.name(),
        domain.uri_name(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stub::dsp_search::Directory;
    use lpai_direct::version::Component;

    fn search(found: &[(&str, bool, Option<Version>)]) -> SkelSearch {
        search_for(Pd::User, found)
    }

    fn search_for(pd: Pd, found: &[(&str, bool, Option<Version>)]) -> SkelSearch {
        let found = found
            .iter()
            .map(|(path, from_variable, version)| SkelFile {
                found: Found {
                    path: path.into(),
                    directory: Directory {
                        path: path.rsplit_once('/').unwrap().0.into(),
                        from_variable: *from_variable,
                    },
                },
                version: version
                    .map(|interface| Record::new(interface, Component::Skel, 73, "test"))
                    .ok_or_else(|| "has no version section".to_string()),
            })
            .collect();
        let search = SearchPath::new(Some(("ADSP_LIBRARY_PATH", "/data/a;/data/b".into())));
        SkelSearch { search, found, pd, domain: Domain::Adsp }
    }

    #[test]
    fn an_open_failure_is_explained_by_what_the_search_finds() {
        let options = FastRpcOptions::default();
        let unable = aee::dsp(aee::EUNABLETOLOAD) as u32;
        let message = open_failure(unable, &options, &search(&[]));
        assert!(message.starts_with("the DSP loader finds no liblpai_direct_skel.so: it searched /data/a, /data/b"));
        let one = search(&[("/data/a/liblpai_direct_skel.so", true, Some(INTERFACE))]);
        let message = open_failure(unable, &options, &one);
        let expected = format!("the PD refused to load /data/a/liblpai_direct_skel.so (interface {INTERFACE}, from the ADSP_LIBRARY_PATH directory /data/a): a signed PD refuses an unsigned module");
        assert!(message.starts_with(&expected), "{message}");
        assert!(message.ends_with("or run with --unsigned_pd"), "{message}");
        let unsigned = FastRpcOptions { unsigned_pd: true, domain: Domain::Cdsp, ..FastRpcOptions::default() };
        let message = open_failure(unable, &unsigned, &one);
        assert!(message.contains("although the PD is unsigned") && message.ends_with("use --domain adsp"), "{message}");
        let message = open_failure(aee::dsp(aee::ENOSUCHSYMBOL) as u32, &options, &one);
        assert!(message.contains("has no lpai_direct_skel_handle_invoke"), "{message}");
        let message = open_failure(aee::ECONNREFUSED, &unsigned, &one);
        assert!(message.contains("/dev/fastrpc-cdsp") && message.ends_with("use --domain adsp"), "{message}");
        let audio = FastRpcOptions { pd: Pd::Audio, ..FastRpcOptions::default() };
        let message = open_failure(unable, &audio, &search_for(Pd::Audio, &[]));
        let expected = "the audio PD could not open liblpai_direct_skel.so (it is loaded through its daemon, adsprpcd \
                        audiopd adsp, whose ADSP_LIBRARY_PATH this process cannot read)";
        assert!(message.starts_with(expected), "{message}");
    }

    #[test]
    fn an_older_skel_first_on_the_path_is_named_with_the_newer_one_for_the_pd_that_loads_from_it() {
        let old = Version { major: 1, minor: 0 };
        let files = [
            ("/data/a/liblpai_direct_skel.so", true, Some(old)),
            ("/data/b/liblpai_direct_skel.so", true, Some(INTERFACE)),
        ];
        let both = search(&files);
        let message = shadowed(old, &both).unwrap();
        let answered =
            format!("the skel answered interface 1.0, older than this stub's {INTERFACE}, and the DSP loader");
        assert!(message.starts_with(&answered), "{message}");
        assert!(message.contains("finds /data/a/liblpai_direct_skel.so first"), "{message}");
        let newer = format!("before /data/b/liblpai_direct_skel.so (interface {INTERFACE}, from the ADSP_LIBRARY_PATH");
        assert!(message.contains(&newer), "{message}");
        assert!(message.contains("it runs as interface 1.0"), "{message}");
        let audio = shadowed(old, &search_for(Pd::Audio, &files)).unwrap();
        assert!(
            audio.contains("this process's ADSP_LIBRARY_PATH finds /data/a/liblpai_direct_skel.so first"),
            "{audio}"
        );
        let daemon = "but the audio PD's skel is loaded through its daemon, adsprpcd audiopd adsp, whose \
                      ADSP_LIBRARY_PATH this process cannot read";
        assert!(audio.contains(daemon) && !audio.contains("the DSP loader"), "{audio}");
        let source = search_for(Pd::Audio, &files).skel_source();
        assert!(source.starts_with("liblpai_direct_skel.so of the audio PD (loaded through its daemon"), "{source}");
        assert_eq!(shadowed(INTERFACE, &both), None);
        let alone = search(&[("/data/a/liblpai_direct_skel.so", true, Some(old))]);
        assert_eq!(shadowed(old, &alone), None, "an older skel alone runs on (equal major)");
        assert!(invoke_failure(aee::ECONNRESET, Domain::Adsp)
            .unwrap()
            .contains("the DSP's PD (or the DSP itself) restarted"));
        assert_eq!(invoke_failure(aee::dsp(aee::EBADSTATE) as u32, Domain::Adsp), None);
    }

    #[test]
    fn a_binary_is_accepted_by_a_backend_of_its_major_and_no_older_minor() {
        let v = QnnVersion::new;
        let backend = (v(2, 32, 0), v(2, 26, 0));
        assert!(binary_accepted((v(2, 32, 0), v(2, 26, 0)), backend));
        assert!(binary_accepted((v(2, 30, 9), v(2, 20, 0)), backend));
        assert!(!binary_accepted((v(2, 32, 0), v(2, 27, 0)), backend), "a newer minor");
        assert!(!binary_accepted((v(2, 32, 0), v(3, 0, 0)), backend), "another major");
        assert!(!binary_accepted((v(2, 33, 0), v(2, 26, 0)), backend), "a newer core minor");
        let facts =
            BackendFacts { provider: "LPAI_QTI_AISW", build_id: "v2.43", core_api: backend.0, backend_api: backend.1 };
        let message = binary_version_refused("context binary m.bin", (v(2, 32, 0), v(2, 28, 1)), Some("b1"), &facts);
        assert!(message.starts_with("context binary m.bin was made for backend API 2.28.1 (core API 2.32.0, build b1"));
        assert!(message.contains("LPAI_QTI_AISW (build v2.43), is backend API 2.26.0"), "{message}");
    }

    fn configured() -> Configured<'static> {
        Configured {
            backend: Path::new("libQnnLpai.so"),
            system_library: Some(Path::new("/x/libQnnSystem.so")),
            domain: Domain::Adsp,
            pd: Pd::User,
        }
    }

    #[test]
    fn a_missing_dsp_library_names_the_directories_searched() {
        let search = SearchPath::new(Some(("ADSP_LIBRARY_PATH", "/nowhere/a".into())));
        let message = library_missing(DspLibrary::Backend, &configured(), &search);
        assert!(message.starts_with("the DSP side cannot find the backend libQnnLpai.so: the DSP loader searched /nowhere/a (ADSP_LIBRARY_PATH), then"), "{message}");
        let message = library_missing(DspLibrary::System, &configured(), &search);
        assert!(message.contains("--dsp_system_library names it by its path"), "{message}");
        let sensors = Configured { pd: Pd::Sensors, ..configured() };
        let message = library_missing(DspLibrary::Backend, &sensors, &search);
        let expected = "the DSP side cannot load the backend libQnnLpai.so: the sensors PD's libraries are loaded \
                        through its own daemon, whose ADSP_LIBRARY_PATH this process cannot read";
        assert!(message.starts_with(expected) && !message.contains("/nowhere/a"), "{message}");
        assert!(wrong_domain(Domain::Cdsp, "x").ends_with("LPAI runs on the aDSP; use --domain adsp"));
    }

    #[test]
    fn a_failed_configure_is_explained_by_the_library_the_skel_names() {
        let said = "configure failed in adsp: ...";
        let unloadable = configure_failure(&LibraryFailure::Unloadable(DspLibrary::System), &configured(), said);
        assert!(unloadable.unwrap().starts_with("the DSP side cannot load the system library /x/libQnnSystem.so"));
        let refused = configure_failure(&LibraryFailure::Refused(DspLibrary::System), &configured(), said).unwrap();
        let expected = "the DSP side loads the system library /x/libQnnSystem.so but cannot use it (the skel says: \
                        configure failed in adsp: ...): --dsp_system_library must name";
        assert!(refused.starts_with(expected), "{refused}");
        assert_eq!(configure_failure(&LibraryFailure::Refused(DspLibrary::Backend), &configured(), said), None);
        let cdsp = Configured { domain: Domain::Cdsp, ..configured() };
        let refused = configure_failure(&LibraryFailure::Refused(DspLibrary::Backend), &cdsp, said).unwrap();
        assert!(refused.starts_with("the backend cannot be created on the cdsp"), "{refused}");
        for nothing_to_add in [LibraryFailure::Neither, LibraryFailure::Unknown("old skel".into())] {
            assert_eq!(configure_failure(&nothing_to_add, &cdsp, said), None, "{nothing_to_add:?}");
        }
    }
}
