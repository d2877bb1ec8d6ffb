//! lpai-direct on the DSP: the skel's entry points, the QNN runtime, the embedding API for firmware
//! ([`embed`]), the platform layer and the self-tests.
//!
//! Built three ways: the skel shared object for the aDSP (QuRT platform), a static self-test executable for
//! qemu-hexagon (Linux user-mode platform), and a host `cdylib`/`rlib` with the same entry points. Test code (the
//! self-tests and the fake LPAI backend) is compiled only with the `self-test` feature or under `cargo test`.
//!
//! The book says how the runtime works in `docs/src/design/runtime.md`, and how firmware embeds it in
//! `docs/src/firmware.md`.
#![no_std]
#![cfg_attr(target_arch = "hexagon", feature(asm_experimental_arch))]

#[cfg(not(target_arch = "hexagon"))]
extern crate std;

pub mod audio;
pub mod build_config;
pub mod embed;
pub mod entry;
pub mod platform;
pub mod runtime;
#[cfg(any(test, feature = "self-test"))]
pub mod selftest;
mod skel;
#[cfg(any(test, feature = "self-test"))]
pub mod testing;

/// Without the `self-test` feature, self-test declarations compile to nothing: no test code in a device build.
#[cfg(not(any(test, feature = "self-test")))]
#[macro_export]
macro_rules! self_tests {
    ($($anything:tt)*) => {};
}

#[cfg(all(target_arch = "hexagon", not(feature = "linux-user")))]
lpai_direct::pd_library_panic_handler!();
