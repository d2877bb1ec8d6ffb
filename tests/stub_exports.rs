//! The stub library carries no skel: `liblpai_direct_stub.so`, for the host and for aarch64, exports exactly the
//! C API its header declares (`lpai_direct_stub_*`) and none of the names a qaic-generated stub or the skel
//! exports (`lpai_direct_open`, `lpai_direct_close`, `lpai_direct_skel_handle_invoke`).

mod common;

use goblin::elf::{section_header::SHN_UNDEF, sym, Elf};
use std::collections::BTreeSet;

/// Names the skel (and a qaic-generated HLOS stub) exports; a stub library exporting them would clash.
const SKEL_NAMES: [&str; 3] = ["lpai_direct_open", "lpai_direct_close", "lpai_direct_skel_handle_invoke"];

/// The defined, globally visible dynamic symbols of an ELF shared object.
fn exported(relative: &str, built_by: &str) -> BTreeSet<String> {
    let bytes = std::fs::read(common::artifact(relative, built_by)).unwrap();
    let elf = Elf::parse(&bytes).unwrap_or_else(|error| panic!("{relative} is not an ELF file: {error}"));
    elf.dynsyms
        .iter()
        .filter(|symbol| symbol.st_shndx != SHN_UNDEF as usize && symbol.st_name != 0)
        .filter(|symbol| matches!(symbol.st_bind(), sym::STB_GLOBAL | sym::STB_WEAK))
        .map(|symbol| elf.dynstrtab.get_at(symbol.st_name).unwrap_or("?").to_string())
        .collect()
}

/// Every function the header declares: outside comments, `lpai_direct_stub_NAME(`.
fn declared() -> BTreeSet<String> {
    let header =
        std::fs::read_to_string(common::root().join("hlos-stub/lpai-direct-stub/include/lpai_direct_stub.h")).unwrap();
    let code =
        header.lines().filter(|line| !line.trim_start().starts_with("/*") && !line.trim_start().starts_with('*'));
    code.flat_map(|line| line.match_indices("lpai_direct_stub_").map(move |(at, _)| &line[at..]))
        .filter_map(|from| {
            let name_length = from.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
            from[name_length..].starts_with('(').then(|| from[..name_length].to_string())
        })
        .collect()
}

fn assert_only_the_c_api(relative: &str, built_by: &str) {
    let exported = exported(relative, built_by);
    for name in SKEL_NAMES {
        assert!(!exported.contains(name), "{relative} exports the skel's {name}: it must not carry the skel");
    }
    let strays: Vec<&String> = exported.iter().filter(|name| !name.starts_with("lpai_direct_stub_")).collect();
    assert!(strays.is_empty(), "{relative} exports symbols outside lpai_direct_stub_*: {strays:?}");
    let declared = declared();
    assert!(declared.len() >= 10, "the header declares {declared:?}");
    assert_eq!(exported, declared, "{relative} must export exactly the functions lpai_direct_stub.h declares");
}

#[test]
fn the_host_stub_library_exports_only_its_c_api() {
    assert_only_the_c_api("target/release/liblpai_direct_stub.so", "cargo build --release -p lpai-direct-stub");
}

#[test]
fn the_aarch64_stub_library_exports_only_its_c_api() {
    assert_only_the_c_api("target/aarch64-unknown-linux-gnu/release/liblpai_direct_stub.so", "scripts/build-hlos.sh");
}

#[test]
fn the_host_skel_library_exports_the_three_entry_points_the_local_transport_looks_up() {
    let exported = exported("target/release/liblpai_direct_skel.so", "cargo build -p lpai-direct-dsp --release");
    for name in SKEL_NAMES {
        assert!(exported.contains(name), "the host skel lacks {name}: {exported:?}");
    }
}
