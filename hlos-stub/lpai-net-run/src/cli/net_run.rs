//! The flags of a net-run, spelled as qnn-net-run spells them so existing scripts keep working, and their
//! translation into the library's [`Settings`].

use super::fastrpc_args::FastRpcArgs;
use super::named_values::named;
use crate::file_kinds::OutputDataType;
use crate::settings::{self, OpPackageSetting, PerfProfile, Settings};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, ValueEnum};
use lpai_direct_stub::stub::TransportKind;
use std::path::PathBuf;

/// Runs offline-prepared QNN context binaries on the LPAI engine, compatible with qnn-net-run's flags and files.
#[derive(Debug, Parser)]
#[command(
    name = "lpai-net-run",
    version,
    about,
    long_about = None,
    after_help = "Also: lpai-net-run inspect BIN describes a context binary (versions, graphs, tensors, memory) and \
                  writes its metadata record; lpai-net-run stage --output_dir DIR assembles the device directory of \
                  the native aDSP path; lpai-net-run doctor checks, on the device, everything a first run needs; lpai-net-run chart DIR draws the latency distribution of the runs recorded in \
                  DIR as DIR/latency.svg. Each has its --help."
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

    /// Write outputs in the tensors' native type instead of float32 (--output_data_type native_only).
    #[arg(long = "use_native_output_files", conflicts_with = "output_data_type")]
    pub use_native_output_files: bool,

    /// These inputs' files hold native data, the others float32: `t1,t2`, or `graph:t1,t2;graph2:t3` per graph.
    #[arg(long = "native_input_tensor_names", value_name = "NAMES", conflicts_with_all = ["use_native_input_files", "input_data_type"])]
    pub native_input_tensor_names: Option<String>,

    /// How outputs are written: float_only (`<name>.raw`), native_only (`<name>.raw`), float_and_native (float in
    /// `<name>.raw`, native in `<name>_native.raw`; a float32 tensor once, as `<name>.raw`).
    #[arg(long = "output_data_type", value_enum)]
    pub output_data_type: Option<OutputDataTypeName>,

    /// Input files' data type: float (float32) or native (--use_native_input_files).
    #[arg(long = "input_data_type", value_enum, conflicts_with = "use_native_input_files")]
    pub input_data_type: Option<InputDataType>,

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

    /// Collect QNN profile events and print them after the run, with a table of the times (nearest-rank
    /// percentiles, the IPC share in traditional mode, the fps budget); OUTPUT_DIR/lpai_net_run.json gets a
    /// `profile` object and OUTPUT_DIR/profile.trace.json a Chrome trace (Perfetto) of the run; the events also
    /// go to OUTPUT_DIR/qnn-profiling-data_N.log (qnn-profile-viewer's log, written by --system_library's
    /// System Profile API) and qnn-profiling-data_N.csv (ORT's CSV), N the first number both names leave free.
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

    /// How FastRPC reaches the DSP.
    #[command(flatten)]
    pub fastrpc: FastRpcArgs,

    /// The skel reads the context binary itself (from its file system) instead of receiving it with the call.
    #[arg(long = "dsp_reads_context")]
    pub dsp_reads_context: bool,

    /// Direct mode: the skel runs the whole input list itself (one call), reading inputs and writing results
    /// through its own file access; without it the host calls execute once per inference.
    #[arg(long = "direct_mode")]
    pub direct_mode: bool,

    /// Run this many inferences, cycling through the input list (qnn-net-run's --num_inferences).
    #[arg(long = "num_inferences", value_name = "N", value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "duration")]
    pub num_inferences: Option<u32>,

    /// Loop over the input list until this many seconds have passed (results keep counting up: Result_0, 1, ...).
    #[arg(long = "duration", value_name = "SECONDS", value_parser = positive_seconds)]
    pub duration: Option<f64>,

    /// Performance profile, applied as LPAI performance settings on the DSP (the table is in docs/src/reference/config.md).
    #[arg(long = "perf_profile", value_name = "PROFILE", value_parser = perf_profile())]
    pub perf_profile: Option<PerfProfile>,

    /// Accepted for qnn-net-run scripts: every execute is synchronous already.
    #[arg(long = "synchronous")]
    pub synchronous: bool,

    /// Save the results of the first N inferences only (qnn-net-run's --keep_num_outputs).
    #[arg(long = "keep_num_outputs", value_name = "N")]
    pub keep_num_outputs: Option<u32>,

    /// Op packages to register with the backend before the load, as qnn-net-run takes them (at most 4): the
    /// package library as the DSP side names it, the interface provider it exports, optionally its target.
    #[arg(long = "op_packages", value_name = "PATH:PROVIDER[:TARGET][,...]", value_parser = op_packages)]
    pub op_packages: Option<OpPackageList>,
}

/// `--op_packages`' packages (a type of its own: clap would read a `Vec` as a repeated flag).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpPackageList(pub Vec<OpPackageSetting>);

/// `--op_packages`: the shared parser's syntax, a refusal naming the entry.
pub(super) fn op_packages(text: &str) -> Result<OpPackageList, String> {
    OpPackageSetting::parse_list(text).map(OpPackageList)
}

/// `--duration`: a positive number of seconds.
fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds.is_finite() => Ok(seconds),
        _ => Err(format!("`{text}` is not a positive number of seconds")),
    }
}

/// `--perf_profile`'s values, named as qnn-net-run names them.
fn perf_profile() -> impl TypedValueParser<Value = PerfProfile> {
    let names = PerfProfile::ALL.iter().map(|(_, name)| PossibleValue::new(*name));
    PossibleValuesParser::new(names).map(|name| {
        PerfProfile::ALL.iter().find(|(_, known)| *known == name).map_or(PerfProfile::Default, |(profile, _)| *profile)
    })
}

/// qnn-net-run's `--output_data_type` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum OutputDataTypeName {
    /// Float32 only.
    FloatOnly,
    /// Native only.
    NativeOnly,
    /// Both.
    FloatAndNative,
}

/// qnn-net-run's `--input_data_type` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InputDataType {
    /// Float32 files.
    Float,
    /// Native files.
    Native,
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
            use_native_input_files: self.use_native_input_files || self.input_data_type == Some(InputDataType::Native),
            native_input_tensor_names: self.native_input_tensor_names.clone(),
            output_data_type: match (self.use_native_output_files, self.output_data_type) {
                (true, _) | (false, Some(OutputDataTypeName::NativeOnly)) => OutputDataType::NativeOnly,
                (false, Some(OutputDataTypeName::FloatAndNative)) => OutputDataType::FloatAndNative,
                (false, Some(OutputDataTypeName::FloatOnly) | None) => OutputDataType::FloatOnly,
            },
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
            domain: self.fastrpc.domain,
            pd: self.fastrpc.pd,
            session: self.fastrpc.session,
            fastrpc_library: self.fastrpc.fastrpc_library.clone(),
            unsigned_pd: self.fastrpc.unsigned_pd,
            dsp_reads_context: self.dsp_reads_context,
            direct_mode: self.direct_mode,
            num_inferences: self.num_inferences.map(|n| n as usize),
            keep_num_outputs: self.keep_num_outputs.map(|n| n as usize),
            duration: self.duration,
            perf_profile: self.perf_profile,
            op_packages: self.op_packages.clone().map(|list| list.0).unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpai_direct_stub::stub::fastrpc::{Domain, Pd};

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
    fn data_type_flags_reach_the_settings_and_conflict_as_in_qnn_net_run() {
        assert_eq!(settings(&["--output_data_type=float_and_native"]).output_data_type, OutputDataType::FloatAndNative);
        assert_eq!(settings(&["--use_native_output_files"]).output_data_type, OutputDataType::NativeOnly);
        assert!(settings(&["--input_data_type", "native"]).use_native_input_files);
        let named = settings(&["--native_input_tensor_names", "g:a,b"]).native_input_tensor_names;
        assert_eq!(named.as_deref(), Some("g:a,b"));
        for pair in [
            ["--use_native_output_files", "--output_data_type=native_only"],
            ["--use_native_input_files", "--native_input_tensor_names=a"],
            ["--num_inferences=3", "--duration=1"],
        ] {
            let error = Options::try_parse_from(REQUIRED.iter().chain(&pair)).unwrap_err().to_string();
            assert!(error.contains("cannot be used with"), "{error}");
        }
        assert_eq!(settings(&["--perf_profile", "burst"]).perf_profile, Some(PerfProfile::Burst));
        assert_eq!(settings(&["--duration", "0.5"]).duration, Some(0.5));
        let error = Options::try_parse_from(REQUIRED.iter().chain(&["--duration=0"])).unwrap_err().to_string();
        assert!(error.contains("not a positive number of seconds"), "{error}");
    }

    #[test]
    fn op_packages_are_read_with_the_shared_syntax_and_a_malformed_value_names_its_entry() {
        let packages = settings(&["--op_packages", "/dsp/libA.so:ProvideA,libB.so:ProvideB:DSP"]).op_packages;
        let expected = [
            OpPackageSetting { path: "/dsp/libA.so".into(), interface_provider: "ProvideA".into(), target: None },
            OpPackageSetting {
                path: "libB.so".into(),
                interface_provider: "ProvideB".into(),
                target: Some("DSP".into()),
            },
        ];
        assert_eq!(packages, expected);
        assert_eq!(OpPackageSetting::to_value(&packages), "/dsp/libA.so:ProvideA,libB.so:ProvideB:DSP");
        for (value, says) in [
            ("libA.so", "entry 1 'libA.so' has no interface provider"),
            ("a:b,", "entry 2 '' is empty"),
            ("a:b:c:d", "entry 1 'a:b:c:d' has more than three fields"),
            ("a:b,c:d,e:f,g:h,i:j", "entry 5 'i:j' is one too many: at most 4 op packages"),
        ] {
            let error = Options::try_parse_from(REQUIRED.iter().copied().chain(["--op_packages", value]))
                .unwrap_err()
                .to_string();
            let first = error.lines().next().unwrap();
            assert!(first.contains("--op_packages") && first.contains(says), "{error}");
        }
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
