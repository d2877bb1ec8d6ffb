//! `lpai_vd_enpu_cores`: the virtual DSP's hardware service (`linker/virtual-hardware-symbols.txt`), how many
//! eNPU (LPAI engine) cores this DSP has: 1, or 0 with `--no-lpai-engine` (a DSP domain without LPAI, like the
//! cDSP).

use core::ffi::c_uint;
use core::sync::atomic::{AtomicBool, Ordering};

/// Whether the shell runs with `--no-lpai-engine`.
static NO_LPAI_ENGINE: AtomicBool = AtomicBool::new(false);

/// Records `--no-lpai-engine` before any library is loaded.
pub fn configure_hardware(no_lpai_engine: bool) {
    NO_LPAI_ENGINE.store(no_lpai_engine, Ordering::Relaxed);
}

/// `unsigned int lpai_vd_enpu_cores(void)`.
pub extern "C" fn lpai_vd_enpu_cores() -> c_uint {
    match NO_LPAI_ENGINE.load(Ordering::Relaxed) {
        true => 0,
        false => 1,
    }
}
