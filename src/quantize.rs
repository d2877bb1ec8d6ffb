//! Float ↔ fixed-point conversion with a tensor's own scale and offset, bit-exact with ONNX Runtime's
//! QuantizeLinear / DequantizeLinear (the skel converts with it, and the HLOS side where a run mixes float and
//! native tensors, so both convert alike): `q = saturate(round_half_even(x / scale) - offset)`,
//! `x = (q + offset) as f32 * scale` (QNN's offset is the negated zero point).

use crate::qnn::{DataType, ScaleOffset};
use core::f32::math::mul_add;

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

/// Adding and then subtracting 1.5 × 2^23 rounds a float of magnitude below 2^22 to an integer, half to even
/// (the default rounding mode).
const ROUNDER: f32 = 12_582_912.0;
/// The bits of [`ROUNDER`]: adding it to an integer-valued float of magnitude below 2^22 adds that integer to them.
const ROUNDER_BITS: i32 = 0x4B40_0000;
/// Below this magnitude the reciprocal's estimate may be rounded directly ([`estimated_steps`]): every 8- and
/// 16-bit tensor's range with its offset fits, and the estimate's error stays below 2^-10.
const ESTIMATE_LIMIT: f32 = 4096.0;
/// How far from a half-way point an estimate must be to be certain: twice its worst error (2^-10).
const CERTAIN_DISTANCE: f32 = 0.5 - 1.0 / 512.0;

// Floats are read as native words where aligned: the byte order must be the wire's.
const _: () = assert!(cfg!(target_endian = "little"), "the float conversion reads little-endian words");

/// `round_half_even(value / scale)` estimated from `value × reciprocal` (`reciprocal = 1 / scale`, rounded), as an
/// integer, with the bits of `|estimate - rounded|` and of `|estimate|`. Below [`ESTIMATE_LIMIT`] the product is
/// within 2^-10 of the true quotient and of its rounded float (three roundings of 2^-24 relative each), so unless
/// it lies within twice that of a half-way point, both round to the same integer: the estimate is certain when
/// the first is below [`CERTAIN_DISTANCE`] and the second below the limit ([`is_certain`]). Bits of non-negative
/// floats order as the floats do, and a NaN's are above both, so a NaN is never certain. No branch, so that
/// several elements' arithmetic shares the processor's packets.
#[inline(always)]
fn estimated_steps(value: f32, reciprocal: f32) -> (i32, u32, u32) {
    let estimate = value * reciprocal;
    let shifted = estimate + ROUNDER;
    let distance = (estimate - (shifted - ROUNDER)).abs();
    ((shifted.to_bits() as i32).wrapping_sub(ROUNDER_BITS), distance.to_bits(), estimate.abs().to_bits())
}

/// Whether an estimate with these bits ([`estimated_steps`]) is certain.
#[inline(always)]
fn is_certain(distance: u32, magnitude: u32) -> bool {
    distance < CERTAIN_DISTANCE.to_bits() && magnitude < ESTIMATE_LIMIT.to_bits()
}

/// `round_half_even(value / scale)`, exactly what the division gives, dividing only when the reciprocal's estimate
/// is not certain (`estimated_steps`).
#[inline]
pub fn steps(value: f32, scale: f32, reciprocal: f32) -> f32 {
    match estimated_steps(value, reciprocal) {
        (steps, distance, magnitude) if is_certain(distance, magnitude) => steps as f32,
        _ => libm::rintf(value / scale),
    }
}

/// The mantissa bits of a float.
const MANTISSA_BITS: u32 = 0x007F_FFFF;
/// The bits of 1.0.
const ONE_BITS: u32 = 0x3F80_0000;
/// The reciprocal of the one mantissa Newton's iteration in [`newton_reciprocal`] misses, 2 - 2^-23: just above 0.5, where
/// the iteration lands on 0.5 itself.
const LAST_MANTISSA_RECIPROCAL_BITS: u32 = 0x3F00_0001;

/// `1 / scale` rounded as the division rounds it: on Hexagon, which has no divider (a division is a helper call),
/// [`newton_reciprocal`]; elsewhere the division.
pub fn reciprocal(scale: f32) -> f32 {
    // A processor with a divider divides (the same bits, in fewer instructions).
    if cfg!(target_arch = "hexagon") {
        newton_reciprocal(scale)
    } else {
        1.0 / scale
    }
}

/// `1 / scale` rounded as the division rounds it, without dividing (a helper call on Hexagon, which has no divider)
/// for every scale whose exponent field is 1..=252 (every quantized tensor's): Newton's iteration for the reciprocal
/// of the mantissa, in fused multiply-adds (one instruction each), from a linear guess within 1/17 of it; four steps
/// reach the correctly rounded reciprocal of every mantissa but one, answered as a constant (the tests try all
/// 2^23 on the host, and a sample on Hexagon); the exponent is then applied exactly, the result staying a normal
/// float. Any other scale (zero, subnormal, above 2^125, infinite, NaN) is divided.
pub fn newton_reciprocal(scale: f32) -> f32 {
    let bits = scale.to_bits();
    let exponent = (bits >> 23) & 0xFF;
    if !(1..=252).contains(&exponent) {
        return 1.0 / scale;
    }
    let inverse_mantissa = if bits & MANTISSA_BITS == MANTISSA_BITS {
        LAST_MANTISSA_RECIPROCAL_BITS
    } else {
        let mantissa = f32::from_bits(ONE_BITS | (bits & MANTISSA_BITS));
        let mut inverse = mul_add(-8.0 / 17.0, mantissa, 24.0 / 17.0);
        for _ in 0..4 {
            let error = mul_add(-mantissa, inverse, 1.0);
            inverse = mul_add(inverse, error, inverse);
        }
        inverse.to_bits()
    };
    // 1 / scale = (1 / mantissa) x 2^(127 - exponent): the exponent field moves from 126 or 127 into 1..=253.
    let exponent_shift = (127 - exponent as i32) << 23;
    f32::from_bits((inverse_mantissa as i32).wrapping_add(exponent_shift) as u32 | (bits & 0x8000_0000))
}

/// `saturate(steps - offset)` as an integer; NaN becomes the zero point.
#[inline(always)]
fn saturated(steps: f32, offset: i32, low: f32, high: f32) -> i32 {
    let stepped = steps - offset as f32;
    let stepped = if stepped.is_nan() { -(offset as f32) } else { stepped };
    bounded(stepped, low, high) as i32
}

/// One element: `saturate(round_half_even(value / scale) - offset)`; NaN becomes the zero point.
#[inline]
fn quantize_one(value: f32, scale: f32, reciprocal: f32, offset: i32, low: f32, high: f32) -> i32 {
    saturated(steps(value, scale, reciprocal), offset, low, high)
}

/// The constants of one conversion to one byte per element: a saturated step count in `low..=high` is written as
/// its low byte, the same byte for a signed and an unsigned type (so both share this code).
struct ToBytes {
    scale: f32,
    reciprocal: f32,
    offset: i32,
    /// The offset bounded to ±2^24, beyond which every result saturates alike.
    near_offset: i32,
    low: i32,
    high: i32,
}

impl ToBytes {
    /// One element, the general way (out of line: groups take it only near half-way points).
    #[inline(never)]
    fn one(&self, value: f32) -> u8 {
        let (low, high) = (self.low as f32, self.high as f32);
        quantize_one(value, self.scale, self.reciprocal, self.offset, low, high) as u8
    }

    /// Four elements, written out straight: their independent arithmetic fills the processor's packets, in integers
    /// once the estimates are certain; only a group holding an uncertain estimate divides. A certain estimate is
    /// below 2^12, so its difference with the (near) offset is the float path's exactly.
    #[inline(always)]
    fn four(&self, [a, b, c, d]: [f32; 4]) -> [u8; 4] {
        let (a_steps, a_distance, a_magnitude) = estimated_steps(a, self.reciprocal);
        let (b_steps, b_distance, b_magnitude) = estimated_steps(b, self.reciprocal);
        let (c_steps, c_distance, c_magnitude) = estimated_steps(c, self.reciprocal);
        let (d_steps, d_distance, d_magnitude) = estimated_steps(d, self.reciprocal);
        let distance = a_distance.max(b_distance).max(c_distance.max(d_distance));
        let magnitude = a_magnitude.max(b_magnitude).max(c_magnitude.max(d_magnitude));
        if !is_certain(distance, magnitude) {
            return [self.one(a), self.one(b), self.one(c), self.one(d)];
        }
        let byte = |steps: i32| steps.wrapping_sub(self.near_offset).max(self.low).min(self.high) as u8;
        [byte(a_steps), byte(b_steps), byte(c_steps), byte(d_steps)]
    }

    /// Converts `float_bytes` into `native`, whose sizes agree (checked by the caller): whole words four at a time
    /// when the floats are 4-byte aligned (as the FastRPC framework and the arena place them), else one by one.
    fn convert(&self, float_bytes: &[u8], native: &mut [u8]) {
        let (outputs, native_tail) = native.as_chunks_mut::<4>();
        // SAFETY: every bit pattern is a valid f32; `align_to` only reinterprets the aligned middle.
        let (unaligned, words, _) = unsafe { float_bytes.align_to::<f32>() };
        if !unaligned.is_empty() {
            for (out, word) in native.iter_mut().zip(float_bytes.as_chunks::<4>().0) {
                *out = self.one(f32::from_le_bytes(*word));
            }
            return;
        }
        let (groups, _) = words.as_chunks::<4>();
        for (values, output) in groups.iter().zip(outputs.iter_mut()) {
            *output = self.four(*values);
        }
        let float_tail = float_bytes.get(groups.len() * 16..).unwrap_or(&[]);
        for (out, bytes) in native_tail.iter_mut().zip(float_tail.as_chunks::<4>().0) {
            *out = self.one(f32::from_le_bytes(*bytes));
        }
    }
}

/// Quantizes to one byte per element with [`ToBytes`].
fn quantize_bytes(float_bytes: &[u8], native: &mut [u8], (scale, offset): (f32, i32), (low, high): (i32, i32)) {
    let near_offset = offset.clamp(-(1 << 24), 1 << 24);
    let conversion = ToBytes { scale, reciprocal: reciprocal(scale), offset, near_offset, low, high };
    conversion.convert(float_bytes, native);
}

/// The float values in little-endian bytes, 4 per element.
fn floats(le_bytes: &[u8]) -> impl Iterator<Item = f32> + '_ {
    le_bytes.as_chunks::<4>().0.iter().map(|word| f32::from_le_bytes(*word))
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
    // Chunks of a constant size (`as_chunks`), so that zipping them keeps no division the compiler cannot prove
    // safe (a panic path in the skel).
    let values = floats(float_bytes);
    match encoding {
        Encoding::Float32 => {
            for (out, value) in native.as_chunks_mut::<4>().0.iter_mut().zip(values) {
                *out = value.to_le_bytes();
            }
        }
        // Signed and unsigned types share their code: a step count within the type's bounds is written as its low
        // byte or bytes, the same bits `as i8` or `as i16` would give.
        Encoding::Unsigned8 { scale, offset } | Encoding::Signed8 { scale, offset } => {
            let bounds = if matches!(encoding, Encoding::Signed8 { .. }) { (-128, 127) } else { (0, 255) };
            quantize_bytes(float_bytes, native, (scale, offset), bounds)
        }
        Encoding::Unsigned16 { scale, offset } | Encoding::Signed16 { scale, offset } => {
            let (low, high) =
                if matches!(encoding, Encoding::Signed16 { .. }) { (-32768.0, 32767.0) } else { (0.0, 65535.0) };
            let reciprocal = reciprocal(scale);
            for (out, value) in native.as_chunks_mut::<2>().0.iter_mut().zip(values) {
                *out = (quantize_one(value, scale, reciprocal, offset, low, high) as u16).to_le_bytes();
            }
        }
    }
    true
}

/// `(q + offset) as f32 * scale`, QNN's (and ONNX Runtime's) dequantization.
fn real(q: i32, scale: f32, offset: i32) -> f32 {
    (i64::from(q) + i64::from(offset)) as f32 * scale
}

/// Writes `values` as little-endian float32 into `float_bytes`.
fn put_floats(values: impl Iterator<Item = f32>, float_bytes: &mut [u8]) {
    for (out, value) in float_bytes.as_chunks_mut::<4>().0.iter_mut().zip(values) {
        *out = value.to_le_bytes();
    }
}

/// Converts native bytes into float32 values (little-endian bytes, 4 per element).
/// Returns false, writing nothing, when the two sizes do not describe the same number of elements.
pub fn dequantize(encoding: Encoding, native: &[u8], float_bytes: &mut [u8]) -> bool {
    if !sizes_agree(encoding, float_bytes.len(), native.len()) {
        return false;
    }
    let halves = native.as_chunks::<2>().0.iter();
    match encoding {
        Encoding::Float32 => put_floats(floats(native), float_bytes),
        Encoding::Unsigned8 { scale, offset } => {
            put_floats(native.iter().map(|&q| real(i32::from(q), scale, offset)), float_bytes)
        }
        Encoding::Signed8 { scale, offset } => {
            put_floats(native.iter().map(|&q| real(i32::from(q as i8), scale, offset)), float_bytes)
        }
        Encoding::Unsigned16 { scale, offset } => {
            put_floats(halves.map(|&q| real(i32::from(u16::from_le_bytes(q)), scale, offset)), float_bytes)
        }
        Encoding::Signed16 { scale, offset } => {
            put_floats(halves.map(|&q| real(i32::from(i16::from_le_bytes(q)), scale, offset)), float_bytes)
        }
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

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    /// Whether two floats are the same bits, or both NaN.
    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn the_reciprocal_is_the_division_for_every_mantissa_and_exponent() {
        // Every mantissa (every 65,537th under Miri) at one exponent: the iteration depends on the mantissa alone.
        let step = if cfg!(miri) { 65_537 } else { 1 };
        for mantissa in (0..1u32 << 23).step_by(step).chain([super::MANTISSA_BITS]) {
            let scale = f32::from_bits(super::ONE_BITS | mantissa);
            assert!(same(super::newton_reciprocal(scale), 1.0 / scale), "mantissa {mantissa:#x}");
        }
        // Every exponent field, either sign, with edge and random mantissas: the exponent is applied exactly, and
        // the scales outside 1..=252 are divided.
        let mut random = fastrand::Rng::with_seed(0x1e_c1b5);
        for exponent in 0..=255u32 {
            for sign in [0, 0x8000_0000] {
                let edges = [0, 1, 0x40_0000, super::MANTISSA_BITS - 1, super::MANTISSA_BITS];
                let randoms: Vec<u32> = (0..if cfg!(miri) { 2 } else { 200 }).map(|_| random.u32(..1 << 23)).collect();
                for mantissa in edges.into_iter().chain(randoms) {
                    let scale = f32::from_bits(sign | exponent << 23 | mantissa);
                    assert!(
                        same(super::newton_reciprocal(scale), 1.0 / scale),
                        "scale {scale:e} ({:#x})",
                        scale.to_bits()
                    );
                }
            }
        }
    }

    /// The division the conversion stands for: `round_half_even(value / scale)`.
    fn reference(value: f32, scale: f32) -> f32 {
        libm::rintf(value / scale)
    }

    fn agrees(value: f32, scale: f32) -> bool {
        let fast = super::steps(value, scale, 1.0 / scale);
        let slow = reference(value, scale);
        // Equal as numbers: the sign of a zero does not survive subtracting the offset and saturating.
        fast == slow || (fast.is_nan() && slow.is_nan())
    }

    #[test]
    fn the_reciprocal_gives_what_the_division_gives() {
        let mut random = fastrand::Rng::with_seed(0x51ee7);
        // Miri runs this too (slowly): a few hundred pairs there, the whole million natively.
        let pairs: u64 = if cfg!(miri) { 100 } else { 200_000 };
        let mut checked = 0u64;
        for _ in 0..pairs {
            // Scales as quantized tensors have them (2^-20 to 2^4, any mantissa) and values around their range.
            let scale = f32::from_bits(random.u32(0x3580_0000..0x4180_0000));
            // Mostly where the estimate may be used (below 4,096 steps), some beyond.
            let range = if random.bool() { -4_200..4_200 } else { -70_000..70_000 };
            let steps = random.i32(range) as f32;
            for value in [
                (steps + 0.5) * scale,
                (steps + 0.5 + f32::EPSILON) * scale,
                steps * scale,
                (steps + random.f32()) * scale,
                f32::from_bits(f32::to_bits((steps + 0.5) * scale).wrapping_add(random.u32(0..5)).wrapping_sub(2)),
            ] {
                assert!(
                    agrees(value, scale),
                    "value {value:e} ({:#x}) scale {scale:e} ({:#x})",
                    value.to_bits(),
                    scale.to_bits()
                );
                checked += 1;
            }
        }
        for value in [0.0, -0.0, f32::NAN, f32::INFINITY, -f32::INFINITY, f32::MAX, f32::MIN_POSITIVE, 1e-40, -1e30] {
            for scale in [1.0, 0.003_921_569, 1e-38, 1e-45, 3.0e38, 0.0, -0.5] {
                assert!(agrees(value, scale), "value {value:e} scale {scale:e}");
                checked += 1;
            }
        }
        assert!(checked > pairs * 5);
    }

    /// `saturate(round_half_even(value / scale) - offset)`, element by element, with the division.
    fn reference_bytes(values: &[f32], scale: f32, offset: i32, (low, high): (f32, f32)) -> Vec<i32> {
        let one = |value: f32| {
            let stepped = libm::rintf(value / scale) - offset as f32;
            let stepped = if stepped.is_nan() { -(offset as f32) } else { stepped };
            stepped.max(low).min(high) as i32
        };
        values.iter().map(|&value| one(value)).collect()
    }

    #[test]
    fn whole_buffers_convert_as_each_element_would_aligned_or_not() {
        let mut random = fastrand::Rng::with_seed(7);
        for round in 0..if cfg!(miri) { 20 } else { 3_000 } {
            let count = random.usize(0..41);
            let scale = f32::from_bits(random.u32(0x3780_0000..0x3f80_0000));
            let offset = if round % 50 == 0 { random.i32(..) } else { random.i32(-300..300) };
            let values: Vec<f32> = (0..count)
                .map(|_| match random.u8(0..20) {
                    0 => f32::NAN,
                    1 => (random.i32(-400..400) as f32 + 0.5) * scale,
                    2 => f32::from_bits(random.u32(..)),
                    _ => (random.f32() - 0.5) * 600.0 * scale,
                })
                .collect();
            let mut bytes: Vec<u8> = vec![0; 1];
            bytes.extend(values.iter().flat_map(|value| value.to_le_bytes()));
            for start in [0, 1] {
                let floats = if start == 1 { &bytes[1..] } else { &bytes[1..].to_vec()[..] };
                let unsigned = super::Encoding::Unsigned8 { scale, offset };
                let mut native = vec![0u8; count];
                assert!(super::quantize(unsigned, floats, &mut native));
                let expected = reference_bytes(&values, scale, offset, (0.0, 255.0));
                assert_eq!(native.iter().map(|&q| i32::from(q)).collect::<Vec<_>>(), expected, "u8, start {start}");
                let signed = super::Encoding::Signed8 { scale, offset };
                assert!(super::quantize(signed, floats, &mut native));
                let expected = reference_bytes(&values, scale, offset, (-128.0, 127.0));
                assert_eq!(
                    native.iter().map(|&q| i32::from(q as i8)).collect::<Vec<_>>(),
                    expected,
                    "i8, start {start}"
                );
            }
        }
    }

    /// The plain types have no scale: a float converts by value (`round_half_even`, saturated to the type; NaN is 0)
    /// and back exactly. INT_8, INT_16 and UINT_16 have no ORT fixture (the HTP backend refuses every op on them), so
    /// this formula is all that checks them; UINT_8 and BOOL_8 are also held to ORT by the `u8_bool_io` fixture.
    #[test]
    fn plain_integers_and_bool_convert_by_value() {
        use crate::qnn::DataType;
        let values = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1.5,
            2.5,
            -2.5,
            3.5,
            126.6,
            127.0,
            127.5,
            128.0,
            -128.0,
            -128.5,
            -129.0,
            255.0,
            255.5,
            256.0,
            32_767.0,
            32_767.5,
            32_768.0,
            -32_768.0,
            -32_769.0,
            65_535.0,
            65_536.0,
            1e30,
            -1e30,
            f32::INFINITY,
            f32::NAN,
        ];
        let float_bytes: Vec<u8> = values.iter().flat_map(|value| value.to_le_bytes()).collect();
        let types = [
            (DataType::INT_8, -128.0, 127.0, 1),
            (DataType::UINT_8, 0.0, 255.0, 1),
            (DataType::BOOL_8, 0.0, 255.0, 1),
            (DataType::INT_16, -32_768.0, 32_767.0, 2),
            (DataType::UINT_16, 0.0, 65_535.0, 2),
        ];
        for (data_type, low, high, width) in types {
            let signed = low < 0.0;
            let encoding = super::Encoding::of(data_type, None).unwrap();
            assert_eq!(encoding.element_bytes(), width, "{data_type:?}");
            let read = |bytes: &[u8]| -> i32 {
                match (width, signed) {
                    (1, true) => i32::from(bytes[0] as i8),
                    (1, false) => i32::from(bytes[0]),
                    (_, true) => i32::from(i16::from_le_bytes([bytes[0], bytes[1]])),
                    (_, false) => i32::from(u16::from_le_bytes([bytes[0], bytes[1]])),
                }
            };
            let mut native = vec![0u8; values.len() * width];
            assert!(super::quantize(encoding, &float_bytes, &mut native));
            let got: Vec<i32> = native.chunks_exact(width).map(read).collect();
            let expected: Vec<i32> = values
                .iter()
                .map(|&value| if value.is_nan() { 0 } else { libm::rintf(value).max(low).min(high) as i32 })
                .collect();
            assert_eq!(got, expected, "{data_type:?}");
            // Every native value (every 257th under Miri) back to float32 by value.
            let all: Vec<i32> = (low as i32..=high as i32).step_by(if cfg!(miri) { 257 } else { 1 }).collect();
            let native: Vec<u8> = all.iter().flat_map(|&q| q.to_le_bytes()[..width].to_vec()).collect();
            let mut back = vec![0u8; all.len() * 4];
            assert!(super::dequantize(encoding, &native, &mut back));
            let floats: Vec<f32> =
                back.chunks_exact(4).map(|word| f32::from_le_bytes(word.try_into().unwrap())).collect();
            assert_eq!(floats, all.iter().map(|&q| q as f32).collect::<Vec<_>>(), "{data_type:?}");
        }
        // A scale recorded on a plain tensor changes nothing.
        let recorded = Some(crate::qnn::ScaleOffset { scale: 0.5, offset: 3 });
        assert_eq!(
            super::Encoding::of(DataType::INT_16, recorded),
            Some(super::Encoding::Signed16 { scale: 1.0, offset: 0 })
        );
    }
}
