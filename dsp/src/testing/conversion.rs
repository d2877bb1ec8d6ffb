//! Self-tests of float ↔ fixed-point conversion ([`lpai_direct::quantize`]) with this processor's floating point:
//! rounding half to even, saturation, round trips, the reference formula, the reciprocal rule, the reciprocal
//! without division, size refusals.

use lpai_direct::quantize::*;

fn first_float(bytes: &[u8]) -> f32 {
    let mut word = [0u8; 4];
    lpai_direct::codec::copy_prefix(&mut word, bytes);
    f32::from_le_bytes(word)
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

    fn the_reciprocal_gives_what_the_division_gives_on_this_processor() {
        // The shared core's host test checks a million pairs; this checks the same rule with this processor's
        // floating point: half-way points and their neighbours, over scales 2^-20 to 2^4 and about the steps where
        // the estimate may be used.
        let mut state = 0x2545_f491u32;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        for _ in 0..if cfg!(miri) { 50 } else { 2_000 } {
            let scale = f32::from_bits(0x3580_0000 + next() % 0x0c00_0000);
            let steps = (next() % 9_000) as f32 - 4_500.0;
            let half = (steps + 0.5) * scale;
            for value in [half, f32::from_bits(half.to_bits() + 1), f32::from_bits(half.to_bits() - 1), steps * scale] {
                let (fast, slow) = (lpai_direct::quantize::steps(value, scale, 1.0 / scale), libm::rintf(value / scale));
                check!(fast == slow);
            }
        }
    }

    fn the_reciprocal_without_division_is_the_division_on_this_processor() {
        // The shared core's host test tries every mantissa; this tries every 97th, the last one and each exponent's
        // edges with this processor's fused multiply-add, as the quantization runs it.
        for mantissa in (0..1u32 << 23).step_by(if cfg!(miri) { 65_537 } else { 97 }).chain([0x7F_FFFF]) {
            let scale = f32::from_bits(0x3F80_0000 | mantissa);
            check!(newton_reciprocal(scale).to_bits() == (1.0 / scale).to_bits());
        }
        for exponent in 0..=255u32 {
            for mantissa in [0, 1, 0x40_0000, 0x7F_FFFE, 0x7F_FFFF] {
                let scale = f32::from_bits(exponent << 23 | mantissa);
                let (ours, division) = (newton_reciprocal(scale), 1.0 / scale);
                check!(ours.to_bits() == division.to_bits() || (ours.is_nan() && division.is_nan()));
            }
        }
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
