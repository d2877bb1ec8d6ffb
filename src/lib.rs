//! Shared `no_std` core of lpai-direct: QNN C ABI declarations, FastRPC wire types and error codes.
//!
//! The stub, the skel, the embedding API and the audio module all build on it. How the crates fit together is the
//! book's `docs/src/design/architecture.md` (build it with `bash scripts/book.sh`, or read the markdown).
#![no_std]
#![cfg_attr(target_arch = "hexagon", feature(asm_experimental_arch))]
#![feature(core_float_math)]

/// AEE error codes and their names (one table, in the codec crate that answers with them).
pub use lpai_direct_idl::aee;
pub mod bytes;
pub mod capi;
pub mod codec;
pub mod compiler_helpers;
pub mod farf;
pub mod job;
pub mod layout;
pub mod message;
pub mod metadata;
pub mod op_package;
pub mod qnn;
pub mod quantize;
pub mod sha256;
pub mod shell_frame;
pub mod temporary;
pub mod version;
pub mod wire;

/// Defines the panic handler of a PD library (the skel, the contract model's libraries): no panic may be reachable
/// on the aDSP, where it would take the whole PD down, so the handler calls `lpai_direct_panic_is_reachable`, a
/// symbol no PD defines, and the post-link check (`lpai-skel-fixup`) refuses any library that still refers to it.
#[macro_export]
macro_rules! pd_library_panic_handler {
    () => {
        #[panic_handler]
        fn panic(_info: &core::panic::PanicInfo) -> ! {
            extern "C" {
                fn lpai_direct_panic_is_reachable() -> !;
            }
            // SAFETY: never resolves; its presence in the library fails the build.
            unsafe { lpai_direct_panic_is_reachable() }
        }
    };
}
