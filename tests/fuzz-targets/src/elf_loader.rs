//! Target `elf_loader`: the PD shell's ELF loader (`lpai_pd_shell::elf`) on arbitrary files: the header and
//! program headers checked into a layout, the page protections planned, and a file whose image is at most
//! [`MAX_FUZZ_IMAGE`] bytes loaded (segments copied, dynamic section checked, relocations applied) with the PD's
//! services resolved as the shell resolves them.
//!
//! Input: the file's bytes.

use lpai_pd_shell::elf::{load, Layout, PAGE_SIZE, PROT_EXEC, PROT_READ, PROT_WRITE};
use lpai_pd_shell::service_names::index_of;

/// Largest image the target loads (the loader allows 256 MiB; zeroing that for every input would make the
/// fuzzer crawl, and the bytes past the file are zero either way).
pub const MAX_FUZZ_IMAGE: u32 = 16 << 20;
/// Where the image is loaded.
const BASE: u32 = 0x4000_0000;

/// The target.
pub fn run(data: &[u8]) {
    let Ok(layout) = Layout::parse(data) else { return };
    assert!(layout.span % PAGE_SIZE == 0 && layout.span > 0, "{layout:?}");
    for segment in layout.segments() {
        let end = u64::from(segment.vaddr) + u64::from(segment.memory_bytes);
        assert!(u64::from(layout.first_page) <= u64::from(segment.vaddr), "{layout:?}");
        assert!(end <= u64::from(layout.first_page) + u64::from(layout.span), "{layout:?}");
        assert!(u64::from(segment.file_offset) + u64::from(segment.file_bytes) <= data.len() as u64, "{layout:?}");
    }
    for page_size in [PAGE_SIZE, 64 << 10] {
        let mut covered = 0u32;
        for (offset, bytes, protection) in layout.protection_runs(page_size) {
            assert_eq!(offset, covered, "protection runs leave a gap: {layout:?}");
            assert!(bytes > 0 && protection & !(PROT_READ | PROT_WRITE | PROT_EXEC) == 0, "{layout:?}");
            covered += bytes;
        }
        assert_eq!(covered, layout.span, "protection runs do not cover the image: {layout:?}");
    }
    if layout.span > MAX_FUZZ_IMAGE {
        return;
    }
    let mut image = vec![0u8; layout.span as usize];
    let mut resolve = |name: &[u8]| index_of(name).map(|index| 0x1000_0000 + 16 * index as u32);
    let Ok(loaded) = load(data, &layout, &mut image, BASE, &mut resolve) else { return };
    let bias = BASE.wrapping_sub(layout.first_page);
    for &address in loaded.initializers() {
        assert!(layout.is_executable(address.wrapping_sub(bias)), "an initializer outside the code: {address:#x}");
    }
    if let Some((symbols, strings)) = loaded.symbols.tables(&image) {
        for index in 0..loaded.symbols.count().min(4096) {
            if let Some(symbol) = loaded.symbols.symbol(symbols, index) {
                let _ = loaded.symbols.string(strings, symbol.name);
                let _ = symbol.defined_address(bias);
            }
        }
        let _ = loaded.symbols.lookup(symbols, strings, b"lpai_direct_skel_handle_invoke");
    }
}
