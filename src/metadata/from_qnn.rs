//! From libQnnSystem's description of a binary (`QnnSystemContext_GraphInfo_t`s holding `Qnn_Tensor_t`s) to a
//! metadata record: the one conversion, used by the HLOS side's reader and by the self-tests.

use super::{Quantization, TensorMeta, Writer, HASH_BYTES, MAX_GRAPHS, MAX_NAME_BYTES, MAX_RANK};
use crate::qnn::{Definition, GraphInfo, QuantizationEncoding, Tensor};
use core::ffi::{c_char, CStr};

/// Why a description cannot become a record, naming the graph and tensor (when known) and the QNN value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FromQnnError<'q> {
    /// The graph's name (or `?` when it has none).
    pub graph: &'q str,
    /// The tensor's name, when a tensor is at fault.
    pub tensor: Option<&'q str>,
    /// What is wrong.
    pub what: &'static str,
    /// The QNN value at fault, if one is.
    pub value: Option<u32>,
}

impl core::fmt::Display for FromQnnError<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "graph {}", self.graph)?;
        if let Some(tensor) = self.tensor {
            write!(f, ", tensor {tensor}")?;
        }
        write!(f, ": {}", self.what)?;
        if let Some(value) = self.value {
            write!(f, " ({value:#x})")?;
        }
        Ok(())
    }
}

/// # Safety
/// `name` is null or a NUL-terminated string that outlives `'q`.
unsafe fn text<'q>(name: *const c_char) -> Result<&'q str, &'static str> {
    if name.is_null() {
        return Err("it has no name");
    }
    // SAFETY: the caller's promise.
    let name = unsafe { CStr::from_ptr(name) }.to_str().map_err(|_| "its name is not UTF-8")?;
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err("its name is empty or longer than 255 bytes");
    }
    Ok(name)
}

/// A tensor description as a record entry.
///
/// # Safety
/// Its name and dimensions point where libQnnSystem put them, valid for `'q`.
pub unsafe fn tensor_meta<'q>(tensor: &'q Tensor) -> Result<TensorMeta<'q>, (&'static str, Option<u32>)> {
    let common = tensor.common().ok_or(("the tensor version is neither 1 nor 2", Some(tensor.version.0)))?;
    // SAFETY: the caller's promise.
    let name = unsafe { text(common.name) }.map_err(|what| (what, None))?;
    if common.data_type.element_size().is_none() {
        return Err(("the data type has no known element size", Some(common.data_type.0)));
    }
    let params = common.quantize_params;
    let quantization = match (params.encoding_definition, params.quantization_encoding) {
        (Definition::DEFINED, QuantizationEncoding::SCALE_OFFSET) => {
            // SAFETY: the encoding says the scale-offset member is the valid one; it is plain data.
            let scale_offset = unsafe { params.params.scale_offset_encoding };
            Quantization::ScaleOffset { scale: scale_offset.scale, offset: scale_offset.offset }
        }
        (Definition::DEFINED, encoding) => {
            return Err((
                "the quantization encoding is not SCALE_OFFSET, the only one a record carries",
                Some(encoding.0),
            ))
        }
        _ => Quantization::None,
    };
    let rank = common.rank;
    if rank as usize > MAX_RANK {
        return Err(("the rank is larger than 8", Some(rank)));
    }
    let mut dimensions = [0u32; MAX_RANK];
    if rank > 0 {
        if common.dimensions.is_null() {
            return Err(("the tensor has a rank but no dimensions", Some(rank)));
        }
        // SAFETY: QNN describes `rank` dimensions there, valid for 'q (the caller's promise).
        let given = unsafe { core::slice::from_raw_parts(common.dimensions, rank as usize) };
        for (slot, &dimension) in dimensions.iter_mut().zip(given) {
            *slot = dimension;
        }
    }
    let meta = TensorMeta {
        name,
        id: common.id,
        tensor_type: common.tensor_type,
        data_type: common.data_type,
        rank,
        dimensions,
        quantization,
    };
    meta.native_bytes().ok_or(("the tensor holds more than 4 GiB", None))?;
    Ok(meta)
}

/// Writes the record of `graphs` (header included), libQnnSystem's description of the binary whose
/// [`super::binary_hash`] is `binary_hash`; [`Writer::finish`] still has to check it.
///
/// # Safety
/// Every name, tensor array and dimension array in `graphs` points where libQnnSystem put it, valid for `'q`.
pub unsafe fn write_graphs<'q>(
    graphs: &'q [GraphInfo],
    binary_hash: &[u8; HASH_BYTES],
    writer: &mut Writer<'_>,
) -> Result<(), FromQnnError<'q>> {
    let too_many = FromQnnError { graph: "?", tensor: None, what: "the binary holds more than 8 graphs", value: None };
    if graphs.is_empty() || graphs.len() > MAX_GRAPHS {
        let what = if graphs.is_empty() { "the binary holds no graph" } else { too_many.what };
        return Err(FromQnnError { what, value: Some(graphs.len() as u32), ..too_many });
    }
    writer.header(graphs.len() as u32, binary_hash);
    for info in graphs {
        let graph_error = |graph, what, value| FromQnnError { graph, tensor: None, what, value };
        let common =
            info.common().ok_or(graph_error("?", "the graph info version is not 1, 2 or 3", Some(info.version.0)))?;
        // SAFETY: the caller's promise.
        let graph = unsafe { text(common.graph_name) }.map_err(|what| graph_error("?", what, None))?;
        let sides = [(common.graph_inputs, common.num_graph_inputs), (common.graph_outputs, common.num_graph_outputs)];
        if sides.iter().any(|&(tensors, count)| tensors.is_null() && count > 0) {
            return Err(graph_error(graph, "tensors are counted but not described", None));
        }
        writer.graph(graph, common.num_graph_inputs, common.num_graph_outputs);
        for (tensors, count) in sides {
            let tensors: &'q [Tensor] = if count == 0 {
                &[]
            } else {
                // SAFETY: libQnnSystem describes `count` tensors there (the caller's promise).
                unsafe { core::slice::from_raw_parts(tensors, count as usize) }
            };
            for tensor in tensors {
                // SAFETY: the caller's promise.
                let meta = unsafe { tensor_meta(tensor) }.map_err(|(what, value)| {
                    // SAFETY: as above; only for the message.
                    let tensor = tensor.common().and_then(|common| unsafe { text(common.name) }.ok());
                    FromQnnError { graph, tensor, what, value }
                })?;
                writer.tensor(&meta);
            }
        }
    }
    Ok(())
}
