//! `lpai-skel-fixup SKEL.so RUNTIME-SYMBOLS.txt`: adds DT_HEXAGON_VER in place, then checks the skel.

use anyhow::{Context, Result};
use std::path::PathBuf;

fn main() -> Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(skel), Some(symbols)) = (args.next().map(PathBuf::from), args.next().map(PathBuf::from)) else {
        anyhow::bail!("usage: lpai-skel-fixup SKEL.so RUNTIME-SYMBOLS.txt");
    };
    let mut bytes = std::fs::read(&skel).with_context(|| format!("reading {}", skel.display()))?;
    let allowed = lpai_skel_fixup::parse_symbol_list(
        &std::fs::read_to_string(&symbols).with_context(|| format!("reading {}", symbols.display()))?,
    );
    lpai_skel_fixup::fix_up(&mut bytes).with_context(|| format!("fixing up {}", skel.display()))?;
    let report = lpai_skel_fixup::check(&bytes, "lpai_direct_", &allowed)
        .with_context(|| format!("checking {}", skel.display()))?;
    let partial = skel.with_extension("so.partial");
    std::fs::write(&partial, &bytes).with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, &skel).with_context(|| format!("replacing {}", skel.display()))?;
    println!("{}: exports {:?}; needs from the PD {:?}", skel.display(), report.exported, report.undefined);
    Ok(())
}
