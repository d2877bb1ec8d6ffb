//! The bodies of the cargo-fuzz targets in `fuzz/` that run on the host only: each takes the fuzzer's bytes and
//! panics when the code under test breaks a property it must keep (a panic of the code itself, a record that does
//! not read back, an answer outside what was asked). `fuzz/fuzz_targets/<name>.rs` calls [`run`] with its name;
//! `tests/corpus.rs` replays every file of `fuzz/corpus/<name>/` through the same function in `cargo test`.
//!
//! The skel entry (`skel_invoke`) and codec (`codec`) targets are `lpai_direct_skel::testing::fuzz_calls`, so that
//! the Hexagon self-test executable replays their corpus as well.

pub mod binary_info;
pub mod config_json;
pub mod elf_loader;
pub mod input_list;
pub mod lpai_params;
pub mod metadata_record;
pub mod runtime;
mod serial;

/// A fuzz target: its name (its `fuzz/fuzz_targets/` file and `fuzz/corpus/` directory) and its body.
#[derive(Clone, Copy)]
pub struct Target {
    /// The name.
    pub name: &'static str,
    /// What it feeds, for messages.
    pub feeds: &'static str,
    /// The body.
    pub run: fn(&[u8]),
}

/// Every target of this crate.
pub const TARGETS: &[Target] = &[
    Target { name: "input_list", feeds: "lpai-net-run input_list::parse", run: input_list::run },
    Target { name: "lpai_params", feeds: "lpai-net-run lpai_config::from_params", run: lpai_params::run },
    Target { name: "config_json", feeds: "lpai-net-run net_run_config::read_from", run: config_json::run },
    Target {
        name: "metadata_record",
        feeds: "Record::parse, the runtime's load from a record",
        run: metadata_record::run,
    },
    Target {
        name: "binary_info",
        feeds: "libQnnSystem binary info through a fake system interface",
        run: binary_info::run,
    },
    Target { name: "elf_loader", feeds: "the PD shell's Layout::parse and load", run: elf_loader::run },
];

/// Runs the target named `name` on `data`; `false` when there is no such target.
pub fn run(name: &str, data: &[u8]) -> bool {
    match TARGETS.iter().find(|target| target.name == name) {
        Some(target) => {
            (target.run)(data);
            true
        }
        None => false,
    }
}
