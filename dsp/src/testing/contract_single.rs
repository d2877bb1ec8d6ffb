//! The `tests/fixtures/contract_single` fixture, built into the tests that run the contract model without files:
//! one graph `single`, `in` u8 [1,16] → `out` u8 [1,16], a running frame counter.

/// The LPCM context binary.
pub const BINARY: &[u8] = include_bytes!("../../../tests/fixtures/contract_single/contract_single.bin");

/// Each input line's native input (one frame) and its reference output.
pub const FRAMES: [(&[u8; 16], &[u8; 16]); 4] = [
    (
        include_bytes!("../../../tests/fixtures/contract_single/inputs/native/0_0.raw"),
        include_bytes!("../../../tests/fixtures/contract_single/reference/native/Result_0/out.raw"),
    ),
    (
        include_bytes!("../../../tests/fixtures/contract_single/inputs/native/1_0.raw"),
        include_bytes!("../../../tests/fixtures/contract_single/reference/native/Result_1/out.raw"),
    ),
    (
        include_bytes!("../../../tests/fixtures/contract_single/inputs/native/2_0.raw"),
        include_bytes!("../../../tests/fixtures/contract_single/reference/native/Result_2/out.raw"),
    ),
    (
        include_bytes!("../../../tests/fixtures/contract_single/inputs/native/3_0.raw"),
        include_bytes!("../../../tests/fixtures/contract_single/reference/native/Result_3/out.raw"),
    ),
];
