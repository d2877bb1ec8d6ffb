//! Prints the Markdown table of an IDL file's interface, for the `idl-table` block of docs/src/reference/interface.md:
//! `cargo run -q -p lpai-direct-idl --features reader --bin idl-table -- idl/lpai_direct.idl`.

use lpai_direct_idl::reader;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: idl-table <file.idl>");
        return ExitCode::FAILURE;
    };
    let source = match std::fs::read_to_string(&path) {
        Ok(source) => source,
        Err(error) => {
            eprintln!("{path}: {error}");
            return ExitCode::FAILURE;
        }
    };
    match reader::read(&source) {
        Ok(interface) => {
            print!("{}", reader::markdown_table(&interface));
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{path}:{}: {}", error.line, error.message);
            ExitCode::FAILURE
        }
    }
}
