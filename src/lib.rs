//! Shared `no_std` core of lpai-direct: QNN C ABI declarations, FastRPC wire types and error codes.
#![no_std]

pub mod aee;
pub mod codec;
pub mod qnn;
pub mod wire;
