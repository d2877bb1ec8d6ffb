//! `lpai-net-run inspect`: its options and what it prints.

use crate::inspect::{self, InspectSettings, LoadSettings};
use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

/// `lpai-net-run inspect`: describes a context binary, read with libQnnSystem on this machine: the backend, API
/// versions and SoC it records, its graphs and tensors (ids, names, types, shapes, quantization) and, with --backend,
/// the LPAI scratch and persistent memory each graph needs and the arena the load used. It can write the binary's
/// metadata record: what the skel loads with when its PD has no libQnnSystem, and what firmware with no HLOS keeps
/// beside its binary.
#[derive(Debug, Parser)]
#[command(name = "lpai-net-run inspect", bin_name = "lpai-net-run inspect", version, long_about = None)]
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

    /// Also load the binary on this QNN backend through the local transport's host skel and report each graph's
    /// scratch and persistent memory and the arena the load used.
    #[arg(long, value_name = "FILE")]
    pub backend: Option<PathBuf>,

    /// The host skel that loads it with --backend [default: as lpai-net-run finds it: $LPAI_DIRECT_SKEL, else
    /// liblpai_direct_skel.so beside this executable, else the workspace's target/release/].
    #[arg(long, value_name = "FILE", requires = "backend")]
    pub skel: Option<PathBuf>,

    /// Print one JSON object instead of text (its shape is in docs/src/run-a-model.md; `format` versions it).
    #[arg(long)]
    pub json: bool,
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

    /// What loading the binary needs, when --backend asks for it.
    pub fn load_settings(&self) -> Option<LoadSettings> {
        self.backend.as_ref().map(|backend| LoadSettings { backend: backend.clone(), skel: self.skel.clone() })
    }
}

/// Runs `inspect`: the description on stdout (text, or JSON with --json), an error on stderr with exit status 1.
pub fn run(options: &InspectOptions) -> ExitCode {
    let described = inspect::examine(&options.settings(), options.load_settings().as_ref()).and_then(|inspection| {
        if options.json {
            inspection.json()
        } else {
            Ok(inspection.text())
        }
    });
    match described {
        Ok(text) => {
            print!("{text}");
            if let Some(file) = &options.emit_metadata {
                // Kept off stdout with --json, which holds the JSON object only.
                let note = format!("lpai-net-run: metadata record written to {}", file.display());
                if options.json {
                    eprintln!("{note}");
                } else {
                    println!("{note}");
                }
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("lpai-net-run: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
