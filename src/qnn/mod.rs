//! QNN C ABI declarations, hand-written from the documented facts and layout-checked for
//! x86_64 and Hexagon (see [`layout`]); a test (`crosscheck.rs`) compares them with bindgen's output of a
//! real SDK when one is available.
//!
//! Core types are re-exported here; LPAI extensions stay in [`lpai`] and error codes in
//! [`error`], whose names would otherwise clash.

#[macro_use]
mod macros;

pub mod config;
pub mod error;
pub mod interface;
pub mod layout;
pub mod lpai;
pub mod op_package;
pub mod profile;
pub mod provide;
pub mod system;
pub mod system_profile;
pub mod tensor;
pub mod types;

#[cfg(test)]
mod crosscheck;

pub use config::*;
pub use interface::*;
pub use profile::*;
pub use system::*;
pub use tensor::*;
pub use types::*;
