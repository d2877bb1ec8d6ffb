//! `lpai-net-run inspect`: its options and what it prints.

use clap::Parser;
use lpai_direct_stub::inspect::{self, InspectSettings};
use std::path::PathBuf;
use std::process::ExitCode;

/// `lpai-net-run inspect`: describes a context binary's graphs and tensors, read with libQnnSystem on this machine,
/// and writes its metadata record: what the skel loads with when its PD has no libQnnSystem, and what firmware with no
/// HLOS keeps beside its binary.
#[derive(Debug, Parser)]
#[command(name = "lpai-net-run inspect", version, long_about = None)]
pub struct InspectOptions {
    /// The offline-prepared context binary.
    #[arg(value_name = "BIN")]
    pub binary: PathBuf,

    /// libQnnSystem on this machine, which reads the binary's metadata (a bare name is left to the dynamic
    /// loader's search).
    #[arg(long = "system_library", alias = "systemlib", value_name = "FILE", default_value = "libQnnSystem.so")]
    pub system_library: PathBuf,

    /// Write the metadata record to FILE (whole or not at all).
    #[arg(long = "emit_metadata", value_name = "FILE")]
    pub emit_metadata: Option<PathBuf>,
}

impl InspectOptions {
    /// The library's settings for these options.
    pub fn settings(&self) -> InspectSettings {
        InspectSettings {
            binary: self.binary.clone(),
            system_library: self.system_library.clone(),
            emit_metadata: self.emit_metadata.clone(),
        }
    }
}

/// Runs `inspect`: the description on stdout, an error on stderr with exit status 1.
pub fn run(options: &InspectOptions) -> ExitCode {
    match inspect::inspect(&options.settings()) {
        Ok(text) => {
            print!("{text}");
            if let Some(file) = &options.emit_metadata {
                println!("lpai-net-run: metadata record written to {}", file.display());
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("lpai-net-run: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
