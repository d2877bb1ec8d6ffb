//! `lpai-net-run` options, spelled as qnn-net-run spells them so existing scripts keep working.

pub use clap::Parser;
use clap::ValueEnum;
use std::path::PathBuf;

/// Runs offline-prepared QNN context binaries on the LPAI engine, compatible with qnn-net-run's flags and files.
#[derive(Debug, Parser)]
#[command(name = "lpai-net-run", version, about, long_about = None)]
pub struct Options {
    /// QNN backend library (libQnnLpai.so on the device; libQnnHtp.so on a host).
    #[arg(long, value_name = "FILE")]
    pub backend: PathBuf,

    /// Offline-prepared context binary to run.
    #[arg(long = "retrieve_context", value_name = "FILE")]
    pub retrieve_context: PathBuf,

    /// Input list: one inference a line; `name:=path` entries or bare paths in graph input order.
    #[arg(long = "input_list", value_name = "FILE")]
    pub input_list: PathBuf,

    /// Where `Result_<i>/<output tensor>.raw` files go.
    #[arg(long = "output_dir", value_name = "DIR", default_value = "output")]
    pub output_dir: PathBuf,

    /// Input files hold the tensors' native (quantized) data instead of float32.
    #[arg(long = "use_native_input_files")]
    pub use_native_input_files: bool,

    /// Write outputs in the tensors' native type instead of float32.
    #[arg(long = "use_native_output_files")]
    pub use_native_output_files: bool,

    /// libQnnSystem, which reads the binary's tensor metadata [default: libQnnSystem.so beside --backend].
    #[arg(long = "system_library", value_name = "FILE")]
    pub system_library: Option<PathBuf>,

    /// Graph to run, for binaries that hold several [default: the first].
    #[arg(long = "graph_name", value_name = "NAME")]
    pub graph_name: Option<String>,

    /// Create the context with PERSISTENT_BINARY even if the backend does not require it.
    #[arg(long = "persistent_binary")]
    pub persistent_binary: bool,

    /// Collect QNN profile events and print them after the run.
    #[arg(long = "profiling_level", value_enum)]
    pub profiling_level: Option<ProfilingLevel>,

    /// Most detailed runtime log level written to stderr.
    #[arg(long = "log_level", value_enum, default_value = "warn")]
    pub log_level: LogLevel,

    /// Bytes of memory the runtime may use for the binary, tensors and LPAI scratch/persistent memory
    /// [default: binary size + 256 MiB, reserved lazily].
    #[arg(long = "arena_bytes", value_name = "BYTES")]
    pub arena_bytes: Option<usize>,
}

/// qnn-net-run's profiling levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProfilingLevel {
    /// Whole-graph timings.
    Basic,
    /// Per-node timings.
    Detailed,
    /// Backend-specific events.
    Backend,
}

/// qnn-net-run's log levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogLevel {
    /// Failures only.
    Error,
    /// Failures and warnings.
    Warn,
    /// Each step.
    Info,
    /// Each step (as info).
    Verbose,
    /// Everything.
    Debug,
}
