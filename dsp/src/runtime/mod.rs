//! The QNN runtime: drives a QNN backend (libQnnLpai on the aDSP, libQnnHtp on a host) through the QNN C API.
//!
//! One way to load: a [`LoadRequest`] (the binary, where its metadata comes from, the options) carried out by an
//! [`Owner`] on a [`Footing`] (the [`Libraries`] and the arena memory). Ownership enforces QNN's teardown order: a
//! [`Context`] borrows its libraries, its [`Arena`] and an in-place binary, so it is freed before any of them.

pub mod arena;
pub mod backend;
pub mod completion;
pub mod context;
pub mod error;
pub mod graph;
pub mod libraries;
pub mod load;
pub mod metadata;
pub mod owner;
pub mod placement;
pub mod quantize;
pub mod system;
pub mod tensor;

pub use arena::Arena;
pub use backend::{Backend, BackendOptions};
pub use completion::{FrameNotify, FRAME_WAIT_MS, TEARDOWN_WAIT_MS};
pub use context::Context;
pub use error::RuntimeError;
pub use graph::{Execution, FrameState, Graph, GraphExecuteFn, GraphOptions, RawExecute};
pub use libraries::{Libraries, LibraryRole, OpenError};
pub use load::{Binary, ContextOptions, Island, LoadRequest, PersistentBinary};
pub use metadata::Metadata;
pub use owner::{AsyncGraph, Borrowed, Footing, Owned, Owner};
pub use system::SystemLibrary;
pub use tensor::{TensorInfo, TensorSize};
