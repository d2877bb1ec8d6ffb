//! Post-link step for the skel: makes an lld-linked Hexagon shared object loadable by the aDSP loader.
//!
//! The loader wants a `DT_HEXAGON_VER` (0x70000001) entry with value 3 and a program header table holding only
//! `PT_LOAD` and `PT_DYNAMIC`. lld emits no such tag and cannot reserve a spare slot, so [`fix_up`] rewrites
//! the redundant `DT_FLAGS_1 = DF_1_NOW` entry (lld writes it beside `DT_FLAGS = DF_BIND_NOW`, which says the
//! same) into `DT_HEXAGON_VER`. [`check`] then verifies everything the loader and the brief require.

use anyhow::{bail, Context, Result};
use goblin::elf::{dynamic, header, program_header, section_header, Elf};

pub mod command_line;
pub mod stack;
#[cfg(test)]
mod test_elf;

/// `DT_HEXAGON_VER`: the Hexagon dynamic tag the aDSP loader expects.
pub const DT_HEXAGON_VER: u32 = 0x7000_0001;
/// The value stock skels carry in `DT_HEXAGON_VER`.
pub const HEXAGON_VER_VALUE: u32 = 3;
const DF_1_NOW: u32 = 0x1;
/// `EM_HEXAGON`, the ELF machine number of Qualcomm Hexagon.
const EM_HEXAGON: u16 = 164;
const DF_BIND_NOW: u32 = 0x8;
const DYNAMIC_ENTRY_BYTES: usize = 8;
/// The symbol the skel's panic handler calls and no PD defines: a skel that still mentions it can panic.
pub const PANIC_MARKER: &str = "lpai_direct_panic_is_reachable";

/// What [`check`] found in a valid skel.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Symbols the skel defines and exports.
    pub exported: Vec<String>,
    /// Symbols the skel needs from the PD runtime.
    pub undefined: Vec<String>,
}

fn parse(bytes: &[u8]) -> Result<Elf<'_>> {
    let elf = Elf::parse(bytes).context("not an ELF file")?;
    if elf.header.e_machine != EM_HEXAGON || elf.is_64 {
        bail!("not a 32-bit Hexagon ELF (e_machine {})", elf.header.e_machine);
    }
    if elf.header.e_type != header::ET_DYN {
        bail!("not a shared object (e_type {})", elf.header.e_type);
    }
    Ok(elf)
}

/// File offsets of each `.dynamic` entry, with its tag and value.
fn dynamic_entries(elf: &Elf<'_>, bytes: &[u8]) -> Result<Vec<(usize, u32, u32)>> {
    let segment = elf
        .program_headers
        .iter()
        .find(|p| p.p_type == program_header::PT_DYNAMIC)
        .context("no PT_DYNAMIC program header")?;
    let start = segment.p_offset as usize;
    let end = start + segment.p_filesz as usize;
    let table = bytes.get(start..end).context("PT_DYNAMIC lies outside the file")?;
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    Ok(table
        .chunks_exact(DYNAMIC_ENTRY_BYTES)
        .enumerate()
        .map(|(index, entry)| (start + index * DYNAMIC_ENTRY_BYTES, word(&entry[..4]), word(&entry[4..])))
        .take_while(|&(_, tag, _)| tag != dynamic::DT_NULL as u32)
        .collect())
}

/// Adds `DT_HEXAGON_VER = 3` in place of the redundant `DT_FLAGS_1 = DF_1_NOW`; does nothing if already there.
pub fn fix_up(bytes: &mut [u8]) -> Result<()> {
    let entries = dynamic_entries(&parse(bytes)?, bytes)?;
    if let Some(&(_, _, value)) = entries.iter().find(|e| e.1 == DT_HEXAGON_VER) {
        if value != HEXAGON_VER_VALUE {
            bail!("DT_HEXAGON_VER is {value}, expected {HEXAGON_VER_VALUE}");
        }
        return Ok(());
    }
    let bind_now = entries.iter().any(|e| e.1 == dynamic::DT_FLAGS as u32 && e.2 & DF_BIND_NOW != 0);
    let slot = entries.iter().find(|e| e.1 == dynamic::DT_FLAGS_1 as u32 && e.2 == DF_1_NOW);
    let Some(&(offset, _, _)) = slot.filter(|_| bind_now) else {
        bail!("no free .dynamic slot: expected DT_FLAGS_1 = NOW beside DT_FLAGS = BIND_NOW (link with -z now)");
    };
    bytes[offset..offset + 4].copy_from_slice(&DT_HEXAGON_VER.to_le_bytes());
    bytes[offset + 4..offset + 8].copy_from_slice(&HEXAGON_VER_VALUE.to_le_bytes());
    Ok(())
}

/// Checks a fixed-up skel: no reachable panic ([`PANIC_MARKER`] is looked for first, among every symbol, whatever
/// `allowed_undefined` says, and may not be on it), no double-precision soft float ([`is_double_precision_helper`]),
/// no unwind tables, only LOAD/DYNAMIC headers, `DT_HEXAGON_VER = 3`, no `DT_NEEDED`, exports only
/// `export_prefix*`, and every undefined symbol in `allowed_undefined`.
pub fn check(bytes: &[u8], export_prefix: &str, allowed_undefined: &[String]) -> Result<Report> {
    if allowed_undefined.iter().any(|name| name == PANIC_MARKER) {
        bail!(
            "the allowed-symbols list contains {PANIC_MARKER}, the panic handler's marker: no PD defines it, and \
             allowing it would hide a reachable panic; remove it from the list"
        );
    }
    let elf = parse(bytes)?;
    check_no_panic_marker(&elf)?;
    check_no_double_precision(&elf)?;
    check_no_unwind_tables(&elf)?;
    for header in &elf.program_headers {
        if header.p_type != program_header::PT_LOAD && header.p_type != program_header::PT_DYNAMIC {
            bail!(
                "program header {} is not allowed: the aDSP loader takes only LOAD and DYNAMIC",
                program_header::pt_to_str(header.p_type)
            );
        }
    }
    let entries = dynamic_entries(&elf, bytes)?;
    if !entries.iter().any(|e| e.1 == DT_HEXAGON_VER && e.2 == HEXAGON_VER_VALUE) {
        bail!("no DT_HEXAGON_VER (0x70000001) = {HEXAGON_VER_VALUE} entry in .dynamic");
    }
    if !elf.libraries.is_empty() {
        bail!("the skel must have no DT_NEEDED entries, found {:?}", elf.libraries);
    }
    let mut report = Report::default();
    for symbol in elf.dynsyms.iter().filter(|s| s.st_name != 0) {
        let name = elf.dynstrtab.get_at(symbol.st_name).unwrap_or("?").to_string();
        if symbol.is_import() {
            report.undefined.push(name);
        } else if symbol.st_bind() != goblin::elf::sym::STB_LOCAL {
            report.exported.push(name);
        }
    }
    let stray_exports: Vec<_> = report.exported.iter().filter(|n| !n.starts_with(export_prefix)).collect();
    if !stray_exports.is_empty() {
        bail!("the skel exports symbols outside {export_prefix}*: {stray_exports:?}");
    }
    let unknown: Vec<_> = report.undefined.iter().filter(|n| !allowed_undefined.contains(n)).collect();
    if !unknown.is_empty() {
        bail!("the skel needs symbols the PD runtime list does not have: {unknown:?}");
    }
    Ok(report)
}

/// Fails if any symbol of the dynamic or the full symbol table, defined or not, is [`PANIC_MARKER`].
fn check_no_panic_marker(elf: &Elf<'_>) -> Result<()> {
    let dynamic = elf.dynsyms.iter().map(|symbol| (symbol, elf.dynstrtab.get_at(symbol.st_name)));
    let full = elf.syms.iter().map(|symbol| (symbol, elf.strtab.get_at(symbol.st_name)));
    for (symbol, name) in dynamic.chain(full) {
        if name != Some(PANIC_MARKER) {
            continue;
        }
        if symbol.st_shndx == section_header::SHN_UNDEF as usize {
            bail!("a panic is reachable from the skel's entry points: it refers to {PANIC_MARKER}");
        }
        bail!("the skel defines {PANIC_MARKER}, which must stay undefined: defining it hides reachable panics");
    }
    Ok(())
}

/// Whether `name` is a compiler helper for `f64` arithmetic or conversion: compiler-builtins' and LLVM's names
/// (`__adddf3`, `__extendsfdf2`, `__fixdfsi`, ...) and the Hexagon ones (`__hexagon_divdf3`, `__qdsp_sqrtdf2`, ...)
/// all say `df`.
pub fn is_double_precision_helper(name: &str) -> bool {
    name.starts_with("__") && name.contains("df")
}

/// Fails if any symbol of the dynamic or the full symbol table, defined or not, is a double-precision helper: no PD
/// library computes in `f64` (Hexagon has no double-precision divider, so each operation is a call), and
/// compiler-builtins' Hexagon assembly, which holds them all, comes back whole as soon as the link keeps any helper
/// of it (`linker/compiler-helpers.ld` routes the ones our code calls elsewhere).
fn check_no_double_precision(elf: &Elf<'_>) -> Result<()> {
    let dynamic = elf.dynsyms.iter().filter_map(|symbol| elf.dynstrtab.get_at(symbol.st_name));
    let full = elf.syms.iter().filter_map(|symbol| elf.strtab.get_at(symbol.st_name));
    let mut found: Vec<&str> = dynamic.chain(full).filter(|name| is_double_precision_helper(name)).collect();
    found.sort_unstable();
    found.dedup();
    if !found.is_empty() {
        bail!(
            "the library carries double-precision soft float ({}): nothing on the DSP may compute in f64; if no code \
             of ours does, a compiler helper missing from the library's linker/compiler-helpers*.ld kept \
             compiler-builtins' Hexagon assembly (add it to the file its link passes)",
            found.join(", ")
        );
    }
    Ok(())
}

/// Fails if the library carries unwind tables (`.eh_frame`, `.eh_frame_hdr`): a PD library never unwinds (it is
/// built with `panic = "abort"`), so they would be loaded for nothing.
fn check_no_unwind_tables(elf: &Elf<'_>) -> Result<()> {
    for header in &elf.section_headers {
        let name = elf.shdr_strtab.get_at(header.sh_name).unwrap_or("");
        if name == ".eh_frame" || name == ".eh_frame_hdr" {
            bail!(
                "the library has unwind tables ({name}, {} bytes), which a PD library never uses: build with \
                 -C force-unwind-tables=no and link with linker/skel.ld, which discards them",
                header.sh_size
            );
        }
    }
    Ok(())
}

/// Reads the allowed-undefined list: one symbol a line, `#` comments and blank lines ignored.
pub fn parse_symbol_list(text: &str) -> Vec<String> {
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLEAN: &str =
        "extern void *malloc(unsigned long);\nint lpai_direct_open(int size) { return malloc(size) != 0; }\n";
    const PANICKING: &str = "extern void *malloc(unsigned long);\nextern void lpai_direct_panic_is_reachable(void);\n\
        int lpai_direct_open(int size) { if (size < 0) lpai_direct_panic_is_reachable(); return malloc(size) != 0; }\n";
    const DEFINING: &str =
        "void lpai_direct_panic_is_reachable(void) {}\nint lpai_direct_open(int size) { return size; }\n";

    fn fixed_up(source: &str) -> Vec<u8> {
        let built = test_elf::shared_object(source);
        let mut bytes = std::fs::read(&built.path).unwrap();
        fix_up(&mut bytes).unwrap();
        bytes
    }

    fn list(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    #[test]
    fn a_clean_skel_passes() {
        let report = check(&fixed_up(CLEAN), "lpai_direct_", &list(&["malloc"])).unwrap();
        assert_eq!(report.exported, ["lpai_direct_open"]);
        assert_eq!(report.undefined, ["malloc"]);
    }

    #[test]
    fn refuses_a_list_that_allows_the_panic_marker() {
        let error = check(&fixed_up(CLEAN), "lpai_direct_", &list(&["malloc", PANIC_MARKER])).unwrap_err();
        assert!(error.to_string().contains("allowed-symbols list contains lpai_direct_panic_is_reachable"), "{error}");
    }

    #[test]
    fn finds_the_panic_marker_whatever_the_list_says() {
        let bytes = fixed_up(PANICKING);
        let error = check(&bytes, "lpai_direct_", &list(&["malloc"])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "a panic is reachable from the skel's entry points: it refers to lpai_direct_panic_is_reachable"
        );
        let error = check(&bytes, "lpai_direct_", &list(&["malloc", PANIC_MARKER])).unwrap_err();
        assert!(error.to_string().contains(PANIC_MARKER), "{error}");
    }

    #[test]
    fn unwind_tables_are_discarded_by_the_linker_script_and_refused_when_kept() {
        let discarded = test_elf::shared_object_with_unwind_tables(CLEAN, test_elf::Script::Skel);
        let mut bytes = std::fs::read(&discarded.path).unwrap();
        fix_up(&mut bytes).unwrap();
        check(&bytes, "lpai_direct_", &list(&["malloc"])).unwrap();
        let kept = test_elf::shared_object_with_unwind_tables(CLEAN, test_elf::Script::KeepingUnwindTables);
        let mut bytes = std::fs::read(&kept.path).unwrap();
        fix_up(&mut bytes).unwrap();
        let error = check(&bytes, "lpai_direct_", &list(&["malloc"])).unwrap_err().to_string();
        assert!(error.starts_with("the library has unwind tables (.eh_frame"), "{error}");
    }

    #[test]
    fn refuses_double_precision_soft_float() {
        let dividing = "double lpai_direct_divide(double a, double b) { return a / b; }\n";
        let error = check(&fixed_up(dividing), "lpai_direct_", &list(&["__hexagon_divdf3"])).unwrap_err().to_string();
        assert!(error.starts_with("the library carries double-precision soft float (__hexagon_divdf3)"), "{error}");
        let single = "float lpai_direct_divide(float a, float b) { return a / b; }\n";
        check(&fixed_up(single), "lpai_direct_", &list(&["__hexagon_divsf3"])).unwrap();
        assert!(!is_double_precision_helper("__hexagon_divsf3") && !is_double_precision_helper("__deallocframe"));
        assert!(is_double_precision_helper("__extendsfdf2") && is_double_precision_helper("__qdsp_sqrtdf2"));
    }

    #[test]
    fn refuses_a_skel_that_defines_the_panic_marker() {
        let error = check(&fixed_up(DEFINING), "lpai_direct_", &[]).unwrap_err();
        assert!(error.to_string().contains("the skel defines lpai_direct_panic_is_reachable"), "{error}");
    }
}
