//! The virtual device's test signature, which a signed PD (`--require-signature`) wants on every library it loads:
//! a trailer of [`TRAILER_BYTES`] appended to the file, the 16 ASCII bytes [`MAGIC`] then the SHA-256
//! (`lpai_direct::sha256`) of every byte before the trailer. The trailer lies after everything the ELF headers
//! reference, so the loader reads a signed file as it reads the unsigned one.

use lpai_direct::sha256;

/// The first 16 bytes of the trailer.
pub const MAGIC: [u8; 16] = *b"LPAI-VD-TESTSIG1";
/// Bytes of the SHA-256 digest after the magic.
pub const DIGEST_BYTES: usize = 32;
/// Bytes of the whole trailer: the magic and the digest.
pub const TRAILER_BYTES: usize = MAGIC.len() + DIGEST_BYTES;

/// The trailer signing appends to `file` (the unsigned bytes): [`MAGIC`], then the SHA-256 of `file`.
pub fn trailer(file: &[u8]) -> [u8; TRAILER_BYTES] {
    let mut trailer = [0u8; TRAILER_BYTES];
    let (magic, digest) = trailer.split_at_mut(MAGIC.len());
    magic.copy_from_slice(&MAGIC);
    digest.copy_from_slice(&sha256::digest(file));
    trailer
}

/// Whether `file` ends in the trailer of the bytes before it.
pub fn is_signed(file: &[u8]) -> bool {
    let Some((signed, found)) = file.len().checked_sub(TRAILER_BYTES).and_then(|at| file.split_at_checked(at)) else {
        return false;
    };
    found == trailer(signed)
}

/// The loader's decision: whether a PD that does (`require_signature`) or does not require signed libraries
/// may load `file`. An unsigned PD loads anything the ELF loader accepts.
pub fn admits(require_signature: bool, file: &[u8]) -> bool {
    !require_signature || is_signed(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(file: &[u8]) -> std::vec::Vec<u8> {
        [file, &trailer(file)[..]].concat()
    }

    #[test]
    fn a_signed_file_is_recognised() {
        for file in [&b""[..], b"x", &[0x5A; 1000]] {
            let signed = signed(file);
            assert_eq!(signed.len(), file.len() + TRAILER_BYTES);
            assert!(is_signed(&signed) && !is_signed(file));
            assert_eq!(signed.get(file.len()..file.len() + 16), Some(&b"LPAI-VD-TESTSIG1"[..]));
        }
        // The digest is SHA-256 of the bytes before the trailer (the standard's "abc" example).
        let abc = trailer(b"abc");
        assert_eq!(abc[16..20], [0xba, 0x78, 0x16, 0xbf]);
        assert_eq!(abc[44..], [0xf2, 0x00, 0x15, 0xad]);
    }

    #[test]
    fn any_changed_byte_breaks_the_signature() {
        let file: std::vec::Vec<u8> = (0..300u32).map(|index| (index * 7) as u8).collect();
        let signed = signed(&file);
        for at in 0..signed.len() {
            let mut changed = signed.clone();
            changed[at] ^= 0x01;
            assert!(!is_signed(&changed), "a flip at byte {at} kept the signature");
        }
        assert!(!is_signed(&signed[..signed.len() - 1]));
        assert!(!is_signed(&signed[1..]));
        assert!(!is_signed(&[&signed[..], b"\0"].concat()), "bytes after the trailer");
        assert!(!is_signed(&signed[..TRAILER_BYTES - 1]));
    }

    #[test]
    fn only_a_signed_pd_asks_for_the_signature() {
        let file = b"\x7fELF not really";
        assert!(admits(false, file) && !admits(true, file));
        assert!(admits(true, &signed(file)) && admits(false, &signed(file)));
    }
}
