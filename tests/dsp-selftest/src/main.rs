//! The Hexagon self-test program: registers the contract model of libQnnLpai and its system library as built-in
//! libraries (as firmware registers a libQnnLpai it links into its image), then runs every lpai-direct-dsp
//! self-test (`lpai_direct_skel::testing::run_all`) under qemu-hexagon and prints one line per test and
//! `N passed, M failed`; the exit status is 1 when any failed (or the contract model could not be registered).
//! The fake backend's libraries are the tests' own: they register them themselves.
#![cfg_attr(target_arch = "hexagon", no_std, no_main)]

#[cfg(target_arch = "hexagon")]
mod hexagon {
    use core::fmt::Write;
    use lpai_direct_skel::platform::libraries::{register_builtin_libraries, BuiltinLibrary, BuiltinSymbol};
    use lpai_direct_skel::platform::linux_user::{exit, write_all};
    use lpai_direct_skel::testing;

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

    fn print(args: core::fmt::Arguments<'_>) {
        let mut line = heapless::String::<512>::new();
        let _ = line.write_fmt(args);
        write_all(1, line.as_bytes());
    }

    #[no_mangle]
    extern "C" fn lpai_program_main() -> ! {
        if let Err(refused) = register_builtin_libraries(&CONTRACT_MODEL) {
            print(format_args!("the contract model cannot be registered: {refused:?}\n"));
            exit(1)
        }
        let summary = testing::run_all(|test, result| match result {
            Ok(()) => print(format_args!("test {} ... ok\n", test.name)),
            Err(failure) => print(format_args!("test {} ... FAILED\n    {failure}\n", test.name)),
        });
        print(format_args!("{} passed, {} failed\n", summary.passed, summary.failed));
        exit(if summary.failed == 0 { 0 } else { 1 })
    }
}

/// Elsewhere there is nothing to run: the self-test program is a static Hexagon executable (the host runs the same
/// self-tests under `cargo test -p lpai-direct-dsp`).
#[cfg(not(target_arch = "hexagon"))]
fn main() {
    eprintln!(
        "lpai-dsp-selftest runs only on Hexagon under qemu-hexagon (the host's are `cargo test -p lpai-direct-dsp`)"
    );
    std::process::exit(2);
}
