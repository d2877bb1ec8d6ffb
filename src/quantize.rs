//! Float ↔ fixed-point conversion with a tensor's own scale and offset, bit-exact with ONNX Runtime's
//! QuantizeLinear / DequantizeLinear (the skel converts with it, and the HLOS side where a run mixes float and
//! native tensors, so both convert alike): `q = saturate(round_half_even(x / scale) - offset)`,
//! `x = (q + offset) as f32 * scale` (QNN's offset is the negated zero point).

use crate::codec::copy_prefix;
use crate::qnn::{DataType, ScaleOffset};

/// Element encodings the runtime converts between float32 and the tensor's native bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Encoding {
    /// float32, passed through.
    Float32,
    /// Unsigned 8-bit fixed point.
    Unsigned8 {
        /// Scale of one step.
        scale: f32,
        /// QNN offset (negated zero point).
        offset: i32,
    },
    /// Unsigned 16-bit fixed point.
    Unsigned16 {
        /// Scale of one step.
        scale: f32,
        /// QNN offset (negated zero point).
        offset: i32,
    },
    /// Signed 8-bit fixed point.
    Signed8 {
        /// Scale of one step.
        scale: f32,
        /// QNN offset (negated zero point).
        offset: i32,
    },
    /// Signed 16-bit fixed point.
    Signed16 {
        /// Scale of one step.
        scale: f32,
        /// QNN offset (negated zero point).
        offset: i32,
    },
}

impl Encoding {
    /// The encoding of a tensor of `data_type` with its scale and offset (`None` when it has none); `None` for the
    /// types with no float32 conversion.
    pub fn of(data_type: DataType, scale_offset: Option<ScaleOffset>) -> Option<Encoding> {
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

    /// Bytes of one element in native form.
    pub fn element_bytes(self) -> usize {
        match self {
            Encoding::Float32 => 4,
            Encoding::Unsigned8 { .. } | Encoding::Signed8 { .. } => 1,
            Encoding::Unsigned16 { .. } | Encoding::Signed16 { .. } => 2,
        }
    }
}

fn bounded(value: f32, low: f32, high: f32) -> f32 {
    if value < low {
        low
    } else if value > high {
        high
    } else {
        value
    }
}

/// One element: `saturate(round_half_even(value / scale) - offset)`; NaN becomes the zero point.
fn quantize_one(value: f32, scale: f32, offset: i32, low: f32, high: f32) -> i32 {
    let stepped = libm::rintf(value / scale) - offset as f32;
    let stepped = if stepped.is_nan() { -(offset as f32) } else { stepped };
    bounded(stepped, low, high) as i32
}

/// The float values in little-endian bytes, 4 per element.
fn floats(le_bytes: &[u8]) -> impl Iterator<Item = f32> + '_ {
    le_bytes.chunks_exact(4).map(|chunk| {
        let mut word = [0u8; 4];
        copy_prefix(&mut word, chunk);
        f32::from_le_bytes(word)
    })
}

/// Whether `float_bytes` and `native` describe the same number of elements.
fn sizes_agree(encoding: Encoding, float_bytes: usize, native: usize) -> bool {
    float_bytes.is_multiple_of(4) && (float_bytes / 4).checked_mul(encoding.element_bytes()) == Some(native)
}

/// Converts float32 values (little-endian bytes, 4 per element) into native bytes.
/// Returns false, writing nothing, when the two sizes do not describe the same number of elements.
pub fn quantize(encoding: Encoding, float_bytes: &[u8], native: &mut [u8]) -> bool {
    if !sizes_agree(encoding, float_bytes.len(), native.len()) {
        return false;
    }
    let mut values = floats(float_bytes);
    match encoding {
        Encoding::Float32 => fill(native.chunks_exact_mut(4), &mut values, |value, out| {
            copy_prefix(out, &value.to_le_bytes());
        }),
        Encoding::Unsigned8 { scale, offset } => fill(native.chunks_exact_mut(1), &mut values, |value, out| {
            copy_prefix(out, &[quantize_one(value, scale, offset, 0.0, 255.0) as u8]);
        }),
        Encoding::Signed8 { scale, offset } => fill(native.chunks_exact_mut(1), &mut values, |value, out| {
            copy_prefix(out, &[quantize_one(value, scale, offset, -128.0, 127.0) as i8 as u8]);
        }),
        Encoding::Unsigned16 { scale, offset } => fill(native.chunks_exact_mut(2), &mut values, |value, out| {
            copy_prefix(out, &(quantize_one(value, scale, offset, 0.0, 65535.0) as u16).to_le_bytes());
        }),
        Encoding::Signed16 { scale, offset } => fill(native.chunks_exact_mut(2), &mut values, |value, out| {
            copy_prefix(out, &(quantize_one(value, scale, offset, -32768.0, 32767.0) as i16).to_le_bytes());
        }),
    }
    true
}

/// Pairs each output chunk with the next value; a plain loop, because `zip` over `ChunksExact` keeps a
/// division by the chunk size that the compiler cannot prove safe (a panic path in the skel).
fn fill<'o>(
    outputs: impl Iterator<Item = &'o mut [u8]>,
    values: &mut impl Iterator<Item = f32>,
    mut write: impl FnMut(f32, &mut [u8]),
) {
    for out in outputs {
        match values.next() {
            Some(value) => write(value, out),
            None => break,
        }
    }
}

/// `(q + offset) as f32 * scale`, QNN's (and ONNX Runtime's) dequantization.
fn real(q: i32, scale: f32, offset: i32) -> f32 {
    (i64::from(q) + i64::from(offset)) as f32 * scale
}

/// Writes `values` as little-endian float32 into `float_bytes`.
fn put_floats(mut values: impl Iterator<Item = f32>, float_bytes: &mut [u8]) {
    fill(float_bytes.chunks_exact_mut(4), &mut values, |value, out| {
        copy_prefix(out, &value.to_le_bytes());
    });
}

/// Converts native bytes into float32 values (little-endian bytes, 4 per element).
/// Returns false, writing nothing, when the two sizes do not describe the same number of elements.
pub fn dequantize(encoding: Encoding, native: &[u8], float_bytes: &mut [u8]) -> bool {
    if !sizes_agree(encoding, float_bytes.len(), native.len()) {
        return false;
    }
    let pair = |chunk: &[u8]| {
        let mut half = [0u8; 2];
        copy_prefix(&mut half, chunk);
        half
    };
    match encoding {
        Encoding::Float32 => put_floats(floats(native), float_bytes),
        Encoding::Unsigned8 { scale, offset } => {
            put_floats(native.iter().map(|&q| real(i32::from(q), scale, offset)), float_bytes)
        }
        Encoding::Signed8 { scale, offset } => {
            put_floats(native.iter().map(|&q| real(i32::from(q as i8), scale, offset)), float_bytes)
        }
        Encoding::Unsigned16 { scale, offset } => put_floats(
            native.chunks_exact(2).map(|q| real(i32::from(u16::from_le_bytes(pair(q))), scale, offset)),
            float_bytes,
        ),
        Encoding::Signed16 { scale, offset } => put_floats(
            native.chunks_exact(2).map(|q| real(i32::from(i16::from_le_bytes(pair(q))), scale, offset)),
            float_bytes,
        ),
    }
    true
}

/// Little-endian bytes of float values, for tests and callers holding `f32`s.
pub fn float_bytes<const N: usize, const B: usize>(values: [f32; N]) -> [u8; B] {
    let mut bytes = [0u8; B];
    for (value, out) in values.iter().zip(bytes.chunks_exact_mut(4)) {
        out.copy_from_slice(&value.to_le_bytes());
    }
    bytes
}
