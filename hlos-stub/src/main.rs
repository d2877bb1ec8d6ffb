//! `lpai-net-run`: parses the options and hands them to the library.

use clap::Parser;

fn main() -> anyhow::Result<()> {
    let options = lpai_direct_hlos::cli::Options::parse();
    anyhow::bail!("lpai-net-run: running models arrives with the QNN runtime; options were {options:?}")
}
