//! Misuses of the safe API that could corrupt memory or break the vendor-calls lock, each kept from compiling
//! (`tests/compile-fail/*.rs`, with the compiler's refusal beside each in a `.stderr` file).

#[test]
fn unsound_uses_do_not_compile() {
    trybuild::TestCases::new().compile_fail("tests/compile-fail/*.rs");
}
