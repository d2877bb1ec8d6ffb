//! The HLOS side of lpai-direct: the stub library and its C ABI, and `lpai-net-run`'s options, input lists,
//! graph tensor sizes, result files and the net-run job.

pub mod c_api;
pub mod cli;
pub mod graph_io;
pub mod input_list;
pub mod lpai_config;
pub mod net_run;
pub mod output;
pub mod stub;
