//! The platform-independent half of `lpai-pd-shell`, the virtual aDSP user PD of the tests: the PD's ELF loader
//! (validation, mapping plan, relocation) on byte slices, the command line, the PD service names, the event counter
//! of `--restart-after`, the test signature of `--require-signature`, bounded text, and the CAPI session driver.
//! Test infrastructure, not a device artifact; compiled and unit-tested on the host, used by the Hexagon executable.
#![cfg_attr(not(test), no_std)]

#[cfg(all(not(test), not(target_arch = "hexagon")))]
extern crate std;

pub mod arguments;
pub mod capi_session;
pub mod elf;
pub mod qtimer;
pub mod restart;
pub mod service_names;
#[cfg(not(target_arch = "hexagon"))]
pub mod session_writer;
pub mod signature;
pub mod text;
