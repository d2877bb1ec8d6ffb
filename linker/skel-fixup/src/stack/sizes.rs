//! LLVM's `.stack_sizes` section: for every function, its address and the size of its static frame.
//!
//! `-Z emit-stack-sizes` (rustc) and `-fstack-size-section` (clang) make LLVM emit, per function, one record: the
//! function's address (as wide as a target address: 4 bytes on Hexagon) followed by its frame size as ULEB128.
//! Each function's records sit in their own `.stack_sizes` section tied to the function's text section
//! (`SHF_LINK_ORDER`), so lld drops the records of functions it garbage-collects and keeps the others; the
//! section is not allocated, so the skel's linker script, which places only allocated sections, lets lld keep it
//! as an orphan after them without adding a program header.

use anyhow::{bail, Context, Result};
use goblin::elf::{header, Elf};
use std::collections::BTreeMap;

/// The frame size recorded for each function address in every `.stack_sizes` section of a linked ELF file.
pub fn read(elf: &Elf<'_>, bytes: &[u8]) -> Result<BTreeMap<u64, u64>> {
    if elf.header.e_type != header::ET_DYN && elf.header.e_type != header::ET_EXEC {
        bail!(
            "not a linked ELF file (e_type {}): .stack_sizes addresses are final only after linking",
            elf.header.e_type
        );
    }
    let address_bytes = if elf.is_64 { 8 } else { 4 };
    let mut sizes = BTreeMap::new();
    for section in elf.section_headers.iter().filter(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".stack_sizes")) {
        let start = section.sh_offset as usize;
        let data =
            bytes.get(start..start + section.sh_size as usize).context(".stack_sizes section lies outside the file")?;
        for (address, size) in parse_records(data, address_bytes)? {
            if let Some(previous) = sizes.insert(address, size) {
                if previous != size {
                    bail!(".stack_sizes has two sizes for the function at {address:#x}: {previous} and {size}");
                }
            }
        }
    }
    Ok(sizes)
}

/// The (address, frame size) records of one `.stack_sizes` section whose addresses are `address_bytes` wide.
pub fn parse_records(data: &[u8], address_bytes: usize) -> Result<Vec<(u64, u64)>> {
    let mut records = Vec::new();
    let mut position = 0;
    while position < data.len() {
        let address = data
            .get(position..position + address_bytes)
            .with_context(|| format!(".stack_sizes ends inside the address of the record at byte {position}"))?;
        let address = address.iter().rev().fold(0u64, |value, &byte| value << 8 | u64::from(byte));
        position += address_bytes;
        let size = read_uleb128(data, &mut position)
            .with_context(|| format!(".stack_sizes record for the function at {address:#x}"))?;
        records.push((address, size));
    }
    Ok(records)
}

/// Reads one unsigned LEB128 number at `*position` and moves past it.
pub fn read_uleb128(data: &[u8], position: &mut usize) -> Result<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let &byte = data.get(*position).context("the section ends inside a ULEB128 number")?;
        *position += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    bail!("a ULEB128 number longer than 64 bits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_32_bit_records_with_one_and_two_byte_sizes() {
        let data = [0x00, 0x50, 0x00, 0x00, 0x20, 0xf0, 0x50, 0x00, 0x00, 0x80, 0x05];
        assert_eq!(parse_records(&data, 4).unwrap(), [(0x5000, 0x20), (0x50f0, 0x280)]);
    }

    #[test]
    fn refuses_truncated_records() {
        let error = parse_records(&[0x00, 0x50, 0x00], 4).unwrap_err();
        assert!(error.to_string().contains("inside the address"), "{error}");
        let error = parse_records(&[0x00, 0x50, 0x00, 0x00, 0x80], 4).unwrap_err();
        assert!(format!("{error:#}").contains("ends inside a ULEB128"), "{error:#}");
    }

    #[test]
    fn uleb128_reads_multi_byte_values() {
        let mut position = 0;
        assert_eq!(read_uleb128(&[0xe5, 0x8e, 0x26], &mut position).unwrap(), 624_485);
        assert_eq!(position, 3);
    }
}
