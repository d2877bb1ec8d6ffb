//! `lpai-net-run stage`: its options and what it prints.

use crate::stage::{self, Given, StageSettings};
use clap::{Parser, ValueEnum};
use lpai_direct_stub::stub::fastrpc::Pd;
use std::path::PathBuf;
use std::process::ExitCode;

/// `lpai-net-run stage`: assembles the device directory of the native aDSP path (the HLOS side in its root, the DSP
/// side in adsp/), prints the adb commands that push and run it, and runs them with --push.
// The field comments are the `--help` text, written for a terminal: rustdoc's markdown would see HTML tags in
// `<version>` and a link in `[,...]`.
#[allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]
#[derive(Debug, Parser)]
#[command(name = "lpai-net-run stage", bin_name = "lpai-net-run stage", version, long_about = None)]
pub struct StageOptions {
    /// The local directory to create, whole or not at all (it must not exist).
    #[arg(long = "output_dir", value_name = "DIR")]
    pub output_dir: PathBuf,

    /// The offline-prepared context binary.
    #[arg(long = "retrieve_context", value_name = "FILE")]
    pub retrieve_context: PathBuf,

    /// The input list; its files are copied under inputs/ and the list rewritten to their device paths (`#` lines
    /// kept). Relative paths are taken from the current directory, as lpai-net-run reads them.
    #[arg(long = "input_list", value_name = "FILE")]
    pub input_list: PathBuf,

    /// The libQnnLpai (the Hexagon build) placed in adsp/.
    #[arg(long, value_name = "FILE")]
    pub backend: PathBuf,

    /// An lpaiParams.conf, or a backend-extensions JSON naming one [default: a minimal lpaiParams.conf for the
    /// aDSP and HW_VER].
    #[arg(long = "config_file", value_name = "FILE")]
    pub config_file: Option<PathBuf>,

    /// The HLOS side's libQnnSystem (aarch64), placed in the root: lpai-net-run reads the binary's metadata with it
    /// and sends the skel the metadata record.
    #[arg(long = "system_library", value_name = "FILE", required_unless_present = "dsp_system_library")]
    pub system_library: Option<PathBuf>,

    /// A Hexagon libQnnSystem placed in adsp/ instead, which the skel loads to read the metadata itself.
    #[arg(long = "dsp_system_library", value_name = "FILE", conflicts_with = "system_library")]
    pub dsp_system_library: Option<PathBuf>,

    /// Another Hexagon library the PD must load (libQnnLpai's own dependencies, such as the Hexagon tools'
    /// libc++), placed in adsp/; repeatable.
    #[arg(long = "adsp_library", value_name = "FILE")]
    pub adsp_libraries: Vec<PathBuf>,

    /// The Hexagon skel [default: target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so, from
    /// scripts/build-hexagon.sh].
    #[arg(long, value_name = "FILE")]
    pub skel: Option<PathBuf>,

    /// A directory holding lpai-net-run and liblpai_direct_stub.so for QNN_TARGET_ARCH [default:
    /// target/<its Rust target>/release, from scripts/build-hlos.sh].
    #[arg(long = "hlos_dir", value_name = "DIR")]
    pub hlos_dir: Option<PathBuf>,

    /// lpai-net-run for QNN_TARGET_ARCH (instead of the one in the HLOS directory).
    #[arg(long = "net_run", value_name = "FILE")]
    pub net_run: Option<PathBuf>,

    /// liblpai_direct_stub.so for QNN_TARGET_ARCH (instead of the one in the HLOS directory).
    #[arg(long, value_name = "FILE")]
    pub stub: Option<PathBuf>,

    /// The HLOS target: aarch64-android, aarch64-oe-linux-gcc<version>, aarch64-qnx800 [default: $QNN_TARGET_ARCH,
    /// else aarch64-oe-linux-gcc11.2].
    #[arg(long = "qnn_target_arch", value_name = "ARCH")]
    pub qnn_target_arch: Option<String>,

    /// The device's Hexagon version (the skel must not be built for a newer one) [default: $HEX_VER, else 81].
    #[arg(long = "hex_ver", value_name = "N")]
    pub hex_ver: Option<String>,

    /// The LPAI hardware version: v5, v5_1, v6, v7 [default: $HW_VER, else the config file's, else v6].
    #[arg(long = "hw_ver", value_name = "VERSION")]
    pub hw_ver: Option<String>,

    /// Where the root goes on the device.
    #[arg(long = "device_dir", value_name = "DIR", default_value = stage::DEFAULT_DEVICE_DIR)]
    pub device_dir: String,

    /// The PD the skel runs in; for audio and sensors it also says where the skel must live for that PD to load it.
    #[arg(long, value_enum, value_name = "PD", default_value = "user")]
    pub pd: StagePd,

    /// The input files hold native (quantized) data: the run gets --use_native_input_files.
    #[arg(long = "use_native_input_files")]
    pub use_native_input_files: bool,

    /// The run writes native outputs: it gets --use_native_output_files.
    #[arg(long = "use_native_output_files")]
    pub use_native_output_files: bool,

    /// Op packages (Hexagon builds) to place in adsp/ and register in the run, as qnn-net-run takes them:
    /// PATH:PROVIDER[:TARGET][,...] with PATH the local file; the run names each by its file name in adsp/.
    #[arg(long = "op_packages", value_name = "PATH:PROVIDER[:TARGET][,...]", value_parser = super::net_run::op_packages)]
    pub op_packages: Option<super::net_run::OpPackageList>,

    /// Run the printed adb commands with the adb on PATH.
    #[arg(long)]
    pub push: bool,
}

/// The PDs `stage` prepares for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StagePd {
    /// FastRPC's dynamic user PD.
    User,
    /// The audio static PD.
    Audio,
    /// The sensors static PD.
    Sensors,
}

impl StageOptions {
    /// The library's settings for these options; `environment` looks up QNN_TARGET_ARCH, HEX_VER and HW_VER.
    pub fn settings(&self, environment: impl Fn(&str) -> Option<String>) -> StageSettings {
        let choose = |flag: &Option<String>, flag_name: &str, variable: &str, default: &str| {
            Given::choose(flag.as_deref(), flag_name, environment(variable), variable, default)
        };
        StageSettings {
            output_dir: self.output_dir.clone(),
            retrieve_context: self.retrieve_context.clone(),
            input_list: self.input_list.clone(),
            backend: self.backend.clone(),
            config_file: self.config_file.clone(),
            system_library: self.system_library.clone(),
            dsp_system_library: self.dsp_system_library.clone(),
            adsp_libraries: self.adsp_libraries.clone(),
            skel: self.skel.clone(),
            hlos_dir: self.hlos_dir.clone(),
            net_run: self.net_run.clone(),
            stub: self.stub.clone(),
            target_arch: choose(
                &self.qnn_target_arch,
                "--qnn_target_arch",
                "QNN_TARGET_ARCH",
                stage::DEFAULT_TARGET_ARCH,
            ),
            hex_ver: choose(&self.hex_ver, "--hex_ver", "HEX_VER", stage::DEFAULT_HEX_VER),
            hw_ver: choose(&self.hw_ver, "--hw_ver", "HW_VER", stage::DEFAULT_HW_VER),
            device_dir: self.device_dir.clone(),
            pd: match self.pd {
                StagePd::User => Pd::User,
                StagePd::Audio => Pd::Audio,
                StagePd::Sensors => Pd::Sensors,
            },
            use_native_input_files: self.use_native_input_files,
            use_native_output_files: self.use_native_output_files,
            op_packages: self.op_packages.clone().map(|list| list.0).unwrap_or_default(),
        }
    }
}

/// Runs `stage`: stages the directory, prints its files, the notes and the commands, and runs them with --push;
/// errors on stderr with exit status 1.
pub fn run(options: &StageOptions) -> ExitCode {
    // With --push, adb must be there before anything is staged.
    let adb = match options.push {
        true => match stage::adb_on_path(std::env::var_os("PATH").as_deref()) {
            Ok(adb) => Some(adb),
            Err(error) => return failed(error),
        },
        false => None,
    };
    let staged = match stage::stage(&options.settings(|name| std::env::var(name).ok())) {
        Ok(staged) => staged,
        Err(error) => return failed(error),
    };
    println!("lpai-net-run: staged {}:", staged.directory.display());
    for file in &staged.files {
        println!("  {}", file.display());
    }
    for note in &staged.notes {
        println!("note: {note}");
    }
    println!("commands:");
    for command in &staged.commands {
        println!("  {command}");
    }
    println!("results: adb pull {}", staged.results);
    if let Some(adb) = adb {
        println!("lpai-net-run: running them with {}", adb.display());
        if let Err(error) = stage::push(&staged.commands, &adb) {
            return failed(error);
        }
    }
    ExitCode::SUCCESS
}

fn failed(error: impl std::fmt::Display) -> ExitCode {
    eprintln!("lpai-net-run: error: {error:#}");
    ExitCode::FAILURE
}
