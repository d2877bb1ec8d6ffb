//! The PD services the shell provides: exactly the names in `linker/dsp-runtime-symbols.txt` (the PD runtime) and
//! `linker/virtual-hardware-symbols.txt` (the virtual DSP's hardware), read at build time (build.rs), so the lists
//! stay the one authority on what a PD library may leave undefined.

/// Every service name: the runtime list's, then the hardware list's, each in its order.
pub const NAMES: &[&str] = include!(concat!(env!("OUT_DIR"), "/service_names.rs"));

/// The position of `name` in [`NAMES`].
pub fn index_of(name: &[u8]) -> Option<usize> {
    NAMES.iter().position(|service| service.as_bytes() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_exactly_the_runtime_and_hardware_symbol_lists() {
        let read = |list: &str| {
            let path = format!("{}/../../linker/{list}", env!("CARGO_MANIFEST_DIR"));
            lpai_skel_fixup::parse_symbol_list(&std::fs::read_to_string(path).unwrap())
        };
        let (runtime, hardware) = (read("dsp-runtime-symbols.txt"), read("virtual-hardware-symbols.txt"));
        assert_eq!(hardware, ["lpai_vd_enpu_cores"]);
        let listed: Vec<&str> = runtime.iter().chain(&hardware).map(String::as_str).collect();
        assert_eq!(NAMES, listed);
        assert!(index_of(b"lpai_vd_enpu_cores").is_some());
        assert_eq!(index_of(b"malloc"), NAMES.iter().position(|name| *name == "malloc"));
        assert_eq!(index_of(b"printf"), None);
    }
}
