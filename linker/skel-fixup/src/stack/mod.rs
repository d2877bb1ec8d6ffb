//! Worst-case stack depth of a linked Hexagon skel's entry points, from `.stack_sizes` and the disassembly.
//!
//! Frame sizes come from LLVM's `.stack_sizes` section (`-Z emit-stack-sizes`), which lld keeps in the linked
//! `.so` (see [`sizes`]). On Hexagon the recorded size is allocframe's operand: allocframe also pushes the LR:FP
//! pair, so a function that uses allocframe takes its record plus 8 bytes. A function without a record (the
//! assembly helpers of compiler-builtins) counts 0 bytes when its code never moves the stack pointer, and is
//! refused otherwise.
//!
//! Calls come from `llvm-objdump -d` of the same file (see [`disassembly`]): `call ADDRESS` is a call; `jump` to
//! the start of another function is a tail call, which starts at the caller's own depth when the caller popped
//! its frame in the same packet (or has none), and is counted on top of the caller's frame otherwise. Calls to
//! PLT entries (PD services) and calls through pointers (`callr`: the QNN backend's function tables) are foreign
//! code: zero bytes of the skel's own stack, listed in the report, whose own use comes on top. `jumpr` with the
//! frame still allocated is a jump table inside the function. Recursion, a branch into the middle of a function
//! and an undecodable word inside a function are refused (see [`functions`], [`depth`]).

pub mod depth;
pub mod disassembly;
pub mod functions;
pub mod sizes;

use anyhow::{bail, Context, Result};
#[cfg(test)]
use functions::LINK_AND_FRAME_POINTER_BYTES;
use goblin::elf::Elf;
use std::fmt::Write as _;
use std::path::Path;

/// The skel's exported entry points.
pub const ENTRY_POINTS: [&str; 3] = ["lpai_direct_skel_handle_invoke", "lpai_direct_open", "lpai_direct_close"];
/// The audio module's (`dsp/capi`) entry points: its two exported functions and the six of its function table,
/// which the framework reaches through the table (not exported; named by their Rust paths).
pub const CAPI_ENTRY_POINTS: [&str; 8] = [
    "capi_lpai_direct_get_static_properties",
    "capi_lpai_direct_init",
    "lpai_direct_capi::process",
    "lpai_direct_capi::end",
    "lpai_direct_capi::set_param",
    "lpai_direct_capi::get_param",
    "lpai_direct_capi::set_properties",
    "lpai_direct_capi::get_properties",
];
/// The stack budget of each entry point, in bytes.
pub const DEFAULT_LIMIT: u64 = 8192;
/// The newest Hexagon version LLVM 19's objdump decodes; code for later versions runs the same instructions here.
pub const DEFAULT_MCPU: &str = "hexagonv73";
/// The objdump the stack check runs.
pub const DEFAULT_OBJDUMP: &str = "llvm-objdump-19";

/// How to analyse a file.
#[derive(Debug, Clone)]
pub struct Options {
    /// The objdump program (LLVM's, with Hexagon support).
    pub objdump: String,
    /// `--mcpu` for objdump.
    pub mcpu: String,
    /// The functions whose worst case is computed.
    pub entry_points: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            objdump: DEFAULT_OBJDUMP.into(),
            mcpu: DEFAULT_MCPU.into(),
            entry_points: ENTRY_POINTS.iter().map(|name| name.to_string()).collect(),
        }
    }
}

/// What the analysis of one file found.
#[derive(Debug)]
pub struct Analysis {
    /// Functions with a symbol in executable sections.
    pub functions: usize,
    /// Of those, how many have a `.stack_sizes` record.
    pub recorded: usize,
    /// Functions without a record whose code never moves the stack pointer.
    pub frameless_without_record: Vec<String>,
    /// Functions that cannot be analysed and no entry point reaches, with the reason.
    pub unanalysable: Vec<(String, String)>,
    /// The worst case of each entry point, in the order asked.
    pub entry_points: Vec<EntryPoint>,
}

/// The worst case of one entry point.
#[derive(Debug)]
pub struct EntryPoint {
    /// Its symbol name.
    pub name: String,
    /// Its worst case.
    pub worst: depth::Worst,
}

/// Analyses the linked Hexagon file at `path`.
pub fn analyse(path: &Path, options: &Options) -> Result<Analysis> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let in_file = || format!("analysing {}", path.display());
    let elf = Elf::parse(&bytes).context("not an ELF file").with_context(in_file)?;
    let recorded_sizes = sizes::read(&elf, &bytes).with_context(in_file)?;
    if recorded_sizes.is_empty() {
        bail!("{} has no .stack_sizes records: build it with -Z emit-stack-sizes", path.display());
    }
    let listing = disassembly::run_objdump(&options.objdump, &options.mcpu, path)?;
    let operations = disassembly::parse(&listing).with_context(in_file)?;
    let program = functions::build(&elf, &bytes, &recorded_sizes, &operations).with_context(in_file)?;
    let mut analyser = depth::Analyser::new(&program.functions);
    let mut entry_points = Vec::new();
    for name in &options.entry_points {
        let index = program.find(name).with_context(|| format!("{} defines no function {name}", path.display()))?;
        let worst = analyser.worst(index).with_context(|| format!("{name} in {}", path.display()))?;
        entry_points.push(EntryPoint { name: name.clone(), worst });
    }
    Ok(Analysis {
        functions: program.functions.len(),
        recorded: program.recorded,
        frameless_without_record: program.frameless_without_record,
        unanalysable: program.unanalysable,
        entry_points,
    })
}

/// A symbol name without its mangling and hashes.
pub fn demangle(name: &str) -> String {
    format!("{:#}", rustc_demangle::demangle(name))
}

impl EntryPoint {
    /// The report: worst case, deepest path, the three biggest frames on it, the foreign code it reaches.
    pub fn describe(&self, limit: u64) -> String {
        let worst = &self.worst;
        let verdict = if worst.bytes > limit { "OVER the limit" } else { "within the limit" };
        let mut text = format!("{}: worst case {} bytes ({verdict} of {limit})\n", self.name, worst.bytes);
        let path: Vec<String> = worst
            .path
            .iter()
            .map(|step| {
                format!("{}{} ({})", if step.tail { "[tail] " } else { "" }, demangle(&step.function), step.frame)
            })
            .collect();
        let _ = writeln!(text, "  deepest path: {}", path.join(" -> "));
        let mut biggest: Vec<_> = worst.path.iter().filter(|step| step.frame > 0).collect();
        biggest.sort_by_key(|step| std::cmp::Reverse(step.frame));
        let biggest: Vec<String> =
            biggest.iter().take(3).map(|step| format!("{} bytes {}", step.frame, demangle(&step.function))).collect();
        let _ = writeln!(text, "  biggest frames on it: {}", biggest.join("; "));
        match worst.foreign_entered_at {
            Some(depth) => {
                let _ = writeln!(text, "  foreign code (its own stack comes on top) entered at up to {depth} bytes:");
                for (callee, callers) in &worst.foreign {
                    let named: Vec<String> = callers.iter().take(3).map(|name| demangle(name)).collect();
                    let more = match callers.len().saturating_sub(named.len()) {
                        0 => String::new(),
                        more => format!(" and {more} more"),
                    };
                    let _ = writeln!(text, "    {callee} from {}{more}", named.join(", "));
                }
            }
            None => text.push_str("  no foreign code reachable\n"),
        }
        text
    }
}

/// The `.text` sections of two ELF files: their sizes and whether their bytes are the same.
pub fn compare_text(first: &[u8], second: &[u8]) -> Result<(usize, usize, bool)> {
    let text = |bytes: &[u8]| -> Result<Vec<u8>> {
        let elf = Elf::parse(bytes).context("not an ELF file")?;
        let section = elf
            .section_headers
            .iter()
            .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".text"))
            .context("no .text section")?;
        let start = section.sh_offset as usize;
        Ok(bytes.get(start..start + section.sh_size as usize).context(".text lies outside the file")?.to_vec())
    };
    let (first, second) = (text(first)?, text(second)?);
    Ok((first.len(), second.len(), first == second))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = "\
extern void *malloc(unsigned long);
extern void lpai_direct_panic_is_reachable(void);
static volatile char sink;
__attribute__((noinline)) static void leaf(int n) { volatile char buffer[100]; buffer[n] = 1; sink = buffer[0]; }
__attribute__((noinline)) static void middle(int n) { volatile char buffer[300]; buffer[n] = 1; leaf(n); sink = buffer[0]; }
__attribute__((noinline)) int recursive(int n) { volatile char b[16]; b[0] = n; if (n) recursive(n - 1); return b[0]; }
int lpai_direct_open(int n) { if (n == 3) lpai_direct_panic_is_reachable(); middle(n); malloc(4); return 0; }
int lpai_direct_close(int n) { return recursive(n); }
";

    fn options(entry_points: &[&str]) -> Options {
        Options { entry_points: entry_points.iter().map(|name| name.to_string()).collect(), ..Options::default() }
    }

    #[test]
    fn sums_the_frames_of_the_deepest_path_and_lists_foreign_calls() {
        let built = crate::test_elf::shared_object(PROGRAM);
        let analysis = analyse(&built.path, &options(&["lpai_direct_open"])).unwrap();
        assert!(analysis.recorded >= 4, "{analysis:?}");
        let worst = &analysis.entry_points[0].worst;
        let names: Vec<&str> = worst.path.iter().map(|step| step.function.as_str()).collect();
        assert_eq!(names, ["lpai_direct_open", "middle", "leaf"], "{worst:?}");
        assert_eq!(worst.bytes, worst.path.iter().map(|step| step.frame).sum::<u64>());
        assert!(worst.path[1].frame >= 300 + LINK_AND_FRAME_POINTER_BYTES, "{worst:?}");
        assert!(worst.path[2].frame >= 100 + LINK_AND_FRAME_POINTER_BYTES, "{worst:?}");
        let foreign: Vec<&str> = worst.foreign.iter().map(|(callee, _)| callee.as_str()).collect();
        assert_eq!(foreign, ["lpai_direct_panic_is_reachable@plt", "malloc@plt"]);
        assert_eq!(worst.foreign_entered_at, Some(worst.path[0].frame));
        let report = analysis.entry_points[0].describe(400);
        assert!(report.contains("OVER the limit") == (worst.bytes > 400), "{report}");
    }

    #[test]
    fn refuses_recursion() {
        let built = crate::test_elf::shared_object(PROGRAM);
        let error = analyse(&built.path, &options(&["lpai_direct_close"])).unwrap_err();
        assert!(format!("{error:#}").contains("recursion: recursive -> recursive"), "{error:#}");
    }

    #[test]
    fn refuses_a_file_without_stack_sizes_and_an_unknown_entry_point() {
        let built = crate::test_elf::shared_object(PROGRAM);
        let error = analyse(&built.path, &options(&["lpai_direct_nothing"])).unwrap_err();
        assert!(error.to_string().contains("defines no function lpai_direct_nothing"), "{error}");
        let bytes = std::fs::read(&built.path).unwrap();
        let host = std::env::current_exe().unwrap();
        assert!(compare_text(&bytes, &bytes).unwrap().2);
        assert!(!compare_text(&bytes, &std::fs::read(&host).unwrap()).unwrap().2);
        let error = analyse(&host, &options(&["main"])).unwrap_err();
        assert!(format!("{error:#}").contains("no .stack_sizes records"), "{error:#}");
    }
}
