//! `lpai-net-run`: parses the command line, runs the job (or `inspect`, `stage`, `chart`, `doctor`, `render-log`) through the
//! library and prints its summary (and a profiled run's table); errors go to stderr with exit status 1.
//!
//! Its users' guide is the book's `docs/src/run-a-model.md`, every flag is in `docs/src/reference/flags.md`.

use lpai_net_run::cli::{self, parse_invocation, Invocation, Options};
use lpai_net_run::{net_run, summary};

/// SIGXFSZ's number on Linux (x86_64, aarch64 and the other generic-ABI targets).
#[cfg(target_os = "linux")]
const SIGXFSZ: std::ffi::c_int = 25;
/// `SIG_IGN` as `signal` takes it.
#[cfg(target_os = "linux")]
const SIG_IGN: usize = 1;

#[cfg(target_os = "linux")]
extern "C" {
    fn signal(signal: std::ffi::c_int, handler: usize) -> usize;
}

/// A file-size limit (`ulimit -f`, RLIMIT_FSIZE) kills a process that writes past it with SIGXFSZ, leaving a
/// half-written `.partial` file and no message. Ignored, the write fails with EFBIG instead, which the run reports
/// naming the file, removing the partial file. The disposition is inherited by the processes this one starts (the
/// virtual aDSP's qemu-hexagon), whose writes then fail the same way.
fn ignore_file_size_signal() {
    #[cfg(target_os = "linux")]
    // SAFETY: `signal` with SIG_IGN installs no handler code; it only changes how the kernel treats SIGXFSZ.
    unsafe {
        signal(SIGXFSZ, SIG_IGN);
    }
}

fn main() -> std::process::ExitCode {
    // SAFETY: first thing in main: no other thread exists yet, let alone one using C's stdout.
    unsafe { lpai_net_run::backend_output::filter_backend_notices() };
    ignore_file_size_signal();
    match parse_invocation(std::env::args_os()) {
        Invocation::Run(options) => run(&options),
        Invocation::Inspect(options) => cli::inspect::run(&options),
        Invocation::Chart(options) => cli::chart::run(&options),
        Invocation::Stage(options) => cli::stage::run(&options),
        Invocation::Doctor(options) => cli::doctor::run(&options),
        Invocation::RenderLog(options) => cli::render_log::run(&options),
    }
}

fn run(options: &Options) -> std::process::ExitCode {
    match net_run::run(&options.settings()) {
        Ok(record) => {
            print!("{}", summary::text(&record, &options.output_dir));
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("lpai-net-run: error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
