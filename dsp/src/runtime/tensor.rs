//! What a graph tensor is, read from its `Qnn_Tensor_t`: name, id, type, shape, size and float encoding.

use super::backend::c_text;
use super::quantize::Encoding;
use lpai_direct::qnn::{DataType, Tensor};

/// A graph input or output as the runtime and its callers see it.
#[derive(Clone, Copy, Debug)]
pub struct TensorInfo<'t> {
    /// The tensor's name in the binary.
    pub name: &'t str,
    /// The id graphExecute matches tensors by.
    pub id: u32,
    /// `Qnn_DataType_t`.
    pub data_type: DataType,
    /// Dimensions, outermost first.
    pub dimensions: &'t [u32],
    /// Native size in bytes (elements × element size).
    pub bytes: usize,
    /// Number of elements.
    pub elements: usize,
    /// How to convert to and from float32, if the runtime can.
    pub encoding: Option<Encoding>,
}

impl<'t> TensorInfo<'t> {
    /// Reads a tensor description; `None` for an unknown tensor version or a type without a byte size.
    pub fn of(tensor: &'t Tensor) -> Option<TensorInfo<'t>> {
        let common = tensor.common()?;
        let dimensions = if common.dimensions.is_null() || common.rank == 0 {
            &[][..]
        } else {
            // SAFETY: QNN describes `rank` dimensions at `dimensions`, owned with the tensor description.
            unsafe { core::slice::from_raw_parts(common.dimensions, common.rank as usize) }
        };
        let elements =
            dimensions.iter().try_fold(1usize, |product, &dimension| product.checked_mul(dimension as usize))?;
        let bytes = elements.checked_mul(common.data_type.element_size()?)?;
        Some(TensorInfo {
            // SAFETY: a tensor name is a NUL-terminated string owned with the tensor description, or null.
            name: unsafe { c_text(common.name) },
            id: common.id,
            data_type: common.data_type,
            dimensions,
            bytes,
            elements,
            encoding: encoding_of(common.data_type, common.quantize_params.scale_offset()),
        })
    }
}

fn encoding_of(data_type: DataType, scale_offset: Option<lpai_direct::qnn::ScaleOffset>) -> Option<Encoding> {
    let quantized = scale_offset.map(|q| (q.scale, q.offset));
    let (scale, offset) = quantized.unwrap_or((1.0, 0));
    match data_type {
        DataType::FLOAT_32 => Some(Encoding::Float32),
        DataType::UFIXED_POINT_8 if quantized.is_some() => Some(Encoding::Unsigned8 { scale, offset }),
        DataType::UFIXED_POINT_16 if quantized.is_some() => Some(Encoding::Unsigned16 { scale, offset }),
        DataType::SFIXED_POINT_8 if quantized.is_some() => Some(Encoding::Signed8 { scale, offset }),
        DataType::SFIXED_POINT_16 if quantized.is_some() => Some(Encoding::Signed16 { scale, offset }),
        DataType::UINT_8 | DataType::BOOL_8 => Some(Encoding::Unsigned8 { scale: 1.0, offset: 0 }),
        DataType::INT_8 => Some(Encoding::Signed8 { scale: 1.0, offset: 0 }),
        DataType::UINT_16 => Some(Encoding::Unsigned16 { scale: 1.0, offset: 0 }),
        DataType::INT_16 => Some(Encoding::Signed16 { scale: 1.0, offset: 0 }),
        _ => None,
    }
}
