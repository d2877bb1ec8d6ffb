//! The functions of a linked Hexagon ELF file: their extents (symbol table), frames and calls (disassembly).

use super::depth::{Call, Callee, Function};
use super::disassembly::{Kind, Operation};
use anyhow::{bail, Context, Result};
use goblin::elf::{section_header, sym, Elf};
use std::collections::{BTreeMap, BTreeSet};

/// What allocframe pushes before the frame it allocates: the LR:FP pair. LLVM's `.stack_sizes` does not count it.
pub const LINK_AND_FRAME_POINTER_BYTES: u64 = 8;
/// lld's Hexagon PLT entry size; the PLT header takes the rest of `.plt`.
const PLT_ENTRY_BYTES: u64 = 16;
/// Name of the foreign callee standing for every call through a pointer.
pub const CALL_THROUGH_POINTER: &str = "calls through pointers (callr)";
/// Name of the foreign callee standing for every `jumpr` that may be a tail call through a pointer.
pub const JUMP_THROUGH_POINTER: &str = "jumpr without a frame (a jump table, or a tail call through a pointer)";

/// The call graph of a linked file.
#[derive(Debug)]
pub struct Program {
    /// Every function with a symbol, in address order.
    pub functions: Vec<Function>,
    /// Start address of each function, in the same order.
    pub starts: Vec<u64>,
    /// How many functions have a `.stack_sizes` record.
    pub recorded: usize,
    /// Functions without a record that never move the stack pointer: frame 0, read from their code.
    pub frameless_without_record: Vec<String>,
    /// Functions that cannot be analysed, with the reason: an error only if an entry point reaches them.
    pub unanalysable: Vec<(String, String)>,
}

struct Extent {
    name: String,
    start: u64,
    end: u64,
}

#[derive(Default)]
struct Body {
    allocframes: Vec<u64>,
    moves_stack_pointer: bool,
    undecoded: Option<String>,
    popping_packets: BTreeSet<u64>,
    branches: Vec<(u64, u64, Kind)>,
}

/// Builds the call graph of `elf` from its symbols, its `.stack_sizes` records and its disassembly.
pub fn build(elf: &Elf<'_>, bytes: &[u8], sizes: &BTreeMap<u64, u64>, operations: &[Operation]) -> Result<Program> {
    let extents = function_extents(elf)?;
    let starts: Vec<u64> = extents.iter().map(|e| e.start).collect();
    let plt = plt_entries(elf)?;
    let plt_range = section(elf, ".plt").map(|s| s.sh_addr..s.sh_addr + s.sh_size);
    let mut bodies: Vec<Body> = extents.iter().map(|_| Body::default()).collect();
    for operation in operations {
        let Some(index) = containing(&extents, operation.address) else { continue };
        let body = &mut bodies[index];
        match &operation.kind {
            Kind::AllocFrame(size) => body.allocframes.push(*size),
            Kind::StackPointerWrite => body.moves_stack_pointer = true,
            Kind::DeallocFrame => {
                body.popping_packets.insert(operation.packet);
            }
            Kind::Call(_) | Kind::Jump(_) | Kind::CallRegister(_) | Kind::JumpRegister(_) => {
                body.branches.push((operation.address, operation.packet, operation.kind.clone()))
            }
            Kind::Undecoded => {
                let word = word_at(elf, bytes, operation.address)?;
                if word != 0 && body.undecoded.is_none() {
                    body.undecoded = Some(format!(
                        "objdump cannot decode the word {word:#010x} at {:#x}, in which a call could hide \
                         (pass the skel's Hexagon version with --mcpu, if this objdump knows it)",
                        operation.address
                    ));
                }
            }
            Kind::Return | Kind::Other => {}
        }
    }
    let mut program = Program {
        functions: Vec::new(),
        starts,
        recorded: 0,
        frameless_without_record: Vec::new(),
        unanalysable: Vec::new(),
    };
    for (extent, body) in extents.iter().zip(&bodies) {
        let frame = frame_of(body, sizes.get(&extent.start).copied());
        if sizes.contains_key(&extent.start) {
            program.recorded += 1;
        } else if frame == Ok(0) {
            program.frameless_without_record.push(extent.name.clone());
        }
        if let Err(reason) = &frame {
            program.unanalysable.push((extent.name.clone(), reason.clone()));
        }
        let mut calls = Vec::new();
        for (site, packet, kind) in &body.branches {
            let popped = body.popping_packets.contains(packet) || frame == Ok(0);
            let callee = match kind {
                Kind::Call(target) | Kind::Jump(target) => {
                    if matches!(kind, Kind::Jump(_)) && (extent.start..extent.end).contains(target) {
                        continue;
                    }
                    // A branch into the middle of another function (assembly helpers share code) counts that
                    // whole function: its frame and every call it makes, which is never less than the part run.
                    match (containing(&extents, *target), plt.get(target)) {
                        (Some(callee), _) => Callee::Own(callee),
                        (None, Some(name)) => Callee::Foreign(format!("{name}@plt")),
                        (None, None) => {
                            let place = match &plt_range {
                                Some(range) if range.contains(target) => "inside .plt, not at an entry",
                                _ => "outside every function",
                            };
                            bail!("the branch at {site:#x} in {} goes to {target:#x}, {place}", extent.name);
                        }
                    }
                }
                Kind::CallRegister(_) => Callee::Foreign(CALL_THROUGH_POINTER.into()),
                // With the frame still allocated, `jumpr` can only be a jump table inside the function.
                Kind::JumpRegister(_) if !popped => continue,
                Kind::JumpRegister(_) => Callee::Foreign(JUMP_THROUGH_POINTER.into()),
                _ => unreachable!("only branches are collected"),
            };
            let after_frame_popped = popped && !matches!(kind, Kind::Call(_) | Kind::CallRegister(_));
            calls.push(Call { site: *site, callee, after_frame_popped });
        }
        program.functions.push(Function { name: extent.name.clone(), frame, calls });
    }
    Ok(program)
}

/// A function's own frame: its `.stack_sizes` record plus the LR:FP pair when it uses allocframe; 0 when it has
/// no record and never moves the stack pointer; otherwise the reason it cannot be known.
fn frame_of(body: &Body, recorded: Option<u64>) -> Result<u64, String> {
    if let Some(undecoded) = &body.undecoded {
        return Err(undecoded.clone());
    }
    let Some(recorded) = recorded else {
        if body.allocframes.is_empty() && !body.moves_stack_pointer {
            return Ok(0);
        }
        return Err("it moves the stack pointer but has no .stack_sizes record, so its frame size is unknown".into());
    };
    if let Some(&allocated) = body.allocframes.iter().find(|&&allocated| allocated > recorded) {
        return Err(format!("allocframe allocates {allocated} bytes, more than its .stack_sizes record ({recorded})"));
    }
    let pushed = if body.allocframes.is_empty() { 0 } else { LINK_AND_FRAME_POINTER_BYTES };
    Ok(recorded + pushed)
}

/// Every defined function symbol in an executable section, one per address (a global name before a local
/// alias), in address order. Each runs to the next one (or the end of its section) whatever its symbol's size
/// says: the assembly helpers of compiler-builtins keep code past their symbols' sizes and branch to it.
fn function_extents(elf: &Elf<'_>) -> Result<Vec<Extent>> {
    if elf.syms.is_empty() {
        bail!("no .symtab: the stack check needs the unstripped file");
    }
    let mut by_start: BTreeMap<u64, (String, bool, u64)> = BTreeMap::new();
    for symbol in elf.syms.iter().filter(|s| s.st_type() == sym::STT_FUNC && s.st_shndx != 0) {
        let Some(section) = elf.section_headers.get(symbol.st_shndx) else { continue };
        if section.sh_flags & u64::from(section_header::SHF_EXECINSTR) == 0 {
            continue;
        }
        let name = elf.strtab.get_at(symbol.st_name).unwrap_or("?").to_string();
        let global = symbol.st_bind() != sym::STB_LOCAL;
        let section_end = section.sh_addr + section.sh_size;
        match by_start.get(&symbol.st_value) {
            Some((_, known_global, _)) if *known_global || !global => {}
            _ => {
                by_start.insert(symbol.st_value, (name, global, section_end));
            }
        }
    }
    let starts: Vec<u64> = by_start.keys().copied().collect();
    Ok(by_start
        .into_iter()
        .enumerate()
        .map(|(position, (start, (name, _, section_end)))| {
            let end = starts.get(position + 1).copied().unwrap_or(section_end).min(section_end);
            Extent { name, start, end }
        })
        .collect())
}

fn containing(extents: &[Extent], address: u64) -> Option<usize> {
    let index = extents.partition_point(|e| e.start <= address).checked_sub(1)?;
    (address < extents[index].end).then_some(index)
}

/// The symbol each PLT entry jumps to, by entry address: entry i belongs to `.rela.plt` entry i.
fn plt_entries(elf: &Elf<'_>) -> Result<BTreeMap<u64, String>> {
    let mut entries = BTreeMap::new();
    let count = elf.pltrelocs.len() as u64;
    let Some(plt) = section(elf, ".plt") else {
        if count > 0 {
            bail!(".rela.plt has {count} entries but there is no .plt section");
        }
        return Ok(entries);
    };
    let header = plt.sh_size.checked_sub(count * PLT_ENTRY_BYTES).context(".plt is smaller than .rela.plt says")?;
    for (index, relocation) in elf.pltrelocs.iter().enumerate() {
        let symbol = elf.dynsyms.get(relocation.r_sym).context(".rela.plt names a symbol .dynsym does not have")?;
        let name = elf.dynstrtab.get_at(symbol.st_name).unwrap_or("?").to_string();
        entries.insert(plt.sh_addr + header + index as u64 * PLT_ENTRY_BYTES, name);
    }
    Ok(entries)
}

fn section<'e>(elf: &'e Elf<'_>, name: &str) -> Option<&'e section_header::SectionHeader> {
    elf.section_headers.iter().find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(name))
}

/// The little-endian instruction word at `address`, read from the section that holds it.
fn word_at(elf: &Elf<'_>, bytes: &[u8], address: u64) -> Result<u32> {
    let holder = elf
        .section_headers
        .iter()
        .find(|s| s.sh_type == section_header::SHT_PROGBITS && (s.sh_addr..s.sh_addr + s.sh_size).contains(&address))
        .with_context(|| format!("no section holds the address {address:#x}"))?;
    let offset = (holder.sh_offset + address - holder.sh_addr) as usize;
    let word =
        bytes.get(offset..offset + 4).with_context(|| format!("the word at {address:#x} lies outside the file"))?;
    Ok(u32::from_le_bytes([word[0], word[1], word[2], word[3]]))
}

impl Program {
    /// The index of the function named `name`: its symbol, or its demangled path without the hash (a Rust
    /// function that is not exported, such as one of a function table, e.g. `lpai_direct_capi::process`).
    pub fn find(&self, name: &str) -> Option<usize> {
        let position = self.functions.iter().position(|f| f.name == name);
        position.or_else(|| self.functions.iter().position(|f| super::demangle(&f.name) == name))
    }
}
