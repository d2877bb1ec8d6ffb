//! `lpai-net-run`'s command line, the only part of the crate that links clap: a command's name as the first argument
//! selects that command (its options in the module of its name), anything else is a net-run with qnn-net-run's flags
//! ([`Options`]); each turns into the library's plain settings.

pub mod chart;
pub mod doctor;
pub mod fastrpc_args;
pub mod inspect;
mod named_values;
pub mod net_run;
pub mod render_log;
pub mod stage;

use chart::ChartOptions;
pub use clap::Parser;
use doctor::DoctorOptions;
use inspect::InspectOptions;
pub use net_run::Options;
use render_log::RenderLogOptions;
use stage::StageOptions;
use std::ffi::OsString;

/// qnn-net-run flags lpai-net-run refuses, each with why.
pub const REFUSED_FLAGS: [(&str, &str); 13] = [
    ("model", "lpai-net-run runs offline-prepared context binaries only: pass --retrieve_context"),
    ("model_prefix", "it names functions of a --model library, and lpai-net-run runs context binaries only"),
    ("debug", "per-layer outputs need a graph built from a --model library; a context binary exposes its outputs only"),
    ("set_output_tensors", "intermediate tensors need a graph built from a --model library"),
    ("shared_buffer", "the stub places tensors itself (and direct mode keeps them on the DSP)"),
    ("batch_multiplier", "a prepared context binary has fixed shapes"),
    ("max_input_cache_tensor_sets", "inputs are read per inference; there is no input cache"),
    ("max_input_cache_size_mb", "inputs are read per inference; there is no input cache"),
    ("platform_options", "they are HTP platform options; LPAI takes its settings from the config file"),
    ("profiling_option", "LPAI profiling is chosen with --profiling_level alone"),
    ("timeout", "LPAI graphs take no execute timeout"),
    ("use_mmap", "the binary is sent with the load; --dsp_reads_context has the skel read it itself"),
    (
        "validate_binary",
        "every binary's metadata is read and checked before the load; `lpai-net-run inspect BIN` shows it",
    ),
];

/// The refusal for the first flag in `args` that lpai-net-run refuses, as one line.
pub fn refused_flag(args: &[OsString]) -> Option<String> {
    args.iter().skip(1).filter_map(|arg| arg.to_str()).find_map(|arg| {
        let name = arg.strip_prefix("--")?;
        let name = name.split_once('=').map_or(name, |(name, _)| name);
        let (flag, why) = REFUSED_FLAGS.iter().find(|(flag, _)| *flag == name)?;
        Some(format!("--{flag} is a qnn-net-run flag lpai-net-run does not take: {why}"))
    })
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Invocation {
    /// A net-run (qnn-net-run's flags).
    Run(Box<Options>),
    /// `inspect BIN ...`.
    Inspect(InspectOptions),
    /// `chart DIR`.
    Chart(ChartOptions),
    /// `stage --output_dir DIR ...`.
    Stage(Box<StageOptions>),
    /// `doctor ...`.
    Doctor(DoctorOptions),
    /// `render-log [FILE]`.
    RenderLog(RenderLogOptions),
}

/// Parses a command line (the program name first): a command's name as the first argument selects that command,
/// anything else is a net-run. Exits with clap's message on a bad command line, as `Parser::parse` does, and with
/// the one-line reason for a qnn-net-run flag lpai-net-run refuses.
pub fn parse_invocation<T: Into<OsString>>(args: impl IntoIterator<Item = T>) -> Invocation {
    let mut args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    if let Some(refusal) = refused_flag(&args) {
        eprintln!("lpai-net-run: error: {refusal}");
        std::process::exit(2);
    }
    let command = args.get(1).and_then(|first| first.to_str()).map(str::to_owned);
    match command.as_deref() {
        Some("inspect") => {
            args.remove(1);
            Invocation::Inspect(InspectOptions::parse_from(args))
        }
        Some("chart") => {
            args.remove(1);
            Invocation::Chart(ChartOptions::parse_from(args))
        }
        Some("stage") => {
            args.remove(1);
            Invocation::Stage(Box::new(StageOptions::parse_from(args)))
        }
        Some("doctor") => {
            args.remove(1);
            Invocation::Doctor(DoctorOptions::parse_from(args))
        }
        Some("render-log") => {
            args.remove(1);
            Invocation::RenderLog(RenderLogOptions::parse_from(args))
        }
        _ => Invocation::Run(Box::new(Options::parse_from(args))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::InspectSettings;
    use std::path::PathBuf;

    const REQUIRED: [&str; 4] = ["lpai-net-run", "--backend=b", "--retrieve_context=c", "--input_list=l"];
    #[test]
    fn inspect_is_a_command_of_its_own() {
        let Invocation::Inspect(inspect) =
            parse_invocation(["lpai-net-run", "inspect", "m.bin", "--emit_metadata", "m.lpmd"])
        else {
            panic!("expected inspect");
        };
        let expected = InspectSettings {
            binary: "m.bin".into(),
            system_library: "libQnnSystem.so".into(),
            emit_metadata: Some("m.lpmd".into()),
        };
        assert_eq!(inspect.settings(), expected);
        assert!(matches!(parse_invocation(REQUIRED), Invocation::Run(_)));
    }

    #[test]
    fn qnn_net_run_flags_that_mean_nothing_here_are_refused_with_a_reason() {
        let args = |extra: &[&str]| -> Vec<OsString> { REQUIRED.iter().chain(extra).map(OsString::from).collect() };
        let refusal = refused_flag(&args(&["--model=libm.so"])).unwrap();
        assert_eq!(
            refusal,
            "--model is a qnn-net-run flag lpai-net-run does not take: lpai-net-run runs offline-prepared context \
             binaries only: pass --retrieve_context"
        );
        assert!(refused_flag(&args(&["--shared_buffer"])).unwrap().starts_with("--shared_buffer is a qnn-net-run"));
        assert_eq!(refused_flag(&args(&["--direct_mode", "model"])), None);
        assert_eq!(refused_flag(&args(&["--op_packages=libA.so:ProvideA"])), None, "op packages are registered");
    }

    #[test]
    fn chart_is_a_command_of_its_own() {
        let Invocation::Chart(chart) = parse_invocation(["lpai-net-run", "chart", "runs/kws"]) else {
            panic!("expected chart");
        };
        assert_eq!(chart.dir, PathBuf::from("runs/kws"));
        assert!(ChartOptions::try_parse_from(["lpai-net-run chart"]).is_err(), "DIR is required");
    }
}
