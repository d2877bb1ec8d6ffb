//! The loader against the real virtual-aDSP skel (`target/virtual-adsp/liblpai_direct_skel.so`) and patched
//! copies of it.

use super::*;
use crate::service_names::{index_of, NAMES};

const SKEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/virtual-adsp/liblpai_direct_skel.so");
const BASE: u32 = 0x4000_0000;
const DT_FLAGS: u32 = 30;
const DT_DEBUG: u32 = 21;

fn skel() -> Vec<u8> {
    std::fs::read(SKEL).unwrap_or_else(|error| {
        panic!("cannot read {SKEL} ({error}): run scripts/build-hexagon.sh first (it builds the virtual aDSP's skel)")
    })
}

fn service_address(name: &[u8]) -> Option<u32> {
    index_of(name).map(|index| 0x1000_0000 + 16 * index as u32)
}

/// Loads `file` at [`BASE`], answering the image, the result and the services the loader asked for.
fn load_file(file: &[u8]) -> Result<(Layout, Vec<u8>, Loaded, Vec<String>), Refusal> {
    let layout = Layout::parse(file)?;
    let mut image = vec![0xA5; layout.span as usize];
    let mut asked = Vec::new();
    let mut resolve = |name: &[u8]| {
        asked.push(String::from_utf8_lossy(name).into_owned());
        service_address(name)
    };
    let loaded = load(file, &layout, &mut image, BASE, &mut resolve)?;
    Ok((layout, image, loaded, asked))
}

fn refusal(file: &[u8]) -> String {
    match load_file(file) {
        Ok(_) => panic!("the patched skel loaded"),
        Err(refusal) => refusal.to_string(),
    }
}

fn word(file: &[u8], offset: usize) -> u32 {
    u32_at(file, offset).unwrap()
}

/// The file offset of program header `index`.
fn program_header(file: &[u8], index: usize) -> usize {
    word(file, 28) as usize + index * 32
}

/// The file offset of virtual address `vaddr` (through the PT_LOAD holding it).
fn file_offset(file: &[u8], vaddr: u32) -> usize {
    let count = u16_at(file, 44).unwrap() as usize;
    (0..count)
        .map(|index| program_header(file, index))
        .filter(|&header| word(file, header) == 1)
        .find_map(|header| {
            let (offset, start, size) = (word(file, header + 4), word(file, header + 8), word(file, header + 16));
            (start <= vaddr && vaddr < start + size).then(|| (offset + vaddr - start) as usize)
        })
        .expect("an address in the file")
}

/// The dynamic entries: `(file offset, tag, value)`.
fn dynamic_entries(file: &[u8]) -> Vec<(usize, u32, u32)> {
    let count = u16_at(file, 44).unwrap() as usize;
    let header = (0..count).map(|index| program_header(file, index)).find(|&header| word(file, header) == 2).unwrap();
    let start = word(file, header + 4) as usize;
    (0..word(file, header + 16) as usize / 8)
        .map(|index| (start + index * 8, word(file, start + index * 8), word(file, start + index * 8 + 4)))
        .take_while(|&(_, tag, _)| tag != 0)
        .collect()
}

fn dynamic_value(file: &[u8], tag: u32) -> u32 {
    dynamic_entries(file).iter().find(|entry| entry.1 == tag).map(|entry| entry.2).unwrap()
}

fn retag(file: &mut [u8], from: u32, to: u32) {
    let entry = dynamic_entries(file).into_iter().find(|entry| entry.1 == from).expect("the tag is present").0;
    file[entry..entry + 4].copy_from_slice(&to.to_le_bytes());
}

/// The relocation entries: `(file offset, r_offset, r_info, r_addend)`.
fn relocation_entries(file: &[u8]) -> Vec<(usize, u32, u32, u32)> {
    [(7, 8), (23, 2)]
        .into_iter()
        .flat_map(|(table, size)| {
            let start = file_offset(file, dynamic_value(file, table));
            (0..dynamic_value(file, size) as usize / 12).map(move |index| start + index * 12)
        })
        .map(|at| (at, word(file, at), word(file, at + 4), word(file, at + 8)))
        .collect()
}

/// The `.dynstr` offset of `name` (as a whole string).
fn string_offset(file: &[u8], name: &str) -> u32 {
    let start = file_offset(file, dynamic_value(file, 5));
    let strings = &file[start..start + dynamic_value(file, 10) as usize];
    let mut wanted = name.as_bytes().to_vec();
    wanted.push(0);
    let at = strings.windows(wanted.len()).position(|window| window == wanted).expect("the name is in .dynstr");
    assert!(at == 0 || strings[at - 1] == 0);
    at as u32
}

#[test]
fn the_real_skel_loads_with_every_relocation_applied() {
    let file = skel();
    let (layout, image, loaded, asked) = load_file(&file).unwrap();
    let relocations = relocation_entries(&file);
    assert_eq!(loaded.relocations as usize, relocations.len());
    for (_, offset, info, addend) in &relocations {
        let value = u32_at(&image, *offset as usize).unwrap();
        match info & 0xFF {
            35 => assert_eq!(value, BASE + addend, "R_HEX_RELATIVE at {offset:#x}"),
            34 => assert!(value >= 0x1000_0000 && value < 0x1000_0000 + 16 * NAMES.len() as u32, "{value:#x}"),
            kind => panic!("the skel has relocation type {kind}: extend this test"),
        }
    }
    let mut services = asked.clone();
    services.sort();
    services.dedup();
    assert!(services.len() >= 10 && services.iter().all(|name| NAMES.contains(&name.as_str())), "{services:?}");
    let (symbols, strings) = loaded.symbols.tables(&image).unwrap();
    for entry in ["lpai_direct_open", "lpai_direct_close", "lpai_direct_skel_handle_invoke"] {
        let symbol = loaded.symbols.lookup(symbols, strings, entry.as_bytes()).expect(entry);
        assert!(layout.is_executable(symbol.value), "{entry}");
    }
    assert_eq!(loaded.symbols.lookup(symbols, strings, b"malloc"), None, "undefined symbols are not found");
    assert!(loaded.initializers().is_empty());
}

#[test]
fn pages_get_their_segments_protection() {
    let layout = Layout::parse(&skel()).unwrap();
    let runs: Vec<(u32, u32, u32)> = layout.protection_runs(4096).collect();
    assert_eq!(runs.iter().map(|run| run.1).sum::<u32>(), layout.span);
    assert!(runs.windows(2).all(|pair| pair[0].0 + pair[0].1 == pair[1].0 && pair[0].2 != pair[1].2), "{runs:?}");
    let protections: Vec<u32> = runs.iter().map(|run| run.2).filter(|&protection| protection != 0).collect();
    assert_eq!(protections, [PROT_READ, PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE], "{runs:?}");
    // qemu-hexagon's 64 KiB pages: the skel's three segments share two pages, which get the unions.
    let big: Vec<(u32, u32, u32)> = layout.protection_runs(0x10000).collect();
    let (read_execute, all) = (PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE | PROT_EXEC);
    assert_eq!(big, [(0, 0x10000, read_execute), (0x10000, layout.span - 0x10000, all)]);
}

#[test]
fn the_symbol_count_comes_from_gnu_hash_without_dt_hash() {
    let mut file = skel();
    let with_hash = load_file(&file).unwrap().2.symbols.count();
    retag(&mut file, 4, DT_DEBUG);
    assert_eq!(load_file(&file).unwrap().2.symbols.count(), with_hash);
    retag(&mut file, 0x6fff_fef5, DT_DEBUG);
    assert_eq!(refusal(&file), "has a broken dynamic section: it has neither DT_HASH nor DT_GNU_HASH");
}

#[test]
fn the_dynamic_section_must_have_version_3_and_no_needed_libraries() {
    let mut file = skel();
    retag(&mut file, dynamic::DT_HEXAGON_VER, DT_DEBUG);
    assert_eq!(refusal(&file), "has no DT_HEXAGON_VER (the aDSP loader requires version 3)");
    let mut file = skel();
    let entry = dynamic_entries(&file).into_iter().find(|entry| entry.1 == dynamic::DT_HEXAGON_VER).unwrap().0;
    file[entry + 4..entry + 8].copy_from_slice(&2u32.to_le_bytes());
    assert_eq!(refusal(&file), "has DT_HEXAGON_VER 2 (the aDSP loader requires version 3)");
    let mut file = skel();
    let entry = dynamic_entries(&file).into_iter().find(|entry| entry.1 == DT_FLAGS).unwrap().0;
    let name = string_offset(&file, "dlclose");
    file[entry..entry + 8].copy_from_slice(&[1u32.to_le_bytes(), name.to_le_bytes()].concat());
    assert_eq!(
        refusal(&file),
        "needs dlclose (DT_NEEDED): a PD library may depend on nothing but the PD's own services"
    );
}

#[test]
fn program_headers_other_than_load_and_dynamic_are_refused_by_name() {
    for (kind, name) in
        [(4, "PT_NOTE"), (0x6474_e551, "PT_GNU_STACK"), (6, "PT_PHDR"), (0x1234_5678, "type 0x12345678")]
    {
        let mut file = skel();
        let header = program_header(&file, 3);
        file[header..header + 4].copy_from_slice(&u32::to_le_bytes(kind));
        let expected = match kind {
            0x1234_5678 => "has a program header of type 0x12345678 (#3)".to_string(),
            _ => format!("has a {name} program header (#3)"),
        };
        assert_eq!(refusal(&file), expected + ": the aDSP loader accepts only PT_LOAD and PT_DYNAMIC");
    }
}

#[test]
fn undefined_symbols_must_be_pd_services() {
    let mut file = skel();
    let start = file_offset(&file, dynamic_value(&file, 5));
    let at = start + string_offset(&file, "dlclose") as usize;
    file[at + 6] = b'X';
    assert_eq!(refusal(&file), "needs dlclosX, which the PD does not provide");
}

#[test]
fn only_the_four_relocation_types_are_applied() {
    let relative = |file: &[u8]| relocation_entries(file).into_iter().find(|entry| entry.2 & 0xFF == 35).unwrap();
    let mut file = skel();
    let (at, offset, _, _) = relative(&file);
    file[at + 4] = 1;
    assert_eq!(
        refusal(&file),
        format!(
            "has a relocation of type R_HEX_B22_PCREL at {offset:#x}: \
             the PD loader applies only R_HEX_RELATIVE, R_HEX_JMP_SLOT, R_HEX_GLOB_DAT and R_HEX_32"
        )
    );
    file[at + 4] = 0xC8;
    assert!(refusal(&file).starts_with(&format!("has a relocation of unknown type 0xc8 at {offset:#x}: ")));
    let mut file = skel();
    file[at..at + 4].copy_from_slice(&0x7FFF_FFF0u32.to_le_bytes());
    assert_eq!(refusal(&file), "has a relocation at 0x7ffffff0, outside its loaded segments");
    let mut file = skel();
    file[at + 5..at + 8].copy_from_slice(&[0xFF, 0xFF, 0]);
    assert!(refusal(&file).contains("naming symbol 65535, past the end of .dynsym"));
    assert_eq!(relocation_name(0), Some("R_HEX_NONE"));
    assert_eq!(relocation_name(35), Some("R_HEX_RELATIVE"));
    assert_eq!(relocation_name(99), Some("R_HEX_27_REG"));
    assert_eq!(relocation_name(100), None);
}

#[test]
fn the_elf_header_must_be_a_hexagon_shared_object() {
    let patched = |at: usize, bytes: &[u8]| {
        let mut file = skel();
        file[at..at + bytes.len()].copy_from_slice(bytes);
        refusal(&file)
    };
    assert_eq!(patched(0, b"\x7fELG"), "is not an ELF file (no ELF magic)");
    assert_eq!(patched(4, &[2]), "is not a 32-bit ELF file (EI_CLASS 2; the aDSP loads ELFCLASS32)");
    assert_eq!(patched(5, &[2]), "is not little-endian (EI_DATA 2)");
    assert_eq!(patched(16, &[2, 0]), "is not a shared object (e_type 2; the aDSP loader wants ET_DYN)");
    assert_eq!(patched(18, &[62, 0]), "is built for e_machine 62, not Hexagon (EM_HEXAGON, 164)");
    assert!(patched(42, &[31, 0]).contains("not 32 bytes"));
    assert!(patched(28, &[0xF0, 0xFF, 0xFF, 0x7F]).contains("outside the file"));
    assert_eq!(refusal(&skel()[..40]), "is too short to be an ELF file (40 bytes)");
    let first_load = program_header(&skel(), 0);
    assert!(patched(first_load + 20, &[0, 1, 0, 0]).contains("more bytes in the file than in memory"));
    assert!(patched(first_load + 16, &[0, 0, 0, 1]).contains("its file bytes lie outside the file"));
    assert!(patched(first_load + 20, &[0, 0, 1, 0]).contains("overlaps or precedes the PT_LOAD before it"));
    let last_load = program_header(&skel(), 2);
    assert!(patched(last_load + 20, &[0, 0, 0, 0x20]).contains("more than a PD library may take"));
}

#[test]
fn truncated_and_mutated_files_are_refused_without_panicking() {
    let file = skel();
    let layout = Layout::parse(&file).unwrap();
    let needed = layout.segments().iter().map(|segment| (segment.file_offset + segment.file_bytes) as usize).max();
    for length in (0..4096).chain((4096..needed.unwrap()).step_by(997)) {
        assert!(load_file(&file[..length]).is_err(), "a prefix of {length} bytes loaded");
    }
    // A deterministic xorshift walk of byte changes in the headers, tables and dynamic section.
    let dynamic = dynamic_entries(&file)[0].0;
    let mut state = 0x2545_f491_u32;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    for _ in 0..3000 {
        let mut mutated = file.clone();
        for _ in 0..1 + next() % 4 {
            let at = match next() % 3 {
                0 => next() as usize % 0x800,
                1 => dynamic + next() as usize % 0x88,
                _ => next() as usize % mutated.len(),
            };
            mutated[at] = next() as u8;
        }
        if Layout::parse(&mutated).is_ok_and(|layout| layout.span > 16 << 20) {
            continue;
        }
        let _ = load_file(&mutated);
    }
}

#[test]
fn a_signed_skel_loads_under_require_signature_and_a_changed_or_unsigned_one_is_refused() {
    use crate::signature::{admits, trailer, TRAILER_BYTES};
    let unsigned = skel();
    let signed = [&unsigned[..], &trailer(&unsigned)[..]].concat();
    // The loader's decision, then the ELF loader on the very bytes it read: the trailer after everything the
    // headers reference changes nothing it loads.
    assert!(admits(true, &signed));
    let (layout, image, loaded, _) = load_file(&signed).expect("the ELF loader accepts the trailing signature");
    let (plain_layout, plain_image, plain_loaded, _) = load_file(&unsigned).unwrap();
    assert_eq!((layout, loaded), (plain_layout, plain_loaded));
    assert!(image == plain_image, "the signed file loads into the same image");
    assert!(!admits(true, &unsigned), "an unsigned skel is refused by a signed PD");
    assert!(admits(false, &unsigned), "an unsigned PD loads it");
    let header = program_header(&unsigned, 0);
    let text = layout.segments()[0].file_offset as usize + 100;
    for at in [0, 5, header + 4, text, unsigned.len() - 1, unsigned.len(), signed.len() - 1, signed.len() - 20] {
        let mut changed = signed.clone();
        changed[at] ^= 0x10;
        assert!(!admits(true, &changed), "one byte changed at {at} of {}", signed.len());
    }
    // Another file's trailer does not sign this one.
    let mut other = unsigned.clone();
    other[text] ^= 1;
    let mut borrowed = other.clone();
    borrowed.extend_from_slice(&signed[signed.len() - TRAILER_BYTES..]);
    assert!(!admits(true, &borrowed));
    // And a trailer on garbage is a signed file the ELF loader still refuses.
    let garbage = b"not an ELF file at all, but 52 bytes or more of it...".to_vec();
    let signed_garbage = [&garbage[..], &trailer(&garbage)[..]].concat();
    assert!(admits(true, &signed_garbage));
    assert_eq!(refusal(&signed_garbage), "is not an ELF file (no ELF magic)");
}
