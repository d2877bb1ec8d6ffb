//! `.dynsym` and `.dynstr`: symbol entries, their names, and the lookup `dlsym` makes.

use super::dynamic::{Dynamic, SYMBOL_BYTES};
use super::{u16_at, u32_at, Layout, Refusal};

const STB_GLOBAL: u8 = 1;
const STB_WEAK: u8 = 2;
const STT_OBJECT: u8 = 1;
const STT_FUNC: u8 = 2;
/// Section indices from here up are special (SHN_ABS, SHN_COMMON, ...), not sections of the image.
const SHN_LORESERVE: u16 = 0xff00;
const SHN_ABS: u16 = 0xfff1;

/// One `Elf32_Sym`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// `st_name`.
    pub name: u32,
    /// `st_value`.
    pub value: u32,
    /// `st_info`.
    pub info: u8,
    /// `st_shndx`.
    pub section: u16,
}

impl Symbol {
    /// Whether the library leaves it to the PD (SHN_UNDEF).
    pub fn is_undefined(&self) -> bool {
        self.section == 0
    }

    /// The address it has once the image is at `bias` (`base - first_page`); `None` when undefined.
    pub fn defined_address(&self, bias: u32) -> Option<u32> {
        match self.section {
            0 => None,
            SHN_ABS => Some(self.value),
            _ => Some(bias.wrapping_add(self.value)),
        }
    }
}

/// Where `.dynsym` and `.dynstr` are in the image, checked to lie in PT_LOAD segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SymbolTable {
    symbols: usize,
    count: u32,
    strings: usize,
    string_bytes: u32,
}

impl SymbolTable {
    pub(super) fn new(dynamic: &Dynamic, image: &[u8], layout: &Layout) -> Result<SymbolTable, Refusal> {
        let count = dynamic.symbol_count(image, layout)?;
        let symbol_table = dynamic.symbol_table.ok_or(Refusal::BadDynamic("it has no DT_SYMTAB"))?;
        let symbol_bytes = count.checked_mul(SYMBOL_BYTES).ok_or(Refusal::BadDynamic("the symbol count is absurd"))?;
        let symbols = layout
            .offset_in_readable_segments(symbol_table, symbol_bytes)
            .ok_or(Refusal::BadDynamic("DT_SYMTAB lies outside the readable PT_LOAD segments"))?;
        let string_table = dynamic.string_table.ok_or(Refusal::BadDynamic("it has no DT_STRTAB"))?;
        let string_bytes = dynamic.string_bytes.ok_or(Refusal::BadDynamic("it has no DT_STRSZ"))?;
        let strings = layout
            .offset_in_readable_segments(string_table, string_bytes)
            .ok_or(Refusal::BadDynamic("DT_STRTAB lies outside the readable PT_LOAD segments"))?;
        Ok(SymbolTable { symbols, count, strings, string_bytes })
    }

    /// How many entries `.dynsym` has (the first is the null symbol).
    pub fn count(&self) -> u32 {
        self.count
    }

    /// `.dynsym` as `(image offset, bytes)`.
    pub fn symbols_range(&self) -> (usize, usize) {
        (self.symbols, self.count as usize * SYMBOL_BYTES as usize)
    }

    /// `.dynstr` as `(image offset, bytes)`.
    pub fn strings_range(&self) -> (usize, usize) {
        (self.strings, self.string_bytes as usize)
    }

    /// Entry `index`, read from `symbols` (the bytes of [`SymbolTable::symbols_range`]).
    pub fn symbol(&self, symbols: &[u8], index: u32) -> Option<Symbol> {
        if index >= self.count {
            return None;
        }
        let at = index as usize * SYMBOL_BYTES as usize;
        Some(Symbol {
            name: u32_at(symbols, at)?,
            value: u32_at(symbols, at + 4)?,
            info: *symbols.get(at + 12)?,
            section: u16_at(symbols, at + 14)?,
        })
    }

    /// The NUL-terminated string at `offset` of `strings` (the bytes of [`SymbolTable::strings_range`]), without
    /// its NUL; `None` when it starts outside or has no NUL inside.
    pub fn string<'s>(&self, strings: &'s [u8], offset: u32) -> Option<&'s [u8]> {
        let rest = strings.get(offset as usize..)?;
        let length = rest.iter().position(|&byte| byte == 0)?;
        Some(&rest[..length])
    }

    /// `dlsym`: the defined global or weak function or object called `name`, as its `st_value`.
    pub fn lookup(&self, symbols: &[u8], strings: &[u8], name: &[u8]) -> Option<Symbol> {
        (1..self.count).filter_map(|index| self.symbol(symbols, index)).find(|symbol| {
            let (binding, kind) = (symbol.info >> 4, symbol.info & 0xF);
            !symbol.is_undefined()
                && symbol.section < SHN_LORESERVE
                && matches!(binding, STB_GLOBAL | STB_WEAK)
                && matches!(kind, STT_FUNC | STT_OBJECT)
                && self.string(strings, symbol.name) == Some(name)
        })
    }

    /// The two tables' bytes within `image`.
    pub fn tables<'i>(&self, image: &'i [u8]) -> Option<(&'i [u8], &'i [u8])> {
        let (symbols, symbol_bytes) = self.symbols_range();
        let (strings, string_bytes) = self.strings_range();
        Some((image.get(symbols..symbols + symbol_bytes)?, image.get(strings..strings + string_bytes)?))
    }
}
