//! `lpai-net-run` as a library, over the stub library (`lpai_direct_stub`): the net-run job ([`net_run`]) driven
//! by plain [`settings::Settings`], with what it reads (the config files, the input lists, a binary's metadata
//! through the HLOS side's libQnnSystem) and what it writes (the results, the run record, a profiled run's trace,
//! QNN profile log and CSV); the commands `inspect`, `stage`, `doctor`, `chart` and `render-log`; and the command line ([`cli`],
//! the only part that links clap). The binary's `main` parses with [`cli`] and prints.
//!
//! Its users' guide is the book's `docs/src/run-a-model.md`, every flag is in `docs/src/reference/flags.md`.

pub mod backend_output;
pub mod chart;
pub mod cli;
mod contained;
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
pub mod profile_csv;
pub mod profile_files;
pub mod profile_log;
pub mod render_log;
pub mod run_record;
pub mod settings;
pub mod stage;
pub mod summary;
pub mod times;
pub mod trace;
pub mod whole;
