//! What `stage` assembles, as plain values (the `lpai-net-run stage` command fills them from its flags and the
//! environment), and the defaults of the device settings.

use crate::settings::OpPackageSetting;
use lpai_direct_stub::stub::fastrpc::Pd;
use std::path::PathBuf;

/// Where the root goes on the device unless told otherwise.
pub const DEFAULT_DEVICE_DIR: &str = "/data/local/tmp/LPAI";
/// `QNN_TARGET_ARCH` when neither the flag nor the environment gives one (scripts/build-hlos.sh's default).
pub const DEFAULT_TARGET_ARCH: &str = "aarch64-oe-linux-gcc11.2";
/// `HEX_VER` when neither the flag nor the environment gives one (scripts/build-hexagon.sh's default).
pub const DEFAULT_HEX_VER: &str = "81";
/// `HW_VER` when neither the flag nor the environment gives one (the runtime's default LPAI hardware version).
pub const DEFAULT_HW_VER: &str = "v6";

/// A setting's value and where it came from (`--hex_ver`, `HEX_VER in the environment`, `the default`), for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Given {
    /// The value.
    pub value: String,
    /// Where it came from.
    pub from: String,
}

impl Given {
    /// The flag's value, else the environment variable's, else the default.
    pub fn choose(
        flag: Option<&str>,
        flag_name: &str,
        environment: Option<String>,
        variable: &str,
        default: &str,
    ) -> Given {
        match (flag, environment.filter(|value| !value.is_empty())) {
            (Some(value), _) => Given { value: value.to_string(), from: flag_name.to_string() },
            (None, Some(value)) => Given { value, from: format!("{variable} in the environment") },
            (None, None) => Given { value: default.to_string(), from: "the default".to_string() },
        }
    }

    /// Whether nothing gave it: it is the default.
    pub fn is_default(&self) -> bool {
        self.from == "the default"
    }
}

/// What `stage` assembles.
#[derive(Clone, Debug, PartialEq)]
pub struct StageSettings {
    /// The local directory to create (it must not exist yet).
    pub output_dir: PathBuf,
    /// The context binary.
    pub retrieve_context: PathBuf,
    /// The input list; its files are copied under `inputs/` and the list rewritten to their device paths.
    pub input_list: PathBuf,
    /// The libQnnLpai (Hexagon) placed in `adsp/`.
    pub backend: PathBuf,
    /// An lpaiParams.conf or a backend-extensions JSON naming one (`None`: a minimal conf is written).
    pub config_file: Option<PathBuf>,
    /// The HLOS side's libQnnSystem (aarch64), placed in the root: lpai-net-run reads the binary's metadata with it.
    pub system_library: Option<PathBuf>,
    /// A Hexagon libQnnSystem placed in `adsp/`, which the skel loads to read the metadata itself.
    pub dsp_system_library: Option<PathBuf>,
    /// Other Hexagon libraries the PD must load (libQnnLpai's own dependencies), placed in `adsp/`.
    pub adsp_libraries: Vec<PathBuf>,
    /// The Hexagon skel (`None`: scripts/build-hexagon.sh's output in the workspace).
    pub skel: Option<PathBuf>,
    /// A directory holding `lpai-net-run` and `liblpai_direct_stub.so` for the target (`None`: scripts/build-hlos.sh's
    /// output for [`StageSettings::target_arch`] in the workspace).
    pub hlos_dir: Option<PathBuf>,
    /// `lpai-net-run` for the target (overrides the one in the HLOS directory).
    pub net_run: Option<PathBuf>,
    /// `liblpai_direct_stub.so` for the target (overrides the one in the HLOS directory).
    pub stub: Option<PathBuf>,
    /// `QNN_TARGET_ARCH`: the HLOS side's target.
    pub target_arch: Given,
    /// `HEX_VER`: the device's Hexagon version.
    pub hex_ver: Given,
    /// `HW_VER`: the LPAI hardware version.
    pub hw_ver: Given,
    /// Where the root goes on the device.
    pub device_dir: String,
    /// The PD the skel runs in.
    pub pd: Pd,
    /// The inputs are native files (the run gets `--use_native_input_files`).
    pub use_native_input_files: bool,
    /// Write native outputs (the run gets `--use_native_output_files`).
    pub use_native_output_files: bool,
    /// Op packages (Hexagon builds) placed in `adsp/`; the run gets `--op_packages` naming them there.
    pub op_packages: Vec<OpPackageSetting>,
}
