//! Self-tests of the built-in library registry ([`crate::platform::libraries`]): registering a set again is fine, a
//! different library under a registered name is refused and the registered one still opens, a second set with new
//! names adds to the first, and a full table refuses. The registry is the program's own, shared with every other
//! test (the fake's set, the contract model the program registers): these tests add only names of their own, once,
//! and see a full table in a small table of their own, so they pass in any order with the others.

use crate::platform::libraries::{register_builtin_libraries, BuiltinLibrary, BuiltinRefused, BuiltinSymbol};
use crate::platform::libraries::{BuiltinTable, Library};
use crate::testing::{contract_model_registered, fake};
use lpai_direct::qnn::{INTERFACE_GET_PROVIDERS_SYMBOL, SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL};

/// The fake's backend name with the fake's system library behind it: an impostor, never registered.
static IMPOSTOR: [BuiltinLibrary; 1] = [BuiltinLibrary {
    name: c"libQnnLpaiFake.so",
    symbols: &[BuiltinSymbol::system_providers(fake::system_providers)],
}];

/// A name no other test registers, the fake backend behind it.
static EXTRA: [BuiltinLibrary; 1] = [BuiltinLibrary {
    name: c"libQnnLpaiRegistryTest.so",
    symbols: &[BuiltinSymbol::backend_providers(fake::lpai_providers)],
}];

/// Entries for the small tables of the tests (no symbols: they are only registered and found).
static LOCAL: [BuiltinLibrary; 4] = [
    BuiltinLibrary { name: c"libOne.so", symbols: &[] },
    BuiltinLibrary { name: c"libTwo.so", symbols: &[] },
    BuiltinLibrary { name: c"libThree.so", symbols: &[] },
    BuiltinLibrary { name: c"libOne.so", symbols: &[] },
];

/// Whether `name` opens as a library whose only provider function is the backend's (not the system library's).
fn opens_as_a_backend(name: &core::ffi::CStr) -> bool {
    let Ok(library) = Library::open(name) else { return false };
    library.symbol(INTERFACE_GET_PROVIDERS_SYMBOL).is_some()
        && library.symbol(SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL).is_none()
}

/// Whether `table` holds exactly the entry `library` under its name.
fn holds<const N: usize>(table: &BuiltinTable<N>, library: &'static BuiltinLibrary) -> bool {
    table.find(library.name.to_bytes()).is_some_and(|found| core::ptr::eq(found, library))
}

crate::self_tests! {
    fn registering_the_same_set_twice_is_fine() {
        check!(register_builtin_libraries(fake::BUILTINS).is_ok());
        check!(register_builtin_libraries(fake::BUILTINS).is_ok());
        check!(opens_as_a_backend(c"libQnnLpaiFake.so"));
        check!(opens_as_a_backend(c"/any/dir/libQnnLpaiFake.so"));
        let local = BuiltinTable::<4>::new();
        check!(local.register(LOCAL.get(..2).unwrap_or(&[])).is_ok());
        check!(local.register(LOCAL.get(..2).unwrap_or(&[])).is_ok());
        check!(holds(&local, &LOCAL[0]) && holds(&local, &LOCAL[1]) && local.find(b"libThree.so").is_none());
    }

    fn a_different_library_under_a_taken_name_is_refused_and_the_old_one_still_opens() {
        check!(register_builtin_libraries(fake::BUILTINS).is_ok());
        check!(register_builtin_libraries(&IMPOSTOR) == Err(BuiltinRefused::NameTaken(c"libQnnLpaiFake.so")));
        check!(opens_as_a_backend(c"libQnnLpaiFake.so"));
        let refusal = crate::message!(BuiltinRefused::NameTaken(c"libQnnLpaiFake.so"));
        check!(refusal.rendered().as_str() == "another built-in library is registered as libQnnLpaiFake.so");
        // In one set too: the entries before the refused one stay registered.
        let local = BuiltinTable::<4>::new();
        check!(local.register(&LOCAL) == Err(BuiltinRefused::NameTaken(c"libOne.so")));
        check!(holds(&local, &LOCAL[0]) && holds(&local, &LOCAL[1]) && holds(&local, &LOCAL[2]));
    }

    fn a_second_set_with_new_names_adds_to_the_first() {
        check!(register_builtin_libraries(fake::BUILTINS).is_ok());
        check!(register_builtin_libraries(&EXTRA).is_ok());
        check!(opens_as_a_backend(c"libQnnLpaiRegistryTest.so") && opens_as_a_backend(c"libQnnLpaiFake.so"));
        check!(Library::open(c"libQnnSystemFake.so").is_ok() && contract_model_registered());
        let local = BuiltinTable::<4>::new();
        check!(local.register(LOCAL.get(..1).unwrap_or(&[])).is_ok());
        check!(local.register(LOCAL.get(1..3).unwrap_or(&[])).is_ok());
        check!(holds(&local, &LOCAL[0]) && holds(&local, &LOCAL[1]) && holds(&local, &LOCAL[2]));
    }

    fn a_full_table_refuses_and_keeps_what_it_holds() {
        let local = BuiltinTable::<2>::new();
        check!(local.register(LOCAL.get(..3).unwrap_or(&[])) == Err(BuiltinRefused::Full));
        check!(holds(&local, &LOCAL[0]) && holds(&local, &LOCAL[1]) && local.find(b"libThree.so").is_none());
        // Full, and still: what is registered may be registered again, and a taken name is refused by name.
        check!(local.register(LOCAL.get(..2).unwrap_or(&[])).is_ok());
        check!(local.register(LOCAL.get(3..).unwrap_or(&[])) == Err(BuiltinRefused::NameTaken(c"libOne.so")));
        let refusal = crate::message!(BuiltinRefused::Full);
        check!(refusal.rendered().as_str() == "the table of built-in libraries is full (8)");
    }
}

/// Registrations racing on threads: of two libraries under one name exactly one is ever registered, whichever
/// thread's compare-exchange wins, and every thread sees the same winner.
#[cfg(test)]
#[test]
fn racing_registrations_of_one_name_meet() {
    static FIRST: [BuiltinLibrary; 2] =
        [BuiltinLibrary { name: c"libA.so", symbols: &[] }, BuiltinLibrary { name: c"libShared.so", symbols: &[] }];
    static SECOND: [BuiltinLibrary; 2] =
        [BuiltinLibrary { name: c"libB.so", symbols: &[] }, BuiltinLibrary { name: c"libShared.so", symbols: &[] }];
    let rounds = if cfg!(miri) { 10 } else { 200 };
    for _ in 0..rounds {
        let table = BuiltinTable::<4>::new();
        let outcomes = std::thread::scope(|scope| {
            let first = scope.spawn(|| table.register(&FIRST));
            let second = scope.spawn(|| table.register(&SECOND));
            [first.join().unwrap(), second.join().unwrap()]
        });
        let refused = BuiltinRefused::NameTaken(c"libShared.so");
        assert!(outcomes == [Ok(()), Err(refused)] || outcomes == [Err(refused), Ok(())], "{outcomes:?}");
        let winner = if outcomes[0].is_ok() { &FIRST[1] } else { &SECOND[1] };
        assert!(holds(&table, winner) && holds(&table, &FIRST[0]) && holds(&table, &SECOND[0]));
        assert!(table.find(b"libShared.so").is_some_and(|found| core::ptr::eq(found, winner)));
    }
}
