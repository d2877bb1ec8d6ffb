//! `lpai-stack-check SKEL.so [options]`: prints the worst-case stack depth of the skel's entry points.
//!
//! Options: `--limit BYTES` (default 8192; exceeding it exits with status 1), `--report-only` (print the verdict
//! but exit 0 when over the limit; analysis errors still fail), `--entry NAME` (repeatable; default the three
//! exported entry points; `--capi-module`: the audio module's two entry points and the six functions of its
//! table instead), `--objdump PROGRAM`, `--mcpu CPU`, `--shipped SHIPPED.so` (say whether its `.text` is
//! the same code), `--summary FILE` (write a one-line JSON summary).

use anyhow::{bail, Context, Result};
use lpai_skel_fixup::stack;
use std::path::PathBuf;

const USAGE: &str = "usage: lpai-stack-check SKEL.so [--limit BYTES] [--report-only] [--entry NAME]... \
                     [--capi-module] [--objdump PROGRAM] [--mcpu CPU] [--shipped SHIPPED.so] [--summary FILE]";

struct Arguments {
    skel: PathBuf,
    limit: u64,
    report_only: bool,
    options: stack::Options,
    shipped: Option<PathBuf>,
    summary: Option<PathBuf>,
}

fn arguments() -> Result<Arguments> {
    let mut skel = None;
    let mut limit = stack::DEFAULT_LIMIT;
    let mut report_only = false;
    let mut options = stack::Options::default();
    let mut entry_points = Vec::new();
    let (mut shipped, mut summary) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(argument) = args.next() {
        let mut value = || args.next().with_context(|| format!("{argument} needs a value\n{USAGE}"));
        match argument.as_str() {
            "--limit" => limit = value()?.parse().context("--limit takes a number of bytes")?,
            "--report-only" => report_only = true,
            "--entry" => entry_points.push(value()?),
            "--capi-module" => entry_points.extend(stack::CAPI_ENTRY_POINTS.map(String::from)),
            "--objdump" => options.objdump = value()?,
            "--mcpu" => options.mcpu = value()?,
            "--shipped" => shipped = Some(PathBuf::from(value()?)),
            "--summary" => summary = Some(PathBuf::from(value()?)),
            other if other.starts_with('-') => bail!("unknown option {other}\n{USAGE}"),
            other if skel.is_none() => skel = Some(PathBuf::from(other)),
            other => bail!("one skel at a time: {other} is a second one\n{USAGE}"),
        }
    }
    if !entry_points.is_empty() {
        options.entry_points = entry_points;
    }
    let skel = skel.context(USAGE)?;
    Ok(Arguments { skel, limit, report_only, options, shipped, summary })
}

fn main() -> Result<()> {
    let arguments = arguments()?;
    let skel = &arguments.skel;
    let analysis = stack::analyse(skel, &arguments.options)?;
    println!(
        "{}: {} functions, {} with a .stack_sizes record, {} frameless helpers without one",
        skel.display(),
        analysis.functions,
        analysis.recorded,
        analysis.frameless_without_record.len()
    );
    for (name, reason) in &analysis.unanalysable {
        println!("note: no entry point reaches {}, which cannot be analysed: {reason}", stack::demangle(name));
    }
    if let Some(shipped) = &arguments.shipped {
        let read = |path: &PathBuf| std::fs::read(path).with_context(|| format!("reading {}", path.display()));
        let (ours, theirs, same) = stack::compare_text(&read(skel)?, &read(shipped)?)
            .with_context(|| format!("comparing the .text of {} and {}", skel.display(), shipped.display()))?;
        if same {
            println!("same .text as {} ({ours} bytes): these are the shipped code's figures", shipped.display());
        } else {
            println!(
                "WARNING: .text differs from {} ({ours} vs {theirs} bytes): these figures are not the shipped code's",
                shipped.display()
            );
        }
    }
    for entry_point in &analysis.entry_points {
        print!("{}", entry_point.describe(arguments.limit));
    }
    let over: Vec<&str> =
        analysis.entry_points.iter().filter(|e| e.worst.bytes > arguments.limit).map(|e| e.name.as_str()).collect();
    let figures: Vec<String> = analysis.entry_points.iter().map(|e| format!("{} {}", e.name, e.worst.bytes)).collect();
    let verdict = if over.is_empty() { "ok".to_string() } else { format!("OVER: {}", over.join(", ")) };
    println!("stack-check: {} bytes (limit {}): {verdict}", figures.join(", "), arguments.limit);
    if let Some(summary) = &arguments.summary {
        let figures: Vec<String> =
            analysis.entry_points.iter().map(|e| format!("\"{}\":{}", e.name, e.worst.bytes)).collect();
        let line = format!(
            "{{\"limit\":{},\"within_limit\":{},\"worst_bytes\":{{{}}}}}\n",
            arguments.limit,
            over.is_empty(),
            figures.join(",")
        );
        std::fs::write(summary, line).with_context(|| format!("writing {}", summary.display()))?;
    }
    if !over.is_empty() && !arguments.report_only {
        bail!("over the stack limit of {} bytes in {}: {}", arguments.limit, skel.display(), over.join(", "));
    }
    Ok(())
}
