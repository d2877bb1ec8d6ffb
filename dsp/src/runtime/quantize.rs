//! Float ↔ fixed-point conversion with a tensor's own scale and offset, bit-exact with ONNX Runtime's
//! QuantizeLinear / DequantizeLinear: `q = saturate(round_half_even(x / scale) - offset)`,
//! `x = (q + offset) as f32 * scale` (QNN's offset is the negated zero point).

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

fn quantize_one(value: f32, scale: f32, offset: i32, low: f32, high: f32) -> i32 {
    let stepped = libm::rintf(value / scale) - offset as f32;
    if stepped.is_nan() {
        return (-offset).clamp(low as i32, high as i32);
    }
    stepped.clamp(low, high) as i32
}

/// Converts float32 values into native bytes; `native` must hold `values.len() * element_bytes()` bytes.
/// Returns false (and writes nothing) when the sizes disagree.
pub fn quantize(encoding: Encoding, values: &[f32], native: &mut [u8]) -> bool {
    if values.len().checked_mul(encoding.element_bytes()) != Some(native.len()) {
        return false;
    }
    match encoding {
        Encoding::Float32 => {
            for (value, out) in values.iter().zip(native.chunks_exact_mut(4)) {
                out.copy_from_slice(&value.to_le_bytes());
            }
        }
        Encoding::Unsigned8 { scale, offset } => {
            for (value, out) in values.iter().zip(native.iter_mut()) {
                *out = quantize_one(*value, scale, offset, 0.0, 255.0) as u8;
            }
        }
        Encoding::Signed8 { scale, offset } => {
            for (value, out) in values.iter().zip(native.iter_mut()) {
                *out = quantize_one(*value, scale, offset, -128.0, 127.0) as i8 as u8;
            }
        }
        Encoding::Unsigned16 { scale, offset } => {
            for (value, out) in values.iter().zip(native.chunks_exact_mut(2)) {
                out.copy_from_slice(&(quantize_one(*value, scale, offset, 0.0, 65535.0) as u16).to_le_bytes());
            }
        }
        Encoding::Signed16 { scale, offset } => {
            for (value, out) in values.iter().zip(native.chunks_exact_mut(2)) {
                out.copy_from_slice(&(quantize_one(*value, scale, offset, -32768.0, 32767.0) as i16).to_le_bytes());
            }
        }
    }
    true
}

/// Converts native bytes into float32 values; returns false (and writes nothing) when the sizes disagree.
pub fn dequantize(encoding: Encoding, native: &[u8], values: &mut [f32]) -> bool {
    if values.len().checked_mul(encoding.element_bytes()) != Some(native.len()) {
        return false;
    }
    let real = |q: i32, scale: f32, offset: i32| (q + offset) as f32 * scale;
    match encoding {
        Encoding::Float32 => {
            for (bytes, out) in native.chunks_exact(4).zip(values.iter_mut()) {
                *out = f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            }
        }
        Encoding::Unsigned8 { scale, offset } => {
            for (q, out) in native.iter().zip(values.iter_mut()) {
                *out = real(i32::from(*q), scale, offset);
            }
        }
        Encoding::Signed8 { scale, offset } => {
            for (q, out) in native.iter().zip(values.iter_mut()) {
                *out = real(i32::from(*q as i8), scale, offset);
            }
        }
        Encoding::Unsigned16 { scale, offset } => {
            for (bytes, out) in native.chunks_exact(2).zip(values.iter_mut()) {
                *out = real(i32::from(u16::from_le_bytes([bytes[0], bytes[1]])), scale, offset);
            }
        }
        Encoding::Signed16 { scale, offset } => {
            for (bytes, out) in native.chunks_exact(2).zip(values.iter_mut()) {
                *out = real(i32::from(i16::from_le_bytes([bytes[0], bytes[1]])), scale, offset);
            }
        }
    }
    true
}

crate::self_tests! {
    fn quantize_rounds_half_to_even_and_saturates() {
        let encoding = Encoding::Unsigned8 { scale: 0.5, offset: -10 };
        let mut native = [0u8; 6];
        check!(quantize(encoding, &[0.25, 0.75, -100.0, 1000.0, f32::NAN, 1.0], &mut native));
        // 0.25/0.5 = 0.5 -> 0 (even) + 10; 0.75/0.5 = 1.5 -> 2 + 10; saturated low and high; NaN -> zero point.
        check!(native == [10, 12, 0, 255, 10, 12]);
    }

    fn signed_and_sixteen_bit_round_trip() {
        let encoding = Encoding::Signed16 { scale: 0.001, offset: 3 };
        let values = [-1.0f32, 0.0, 0.5, 40.0];
        let mut native = [0u8; 8];
        check!(quantize(encoding, &values, &mut native));
        let mut back = [0f32; 4];
        check!(dequantize(encoding, &native, &mut back));
        check!((back[0] + 1.0).abs() < 0.001 && back[1].abs() < 0.001 && (back[2] - 0.5).abs() < 0.001);
        check!(back[3] == (32767 + 3) as f32 * 0.001);
        let signed8 = Encoding::Signed8 { scale: 1.0, offset: 0 };
        let mut byte = [0u8; 1];
        check!(quantize(signed8, &[-200.0], &mut byte) && byte[0] as i8 == -128);
    }

    fn dequantize_matches_the_reference_formula() {
        let encoding = Encoding::Unsigned16 { scale: 0.0123, offset: -32768 };
        let mut value = [0f32; 1];
        check!(dequantize(encoding, &40000u16.to_le_bytes(), &mut value));
        check!(value[0].to_bits() == ((40000 - 32768) as f32 * 0.0123f32).to_bits());
    }

    fn size_mismatches_are_refused() {
        let mut native = [0u8; 3];
        check!(!quantize(Encoding::Unsigned16 { scale: 1.0, offset: 0 }, &[1.0, 2.0], &mut native));
        let mut values = [0f32; 1];
        check!(!dequantize(Encoding::Float32, &[0, 0, 0], &mut values));
        check!(dequantize(Encoding::Float32, &1.5f32.to_le_bytes(), &mut values) && values[0] == 1.5);
    }
}
