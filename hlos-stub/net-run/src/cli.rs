//! `lpai-net-run` options, spelled as qnn-net-run spells them so existing scripts keep working, and their
//! translation into the library's [`Settings`].

use crate::inspect_command::InspectOptions;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
pub use clap::Parser;
use clap::ValueEnum;
use lpai_direct_stub::settings::{self, Settings};
use lpai_direct_stub::stub::fastrpc::{Domain, Pd};
use lpai_direct_stub::stub::{names, Named, TransportKind};
use std::ffi::OsString;
use std::path::PathBuf;

/// Runs offline-prepared QNN context binaries on the LPAI engine, compatible with qnn-net-run's flags and files.
#[derive(Debug, Parser)]
#[command(
    name = "lpai-net-run",
    version,
    about,
    long_about = None,
    after_help = "Also: lpai-net-run inspect BIN [--system_library FILE] [--emit_metadata FILE] describes a context \
                  binary's graphs and tensors and writes its metadata record (see lpai-net-run inspect --help)."
)]
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

    /// The HLOS side's libQnnSystem, which reads the binary's tensor metadata here and sends the skel the metadata
    /// record [default: libQnnSystem.so beside --backend]; unused with --dsp_system_library FILE.
    #[arg(long = "system_library", alias = "systemlib", value_name = "FILE")]
    pub system_library: Option<PathBuf>,

    /// The libQnnSystem the skel loads to read the metadata itself (libQnnSystem.so on an aDSP PD that has one),
    /// or `none`: the skel loads no system library and gets the metadata record the HLOS side read (a file named
    /// `none` is `./none`).
    #[arg(long = "dsp_system_library", value_name = "FILE|none", default_value = "none")]
    pub dsp_system_library: PathBuf,

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
    #[arg(long, value_name = "TRANSPORT", value_parser = named::<TransportKind>())]
    pub transport: Option<TransportKind>,

    /// The skel .so: with --transport local the host build [default: $LPAI_DIRECT_SKEL, else
    /// liblpai_direct_skel.so beside this executable, else the workspace's target/release/]; with --transport
    /// qemu the Hexagon build the PD shell loads [default: target/virtual-adsp/liblpai_direct_skel.so, the v73
    /// build].
    #[arg(long, value_name = "FILE")]
    pub skel: Option<PathBuf>,

    /// The PD shell --transport qemu runs under qemu-hexagon [default: target/virtual-adsp/lpai-pd-shell].
    #[arg(long = "pd_shell", value_name = "FILE")]
    pub pd_shell: Option<PathBuf>,

    /// DSP domain for --transport fastrpc.
    #[arg(long, value_name = "DOMAIN", default_value = "adsp", value_parser = named::<Domain>())]
    pub domain: Domain,

    /// The PD on that domain the skel runs in: user (FastRPC's dynamic user PD), or audio, sensors, root (the
    /// stub first opens the FastRPC control name that attaches this process to that PD). FastRPC only.
    #[arg(long, value_name = "PD", default_value = "user", value_parser = named::<Pd>())]
    pub pd: Pd,

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

    /// Direct mode: the skel runs the whole input list itself (one call), reading inputs and writing results
    /// through its own file access; without it the host calls execute once per inference.
    #[arg(long = "direct_mode")]
    pub direct_mode: bool,

    /// Run this many inferences, cycling through the input list (qnn-net-run's --num_inferences).
    #[arg(long = "num_inferences", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub num_inferences: Option<u32>,

    /// Save the results of the first N inferences only (qnn-net-run's --keep_num_outputs).
    #[arg(long = "keep_num_outputs", value_name = "N")]
    pub keep_num_outputs: Option<u32>,
}

/// A clap parser for one of the library's named values: its names as the possible values (with their help),
/// turned into the value by the library's own parser.
fn named<T: Named + Send + Sync>() -> impl TypedValueParser<Value = T> {
    let values = T::ALL.iter().map(|value| PossibleValue::new(value.name()).help(value.description()));
    PossibleValuesParser::new(values).try_map(|name| names::parse::<T>(&name))
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

impl Options {
    /// The library's settings for these options.
    pub fn settings(&self) -> Settings {
        Settings {
            backend: self.backend.clone(),
            retrieve_context: self.retrieve_context.clone(),
            input_list: self.input_list.clone(),
            output_dir: self.output_dir.clone(),
            use_native_input_files: self.use_native_input_files,
            use_native_output_files: self.use_native_output_files,
            system_library: self.system_library.clone(),
            dsp_system_library: Some(self.dsp_system_library.clone()).filter(|path| path.as_os_str() != "none"),
            graph_name: self.graph_name.clone(),
            persistent_binary: self.persistent_binary,
            profiling_level: self.profiling_level.map(|level| match level {
                ProfilingLevel::Basic => settings::PROFILE_BASIC,
                ProfilingLevel::Detailed => settings::PROFILE_DETAILED,
                ProfilingLevel::Backend => settings::PROFILE_BACKEND,
            }),
            config_file: self.config_file.clone(),
            log_level: match self.log_level {
                LogLevel::Error => settings::LOG_ERROR,
                LogLevel::Warn => settings::LOG_WARN,
                LogLevel::Info => settings::LOG_INFO,
                LogLevel::Verbose => settings::LOG_VERBOSE,
                LogLevel::Debug => settings::LOG_DEBUG,
            },
            arena_bytes: self.arena_bytes,
            transport: self.transport,
            skel: self.skel.clone(),
            pd_shell: self.pd_shell.clone(),
            domain: self.domain,
            pd: self.pd,
            session: self.session,
            fastrpc_library: self.fastrpc_library.clone(),
            unsigned_pd: self.unsigned_pd,
            dsp_reads_context: self.dsp_reads_context,
            direct_mode: self.direct_mode,
            num_inferences: self.num_inferences.map(|n| n as usize),
            keep_num_outputs: self.keep_num_outputs.map(|n| n as usize),
        }
    }
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Invocation {
    /// A net-run (qnn-net-run's flags).
    Run(Box<Options>),
    /// `inspect BIN ...`.
    Inspect(InspectOptions),
    /// `stage --output_dir DIR ...`.
    Stage(Box<crate::stage_command::StageOptions>),
}

/// Parses a command line (the program name first): a command's name as the first argument selects that command,
/// anything else is a net-run. Exits with clap's message on a bad command line, as `Parser::parse` does.
pub fn parse_invocation<T: Into<OsString>>(args: impl IntoIterator<Item = T>) -> Invocation {
    let mut args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let command = args.get(1).and_then(|first| first.to_str()).map(str::to_owned);
    match command.as_deref() {
        Some("inspect") => {
            args.remove(1);
            Invocation::Inspect(InspectOptions::parse_from(args))
        }
        Some("stage") => {
            args.remove(1);
            Invocation::Stage(Box::new(crate::stage_command::StageOptions::parse_from(args)))
        }
        _ => Invocation::Run(Box::new(Options::parse_from(args))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpai_direct_stub::inspect::InspectSettings;

    const REQUIRED: [&str; 4] = ["lpai-net-run", "--backend=b", "--retrieve_context=c", "--input_list=l"];

    fn settings(extra: &[&str]) -> Settings {
        Options::parse_from(REQUIRED.iter().chain(extra)).settings()
    }

    #[test]
    fn systemlib_is_an_alias_of_system_library() {
        for flag in ["--systemlib", "--system_library"] {
            assert_eq!(settings(&[flag, "libQnnSystem.so"]).system_library, Some(PathBuf::from("libQnnSystem.so")));
        }
    }

    #[test]
    fn the_dsp_system_library_is_none_unless_a_file_is_named() {
        assert_eq!(settings(&[]).dsp_system_library, None);
        assert_eq!(settings(&["--dsp_system_library=none"]).dsp_system_library, None);
        let named = settings(&["--dsp_system_library", "libQnnSystem.so"]).dsp_system_library;
        assert_eq!(named, Some(PathBuf::from("libQnnSystem.so")));
    }

    #[test]
    fn inspect_is_a_command_of_its_own() {
        let Invocation::Inspect(inspect) =
            parse_invocation(["lpai-net-run", "inspect", "m.bin", "--emit_metadata", "m.lpmd"])
        else {
            panic!("expected inspect");
        };
        let expected = InspectSettings {
            binary: "m.bin".into(),
            system_library: "libQnnSystem.so".into(),
            emit_metadata: Some("m.lpmd".into()),
        };
        assert_eq!(inspect.settings(), expected);
        assert!(matches!(parse_invocation(REQUIRED), Invocation::Run(_)));
    }

    #[test]
    fn defaults_are_the_library_defaults() {
        assert_eq!(settings(&[]), Settings::new("b", "c", "l"));
    }

    #[test]
    fn flags_reach_the_settings() {
        let given = settings(&[
            "--transport=local",
            "--skel=/x/liblpai_direct_skel.so",
            "--domain=cdsp1",
            "--pd=sensors",
            "--profiling_level=backend",
            "--log_level=debug",
        ]);
        assert_eq!(given.transport, Some(TransportKind::Local));
        assert_eq!(given.skel, Some(PathBuf::from("/x/liblpai_direct_skel.so")));
        assert_eq!(given.domain, Domain::Cdsp1);
        assert_eq!(given.pd, Pd::Sensors);
        assert_eq!((given.profiling_level, given.log_level), (Some(1000), 5));
    }

    #[test]
    fn unknown_transports_domains_and_pds_are_refused_with_the_known_names() {
        for (flag, known) in [
            ("--transport=dsp", "local, fastrpc, qemu"),
            ("--domain=moon", "adsp, mdsp, sdsp, cdsp, cdsp1"),
            ("--pd=audiopd", "user, audio, sensors, root"),
        ] {
            let error = Options::try_parse_from(REQUIRED.iter().copied().chain([flag])).unwrap_err().to_string();
            assert!(error.contains("invalid value") && error.contains(known), "{error}");
        }
    }
}
