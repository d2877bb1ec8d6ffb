//! SHA-256 (FIPS 180-4) with no panic path, for the hash a metadata record carries of its binary. The `sha2` crate
//! computes the same digest, but its block code keeps `unwrap` and slice-length panics the compiler cannot remove
//! for Hexagon, and no panic may be reachable from the skel's entry points; the host tests check this one against
//! `sha2` and the standard's examples.

/// The round constants: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
];

/// The initial hash value: the first 32 bits of the fractional parts of the square roots of the first 8 primes.
const INITIAL: [u32; 8] =
    [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/// Bytes of one block.
const BLOCK: usize = 64;

/// Folds one 64-byte block into `state`.
fn compress(state: &mut [u32; 8], block: &[u8; BLOCK]) {
    // Index loops over fixed-size arrays: their bounds are known, so no check (and no panic path) remains, where
    // `zip` over `chunks_exact` would keep a division by the chunk size.
    let mut schedule = [0u32; 64];
    #[allow(clippy::needless_range_loop)] // reason: the index loop is what keeps the bounds provable
    for index in 0..16 {
        let at = 4 * index;
        schedule[index] = u32::from_be_bytes([block[at], block[at + 1], block[at + 2], block[at + 3]]);
    }
    for index in 16..64 {
        let (w2, w7, w15, w16) = (schedule[index - 2], schedule[index - 7], schedule[index - 15], schedule[index - 16]);
        let sigma0 = w15.rotate_right(7) ^ w15.rotate_right(18) ^ (w15 >> 3);
        let sigma1 = w2.rotate_right(17) ^ w2.rotate_right(19) ^ (w2 >> 10);
        schedule[index] = w16.wrapping_add(sigma0).wrapping_add(w7).wrapping_add(sigma1);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for (constant, word) in K.iter().zip(schedule) {
        let sum1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let choice = (e & f) ^ (!e & g);
        let first = h.wrapping_add(sum1).wrapping_add(choice).wrapping_add(*constant).wrapping_add(word);
        let sum0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let majority = (a & b) ^ (a & c) ^ (b & c);
        let second = sum0.wrapping_add(majority);
        h = g;
        g = f;
        f = e;
        e = d.wrapping_add(first);
        d = c;
        c = b;
        b = a;
        a = first.wrapping_add(second);
    }
    for (value, added) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *value = value.wrapping_add(added);
    }
}

/// The SHA-256 digest of `message`.
pub fn digest(message: &[u8]) -> [u8; 32] {
    let mut state = INITIAL;
    let (blocks, tail) = message.as_chunks::<BLOCK>();
    for block in blocks {
        compress(&mut state, block);
    }
    // The tail, the 0x80 marker and the length in bits fill one block, or two when the tail leaves under 9 bytes.
    let mut last = [0u8; 2 * BLOCK];
    crate::codec::copy_prefix(&mut last, tail);
    if let Some(marker) = last.get_mut(tail.len()) {
        *marker = 0x80;
    }
    let used = if tail.len() + 9 > BLOCK { 2 * BLOCK } else { BLOCK };
    let bits = (message.len() as u64).wrapping_mul(8);
    crate::codec::copy_prefix(last.get_mut(used - 8..).unwrap_or_default(), &bits.to_be_bytes());
    for block in last.as_chunks::<BLOCK>().0.iter().take(used / BLOCK) {
        compress(&mut state, block);
    }
    let mut out = [0u8; 32];
    for (bytes, word) in out.as_chunks_mut::<4>().0.iter_mut().zip(state) {
        *bytes = word.to_be_bytes();
    }
    out
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use sha2::Digest as _;

    fn hex(bytes: &[u8]) -> std::string::String {
        bytes.iter().map(|byte| std::format!("{byte:02x}")).collect()
    }

    #[test]
    fn the_standards_examples() {
        assert_eq!(hex(&digest(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(hex(&digest(b"")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        let two_blocks = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        assert_eq!(hex(&digest(two_blocks)), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    }

    #[test]
    fn every_length_around_the_block_edges_matches_sha2() {
        let data: std::vec::Vec<u8> = (0..1000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        let lengths = (0..200).chain([447, 448, 511, 512, 513, 999, 1000]);
        for length in lengths {
            let expected: [u8; 32] = sha2::Sha256::digest(&data[..length]).into();
            assert_eq!(digest(&data[..length]), expected, "length {length}");
        }
    }
}
