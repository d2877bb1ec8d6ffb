//! `lpai-net-run`: parses the options, runs the job (or `inspect`, `stage`, `chart`, `doctor`), prints a summary (and a
//! profiled run's table); errors go to stderr with exit status 1.

use lpai_direct_stub::{net_run, profile};
use lpai_net_run::cli::{parse_invocation, Invocation, Options};
use lpai_net_run::{chart_command, doctor_command, inspect_command, stage_command};

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
    ignore_file_size_signal();
    match parse_invocation(std::env::args_os()) {
        Invocation::Run(options) => run(&options),
        Invocation::Inspect(options) => inspect_command::run(&options),
        Invocation::Chart(options) => chart_command::run(&options),
        Invocation::Stage(options) => stage_command::run(&options),
        Invocation::Doctor(options) => doctor_command::run(&options),
    }
}

fn run(options: &Options) -> std::process::ExitCode {
    match net_run::run(&options.settings()) {
        Ok(summary) => {
            let times = &summary.execute_micros;
            let mean = times.iter().sum::<u64>() / times.len().max(1) as u64;
            println!(
                "lpai-net-run: {} inference(s) of graph {} through the {} transport: execute mean {} us, min {} us, max {} us",
                times.len(),
                summary.graph,
                summary.transport,
                mean,
                times.iter().min().unwrap_or(&0),
                times.iter().max().unwrap_or(&0)
            );
            println!("lpai-net-run: the skel ran in {}", summary.skel_place);
            println!(
                "lpai-net-run: arena high-water mark {} of {} bytes; LPAI scratch {} B, persistent {} B",
                summary.arena_used, summary.arena_capacity, summary.lpai_memory.0, summary.lpai_memory.1
            );
            for event in &summary.profile {
                let unit = profile::unit_name(event.unit);
                let indent = "  ".repeat(event.depth as usize + 1);
                println!(
                    "profile:{indent}{}: {} {unit} (event type {})",
                    event.identifier, event.value, event.event_type
                );
            }
            print!("{}", profile::table(&summary.record));
            println!("lpai-net-run: outputs in {}", options.output_dir.display());
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("lpai-net-run: error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
