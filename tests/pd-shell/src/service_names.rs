//! The PD services the shell provides: exactly the names in `linker/dsp-runtime-symbols.txt`, read at build time
//! (build.rs), so the list stays the one authority on what a PD library may leave undefined.

/// Every service name, in the list's order.
pub const NAMES: &[&str] = include!(concat!(env!("OUT_DIR"), "/service_names.rs"));

/// The position of `name` in [`NAMES`].
pub fn index_of(name: &[u8]) -> Option<usize> {
    NAMES.iter().position(|service| service.as_bytes() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_exactly_the_runtime_symbol_list() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../linker/dsp-runtime-symbols.txt");
        let listed = lpai_skel_fixup::parse_symbol_list(&std::fs::read_to_string(path).unwrap());
        assert_eq!(NAMES, listed.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(index_of(b"malloc"), NAMES.iter().position(|name| *name == "malloc"));
        assert_eq!(index_of(b"printf"), None);
    }
}
