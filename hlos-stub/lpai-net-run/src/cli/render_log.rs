//! `lpai-net-run render-log`: puts a captured DSP log in words.

use clap::Parser;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// `lpai-net-run render-log`: reads a captured DSP log (logcat, mini-dm or any text holding the skel's, the
/// embedding's or the audio module's lines) and writes it to stdout with each message record (`lpai:` and hex
/// digits) put in words, every other character as it was; a record logged in pieces (`lpai+` lines first) is put
/// in words on the line of its last piece, its other lines left out. FILE `-` (the default) reads stdin.
#[derive(Debug, Parser)]
#[command(name = "lpai-net-run render-log", bin_name = "lpai-net-run render-log", version, long_about = None)]
pub struct RenderLogOptions {
    /// The captured log (`-`: stdin).
    #[arg(value_name = "FILE", default_value = "-")]
    pub file: PathBuf,
}

/// Runs `render-log`: the log in words on stdout; an error on stderr with exit status 1.
pub fn run(options: &RenderLogOptions) -> ExitCode {
    let input: Box<dyn BufRead> = if options.file.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        match std::fs::File::open(&options.file) {
            Ok(file) => Box::new(std::io::BufReader::new(file)),
            Err(error) => {
                eprintln!("lpai-net-run: error: cannot read {}: {error}", options.file.display());
                return ExitCode::FAILURE;
            }
        }
    };
    let mut out = std::io::stdout().lock();
    let mut renderer = crate::render_log::LogRenderer::default();
    for line in input.lines() {
        let line = match line {
            Ok(line) => line,
            Err(error) => {
                eprintln!("lpai-net-run: error: reading {}: {error}", options.file.display());
                return ExitCode::FAILURE;
            }
        };
        let Some(rendered) = renderer.line(&line) else { continue };
        if writeln!(out, "{rendered}").is_err() {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
