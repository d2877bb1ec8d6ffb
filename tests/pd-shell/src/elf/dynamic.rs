//! The dynamic section, read from the image: the tables the loader needs and the entries it must refuse.

use super::{u32_at, Layout, Refusal};

const DT_NULL: u32 = 0;
const DT_NEEDED: u32 = 1;
const DT_PLTRELSZ: u32 = 2;
const DT_HASH: u32 = 4;
const DT_STRTAB: u32 = 5;
const DT_SYMTAB: u32 = 6;
const DT_RELA: u32 = 7;
const DT_RELASZ: u32 = 8;
const DT_RELAENT: u32 = 9;
const DT_STRSZ: u32 = 10;
const DT_SYMENT: u32 = 11;
const DT_INIT: u32 = 12;
const DT_REL: u32 = 17;
const DT_PLTREL: u32 = 20;
const DT_JMPREL: u32 = 23;
const DT_INIT_ARRAY: u32 = 25;
const DT_INIT_ARRAYSZ: u32 = 27;
const DT_GNU_HASH: u32 = 0x6fff_fef5;
/// The aDSP loader's version tag; it wants the value 3.
pub const DT_HEXAGON_VER: u32 = 0x7000_0001;

/// Size of one `Elf32_Rela`.
pub const RELA_BYTES: u32 = 12;
/// Size of one `Elf32_Sym`.
pub const SYMBOL_BYTES: u32 = 16;

/// What the loader takes from the dynamic section (virtual addresses as in the file).
#[derive(Clone, Copy, Debug, Default)]
pub struct Dynamic {
    pub hexagon_version: Option<u32>,
    /// The string offset of the first DT_NEEDED.
    pub first_needed: Option<u32>,
    pub string_table: Option<u32>,
    pub string_bytes: Option<u32>,
    pub symbol_table: Option<u32>,
    pub hash: Option<u32>,
    pub gnu_hash: Option<u32>,
    /// DT_RELA and DT_RELASZ.
    pub relocations: (Option<u32>, u32),
    /// DT_JMPREL and DT_PLTRELSZ.
    pub plt_relocations: (Option<u32>, u32),
    pub init: Option<u32>,
    /// DT_INIT_ARRAY and DT_INIT_ARRAYSZ.
    pub init_array: (Option<u32>, u32),
}

impl Dynamic {
    /// Reads the entries of PT_DYNAMIC (up to DT_NULL) from the image and checks the ones with fixed meanings.
    pub fn read(image: &[u8], layout: &Layout) -> Result<Dynamic, Refusal> {
        let (vaddr, bytes) = layout.dynamic;
        let start = layout.offset_in_segments(vaddr, bytes).ok_or(Refusal::BadDynamic("it lies outside the image"))?;
        let mut dynamic = Dynamic::default();
        let mut offset = start;
        let end = start + bytes as usize;
        while offset + 8 <= end {
            let (tag, value) = match (u32_at(image, offset), u32_at(image, offset + 4)) {
                (Some(tag), Some(value)) => (tag, value),
                _ => return Err(Refusal::BadDynamic("it lies outside the image")),
            };
            offset += 8;
            match tag {
                DT_NULL => break,
                DT_NEEDED => {
                    dynamic.first_needed.get_or_insert(value);
                }
                DT_HEXAGON_VER => dynamic.hexagon_version = Some(value),
                DT_STRTAB => dynamic.string_table = Some(value),
                DT_STRSZ => dynamic.string_bytes = Some(value),
                DT_SYMTAB => dynamic.symbol_table = Some(value),
                DT_SYMENT if value != SYMBOL_BYTES => return Err(Refusal::BadDynamic("DT_SYMENT is not 16")),
                DT_HASH => dynamic.hash = Some(value),
                DT_GNU_HASH => dynamic.gnu_hash = Some(value),
                DT_RELA => dynamic.relocations.0 = Some(value),
                DT_RELASZ => dynamic.relocations.1 = value,
                DT_RELAENT if value != RELA_BYTES => return Err(Refusal::BadDynamic("DT_RELAENT is not 12")),
                DT_JMPREL => dynamic.plt_relocations.0 = Some(value),
                DT_PLTRELSZ => dynamic.plt_relocations.1 = value,
                DT_PLTREL if value != DT_RELA => {
                    return Err(Refusal::BadDynamic("DT_PLTREL is not DT_RELA (the PD loader reads RELA only)"))
                }
                DT_REL => return Err(Refusal::BadDynamic("it has DT_REL relocations (the PD loader reads RELA only)")),
                DT_INIT => dynamic.init = Some(value),
                DT_INIT_ARRAY => dynamic.init_array.0 = Some(value),
                DT_INIT_ARRAYSZ => dynamic.init_array.1 = value,
                // Everything else (flags, counts, DT_PLTGOT, other processor tags) asks nothing of this loader.
                _ => {}
            }
        }
        if dynamic.relocations.1 % RELA_BYTES != 0 || dynamic.plt_relocations.1 % RELA_BYTES != 0 {
            return Err(Refusal::BadDynamic("DT_RELASZ or DT_PLTRELSZ is not a multiple of 12"));
        }
        if dynamic.init_array.1 % 4 != 0 {
            return Err(Refusal::BadDynamic("DT_INIT_ARRAYSZ is not a multiple of 4"));
        }
        Ok(dynamic)
    }

    /// The number of `.dynsym` entries: DT_HASH's nchain, or counted through DT_GNU_HASH.
    pub fn symbol_count(&self, image: &[u8], layout: &Layout) -> Result<u32, Refusal> {
        let word_at = |vaddr: u32, index: u32| {
            let address = index.checked_mul(4).and_then(|bytes| vaddr.checked_add(bytes))?;
            u32_at(image, layout.offset_in_segments(address, 4)?)
        };
        if let Some(hash) = self.hash {
            return word_at(hash, 1).ok_or(Refusal::BadDynamic("DT_HASH lies outside the PT_LOAD segments"));
        }
        let gnu_hash = self.gnu_hash.ok_or(Refusal::BadDynamic("it has neither DT_HASH nor DT_GNU_HASH"))?;
        let broken = Refusal::BadDynamic("DT_GNU_HASH is broken or lies outside the PT_LOAD segments");
        let (buckets, first_hashed, bloom_words) =
            match (word_at(gnu_hash, 0), word_at(gnu_hash, 1), word_at(gnu_hash, 2)) {
                (Some(buckets), Some(first), Some(bloom)) => (buckets, first, bloom),
                _ => return Err(broken),
            };
        // Header (4 words), bloom filter (one word each on ELF32), buckets, then one chain word per hashed symbol.
        let bucket_start = bloom_words.checked_add(4).ok_or(broken)?;
        let chain_start = bucket_start.checked_add(buckets).ok_or(broken)?;
        let mut highest = None;
        for bucket in 0..buckets {
            let first = word_at(gnu_hash, bucket_start + bucket).ok_or(broken)?;
            if first != 0 {
                highest = highest.max(Some(first));
            }
        }
        let Some(mut symbol) = highest else { return Ok(first_hashed) };
        // The chain of the highest bucket ends (low bit set) at the last symbol.
        loop {
            let chain_index = symbol.checked_sub(first_hashed).ok_or(broken)?;
            let word = word_at(gnu_hash, chain_start.checked_add(chain_index).ok_or(broken)?).ok_or(broken)?;
            if word & 1 != 0 {
                return symbol.checked_add(1).ok_or(broken);
            }
            symbol = symbol.checked_add(1).ok_or(broken)?;
        }
    }
}
