//! The virtual aDSP's layout for the trace: where the PD shell loaded the skel `.so` (or the audio module) and the
//! contract model (its `--map` file), the library's symbols moved there, and its entry points, where calls start.

use crate::symbols::Symbols;
use crate::trace::{Layout, Owner};
use anyhow::{bail, Context};
use std::path::Path;

/// One line of the shell's map: a library's image and bias.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// First byte of the image.
    pub start: u32,
    /// Its bytes.
    pub bytes: u32,
    /// File address plus bias is PD address.
    pub bias: u32,
    /// The path the shell loaded.
    pub path: String,
}

impl Placement {
    /// Parses the lines of a map file (`START BYTES BIAS PATH`, hex).
    pub fn parse_map(text: &str) -> anyhow::Result<Vec<Placement>> {
        let hex = |field: &str| u32::from_str_radix(field.trim_start_matches("0x"), 16);
        text.lines()
            .map(|line| {
                let mut fields = line.splitn(4, ' ');
                let mut next = || fields.next().with_context(|| format!("short map line {line:?}"));
                let (start, bytes, bias) = (hex(next()?)?, hex(next()?)?, hex(next()?)?);
                Ok(Placement { start, bytes, bias, path: next()?.to_string() })
            })
            .collect()
    }

    fn holds(&self, address: u32) -> bool {
        address.wrapping_sub(self.start) < self.bytes
    }
}

/// The skel's entry points.
pub const SKEL_ENTRY_POINTS: [&str; 3] = ["lpai_direct_open", "lpai_direct_skel_handle_invoke", "lpai_direct_close"];

/// The skel, its entry points and the libraries it loaded.
pub struct PdLayout {
    skel: Placement,
    symbols: Symbols,
    entries: Vec<u32>,
    others: Vec<Placement>,
}

impl PdLayout {
    /// From the shell's map: the skel is the line naming `skel` (its symbols read from that file, `entry_points`
    /// among them, by demangled name); every other line is the backend's.
    pub fn new(map: &Path, skel: &Path, entry_points: &[&str]) -> anyhow::Result<PdLayout> {
        let text =
            std::fs::read_to_string(map).with_context(|| format!("reading the shell's map {}", map.display()))?;
        let mut placements = Placement::parse_map(&text)?;
        let Some(index) = placements.iter().position(|placement| Path::new(&placement.path) == skel) else {
            bail!("the shell's map {} does not list the skel {}", map.display(), skel.display());
        };
        let skel_placement = placements.remove(index);
        let symbols = Symbols::read(skel, skel_placement.bias)?;
        let entry = |name: &str| symbols.address_of(name).with_context(|| format!("the skel has no symbol {name}"));
        let entries = entry_points.iter().map(|name| entry(name)).collect::<anyhow::Result<_>>()?;
        Ok(PdLayout { skel: skel_placement, symbols, entries, others: placements })
    }
}

impl Layout for PdLayout {
    fn owner(&self, address: u32) -> Owner<'_> {
        if self.skel.holds(address) {
            Owner::Ours(self.symbols.function_at(address))
        } else if self.others.iter().any(|placement| placement.holds(address)) {
            Owner::Backend
        } else {
            Owner::Other
        }
    }

    fn starts_call(&self, address: u32) -> bool {
        self.entries.contains(&address)
    }
}

impl PdLayout {
    /// The address of the function named `name` (demangled), where the shell loaded it.
    pub fn address_of(&self, name: &str) -> Option<u32> {
        self.symbols.address_of(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_lines_give_start_bytes_bias_and_path() {
        let map = Placement::parse_map("0x40010000 0x25000 0x40010000 /t/lib a.so\n").unwrap();
        assert_eq!(
            map[0],
            Placement { start: 0x4001_0000, bytes: 0x25000, bias: 0x4001_0000, path: "/t/lib a.so".into() }
        );
        assert!(map[0].holds(0x4001_0000) && map[0].holds(0x4003_4fff) && !map[0].holds(0x4003_5000));
        assert!(Placement::parse_map("0x1 0x2\n").is_err());
    }
}
