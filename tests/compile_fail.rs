//! Code that must not compile: each `tests/compile-fail/*.rs` case with the errors it gives (its `.stderr`).

#[test]
fn the_compile_fail_cases_do_not_compile() {
    trybuild::TestCases::new().compile_fail("tests/compile-fail/*.rs");
}
