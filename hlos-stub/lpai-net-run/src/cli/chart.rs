//! `lpai-net-run chart`: its options, and the line it prints.

use crate::chart;
use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

/// `lpai-net-run chart`: draws the latency distribution of the runs recorded in DIR as DIR/latency.svg: each run's
/// DSP execute times and (traditional mode) host round trips, with their nearest-rank percentiles and the frame
/// budget of a profiled run's fps. DIR is a run's output directory (holding lpai_net_run.json), or a directory
/// whose subdirectories each hold one (say a direct and a traditional run), drawn together.
#[derive(Debug, Parser)]
#[command(name = "lpai-net-run chart", bin_name = "lpai-net-run chart", version, long_about = None)]
pub struct ChartOptions {
    /// The directory holding lpai_net_run.json, or subdirectories that each hold one.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// Runs `chart`: the written file's name on stdout, an error on stderr with exit status 1.
pub fn run(options: &ChartOptions) -> ExitCode {
    match chart::render(&options.dir) {
        Ok(path) => {
            println!("lpai-net-run: latency chart written to {}", path.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("lpai-net-run: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
