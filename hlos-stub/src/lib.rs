//! The HLOS side of lpai-direct: `lpai-net-run`'s options, input lists, result files and the net-run job.

pub mod c_api;
pub mod cli;
pub mod input_list;
pub mod lpai_config;
pub mod net_run;
pub mod output;
pub mod stub;
