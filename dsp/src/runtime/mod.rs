//! The QNN runtime: drives a QNN backend (libQnnLpai on the aDSP, libQnnHtp on a host) through the QNN C API.
//!
//! Ownership enforces QNN's teardown order: a [`Context`] borrows its [`Backend`], [`SystemLibrary`] (unless its
//! metadata came from a record, see [`Metadata`]) and [`Arena`], so it is freed before any of them, and the binary it
//! was created from outlives it.

pub mod arena;
pub mod backend;
pub mod context;
pub mod error;
pub mod graph;
pub mod metadata;
pub mod quantize;
pub mod system;
pub mod tensor;

pub use arena::Arena;
pub use backend::{Backend, BackendOptions};
pub use context::{BinarySource, Context, ContextOptions, Island, PersistentBinary};
pub use error::RuntimeError;
pub use graph::{Execution, Graph, GraphExecuteFn, GraphOptions, RawExecute};
pub use metadata::Metadata;
pub use system::SystemLibrary;
pub use tensor::{TensorInfo, TensorSize};
