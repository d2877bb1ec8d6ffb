//! The model file: the "LPCM" context-binary format (versions 1, 2 and 3) that the contract model reads.
//!
//! Every number is little-endian. A file is:
//!
//! | bytes | field |
//! | --- | --- |
//! | 16 | header: magic `LPCM`, `version` u32 (1, 2 or 3), `total_bytes` u32 (the whole file), `graph_count` u32 (1..=4) |
//! | 24, versions 2 and 3 | the API versions the binary was made for: core API `major`, `minor`, `patch` (3 × u32), then the LPAI backend API `major`, `minor`, `patch` (3 × u32) |
//! | 4, version 3 only | `custom_op_count` u32 (0..=8) |
//! | 68 per custom op, version 3 only | `graph` u32 (the index of the graph that uses it), `package` \[32\] (the op package's name), `op` \[32\] (the op's name; both names as graph names are) |
//! | 52 per graph | `name` \[32\] (printable ASCII, NUL-padded, at least one NUL), `scratch_bytes` u32, `persistent_bytes` u32 (>= 16, the persistent header), `early_every` u32, `input_count` u32 (1..=4), `output_count` u32 (1..=4) |
//! | 88 per tensor | after its graph, inputs first then outputs: `name` \[32\], `id` u32, `data_type` u32 (0x0408 UFIXED_POINT_8 or 0x0416 UFIXED_POINT_16), `scale` f32 (finite, > 0), `offset` i32, `rank` u32 (1..=4), `dims` \[4\] u32 (used ones >= 1, unused ones 0; at most 1 MiB of data), `source` u32 (outputs: the index of the input they read; inputs: 0), `multiplier` i32, `addend` i32, `shift` u32 (<= 31), `step` i32 |
//! | rest | payload ("weights", any content) up to `total_bytes` |
//!
//! Tensor ids and tensor names are unique within a graph, graph names within the file, and `scratch_bytes` is at
//! least the largest input of its graph. A file whose length is not `total_bytes` is malformed.
//!
//! Version 3 is version 2 plus the custom ops its graphs use: each names an op (`package::op`) that an op package
//! registered with the backend must provide (backendRegisterOpPackage) before contextCreateFromBinary, which
//! otherwise fails (rule `op-package`, [`crate::rules::OP_PACKAGE_MISSING`]); the outputs do not depend on them.
//! A graph names each custom op once.
//!
//! A version 1 file has no API versions: it was made for the model's own ([`ApiVersions::MODEL`]: core API 2.32.0,
//! LPAI backend API `lpai::API_VERSION`). Any API versions parse; whether the backend loads a binary made for them is
//! the `binary-version` rule of contextCreateFromBinary ([`crate::rules::BINARY_VERSION`], [`loads_on`]).
//!
//! The parser works on a byte slice with checked reads only, so no input can make it read out of bounds or panic.

use lpai_direct::qnn::{lpai, Version};

/// The first four bytes of a model file.
pub const MAGIC: [u8; 4] = *b"LPCM";
/// Format version 1: the records follow the header; the binary is for the model's own API versions.
pub const VERSION: u32 = 1;
/// Format version 2: the API versions the binary was made for come between the header and the records.
pub const VERSION_2: u32 = 2;
/// Format version 3: version 2 plus the custom ops the graphs use, between the API versions and the records.
pub const VERSION_3: u32 = 3;
/// Bytes of one custom op entry of version 3: `graph` u32, `package` and `op` names.
pub const CUSTOM_OP_BYTES: usize = 4 + 2 * NAME_BYTES;
/// Most custom op entries of a version 3 file.
pub const MAX_CUSTOM_OPS: usize = 8;
/// Where a version 3 file's custom op entries start (after its `custom_op_count`).
pub const VERSION_3_CUSTOM_OPS_AT: usize = VERSION_2_RECORDS_AT + 4;
/// Header bytes.
pub const HEADER_BYTES: usize = 16;
/// Bytes of version 2's API versions after the header: core (major, minor, patch), then backend, each a u32.
pub const API_VERSIONS_BYTES: usize = 24;
/// Where a version 2 file's records start.
pub const VERSION_2_RECORDS_AT: usize = HEADER_BYTES + API_VERSIONS_BYTES;
/// Bytes of one graph record.
pub const GRAPH_BYTES: usize = 52;
/// Bytes of one tensor record.
pub const TENSOR_BYTES: usize = 88;
/// Bytes of a name field.
pub const NAME_BYTES: usize = 32;
/// Most graphs in a file.
pub const MAX_GRAPHS: usize = 4;
/// Most inputs (and, separately, outputs) of a graph.
pub const MAX_IO: usize = 4;
/// Most tensors of a graph.
pub const MAX_TENSORS: usize = 2 * MAX_IO;
/// Most dimensions of a tensor.
pub const MAX_RANK: usize = 4;
/// Largest tensor, in bytes.
pub const MAX_TENSOR_BYTES: u64 = 1 << 20;
/// Largest `shift`.
pub const MAX_SHIFT: u32 = 31;
/// Smallest `persistent_bytes`: the persistent header the backend keeps there.
pub const MIN_PERSISTENT_BYTES: u32 = 16;
/// `QNN_DATATYPE_UFIXED_POINT_8`.
pub const UFIXED_POINT_8: u32 = 0x0408;
/// `QNN_DATATYPE_UFIXED_POINT_16`.
pub const UFIXED_POINT_16: u32 = 0x0416;

/// A NUL-padded name field.
pub type Name = [u8; NAME_BYTES];

/// Why a file is not a model file: what was wrong, at which byte offset, with which value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// What rule of the format was broken.
    pub what: &'static str,
    /// Byte offset of the field (or the file length for size problems).
    pub at: usize,
    /// The offending value.
    pub value: u64,
}

fn malformed(what: &'static str, at: usize, value: u64) -> Malformed {
    Malformed { what, at, value }
}

/// The API versions a binary was made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiVersions {
    /// The QNN core API.
    pub core: Version,
    /// The LPAI backend API.
    pub backend: Version,
}

impl ApiVersions {
    /// The model's own: what a version 1 file is for, and what the backend speaks.
    pub const MODEL: ApiVersions = ApiVersions { core: crate::backend::CORE_API, backend: lpai::API_VERSION };
}

/// Whether a binary made for API `made_for` loads on an implementation of API `own`: the same major, and a minor
/// no greater than its own (a greater one: made by a newer SDK). The patch does not matter.
pub fn loads_on(made_for: Version, own: Version) -> bool {
    made_for.major == own.major && made_for.minor <= own.minor
}

mod record;

use record::{check_name, name_at, read_graph, read_tensor, word};
pub use record::{name_text, GraphRecord, TensorRecord};

/// A validated model file: graph and tensor records are read from it on demand.
#[derive(Clone, Copy, Debug)]
pub struct Lpcm<'b> {
    bytes: &'b [u8],
    graph_count: usize,
    version: u32,
    api_versions: ApiVersions,
    custom_op_count: usize,
    records_at: usize,
}

/// A custom op a graph of a version 3 file uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CustomOp {
    /// The index of the graph that uses it.
    pub graph: u32,
    /// The op package's name (NUL-padded).
    pub package: Name,
    /// The op's name (NUL-padded).
    pub op: Name,
}

/// A graph of a validated model file.
#[derive(Clone, Copy, Debug)]
pub struct GraphView<'b> {
    bytes: &'b [u8],
    at: usize,
    /// The graph record.
    pub record: GraphRecord,
}

impl<'b> Lpcm<'b> {
    /// Checks every rule of the format; `Err` says which one the file breaks.
    pub fn parse(bytes: &'b [u8]) -> Result<Lpcm<'b>, Malformed> {
        let length = bytes.len() as u64;
        if bytes.len() < HEADER_BYTES {
            return Err(malformed("file shorter than the 16-byte header", 0, length));
        }
        if bytes.get(..4) != Some(&MAGIC[..]) {
            return Err(malformed("magic is not LPCM", 0, word(bytes, 0).unwrap_or(0).into()));
        }
        let (version, total, count) = (word(bytes, 4), word(bytes, 8), word(bytes, 12));
        let (Some(version), Some(total), Some(count)) = (version, total, count) else {
            return Err(malformed("file shorter than the 16-byte header", 0, length));
        };
        if !(VERSION..=VERSION_3).contains(&version) {
            return Err(malformed("version is not 1, 2 or 3", 4, version.into()));
        }
        if u64::from(total) != length {
            return Err(malformed("total_bytes differs from the file length", 8, total.into()));
        }
        if count == 0 || count as usize > MAX_GRAPHS {
            return Err(malformed("graph_count not in 1..=4", 12, count.into()));
        }
        let (api_versions, custom_op_count, records_at) = match version {
            VERSION_2 => (read_api_versions(bytes)?, 0, VERSION_2_RECORDS_AT),
            VERSION_3 => {
                let custom_op_count = read_custom_op_count(bytes)?;
                (
                    read_api_versions(bytes)?,
                    custom_op_count,
                    VERSION_3_CUSTOM_OPS_AT + CUSTOM_OP_BYTES * custom_op_count,
                )
            }
            _ => (ApiVersions::MODEL, 0, HEADER_BYTES),
        };
        let file = Lpcm { bytes, graph_count: count as usize, version, api_versions, custom_op_count, records_at };
        let mut names = [[0u8; NAME_BYTES]; MAX_GRAPHS];
        let mut at = records_at;
        for index in 0..file.graph_count {
            let graph = read_graph(bytes, at)?;
            if names.iter().take(index).any(|name| *name == graph.name) {
                return Err(malformed("two graphs have the same name", at, index as u64));
            }
            if let Some(slot) = names.get_mut(index) {
                *slot = graph.name;
            }
            at = check_tensors(bytes, at, &graph)?;
        }
        file.check_custom_ops()?;
        Ok(file)
    }

    /// Each custom op entry is whole, names a graph of the file and two valid names, and is named once.
    fn check_custom_ops(&self) -> Result<(), Malformed> {
        for index in 0..self.custom_op_count {
            let at = VERSION_3_CUSTOM_OPS_AT + CUSTOM_OP_BYTES * index;
            let op = read_custom_op(self.bytes, at)?;
            if op.graph as usize >= self.graph_count {
                return Err(malformed("custom op graph is not a graph of the file", at, op.graph.into()));
            }
            check_name(&op.package, at + 4)?;
            check_name(&op.op, at + 4 + NAME_BYTES)?;
            if self.custom_ops().take(index).any(|earlier| earlier == op) {
                return Err(malformed("a graph names the same custom op twice", at, index as u64));
            }
        }
        Ok(())
    }

    /// The custom ops the graphs use (version 3; none in versions 1 and 2), in file order.
    pub fn custom_ops(&self) -> impl Iterator<Item = CustomOp> + 'b {
        let bytes = self.bytes;
        (0..self.custom_op_count)
            .map_while(move |index| read_custom_op(bytes, VERSION_3_CUSTOM_OPS_AT + CUSTOM_OP_BYTES * index).ok())
    }

    /// Graphs in the file.
    pub fn graph_count(&self) -> usize {
        self.graph_count
    }

    /// The format version: [`VERSION`] (1), [`VERSION_2`] or [`VERSION_3`].
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The API versions the binary was made for: version 2's and 3's fields, or the model's own for version 1.
    pub fn api_versions(&self) -> ApiVersions {
        self.api_versions
    }

    /// The whole file.
    pub fn bytes(&self) -> &'b [u8] {
        self.bytes
    }

    /// Graph `index`.
    pub fn graph(&self, index: usize) -> Option<GraphView<'b>> {
        self.graphs().nth(index)
    }

    /// The graphs in file order.
    pub fn graphs(&self) -> impl Iterator<Item = GraphView<'b>> + 'b {
        let (bytes, count) = (self.bytes, self.graph_count);
        let mut at = self.records_at;
        (0..count).map_while(move |_| {
            let record = read_graph(bytes, at).ok()?;
            let view = GraphView { bytes, at, record };
            at = at.checked_add(GRAPH_BYTES + TENSOR_BYTES * view.tensor_count())?;
            Some(view)
        })
    }
}

/// Version 2's API versions, after the header.
fn read_api_versions(bytes: &[u8]) -> Result<ApiVersions, Malformed> {
    let short = malformed("file shorter than the 40-byte version 2 header", 0, bytes.len() as u64);
    let field = |index: usize| word(bytes, HEADER_BYTES + 4 * index).ok_or(short);
    Ok(ApiVersions {
        core: Version::new(field(0)?, field(1)?, field(2)?),
        backend: Version::new(field(3)?, field(4)?, field(5)?),
    })
}

/// Version 3's `custom_op_count`, after the API versions.
fn read_custom_op_count(bytes: &[u8]) -> Result<usize, Malformed> {
    let short = malformed("file shorter than the 44-byte version 3 header", 0, bytes.len() as u64);
    let count = word(bytes, VERSION_2_RECORDS_AT).ok_or(short)?;
    if count as usize > MAX_CUSTOM_OPS {
        return Err(malformed("custom_op_count above 8", VERSION_2_RECORDS_AT, count.into()));
    }
    Ok(count as usize)
}

/// One custom op entry at `at`.
fn read_custom_op(bytes: &[u8], at: usize) -> Result<CustomOp, Malformed> {
    let truncated = malformed("file ends inside a custom op entry", at, bytes.len() as u64);
    let graph = word(bytes, at).ok_or(truncated)?;
    let package = at.checked_add(4).and_then(|place| name_at(bytes, place)).ok_or(truncated)?;
    let op = at.checked_add(4 + NAME_BYTES).and_then(|place| name_at(bytes, place)).ok_or(truncated)?;
    Ok(CustomOp { graph, package, op })
}

/// Checks a graph's tensors (at `at`, its record's offset); answers the offset after them.
fn check_tensors(bytes: &[u8], at: usize, graph: &GraphRecord) -> Result<usize, Malformed> {
    let mut ids = [0u32; MAX_TENSORS];
    let mut names = [[0u8; NAME_BYTES]; MAX_TENSORS];
    let mut largest_input = 0;
    let mut place = at + GRAPH_BYTES;
    let count = (graph.input_count + graph.output_count) as usize;
    for index in 0..count {
        let input = index < graph.input_count as usize;
        let tensor = read_tensor(bytes, place, input, graph.input_count)?;
        if ids.iter().take(index).any(|&id| id == tensor.id) {
            return Err(malformed("two tensors of a graph have the same id", place + 32, tensor.id.into()));
        }
        if names.iter().take(index).any(|name| *name == tensor.name) {
            return Err(malformed("two tensors of a graph have the same name", place, index as u64));
        }
        if let (Some(id), Some(name)) = (ids.get_mut(index), names.get_mut(index)) {
            (*id, *name) = (tensor.id, tensor.name);
        }
        if input {
            largest_input = largest_input.max(tensor.bytes);
        }
        place += TENSOR_BYTES;
    }
    if graph.scratch_bytes < largest_input {
        return Err(malformed("scratch_bytes below the graph's largest input", at + 32, graph.scratch_bytes.into()));
    }
    Ok(place)
}

impl GraphView<'_> {
    /// Inputs plus outputs.
    pub fn tensor_count(&self) -> usize {
        (self.record.input_count as usize).saturating_add(self.record.output_count as usize)
    }

    /// Tensor `index` of the graph: inputs first, then outputs.
    pub fn tensor(&self, index: usize) -> Option<TensorRecord> {
        if index >= self.tensor_count() {
            return None;
        }
        let at = self.at.checked_add(GRAPH_BYTES)?.checked_add(TENSOR_BYTES.checked_mul(index)?)?;
        let input = index < self.record.input_count as usize;
        read_tensor(self.bytes, at, input, self.record.input_count).ok()
    }

    /// Input `index`.
    pub fn input(&self, index: usize) -> Option<TensorRecord> {
        (index < self.record.input_count as usize).then(|| self.tensor(index)).flatten()
    }

    /// Output `index`.
    pub fn output(&self, index: usize) -> Option<TensorRecord> {
        (index < self.record.output_count as usize).then(|| self.tensor(index + self.record.input_count as usize))?
    }
}
