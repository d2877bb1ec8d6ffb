//! What a graph tensor is, read from its `Qnn_Tensor_t`: name, id, type, shape, size, quantization and float
//! encoding.

use super::quantize::Encoding;
use core::ffi::CStr;
use lpai_direct::qnn::{DataType, ScaleOffset, Tensor};

/// A graph input or output as the runtime and its callers see it.
#[derive(Clone, Copy, Debug)]
pub struct TensorInfo<'t> {
    /// The tensor's name in the binary.
    pub name: &'t str,
    /// The same name as the NUL-terminated string the binary's description holds (`None` when it has none).
    pub c_name: Option<&'t CStr>,
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
    /// Scale and offset of a scale-offset quantized tensor (`value = (q + offset) * scale`); `None` otherwise.
    pub quantization: Option<ScaleOffset>,
    /// How to convert to and from float32, if the runtime can.
    pub encoding: Option<Encoding>,
}

/// A tensor's size alone: what the execute path checks, without the name and encoding [`TensorInfo`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorSize {
    /// Number of elements.
    pub elements: usize,
    /// Native size in bytes (elements × element size).
    pub bytes: usize,
}

/// The tensor's dimensions, outermost first.
fn dimensions_of(tensor: &Tensor) -> Option<&[u32]> {
    let common = tensor.common()?;
    if common.dimensions.is_null() || common.rank == 0 {
        Some(&[])
    } else {
        // SAFETY: QNN describes `rank` dimensions at `dimensions`, owned with the tensor description.
        Some(unsafe { core::slice::from_raw_parts(common.dimensions, common.rank as usize) })
    }
}

impl TensorSize {
    /// The tensor's size; `None` for an unknown tensor version, a type without a byte size or an overflow.
    pub fn of(tensor: &Tensor) -> Option<TensorSize> {
        let common = tensor.common()?;
        let elements = dimensions_of(tensor)?
            .iter()
            .try_fold(1usize, |product, &dimension| product.checked_mul(dimension as usize))?;
        let bytes = elements.checked_mul(common.data_type.element_size()?)?;
        Some(TensorSize { elements, bytes })
    }
}

/// How to convert the tensor to and from float32, if the runtime can (without reading its name, as
/// [`TensorInfo`] does).
pub fn encoding_of(tensor: &Tensor) -> Option<Encoding> {
    let common = tensor.common()?;
    Encoding::of(common.data_type, common.quantize_params.scale_offset())
}

impl<'t> TensorInfo<'t> {
    /// Reads a tensor description; `None` for an unknown tensor version or a type without a byte size.
    pub fn of(tensor: &'t Tensor) -> Option<TensorInfo<'t>> {
        let common = tensor.common()?;
        let dimensions = dimensions_of(tensor)?;
        let TensorSize { elements, bytes } = TensorSize::of(tensor)?;
        let quantization = common.quantize_params.scale_offset();
        // SAFETY: a tensor name is a NUL-terminated string owned with the tensor description, or null.
        let c_name = (!common.name.is_null()).then(|| unsafe { CStr::from_ptr(common.name) });
        Some(TensorInfo {
            // "?" when null or not UTF-8, as `c_text` answers.
            name: c_name.and_then(|name| name.to_str().ok()).unwrap_or("?"),
            c_name,
            id: common.id,
            data_type: common.data_type,
            dimensions,
            bytes,
            elements,
            quantization,
            encoding: encoding_of(tensor),
        })
    }
}
