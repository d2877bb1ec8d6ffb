//! `lpai-net-run` options, spelled as qnn-net-run spells them so existing scripts keep working.

use clap::Parser;
use std::path::PathBuf;

/// Runs offline-prepared QNN context binaries on the LPAI engine, compatible with qnn-net-run's flags and files.
#[derive(Debug, Parser)]
#[command(name = "lpai-net-run", version, about, long_about = None)]
pub struct Options {
    /// QNN backend library (libQnnLpai.so on the device; libQnnHtp.so on a host).
    #[arg(long, value_name = "FILE")]
    pub backend: Option<PathBuf>,

    /// Offline-prepared context binary to run.
    #[arg(long = "retrieve_context", value_name = "FILE")]
    pub retrieve_context: Option<PathBuf>,

    /// Input list: one inference a line; `name:=path` entries or bare paths in graph input order.
    #[arg(long = "input_list", value_name = "FILE")]
    pub input_list: Option<PathBuf>,

    /// Where `Result_<i>/<output tensor>.raw` files go.
    #[arg(long = "output_dir", value_name = "DIR", default_value = "output")]
    pub output_dir: PathBuf,

    /// Input files hold the tensors' native (quantized) data instead of float32.
    #[arg(long = "use_native_input_files")]
    pub use_native_input_files: bool,

    /// Write outputs in the tensors' native type instead of float32.
    #[arg(long = "use_native_output_files")]
    pub use_native_output_files: bool,
}
