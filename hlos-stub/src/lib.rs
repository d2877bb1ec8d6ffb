//! The HLOS side of lpai-direct: command-line options of `lpai-net-run` and (as they land) the stub transports.

pub mod cli;
