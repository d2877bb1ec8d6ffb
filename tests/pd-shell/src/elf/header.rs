//! The ELF header and the program headers: what the file is, and the image its PT_LOAD segments make.

use super::{u16_at, u32_at, Refusal};

/// The granule the image is planned in (the smallest page size; the system's may be larger: qemu-hexagon's
/// pages are 64 KiB).
pub const PAGE_SIZE: u32 = 4096;
/// Most memory one PD library may span.
pub const MAX_IMAGE_BYTES: u32 = 256 << 20;
/// Most PT_LOAD segments one library may have.
pub const MAX_SEGMENTS: usize = 16;
/// Page protection bits (Linux `PROT_*`), as [`Layout::protection_runs`] gives them.
pub const PROT_READ: u32 = 1;
/// See [`PROT_READ`].
pub const PROT_WRITE: u32 = 2;
/// See [`PROT_READ`].
pub const PROT_EXEC: u32 = 4;

const EM_HEXAGON: u16 = 164;
const ET_DYN: u16 = 3;
const HEADER_BYTES: usize = 52;
const PROGRAM_HEADER_BYTES: usize = 32;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;

/// One PT_LOAD segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    /// `p_vaddr`.
    pub vaddr: u32,
    /// `p_memsz`.
    pub memory_bytes: u32,
    /// `p_offset`.
    pub file_offset: u32,
    /// `p_filesz`.
    pub file_bytes: u32,
    /// `p_flags` (PF_R, PF_W, PF_X).
    pub flags: u32,
}

impl Segment {
    /// The segment's page protection (`PROT_*` bits).
    pub fn protection(&self) -> u32 {
        let mut protection = 0;
        if self.flags & PF_R != 0 {
            protection |= PROT_READ;
        }
        if self.flags & PF_W != 0 {
            protection |= PROT_WRITE;
        }
        if self.flags & PF_X != 0 {
            protection |= PROT_EXEC;
        }
        protection
    }

    fn end(&self) -> u32 {
        // Checked when the layout was made.
        self.vaddr.saturating_add(self.memory_bytes)
    }
}

/// A checked header and program header table: where each segment goes in the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    segments: [Segment; MAX_SEGMENTS],
    count: usize,
    /// The virtual address image byte 0 stands for (the first segment's page).
    pub first_page: u32,
    /// The image's size: from the first segment's page to the last one's end, in whole pages.
    pub span: u32,
    /// PT_DYNAMIC's virtual address and size.
    pub dynamic: (u32, u32),
}

impl Layout {
    /// Checks `file`'s ELF header and program headers.
    pub fn parse(file: &[u8]) -> Result<Layout, Refusal> {
        if file.len() < HEADER_BYTES {
            return Err(Refusal::TooShort { bytes: file.len() });
        }
        if file[..4] != *b"\x7fELF" {
            return Err(Refusal::NotElf);
        }
        match (file[4], file[5]) {
            (1, 1) => {}
            (1, data) => return Err(Refusal::NotLittleEndian { data }),
            (class, _) => return Err(Refusal::NotClass32 { class }),
        }
        let half = |offset| u16_at(file, offset).unwrap_or(0);
        match (half(16), half(18)) {
            (ET_DYN, EM_HEXAGON) => {}
            (ET_DYN, machine) => return Err(Refusal::WrongMachine { machine }),
            (kind, _) => return Err(Refusal::NotSharedObject { kind }),
        }
        let table = u32_at(file, 28).unwrap_or(0) as usize;
        let (entry_bytes, entries) = (usize::from(half(42)), usize::from(half(44)));
        if entries == 0 {
            return Err(Refusal::ProgramHeaderTable("it has no entries"));
        }
        if entry_bytes != PROGRAM_HEADER_BYTES {
            return Err(Refusal::ProgramHeaderTable("its entries are not 32 bytes (e_phentsize)"));
        }
        let table_end = entries.checked_mul(PROGRAM_HEADER_BYTES).and_then(|bytes| bytes.checked_add(table));
        if table_end.is_none_or(|end| end > file.len()) {
            return Err(Refusal::ProgramHeaderTable("it lies outside the file"));
        }
        let mut layout =
            Layout { segments: [Segment::default(); MAX_SEGMENTS], count: 0, first_page: 0, span: 0, dynamic: (0, 0) };
        let mut dynamic = None;
        for index in 0..entries {
            let word = |field: usize| u32_at(file, table + index * PROGRAM_HEADER_BYTES + field * 4).unwrap_or(0);
            let (kind, offset, vaddr, file_bytes, memory_bytes, flags) =
                (word(0), word(1), word(2), word(4), word(5), word(6));
            let bad = |problem| Refusal::BadSegment { index, problem };
            if kind != PT_LOAD && kind != PT_DYNAMIC {
                return Err(Refusal::ForbiddenSegment { index, kind });
            }
            if offset.checked_add(file_bytes).is_none_or(|end| end as usize > file.len()) {
                return Err(bad("its file bytes lie outside the file"));
            }
            if file_bytes > memory_bytes {
                return Err(bad("it has more bytes in the file than in memory"));
            }
            if vaddr.checked_add(memory_bytes).is_none() {
                return Err(bad("it ends past the 32-bit address space"));
            }
            if kind == PT_DYNAMIC {
                if dynamic.replace((vaddr, memory_bytes)).is_some() {
                    return Err(bad("a second PT_DYNAMIC"));
                }
                continue;
            }
            let segment = Segment { vaddr, memory_bytes, file_offset: offset, file_bytes, flags };
            if layout.segments().last().is_some_and(|previous| previous.end() > vaddr) {
                return Err(bad("it overlaps or precedes the PT_LOAD before it (PT_LOAD must ascend)"));
            }
            *layout.segments.get_mut(layout.count).ok_or(bad("more than 16 PT_LOAD segments"))? = segment;
            layout.count += 1;
        }
        let (first, last) = match (layout.segments().first(), layout.segments().last()) {
            (Some(first), Some(last)) => (*first, *last),
            _ => return Err(Refusal::ProgramHeaderTable("it has no PT_LOAD segment")),
        };
        layout.dynamic = dynamic.ok_or(Refusal::ProgramHeaderTable("it has no PT_DYNAMIC"))?;
        layout.first_page = first.vaddr & !(PAGE_SIZE - 1);
        let end = u64::from(last.end()).next_multiple_of(u64::from(PAGE_SIZE));
        let span = end - u64::from(layout.first_page);
        if span > u64::from(MAX_IMAGE_BYTES) {
            return Err(Refusal::ImageTooLarge { bytes: span });
        }
        layout.span = span as u32;
        if layout.offset_in_segments(layout.dynamic.0, layout.dynamic.1).is_none() {
            return Err(Refusal::BadDynamic("PT_DYNAMIC lies outside the PT_LOAD segments"));
        }
        Ok(layout)
    }

    /// The PT_LOAD segments, ascending.
    pub fn segments(&self) -> &[Segment] {
        &self.segments[..self.count]
    }

    /// The image offset of `bytes` bytes at virtual address `vaddr`, if they lie within one PT_LOAD segment.
    pub fn offset_in_segments(&self, vaddr: u32, bytes: u32) -> Option<usize> {
        self.offset_in_segments_with(vaddr, bytes, 0)
    }

    /// The same, but only inside a readable segment (tables the shell reads after protecting the pages).
    pub fn offset_in_readable_segments(&self, vaddr: u32, bytes: u32) -> Option<usize> {
        self.offset_in_segments_with(vaddr, bytes, PF_R)
    }

    fn offset_in_segments_with(&self, vaddr: u32, bytes: u32, flags: u32) -> Option<usize> {
        let end = vaddr.checked_add(bytes)?;
        let inside =
            |segment: &&Segment| segment.flags & flags == flags && segment.vaddr <= vaddr && end <= segment.end();
        self.segments().iter().find(inside)?;
        Some((vaddr - self.first_page) as usize)
    }

    /// Whether `vaddr` lies in an executable segment.
    pub fn is_executable(&self, vaddr: u32) -> bool {
        self.segments()
            .iter()
            .any(|segment| segment.flags & PF_X != 0 && segment.vaddr <= vaddr && vaddr < segment.end())
    }

    /// The image's pages of `page_size` bytes (a power of two, at least [`PAGE_SIZE`]; the image starts on a
    /// page) as runs of equal protection: `(offset, bytes, PROT_* bits)`, covering the whole span (the last run
    /// ends with it). A page two segments share gets the union of their protections; a page no segment touches
    /// gets none.
    pub fn protection_runs(&self, page_size: u32) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        let page_size = page_size.max(PAGE_SIZE).next_power_of_two();
        let pages = self.span.div_ceil(page_size);
        let protection_of = move |page: u32| {
            let start = u64::from(self.first_page) + u64::from(page) * u64::from(page_size);
            let end = start + u64::from(page_size);
            self.segments()
                .iter()
                .filter(|segment| {
                    segment.memory_bytes > 0 && u64::from(segment.vaddr) < end && start < u64::from(segment.end())
                })
                .fold(0, |protection, segment| protection | segment.protection())
        };
        let mut page = 0;
        core::iter::from_fn(move || {
            if page >= pages {
                return None;
            }
            let (first, protection) = (page, protection_of(page));
            while page < pages && protection_of(page) == protection {
                page += 1;
            }
            let offset = first * page_size;
            Some((offset, (page * page_size).min(self.span) - offset, protection))
        })
    }
}
