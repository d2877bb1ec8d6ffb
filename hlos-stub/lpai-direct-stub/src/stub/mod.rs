//! The stub: typed calls to the skel, encoded with the shared codec and carried by a [`Transport`]. A failed
//! call brings back the skel's own message (its `last_error`). Right after open the stub asks the skel its
//! interface version (`version`): another major stops there; an older minor goes on, and each method the skel
//! lacks is refused here, naming the version that has it; what this side saw that may explain an older skel (a
//! newer copy later on the search path) is a warning, never a refusal.

pub mod address;
pub mod dsp_search;
pub mod fastrpc;
pub mod first_contact;
pub mod library_failure;
pub mod library_version;
pub mod load;
pub mod local;
pub mod names;
pub mod qemu;
pub mod transport;
pub mod workspace;

pub use library_failure::{DspLibrary, LibraryFailure};
pub use load::{Binary, LoadRequest, Loaded};
pub use local::{HostResources, Local, SkelError, SkelLocation};
pub use names::{Named, TransportKind, UnknownName};
pub use qemu::{Qemu, QemuError, QemuLaunch, QemuOptions};
pub use transport::{IoBuffer, Transport};

use lpai_direct::aee;
use lpai_direct::codec::{self, EncodeError, Encoder, Method};
use lpai_direct::version::{self, Component, Record, Version, INTERFACE};
use lpai_direct::wire::{BackendRecord, GraphRecord, Reader, TensorRecord};
use std::ffi::CStr;

/// The stub's version record (`lpai_direct::version`), in its own section of `liblpai_direct_stub.so` (and of
/// `lpai-net-run`), for `stage` and `doctor` to read from the file.
#[used]
#[link_section = ".lpai_direct.version"]
static VERSION_RECORD: [u8; version::RECORD_BYTES] = Record::current(Component::Stub, 0).to_bytes();

/// This stub's version record, as the file carries it.
pub fn stub_version() -> Record {
    // SAFETY: a valid, aligned static of plain bytes; read volatile so the section stays what it reads.
    let bytes = unsafe { std::ptr::read_volatile(&VERSION_RECORD) };
    Record::parse(&bytes).unwrap_or(Record::current(Component::Stub, 0))
}

/// Why a stub call failed.
#[derive(Debug, thiserror::Error)]
pub enum StubError {
    /// The skel (or the transport) answered an error code.
    #[error("{method} failed in {place}: {}({code_name}, {code:#010x})", followed_by_space(message))]
    Call {
        /// The IDL method.
        method: &'static str,
        /// Where the skel runs.
        place: String,
        /// The AEE (or transport) code.
        code: u32,
        /// Its name.
        code_name: &'static str,
        /// The skel's message, when it gave one.
        message: String,
    },
    /// The arguments did not fit the method (a programming error in the stub).
    #[error("cannot encode {method}: {error:?}")]
    Encode {
        /// The IDL method.
        method: &'static str,
        /// What was wrong.
        error: EncodeError,
    },
    /// The skel answered with records the stub cannot read.
    #[error("{method}: the skel's answer is malformed")]
    Malformed {
        /// The IDL method.
        method: &'static str,
    },
    /// The skel speaks another major version of the interface: nothing was sent to it but the handshake.
    #[error(
        "the skel {skel_file} speaks interface {skel} (build {build_id}), this stub {INTERFACE}: a stub and a skel of \
         different major versions cannot talk; stage the skel and the stub of one build (lpai-net-run stage)"
    )]
    Incompatible {
        /// The skel's version.
        skel: Version,
        /// The skel's build id.
        build_id: String,
        /// Where the skel that answered lives.
        skel_file: String,
    },
    /// The skel is of an older minor version that lacks the method.
    #[error(
        "{method} needs interface {needs}, but the skel {skel_file} speaks {skel}: stage the skel of this build \
         (interface {INTERFACE})"
    )]
    SkelLacks {
        /// The IDL method.
        method: &'static str,
        /// The version that added it.
        needs: Version,
        /// The skel's version.
        skel: Version,
        /// Where the skel lives.
        skel_file: String,
    },
}

impl StubError {
    /// The AEE (or transport) code of a failed call; `None` for the stub's own refusals.
    pub fn code(&self) -> Option<u32> {
        match self {
            StubError::Call { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// What the skel said of itself in the version handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkelVersion {
    /// Not asked: a stub made with [`Stub::from_handle`].
    NotAsked,
    /// The skel predates the handshake (it answered `version` with AEE_EUNSUPPORTED): interface 1.0.
    Unversioned,
    /// Its answer.
    Known {
        /// The interface it speaks.
        interface: Version,
        /// The Hexagon version it was built for (0 off Hexagon).
        hex_version: u32,
        /// Its build id.
        build_id: String,
    },
}

impl SkelVersion {
    /// The interface the skel speaks: its answer, 1.0 for a skel from before the handshake; `None` when not asked.
    pub fn interface(&self) -> Option<Version> {
        match self {
            SkelVersion::NotAsked => None,
            SkelVersion::Unversioned => Some(Version { major: 1, minor: 0 }),
            SkelVersion::Known { interface, .. } => Some(*interface),
        }
    }
}

impl std::fmt::Display for SkelVersion {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkelVersion::NotAsked => formatter.write_str("not asked"),
            SkelVersion::Unversioned => formatter.write_str("from before the version handshake (interface 1.0)"),
            SkelVersion::Known { interface, hex_version: 0, build_id } => {
                write!(formatter, "interface {interface}, build {build_id}")
            }
            SkelVersion::Known { interface, hex_version, build_id } => {
                write!(formatter, "interface {interface}, built for Hexagon v{hex_version}, build {build_id}")
            }
        }
    }
}

/// `text` and a space, or nothing when `text` is empty.
fn followed_by_space(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!("{text} ")
    }
}

/// Neither transport is available.
#[derive(Debug, thiserror::Error)]
pub enum NoTransport {
    /// FastRPC was not tried (not on aarch64) and the host skel cannot be loaded.
    #[error(transparent)]
    Local(SkelError),
    /// FastRPC is not available, and the host skel cannot be loaded either.
    #[error("{fastrpc}; and the local transport cannot be used either: {local}")]
    Neither {
        /// Why FastRPC is not available.
        fastrpc: fastrpc::Unavailable,
        /// Why the host skel cannot be loaded.
        local: SkelError,
    },
}

/// The transport [`default_transport`] chose.
pub struct DefaultTransport {
    /// Which it is: FastRPC, or the local transport.
    pub kind: TransportKind,
    /// The transport.
    pub transport: Box<dyn Transport>,
    /// Why FastRPC was not available, when it was tried and the local transport was chosen instead.
    pub unavailable: Option<fastrpc::Unavailable>,
}

/// The default transport: FastRPC on aarch64 when a FastRPC library loads, else the local transport on the skel
/// `skel` names. A fallback from FastRPC to local comes with why FastRPC was not available.
pub fn default_transport(
    options: fastrpc::FastRpcOptions,
    skel: &SkelLocation,
) -> Result<DefaultTransport, NoTransport> {
    default_transport_trying(options, skel, cfg!(target_arch = "aarch64"))
}

/// [`default_transport`], trying FastRPC first only when `try_fastrpc` (so hosts can test the fallback).
pub fn default_transport_trying(
    options: fastrpc::FastRpcOptions,
    skel: &SkelLocation,
    try_fastrpc: bool,
) -> Result<DefaultTransport, NoTransport> {
    let local = |transport: Local, unavailable| DefaultTransport {
        kind: TransportKind::Local,
        transport: Box::new(transport),
        unavailable,
    };
    if !try_fastrpc {
        return Ok(local(Local::load(skel).map_err(NoTransport::Local)?, None));
    }
    match fastrpc::FastRpc::load(options) {
        Ok(fastrpc) => {
            Ok(DefaultTransport { kind: TransportKind::Fastrpc, transport: Box::new(fastrpc), unavailable: None })
        }
        Err(unavailable) => match Local::load(skel) {
            Ok(transport) => Ok(local(transport, Some(unavailable))),
            Err(local) => Err(NoTransport::Neither { fastrpc: unavailable, local }),
        },
    }
}

/// Settings for `configure`.
#[derive(Clone, Debug)]
pub struct Configuration {
    /// The backend library the skel loads.
    pub backend: std::ffi::CString,
    /// The system library the skel loads; empty: none (every load then sends a metadata record).
    pub system_library: std::ffi::CString,
    /// QNN log level (0 off .. 5 debug).
    pub log_level: u32,
    /// QNN profiling level (0 off, 1 basic, 2 detailed, 1000 backend).
    pub profiling_level: u32,
    /// LPAI hardware version (0: the skel's build default).
    pub lpai_hw_version: u32,
    /// LPAI target: x86 0, arm 1, adsp 2 ([`TARGET_DEFAULT`]: the skel's default).
    pub lpai_target: u32,
    /// Arena bytes per context (0: the skel chooses).
    pub arena_bytes: u32,
}

pub use lpai_direct::wire::{PRIORITY_UNCHANGED, TARGET_DEFAULT};

impl Configuration {
    /// `backend` and `system_library` with an arena of `arena_bytes` (0: the skel chooses), logging errors only,
    /// no profiling, the skel's LPAI defaults.
    pub fn with_libraries(
        backend: std::ffi::CString,
        system_library: std::ffi::CString,
        arena_bytes: u32,
    ) -> Configuration {
        Configuration {
            backend,
            system_library,
            log_level: 1,
            profiling_level: 0,
            lpai_hw_version: 0,
            lpai_target: TARGET_DEFAULT,
            arena_bytes,
        }
    }
}

/// One tensor as the skel describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorDescription {
    /// Name in the binary.
    pub name: String,
    /// QNN id.
    pub id: u32,
    /// `Qnn_DataType_t`.
    pub data_type: u32,
    /// Dimensions.
    pub dimensions: Vec<u32>,
    /// Quantization scale.
    pub scale: f32,
    /// QNN offset.
    pub offset: i32,
    /// Native bytes.
    pub native_bytes: usize,
    /// Elements.
    pub elements: usize,
    /// Whether the skel converts it to and from float32.
    pub convertible: bool,
}

impl From<TensorRecord<'_>> for TensorDescription {
    fn from(record: TensorRecord<'_>) -> Self {
        TensorDescription {
            name: record.name.to_string(),
            id: record.id,
            data_type: record.data_type,
            dimensions: record.dimensions[..record.rank as usize].to_vec(),
            scale: record.scale,
            offset: record.offset,
            native_bytes: record.native_bytes as usize,
            elements: record.elements as usize,
            convertible: record.convertible,
        }
    }
}

/// One graph as the skel describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphDescription {
    /// Its name.
    pub name: String,
    /// Inputs in graph order.
    pub inputs: Vec<TensorDescription>,
    /// Outputs in graph order.
    pub outputs: Vec<TensorDescription>,
    /// LPAI scratch bytes.
    pub scratch_bytes: u32,
    /// LPAI persistent bytes.
    pub persistent_bytes: u32,
    /// Arena bytes the context uses.
    pub arena_used: u32,
    /// The context arena's size.
    pub arena_capacity: u32,
    /// Ticks per second of the skel's clock.
    pub clock_hz: u32,
}

impl GraphDescription {
    /// Converts skel clock ticks (from [`Executed::dsp_ticks`]) to microseconds.
    pub fn micros(&self, ticks: u64) -> u64 {
        (u128::from(ticks) * 1_000_000 / u128::from(self.clock_hz.max(1))) as u64
    }
}

/// What `execute` returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Executed {
    /// DSP clock ticks around graphExecute.
    pub dsp_ticks: u64,
    /// graphExecute calls (more than 1 after EARLY_TERMINATION).
    pub attempts: u32,
    /// Output bytes written.
    pub outputs_bytes: usize,
}

/// What `probe` found: the backend the skel loaded and its system library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendInfo {
    /// The provider's name (`LPAI_QTI_AISW`).
    pub provider: String,
    /// QNN backend id (LPAI 12).
    pub backend_id: u32,
    /// The core API version the provider speaks.
    pub core_api: lpai_direct::qnn::Version,
    /// The backend's own API version.
    pub backend_api: lpai_direct::qnn::Version,
    /// The backend's build id (empty when it gives none).
    pub build_id: String,
    /// The system library's API version, when the skel loaded one.
    pub system_api: Option<lpai_direct::qnn::Version>,
    /// LPAI's eNPU cores and what each is (ENPU_CORE_NUM, ENPU_CORE_INFO); `None` when the backend is not LPAI,
    /// does not say, or the skel is from before it reported them.
    pub enpu: Option<lpai_direct::wire::EnpuCores>,
}

impl From<BackendRecord<'_>> for BackendInfo {
    fn from(record: BackendRecord<'_>) -> Self {
        let version = |[major, minor, patch]: [u32; 3]| lpai_direct::qnn::Version::new(major, minor, patch);
        BackendInfo {
            provider: record.provider.to_string(),
            backend_id: record.backend_id,
            core_api: version(record.core_api),
            backend_api: version(record.backend_api),
            build_id: record.build_id.to_string(),
            system_api: record.system_api.map(version),
            enpu: record.enpu,
        }
    }
}

/// One profile event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileEvent {
    /// QNN event type.
    pub event_type: u32,
    /// QNN unit.
    pub unit: u32,
    /// The value.
    pub value: u64,
    /// 0 top level, 1 sub-event.
    pub depth: u32,
    /// The backend's name for it.
    pub identifier: String,
}

/// `load` and `execute` flags (shared with the skel).
pub mod flags {
    pub use lpai_direct::wire::{
        EXECUTE_FLOAT_INPUTS as FLOAT_INPUTS, EXECUTE_FLOAT_OUTPUTS as FLOAT_OUTPUTS, LOAD_ISLAND as ISLAND,
        LOAD_PERSISTENT_BINARY as PERSISTENT_BINARY,
    };
}

/// A skel's `last_error` in words: a record (its first byte is the flags byte, below any printable character)
/// rendered with this build's message table, said to come from a skel whose table may differ when the skel's build
/// id (`skel_build`, when known) is not this stub's; the text itself when an older skel answered text.
pub fn skel_message(answer: &[u8], skel_build: Option<&str>) -> String {
    match answer.first() {
        None => String::new(),
        Some(&first) if first >= 0x20 => String::from_utf8_lossy(answer).into_owned(),
        Some(_) => {
            let text = lpai_direct::message::render(answer).to_string();
            match skel_build {
                Some(build) if build != lpai_direct::version::BUILD_ID => format!(
                    "{text} (said by a skel of build {build}, whose message table may differ from this stub's, build \
                     {})",
                    lpai_direct::version::BUILD_ID
                ),
                _ => text,
            }
        }
    }
}

/// An open skel handle; closed on drop (or by [`Stub::close`]).
pub struct Stub {
    transport: Box<dyn Transport>,
    handle: u64,
    /// Whether drop still has to close the handle.
    open: bool,
    /// Calls made to the skel so far (open included).
    calls: u32,
    /// What the skel answered in the handshake.
    skel: SkelVersion,
    /// What the handshake saw that may explain an older skel, said as a warning ([`Stub::skel_warning`]).
    skel_warning: Option<String>,
}

impl Stub {
    /// Opens a handle on the skel through `transport` and asks its version: a skel of another major is closed
    /// again and refused ([`StubError::Incompatible`]). An older skel runs, whatever this side's search path shows
    /// ([`Stub::skel_warning`]).
    pub fn open(mut transport: Box<dyn Transport>, uri: &CStr) -> Result<Stub, StubError> {
        let handle = match transport.open(uri) {
            Ok(handle) => handle,
            Err(code) => {
                return Err(StubError::Call {
                    method: "open",
                    place: transport.place(),
                    code: code as u32,
                    code_name: aee::name(code as u32),
                    message: transport.failure().unwrap_or_else(|| format!("could not open {}", uri.to_string_lossy())),
                })
            }
        };
        let mut stub =
            Stub { transport, handle, open: true, calls: 1, skel: SkelVersion::NotAsked, skel_warning: None };
        stub.skel = match stub.version() {
            Ok(known) => known,
            Err(StubError::Call { code, .. }) if code & !aee::DSP_OFFSET == aee::EUNSUPPORTED => {
                SkelVersion::Unversioned
            }
            Err(error) => return Err(error),
        };
        if let SkelVersion::Known { interface, build_id, .. } = &stub.skel {
            if interface.major != INTERFACE.major {
                return Err(StubError::Incompatible {
                    skel: *interface,
                    build_id: build_id.clone(),
                    skel_file: stub.transport.skel_source(),
                });
            }
        }
        let answered = stub.skel.interface().unwrap_or(INTERFACE);
        stub.skel_warning = stub.transport.skel_search().and_then(|search| first_contact::shadowed(answered, &search));
        Ok(stub)
    }

    /// A warning from the handshake, when the skel answered an older interface than this stub's and this side's
    /// search path shows a newer skel after the first ([`first_contact::shadowed`]): said, not refused.
    pub fn skel_warning(&self) -> Option<&str> {
        self.skel_warning.as_deref()
    }

    /// Wraps a handle opened elsewhere (by another stub, or with [`Transport::open`]): calls go to `handle`
    /// through `transport`, and it is closed on drop like any other. The skel checks the number on every call,
    /// so a stale or made-up handle only gets AEE_EINVHANDLE answers; tools and tests use this to probe that. No
    /// handshake is made ([`SkelVersion::NotAsked`]): every method is sent.
    pub fn from_handle(transport: Box<dyn Transport>, handle: u64) -> Stub {
        Stub { transport, handle, open: true, calls: 0, skel: SkelVersion::NotAsked, skel_warning: None }
    }

    /// What the skel answered in the handshake.
    pub fn skel_version(&self) -> &SkelVersion {
        &self.skel
    }

    /// Calls this stub has made to the skel so far: every invoke, and the open when this stub made it.
    pub fn calls(&self) -> u32 {
        self.calls
    }

    /// The skel handle this stub calls.
    pub fn handle(&self) -> u64 {
        self.handle
    }

    /// Closes the handle now and answers what the skel said (drop closes too, ignoring the answer).
    pub fn close(mut self) -> Result<(), StubError> {
        self.open = false;
        match self.transport.close(self.handle) {
            0 => Ok(()),
            code => Err(StubError::Call {
                method: "close",
                place: self.transport.place(),
                code: code as u32,
                code_name: aee::name(code as u32),
                message: format!("handle {:#x}", self.handle),
            }),
        }
    }

    /// The transport.
    pub fn transport(&mut self) -> &mut dyn Transport {
        self.transport.as_mut()
    }

    /// Encodes with `build`, invokes, and hands the encoder (holding the rout scalars) to `read`.
    fn call<'b, T>(
        &mut self,
        method: &'static Method,
        build: impl FnOnce(&mut Encoder<'b>) -> Result<(), EncodeError>,
        read: impl FnOnce(&Encoder<'b>) -> Result<T, EncodeError>,
    ) -> Result<T, StubError> {
        let encode = |error| StubError::Encode { method: method.name, error };
        let needs = version::minor_of_method(method.id);
        if let Some(skel) = self.skel.interface().filter(|skel| skel.major == INTERFACE.major && skel.minor < needs) {
            let needs = Version { major: INTERFACE.major, minor: needs };
            return Err(StubError::SkelLacks {
                method: method.name,
                needs,
                skel,
                skel_file: self.transport.skel_source(),
            });
        }
        let mut encoder = Encoder::new(method);
        build(&mut encoder).map_err(encode)?;
        let (scalars, mut args, _) = encoder.args();
        self.calls = self.calls.saturating_add(1);
        // SAFETY: `args` points into `encoder` and the caller's buffers it borrows, all alive for the call.
        let status = unsafe { self.transport.invoke(self.handle, scalars, args.as_mut_ptr()) };
        if status != 0 {
            return Err(self.failure(method.name, status as u32));
        }
        read(&encoder).map_err(encode)
    }

    fn failure(&mut self, method: &'static str, code: u32) -> StubError {
        let message = match self.transport.failure() {
            Some(failure) => failure,
            // A skel from before `version` has no message for it (it answers AEE_EUNSUPPORTED to an unknown method).
            None if method == "last_error" || method == "version" => String::new(),
            None => self.last_error().unwrap_or_default(),
        };
        StubError::Call { method, place: self.transport.place(), code, code_name: aee::name(code), message }
    }

    /// The skel's message for the last failed call on this handle, in words: the skel answers a record of the
    /// message and its values (`lpai_direct::message`), rendered here with this build's table ([`skel_message`]).
    pub fn last_error(&mut self) -> Result<String, StubError> {
        let mut message = vec![0u8; 512];
        let length = self.call(
            codec::last_error::METHOD,
            |e| e.rout_bytes(codec::last_error::MESSAGE, &mut message).map(drop),
            |e| e.rout_u32(codec::last_error::MESSAGE_BYTES),
        )? as usize;
        message.truncate(length.min(512));
        let build_id = match &self.skel {
            SkelVersion::Known { build_id, .. } => Some(build_id.as_str()),
            _ => None,
        };
        Ok(skel_message(&message, build_id))
    }

    /// Per-handle settings for later loads.
    pub fn configure(&mut self, settings: &Configuration) -> Result<(), StubError> {
        use codec::configure as m;
        self.call(
            m::METHOD,
            |e| {
                e.u32(m::LOG_LEVEL, settings.log_level)?
                    .u32(m::PROFILING_LEVEL, settings.profiling_level)?
                    .u32(m::LPAI_HW_VERSION, settings.lpai_hw_version)?
                    .u32(m::LPAI_TARGET, settings.lpai_target)?
                    .u32(m::ARENA_BYTES, settings.arena_bytes)?
                    .string(m::BACKEND, &settings.backend)?
                    .string(m::SYSTEM_LIBRARY, &settings.system_library)
                    .map(drop)
            },
            |_| Ok(()),
        )
    }

    /// The skel's version (`version`, interface 1.1): what [`Stub::open`] asks; a skel from before it answers
    /// AEE_EUNSUPPORTED.
    pub fn version(&mut self) -> Result<SkelVersion, StubError> {
        use codec::version as m;
        let mut build_id = [0u8; version::BUILD_ID_BYTES];
        let (major, minor, hex_version, length) = self.call(
            m::METHOD,
            |e| e.rout_bytes(m::BUILD_ID, &mut build_id).map(drop),
            |e| {
                let answer =
                    (e.rout_u32(m::INTERFACE_MAJOR)?, e.rout_u32(m::INTERFACE_MINOR)?, e.rout_u32(m::HEX_VERSION)?);
                Ok((answer.0, answer.1, answer.2, e.rout_u32(m::BUILD_ID_BYTES)? as usize))
            },
        )?;
        let build_id = build_id.get(..length).ok_or(StubError::Malformed { method: "version" })?;
        Ok(SkelVersion::Known {
            interface: Version { major, minor },
            hex_version,
            build_id: String::from_utf8_lossy(build_id).into_owned(),
        })
    }

    /// The configured backend and system library as the skel loaded them (`probe`, interface 1.1).
    pub fn probe(&mut self) -> Result<BackendInfo, StubError> {
        use codec::probe as m;
        let bytes = self.call_for_bytes(m::METHOD, (m::REPORT, m::REPORT_BYTES), |_| Ok(()))?;
        let record = Reader::new(&bytes).backend().ok_or(StubError::Malformed { method: "probe" })?;
        Ok(BackendInfo::from(record))
    }

    /// Registers an op package with the skel's backend (`register_op_package`, interface 1.2): the package library
    /// `path` as the DSP names it, the interface provider it exports, and the target it was built for (`None`: the
    /// backend's default). Before any load; the skel loads the configured libraries first if it has not yet.
    pub fn register_op_package(
        &mut self,
        path: &CStr,
        interface_provider: &CStr,
        target: Option<&CStr>,
    ) -> Result<(), StubError> {
        use codec::register_op_package as m;
        self.call(
            m::METHOD,
            |e| {
                e.string(m::PATH, path)?
                    .string(m::INTERFACE_PROVIDER, interface_provider)?
                    .string(m::TARGET, target.unwrap_or(c""))
                    .map(drop)
            },
            |_| Ok(()),
        )
    }

    /// Runs a whole net-run job on the skel (direct mode): `job` is a binary job (`lpai_direct::job::encode`);
    /// answers the skel's report. The per-inference times are in the job's output directory.
    pub fn run_job(&mut self, job: &[u8]) -> Result<lpai_direct::job::Report, StubError> {
        use codec::run_job as m;
        let mut report = [0u8; lpai_direct::job::REPORT_BYTES];
        let length = self.call(
            m::METHOD,
            |e| e.bytes(m::JOB, job)?.rout_bytes(m::REPORT, &mut report).map(drop),
            |e| e.rout_u32(m::REPORT_BYTES),
        )? as usize;
        let bytes = report.get(..length).ok_or(StubError::Malformed { method: "run_job" })?;
        lpai_direct::job::Report::decode(bytes).ok_or(StubError::Malformed { method: "run_job" })
    }

    /// Calls a method whose answer is a `rout` byte sequence plus its needed length. When the skel says it needs
    /// more, calls once more with exactly that much; a second "needs more" answer is malformed.
    fn call_for_bytes(
        &mut self,
        method: &'static Method,
        out: (usize, usize),
        build: impl Fn(&mut Encoder<'_>) -> Result<(), EncodeError>,
    ) -> Result<Vec<u8>, StubError> {
        let (bytes_index, length_index) = out;
        let mut capacity = 4096;
        for _attempt in 0..2 {
            let mut bytes = vec![0u8; capacity];
            let needed = self.call(
                method,
                |e| {
                    build(e)?;
                    e.rout_bytes(bytes_index, &mut bytes).map(drop)
                },
                |e| e.rout_u32(length_index),
            )? as usize;
            if needed <= capacity {
                bytes.truncate(needed);
                return Ok(bytes);
            }
            capacity = needed;
        }
        Err(StubError::Malformed { method: method.name })
    }

    /// Describes one graph of a context.
    pub fn describe(&mut self, context: i32, graph: u32) -> Result<GraphDescription, StubError> {
        use codec::describe as m;
        let bytes = self.call_for_bytes(m::METHOD, (m::DESCRIPTION, m::DESCRIPTION_BYTES), |e| {
            e.i32(m::CONTEXT_ID, context)?.u32(m::GRAPH, graph).map(drop)
        })?;
        parse_description(&bytes).ok_or(StubError::Malformed { method: "describe" })
    }

    /// LPAI performance settings for one graph (`priority` 0x7FFFFFFF leaves the priority alone).
    pub fn set_performance(
        &mut self,
        context: i32,
        graph: u32,
        perf: lpai_direct::qnn::lpai::PerfCfg,
        affinity: lpai_direct::qnn::lpai::CoreAffinity,
        priority: u32,
    ) -> Result<(), StubError> {
        use codec::set_performance as m;
        self.call(
            m::METHOD,
            |e| {
                e.i32(m::CONTEXT_ID, context)?
                    .u32(m::GRAPH, graph)?
                    .u32(m::FPS, perf.fps)?
                    .u32(m::FTRT_RATIO, perf.ftrt_ratio)?
                    .u32(m::CLIENT_TYPE, perf.client_type.0)?
                    .u32(m::AFFINITY, affinity.affinity.0)?
                    .u32(m::CORE_SELECTION, affinity.core_selection)?
                    .u32(m::PRIORITY, priority)
                    .map(drop)
            },
            |_| Ok(()),
        )
    }

    /// One inference: every input back to back in, every output back to back out.
    pub fn execute(
        &mut self,
        context: i32,
        graph: u32,
        execute_flags: u32,
        inputs: &[u8],
        outputs: &mut [u8],
    ) -> Result<Executed, StubError> {
        use codec::execute as m;
        self.call(
            m::METHOD,
            |e| {
                e.i32(m::CONTEXT_ID, context)?
                    .u32(m::GRAPH, graph)?
                    .u32(m::FLAGS, execute_flags)?
                    .bytes(m::INPUTS, inputs)?
                    .rout_bytes(m::OUTPUTS, outputs)
                    .map(drop)
            },
            |e| {
                Ok(Executed {
                    dsp_ticks: e.rout_u64(m::DSP_TICKS)?,
                    attempts: e.rout_u32(m::ATTEMPTS)?,
                    outputs_bytes: e.rout_u32(m::OUTPUTS_BYTES)? as usize,
                })
            },
        )
    }

    /// Profile events collected for a context.
    pub fn profile(&mut self, context: i32) -> Result<Vec<ProfileEvent>, StubError> {
        use codec::profile as m;
        let bytes =
            self.call_for_bytes(m::METHOD, (m::EVENTS, m::EVENTS_BYTES), |e| e.i32(m::CONTEXT_ID, context).map(drop))?;
        parse_profile(&bytes).ok_or(StubError::Malformed { method: "profile" })
    }

    /// Frees a context.
    pub fn unload(&mut self, context: i32) -> Result<(), StubError> {
        self.call(codec::unload::METHOD, |e| e.i32(codec::unload::CONTEXT_ID, context).map(drop), |_| Ok(()))
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        if self.open {
            let _ = self.transport.close(self.handle);
        }
    }
}

fn parse_description(bytes: &[u8]) -> Option<GraphDescription> {
    let mut reader = Reader::new(bytes);
    let GraphRecord { name, inputs, outputs, scratch_bytes, persistent_bytes, arena_used, arena_capacity, clock_hz } =
        reader.graph()?;
    let inputs = (0..inputs).map(|_| reader.tensor().map(TensorDescription::from)).collect::<Option<Vec<_>>>()?;
    let outputs = (0..outputs).map(|_| reader.tensor().map(TensorDescription::from)).collect::<Option<Vec<_>>>()?;
    Some(GraphDescription {
        name: name.to_string(),
        inputs,
        outputs,
        scratch_bytes,
        persistent_bytes,
        arena_used,
        arena_capacity,
        clock_hz,
    })
}

fn parse_profile(bytes: &[u8]) -> Option<Vec<ProfileEvent>> {
    let mut reader = Reader::new(bytes);
    let count = reader.profile()?;
    (0..count)
        .map(|_| {
            reader.event().map(|event| ProfileEvent {
                event_type: event.event_type,
                unit: event.unit,
                value: event.value,
                depth: event.depth,
                identifier: event.identifier.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
