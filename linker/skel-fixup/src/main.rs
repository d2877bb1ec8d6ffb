//! `lpai-skel-fixup LIBRARY.so RUNTIME-SYMBOLS.txt [--exports PREFIX]`: adds DT_HEXAGON_VER in place, then checks
//! the library (the skel, or another PD library such as the contract model, whose exports start with PREFIX; the
//! skel's `lpai_direct_` by default).

use anyhow::{Context, Result};
use std::path::PathBuf;

fn main() -> Result<()> {
    let usage = "usage: lpai-skel-fixup LIBRARY.so RUNTIME-SYMBOLS.txt [--exports PREFIX]";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (skel, symbols, prefix) = match args.as_slice() {
        [skel, symbols] => (PathBuf::from(skel), PathBuf::from(symbols), "lpai_direct_"),
        [skel, symbols, flag, prefix] if flag == "--exports" => {
            (PathBuf::from(skel), PathBuf::from(symbols), prefix.as_str())
        }
        _ => anyhow::bail!(usage),
    };
    let mut bytes = std::fs::read(&skel).with_context(|| format!("reading {}", skel.display()))?;
    let allowed = lpai_skel_fixup::parse_symbol_list(
        &std::fs::read_to_string(&symbols).with_context(|| format!("reading {}", symbols.display()))?,
    );
    lpai_skel_fixup::fix_up(&mut bytes).with_context(|| format!("fixing up {}", skel.display()))?;
    let report =
        lpai_skel_fixup::check(&bytes, prefix, &allowed).with_context(|| format!("checking {}", skel.display()))?;
    let partial = skel.with_extension("so.partial");
    std::fs::write(&partial, &bytes).with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, &skel).with_context(|| format!("replacing {}", skel.display()))?;
    println!("{}: exports {:?}; needs from the PD {:?}", skel.display(), report.exported, report.undefined);
    Ok(())
}
