//! The virtual device's FastRPC: what the library and driver do with each call, as far as quic/fastrpc shows it,
//! with every PD a real Hexagon one: the PD shell under qemu-hexagon, started on the first skel open of its domain
//! and session, loading the skel the DSP loader's search finds (`lpai_direct_stub::stub::dsp_search`) and its
//! libraries from the same search, serving `apps_std` file calls from this process's file system.
//!
//! Answers, as the library gives them: a name without a known `&_dom=` AEE_EBADPARM; a domain this device lacks
//! (cdsp1) AEE_ECONNREFUSED; a static PD this process may not attach to AEE_EBADPERMS (audio) or AEE_ERPC (the
//! others), at the first skel open; no skel on the search path, or one the PD refuses (unsigned in a signed PD), the
//! DSP's AEE_EUNABLETOLOAD (0x80000406); a skel without the URI's invoke symbol the DSP's AEE_ENOSUCHSYMBOL
//! (0x80000442); a PD that died AEE_ECONNRESET for the call that was running and every later call of the session;
//! the unsigned-PD request after a session of the other mode is open AEE_EALREADYLOADED.

use crate::faults::Settings;
use crate::names::{self, StaticPd, DOMAINS};
use lpai_direct::aee;
use lpai_direct::codec::{self, RemoteArg, Scalars, Slot};
use lpai_direct_stub::stub::dsp_search::SearchPath;
use lpai_direct_stub::stub::qemu::TRANSPORT_FAILED;
use lpai_direct_stub::stub::{Qemu, QemuError, QemuOptions, Transport};
use std::collections::HashMap;
use std::ffi::CStr;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The domains this device has: every one but cdsp1.
const PRESENT: [bool; 5] = [true, true, true, true, false];
/// Skel handles this library gives out carry "VD" in their top 16 bits.
const HANDLE_TAG: u64 = 0x5644 << 48;

/// One PD: a domain and session's PD shell.
struct Pd {
    domain: usize,
    session: u32,
    unsigned: bool,
    qemu: Qemu,
    /// Set once the PD died: every call of the session answers AEE_ECONNRESET.
    dead: bool,
    /// Skel handles open on it.
    handles: u32,
}

/// The whole device: its PDs, the handles on them and what the client asked for.
pub struct Device {
    settings: Settings,
    /// The unsigned-PD request per domain (`remote_session_control`).
    unsigned: [bool; 5],
    /// The PD each domain and session was told to be by a control name.
    chosen: HashMap<(usize, u32), StaticPd>,
    pds: Vec<Pd>,
    handles: HashMap<u64, (usize, u64)>,
    next_handle: u64,
    restart_used: bool,
}

impl Device {
    /// A device with nothing open.
    pub fn new(settings: Settings) -> Device {
        Device {
            settings,
            unsigned: [false; 5],
            chosen: HashMap::new(),
            pds: Vec::new(),
            handles: HashMap::new(),
            next_handle: 1,
            restart_used: false,
        }
    }

    /// Appends a line to the DSP log (or stderr): what the device's own side saw.
    fn log(&self, line: &str) {
        match &self.settings.log {
            Some(path) => {
                if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
                    let _ = writeln!(file, "virtual device: {line}");
                }
            }
            None => eprintln!("virtual device: {line}"),
        }
    }

    /// `remote_handle64_open(name, &handle)`.
    pub fn open(&mut self, name: &CStr) -> Result<Option<u64>, u32> {
        let text = name.to_str().map_err(|_| aee::EBADPARM)?;
        if let Some(request) = text.strip_prefix(names::ITRANSPORT_PREFIX) {
            let (pd, handle) = names::control(request).map_err(|_| aee::EBADPARM)?;
            let domain = names::domain_of(request).unwrap_or(0);
            let session = names::session_of(request).ok_or(aee::EBADPARM)?;
            self.chosen.insert((domain, session), pd);
            return Ok(handle);
        }
        let domain = names::domain_of(text).ok_or(aee::EBADPARM)?;
        let session = names::session_of(text).ok_or(aee::EBADPARM)?;
        if !PRESENT[domain] {
            self.log(&format!(
                "no {} on this device (its device node /dev/fastrpc-{0} does not exist)",
                DOMAINS[domain]
            ));
            return Err(aee::ECONNREFUSED);
        }
        self.check_static_pd(domain, session)?;
        let index = match self.pds.iter().position(|pd| (pd.domain, pd.session) == (domain, session)) {
            Some(index) if self.pds[index].dead && self.pds[index].handles > 0 => return Err(aee::ECONNRESET),
            Some(index) if self.pds[index].dead => {
                self.pds.remove(index);
                self.start(text, domain, session)?
            }
            Some(index) => index,
            None => self.start(text, domain, session)?,
        };
        let opened = self.pds[index].qemu.open(name);
        let skel_handle = match opened {
            Ok(handle) => handle,
            Err(status) => return Err(self.failed(index, status)),
        };
        self.pds[index].handles += 1;
        let handle = HANDLE_TAG | self.next_handle;
        self.next_handle += 1;
        self.handles.insert(handle, (index, skel_handle));
        Ok(Some(handle))
    }

    /// A static PD this process may not attach to is refused at its first open, as the library refuses it then.
    fn check_static_pd(&self, domain: usize, session: u32) -> Result<(), u32> {
        let pd = self.chosen.get(&(domain, session)).copied().unwrap_or(StaticPd::User);
        if pd == StaticPd::User || self.settings.static_pds.iter().any(|allowed| allowed == pd.name()) {
            return Ok(());
        }
        self.log(&format!(
            "the {} PD on {} refuses this process: only its own daemon may attach (LPAI_VD_STATIC_PDS lists the PDs a \
             process may attach to)",
            pd.name(),
            DOMAINS[domain]
        ));
        Err(if pd == StaticPd::Audio { aee::EBADPERMS } else { aee::ERPC })
    }

    /// Starts the PD of a domain and session on the skel its search finds; answers its index.
    fn start(&mut self, uri: &str, domain: usize, session: u32) -> Result<usize, u32> {
        let unable = aee::dsp(aee::EUNABLETOLOAD) as u32;
        let skel = names::skel_uri(uri).ok_or(aee::EBADPARM)?;
        let search = SearchPath::from_environment();
        let subsystem = DOMAINS[domain];
        let Some(found) = search.find_all(&skel.library, subsystem).into_iter().next() else {
            self.log(&format!("the DSP loader finds no {} (searched {})", skel.library, search.describe()));
            return Err(unable);
        };
        if !exports(&found.path, &skel.symbol) {
            self.log(&format!("{} has no symbol {}", found.path.display(), skel.symbol));
            return Err(aee::dsp(aee::ENOSUCHSYMBOL) as u32);
        }
        let unsigned = self.unsigned[domain];
        let mut shell_options = Vec::new();
        if self.settings.signed_pd && !unsigned {
            shell_options.push("--require-signature".to_string());
        }
        if !self.settings.lpai_domains.iter().any(|name| name == subsystem) {
            shell_options.push("--no-lpai-engine".to_string());
        }
        if self.settings.raw_log {
            shell_options.push("--raw-log".to_string());
        }
        if let Some(count) = self.settings.restart_after.filter(|_| !self.restart_used) {
            shell_options.extend(["--restart-after".to_string(), count.to_string()]);
            self.restart_used = true;
        }
        let options = QemuOptions {
            skel: Some(found.path.clone()),
            shell: self.settings.shell.clone(),
            trace: None,
            library_path: library_directories(&search, subsystem),
            shell_options,
            log: self.settings.log.clone(),
        };
        match Qemu::start(&options) {
            Ok(qemu) => {
                self.pds.push(Pd { domain, session, unsigned, qemu, dead: false, handles: 0 });
                Ok(self.pds.len() - 1)
            }
            Err(error @ QemuError::Refused { .. }) => {
                self.log(&format!("the {subsystem} PD did not load {}: {error}", found.path.display()));
                Err(unable)
            }
            Err(error) => {
                self.log(&format!(
                    "cannot start the {subsystem} PD: {error} (run it through scripts/virtual-device.sh)"
                ));
                Err(aee::ECONNREFUSED)
            }
        }
    }

    /// The answer for a call of PD `index` that failed with `status`: a PD that died answers AEE_ECONNRESET from
    /// now on; any other status is the skel's own.
    fn failed(&mut self, index: usize, status: i32) -> u32 {
        let pd = &mut self.pds[index];
        if status != TRANSPORT_FAILED || pd.qemu.failure().is_none() {
            return status as u32;
        }
        pd.dead = true;
        let why = pd.qemu.failure().unwrap_or_default();
        self.log(&format!("the {} PD died: {why}", DOMAINS[self.pds[index].domain]));
        aee::ECONNRESET
    }

    /// `remote_handle64_invoke(handle, sc, args)`.
    ///
    /// # Safety
    /// `args` as `sc` describes, every buffer valid for its length.
    pub unsafe fn invoke(&mut self, handle: u64, scalars: u32, args: *mut RemoteArg) -> u32 {
        let Some(&(index, skel_handle)) = self.handles.get(&handle) else { return aee::EBADPARM };
        if self.pds[index].dead {
            return aee::ECONNRESET;
        }
        // SAFETY: forwarded from the caller.
        let status = unsafe { self.pds[index].qemu.invoke(skel_handle, scalars, args) };
        if status != 0 {
            return self.failed(index, status);
        }
        if let Some(interface) = self.settings.skel_interface {
            if Scalars::of(scalars).method == codec::version::ID {
                // SAFETY: a `version` call that succeeded: its primary output is the caller's, as `sc` describes.
                unsafe { answer_version(args, interface) };
            }
        }
        0
    }

    /// `remote_handle64_close(handle)`: a control handle closes at once; a skel handle's PD ends with its last one.
    pub fn close(&mut self, handle: u64) -> u32 {
        if (256..=261).contains(&handle) {
            return 0;
        }
        let Some((index, skel_handle)) = self.handles.remove(&handle) else { return aee::EBADPARM };
        let pd = &mut self.pds[index];
        pd.handles = pd.handles.saturating_sub(1);
        let status = match pd.dead {
            true => aee::ECONNRESET,
            false => pd.qemu.close(skel_handle) as u32,
        };
        if self.pds[index].handles == 0 {
            self.pds.remove(index);
            for (pd, _) in self.handles.values_mut() {
                *pd -= usize::from(*pd > index);
            }
        }
        status
    }

    /// `remote_session_control(DSPRPC_CONTROL_UNSIGNED_MODULE, {domain, enable})`: before a session of the
    /// domain opens in the other mode (else AEE_EALREADYLOADED); domain -1 is every domain.
    pub fn unsigned_module(&mut self, domain: i32, enable: bool) -> u32 {
        let domains: Vec<usize> = match domain {
            -1 => (0..DOMAINS.len()).collect(),
            0..=4 => vec![domain as usize],
            _ => return aee::EBADPARM,
        };
        for domain in domains {
            if self.pds.iter().any(|pd| pd.domain == domain && pd.unsigned != enable) {
                return aee::EALREADYLOADED;
            }
            self.unsigned[domain] = enable;
        }
        0
    }

    /// `remote_handle_control(DSPRPC_GET_DSP_INFO, {domain, attribute, capability})`: DOMAIN_SUPPORT (0) is 1 for
    /// the domains this device has, UNSIGNED_PD_SUPPORT (1) is 1 on them; other attributes 0.
    pub fn capability(domain: u32, attribute: u32) -> u32 {
        let present = PRESENT.get(domain as usize).copied().unwrap_or(false);
        u32::from(present && attribute <= 1)
    }
}

/// The directories the PD's `dlopen` searches, in the loader's order: each directory's `<subsystem>/`, then the
/// directory (the current directory for an empty entry).
fn library_directories(search: &SearchPath, subsystem: &str) -> Vec<PathBuf> {
    let mut directories: Vec<PathBuf> = Vec::new();
    for directory in &search.directories {
        let tried = match directory.path.is_empty() {
            true => vec![PathBuf::from(".")],
            false => vec![Path::new(&directory.path).join(subsystem), PathBuf::from(&directory.path)],
        };
        for path in tried {
            if !directories.contains(&path) {
                directories.push(path);
            }
        }
    }
    directories
}

/// Whether the ELF file at `path` exports `symbol` (a defined dynamic symbol).
fn exports(path: &Path, symbol: &str) -> bool {
    let Ok(bytes) = std::fs::read(path) else { return false };
    let Ok(elf) = goblin::elf::Elf::parse(&bytes) else { return false };
    elf.dynsyms.iter().any(|entry| entry.st_shndx != 0 && elf.dynstrtab.get_at(entry.st_name) == Some(symbol))
}

/// Overwrites the interface version in a `version` call's primary output.
///
/// # Safety
/// `args` must hold the arguments of a `version` call, its primary output valid for writes of its layout.
unsafe fn answer_version(args: *mut RemoteArg, (major, minor): (u32, u32)) {
    use codec::version as m;
    let Some(primary) = m::METHOD.primary_out_arg() else { return };
    for (index, value) in [(m::INTERFACE_MAJOR, major), (m::INTERFACE_MINOR, minor)] {
        if let Some(Slot::PrimaryOut { offset }) = m::PLAN.slot(index) {
            // SAFETY: the primary output holds every rout scalar of the method at its offset (the caller's promise).
            unsafe { (*args.add(primary)).buf.pv.cast::<u8>().add(offset).cast::<u32>().write_unaligned(value) };
        }
    }
}
