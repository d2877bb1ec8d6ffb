//! What a net-run job needs, as plain values: the command line ([`crate::cli`]) fills them from its flags, and other
//! programs can fill them directly; the job itself reads no command line.

use crate::file_kinds::OutputDataType;
use lpai_direct_stub::stub::fastrpc::{Domain, Pd};
use lpai_direct_stub::stub::TransportKind;
use std::path::PathBuf;

/// QNN log level: failures only.
pub const LOG_ERROR: u32 = 1;
/// QNN log level: failures and warnings (lpai-net-run's default).
pub const LOG_WARN: u32 = 2;
/// QNN log level: each step.
pub const LOG_INFO: u32 = 3;
/// QNN log level: verbose (each step, as info).
pub const LOG_VERBOSE: u32 = 4;
/// QNN log level: everything.
pub const LOG_DEBUG: u32 = 5;

/// QNN profiling level: whole-graph timings.
pub const PROFILE_BASIC: u32 = 1;
/// QNN profiling level: per-node timings.
pub const PROFILE_DETAILED: u32 = 2;
/// QNN profiling level: backend-specific events.
pub const PROFILE_BACKEND: u32 = 1000;

/// One net-run job: qnn-net-run's settings plus how to reach the skel.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// QNN backend library the skel loads (libQnnLpai.so on the aDSP; a libQnnHtp.so path, or a bare name the
    /// dynamic loader searches for, with the local transport).
    pub backend: PathBuf,
    /// Offline-prepared context binary.
    pub retrieve_context: PathBuf,
    /// Input list: one inference a line.
    pub input_list: PathBuf,
    /// Where `Result_<i>/<output tensor>.raw` files go.
    pub output_dir: PathBuf,
    /// Input files hold native (quantized) bytes instead of float32.
    pub use_native_input_files: bool,
    /// `--native_input_tensor_names`: these inputs' files are native (`t1,t2` or `graph:t1,t2;graph2:t3`).
    pub native_input_tensor_names: Option<String>,
    /// How outputs are written (`--use_native_output_files` is [`OutputDataType::NativeOnly`]).
    pub output_data_type: OutputDataType,
    /// The HLOS side's libQnnSystem, which reads the binary's metadata here for the skel (`None`: libQnnSystem.so
    /// beside the backend); unused when the skel has its own ([`Settings::dsp_system_library`]).
    pub system_library: Option<PathBuf>,
    /// The libQnnSystem the skel loads and reads the metadata with (`None`: none; the skel gets the metadata record
    /// the HLOS side made).
    pub dsp_system_library: Option<PathBuf>,
    /// The graph to run (`None`: the first).
    pub graph_name: Option<String>,
    /// Ask for PERSISTENT_BINARY even when the backend does not require it.
    pub persistent_binary: bool,
    /// QNN profiling level ([`PROFILE_BASIC`], ...); `None`: the config file's, else off.
    pub profiling_level: Option<u32>,
    /// qnn-net-run's backend-extensions JSON or an `lpaiParams.conf`.
    pub config_file: Option<PathBuf>,
    /// QNN log level ([`LOG_ERROR`] .. [`LOG_DEBUG`]).
    pub log_level: u32,
    /// Arena bytes per context (`None`: the skel chooses).
    pub arena_bytes: Option<u32>,
    /// The transport (`None`: FastRPC on aarch64 when a FastRPC library loads, else local).
    pub transport: Option<TransportKind>,
    /// The skel library: for the local transport the host build (`None`: `$LPAI_DIRECT_SKEL`, then beside the
    /// executable, then the workspace's `target/release/`); for the qemu transport the Hexagon build (`None`: the
    /// v73 build in `target/virtual-adsp/`). Errors name it as `--skel`.
    pub skel: Option<PathBuf>,
    /// The PD shell the qemu transport runs (`None`: `target/virtual-adsp/lpai-pd-shell`); errors name it as
    /// `--pd_shell`.
    pub pd_shell: Option<PathBuf>,
    /// FastRPC domain.
    pub domain: Domain,
    /// The PD on that domain the FastRPC transport opens the skel in ([`Pd::User`]: FastRPC's dynamic user PD, no
    /// control open); another PD needs the FastRPC transport (`None` as the transport then means FastRPC).
    pub pd: Pd,
    /// FastRPC session on that domain.
    pub session: Option<u32>,
    /// FastRPC library to load instead of the domain's usual ones.
    pub fastrpc_library: Option<String>,
    /// Ask for an unsigned PD before opening.
    pub unsigned_pd: bool,
    /// The skel reads the context binary from its own file system instead of receiving it.
    pub dsp_reads_context: bool,
    /// Direct mode: the skel runs the whole input list itself (`run_job`), reading inputs and writing results
    /// through its own file access, with no round trip per inference.
    pub direct_mode: bool,
    /// Run this many inferences, cycling through the input list (`None`: each line once).
    pub num_inferences: Option<usize>,
    /// Save the results of the first this many inferences only (`None`: all).
    pub keep_num_outputs: Option<usize>,
    /// Loop over the input list until this many seconds have passed (`None`: as many inferences as asked).
    pub duration: Option<f64>,
    /// qnn-net-run's `--perf_profile`, applied as LPAI performance settings (`None`: the config file's).
    pub perf_profile: Option<PerfProfile>,
    /// qnn-net-run's `--op_packages`: registered with the skel's backend, in order, after configure and before the
    /// load (at most [`lpai_direct::op_package::MAX_OP_PACKAGES`]).
    pub op_packages: Vec<OpPackageSetting>,
}

/// One op package to register: its library as the DSP side names it, its interface provider, its target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpPackageSetting {
    /// The package library (given to the skel as written, as `--backend` is).
    pub path: PathBuf,
    /// The interface provider function it exports.
    pub interface_provider: String,
    /// The target it was built for (`None`: the backend's default).
    pub target: Option<String>,
}

impl OpPackageSetting {
    /// The packages a `--op_packages` value names (`PATH:PROVIDER[:TARGET][,...]`, the shared parser's syntax);
    /// a malformed value is refused with one line naming the entry and what is wrong.
    pub fn parse_list(value: &str) -> Result<Vec<OpPackageSetting>, String> {
        let packages = lpai_direct::op_package::parse(value).map_err(|error| error.to_string())?;
        Ok(packages
            .iter()
            .map(|package| OpPackageSetting {
                path: PathBuf::from(package.path),
                interface_provider: package.interface_provider.to_string(),
                target: package.target.map(str::to_string),
            })
            .collect())
    }

    /// Back in `--op_packages` syntax (for the staged command).
    pub fn to_value(packages: &[OpPackageSetting]) -> String {
        let entry = |package: &OpPackageSetting| {
            let mut text = format!("{}:{}", package.path.display(), package.interface_provider);
            if let Some(target) = &package.target {
                text.push(':');
                text.push_str(target);
            }
            text
        };
        packages.iter().map(entry).collect::<Vec<_>>().join(",")
    }
}

/// qnn-net-run's `--perf_profile` values, and the LPAI performance each sets on the DSP: `ftrt_ratio` (how much
/// faster than real time the engine is clocked, 10 being LPAI's default) and the client type. These numbers are
/// lpai-direct's choice, not Qualcomm's: LPAI has no power profiles of its own. `fps`, affinity and core selection
/// stay the config file's (or LPAI's defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerfProfile {
    /// ftrt_ratio 40, real time.
    Burst,
    /// ftrt_ratio 20, real time.
    HighPerformance,
    /// ftrt_ratio 20, real time.
    SustainedHighPerformance,
    /// ftrt_ratio 10 (LPAI's default), real time.
    Balanced,
    /// ftrt_ratio 10 (LPAI's default), real time.
    Default,
    /// ftrt_ratio 5, real time.
    LowBalanced,
    /// ftrt_ratio 10, non-real time.
    HighPowerSaver,
    /// ftrt_ratio 5, non-real time.
    PowerSaver,
    /// ftrt_ratio 2, non-real time.
    LowPowerSaver,
    /// ftrt_ratio 1, non-real time.
    ExtremePowerSaver,
    /// Leaves the DSP's settings alone (the config file's still apply).
    SystemSettings,
}

impl PerfProfile {
    /// Every profile with its qnn-net-run name.
    pub const ALL: [(PerfProfile, &'static str); 11] = [
        (PerfProfile::Burst, "burst"),
        (PerfProfile::HighPerformance, "high_performance"),
        (PerfProfile::SustainedHighPerformance, "sustained_high_performance"),
        (PerfProfile::Balanced, "balanced"),
        (PerfProfile::Default, "default"),
        (PerfProfile::LowBalanced, "low_balanced"),
        (PerfProfile::HighPowerSaver, "high_power_saver"),
        (PerfProfile::PowerSaver, "power_saver"),
        (PerfProfile::LowPowerSaver, "low_power_saver"),
        (PerfProfile::ExtremePowerSaver, "extreme_power_saver"),
        (PerfProfile::SystemSettings, "system_settings"),
    ];

    /// The `ftrt_ratio` and real-time flag it sets; `None` for [`PerfProfile::SystemSettings`].
    pub fn lpai(self) -> Option<(u32, bool)> {
        match self {
            PerfProfile::Burst => Some((40, true)),
            PerfProfile::HighPerformance | PerfProfile::SustainedHighPerformance => Some((20, true)),
            PerfProfile::Balanced | PerfProfile::Default => Some((10, true)),
            PerfProfile::LowBalanced => Some((5, true)),
            PerfProfile::HighPowerSaver => Some((10, false)),
            PerfProfile::PowerSaver => Some((5, false)),
            PerfProfile::LowPowerSaver => Some((2, false)),
            PerfProfile::ExtremePowerSaver => Some((1, false)),
            PerfProfile::SystemSettings => None,
        }
    }
}

impl Settings {
    /// The three required settings; everything else as lpai-net-run's defaults.
    pub fn new(
        backend: impl Into<PathBuf>,
        retrieve_context: impl Into<PathBuf>,
        input_list: impl Into<PathBuf>,
    ) -> Self {
        Settings {
            backend: backend.into(),
            retrieve_context: retrieve_context.into(),
            input_list: input_list.into(),
            output_dir: PathBuf::from("output"),
            use_native_input_files: false,
            native_input_tensor_names: None,
            output_data_type: OutputDataType::FloatOnly,
            system_library: None,
            dsp_system_library: None,
            graph_name: None,
            persistent_binary: false,
            profiling_level: None,
            config_file: None,
            log_level: LOG_WARN,
            arena_bytes: None,
            transport: None,
            skel: None,
            pd_shell: None,
            domain: Domain::Adsp,
            pd: Pd::User,
            session: None,
            fastrpc_library: None,
            unsigned_pd: false,
            dsp_reads_context: false,
            direct_mode: false,
            num_inferences: None,
            keep_num_outputs: None,
            duration: None,
            perf_profile: None,
            op_packages: Vec::new(),
        }
    }
}
