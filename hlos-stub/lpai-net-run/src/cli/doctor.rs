//! `lpai-net-run doctor`: its options, and its lines.

use super::fastrpc_args::FastRpcArgs;
use crate::doctor::{self, DoctorSettings, Outcome};
use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

/// `lpai-net-run doctor`: run on the device before a first run, checks in order everything it needs, without running
/// a model: the FastRPC library loads; the domain exists; the PD opens (--pd, --unsigned_pd); the skel is on the DSP
/// loader's path (which file, from which directory, its interface version, other copies); the version handshake
/// agrees; the DSP side loads the backend and system library; the backend creates on the domain; and, with
/// --retrieve_context, the binary's QNN versions are ones the backend takes. One line per check, `ok` or `FAILED:
/// <cause>; <what to do>`; exit status 0 when every check passes, 1 otherwise.
#[derive(Debug, Parser)]
#[command(name = "lpai-net-run doctor", bin_name = "lpai-net-run doctor", version, long_about = None)]
pub struct DoctorOptions {
    /// The backend the skel loads (found through ADSP_LIBRARY_PATH when a bare name).
    #[arg(long, value_name = "FILE", default_value = "libQnnLpai.so")]
    pub backend: PathBuf,

    /// The DSP side's libQnnSystem the skel loads; `none` (the default) loads none, as a run without it.
    #[arg(long = "dsp_system_library", value_name = "FILE|none")]
    pub dsp_system_library: Option<PathBuf>,

    /// A context binary whose QNN versions (its metadata) are checked against the backend's.
    #[arg(long = "retrieve_context", value_name = "FILE")]
    pub retrieve_context: Option<PathBuf>,

    /// The HLOS side's libQnnSystem that reads the binary's metadata [default: beside --backend].
    #[arg(long = "system_library", alias = "systemlib", value_name = "FILE")]
    pub system_library: Option<PathBuf>,

    /// How FastRPC reaches the DSP.
    #[command(flatten)]
    pub fastrpc: FastRpcArgs,
}

impl DoctorOptions {
    /// The library's settings for these options.
    pub fn settings(&self) -> DoctorSettings {
        DoctorSettings {
            fastrpc: self.fastrpc.options(),
            backend: self.backend.clone(),
            dsp_system_library: self.dsp_system_library.clone().filter(|path| path.as_os_str() != "none"),
            retrieve_context: self.retrieve_context.clone(),
            system_library: self.system_library.clone(),
        }
    }
}

/// Runs the checks and prints a line for each.
pub fn run(options: &DoctorOptions) -> ExitCode {
    let checks = doctor::run(&options.settings());
    for check in &checks {
        println!("lpai-net-run doctor: {check}");
    }
    match checks.iter().any(|check| matches!(check.outcome, Outcome::Failed(_))) {
        true => ExitCode::FAILURE,
        false => ExitCode::SUCCESS,
    }
}
