//! Hexagon RELA relocations: the names of every type (for refusals) and the four the PD loader applies.

use super::dynamic::{Dynamic, RELA_BYTES};
use super::symbols::SymbolTable;
use super::{put_u32, u32_at, Layout, Refusal};

/// `S + A`: a word holding a symbol's address.
pub const R_HEX_32: u32 = 6;
/// `S + A` into a GOT entry.
pub const R_HEX_GLOB_DAT: u32 = 33;
/// `S + A` into a PLT's GOT entry.
pub const R_HEX_JMP_SLOT: u32 = 34;
/// `B + A`: an address inside the library.
pub const R_HEX_RELATIVE: u32 = 35;

/// The Hexagon ELF relocation types, by number (the processor supplement's numbering, as LLVM has it).
const NAMES: [&str; 100] = [
    "R_HEX_NONE",
    "R_HEX_B22_PCREL",
    "R_HEX_B15_PCREL",
    "R_HEX_B7_PCREL",
    "R_HEX_LO16",
    "R_HEX_HI16",
    "R_HEX_32",
    "R_HEX_16",
    "R_HEX_8",
    "R_HEX_GPREL16_0",
    "R_HEX_GPREL16_1",
    "R_HEX_GPREL16_2",
    "R_HEX_GPREL16_3",
    "R_HEX_HL16",
    "R_HEX_B13_PCREL",
    "R_HEX_B9_PCREL",
    "R_HEX_B32_PCREL_X",
    "R_HEX_32_6_X",
    "R_HEX_B22_PCREL_X",
    "R_HEX_B15_PCREL_X",
    "R_HEX_B13_PCREL_X",
    "R_HEX_B9_PCREL_X",
    "R_HEX_B7_PCREL_X",
    "R_HEX_16_X",
    "R_HEX_12_X",
    "R_HEX_11_X",
    "R_HEX_10_X",
    "R_HEX_9_X",
    "R_HEX_8_X",
    "R_HEX_7_X",
    "R_HEX_6_X",
    "R_HEX_32_PCREL",
    "R_HEX_COPY",
    "R_HEX_GLOB_DAT",
    "R_HEX_JMP_SLOT",
    "R_HEX_RELATIVE",
    "R_HEX_PLT_B22_PCREL",
    "R_HEX_GOTREL_LO16",
    "R_HEX_GOTREL_HI16",
    "R_HEX_GOTREL_32",
    "R_HEX_GOT_LO16",
    "R_HEX_GOT_HI16",
    "R_HEX_GOT_32",
    "R_HEX_GOT_16",
    "R_HEX_DTPMOD_32",
    "R_HEX_DTPREL_LO16",
    "R_HEX_DTPREL_HI16",
    "R_HEX_DTPREL_32",
    "R_HEX_DTPREL_16",
    "R_HEX_GD_PLT_B22_PCREL",
    "R_HEX_GD_GOT_LO16",
    "R_HEX_GD_GOT_HI16",
    "R_HEX_GD_GOT_32",
    "R_HEX_GD_GOT_16",
    "R_HEX_IE_LO16",
    "R_HEX_IE_HI16",
    "R_HEX_IE_32",
    "R_HEX_IE_GOT_LO16",
    "R_HEX_IE_GOT_HI16",
    "R_HEX_IE_GOT_32",
    "R_HEX_IE_GOT_16",
    "R_HEX_TPREL_LO16",
    "R_HEX_TPREL_HI16",
    "R_HEX_TPREL_32",
    "R_HEX_TPREL_16",
    "R_HEX_6_PCREL_X",
    "R_HEX_GOTREL_32_6_X",
    "R_HEX_GOTREL_16_X",
    "R_HEX_GOTREL_11_X",
    "R_HEX_GOT_32_6_X",
    "R_HEX_GOT_16_X",
    "R_HEX_GOT_11_X",
    "R_HEX_DTPREL_32_6_X",
    "R_HEX_DTPREL_16_X",
    "R_HEX_DTPREL_11_X",
    "R_HEX_GD_GOT_32_6_X",
    "R_HEX_GD_GOT_16_X",
    "R_HEX_GD_GOT_11_X",
    "R_HEX_IE_32_6_X",
    "R_HEX_IE_16_X",
    "R_HEX_IE_GOT_32_6_X",
    "R_HEX_IE_GOT_16_X",
    "R_HEX_IE_GOT_11_X",
    "R_HEX_TPREL_32_6_X",
    "R_HEX_TPREL_16_X",
    "R_HEX_TPREL_11_X",
    "R_HEX_LD_PLT_B22_PCREL",
    "R_HEX_LD_GOT_LO16",
    "R_HEX_LD_GOT_HI16",
    "R_HEX_LD_GOT_32",
    "R_HEX_LD_GOT_16",
    "R_HEX_LD_GOT_32_6_X",
    "R_HEX_LD_GOT_16_X",
    "R_HEX_LD_GOT_11_X",
    "R_HEX_23_REG",
    "R_HEX_GD_PLT_B22_PCREL_X",
    "R_HEX_GD_PLT_B32_PCREL_X",
    "R_HEX_LD_PLT_B22_PCREL_X",
    "R_HEX_LD_PLT_B32_PCREL_X",
    "R_HEX_27_REG",
];

/// The `R_HEX_` name of relocation type `kind`, if it is one.
pub fn relocation_name(kind: u32) -> Option<&'static str> {
    NAMES.get(kind as usize).copied()
}

/// One `Elf32_Rela`.
struct Rela {
    offset: u32,
    kind: u32,
    symbol: u32,
    addend: u32,
}

/// Where DT_RELA's and DT_JMPREL's entries are: `(image offset, entry count)` each.
fn tables(layout: &Layout, dynamic: &Dynamic) -> Result<[(usize, usize); 2], Refusal> {
    let mut tables = [(0usize, 0usize); 2];
    for (slot, (start, bytes)) in tables.iter_mut().zip([dynamic.relocations, dynamic.plt_relocations]) {
        if let Some(start) = start.filter(|_| bytes > 0) {
            let offset = layout
                .offset_in_segments(start, bytes)
                .ok_or(Refusal::BadDynamic("a relocation table lies outside the PT_LOAD segments"))?;
            *slot = (offset, bytes as usize / RELA_BYTES as usize);
        }
    }
    Ok(tables)
}

/// Entry `index` of the table at image offset `table` (inside the image: checked by [`tables`]).
fn rela_at(image: &[u8], table: usize, index: usize) -> Result<Rela, Refusal> {
    let at = table + index * RELA_BYTES as usize;
    match (u32_at(image, at), u32_at(image, at + 4), u32_at(image, at + 8)) {
        (Some(offset), Some(info), Some(addend)) => Ok(Rela { offset, kind: info & 0xFF, symbol: info >> 8, addend }),
        _ => Err(Refusal::BadDynamic("a relocation table lies outside the image")),
    }
}

/// Checks every relocation, then applies them in order to `image` (at address `base`); answers how many there
/// were. `resolve` gives the address of each PD service an undefined symbol names.
pub(super) fn relocate(
    image: &mut [u8],
    base: u32,
    layout: &Layout,
    dynamic: &Dynamic,
    symbols: &SymbolTable,
    resolve: &mut dyn FnMut(&[u8]) -> Option<u32>,
) -> Result<u32, Refusal> {
    let tables = tables(layout, dynamic)?;
    let mut count = 0u32;
    for (table, entries) in tables {
        for index in 0..entries {
            let rela = rela_at(image, table, index)?;
            if !matches!(rela.kind, R_HEX_32 | R_HEX_GLOB_DAT | R_HEX_JMP_SLOT | R_HEX_RELATIVE) {
                return Err(Refusal::RelocationType { kind: rela.kind, offset: rela.offset });
            }
            if layout.offset_in_segments(rela.offset, 4).is_none() {
                return Err(Refusal::RelocationOutside { offset: rela.offset });
            }
            if rela.symbol >= symbols.count() {
                return Err(Refusal::RelocationSymbol { offset: rela.offset, symbol: rela.symbol });
            }
            count += 1;
        }
    }
    let bias = base.wrapping_sub(layout.first_page);
    for (table, entries) in tables {
        for index in 0..entries {
            // Read again: an earlier relocation may have written into the table (a hostile file); every access
            // stays checked either way.
            let rela = rela_at(image, table, index)?;
            let value = match rela.kind {
                R_HEX_RELATIVE => bias.wrapping_add(rela.addend),
                _ => symbol_address(image, bias, symbols, rela.symbol, resolve)?.wrapping_add(rela.addend),
            };
            let outside = Refusal::RelocationOutside { offset: rela.offset };
            let target = layout.offset_in_segments(rela.offset, 4).ok_or(outside)?;
            put_u32(image, target, value).ok_or(outside)?;
        }
    }
    Ok(count)
}

/// `S`: the address of symbol `index` (0 for the null symbol).
fn symbol_address(
    image: &[u8],
    bias: u32,
    symbols: &SymbolTable,
    index: u32,
    resolve: &mut dyn FnMut(&[u8]) -> Option<u32>,
) -> Result<u32, Refusal> {
    if index == 0 {
        return Ok(0);
    }
    let broken = Refusal::BadDynamic("a relocation's symbol cannot be read");
    let (table, strings) = symbols.tables(image).ok_or(broken)?;
    let symbol = symbols.symbol(table, index).ok_or(broken)?;
    if let Some(address) = symbol.defined_address(bias) {
        return Ok(address);
    }
    let name = symbols.string(strings, symbol.name).ok_or(broken)?;
    if name.is_empty() {
        return Ok(0);
    }
    resolve(name).ok_or(Refusal::Unprovided { symbol: super::Name::new(name) })
}
