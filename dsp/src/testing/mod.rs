//! Self-tests of the real runtime against a fake LPAI backend and libQnnSystem (see [`fake`]), and against the
//! contract model of libQnnLpai and its system library (`tests/contract-model`).
//!
//! Only in host tests and in the Hexagon self-test executable (feature `self-test`), never in the skel. The fake
//! is part of this module (the tests register [`fake::BUILTINS`] themselves); the contract model is not: the
//! program that runs the self-tests registers it as built-in libraries under [`CONTRACT_LPAI_LIBRARY`] and
//! [`CONTRACT_SYSTEM_LIBRARY`] before [`run_all`] (the Hexagon self-test program `tests/dsp-selftest`; on the host,
//! each `#[test]` of a `self_tests!` block, from this crate's dev-dependency), and the tests that run it fail,
//! saying so, when it is not ([`contract_model_registered`]).

/// Loads the fake's one-graph binary on the fake LPAI backend with default options, binding `$context` (the
/// arena and libraries it borrows live in the caller's scope, hidden by macro hygiene).
macro_rules! load_one_graph {
    ($context:ident) => {
        let bytes = expect_some!(super::binary(&super::fake::binary::ONE_GRAPH));
        let mut buffer = [0u8; super::ARENA_BYTES];
        let arena = crate::runtime::Arena::new(&mut buffer);
        let libraries = expect_ok!(super::fake_libraries(&crate::runtime::BackendOptions::default()));
        #[allow(unused_mut)]
        let mut $context = expect_ok!(super::load_copy(&libraries, &arena, &bytes, Default::default()));
    };
}

pub mod contract_single;
pub mod fake;
pub mod fuzz_calls;

pub(crate) mod abi;
pub(crate) mod arena;
pub(crate) mod asynchronous;
pub(crate) mod contexts;
pub(crate) mod contract;
pub(crate) mod conversion;
pub(crate) mod embedding;
pub(crate) mod execution;
pub(crate) mod failed_library;
pub(crate) mod handles;
pub(crate) mod island;
pub(crate) mod op_packages;
pub(crate) mod performance;
pub(crate) mod persistent_binary;
pub(crate) mod platform;
pub(crate) mod record_metadata;
pub(crate) mod refusals;
pub(crate) mod registry;
pub(crate) mod sequence;
#[cfg(test)]
mod skel_concurrency;
pub(crate) mod skel_end_to_end;
pub mod skel_fuzz;

pub use contract::contract_record;

use crate::platform::libraries::find_builtin_library;
use crate::selftest::{Failure, SelfTest, Summary};
use core::ffi::CStr;

/// Text built with `core::fmt`, for test code's own lines and paths (the runtime's messages are records with ids;
/// tests say theirs as [`crate::platform::Message::Text`]).
pub(crate) fn text(arguments: core::fmt::Arguments<'_>) -> heapless::String<512> {
    let mut text = heapless::String::new();
    let _ = core::fmt::write(&mut text, arguments);
    text
}

/// The name the contract model of libQnnLpai is registered under (`lpai_contract_model::LPAI_LIBRARY_NAME`).
pub const CONTRACT_LPAI_LIBRARY: &CStr = c"libQnnLpaiContract.so";
/// The name the contract model's system library is registered under (`lpai_contract_model::SYSTEM_LIBRARY_NAME`).
pub const CONTRACT_SYSTEM_LIBRARY: &CStr = c"libQnnSystemContract.so";

/// Whether the program registered the contract model of libQnnLpai and its system library as built-in libraries
/// ([`CONTRACT_LPAI_LIBRARY`], [`CONTRACT_SYSTEM_LIBRARY`]), as the tests that run it need.
pub fn contract_model_registered() -> bool {
    [CONTRACT_LPAI_LIBRARY, CONTRACT_SYSTEM_LIBRARY].iter().all(|name| find_builtin_library(name.to_bytes()).is_some())
}

/// Every module's self-tests, in a fixed order.
pub fn all() -> impl Iterator<Item = &'static SelfTest> {
    [
        abi::SELF_TESTS,
        platform::SELF_TESTS,
        registry::SELF_TESTS,
        handles::SELF_TESTS,
        arena::SELF_TESTS,
        skel_fuzz::SELF_TESTS,
        fuzz_calls::SELF_TESTS,
        skel_end_to_end::SELF_TESTS,
        contract::SELF_TESTS,
        conversion::SELF_TESTS,
        sequence::SELF_TESTS,
        execution::SELF_TESTS,
        island::SELF_TESTS,
        refusals::SELF_TESTS,
        contexts::SELF_TESTS,
        performance::SELF_TESTS,
        persistent_binary::SELF_TESTS,
        record_metadata::SELF_TESTS,
        embedding::SELF_TESTS,
        asynchronous::SELF_TESTS,
        op_packages::SELF_TESTS,
        failed_library::SELF_TESTS,
    ]
    .into_iter()
    .flatten()
}

/// Runs every self-test, reporting each result through `report`. The program registers the contract model first
/// (see the module documentation).
pub fn run_all(mut report: impl FnMut(&SelfTest, Result<(), Failure>)) -> Summary {
    let mut summary = Summary::default();
    for test in all() {
        let result = (test.run)();
        match result {
            Ok(()) => summary.passed += 1,
            Err(_) => summary.failed += 1,
        }
        report(test, result);
    }
    summary
}

use crate::platform::VendorCalls;
use crate::runtime::{Arena, Backend, BackendOptions, Binary, Context, ContextOptions, Libraries, LoadRequest};
use crate::runtime::{RuntimeError, SystemLibrary};

/// Bytes of the arena most tests load into.
pub(crate) const ARENA_BYTES: usize = 4096;
/// Bytes of the fake binary most tests load.
pub(crate) const BINARY_BYTES: usize = 200;

/// A backend on the fake LPAI provider.
pub(crate) fn lpai_backend(options: &BackendOptions) -> Result<Backend, RuntimeError> {
    // SAFETY: the fake's provider function and everything it returns are statics of this program.
    unsafe { Backend::from_providers(fake::lpai_providers, options) }
}

/// The fake libQnnSystem.
pub(crate) fn system_library() -> Result<SystemLibrary, RuntimeError> {
    // SAFETY: as in `lpai_backend`.
    unsafe { SystemLibrary::from_providers(fake::system_providers) }
}

/// The fake LPAI backend with `options` and the fake libQnnSystem.
pub(crate) fn fake_libraries(options: &BackendOptions) -> Result<Libraries, RuntimeError> {
    Ok(Libraries::new(lpai_backend(options)?, Some(system_library()?)))
}

/// Loads a copy of `bytes` into `arena` on `libraries` with `options`, its metadata from libQnnSystem.
pub(crate) fn load_copy<'a>(
    libraries: &'a Libraries,
    arena: &Arena<'a>,
    bytes: &[u8],
    options: ContextOptions<'_>,
) -> Result<Context<'a>, RuntimeError> {
    Context::load(&VendorCalls::lock(), libraries, arena, &LoadRequest::new(Binary::Copy(bytes)).with_options(options))
}

/// Loads `binary`, kept by the caller, on `libraries` with `options`: in place when aligned, else copied into `arena`.
pub(crate) fn load_in_place<'a>(
    libraries: &'a Libraries,
    arena: &Arena<'a>,
    binary: crate::runtime::PersistentBinary<'a>,
    options: ContextOptions<'_>,
) -> Result<Context<'a>, RuntimeError> {
    Context::load(
        &VendorCalls::lock(),
        libraries,
        arena,
        &LoadRequest::new(Binary::InPlace(binary)).with_options(options),
    )
}

/// A fake binary of [`BINARY_BYTES`] holding `spec`.
pub(crate) fn binary(spec: &fake::binary::BinarySpec) -> Option<[u8; BINARY_BYTES]> {
    let mut bytes = [0u8; BINARY_BYTES];
    fake::binary::write_binary(spec, &mut bytes).then_some(bytes)
}

/// Little-endian float32 bytes back into values.
pub(crate) fn floats<const N: usize>(bytes: &[u8]) -> [f32; N] {
    core::array::from_fn(|index| {
        let four = bytes.get(index * 4..index * 4 + 4).unwrap_or(&[0xFF; 4]);
        f32::from_le_bytes([four[0], four[1], four[2], four[3]])
    })
}

/// The host's test program: the contract model of libQnnLpai from this crate's dev-dependency, registered by every
/// `#[test]` of a `self_tests!` block before it runs its self-test.
#[cfg(test)]
pub(crate) mod host {
    use crate::platform::libraries::{register_builtin_libraries, BuiltinLibrary, BuiltinSymbol};

    /// The contract model of libQnnLpai and its system library as built-in libraries.
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

    /// Registers [`CONTRACT_MODEL`] (again: fine).
    pub(crate) fn register_contract_model() {
        if let Err(refused) = register_builtin_libraries(&CONTRACT_MODEL) {
            panic!("the contract model cannot be registered: {refused:?}");
        }
    }

    #[test]
    fn the_contract_model_s_names_are_the_ones_the_tests_use() {
        assert_eq!(super::CONTRACT_LPAI_LIBRARY, lpai_contract_model::LPAI_LIBRARY_NAME);
        assert_eq!(super::CONTRACT_SYSTEM_LIBRARY, lpai_contract_model::SYSTEM_LIBRARY_NAME);
    }

    #[test]
    fn every_self_test_sees_the_contract_model_registered() {
        register_contract_model();
        assert!(super::contract_model_registered());
    }
}
