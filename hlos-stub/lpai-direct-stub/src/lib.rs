//! The stub library of lpai-direct, `liblpai_direct_stub.so`: typed calls to the skel ([`stub::Stub`]), encoded
//! with the shared codec and carried by a transport (local, FastRPC, qemu), the diagnoses of a first contact with a
//! device, and the C API HLOS applications link ([`c_api`], declared in `include/lpai_direct_stub.h`). The tool
//! built on it, `lpai-net-run`, is a crate of its own, so nothing of it is linked into this library.
//!
//! Deploying to a device and calling the C API from an application are in the book's `docs/src/on-a-device.md`.

pub mod c_api;
pub mod stub;
