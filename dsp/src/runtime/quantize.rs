//! Float ↔ fixed-point conversion with a tensor's own scale and offset, bit-exact with ONNX Runtime's
//! QuantizeLinear / DequantizeLinear: `q = saturate(round_half_even(x / scale) - offset)`,
//! `x = (q + offset) as f32 * scale` (QNN's offset is the negated zero point).

use lpai_direct::codec::copy_prefix;

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

#[cfg(any(test, feature = "self-test"))]
fn first_float(bytes: &[u8]) -> f32 {
    floats(bytes).next().unwrap_or(f32::NAN)
}

crate::self_tests! {
    fn quantize_rounds_half_to_even_and_saturates() {
        let encoding = Encoding::Unsigned8 { scale: 0.5, offset: -10 };
        let mut native = [0u8; 6];
        let values: [u8; 24] = float_bytes([0.25, 0.75, -100.0, 1000.0, f32::NAN, 1.0]);
        check!(quantize(encoding, &values, &mut native));
        // 0.25/0.5 = 0.5 -> 0 (even) + 10; 0.75/0.5 = 1.5 -> 2 + 10; saturated low and high; NaN -> zero point.
        check!(native == [10, 12, 0, 255, 10, 12]);
    }

    fn signed_and_sixteen_bit_round_trip() {
        let encoding = Encoding::Signed16 { scale: 0.001, offset: 3 };
        let values: [u8; 16] = float_bytes([-1.0, 0.0, 0.5, 40.0]);
        let mut native = [0u8; 8];
        check!(quantize(encoding, &values, &mut native));
        let mut back = [0u8; 16];
        check!(dequantize(encoding, &native, &mut back));
        let back: [f32; 4] = core::array::from_fn(|i| first_float(&back[i * 4..]));
        check!((back[0] + 1.0).abs() < 0.001 && back[1].abs() < 0.001 && (back[2] - 0.5).abs() < 0.001);
        check!(back[3] == (32767 + 3) as f32 * 0.001);
        let signed8 = Encoding::Signed8 { scale: 1.0, offset: 0 };
        let mut byte = [0u8; 1];
        check!(quantize(signed8, &(-200.0f32).to_le_bytes(), &mut byte) && byte[0] as i8 == -128);
    }

    fn dequantize_matches_the_reference_formula() {
        let encoding = Encoding::Unsigned16 { scale: 0.0123, offset: -32768 };
        let mut value = [0u8; 4];
        check!(dequantize(encoding, &40000u16.to_le_bytes(), &mut value));
        check!(first_float(&value).to_bits() == ((40000 - 32768) as f32 * 0.0123f32).to_bits());
    }

    fn size_mismatches_are_refused() {
        let mut native = [0u8; 3];
        let two: [u8; 8] = float_bytes([1.0, 2.0]);
        check!(!quantize(Encoding::Unsigned16 { scale: 1.0, offset: 0 }, &two, &mut native));
        check!(!quantize(Encoding::Float32, &two[..7], &mut [0u8; 4]));
        let mut value = [0u8; 4];
        check!(!dequantize(Encoding::Float32, &[0, 0, 0], &mut value));
        check!(dequantize(Encoding::Float32, &1.5f32.to_le_bytes(), &mut value) && first_float(&value) == 1.5);
    }
}
