//! `lpai-vd-sign FILE...`: adds the virtual device's test signature to each file (`lpai_vd_adsprpc::sign`), as
//! elfsigner.py signs for a device; `scripts/virtual-device.sh --sign` runs it.

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    let files: Vec<std::path::PathBuf> = std::env::args_os().skip(1).map(Into::into).collect();
    if files.is_empty() {
        eprintln!("usage: lpai-vd-sign FILE...");
        return std::process::ExitCode::from(2);
    }
    for file in &files {
        match lpai_vd_adsprpc::sign::sign(file) {
            Ok(true) => println!("lpai-vd-sign: {}: signed (virtual device test signature)", file.display()),
            Ok(false) => println!("lpai-vd-sign: {}: signed already", file.display()),
            Err(error) => {
                eprintln!("lpai-vd-sign: {}: {error}", file.display());
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    std::process::ExitCode::SUCCESS
}
