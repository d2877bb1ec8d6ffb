//! Where a context's tensor metadata comes from: libQnnSystem's description of the binary, or a metadata record
//! (`lpai_direct::metadata`, read where libQnnSystem exists and checked whole by [`Record::parse`]). A record is
//! turned into the very descriptions libQnnSystem gives (`QnnSystemContext_GraphInfo_t` v1 holding
//! `Qnn_Tensor_t` v1, names and dimensions), in the arena, so everything after runs one code path.
//!
//! Before anything else, the SHA-256 of the binary about to be handed to the backend must be the one the record
//! carries ([`RuntimeError::RecordForAnotherBinary`] otherwise): the record was made where the binary was read and
//! checked, so the backend only ever parses that binary.
//!
//! What is checked against the backend, since no QNN call lists a binary's graphs or tensor ids: graphRetrieve
//! must find every graph the record names ([`RuntimeError::RecordGraphMissing`] otherwise, naming the graph), and
//! graphExecute then matches the record's tensors by id (and checks their count and sizes as the backend does);
//! its refusal (QNN_GRAPH_ERROR_INVALID_TENSOR) becomes [`RuntimeError::RecordTensorsRefused`], naming the graph.
//! Graphs of the binary that the record leaves out are not loaded; a data type, shape or quantization the backend
//! does not check is taken from the record as it is.

use super::arena::Arena;
use super::error::RuntimeError;
use super::system::{BinaryDescription, SystemLibrary};
use core::ffi::c_char;
use core::marker::PhantomData;
use core::ptr;
use lpai_direct::metadata::{Quantization, Record, TensorMeta, Tensors};
use lpai_direct::qnn::{ClientBuffer, Definition, GraphInfo, GraphInfoV1, GraphInfoVersion, GraphInfoVersions};
use lpai_direct::qnn::{QuantizationEncoding, QuantizeEncodingParams, QuantizeParams, ScaleOffset, Tensor};
use lpai_direct::qnn::{TensorMemType, TensorMemory, TensorV1, TensorVersion, TensorVersions};

/// The source of a context's tensor metadata.
#[derive(Clone, Copy)]
pub enum Metadata<'a, 'r> {
    /// libQnnSystem describes the binary; its description lives as long as the context.
    System(&'a SystemLibrary),
    /// A checked metadata record; what the context needs of it is copied into the arena, so the record's bytes
    /// are needed only while loading.
    Record(Record<'r>),
}

/// A binary's graph descriptions, owned by libQnnSystem or built in the arena from a record.
pub(crate) enum Description<'a> {
    /// libQnnSystem's, freed with the system context on drop.
    System(BinaryDescription<'a>),
    /// A record's: `count` entries in the arena at `graphs`. A pointer, not a reference: the skel keeps a context
    /// beside the memory of its arena and frees that memory right after the context, while a reference held here
    /// would still be protected in the frame that drops them both.
    Record {
        /// The first entry.
        graphs: *const GraphInfo,
        /// How many.
        count: usize,
        /// The arena borrow the entries live in.
        _arena: PhantomData<&'a [GraphInfo]>,
    },
}

impl<'a> Description<'a> {
    /// Describes `binary` from `metadata`, building a record's descriptions in `arena`.
    pub(crate) fn of(metadata: Metadata<'a, '_>, binary: &[u8], arena: &Arena<'a>) -> Result<Self, RuntimeError> {
        match metadata {
            Metadata::System(system) => Ok(Description::System(system.describe(binary)?)),
            Metadata::Record(record) => {
                // The record was made where the binary was checked; only that very binary goes to the backend.
                if record.binary_hash() != lpai_direct::metadata::binary_hash(binary) {
                    return Err(RuntimeError::RecordForAnotherBinary);
                }
                let graphs = graph_infos(&record, arena)?;
                Ok(Description::Record { graphs: graphs.as_ptr(), count: graphs.len(), _arena: PhantomData })
            }
        }
    }

    /// The graphs (name, inputs, outputs).
    pub(crate) fn graphs(&self) -> Result<&[GraphInfo], RuntimeError> {
        match self {
            Description::System(description) => description.graphs(),
            // SAFETY: `graph_infos` wrote `count` entries there, in the arena, which outlives `'a`.
            Description::Record { graphs, count, .. } => Ok(unsafe { core::slice::from_raw_parts(*graphs, *count) }),
        }
    }

    /// Whether the descriptions came from a record (so the backend's refusals are the record's mismatches).
    pub(crate) fn is_record(&self) -> bool {
        matches!(self, Description::Record { .. })
    }
}

/// `text` and a NUL in the arena.
fn c_string(arena: &Arena<'_>, text: &str) -> Result<*const c_char, RuntimeError> {
    let length = text.len().checked_add(1).ok_or(RuntimeError::MalformedBinary { code: 0 })?;
    let bytes = arena.bytes(length, 1)?;
    lpai_direct::codec::copy_prefix(bytes, text.as_bytes());
    Ok(bytes.as_ptr().cast())
}

/// A `Qnn_Tensor_t` v1 as libQnnSystem describes one: no memory yet.
fn tensor_v1(meta: &TensorMeta<'_>, name: *const c_char, dimensions: *mut u32) -> Tensor {
    let scale_offset = match meta.quantization {
        Quantization::None => None,
        Quantization::ScaleOffset { scale, offset } => Some(ScaleOffset { scale, offset }),
    };
    let quantize_params = QuantizeParams {
        encoding_definition: if scale_offset.is_some() { Definition::DEFINED } else { Definition::UNDEFINED },
        quantization_encoding: if scale_offset.is_some() {
            QuantizationEncoding::SCALE_OFFSET
        } else {
            QuantizationEncoding::UNDEFINED
        },
        params: QuantizeEncodingParams { scale_offset_encoding: scale_offset.unwrap_or_default() },
    };
    let v1 = TensorV1 {
        id: meta.id,
        name,
        tensor_type: meta.tensor_type,
        data_format: 0,
        data_type: meta.data_type,
        quantize_params,
        rank: meta.rank,
        dimensions,
        mem_type: TensorMemType::RAW,
        memory: TensorMemory { client_buf: ClientBuffer { data: ptr::null_mut(), data_size: 0 } },
    };
    Tensor { version: TensorVersion::V1, v: TensorVersions { v1 } }
}

/// One side's tensors (inputs or outputs) in the arena: their array, and its length.
fn tensors(arena: &Arena<'_>, list: Tensors<'_>) -> Result<(*mut Tensor, u32), RuntimeError> {
    let count = list.len();
    if count == 0 {
        return Ok((ptr::null_mut(), 0));
    }
    let slots = arena.slice(count, tensor_v1(&EMPTY, ptr::null(), ptr::null_mut()))?;
    for (slot, meta) in slots.iter_mut().zip(list) {
        let name = c_string(arena, meta.name)?;
        let dimensions = match meta.dimensions() {
            [] => ptr::null_mut(),
            given => {
                let copy = arena.slice(given.len(), 0u32)?;
                for (to, from) in copy.iter_mut().zip(given) {
                    *to = *from;
                }
                copy.as_mut_ptr()
            }
        };
        *slot = tensor_v1(&meta, name, dimensions);
    }
    Ok((slots.as_mut_ptr(), count as u32))
}

/// What a tensor array holds before its entries are written.
const EMPTY: TensorMeta<'static> = TensorMeta {
    name: "",
    id: 0,
    tensor_type: lpai_direct::qnn::TensorType::UNDEFINED,
    data_type: lpai_direct::qnn::DataType::UINT_8,
    rank: 0,
    dimensions: [0; lpai_direct::metadata::MAX_RANK],
    quantization: Quantization::None,
};

/// The record's graphs as `QnnSystemContext_GraphInfo_t` v1 entries in the arena.
fn graph_infos<'a>(record: &Record<'_>, arena: &Arena<'a>) -> Result<&'a [GraphInfo], RuntimeError> {
    let empty = GraphInfo {
        version: GraphInfoVersion::V1,
        v: GraphInfoVersions {
            v1: GraphInfoV1 {
                graph_name: ptr::null(),
                num_graph_inputs: 0,
                graph_inputs: ptr::null_mut(),
                num_graph_outputs: 0,
                graph_outputs: ptr::null_mut(),
            },
        },
    };
    let infos = arena.slice(record.graph_count(), empty)?;
    for (info, graph) in infos.iter_mut().zip(record.graphs()) {
        let graph_name = c_string(arena, graph.name)?;
        let (graph_inputs, num_graph_inputs) = tensors(arena, graph.inputs)?;
        let (graph_outputs, num_graph_outputs) = tensors(arena, graph.outputs)?;
        let v1 = GraphInfoV1 { graph_name, num_graph_inputs, graph_inputs, num_graph_outputs, graph_outputs };
        *info = GraphInfo { version: GraphInfoVersion::V1, v: GraphInfoVersions { v1 } };
    }
    Ok(infos)
}
