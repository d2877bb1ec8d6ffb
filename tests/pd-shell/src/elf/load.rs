//! Loading a checked layout into an image: copy the segments, check the dynamic section, relocate.

use super::dynamic::Dynamic;
use super::symbols::SymbolTable;
use super::{relocations, u32_at, Layout, Name, Refusal};

/// Most initializers (DT_INIT plus DT_INIT_ARRAY entries) one library may have.
pub const MAX_INITIALIZERS: usize = 32;

/// A library loaded into its image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// Relocations applied.
    pub relocations: u32,
    /// `.dynsym` and `.dynstr`, for `dlsym`.
    pub symbols: SymbolTable,
    initializers: [u32; MAX_INITIALIZERS],
    initializer_count: usize,
}

impl Loaded {
    /// The addresses of the functions to run, in order (DT_INIT, then DT_INIT_ARRAY), once the pages are
    /// protected; each lies in an executable segment.
    pub fn initializers(&self) -> &[u32] {
        &self.initializers[..self.initializer_count]
    }
}

/// Loads `file` (checked into `layout` by [`Layout::parse`]) into `image`, the zeroed `layout.span` bytes
/// that will live at address `base`: copies the segments, checks DT_HEXAGON_VER, DT_NEEDED and the undefined
/// symbols (each must be a PD service: `resolve` answers its address or `None`), applies the relocations.
pub fn load(
    file: &[u8],
    layout: &Layout,
    image: &mut [u8],
    base: u32,
    resolve: &mut dyn FnMut(&[u8]) -> Option<u32>,
) -> Result<Loaded, Refusal> {
    assert_eq!(image.len(), layout.span as usize, "the image must be the layout's span");
    for segment in layout.segments() {
        // Layout::parse checked both ranges.
        let start = (segment.vaddr - layout.first_page) as usize;
        let source = segment.file_offset as usize..(segment.file_offset + segment.file_bytes) as usize;
        let (Some(target), Some(source)) =
            (image.get_mut(start..start + segment.memory_bytes as usize), file.get(source))
        else {
            return Err(Refusal::ProgramHeaderTable("a segment does not fit its image"));
        };
        let (copied, zeroed) = target.split_at_mut(source.len());
        copied.copy_from_slice(source);
        zeroed.fill(0);
    }
    let dynamic = Dynamic::read(image, layout)?;
    let symbols = SymbolTable::new(&dynamic, image, layout)?;
    let (table, strings) = symbols.tables(image).ok_or(Refusal::BadDynamic("its symbol tables cannot be read"))?;
    match dynamic.hexagon_version {
        None => return Err(Refusal::NoHexagonVersion),
        Some(3) => {}
        Some(version) => return Err(Refusal::WrongHexagonVersion { version }),
    }
    if let Some(offset) = dynamic.first_needed {
        let library =
            symbols.string(strings, offset).ok_or(Refusal::BadDynamic("a DT_NEEDED name lies outside DT_STRTAB"))?;
        return Err(Refusal::Needed { library: Name::new(library) });
    }
    for index in 1..symbols.count() {
        let symbol = symbols.symbol(table, index).ok_or(Refusal::BadDynamic("a symbol lies outside DT_SYMTAB"))?;
        if !symbol.is_undefined() {
            continue;
        }
        let name =
            symbols.string(strings, symbol.name).ok_or(Refusal::BadDynamic("a symbol name lies outside DT_STRTAB"))?;
        if !name.is_empty() && resolve(name).is_none() {
            return Err(Refusal::Unprovided { symbol: Name::new(name) });
        }
    }
    let relocations = relocations::relocate(image, base, layout, &dynamic, &symbols, resolve)?;
    let mut loaded = Loaded { relocations, symbols, initializers: [0; MAX_INITIALIZERS], initializer_count: 0 };
    let bias = base.wrapping_sub(layout.first_page);
    let mut add = |address: u32| -> Result<(), Refusal> {
        // Zero and all-ones entries are placeholders loaders skip.
        if address == 0 || address == u32::MAX {
            return Ok(());
        }
        let vaddr = address.wrapping_sub(bias);
        if !layout.is_executable(vaddr) {
            return Err(Refusal::Initializer { address: vaddr });
        }
        let slot = loaded.initializers.get_mut(loaded.initializer_count).ok_or(Refusal::TooManyInitializers)?;
        *slot = address;
        loaded.initializer_count += 1;
        Ok(())
    };
    if let Some(init) = dynamic.init {
        add(bias.wrapping_add(init))?;
    }
    if let (Some(array), bytes) = dynamic.init_array {
        let start = layout
            .offset_in_segments(array, bytes)
            .ok_or(Refusal::BadDynamic("DT_INIT_ARRAY lies outside the PT_LOAD segments"))?;
        for entry in 0..bytes as usize / 4 {
            // Relocated already: each entry is an address.
            add(u32_at(image, start + entry * 4).unwrap_or(0))?;
        }
    }
    Ok(loaded)
}
