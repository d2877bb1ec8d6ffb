//! The fake's context binary format, and the catalogue of graphs such a binary may hold.
//!
//! Layout (little-endian): magic `FLPB` · format version 1 (u8) · BinaryInfo version to report (u8, 1 or 3) ·
//! graph count (u8, 1 or 2) · reserved (u8) · total length (u32) · per graph {catalogue index, scratch bytes,
//! persistent bytes} (3 × u32) · payload ("weights") up to the total length. A truncated binary no longer
//! matches its total length.

use core::ffi::CStr;

/// The first four bytes of a fake binary.
pub const MAGIC: [u8; 4] = *b"FLPB";
/// Most graphs in one fake binary.
pub const MAX_BINARY_GRAPHS: usize = 2;
/// Largest fake binary the backend accepts (it keeps a copy to check at contextFree).
pub const MAX_BINARY_BYTES: usize = 512;
const HEADER_BYTES: usize = 12;
const GRAPH_ENTRY_BYTES: usize = 12;

/// A graph the fake can run: one UFIXED_POINT_8 input `[1, n]`, one output of the same shape and encoding,
/// `output[i] = input[i] + addend` (saturating).
#[derive(Debug)]
pub struct CatalogueGraph {
    /// Graph name.
    pub name: &'static CStr,
    /// Input tensor name.
    pub input_name: &'static CStr,
    /// Output tensor name.
    pub output_name: &'static CStr,
    /// Input tensor id (graphExecute checks it).
    pub input_id: u32,
    /// Output tensor id.
    pub output_id: u32,
    /// Shape of both tensors.
    pub dimensions: &'static [u32; 2],
    /// Quantization scale of both tensors.
    pub scale: f32,
    /// Quantization offset of both tensors.
    pub offset: i32,
    /// What the graph adds to each element.
    pub addend: u8,
}

impl CatalogueGraph {
    /// Elements (and bytes) of each tensor.
    pub fn elements(&self) -> usize {
        self.dimensions.iter().map(|&dimension| dimension as usize).product()
    }
}

static SHAPE_1X4: [u32; 2] = [1, 4];
static SHAPE_1X2: [u32; 2] = [1, 2];

/// Every graph a fake binary may name, by catalogue index.
pub static CATALOGUE: [CatalogueGraph; 2] = [
    CatalogueGraph {
        name: c"g0",
        input_name: c"g0_in",
        output_name: c"g0_out",
        input_id: 1,
        output_id: 2,
        dimensions: &SHAPE_1X4,
        scale: 0.5,
        offset: -10,
        addend: 1,
    },
    CatalogueGraph {
        name: c"g1",
        input_name: c"g1_in",
        output_name: c"g1_out",
        input_id: 3,
        output_id: 4,
        dimensions: &SHAPE_1X2,
        scale: 0.25,
        offset: 0,
        addend: 2,
    },
];

/// One graph of a fake binary and the LPAI memory it asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphSpec {
    /// Index into [`CATALOGUE`].
    pub catalogue_index: u32,
    /// SCRATCH_MEM_SIZE the backend reports.
    pub scratch_bytes: u32,
    /// PERSISTENT_MEM_SIZE the backend reports.
    pub persistent_bytes: u32,
}

impl GraphSpec {
    /// The graph's catalogue entry (checked when the binary is parsed).
    pub fn graph(&self) -> Option<&'static CatalogueGraph> {
        CATALOGUE.get(self.catalogue_index as usize)
    }
}

/// What a fake binary holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinarySpec {
    /// `QnnSystemContext_BinaryInfo_t` version getBinaryInfo reports (1 or 3).
    pub info_version: u8,
    /// Graphs in use in `graphs`.
    pub graph_count: usize,
    /// The graphs.
    pub graphs: [GraphSpec; MAX_BINARY_GRAPHS],
}

const G0: GraphSpec = GraphSpec { catalogue_index: 0, scratch_bytes: 1000, persistent_bytes: 300 };
const G1: GraphSpec = GraphSpec { catalogue_index: 1, scratch_bytes: 200, persistent_bytes: 40 };

/// Graph `g0` only, described with BinaryInfo version 3 (as the 2.51 library answers).
pub const ONE_GRAPH: BinarySpec = BinarySpec { info_version: 3, graph_count: 1, graphs: [G0, G0] };
/// Graph `g0` only, described with BinaryInfo version 1.
pub const ONE_GRAPH_V1: BinarySpec = BinarySpec { info_version: 1, graph_count: 1, graphs: [G0, G0] };
/// Graphs `g0` and `g1`, BinaryInfo version 3.
pub const TWO_GRAPHS: BinarySpec = BinarySpec { info_version: 3, graph_count: 2, graphs: [G0, G1] };

impl BinarySpec {
    /// The graphs in use.
    pub fn graphs(&self) -> &[GraphSpec] {
        self.graphs.get(..self.graph_count).unwrap_or(&[])
    }
}

/// Writes a fake binary filling all of `out` (the rest after the header is payload); false if it does not
/// fit or `spec` is not valid.
pub fn write_binary(spec: &BinarySpec, out: &mut [u8]) -> bool {
    let header = HEADER_BYTES + GRAPH_ENTRY_BYTES * spec.graph_count;
    let (Ok(total), Ok(count)) = (u32::try_from(out.len()), u8::try_from(spec.graph_count)) else {
        return false;
    };
    if out.len() < header || out.len() > MAX_BINARY_BYTES || spec.graph_count == 0 {
        return false;
    }
    for (index, byte) in out.iter_mut().enumerate() {
        *byte = (index as u8).wrapping_mul(7).wrapping_add(3);
    }
    let mut cursor = Cursor { out, at: 0 };
    cursor.put(&MAGIC);
    cursor.put(&[1, spec.info_version, count, 0]);
    cursor.put(&total.to_le_bytes());
    for graph in spec.graphs() {
        cursor.put(&graph.catalogue_index.to_le_bytes());
        cursor.put(&graph.scratch_bytes.to_le_bytes());
        cursor.put(&graph.persistent_bytes.to_le_bytes());
    }
    parse_binary(cursor.out)
        .is_some_and(|parsed| parsed.info_version == spec.info_version && parsed.graphs() == spec.graphs())
}

struct Cursor<'o> {
    out: &'o mut [u8],
    at: usize,
}

impl Cursor<'_> {
    fn put(&mut self, bytes: &[u8]) {
        if let Some(place) = self.out.get_mut(self.at..self.at + bytes.len()) {
            place.copy_from_slice(bytes);
        }
        self.at += bytes.len();
    }
}

fn word(bytes: &[u8], at: usize) -> Option<u32> {
    let four = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([four[0], four[1], four[2], four[3]]))
}

/// Reads a fake binary; `None` when it is truncated, padded, or not one.
pub fn parse_binary(bytes: &[u8]) -> Option<BinarySpec> {
    let head = bytes.get(..8)?;
    if head[..4] != MAGIC || head[4] != 1 || !matches!(head[5], 1 | 3) {
        return None;
    }
    let graph_count = usize::from(head[6]);
    if graph_count == 0 || graph_count > MAX_BINARY_GRAPHS || word(bytes, 8)? as usize != bytes.len() {
        return None;
    }
    let mut spec = BinarySpec { info_version: head[5], graph_count, graphs: [G0; MAX_BINARY_GRAPHS] };
    for (index, graph) in spec.graphs.iter_mut().take(graph_count).enumerate() {
        let at = HEADER_BYTES + index * GRAPH_ENTRY_BYTES;
        *graph = GraphSpec {
            catalogue_index: word(bytes, at)?,
            scratch_bytes: word(bytes, at + 4)?,
            persistent_bytes: word(bytes, at + 8)?,
        };
        graph.graph()?;
    }
    Some(spec)
}
