//! Turns `HW_VER` (the LPAI hardware version the runtime asks for by default; v5, v5_1, v6 or v7, default v6)
//! into a constant in `$OUT_DIR/build_config.rs`.

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
         pub const DEFAULT_LPAI_HW_VERSION_NAME: &str = \"v{}\";\n",
        name.trim_start_matches('v')
    );
    std::fs::write(out.join("build_config.rs"), code).expect("OUT_DIR is writable");
}
