//! `lpai-pd-shell` plays the part of the aDSP's user PD and its FastRPC shell, under qemu-hexagon: it loads the
//! SHIPPED skel `.so` with its own ELF loader (the aDSP loader's checks), gives it exactly the PD services of
//! `linker/dsp-runtime-symbols.txt` (timer, FARF log, `apps_std` files, `dlopen`, `malloc`, QuRT mutexes) on Linux
//! user-mode syscalls, plus the virtual hardware of `linker/virtual-hardware-symbols.txt` (`lpai_vd_enpu_cores`),
//! and serves FastRPC-like calls from the host over its stdin and stdout (`lpai_direct::shell_frame`). Test
//! infrastructure, not a device artifact.
//!
//! `lpai-pd-shell [--library-path DIR[:DIR...]] [--map FILE] [--restart-after N] [--require-signature]
//! [--no-lpai-engine] [--check | --capi] SKEL.so`. `--restart-after N`: the PD dies at its N-th event (an Open,
//! Invoke or Close frame, or an `apps_std_*` call) before doing anything for it, with one stderr line and exit 86
//! (`lpai_pd_shell::restart`). `--require-signature`: a signed PD, which refuses the skel and any `dlopen`ed library
//! without the test signature (`lpai_pd_shell::signature`). `--no-lpai-engine`: the virtual hardware reports 0 eNPU
//! cores (a DSP domain without LPAI). With `--check` it only loads the skel and says so (exit 0) or says why not
//! (exit 1); with `--capi` SKEL.so is an audio module (AudioReach CAPI) and the shell runs the session on stdin
//! through it, as an audio PD's framework would, writing the transcript to stdout (`lpai_pd_shell::capi_session`;
//! exit 0, or 3 for a malformed session); otherwise it writes the READY frame and answers request frames until stdin
//! ends (exit 0; a malformed frame: exit 3). Usage errors exit 2.
#![cfg_attr(target_arch = "hexagon", no_std, no_main)]

#[cfg(target_arch = "hexagon")]
mod pd;

/// Elsewhere there is no PD to play: the shell is a static Hexagon executable.
#[cfg(not(target_arch = "hexagon"))]
fn main() {
    eprintln!("lpai-pd-shell runs only on Hexagon under qemu-hexagon");
    std::process::exit(2);
}
