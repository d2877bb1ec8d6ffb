//! The HLOS side's libQnnSystem: reads a context binary's metadata on the application processor and turns it into
//! the metadata record (`lpai_direct::metadata`) that the skel loads with when its PD has no libQnnSystem, and that
//! `lpai-net-run inspect --emit_metadata` writes for firmware. The library is loaded with libloading and driven
//! through the shared crate's QNN declarations; the conversion is the shared `metadata::from_qnn`.

use crate::contained::{self, Outcome};
use anyhow::{anyhow, bail, Context as _, Result};
use libloading::Library;
use lpai_direct::metadata::{self, from_qnn, Quantization, Record, TensorMeta, WriteError, Writer};
use lpai_direct::qnn::error::{code as error_code, error_name};
use lpai_direct::qnn::{
    self, BinaryInfo, SystemContextHandle, SystemInterface, SystemInterfaceGetProvidersFn, Version,
};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// How long libQnnSystem may take to read one binary's metadata before the binary counts as corrupt.
pub const READ_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// libQnnSystem loaded on the HLOS; unloaded on drop.
pub struct HostSystemLibrary {
    path: PathBuf,
    interface: *const SystemInterface,
    // The interface above belongs to it (unless it is linked into the program); declared last, so dropped last.
    _library: Option<Library>,
}

/// Frees a system context when dropped.
struct SystemContext<'l> {
    library: &'l HostSystemLibrary,
    handle: SystemContextHandle,
}

impl Drop for SystemContext<'_> {
    fn drop(&mut self) {
        if let Some(free) = self.library.table().system_context_free {
            // SAFETY: a handle systemContextCreate made, freed once, after every use of what it owns.
            unsafe { free(self.handle) };
        }
    }
}

impl HostSystemLibrary {
    /// Loads libQnnSystem from `path` (a bare name is left to the dynamic loader's search) and picks its first
    /// provider, which must speak system API 1.x with x at least what the shared declarations were verified on.
    pub fn load(path: &Path) -> Result<HostSystemLibrary> {
        let shown = path.display();
        // SAFETY: loading runs the library's initialisers; libQnnSystem is made to be loaded by applications.
        let library = unsafe { Library::new(path.as_os_str()) }
            .map_err(|error| anyhow!("the system library {shown} cannot be loaded: {error}"))?;
        // SAFETY: libQnnSystem exports QnnSystemInterface_getProviders with exactly this signature.
        let get_providers = unsafe {
            library.get::<SystemInterfaceGetProvidersFn>(qnn::SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL.to_bytes_with_nul())
        }
        .map_err(|_| {
            anyhow!("{shown} is not a QNN system library: it does not export QnnSystemInterface_getProviders")
        })?;
        // SAFETY: the symbol is the library's QnnSystemInterface_getProviders, and `library` is kept with what it
        // returns.
        let mut system = unsafe { HostSystemLibrary::from_providers(path, *get_providers) }?;
        system._library = Some(library);
        Ok(system)
    }

    /// Uses a `QnnSystemInterface_getProviders` already in the program (`path` names the library in messages),
    /// as [`HostSystemLibrary::load`] uses a loaded library's.
    ///
    /// # Safety
    /// `get_providers` must behave as QNN specifies, and what it returns must stay valid while the answer lives.
    pub unsafe fn from_providers(
        path: &Path,
        get_providers: SystemInterfaceGetProvidersFn,
    ) -> Result<HostSystemLibrary> {
        let shown = path.display();
        let mut list: *mut *const SystemInterface = std::ptr::null_mut();
        let mut count = 0u32;
        // SAFETY: valid out-pointers; the library stays loaded while its answer is used.
        let status = unsafe { get_providers(&mut list, &mut count) };
        if error_code(status) != 0 || list.is_null() || count == 0 {
            bail!(
                "the system library {shown} lists no provider (QnnSystemInterface_getProviders answered {status:#x})"
            );
        }
        // SAFETY: the library returned `count` (> 0) entries at `list`.
        let interface = unsafe { *list };
        if interface.is_null() {
            bail!("the system library {shown} lists no provider");
        }
        // SAFETY: a non-null provider entry owned by the library, which `library` keeps loaded.
        let found = unsafe { (*interface).system_api_version };
        let wanted = qnn::DECLARED_SYSTEM_API;
        if found.major != wanted.major || found.minor < wanted.minor {
            bail!(
                "the system library {shown} speaks QNN system API {}.{}.{}; this reader needs {}.x with x >= {}",
                found.major,
                found.minor,
                found.patch,
                wanted.major,
                wanted.minor
            );
        }
        Ok(HostSystemLibrary { path: path.to_path_buf(), interface, _library: None })
    }

    /// Its function table, as the declarations have it: read its entries past \[12\] only after checking the
    /// provider's version has them (as [`crate::profile_log::profile_api`] does).
    pub(crate) fn table(&self) -> &qnn::SystemInterfaceTable {
        // SAFETY: the provider entry lives as long as the library this value keeps loaded.
        unsafe { &(*self.interface).table }
    }

    /// The system API version its provider speaks.
    pub fn system_api_version(&self) -> Version {
        // SAFETY: the provider entry lives as long as the library this value keeps loaded.
        unsafe { (*self.interface).system_api_version }
    }

    /// Where it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the context binary `binary` records (`what` names it in errors): its backend, versions and SoC, and its
    /// metadata record. libQnnSystem reads the binary in a child process (`contained`): a binary that crashes it
    /// (or keeps it busy past [`READ_TIME_LIMIT`]) is reported as corrupt instead of taking this process down, and
    /// nothing of it reaches a skel.
    ///
    /// # Safety
    /// The child is forked from this process and calls libQnnSystem: no other thread may be inside libQnnSystem, or
    /// hold another lock its reader takes, at the call (the C library's allocator and stdio locks excepted, which
    /// its fork handlers take). Calling it before the process starts any thread keeps to that: the net-run job, and
    /// `doctor`, read every binary before they create a transport.
    pub unsafe fn read(&self, binary: &[u8], what: &str) -> Result<BinaryMetadata> {
        let work = || self.read_in_this_process(binary, what).map_err(|error| format!("{error:#}"));
        // SAFETY: the caller's promise, which is `run`'s: the child takes no lock another thread may hold.
        match unsafe { contained::run(READ_TIME_LIMIT, work) } {
            Outcome::Answered(Ok(metadata)) => Ok(metadata),
            Outcome::Answered(Err(message)) | Outcome::Broken(message) => Err(anyhow!(message)),
            Outcome::Crashed(signal) => {
                bail!("libQnnSystem crashed reading {what} (signal {signal}): the binary is corrupt")
            }
            Outcome::TimedOut(limit) => {
                bail!("libQnnSystem did not finish reading {what} in {} s: the binary is corrupt", limit.as_secs())
            }
            Outcome::Exited(code) => {
                bail!("libQnnSystem's reader of {what} exited with status {code} and no answer")
            }
        }
    }

    /// [`HostSystemLibrary::read`] in this process, with nothing contained: what the child runs, and what the fuzz
    /// target feeds (a crash of this code must show there, not become a "corrupt binary").
    pub fn read_in_this_process(&self, binary: &[u8], what: &str) -> Result<BinaryMetadata> {
        let shown = self.path.display();
        let missing = |name| anyhow!("the system library {shown} does not implement {name}");
        let create = self.table().system_context_create.ok_or_else(|| missing("systemContextCreate"))?;
        let get_info =
            self.table().system_context_get_binary_info.ok_or_else(|| missing("systemContextGetBinaryInfo"))?;
        let mut handle: SystemContextHandle = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let status = unsafe { create(&mut handle) };
        if error_code(status) != 0 {
            let code = error_code(status);
            bail!("the system library {shown}: systemContextCreate failed: {} ({code})", error_name(code));
        }
        let context = SystemContext { library: self, handle };
        let mut info: *const BinaryInfo = std::ptr::null();
        let mut info_size = 0u64;
        // SAFETY: the buffer is valid for its length and only read (QNN declares it `void*`); the answer stays
        // owned by the system context, which lives until the end of this function.
        let status = unsafe {
            get_info(context.handle, binary.as_ptr().cast_mut().cast(), binary.len() as u64, &mut info, &mut info_size)
        };
        let code = error_code(status);
        if code != 0 || info.is_null() {
            bail!(
                "{what}: not a usable QNN context binary (truncated or corrupt): the HLOS side's libQnnSystem {shown} \
                 answered {} ({code})",
                error_name(code)
            );
        }
        // SAFETY: non-null, owned by the system context.
        let info = unsafe { &*info };
        let graphs = info.graphs().with_context(|| format!("{what}: unknown binary info version"))?;
        let versions = info.versions().with_context(|| format!("{what}: unknown binary info version"))?;
        // SAFETY: the strings, when not null, are NUL-terminated and owned by the system context, alive here.
        let (build_id, soc_version) = unsafe { (owned_text(versions.build_id), owned_text(versions.soc_version)) };
        let facts = BinaryFacts {
            info_version: versions.info_version,
            backend_id: versions.backend_id,
            build_id,
            core_api_version: versions.core_api_version,
            backend_api_version: versions.backend_api_version,
            soc_version,
            hw_info_blob_version: versions.hw_info_blob_version,
            context_blob_version: versions.context_blob_version,
            context_blob_size: versions.context_blob_size,
            context_tensors: versions.num_context_tensors,
            soc_model: versions.soc_model,
        };
        let graphs = match graphs.num_graphs {
            0 => &[][..],
            _ if graphs.graphs.is_null() => bail!("{what}: libQnnSystem counts graphs but describes none"),
            // SAFETY: libQnnSystem describes `num_graphs` graphs there, owned by the system context.
            count => unsafe { std::slice::from_raw_parts(graphs.graphs, count as usize) },
        };
        let binary_hash = metadata::binary_hash(binary);
        let write = |buffer: &mut [u8]| -> Result<std::result::Result<usize, WriteError>> {
            let mut writer = Writer::new(buffer);
            // SAFETY: every pointer in `graphs` is owned by the system context, alive until this function returns.
            unsafe { from_qnn::write_graphs(graphs, &binary_hash, &mut writer) }
                .map_err(|error| anyhow!("{what}: its metadata cannot be carried by a metadata record: {error}"))?;
            Ok(writer.finish())
        };
        let needed = match write(&mut [])? {
            Err(WriteError::TooSmall { needed }) => needed,
            Err(WriteError::Invalid(error)) => bail!("{what}: its metadata does not make a valid record: {error}"),
            Ok(length) => length,
        };
        let mut record = vec![0u8; needed];
        match write(&mut record)? {
            Ok(length) if length == needed => Ok(BinaryMetadata { facts, record }),
            Ok(_) | Err(WriteError::TooSmall { .. }) => bail!("{what}: libQnnSystem's answer changed between reads"),
            Err(WriteError::Invalid(error)) => bail!("{what}: its metadata does not make a valid record: {error}"),
        }
    }
}

/// A QNN version's fields, for carrying [`BinaryFacts`] out of the reading child process.
#[derive(Serialize, Deserialize)]
#[serde(remote = "Version")]
struct VersionFields {
    major: u32,
    minor: u32,
    patch: u32,
}

/// An optional QNN version, as [`VersionFields`].
mod optional_version {
    use super::{Version, VersionFields};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Carried(#[serde(with = "VersionFields")] Version);

    pub(super) fn serialize<S: Serializer>(version: &Option<Version>, serializer: S) -> Result<S::Ok, S::Error> {
        version.map(Carried).serialize(serializer)
    }

    pub(super) fn deserialize<'d, D: Deserializer<'d>>(deserializer: D) -> Result<Option<Version>, D::Error> {
        Ok(Option::<Carried>::deserialize(deserializer)?.map(|carried| carried.0))
    }
}

/// What a context binary records beside its graphs (libQnnSystem's binary info), copied out of the system context.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryFacts {
    /// The binary info version libQnnSystem answered with (1, 2 or 3).
    pub info_version: u32,
    /// The QNN backend id the binary was prepared for.
    pub backend_id: u32,
    /// The build id of the QNN libraries that prepared it (`None`: not recorded).
    pub build_id: Option<String>,
    /// The QNN core API version recorded.
    #[serde(with = "VersionFields")]
    pub core_api_version: Version,
    /// The backend API version recorded.
    #[serde(with = "VersionFields")]
    pub backend_api_version: Version,
    /// The SoC version recorded (`None`: not recorded).
    pub soc_version: Option<String>,
    /// The hardware-info blob version (binary info versions 1 and 2 only).
    #[serde(with = "optional_version")]
    pub hw_info_blob_version: Option<Version>,
    /// The context blob version.
    #[serde(with = "VersionFields")]
    pub context_blob_version: Version,
    /// The context blob's size in bytes.
    pub context_blob_size: u64,
    /// How many context tensors the binary holds.
    pub context_tensors: u32,
    /// The SoC model (binary info version 3 only).
    pub soc_model: Option<u32>,
}

/// A context binary's recorded facts and its metadata record, read in one go.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryMetadata {
    /// Backend, versions and SoC.
    pub facts: BinaryFacts,
    /// The metadata record (`lpai_direct::metadata`).
    pub record: Vec<u8>,
}

/// A NUL-terminated string libQnnSystem answered with, copied; `None` for a null pointer.
///
/// # Safety
/// `text` is null or points at a NUL-terminated string alive for the call.
unsafe fn owned_text(text: *const std::ffi::c_char) -> Option<String> {
    if text.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated per the caller.
    Some(unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy().into_owned())
}

/// The metadata record of `binary`, read with the libQnnSystem at `system_library` in this process, with nothing
/// contained: for tests and tools that read binaries known to be sound (a crash of libQnnSystem takes the caller
/// down with it).
pub fn record_in_this_process(system_library: &Path, binary: &[u8], what: &str) -> Result<Vec<u8>> {
    Ok(HostSystemLibrary::load(system_library)?.read_in_this_process(binary, what)?.record)
}

pub(crate) fn type_name(name: Option<&'static str>, prefix: &str, raw: u32) -> String {
    match name {
        Some(name) => name.strip_prefix(prefix).unwrap_or(name).to_string(),
        None => format!("{raw:#x}"),
    }
}

fn tensor_line(side: &str, tensor: &TensorMeta<'_>) -> String {
    let tensor_type = type_name(tensor.tensor_type.c_name(), "QNN_TENSOR_TYPE_", tensor.tensor_type.0);
    let data_type = type_name(tensor.data_type.c_name(), "QNN_DATATYPE_", tensor.data_type.0);
    let mut line =
        format!("  {side} {} id {} {tensor_type} {data_type} {:?}", tensor.name, tensor.id, tensor.dimensions());
    if let Quantization::ScaleOffset { scale, offset } = tensor.quantization {
        let _ = write!(line, " scale {scale} offset {offset}");
    }
    line
}

/// The record as text, one line a graph and one a tensor:
/// `graph NAME: N input(s), M output(s)`, then `  input NAME id ID TYPE DATA_TYPE [DIMS] scale S offset O`.
pub fn describe(record: &Record<'_>) -> String {
    let mut text = String::new();
    for graph in record.graphs() {
        let _ =
            writeln!(text, "graph {}: {} input(s), {} output(s)", graph.name, graph.inputs.len(), graph.outputs.len());
        for tensor in graph.inputs {
            let _ = writeln!(text, "{}", tensor_line("input ", &tensor));
        }
        for tensor in graph.outputs {
            let _ = writeln!(text, "{}", tensor_line("output", &tensor));
        }
    }
    text
}

/// Checks a record and describes it; errors say where it is malformed.
pub fn parse(bytes: &[u8]) -> Result<Record<'_>> {
    Record::parse(bytes).map_err(|error: metadata::MetadataError| anyhow!("malformed metadata record: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    /// QNN's libraries are not known to be safe to load from several test threads at once.
    static QNN: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn qnn_dir() -> PathBuf {
        let recorded = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/qnn-lib-dir");
        let text = std::fs::read_to_string(&recorded).expect("scripts/setup.sh records the QNN library directory");
        PathBuf::from(text.trim())
    }

    fn fixture(name: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/fixtures/{name}/{name}_qnn.bin"));
        std::fs::read(path).unwrap()
    }

    #[test]
    fn the_hlos_reader_makes_the_record_the_runtimes_own_description_makes() {
        let _guard = QNN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (binary, path) = (fixture("multi_io"), qnn_dir().join("libQnnSystem.so"));
        let ours = record_in_this_process(&path, &binary, "multi_io").unwrap();
        // The dsp crate's host build of the runtime reads the same library (a dev-dependency: tests only).
        let runtime = lpai_direct_skel::runtime::SystemLibrary::load(&CString::new(path.to_str().unwrap()).unwrap());
        let runtime = runtime.unwrap();
        let description = runtime.describe(&binary).unwrap();
        let mut theirs = vec![0u8; ours.len()];
        let mut writer = Writer::new(&mut theirs);
        let hash = lpai_direct::metadata::binary_hash(&binary);
        // SAFETY: the description owns every pointer in its graphs and lives to the end of the test.
        unsafe { from_qnn::write_graphs(description.graphs().unwrap(), &hash, &mut writer) }.unwrap();
        assert_eq!(writer.finish(), Ok(ours.len()));
        assert_eq!(theirs, ours);
        let text = describe(&parse(&ours).unwrap());
        assert!(
            text.contains(": 2 input(s), 2 output(s)\n  input  frames id 1 APP_WRITE UFIXED_POINT_8 [1, 4, 8] scale ")
        );
        assert!(text.contains("\n  output vec_out id 4 APP_READ UFIXED_POINT_8 [1, 5] scale "), "{text}");
    }

    #[test]
    fn libraries_and_binaries_it_cannot_use_are_named() {
        let _guard = QNN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let binary = fixture("kws_conv");
        let message =
            |path: &Path, binary: &[u8]| format!("{:#}", record_in_this_process(path, binary, "kws").unwrap_err());
        let missing = message(Path::new("/nonexistent/libQnnSystem.so"), &binary);
        assert!(missing.starts_with("the system library /nonexistent/libQnnSystem.so cannot be loaded"), "{missing}");
        let backend = qnn_dir().join("libQnnHtp.so");
        let wrong = message(&backend, &binary);
        assert!(wrong.ends_with("is not a QNN system library: it does not export QnnSystemInterface_getProviders"));
        let truncated = message(&qnn_dir().join("libQnnSystem.so"), &binary[..binary.len() / 3]);
        assert!(truncated.starts_with("kws: not a usable QNN context binary (truncated or corrupt)"), "{truncated}");
    }
}
