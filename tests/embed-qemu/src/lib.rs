//! The embedding API's C library for the qemu-hexagon programs (`liblpai_embed_qemu.a`): every
//! `lpai_direct_embed_*` function of `lpai-direct-embed` (built with `qemu-example`, the Linux user-mode platform),
//! the contract model of libQnnLpai and its system library (`tests/contract-model`), and
//! `lpai_embed_qemu_register_contract_model`, which registers the model as built-in libraries, as firmware
//! registers a libQnnLpai it links into its image. A C program calls it before `lpai_direct_embed_create` (see
//! `dsp/examples/c/sensor_loop.c`, compiled with `-DLPAI_DIRECT_EMBED_QEMU`). The shipped C library has no contract
//! model and registers nothing. On other targets than Hexagon this library is empty.
#![cfg_attr(target_arch = "hexagon", no_std)]

/// The C functions of the embedding API: linked in whole, so the static library defines them all.
#[cfg(target_arch = "hexagon")]
pub use lpai_direct_embed;

#[cfg(target_arch = "hexagon")]
pub use contract::lpai_embed_qemu_register_contract_model;

#[cfg(target_arch = "hexagon")]
mod contract {
    use lpai_direct_skel::platform::libraries::BuiltinSymbol;
    use lpai_direct_skel::platform::libraries::{register_builtin_libraries, BuiltinLibrary, BuiltinRefused};

    /// The contract model of libQnnLpai and its system library, linked in as built-in libraries.
    static CONTRACT_MODEL: [BuiltinLibrary; 2] = [
        BuiltinLibrary {
            name: lpai_contract_model::LPAI_LIBRARY_NAME,
            symbols: &[BuiltinSymbol::backend_providers(lpai_contract_model::lpai_providers)],
        },
        BuiltinLibrary {
            name: lpai_contract_model::SYSTEM_LIBRARY_NAME,
            symbols: &[BuiltinSymbol::system_providers(lpai_contract_model::system_providers)],
        },
    ];

    /// `int lpai_embed_qemu_register_contract_model(void)`: registers the contract model as the built-in libraries
    /// `libQnnLpaiContract.so` and `libQnnSystemContract.so`. Answers 0 (also when they are registered already),
    /// 1 when another library holds one of the names, 2 when the table of built-in libraries is full.
    #[no_mangle]
    pub extern "C" fn lpai_embed_qemu_register_contract_model() -> i32 {
        match register_builtin_libraries(&CONTRACT_MODEL) {
            Ok(()) => 0,
            Err(BuiltinRefused::NameTaken(_)) => 1,
            Err(BuiltinRefused::Full) => 2,
        }
    }
}
