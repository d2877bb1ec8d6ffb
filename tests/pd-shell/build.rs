//! Makes the two symbol lists the authority on the PD services: `linker/dsp-runtime-symbols.txt` (what any PD
//! library may leave undefined) and `linker/virtual-hardware-symbols.txt` (the virtual DSP's hardware services,
//! for the contract model). Writes `$OUT_DIR/service_names.rs` (the names of both lists in order, for the loader)
//! and `$OUT_DIR/service_table.rs` (one `service_table!` invocation naming a function of each name in the shell's
//! `services` module, so a listed service the shell lacks fails the build).

use std::fmt::Write;

/// The lists, in the order their names are offered.
const LISTS: [&str; 2] = ["linker/dsp-runtime-symbols.txt", "linker/virtual-hardware-symbols.txt"];

/// The names of one list, checked to be C identifiers.
fn read_list(relative: &str) -> Vec<String> {
    let list = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(relative);
    println!("cargo:rerun-if-changed={}", list.display());
    let text = std::fs::read_to_string(&list).unwrap_or_else(|error| panic!("cannot read {}: {error}", list.display()));
    // The same reading as lpai_skel_fixup::parse_symbol_list: trimmed lines, no blanks, no `#` comments.
    let names: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(String::from)
        .collect();
    for name in &names {
        let identifier = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        assert!(identifier, "{}: `{name}` is not a C identifier", list.display());
    }
    names
}

fn main() {
    let mut names: Vec<String> = Vec::new();
    for list in LISTS {
        for name in read_list(list) {
            assert!(!names.contains(&name), "{list}: `{name}` is listed twice (in this list or an earlier one)");
            names.push(name);
        }
    }
    let mut names_code = String::from("&[\n");
    let mut table_code = String::from("service_table! {\n");
    for name in &names {
        let _ = writeln!(names_code, "    {name:?},");
        let _ = writeln!(table_code, "    {name},");
    }
    names_code.push(']');
    table_code.push_str("}\n");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("service_names.rs"), names_code).expect("OUT_DIR is writable");
    std::fs::write(out.join("service_table.rs"), table_code).expect("OUT_DIR is writable");
}
