//! `lpai-vd-exec PROGRAM [ARGS...]`: runs PROGRAM with the file calls Debian's proot (5.1) does not translate
//! answering ENOSYS, so that glibc, Rust's std and qemu fall back to the older calls it does translate: statx,
//! renameat2, openat2 and faccessat2. A seccomp filter (no privileges needed; every child inherits it); the virtual
//! device runs proot under it, else a guest's `statx` of a device path would look at the host's.

#![forbid(unsafe_code)]

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn main() {
    use std::os::unix::process::CommandExt;
    let arguments: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let Some((program, rest)) = arguments.split_first() else {
        eprintln!("usage: lpai-vd-exec PROGRAM [ARGS...]");
        std::process::exit(2);
    };
    if let Err(error) = lpai_vd_adsprpc::seccomp::refuse_untranslated_calls() {
        eprintln!("lpai-vd-exec: cannot install the seccomp filter: {error}");
        std::process::exit(2);
    }
    let error = std::process::Command::new(program).args(rest).exec();
    eprintln!("lpai-vd-exec: cannot run {}: {error}", program.to_string_lossy());
    std::process::exit(127);
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn main() {
    eprintln!("lpai-vd-exec runs on x86_64 Linux, where the virtual device runs");
    std::process::exit(2);
}
