//! Shared `no_std` core of lpai-direct: QNN C ABI declarations, FastRPC wire types and error codes.
#![no_std]

/// AEE error codes and their names (one table, in the codec crate that answers with them).
pub use lpai_direct_idl::aee;
pub mod codec;
pub mod farf;
pub mod qnn;
pub mod shell_frame;
pub mod wire;
