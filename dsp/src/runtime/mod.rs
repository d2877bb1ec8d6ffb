//! The QNN runtime: drives a QNN backend (libQnnLpai on the aDSP, libQnnHtp on a host) through the QNN C API.

pub mod arena;
pub mod quantize;
