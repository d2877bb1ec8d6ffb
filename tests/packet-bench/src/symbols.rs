//! A library's function symbols from its ELF symbol table, placed at the address the PD shell loaded it at.

use anyhow::{bail, Context};
use goblin::elf::{sym, Elf};
use std::path::Path;

/// One function: `[start, end)` in the PD's address space and its demangled name (hash left out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
    /// Demangled name.
    pub name: String,
}

/// The functions of one loaded library, sorted by address.
#[derive(Clone, Debug, Default)]
pub struct Symbols {
    functions: Vec<Function>,
}

impl Symbols {
    /// Reads the symbol table of `path` and moves every function by `bias` (the shell's map line).
    pub fn read(path: &Path, bias: u32) -> anyhow::Result<Symbols> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let elf = Elf::parse(&bytes).with_context(|| format!("{} is not an ELF file", path.display()))?;
        let mut functions: Vec<Function> = elf
            .syms
            .iter()
            .filter(|symbol| symbol.st_type() == sym::STT_FUNC && symbol.st_size > 0 && symbol.st_value > 0)
            .filter_map(|symbol| {
                let name = elf.strtab.get_at(symbol.st_name)?;
                let start = u32::try_from(symbol.st_value).ok()?.wrapping_add(bias);
                let end = start.checked_add(u32::try_from(symbol.st_size).ok()?)?;
                Some(Function { start, end, name: format!("{:#}", rustc_demangle::demangle(name)) })
            })
            .collect();
        if functions.is_empty() {
            bail!("{} has no function symbols (stripped?): packets cannot be given to functions", path.display());
        }
        functions.sort_by_key(|function| (function.start, function.name.clone()));
        // Aliases (one body under several names) keep their first name.
        functions.dedup_by_key(|function| function.start);
        Ok(Symbols { functions })
    }

    /// The function holding `address`.
    pub fn function_at(&self, address: u32) -> Option<&Function> {
        let after = self.functions.partition_point(|function| function.start <= address);
        self.functions[..after].last().filter(|function| address < function.end)
    }

    /// The address of the function named exactly `name`.
    pub fn address_of(&self, name: &str) -> Option<u32> {
        self.functions.iter().find(|function| function.name == name).map(|function| function.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_belongs_to_the_function_spanning_it() {
        let function = |start, end, name: &str| Function { start, end, name: name.into() };
        let symbols = Symbols { functions: vec![function(0x100, 0x110, "a"), function(0x120, 0x130, "b")] };
        assert_eq!(symbols.function_at(0x100).map(|f| f.name.as_str()), Some("a"));
        assert_eq!(symbols.function_at(0x10f).map(|f| f.name.as_str()), Some("a"));
        assert_eq!(symbols.function_at(0x110), None);
        assert_eq!(symbols.function_at(0x12f).map(|f| f.name.as_str()), Some("b"));
        assert_eq!(symbols.function_at(0xff), None);
        assert_eq!(symbols.address_of("b"), Some(0x120));
    }
}
