//! The staged directory's layout: the name of every file and folder `stage` writes, under the root that goes to the
//! device.

use lpai_direct_stub::stub::address::SKEL_FILE_NAME;

/// The skel's file name: FastRPC opens it by this name (`file:///liblpai_direct_skel.so?...`).
pub const SKEL_FILE: &str = SKEL_FILE_NAME;
/// The stub library's file name.
pub const STUB_FILE: &str = "liblpai_direct_stub.so";
/// The command's file name.
pub const NET_RUN_FILE: &str = "lpai-net-run";
/// The rewritten input list's file name.
pub const INPUT_LIST_FILE: &str = "input_list.txt";
/// The backend-extensions file's name.
pub const CONFIG_FILE: &str = "config.json";
/// The LPAI parameters file's name.
pub const PARAMS_FILE: &str = "lpaiParams.conf";
/// The environment file's name: the run's `LD_LIBRARY_PATH` and `ADSP_LIBRARY_PATH`, sourced by the run command
/// (`. ./env.sh`) and by the virtual device.
pub const ENV_FILE: &str = "env.sh";
/// The folder of the input files.
pub const INPUTS_DIR: &str = "inputs";
/// The folder of the DSP side.
pub const ADSP_DIR: &str = "adsp";
/// The results folder the run writes on the device.
pub const OUTPUT_DIR: &str = "output";
