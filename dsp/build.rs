//! Turns `HW_VER` (the LPAI hardware version the runtime asks for by default; v5, v5_1, v6 or v7, default v6)
//! into a constant in `$OUT_DIR/build_config.rs`, and compiles the committed corpus of the `skel_invoke` and
//! `codec` fuzz targets (`fuzz/corpus/<target>/`) into `$OUT_DIR/fuzz_corpus.rs`, the table the self-tests replay
//! (`src/testing/fuzz_calls.rs`; the Hexagon self-test executable replays it too). Only the self-tests include
//! that table: a skel build generates it and never uses it.

use std::fmt::Write as _;
use std::path::Path;

/// Writes `constant`, the files of `directory` (sorted by name) as `(name, bytes)`, into `out`.
fn corpus_table(out: &mut String, constant: &str, directory: &Path) {
    println!("cargo:rerun-if-changed={}", directory.display());
    let mut files: Vec<_> = std::fs::read_dir(directory)
        .map(|entries| entries.filter_map(Result::ok).map(|entry| entry.path()).filter(|path| path.is_file()).collect())
        .unwrap_or_default();
    files.sort();
    let _ = writeln!(out, "/// `{}`: file name and bytes.", directory.display());
    let _ = writeln!(out, "pub(super) const {constant}: &[(&str, &[u8])] = &[");
    for file in files {
        let name = file.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let _ = writeln!(out, "    ({name:?}, include_bytes!({:?})),", file.display().to_string());
    }
    let _ = writeln!(out, "];");
}

/// The newest Hexagon version among the target's features (`v60` .. `v81`, all those up to the CPU's), 0 when the
/// target is not Hexagon.
fn hexagon_version() -> u16 {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("hexagon") {
        return 0;
    }
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    features.split(',').filter_map(|feature| feature.strip_prefix('v')?.parse::<u16>().ok()).max().unwrap_or(0)
}

fn main() {
    println!("cargo:rerun-if-env-changed=HW_VER");
    let requested = std::env::var("HW_VER").unwrap_or_else(|_| "v6".into());
    let name = requested.trim().to_ascii_lowercase();
    let value: u32 = match name.trim_start_matches('v') {
        "5" => 5,
        "5_1" | "5.1" => 0x0001_0005,
        "6" => 6,
        "7" => 7,
        _ => {
            eprintln!("HW_VER={requested}: the LPAI hardware version must be v5, v5_1, v6 or v7");
            std::process::exit(1);
        }
    };
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let code = format!(
        "/// LPAI hardware version asked for unless the caller says otherwise (`HW_VER` at build time).\n\
         pub const DEFAULT_LPAI_HW_VERSION: u32 = {value:#x};\n\
         /// The same, as written in `HW_VER`.\n\
         pub const DEFAULT_LPAI_HW_VERSION_NAME: &str = \"v{}\";\n\
         /// The Hexagon version this build's code is for (`-C target-cpu=hexagonvNN`: 81 for v81), 0 off Hexagon.\n\
         pub const HEX_VERSION: u16 = {};\n",
        name.trim_start_matches('v'),
        hexagon_version()
    );
    std::fs::write(out.join("build_config.rs"), code).expect("OUT_DIR is writable");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    let mut table = String::new();
    corpus_table(&mut table, "SKEL_INVOKE", &corpus.join("skel_invoke"));
    corpus_table(&mut table, "CODEC", &corpus.join("codec"));
    std::fs::write(out.join("fuzz_corpus.rs"), table).expect("OUT_DIR is writable");
}
