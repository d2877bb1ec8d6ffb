//! `lpai-net-run`'s command line: qnn-net-run's flags parsed with clap into the stub library's plain
//! [`lpai_direct_stub::settings::Settings`]. Only this package links clap.

pub mod chart_command;
pub mod cli;
pub mod doctor_command;
pub mod inspect_command;
pub mod stage_command;
