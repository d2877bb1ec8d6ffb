//! Reads qemu-hexagon's per-packet trace (`-one-insn-per-tb -d exec,nochain`: one line per packet executed) and
//! counts, per call window, the packets of our code by phase, of the backend and of everything else.

use crate::phases::{quantize_direction, Phase};
use crate::symbols::Function;
use std::collections::BTreeMap;
use std::io::BufRead;

/// Whose code an address is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner<'s> {
    /// Ours (the skel or the embedding API), with the function when the symbol table has it.
    Ours(Option<&'s Function>),
    /// The backend (the contract model of libQnnLpai and its system library).
    Backend,
    /// The code that makes the calls (the embedding example's own functions): a window ends at its first packet.
    Caller,
    /// Anything else: the PD shell's services, the loader, the shell's request loop.
    Other,
}

/// Tells who owns an address, and where call windows start.
pub trait Layout {
    /// The owner of the packet at `address`.
    fn owner(&self, address: u32) -> Owner<'_>;
    /// Whether a call starts at `address` (an entry point of ours).
    fn starts_call(&self, address: u32) -> bool;
}

/// The packets of one call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// The entry point the call started at.
    pub entry: u32,
    /// Our packets, by [`Phase::ALL`] index.
    pub ours: [u64; Phase::ALL.len()],
    /// Our packets in the float-to-native conversion.
    pub quantize: u64,
    /// Our packets in the native-to-float conversion.
    pub dequantize: u64,
    /// The backend's packets.
    pub backend: u64,
    /// Code of neither that our code called and that returned to it (PD services: the clock, `malloc`, logging).
    pub other: u64,
    /// Our packets by function (copying and the compiler's helpers named with the function that called them).
    pub functions: BTreeMap<String, u64>,
}

impl Window {
    /// All of our packets.
    pub fn ours_total(&self) -> u64 {
        self.ours.iter().sum()
    }

    /// Our packets in `phase`.
    pub fn phase(&self, phase: Phase) -> u64 {
        Phase::ALL.iter().position(|&known| known == phase).map_or(0, |index| self.ours[index])
    }
}

/// The address of the packet a trace line reports: `Trace 0: HOST [FLAGS/PC/FLAGS/FLAGS] SYMBOL`.
pub fn packet_address(line: &str) -> Option<u32> {
    let fields = &line[line.find('[')? + 1..];
    let pc = fields.split('/').nth(1)?;
    let low = &pc[pc.len().saturating_sub(8)..];
    u32::from_str_radix(low, 16).ok()
}

/// Splits a trace into call windows: one starts at each packet on an entry point and runs up to the next entry
/// point, or up to the first packet of the caller's code. Packets of neither ours nor the backend count only when
/// our code runs again after them (a service it called), not after the call returned. Helpers that both sides link
/// (memcpy, memset, the compiler's built-ins: one copy in a static program) count for the side that called them.
pub fn windows(trace: impl BufRead, layout: &dyn Layout) -> anyhow::Result<Vec<Window>> {
    let mut windows = Vec::new();
    let mut current: Option<Window> = None;
    let mut pending_other = 0;
    let mut last_caller = String::new();
    let mut backend_called_last = false;
    for line in trace.lines() {
        let line = line?;
        let Some(address) = packet_address(&line) else { continue };
        if layout.starts_call(address) {
            windows.extend(current.take());
            current = Some(Window { entry: address, ..Window::default() });
            pending_other = 0;
        }
        let Some(window) = current.as_mut() else { continue };
        match layout.owner(address) {
            Owner::Ours(function) => {
                window.other += core::mem::take(&mut pending_other);
                let name = function.map_or("", |function| function.name.as_str());
                let phase = Phase::of(name);
                // Unnamed code (a linker's veneer) and the compiler's helpers count for whoever called them.
                let helper = phase == Phase::Copy
                    || name.is_empty()
                    || name.starts_with("__")
                    || name.starts_with("compiler_builtins");
                if helper && backend_called_last {
                    window.backend += 1;
                    continue;
                }
                backend_called_last = false;
                if helper {
                    *window.functions.entry(format!("{name} <- {last_caller}")).or_default() += 1;
                } else {
                    if last_caller != name {
                        last_caller = name.to_string();
                    }
                    *window.functions.entry(last_caller.clone()).or_default() += 1;
                }
                if let Some(index) = Phase::ALL.iter().position(|&known| known == phase) {
                    window.ours[index] += 1;
                }
                match quantize_direction(name) {
                    Some(true) => window.quantize += 1,
                    Some(false) => window.dequantize += 1,
                    None => {}
                }
            }
            Owner::Backend => {
                window.backend += 1;
                backend_called_last = true;
            }
            Owner::Other => pending_other += 1,
            Owner::Caller => windows.extend(current.take()),
        }
    }
    windows.extend(current);
    Ok(windows)
}

/// qemu-hexagon (v73) writing one line per packet it executes into `trace`, its program and arguments to follow.
pub fn traced_qemu(trace: &std::path::Path) -> std::process::Command {
    let mut command = std::process::Command::new("qemu-hexagon");
    command.args(["-cpu", "v73", "-one-insn-per-tb", "-d", "exec,nochain", "-D"]).arg(trace);
    command
}

/// The median of `values` (the lower one of an even count); 0 for none.
pub fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    lpai_net_run::profile::nearest_rank_of(&values, 50).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Toy(Function);

    impl Layout for Toy {
        fn owner(&self, address: u32) -> Owner<'_> {
            match address {
                0x100..=0x1ff => Owner::Ours(Some(&self.0)),
                0x200..=0x2ff => Owner::Backend,
                0x300..=0x3ff => Owner::Caller,
                _ => Owner::Other,
            }
        }

        fn starts_call(&self, address: u32) -> bool {
            address == 0x100
        }
    }

    fn line(address: u32) -> String {
        format!("Trace 0: 0x7f0000001000 [00000000/{address:08x}/00000000/ff020000] \n")
    }

    #[test]
    fn the_packet_address_is_the_second_bracketed_field() {
        assert_eq!(packet_address("Trace 0: 0x7f12 [00000000/0002a3c0/00010000/ff020000] main"), Some(0x2a3c0));
        assert_eq!(packet_address("Trace 0: 0x7f12 [0000000000000000/000000000002a3c0/0/0]"), Some(0x2a3c0));
        assert_eq!(packet_address("Linking TBs 0x1 [0002a3c0] index 0 -> 0x2"), None);
    }

    #[test]
    fn windows_start_at_entries_and_end_at_the_next_entry_or_the_caller() {
        let toy = Toy(Function { start: 0x100, end: 0x200, name: "lpai_direct::quantize::quantize".into() });
        let addresses = [0x50, 0x100, 0x104, 0x200, 0x50, 0x100, 0x300, 0x104, 0x100, 0x50, 0x104];
        let trace: String = addresses.iter().map(|&address| line(address)).collect();
        let windows = windows(trace.as_bytes(), &toy).unwrap();
        assert_eq!(windows.len(), 3, "{windows:?}");
        assert_eq!((windows[0].ours_total(), windows[0].quantize, windows[0].backend, windows[0].other), (2, 2, 1, 0));
        assert_eq!((windows[1].ours_total(), windows[1].backend), (1, 0), "the caller's packet ends the window");
        assert_eq!((windows[2].phase(Phase::Convert), windows[2].other), (2, 1), "a service our code called counts");
        assert_eq!(median(vec![5, 1, 3, 9]), 3);
        assert_eq!(median(vec![]), 0);
    }
}
