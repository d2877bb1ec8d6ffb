//! The HLOS side of lpai-direct: the stub library and its C ABI, and the net-run job behind `lpai-net-run`
//! (input lists, graph tensor sizes, result files), driven by plain [`settings::Settings`]. The command line
//! itself lives in the `lpai-net-run` package, so this library links no argument parser.

pub mod c_api;
pub mod direct;
pub mod graph_io;
pub mod input_list;
pub mod lpai_config;
pub mod net_run;
pub mod output;
pub mod run_record;
pub mod settings;
pub mod stub;
