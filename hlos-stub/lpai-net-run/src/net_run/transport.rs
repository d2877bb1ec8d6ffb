//! The transport of a run: the one the settings ask for, or the default (FastRPC on aarch64 when a FastRPC library
//! loads, else local), in two steps. Preparing it loads its library (the local and FastRPC transports) or finds its
//! programs (the qemu one), so every reason it cannot be used shows first, and starts no thread; starting it starts
//! the virtual aDSP (a process, and a thread). The run reads its binary, which forks, between the two.

use crate::settings::Settings;
use anyhow::{bail, Result};
use lpai_direct_stub::stub::fastrpc::{FastRpc, FastRpcOptions, Pd};
use lpai_direct_stub::stub::{default_transport_trying, DefaultTransport, Local, Named, Qemu, QemuLaunch, QemuOptions};
use lpai_direct_stub::stub::{SkelLocation, Transport, TransportKind};
use std::os::unix::ffi::OsStrExt;

/// Where the local transport finds the skel: `--skel`, else the default search.
pub fn skel_location(settings: &Settings) -> SkelLocation {
    match &settings.skel {
        Some(path) => SkelLocation::File { path: path.clone(), named_by: "--skel" },
        None => SkelLocation::Search,
    }
}

/// The transport the settings ask for, before it exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportPlan {
    /// This one.
    Kind(TransportKind),
    /// The default where FastRPC is tried: FastRPC when a FastRPC library loads, else local.
    FastRpcElseLocal,
}

/// A transport started, with its kind and, when the default fell back from FastRPC to local, a note for stderr
/// saying why FastRPC was not available and which skel is used instead.
pub struct ChosenTransport {
    /// Which transport it is.
    pub kind: TransportKind,
    /// The transport.
    pub transport: Box<dyn Transport>,
    /// Why the default is not FastRPC, where it was tried.
    pub note: Option<String>,
}

/// A transport prepared, not started.
pub struct ReadyTransport {
    /// Which transport it is.
    pub kind: TransportKind,
    /// As [`ChosenTransport::note`].
    pub note: Option<String>,
    state: Ready,
}

/// What is left to do to start a [`ReadyTransport`].
enum Ready {
    /// Nothing: the library is loaded. Loading one starts no thread: quic/fastrpc's FastRPC library starts its
    /// threads at the first open, and the host skel has no initialisers.
    Loaded(Box<dyn Transport>),
    /// Starting the virtual aDSP.
    Qemu(QemuLaunch),
}

impl ReadyTransport {
    /// Starts the transport.
    pub fn start(self) -> Result<ChosenTransport> {
        let transport: Box<dyn Transport> = match self.state {
            Ready::Loaded(transport) => transport,
            Ready::Qemu(launch) => Box::new(launch.start()?),
        };
        Ok(ChosenTransport { kind: self.kind, transport, note: self.note })
    }
}

impl TransportPlan {
    /// The plan of `settings`, trying FastRPC for the default only when `try_fastrpc` (so hosts can test the
    /// fallback). A PD other than the user PD ([`Settings::pd`]) is reached through FastRPC only: the default
    /// transport is then FastRPC (no fallback), and an explicit local or qemu transport is refused.
    pub fn of(settings: &Settings, try_fastrpc: bool) -> Result<TransportPlan> {
        if settings.pd != Pd::User {
            return match settings.transport {
                Some(kind @ (TransportKind::Local | TransportKind::Qemu)) => bail!(
                    "--pd {} picks a PD on a DSP through FastRPC, which the {} transport does not use (leave out --pd, \
                     or use --transport fastrpc)",
                    settings.pd.name(),
                    kind.name()
                ),
                Some(TransportKind::Fastrpc) | None => Ok(TransportPlan::Kind(TransportKind::Fastrpc)),
            };
        }
        Ok(match (settings.transport, try_fastrpc) {
            (Some(kind), _) => TransportPlan::Kind(kind),
            (None, true) => TransportPlan::FastRpcElseLocal,
            (None, false) => TransportPlan::Kind(TransportKind::Local),
        })
    }

    /// Prepares the transport (see the module documentation).
    pub fn prepare(self, settings: &Settings) -> Result<ReadyTransport> {
        let fastrpc_options = FastRpcOptions {
            domain: settings.domain,
            pd: settings.pd,
            session: settings.session,
            unsigned_pd: settings.unsigned_pd,
            libraries: settings.fastrpc_library.iter().cloned().collect(),
        };
        let skel = skel_location(settings);
        let loaded = |kind, transport| ReadyTransport { kind, note: None, state: Ready::Loaded(transport) };
        Ok(match self {
            TransportPlan::Kind(TransportKind::Local) => loaded(TransportKind::Local, Box::new(Local::load(&skel)?)),
            TransportPlan::Kind(TransportKind::Fastrpc) => {
                loaded(TransportKind::Fastrpc, Box::new(FastRpc::load(fastrpc_options)?))
            }
            TransportPlan::Kind(TransportKind::Qemu) => {
                let options = QemuOptions {
                    skel: settings.skel.clone(),
                    shell: settings.pd_shell.clone(),
                    ..QemuOptions::default()
                };
                ReadyTransport { kind: TransportKind::Qemu, note: None, state: Ready::Qemu(Qemu::prepare(&options)?) }
            }
            TransportPlan::FastRpcElseLocal => {
                let DefaultTransport { kind, transport, unavailable } =
                    default_transport_trying(fastrpc_options, &skel, true)?;
                let note = unavailable.map(|why| format!("{why}; using the local transport ({})", transport.place()));
                ReadyTransport { kind, note, state: Ready::Loaded(transport) }
            }
        })
    }
}

/// The transport the settings ask for (or the default one), with a note when the default fell back from FastRPC to
/// local (on aarch64).
pub fn transport(settings: &Settings) -> Result<ChosenTransport> {
    transport_trying(settings, cfg!(target_arch = "aarch64"))
}

/// [`transport`], trying FastRPC for the default only when `try_fastrpc` (so hosts can test the fallback).
pub fn transport_trying(settings: &Settings, try_fastrpc: bool) -> Result<ChosenTransport> {
    prepare_trying(settings, try_fastrpc)?.start()
}

/// The transport the settings ask for, prepared; [`ReadyTransport::start`] starts it.
pub fn prepare(settings: &Settings) -> Result<ReadyTransport> {
    prepare_trying(settings, cfg!(target_arch = "aarch64"))
}

/// [`prepare`], trying FastRPC for the default only when `try_fastrpc`.
pub fn prepare_trying(settings: &Settings, try_fastrpc: bool) -> Result<ReadyTransport> {
    TransportPlan::of(settings, try_fastrpc)?.prepare(settings)
}

/// The transport a failed choice is recorded with: the one asked for, else the one the default tries first.
pub fn attempted(settings: &Settings) -> TransportKind {
    let default_first = settings.pd != Pd::User || cfg!(target_arch = "aarch64");
    settings.transport.unwrap_or(if default_first { TransportKind::Fastrpc } else { TransportKind::Local })
}

/// The local and qemu transports open libraries from this machine's file system: a backend named by a path must
/// exist there. A bare library name (no `/`) is left to the dynamic loader's search; FastRPC's are the DSP's.
pub fn check_backend(settings: &Settings, kind: TransportKind) -> Result<()> {
    let is_path = settings.backend.as_os_str().as_bytes().contains(&b'/');
    if kind == TransportKind::Fastrpc || !is_path {
        return Ok(());
    }
    if !settings.backend.is_file() {
        bail!("backend library {} does not exist", settings.backend.display());
    }
    // Before the system library beside it is looked for: a backend that is no library is the first thing wrong.
    if !is_shared_object(&settings.backend) {
        bail!(
            "backend library {} (from --backend) is not a shared object: it is not an ELF file of type ET_DYN",
            settings.backend.display()
        );
    }
    Ok(())
}

/// Whether `path` starts as an ELF shared object does (its magic, then `e_type` ET_DYN in either byte order).
fn is_shared_object(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut header = [0u8; 18];
    let read = std::fs::File::open(path).and_then(|mut file| file.read_exact(&mut header));
    let et_dyn = match header[5] {
        1 => u16::from_le_bytes([header[16], header[17]]),
        _ => u16::from_be_bytes([header[16], header[17]]),
    };
    read.is_ok() && header.starts_with(b"\x7fELF") && et_dyn == 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_that_is_not_a_shared_object_is_named_before_anything_beside_it() {
        let work = tempfile::tempdir().unwrap();
        let text = work.path().join("libQnnLpai.so");
        std::fs::write(&text, "not a library").unwrap();
        let mut settings = Settings::new(text.to_str().unwrap(), "c", "l");
        let message = check_backend(&settings, TransportKind::Local).unwrap_err().to_string();
        let expected = format!("backend library {} (from --backend) is not a shared object", text.display());
        assert!(message.starts_with(&expected), "{message}");
        assert!(check_backend(&settings, TransportKind::Fastrpc).is_ok(), "a DSP path is not checked here");
        settings.backend = std::env::current_exe().unwrap();
        assert!(check_backend(&settings, TransportKind::Local).is_ok(), "a test executable is a PIE: ET_DYN");
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
        assert_eq!(attempted(&settings), TransportKind::Fastrpc);
    }

    #[test]
    fn the_plan_is_the_kind_asked_for_unless_the_default_tries_fastrpc_first() {
        let mut settings = Settings::new("b", "c", "l");
        assert_eq!(TransportPlan::of(&settings, false).unwrap(), TransportPlan::Kind(TransportKind::Local));
        assert_eq!(TransportPlan::of(&settings, true).unwrap(), TransportPlan::FastRpcElseLocal);
        settings.transport = Some(TransportKind::Qemu);
        assert_eq!(TransportPlan::of(&settings, true).unwrap(), TransportPlan::Kind(TransportKind::Qemu));
        assert_eq!(attempted(&settings), TransportKind::Qemu);
    }

    #[test]
    fn only_a_backend_path_of_this_machine_must_exist() {
        let mut settings = Settings::new("/nonexistent/libQnnHtp.so", "c", "l");
        let message = check_backend(&settings, TransportKind::Qemu).unwrap_err().to_string();
        assert_eq!(message, "backend library /nonexistent/libQnnHtp.so does not exist");
        assert!(check_backend(&settings, TransportKind::Fastrpc).is_ok());
        settings.backend = "libQnnHtp.so".into();
        assert!(check_backend(&settings, TransportKind::Local).is_ok());
    }
}
