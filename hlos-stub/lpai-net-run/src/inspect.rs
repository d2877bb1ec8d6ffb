//! `lpai-net-run inspect`: reads a context binary's metadata with libQnnSystem on this machine and describes it: the
//! backend, API versions and SoC the binary records, its graphs and tensors (ids, names, types, shapes,
//! quantization), and, when a backend is given, the LPAI scratch and persistent memory each graph needs and the arena
//! the load used, measured by loading the binary through the local transport's host skel. The description is text
//! or one JSON object ([`Inspection`], whose shape `format` versions). With `--emit_metadata` it writes the metadata
//! record whole or not at all: the file firmware without an HLOS keeps beside its binary, and what the skel loads with
//! when its PD has no libQnnSystem.

use crate::metadata::{self, BinaryFacts};
use crate::settings;
use crate::whole;
use anyhow::{anyhow, bail, Context as _, Result};
use lpai_direct::metadata::{Quantization, Record, TensorMeta};
use lpai_direct::qnn::{lpai, Version, BACKEND_ID_NULL};
use lpai_direct_stub::stub::{fastrpc, Configuration, GraphDescription, Local, SkelLocation, Stub, TARGET_DEFAULT};
use lpai_direct_stub::stub::{LoadRequest, Loaded};
use serde::Serialize;
use std::ffi::CString;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The version of [`Inspection`]'s JSON shape; it changes only when a field changes meaning or goes away.
pub const FORMAT: u32 = 1;

/// What `inspect` reads and writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InspectSettings {
    /// The context binary.
    pub binary: PathBuf,
    /// libQnnSystem on this machine (a bare name is left to the dynamic loader's search).
    pub system_library: PathBuf,
    /// Where to write the metadata record, if anywhere.
    pub emit_metadata: Option<PathBuf>,
}

/// Loading the binary to measure its memory: which backend, through which host skel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadSettings {
    /// The QNN backend library the host skel loads (a path, or a bare name the dynamic loader searches for).
    pub backend: PathBuf,
    /// The host skel (`None`: the local transport's default search, as `lpai-net-run` does).
    pub skel: Option<PathBuf>,
}

/// A context binary described: `lpai-net-run inspect --json` prints exactly this object.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Inspection {
    /// [`FORMAT`].
    pub format: u32,
    /// The binary's path as given.
    pub binary: String,
    /// The binary's size in bytes.
    pub binary_bytes: u64,
    /// The libQnnSystem that read it, as given.
    pub system_library: String,
    /// What the binary records about its making.
    pub binary_info: BinaryInfoReport,
    /// Its graphs, in binary order.
    pub graphs: Vec<GraphReport>,
    /// The load that measured memory (`None` without a backend).
    pub load: Option<LoadReport>,
}

/// The backend, API versions and SoC a binary records (libQnnSystem's binary info). Versions are `"major.minor.patch"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BinaryInfoReport {
    /// The binary info version libQnnSystem answered with (1, 2 or 3).
    pub version: u32,
    /// The QNN backend id.
    pub backend_id: u32,
    /// The backend's name for the ids known here (`"HTP"`, `"LPAI"`, `"LPAI island"`, `"NULL"`), else `null`.
    pub backend: Option<&'static str>,
    /// The QNN build id recorded (`null`: none).
    pub build_id: Option<String>,
    /// The QNN core API version.
    pub core_api_version: String,
    /// The backend API version.
    pub backend_api_version: String,
    /// The SoC version recorded (`null`: none).
    pub soc_version: Option<String>,
    /// The SoC model (binary info version 3 only, else `null`).
    pub soc_model: Option<u32>,
    /// The hardware-info blob version (binary info versions 1 and 2 only, else `null`).
    pub hw_info_blob_version: Option<String>,
    /// The context blob version.
    pub context_blob_version: String,
    /// The context blob's size in bytes.
    pub context_blob_bytes: u64,
    /// How many context tensors the binary holds.
    pub context_tensors: u32,
}

/// One graph.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GraphReport {
    /// Its name.
    pub name: String,
    /// Its inputs, in graph order.
    pub inputs: Vec<TensorReport>,
    /// Its outputs, in graph order.
    pub outputs: Vec<TensorReport>,
    /// The LPAI memory it needs (`None` without a backend).
    pub memory: Option<MemoryReport>,
}

/// One tensor.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TensorReport {
    /// Its name in the binary.
    pub name: String,
    /// Its QNN id.
    pub id: u32,
    /// Its tensor type without the `QNN_TENSOR_TYPE_` prefix (`"APP_WRITE"`), or its number in hex.
    pub tensor_type: String,
    /// Its data type without the `QNN_DATATYPE_` prefix (`"UFIXED_POINT_8"`), or its number in hex.
    pub data_type: String,
    /// Its dimensions.
    pub dimensions: Vec<u32>,
    /// Its quantization (`None`: not quantized).
    pub quantization: Option<QuantizationReport>,
}

/// A tensor's quantization: QNN's SCALE_OFFSET, `value = (q + offset) × scale`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct QuantizationReport {
    /// Always `"SCALE_OFFSET"` (the metadata record carries no other encoding).
    pub encoding: &'static str,
    /// The scale.
    pub scale: f32,
    /// QNN's offset (the negated zero point).
    pub offset: i32,
}

/// The memory the runtime gives a graph, as the skel reports it after the load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryReport {
    /// LPAI scratch memory in bytes (0 for a backend that is not LPAI).
    pub scratch_bytes: u32,
    /// LPAI persistent memory in bytes (0 for a backend that is not LPAI).
    pub persistent_bytes: u32,
    /// The scratch memory's type (the load's default: `"ddr"`).
    pub scratch_type: &'static str,
    /// The persistent memory's type (`"ddr"`).
    pub persistent_type: &'static str,
}

/// The load that measured the memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoadReport {
    /// The backend, as given.
    pub backend: String,
    /// The host skel that loaded it.
    pub skel: String,
    /// The context arena's high-water mark after the load, in bytes: the binary, tensor buffers and LPAI memory.
    pub arena_used_bytes: u32,
    /// The context arena's size, in bytes.
    pub arena_capacity_bytes: u32,
    /// The backend's eNPU cores (`None`: not LPAI, or it does not say).
    pub enpu_cores: Option<u32>,
    /// Each core's index, MAC units and version (at most [`lpai_direct::qnn::lpai::MAX_ENPU_CORES`]).
    pub enpu_core_info: Vec<CoreReport>,
}

/// One eNPU core, as ENPU_CORE_INFO describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CoreReport {
    /// Its index (the bit of `core_selection` that selects it).
    pub index: u32,
    /// Its MAC (multiply-accumulate) units.
    pub macs: u32,
    /// Its version.
    pub version: u32,
}

/// The name of a QNN backend id known here.
fn backend_name(id: u32) -> Option<&'static str> {
    match id {
        BACKEND_ID_NULL => Some("NULL"),
        6 => Some("HTP"),
        lpai::BACKEND_ID_LPAI => Some("LPAI"),
        lpai::BACKEND_ID_LPAI_ISLAND => Some("LPAI island"),
        _ => None,
    }
}

fn version_text(version: Version) -> String {
    format!("{}.{}.{}", version.major, version.minor, version.patch)
}

impl From<&BinaryFacts> for BinaryInfoReport {
    fn from(facts: &BinaryFacts) -> Self {
        BinaryInfoReport {
            version: facts.info_version,
            backend_id: facts.backend_id,
            backend: backend_name(facts.backend_id),
            build_id: facts.build_id.clone(),
            core_api_version: version_text(facts.core_api_version),
            backend_api_version: version_text(facts.backend_api_version),
            soc_version: facts.soc_version.clone(),
            soc_model: facts.soc_model,
            hw_info_blob_version: facts.hw_info_blob_version.map(version_text),
            context_blob_version: version_text(facts.context_blob_version),
            context_blob_bytes: facts.context_blob_size,
            context_tensors: facts.context_tensors,
        }
    }
}

impl From<&TensorMeta<'_>> for TensorReport {
    fn from(tensor: &TensorMeta<'_>) -> Self {
        TensorReport {
            name: tensor.name.to_string(),
            id: tensor.id,
            tensor_type: metadata::type_name(tensor.tensor_type.c_name(), "QNN_TENSOR_TYPE_", tensor.tensor_type.0),
            data_type: metadata::type_name(tensor.data_type.c_name(), "QNN_DATATYPE_", tensor.data_type.0),
            dimensions: tensor.dimensions().to_vec(),
            quantization: match tensor.quantization {
                Quantization::None => None,
                Quantization::ScaleOffset { scale, offset } => {
                    Some(QuantizationReport { encoding: "SCALE_OFFSET", scale, offset })
                }
            },
        }
    }
}

fn graphs_of(record: &Record<'_>) -> Vec<GraphReport> {
    record
        .graphs()
        .map(|graph| GraphReport {
            name: graph.name.to_string(),
            inputs: graph.inputs.map(|tensor| TensorReport::from(&tensor)).collect(),
            outputs: graph.outputs.map(|tensor| TensorReport::from(&tensor)).collect(),
            memory: None,
        })
        .collect()
}

fn c_path(path: &Path, what: &str) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| anyhow!("{what} {} contains a NUL byte", path.display()))
}

/// Loads `binary` with `record` through the host skel on `load.backend`, describes every graph, unloads; answers the
/// descriptions and the skel's path. `what` names the binary in errors.
fn measure(load: &LoadSettings, binary: &[u8], record: &[u8], what: &str) -> Result<Measured> {
    let backend = &load.backend;
    // A bare library name (no `/`) is left to the dynamic loader's search, as with lpai-net-run.
    if backend.as_os_str().as_bytes().contains(&b'/') && !backend.is_file() {
        bail!("backend library {} (from --backend) does not exist", backend.display());
    }
    let location = match &load.skel {
        Some(path) => SkelLocation::File { path: path.clone(), named_by: "--skel" },
        None => SkelLocation::Search,
    };
    let local = Local::load(&location)?;
    let skel = local.path().display().to_string();
    let uri = fastrpc::skel_uri(fastrpc::Domain::Adsp, None);
    let mut stub = Stub::open(Box::new(local), &uri).map_err(|error| anyhow!("opening the skel {skel}: {error}"))?;
    let configuration = Configuration {
        backend: c_path(backend, "backend library")?,
        // No system library on the skel's side: it gets the record read here, as lpai-net-run's default does.
        system_library: CString::default(),
        log_level: settings::LOG_WARN,
        profiling_level: 0,
        lpai_hw_version: 0,
        lpai_target: TARGET_DEFAULT,
        arena_bytes: 0,
    };
    stub.configure(&configuration).map_err(|error| anyhow!("{error}"))?;
    // The backend as the skel created it: its eNPU cores (a skel from before `probe` answers nothing here).
    let enpu = stub.probe().ok().and_then(|backend| backend.enpu);
    let Loaded { context, graph_count } = stub
        .load(&LoadRequest::bytes(binary).with_record(record))
        .map_err(|error| anyhow!("{what} does not load on backend {}: {error}", backend.display()))?;
    let mut graphs = Vec::new();
    for index in 0..graph_count {
        let described =
            stub.describe(context, index).map_err(|error| anyhow!("{what}: describing graph {index}: {error}"))?;
        graphs.push(described);
    }
    stub.unload(context).map_err(|error| anyhow!("{what}: unloading the context: {error}"))?;
    stub.close().map_err(|error| anyhow!("closing the skel {skel}: {error}"))?;
    Ok(Measured { graphs, skel, enpu })
}

/// What loading the binary measured.
struct Measured {
    graphs: Vec<GraphDescription>,
    skel: String,
    enpu: Option<lpai_direct::wire::EnpuCores>,
}

/// Reads the binary (and loads it when `load` names a backend); writes the metadata record when asked to, only once
/// everything else succeeded. The read forks ([`metadata::HostSystemLibrary::read`]) before anything starts a
/// thread.
pub fn examine(settings: &InspectSettings, load: Option<&LoadSettings>) -> Result<Inspection> {
    let path = &settings.binary;
    let binary = std::fs::read(path).with_context(|| format!("context binary {} cannot be read", path.display()))?;
    let what = format!("context binary {}", path.display());
    let library = metadata::HostSystemLibrary::load(&settings.system_library)?;
    // SAFETY: read first, before the load's transport exists: `inspect` has started no thread; no code of this crate
    // or of the stub calls libQnnSystem on another thread, and the C library's fork handlers free its allocator and
    // stdio locks in the child.
    let read = unsafe { library.read(&binary, &what) }?;
    let record = metadata::parse(&read.record)?;
    let mut inspection = Inspection {
        format: FORMAT,
        binary: path.display().to_string(),
        binary_bytes: binary.len() as u64,
        system_library: settings.system_library.display().to_string(),
        binary_info: BinaryInfoReport::from(&read.facts),
        graphs: graphs_of(&record),
        load: None,
    };
    if let Some(load) = load {
        let Measured { graphs: described, skel, enpu } = measure(load, &binary, &read.record, &what)?;
        for graph in &mut inspection.graphs {
            let found = described
                .iter()
                .find(|description| description.name == graph.name)
                .with_context(|| format!("{what}: the skel did not describe graph {} after loading it", graph.name))?;
            // The load asked for the default placement (no config file): both pools in DDR.
            let placement = lpai_direct::qnn::lpai::MemoryPlacement::DEFAULT;
            graph.memory = Some(MemoryReport {
                scratch_bytes: found.scratch_bytes,
                persistent_bytes: found.persistent_bytes,
                scratch_type: placement.scratch.name().unwrap_or("?"),
                persistent_type: placement.persistent.name().unwrap_or("?"),
            });
        }
        let arena = described.first().map(|first| (first.arena_used, first.arena_capacity)).unwrap_or_default();
        inspection.load = Some(LoadReport {
            backend: load.backend.display().to_string(),
            skel,
            arena_used_bytes: arena.0,
            arena_capacity_bytes: arena.1,
            enpu_cores: enpu.map(|enpu| enpu.count),
            enpu_core_info: enpu
                .iter()
                .flat_map(|enpu| enpu.described().to_vec())
                .map(|core| CoreReport { index: core.core_index, macs: core.mac_cnt, version: core.version })
                .collect(),
        });
    }
    if let Some(file) = &settings.emit_metadata {
        whole::write(file, &read.record)?;
    }
    Ok(inspection)
}

/// Reads the binary's metadata; answers its description as text ([`Inspection::text`]) after writing the record
/// when asked to.
pub fn inspect(settings: &InspectSettings) -> Result<String> {
    Ok(examine(settings, None)?.text())
}

fn tensor_line(side: &str, tensor: &TensorReport) -> String {
    let mut line = format!(
        "  {side} {} id {} {} {} {:?}",
        tensor.name, tensor.id, tensor.tensor_type, tensor.data_type, tensor.dimensions
    );
    if let Some(quantization) = &tensor.quantization {
        let _ = write!(line, " scale {} offset {}", quantization.scale, quantization.offset);
    }
    line
}

impl Inspection {
    /// The description as text: the binary and what it records, one `key: value` a line; then one line a graph
    /// (`graph NAME: N input(s), M output(s)`) and one a tensor (`  input  NAME id ID TYPE DATA_TYPE [DIMS] scale S
    /// offset O`), with the graph's `  memory: scratch S bytes (TYPE), persistent P bytes (TYPE)` after a load; then the load.
    pub fn text(&self) -> String {
        let info = &self.binary_info;
        let mut text = String::new();
        // Not recorded, or recorded empty, said in words.
        let shown = |text: &Option<String>| match text.as_deref() {
            None => "(none)".to_string(),
            Some("") => "(empty)".to_string(),
            Some(text) => text.to_string(),
        };
        let _ = writeln!(text, "binary: {} ({} bytes)", self.binary, self.binary_bytes);
        let _ = writeln!(text, "read with: {}", self.system_library);
        let _ = writeln!(text, "binary info version: {}", info.version);
        match info.backend {
            Some(name) => _ = writeln!(text, "backend id: {} ({name})", info.backend_id),
            None => _ = writeln!(text, "backend id: {}", info.backend_id),
        }
        let _ = writeln!(text, "build id: {}", shown(&info.build_id));
        let _ = writeln!(text, "core API version: {}", info.core_api_version);
        let _ = writeln!(text, "backend API version: {}", info.backend_api_version);
        let _ = writeln!(text, "SoC version: {}", shown(&info.soc_version));
        if let Some(model) = info.soc_model {
            let _ = writeln!(text, "SoC model: {model}");
        }
        if let Some(version) = &info.hw_info_blob_version {
            let _ = writeln!(text, "hardware info blob version: {version}");
        }
        let _ =
            writeln!(text, "context blob: version {}, {} bytes", info.context_blob_version, info.context_blob_bytes);
        let _ = writeln!(text, "context tensors: {}", info.context_tensors);
        for graph in &self.graphs {
            let _ = writeln!(
                text,
                "graph {}: {} input(s), {} output(s)",
                graph.name,
                graph.inputs.len(),
                graph.outputs.len()
            );
            for tensor in &graph.inputs {
                let _ = writeln!(text, "{}", tensor_line("input ", tensor));
            }
            for tensor in &graph.outputs {
                let _ = writeln!(text, "{}", tensor_line("output", tensor));
            }
            if let Some(memory) = &graph.memory {
                let _ = writeln!(
                    text,
                    "  memory: scratch {} bytes ({}), persistent {} bytes ({})",
                    memory.scratch_bytes, memory.scratch_type, memory.persistent_bytes, memory.persistent_type
                );
            }
        }
        if let Some(load) = &self.load {
            let _ = writeln!(
                text,
                "load: backend {} through the host skel {}: arena used {} of {} bytes",
                load.backend, load.skel, load.arena_used_bytes, load.arena_capacity_bytes
            );
            match load.enpu_cores {
                None => _ = writeln!(text, "eNPU cores: (not reported: not LPAI, or an LPAI without ENPU_CORE_NUM)"),
                Some(cores) => {
                    let each: Vec<String> = load
                        .enpu_core_info
                        .iter()
                        .map(|core| format!("core {}: {} MACs, version {}", core.index, core.macs, core.version))
                        .collect();
                    _ = writeln!(text, "eNPU cores: {cores} ({})", each.join("; "));
                }
            }
        }
        text
    }

    /// The description as one JSON object (pretty-printed, ending with a newline).
    pub fn json(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(self).context("describing the binary as JSON")? + "\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(quantization: Option<QuantizationReport>) -> TensorReport {
        TensorReport {
            name: "mfcc".into(),
            id: 1,
            tensor_type: "APP_WRITE".into(),
            data_type: "UFIXED_POINT_8".into(),
            dimensions: vec![1, 49, 10],
            quantization,
        }
    }

    #[test]
    fn tensor_lines_keep_the_metadata_descriptions_shape() {
        let quantized = Some(QuantizationReport { encoding: "SCALE_OFFSET", scale: 0.5, offset: -3 });
        assert_eq!(
            tensor_line("input ", &tensor(quantized)),
            "  input  mfcc id 1 APP_WRITE UFIXED_POINT_8 [1, 49, 10] scale 0.5 offset -3"
        );
        assert_eq!(tensor_line("output", &tensor(None)), "  output mfcc id 1 APP_WRITE UFIXED_POINT_8 [1, 49, 10]");
    }

    #[test]
    fn known_backend_ids_are_named() {
        assert_eq!(backend_name(6), Some("HTP"));
        assert_eq!(backend_name(12), Some("LPAI"));
        assert_eq!(backend_name(16), Some("LPAI island"));
        assert_eq!(backend_name(99), None);
        assert_eq!(version_text(Version::new(2, 40, 1)), "2.40.1");
    }
}
