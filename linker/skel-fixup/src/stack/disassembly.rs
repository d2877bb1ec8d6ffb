//! Reads `llvm-objdump -d --no-show-raw-insn` output of Hexagon code into the operations the stack check needs.
//!
//! A Hexagon packet is printed as lines between `{` and `}`, one instruction word a line; a line may hold two
//! instructions separated by `;` (a duplex, or a compare and its jump). Branch targets are absolute addresses
//! (`call 0xc198`, `if (!p0.new) jump:nt 0x5084`); objdump names no symbol beside them, so the caller maps
//! addresses to functions from the symbol table.

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::Command;

/// What one instruction means for the stack check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// `call ADDRESS`, conditional or not.
    Call(u64),
    /// `jump ADDRESS`, conditional or not: a branch inside the function or a tail call.
    Jump(u64),
    /// `callr REGISTER`: a call through a pointer.
    CallRegister(String),
    /// `jumpr REGISTER` other than `r31`: a jump table or a tail call through a pointer.
    JumpRegister(String),
    /// `jumpr r31` or `dealloc_return`.
    Return,
    /// `allocframe(#SIZE)`: pushes the LR:FP pair (8 bytes), then allocates SIZE bytes.
    AllocFrame(u64),
    /// `deallocframe`: pops the frame, restoring the caller's stack pointer.
    DeallocFrame,
    /// Any other write to the stack pointer (`r29 = add(r29,#-16)`).
    StackPointerWrite,
    /// A word objdump could not decode (`<unknown>`).
    Undecoded,
    /// Everything else.
    Other,
}

/// One instruction at its address, with the address of the packet it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// Address of the instruction word.
    pub address: u64,
    /// Address of the first word of its packet.
    pub packet: u64,
    /// What it does.
    pub kind: Kind,
    /// The instruction as objdump printed it.
    pub text: String,
}

/// Runs `objdump -d --no-show-raw-insn --mcpu=MCPU FILE` and returns its output.
pub fn run_objdump(objdump: &str, mcpu: &str, file: &Path) -> Result<String> {
    let output = Command::new(objdump)
        .args(["-d", "--no-show-raw-insn", &format!("--mcpu={mcpu}")])
        .arg(file)
        .output()
        .with_context(|| format!("cannot start {objdump} (Debian package llvm-19)"))?;
    let errors = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() || errors.contains("not a recognized processor") {
        bail!("{objdump} --mcpu={mcpu} failed on {}: {}", file.display(), errors.trim());
    }
    String::from_utf8(output.stdout).with_context(|| format!("{objdump} printed something that is not UTF-8"))
}

/// The operations of a whole listing, in address order as printed.
pub fn parse(listing: &str) -> Result<Vec<Operation>> {
    let mut operations = Vec::new();
    let mut packet = 0;
    for line in listing.lines() {
        let Some((address, text)) = instruction_line(line) else { continue };
        let text = text.trim();
        if text.starts_with('{') || text == "<unknown>" {
            packet = address;
        }
        let body = text.trim_start_matches('{').trim();
        let body = match body.rfind('}') {
            Some(end) => body[..end].trim(),
            None => body,
        };
        for piece in body.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let kind = classify(piece).with_context(|| format!("reading the instruction at {address:#x}: `{text}`"))?;
            operations.push(Operation { address, packet, kind, text: piece.to_string() });
        }
    }
    Ok(operations)
}

/// `"    5050: { call 0xc198 }"` as (0x5050, `"{ call 0xc198 }"`); `None` for headers, labels and blank lines.
fn instruction_line(line: &str) -> Option<(u64, &str)> {
    let (address, rest) = line.trim_start().split_once(':')?;
    if address.is_empty() || !address.bytes().all(|b| b.is_ascii_hexdigit()) || !line.starts_with(' ') {
        return None;
    }
    Some((u64::from_str_radix(address, 16).ok()?, rest))
}

/// What a single instruction (one side of a `;`) does.
pub fn classify(piece: &str) -> Result<Kind> {
    if piece == "<unknown>" {
        return Ok(Kind::Undecoded);
    }
    let body = without_predicate(piece);
    if body.contains("dealloc_return") {
        return Ok(Kind::Return);
    }
    if body.contains("deallocframe") {
        return Ok(Kind::DeallocFrame);
    }
    if let Some(arguments) = body.split_once("allocframe(").map(|(_, after)| after) {
        if body.contains(":raw") {
            bail!("allocframe in its raw form: its size cannot be read");
        }
        let immediate = arguments.split(')').next().unwrap_or("").rsplit('#').next().unwrap_or("");
        return Ok(Kind::AllocFrame(number(immediate).context("allocframe size")?));
    }
    let mnemonic = body.split_whitespace().next().unwrap_or("");
    let operand = || body.split_whitespace().last().unwrap_or("").to_string();
    match mnemonic.split(':').next().unwrap_or("") {
        "callr" => return Ok(Kind::CallRegister(operand())),
        "jumpr" if operand() == "r31" => return Ok(Kind::Return),
        "jumpr" => return Ok(Kind::JumpRegister(operand())),
        "call" => return Ok(Kind::Call(number(&operand()).context("call target")?)),
        "jump" => return Ok(Kind::Jump(number(&operand()).context("jump target")?)),
        _ => {}
    }
    let destination = body.split_once('=').map(|(left, _)| left.trim_end_matches(['+', '-', '|', '&', '^']).trim());
    if matches!(destination, Some("r29" | "sp" | "r29:28")) {
        return Ok(Kind::StackPointerWrite);
    }
    Ok(Kind::Other)
}

/// The instruction without its `if (...)` predicate.
fn without_predicate(piece: &str) -> &str {
    let Some(rest) = piece.strip_prefix("if") else { return piece };
    let rest = rest.trim_start();
    if !rest.starts_with('(') {
        return piece;
    }
    let mut depth = 0;
    for (index, character) in rest.char_indices() {
        match character {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return rest[index + 1..].trim_start();
                }
            }
            _ => {}
        }
    }
    piece
}

/// `#0x20`, `##0x1f00`, `0xc198` or `32` as a number.
fn number(text: &str) -> Result<u64> {
    let text = text.trim().trim_start_matches('#');
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.with_context(|| format!("`{text}` is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_branches_frames_and_returns() {
        let cases = [
            ("call 0xc198", Kind::Call(0xc198)),
            ("if (p0) call 0x10", Kind::Call(0x10)),
            ("if (!p0.new) jump:nt 0x5084", Kind::Jump(0x5084)),
            ("if (!cmp.eq(r20.new,#0x0)) jump:t 0x5040", Kind::Jump(0x5040)),
            ("jump 0x50dc", Kind::Jump(0x50dc)),
            ("callr r4", Kind::CallRegister("r4".into())),
            ("jumpr r31", Kind::Return),
            ("if (p0.new) jumpr:nt r31", Kind::Return),
            ("jumpr r0", Kind::JumpRegister("r0".into())),
            ("r17:16 = memd(r29+#0x0)", Kind::Other),
            ("if (p0) dealloc_return", Kind::Return),
            ("dealloc_return", Kind::Return),
            ("deallocframe", Kind::DeallocFrame),
            ("allocframe(#0x280)", Kind::AllocFrame(0x280)),
            ("r29 = add(r29,#-0x10)", Kind::StackPointerWrite),
            ("if (!p0.new) r29 = add(r29,#0x10)", Kind::StackPointerWrite),
            ("memd(r29+#-0x10) = r17:16", Kind::Other),
            ("r1 = add(r29,#0x6)", Kind::Other),
            ("<unknown>", Kind::Undecoded),
        ];
        for (text, expected) in cases {
            assert_eq!(classify(text).unwrap(), expected, "{text}");
        }
        assert!(classify("call r9000").is_err());
    }

    #[test]
    fn parses_packets_duplexes_and_compounds() {
        let listing = "\
t.so:\tfile format elf32-hexagon

Disassembly of section .text:

00001030 <lpai_direct_open>:
    1030: { \tp0 = cmp.eq(r0,#0x3); if (!p0.new) jump:t 0x1044
    1034:   \tmemd(r29+#-0x10) = r17:16; \tallocframe(#0x8) } 
    1038: { \tcall 0x10e0
    103c:   \tr16 = r0 } :endloop0
    1040: <unknown>
    1044: { \tr17:16 = memd(r29+#0x0); \tdealloc_return } 
";
        let operations = parse(listing).unwrap();
        let summary: Vec<_> = operations.iter().map(|o| (o.address, o.packet, o.kind.clone())).collect();
        assert_eq!(
            summary,
            [
                (0x1030, 0x1030, Kind::Other),
                (0x1030, 0x1030, Kind::Jump(0x1044)),
                (0x1034, 0x1030, Kind::Other),
                (0x1034, 0x1030, Kind::AllocFrame(8)),
                (0x1038, 0x1038, Kind::Call(0x10e0)),
                (0x103c, 0x1038, Kind::Other),
                (0x1040, 0x1040, Kind::Undecoded),
                (0x1044, 0x1044, Kind::Other),
                (0x1044, 0x1044, Kind::Return),
            ]
        );
    }
}
