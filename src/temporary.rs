//! The one naming rule for a file being written whole or not at all, on both sides: it is written under a temporary
//! name in the directory it goes to, `<name>.<token>.partial`, and renamed to `<name>` once complete. The token is
//! [`TOKEN_CHARS`] ASCII letters and digits, unique to the run (or job) that writes: the skel's are the hex digits
//! of the job's token ([`Token`]), the HLOS side's random (its temporary files are `tempfile`'s). Two runs writing
//! one directory therefore never share a temporary name, and a stub that knows its job's token can remove what the
//! skel left after a PD restart and nothing else.

/// What ends every temporary name.
pub const SUFFIX: &str = ".partial";
/// The characters of a token in a temporary name.
pub const TOKEN_CHARS: usize = 8;

/// A job's token as its temporary names carry it: the number's eight lowercase hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token([u8; TOKEN_CHARS]);

impl Token {
    /// The token of the number `value`.
    pub const fn of(value: u32) -> Token {
        Token([
            hex_digit(value >> 28),
            hex_digit(value >> 24),
            hex_digit(value >> 20),
            hex_digit(value >> 16),
            hex_digit(value >> 12),
            hex_digit(value >> 8),
            hex_digit(value >> 4),
            hex_digit(value),
        ])
    }

    /// The token's characters.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// What follows a final name to make its temporary name under this token: `.`, the token, [`SUFFIX`].
    pub fn after_name(&self) -> [&[u8]; 3] {
        [b".", &self.0, SUFFIX.as_bytes()]
    }
}

/// The lowercase hex digit of `value`'s lowest four bits.
const fn hex_digit(value: u32) -> u8 {
    let nibble = (value & 0xf) as u8;
    if nibble < 10 {
        b'0' + nibble
    } else {
        b'a' + nibble - 10
    }
}

/// The final name and the token of a temporary name; `None` when `name` is not one.
pub fn split(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_suffix(SUFFIX)?;
    let (final_name, token) = rest.rsplit_once('.')?;
    let token_ok = token.len() == TOKEN_CHARS && token.bytes().all(|byte| byte.is_ascii_alphanumeric());
    (token_ok && !final_name.is_empty()).then_some((final_name, token))
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::vec::Vec;

    #[test]
    fn a_token_names_its_temporaries_and_the_names_split_back() {
        assert_eq!(Token::of(0x00c0_ffee).as_bytes(), b"00c0ffee");
        assert_eq!(Token::of(u32::MAX).as_bytes(), b"ffffffff");
        let name: Vec<u8> =
            [&b"logits.raw"[..]].into_iter().chain(Token::of(7).after_name()).flatten().copied().collect();
        assert_eq!(name, b"logits.raw.00000007.partial");
        assert_eq!(split("logits.raw.00000007.partial"), Some(("logits.raw", "00000007")));
        // tempfile's random tokens: letters and digits.
        assert_eq!(split("staged.aZ09bQ7x.partial"), Some(("staged", "aZ09bQ7x")));
        for not_one in
            ["logits.raw", "logits.raw.partial", "x.0000007.partial", "x.0000_007.partial", ".00000007.partial"]
        {
            assert_eq!(split(not_one), None, "{not_one}");
        }
    }
}
