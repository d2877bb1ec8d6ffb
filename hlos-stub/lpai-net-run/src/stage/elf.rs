//! The ELF checks of `stage`, read with goblin (as the stub reads version records): each file must be an ELF for
//! the processor that loads it (AArch64 on the HLOS, 32-bit Hexagon on the aDSP); of a Hexagon file, the Hexagon
//! version its `e_flags` encode and the libraries its dynamic section needs (`DT_NEEDED`).

use anyhow::{bail, Context as _, Result};
use goblin::elf::dynamic::DT_NEEDED;
use goblin::elf::header::{EI_CLASS, EI_DATA, ELFCLASS32, ELFDATA2LSB, ELFMAG, EM_386, EM_AARCH64, EM_ARM};
use goblin::elf::header::{EM_QDSP6, EM_X86_64};
use goblin::elf::Elf;
use std::path::Path;

/// The processor an ELF file is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Machine {
    /// The HLOS side's.
    Aarch64,
    /// The aDSP's.
    Hexagon,
}

impl Machine {
    /// Its `e_machine`.
    fn number(self) -> u16 {
        match self {
            Machine::Aarch64 => EM_AARCH64,
            Machine::Hexagon => EM_QDSP6,
        }
    }

    /// An ELF of `e_machine` `number`, for messages.
    fn described(number: u16) -> String {
        match number {
            EM_386 => "an x86 ELF".into(),
            EM_ARM => "a 32-bit ARM ELF".into(),
            EM_X86_64 => "an x86-64 ELF".into(),
            EM_QDSP6 => "a Hexagon ELF".into(),
            EM_AARCH64 => "an AArch64 ELF".into(),
            other => format!("an ELF for machine {other}"),
        }
    }

    /// The side of the device that loads its files.
    fn side(self) -> &'static str {
        match self {
            Machine::Aarch64 => "HLOS",
            Machine::Hexagon => "aDSP",
        }
    }
}

/// What the ELF check learnt of a Hexagon file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HexagonFacts {
    /// The Hexagon version in its flags (`None`: not one of the known encodings).
    pub version: Option<u32>,
    /// The libraries its dynamic section needs.
    pub needed: Vec<String>,
}

/// The Hexagon version a file's flags encode: `EF_HEXAGON_MACH_Vnn` is 0xnn, the version's digits read as hex.
fn hexagon_version(flags: u32) -> Option<u32> {
    format!("{:x}", flags & 0xff).parse().ok()
}

/// The `DT_NEEDED` names of an ELF file, found through its program headers as a loader finds them; `None` when the
/// file does not hold together (or a name is not in its dynamic string table).
fn needed_libraries(bytes: &[u8]) -> Option<Vec<String>> {
    let elf = Elf::parse(bytes).ok()?;
    let entries =
        elf.dynamic.as_ref().map_or(0, |dynamic| dynamic.dyns.iter().filter(|entry| entry.d_tag == DT_NEEDED).count());
    // goblin leaves out a name it cannot find; the file is malformed then.
    (elf.libraries.len() == entries).then(|| elf.libraries.iter().map(|name| name.to_string()).collect())
}

/// Checks that `path` (named by `flag`) is a little-endian ELF for `machine`; answers what it learnt of a Hexagon
/// file.
pub fn check_elf(path: &Path, flag: &str, machine: Machine) -> Result<HexagonFacts> {
    let bytes = std::fs::read(path).with_context(|| format!("{flag} {} cannot be read", path.display()))?;
    let expected = Machine::described(machine.number());
    if bytes.get(..4) != Some(ELFMAG.as_slice()) {
        bail!("{flag} {} is not an ELF file; the {} side needs {expected}", path.display(), machine.side());
    }
    let header = Elf::parse_header(&bytes).with_context(|| {
        format!("{flag} {}: its ELF header is malformed; the {} side needs {expected}", path.display(), machine.side())
    })?;
    if header.e_ident[EI_DATA] != ELFDATA2LSB {
        bail!("{flag} {} is a big-endian ELF, not {expected}", path.display());
    }
    if header.e_machine != machine.number() {
        bail!("{flag} {} is {}, not {expected}", path.display(), Machine::described(header.e_machine));
    }
    if machine == Machine::Aarch64 {
        return Ok(HexagonFacts::default());
    }
    if header.e_ident[EI_CLASS] != ELFCLASS32 {
        bail!("{flag} {} is a 64-bit ELF; Hexagon libraries are 32-bit", path.display());
    }
    let version = hexagon_version(header.e_flags);
    let needed = needed_libraries(&bytes)
        .with_context(|| format!("{flag} {}: its program headers or dynamic section are malformed", path.display()))?;
    Ok(HexagonFacts { version, needed })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A little-endian ELF32 Hexagon library with `flags` and, when `needed` is not empty, a dynamic section naming
    /// those libraries (with its string table's address and size), laid out as a linker does (one PT_LOAD covering
    /// the file, a PT_DYNAMIC inside it).
    fn hexagon_library(flags: u32, needed: &[&str]) -> Vec<u8> {
        let mut strings = vec![0u8];
        let mut offsets = Vec::new();
        for name in needed {
            offsets.push(strings.len() as u32);
            strings.extend_from_slice(name.as_bytes());
            strings.push(0);
        }
        let (header, phdrs) = (52usize, 2usize);
        let strtab_at = header + phdrs * 32;
        let dynamic_at = strtab_at + strings.len().next_multiple_of(4);
        let mut dynamic: Vec<(u32, u32)> = offsets.iter().map(|&offset| (1, offset)).collect();
        dynamic.push((5, strtab_at as u32 + 0x1000));
        dynamic.push((10, strings.len() as u32));
        dynamic.push((0, 0));
        let total = dynamic_at + dynamic.len() * 8;
        let mut bytes = vec![0u8; total];
        bytes[..4].copy_from_slice(b"\x7fELF");
        bytes[4] = 1; // ELFCLASS32
        bytes[5] = 1; // little-endian
        bytes[6] = 1;
        bytes[16..18].copy_from_slice(&3u16.to_le_bytes()); // ET_DYN
        bytes[18..20].copy_from_slice(&164u16.to_le_bytes());
        bytes[28..32].copy_from_slice(&(header as u32).to_le_bytes());
        bytes[36..40].copy_from_slice(&flags.to_le_bytes());
        bytes[42..44].copy_from_slice(&32u16.to_le_bytes());
        bytes[44..46].copy_from_slice(&(phdrs as u16).to_le_bytes());
        let mut phdr = |index: usize, fields: [u32; 6]| {
            let at = header + index * 32;
            for (slot, value) in fields.iter().enumerate() {
                bytes[at + slot * 4..at + slot * 4 + 4].copy_from_slice(&value.to_le_bytes());
            }
        };
        // p_type, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz: the file mapped at 0x1000.
        phdr(0, [1, 0, 0x1000, 0x1000, total as u32, total as u32]);
        let dynamic_bytes = (dynamic.len() * 8) as u32;
        phdr(1, [2, dynamic_at as u32, 0x1000 + dynamic_at as u32, 0, dynamic_bytes, dynamic_bytes]);
        bytes[strtab_at..strtab_at + strings.len()].copy_from_slice(&strings);
        for (index, (tag, value)) in dynamic.iter().enumerate() {
            let at = dynamic_at + index * 8;
            bytes[at..at + 4].copy_from_slice(&tag.to_le_bytes());
            bytes[at + 4..at + 8].copy_from_slice(&value.to_le_bytes());
        }
        bytes
    }

    #[test]
    fn needed_libraries_are_read_through_the_program_headers() {
        let bytes = hexagon_library(0x73, &["libc++.so.1", "libc++abi.so.1"]);
        assert_eq!(needed_libraries(&bytes), Some(vec!["libc++.so.1".to_string(), "libc++abi.so.1".to_string()]));
        assert_eq!(needed_libraries(&hexagon_library(0x73, &[])), Some(Vec::new()));
        // Cut anywhere inside the headers or tables, the file is malformed, never a panic.
        for length in [30, 60, 100, bytes.len() - 3] {
            assert_eq!(needed_libraries(&bytes[..length]), None, "cut at {length}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libQnnLpai.so");
        std::fs::write(&path, &bytes).unwrap();
        let facts = check_elf(&path, "--backend", Machine::Hexagon).unwrap();
        assert_eq!(
            facts,
            HexagonFacts { version: Some(73), needed: vec!["libc++.so.1".into(), "libc++abi.so.1".into()] }
        );
        let message = check_elf(&path, "--net_run", Machine::Aarch64).unwrap_err().to_string();
        assert!(message.ends_with("libQnnLpai.so is a Hexagon ELF, not an AArch64 ELF"), "{message}");
        std::fs::write(&path, b"#!/bin/sh\n").unwrap();
        let message = check_elf(&path, "--skel", Machine::Hexagon).unwrap_err().to_string();
        assert!(message.ends_with("is not an ELF file; the aDSP side needs a Hexagon ELF"), "{message}");
    }

    #[test]
    fn hexagon_versions_read_as_their_digits() {
        assert_eq!(hexagon_version(0x73), Some(73));
        assert_eq!(hexagon_version(0x81), Some(81));
        assert_eq!(hexagon_version(0x8067), Some(67));
        assert_eq!(hexagon_version(0x7a), None);
    }
}
