//! Why the loader refuses a library: one reason per problem, displayed as the end of the line
//! `lpai-pd-shell: <path>: <reason>`.

use super::relocations::relocation_name;
use crate::text::Escaped;
use core::fmt;

/// A name copied out of the refused file (a library or symbol name), cut at [`Name::CAPACITY`] bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Name {
    bytes: [u8; Name::CAPACITY],
    length: u8,
    cut: bool,
}

impl Name {
    /// Bytes kept of a name.
    pub const CAPACITY: usize = 96;

    /// Copies `bytes` (cut if longer than [`Name::CAPACITY`]).
    pub fn new(bytes: &[u8]) -> Name {
        let kept = bytes.len().min(Name::CAPACITY);
        let mut name = Name { bytes: [0; Name::CAPACITY], length: kept as u8, cut: kept < bytes.len() };
        name.bytes[..kept].copy_from_slice(&bytes[..kept]);
        name
    }

    /// The bytes kept.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.length)]
    }
}

impl fmt::Display for Name {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}{}", Escaped(self.as_bytes()), if self.cut { "..." } else { "" })
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "\"{self}\"")
    }
}

/// Why a library cannot be loaded into the PD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Shorter than an ELF header.
    TooShort {
        /// The file's size.
        bytes: usize,
    },
    /// No `\x7fELF` at the start.
    NotElf,
    /// Not ELFCLASS32.
    NotClass32 {
        /// `EI_CLASS`.
        class: u8,
    },
    /// Not little-endian.
    NotLittleEndian {
        /// `EI_DATA`.
        data: u8,
    },
    /// Not ET_DYN.
    NotSharedObject {
        /// `e_type`.
        kind: u16,
    },
    /// Not EM_HEXAGON.
    WrongMachine {
        /// `e_machine`.
        machine: u16,
    },
    /// The program header table is broken (outside the file, wrong entry size, empty).
    ProgramHeaderTable(&'static str),
    /// A program header of a type the aDSP loader refuses.
    ForbiddenSegment {
        /// Its index.
        index: usize,
        /// `p_type`.
        kind: u32,
    },
    /// A PT_LOAD or PT_DYNAMIC header with impossible numbers.
    BadSegment {
        /// Its index.
        index: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// The segments span more memory than a PD library may take.
    ImageTooLarge {
        /// The span in bytes.
        bytes: u64,
    },
    /// The dynamic section is broken.
    BadDynamic(&'static str),
    /// No DT_HEXAGON_VER entry.
    NoHexagonVersion,
    /// DT_HEXAGON_VER is not 3.
    WrongHexagonVersion {
        /// Its value.
        version: u32,
    },
    /// A DT_NEEDED entry.
    Needed {
        /// The library it names.
        library: Name,
    },
    /// An undefined symbol that is not a PD service.
    Unprovided {
        /// The symbol.
        symbol: Name,
    },
    /// A relocation of a type the loader does not apply.
    RelocationType {
        /// `ELF32_R_TYPE`.
        kind: u32,
        /// `r_offset`.
        offset: u32,
    },
    /// A relocation whose target lies outside the image.
    RelocationOutside {
        /// `r_offset`.
        offset: u32,
    },
    /// A relocation naming a symbol past the end of the symbol table.
    RelocationSymbol {
        /// `r_offset`.
        offset: u32,
        /// `ELF32_R_SYM`.
        symbol: u32,
    },
    /// An initializer (DT_INIT, DT_INIT_ARRAY) outside the executable segments.
    Initializer {
        /// Its virtual address in the file.
        address: u32,
    },
    /// More initializers than [`super::MAX_INITIALIZERS`].
    TooManyInitializers,
}

/// The name of a program header type.
fn segment_type_name(kind: u32) -> Option<&'static str> {
    Some(match kind {
        0 => "PT_NULL",
        1 => "PT_LOAD",
        2 => "PT_DYNAMIC",
        3 => "PT_INTERP",
        4 => "PT_NOTE",
        5 => "PT_SHLIB",
        6 => "PT_PHDR",
        7 => "PT_TLS",
        0x6474_e550 => "PT_GNU_EH_FRAME",
        0x6474_e551 => "PT_GNU_STACK",
        0x6474_e552 => "PT_GNU_RELRO",
        0x6474_e553 => "PT_GNU_PROPERTY",
        _ => return None,
    })
}

impl fmt::Display for Refusal {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Refusal::TooShort { bytes } => write!(formatter, "is too short to be an ELF file ({bytes} bytes)"),
            Refusal::NotElf => formatter.write_str("is not an ELF file (no ELF magic)"),
            Refusal::NotClass32 { class } => {
                write!(formatter, "is not a 32-bit ELF file (EI_CLASS {class}; the aDSP loads ELFCLASS32)")
            }
            Refusal::NotLittleEndian { data } => write!(formatter, "is not little-endian (EI_DATA {data})"),
            Refusal::NotSharedObject { kind } => {
                write!(formatter, "is not a shared object (e_type {kind}; the aDSP loader wants ET_DYN)")
            }
            Refusal::WrongMachine { machine } => {
                write!(formatter, "is built for e_machine {machine}, not Hexagon (EM_HEXAGON, 164)")
            }
            Refusal::ProgramHeaderTable(problem) => write!(formatter, "has a broken program header table: {problem}"),
            Refusal::ForbiddenSegment { index, kind } => {
                match segment_type_name(kind) {
                    Some(name) => write!(formatter, "has a {name} program header (#{index})")?,
                    None => write!(formatter, "has a program header of type {kind:#x} (#{index})")?,
                }
                formatter.write_str(": the aDSP loader accepts only PT_LOAD and PT_DYNAMIC")
            }
            Refusal::BadSegment { index, problem } => {
                write!(formatter, "has a broken program header #{index}: {problem}")
            }
            Refusal::ImageTooLarge { bytes } => write!(
                formatter,
                "spans {bytes} bytes of memory, more than a PD library may take ({} bytes)",
                super::MAX_IMAGE_BYTES
            ),
            Refusal::BadDynamic(problem) => write!(formatter, "has a broken dynamic section: {problem}"),
            Refusal::NoHexagonVersion => {
                formatter.write_str("has no DT_HEXAGON_VER (the aDSP loader requires version 3)")
            }
            Refusal::WrongHexagonVersion { version } => {
                write!(formatter, "has DT_HEXAGON_VER {version} (the aDSP loader requires version 3)")
            }
            Refusal::Needed { library } => write!(
                formatter,
                "needs {library} (DT_NEEDED): a PD library may depend on nothing but the PD's own services"
            ),
            Refusal::Unprovided { symbol } => write!(formatter, "needs {symbol}, which the PD does not provide"),
            Refusal::RelocationType { kind, offset } => {
                match relocation_name(kind) {
                    Some(name) => write!(formatter, "has a relocation of type {name} at {offset:#x}")?,
                    None => write!(formatter, "has a relocation of unknown type {kind:#x} at {offset:#x}")?,
                }
                formatter.write_str(
                    ": the PD loader applies only R_HEX_RELATIVE, R_HEX_JMP_SLOT, R_HEX_GLOB_DAT and R_HEX_32",
                )
            }
            Refusal::RelocationOutside { offset } => {
                write!(formatter, "has a relocation at {offset:#x}, outside its loaded segments")
            }
            Refusal::RelocationSymbol { offset, symbol } => {
                write!(formatter, "has a relocation at {offset:#x} naming symbol {symbol}, past the end of .dynsym")
            }
            Refusal::Initializer { address } => {
                write!(formatter, "has an initializer at {address:#x}, outside its executable segments")
            }
            Refusal::TooManyInitializers => {
                write!(formatter, "has more than {} initializers", super::MAX_INITIALIZERS)
            }
        }
    }
}
