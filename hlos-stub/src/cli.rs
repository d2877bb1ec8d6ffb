//! `lpai-net-run` options, spelled as qnn-net-run spells them so existing scripts keep working.

pub use clap::Parser;
use clap::ValueEnum;
use std::path::PathBuf;

/// Runs offline-prepared QNN context binaries on the LPAI engine, compatible with qnn-net-run's flags and files.
#[derive(Debug, Parser)]
#[command(name = "lpai-net-run", version, about, long_about = None)]
pub struct Options {
    /// QNN backend library the skel loads (libQnnLpai.so on the aDSP, found through ADSP_LIBRARY_PATH; with
    /// --transport local a path to libQnnHtp.so, or a bare name the dynamic loader searches for).
    #[arg(long, value_name = "FILE")]
    pub backend: PathBuf,

    /// Offline-prepared context binary to run.
    #[arg(long = "retrieve_context", value_name = "FILE")]
    pub retrieve_context: PathBuf,

    /// Input list: one inference a line; `name:=path` entries or bare paths in graph input order. A first line
    /// starting with `#` names the output tensors to write.
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
    #[arg(long = "system_library", alias = "systemlib", value_name = "FILE")]
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

    /// qnn-net-run's backend-extensions JSON pointing at an lpaiParams.conf (or the conf itself): LPAI target,
    /// hardware version, per-graph fps/ftrt_ratio/client_type/affinity/core_selection, profiling level.
    #[arg(long = "config_file", value_name = "FILE")]
    pub config_file: Option<PathBuf>,

    /// Most detailed runtime log level written to stderr.
    #[arg(long = "log_level", value_enum, default_value = "warn")]
    pub log_level: LogLevel,

    /// Bytes of memory the skel may use per context for the binary, tensors and LPAI scratch/persistent memory
    /// [default: binary size + 2 MiB on the DSP, + 64 MiB in this process]; the high-water mark is printed.
    #[arg(long = "arena_bytes", value_name = "BYTES")]
    pub arena_bytes: Option<u32>,

    /// How calls reach the skel [default: fastrpc on aarch64 when a FastRPC library loads (else local, with a
    /// note on stderr saying why), local elsewhere].
    #[arg(long, value_enum)]
    pub transport: Option<TransportKind>,

    /// DSP domain for --transport fastrpc.
    #[arg(long, value_enum, default_value = "adsp")]
    pub domain: crate::stub::fastrpc::Domain,

    /// FastRPC session on that domain.
    #[arg(long, value_name = "N")]
    pub session: Option<u32>,

    /// FastRPC library to load instead of the domain's usual libadsprpc.so / libcdsprpc.so.
    #[arg(long = "fastrpc_library", value_name = "FILE")]
    pub fastrpc_library: Option<String>,

    /// Run the skel in an unsigned PD (remote_session_control before opening).
    #[arg(long = "unsigned_pd")]
    pub unsigned_pd: bool,

    /// The skel reads the context binary itself (from its file system) instead of receiving it with the call.
    #[arg(long = "dsp_reads_context")]
    pub dsp_reads_context: bool,
}

/// How stub calls reach the skel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TransportKind {
    /// The skel's code in this process, through the same encoded calls.
    Local,
    /// FastRPC to a DSP (libadsprpc.so / libcdsprpc.so).
    Fastrpc,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn systemlib_is_an_alias_of_system_library() {
        let required = ["lpai-net-run", "--backend=b", "--retrieve_context=c", "--input_list=l"];
        for flag in ["--systemlib", "--system_library"] {
            let options = Options::parse_from(required.iter().copied().chain([flag, "libQnnSystem.so"]));
            assert_eq!(options.system_library, Some(PathBuf::from("libQnnSystem.so")), "{flag}");
        }
    }
}
