//! `lpai-skel-fixup LIBRARY.so SYMBOLS.txt[,SYMBOLS.txt...] [--exports PREFIX]`: adds DT_HEXAGON_VER in place, then
//! checks the library (the skel, or another PD library such as the contract model, whose exports start with PREFIX;
//! the skel's `lpai_direct_` by default). Its undefined symbols must all be in the symbol lists: one file, or several
//! separated by commas (`lpai_skel_fixup::command_line`).

use anyhow::{Context, Result};
use lpai_skel_fixup::command_line::{read_symbol_lists, Arguments};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arguments = Arguments::parse(&args)?;
    let skel = &arguments.library;
    let mut bytes = std::fs::read(skel).with_context(|| format!("reading {}", skel.display()))?;
    let allowed = read_symbol_lists(&arguments.symbol_lists)?;
    lpai_skel_fixup::fix_up(&mut bytes).with_context(|| format!("fixing up {}", skel.display()))?;
    let report = lpai_skel_fixup::check(&bytes, &arguments.export_prefix, &allowed)
        .with_context(|| format!("checking {}", skel.display()))?;
    let partial = skel.with_extension("so.partial");
    std::fs::write(&partial, &bytes).with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, skel).with_context(|| format!("replacing {}", skel.display()))?;
    println!("{}: exports {:?}; needs from the PD {:?}", skel.display(), report.exported, report.undefined);
    Ok(())
}
