//! `lpai-net-run stage`: assembles the device directory of the native aDSP path. Its root (meant for
//! `/data/local/tmp/LPAI`) holds the HLOS side: `lpai-net-run` for the target, `liblpai_direct_stub.so`, the context
//! binary, the inputs under `inputs/`, the input list rewritten to device paths, `config.json` (backend extensions
//! and `context_configs.is_persistent_binary`) and `lpaiParams.conf`; its `adsp/` folder holds the DSP side: the
//! Hexagon skel, the libQnnLpai given and whatever else must be loaded in the PD. Every file is checked first (it
//! exists, and is an ELF for the processor that loads it); the directory is then built beside its final name and
//! renamed into place, so it appears whole or not at all. The `adb` commands that push and run it are answered as
//! argument lists, and [`push`] runs them.

mod adb;
mod assemble;
mod conf;
mod elf;
mod files;
mod layout;
mod list;
mod notes;
mod settings;
mod shell;
mod target;

pub use adb::{adb_on_path, find_program, push};
pub use layout::*;
pub use settings::{Given, StageSettings, DEFAULT_DEVICE_DIR, DEFAULT_HEX_VER, DEFAULT_HW_VER, DEFAULT_TARGET_ARCH};
pub use shell::AdbCommand;

use crate::settings::OpPackageSetting;
use anyhow::{bail, Result};
use assemble::Placed;
use lpai_direct_stub::stub::fastrpc::Pd;
use std::path::PathBuf;
use target::Hlos;

/// What `stage` made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Staged {
    /// The directory, complete.
    pub directory: PathBuf,
    /// Every file in it, relative to it, sorted.
    pub files: Vec<PathBuf>,
    /// The `adb` commands that push it and run it, in order.
    pub commands: Vec<AdbCommand>,
    /// What to know before running: signing, root, the PD, libraries the PD must find elsewhere.
    pub notes: Vec<String>,
    /// Where the run writes its results on the device (`adb pull` it afterwards).
    pub results: String,
}

/// Assembles the staged directory (see the module documentation) and answers what it holds, the commands and notes.
/// Everything is checked before anything is written.
pub fn stage(settings: &StageSettings) -> Result<Staged> {
    let hlos = Hlos::parse(&settings.target_arch)?;
    let hex_ver = target::parse_hex_ver(&settings.hex_ver)?;
    let hw = target::parse_hw_ver(&settings.hw_ver)?;
    let device_dir = settings.device_dir.trim_end_matches('/').to_string();
    shell::check_device_dir(&device_dir)?;
    check_request(settings)?;
    let hlos_side = files::hlos_side(settings, hlos, &device_dir)?;
    let dsp_side = files::dsp_side(settings, hex_ver, &hlos_side.stub)?;
    let list = list::plan_input_list(&settings.input_list, &device_dir)?;
    let params = conf::plan_params(settings.config_file.as_deref(), &settings.hw_ver, hw)?;
    let written: [(&str, String); 4] = [
        (INPUT_LIST_FILE, list.text),
        (CONFIG_FILE, conf::config_json()),
        (PARAMS_FILE, params),
        (ENV_FILE, conf::environment_file(&device_dir, hlos)),
    ];
    let placed: Vec<Placed> = hlos_side.placed.into_iter().chain(dsp_side.placed).chain(list.files).collect();
    assemble::check_destinations(&placed, &written)?;
    let mut arguments = dsp_side.system_arguments.unwrap_or(hlos_side.system_arguments);
    if !dsp_side.op_packages.is_empty() {
        arguments.extend(["--op_packages".to_string(), OpPackageSetting::to_value(&dsp_side.op_packages)]);
    }
    let run = shell::run_line(settings, &device_dir, &dsp_side.backend_name, &hlos_side.binary_name, arguments)?;
    let notes = notes::before_running(&dsp_side.names, settings.pd, &device_dir, dsp_side.notes);
    let directory = assemble::assemble(&settings.output_dir, &placed, &written)?;
    let files = assemble::files_below(&directory)?;
    let results = format!("{device_dir}/{OUTPUT_DIR}");
    Ok(Staged { commands: shell::commands(&directory, &device_dir, &run), directory, files, notes, results })
}

/// What the request itself must be: a PD stage prepares, a libQnnSystem to read the binary's metadata, and a new
/// directory.
fn check_request(settings: &StageSettings) -> Result<()> {
    if settings.pd == Pd::Root {
        bail!("--pd root is not a place stage prepares (use user, audio or sensors)");
    }
    if settings.system_library.is_none() && settings.dsp_system_library.is_none() {
        bail!(
            "the run needs a libQnnSystem to read the binary's metadata: name the HLOS side's (aarch64) with \
             --system_library FILE, or a Hexagon one the skel loads with --dsp_system_library FILE"
        );
    }
    if settings.output_dir.exists() {
        bail!(
            "--output_dir {} already exists: stage makes a new directory, whole or not at all (remove it or name \
             another)",
            settings.output_dir.display()
        );
    }
    Ok(())
}
