//! The HLOS side of lpai-direct: the stub library and its C ABI, the net-run job behind `lpai-net-run` (input
//! lists, graph tensor sizes, result files), driven by plain [`settings::Settings`], and the HLOS side's reader of
//! a binary's metadata (libQnnSystem here, the metadata record for the skel), and a run's profile: its record's
//! `profile`, its Chrome trace and the latency chart. The command line itself lives in the `lpai-net-run` package,
//! so this library links no argument parser.

pub mod c_api;
pub mod chart;
pub mod contained;
pub mod direct;
pub mod doctor;
pub mod file_kinds;
pub mod graph_io;
pub mod input_list;
pub mod inspect;
pub mod lpai_config;
pub mod metadata;
pub mod net_run;
pub mod net_run_config;
pub mod output;
pub mod profile;
pub mod run_record;
pub mod settings;
pub mod stage;
pub mod stub;
pub mod trace;
