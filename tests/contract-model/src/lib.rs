//! A model of the documented contract of the LPAI QNN backend (libQnnLpai) and of its system library — not the
//! vendor library.
//!
//! It answers like LPAI (backend id 12, core API 2.32, ALIGNMENT_REQ {128, 64}, REQUIRE_PERSISTENT_BINARY,
//! ENPU_CORE_NUM (1 on the host and the virtual aDSP) and ENPU_CORE_INFO (each core 256 MACs, version 6), scratch
//! and persistent graph memory, EARLY_TERMINATION), fails loudly on any breach of the rules in [`rules`] (the
//! rule's QNN error code and one log line `contract: rule <name>: ...`), and computes documented deterministic
//! outputs (see [Outputs](#outputs)) from its own context-binary format ([`format`], "LPCM").
//!
//! # Modelled behaviour beyond the rules
//!
//! - On a DSP without an LPAI engine, backendCreate fails with 4000 (QNN_BACKEND_ERROR_CANNOT_INITIALIZE) after
//!   the line `contract: no LPAI engine on this DSP (the virtual hardware reports 0 eNPU cores): backendCreate
//!   fails`. libQnnLpaiContract.so on Hexagon asks the virtual aDSP's hardware service `lpai_vd_enpu_cores`
//!   (`linker/virtual-hardware-symbols.txt`; the PD shell answers 0 under `--no-lpai-engine`, a DSP domain without
//!   LPAI such as the cDSP); the host build, and the Hexagon programs that link the model in statically, always
//!   have an engine (feature `virtual-hardware`, which only libQnnLpaiContract.so turns on).
//! - Binary versions: an LPCM binary of format version 2 says which core API and LPAI backend API it was made for;
//!   version 1 means the model's own (core API 2.32.0, [`lpai_direct::qnn::lpai::API_VERSION`]).
//!   contextCreateFromBinary refuses a binary whose core or backend API major differs from the model's, or whose
//!   minor is greater (made by a newer SDK): rule `binary-version` ([`rules::BINARY_VERSION`]), 5004
//!   (QNN_CONTEXT_ERROR_BINARY_VERSION), with the line `contract: rule binary-version: the binary is for backend API
//!   X.Y.Z (core API A.B.C), this backend is P.Q.R (core D.E.F)`. The system library describes any version and
//!   reports the binary's versions in BinaryInfo v3 (`coreApiVersion`, `backendApiVersion`).
//!
//! # Asynchronous execution
//!
//! graphExecuteAsync (entry \[22\], [`lpai_direct::qnn::GraphExecuteAsyncFn`]) checks exactly what graphExecute
//! checks, in the same order, with the same codes and log lines; a failed call answers the rule's code and never
//! calls the notify function. A call that passes queues the execution and answers 0. The execution then runs as
//! graphExecute would (the same outputs, counters and EARLY_TERMINATION every `early_every`-th call with the
//! outputs untouched), and once the outputs are written the notify function, unless null, is called with the
//! caller's parameter and `Qnn_NotifyStatus_t { error }` ([`lpai_direct::qnn::NotifyStatus`]): 0, or 6038
//! (QNN_GRAPH_ERROR_EARLY_TERMINATION).
//!
//! Timing:
//! - Host: one thread of the model, `lpai-contract-async`, runs the queued executions in FIFO order and calls each
//!   notify function on itself. It starts when an execution is queued and none runs, and ends when the queue is
//!   empty; backendFree joins it once it has ended, so a runtime may unload the model after its last backendFree. graphExecute and
//!   graphExecuteAsync share that queue: graphExecute on a graph with queued executions first waits for them.
//!   At most 16 executions wait at once; one more is refused by rule `async-queue`
//!   ([`rules::ASYNC_QUEUE`], 6025 QNN_GRAPH_ERROR_EXECUTION_ASYNC_FIFO_FULL). contextFree first waits for every
//!   execution queued on the context's graphs (so their buffers may be freed once it returns); backendFree needs
//!   its contexts freed first (rule `free-order`), so nothing of its is queued by then. An execution re-checks its
//!   graph's own rules when it runs (`live-handle`, `finalized-after-config`, `binary-persistent`,
//!   `persistent-state`): a breach then is logged on the model's thread and is the notified status. A call made
//!   from inside a notify function (on the model's thread) never waits: graphExecute there runs at once, and
//!   contextFree there frees the context at once (its still queued executions are then notified with 6001).
//! - Hexagon (the virtual aDSP's PD has no threads of the model): the execution runs inside the call, and the
//!   notify function is called on the caller's thread before the call returns 0.
//! - A backend without asynchronous execution, for tests of a runtime's fallback (host only): with
//!   `LPAI_CONTRACT_NO_EXECUTE_ASYNC=1` in the environment at backendCreate, graphExecuteAsync on that backend's
//!   graphs answers 1000 (QNN_GRAPH_ERROR_UNSUPPORTED_FEATURE, which is QNN_COMMON_ERROR_NOT_SUPPORTED) after
//!   the line `contract: graphExecuteAsync is not supported by this backend (LPAI_CONTRACT_NO_EXECUTE_ASYNC=1 at
//!   backendCreate)`, and never notifies.
//! - A backend that does not notify, for tests of a runtime's bounded waits (host only): with
//!   `LPAI_CONTRACT_WITHHOLD_NOTIFY=1` in the environment at backendCreate, that backend's executions run and write
//!   their outputs, but their notifications are kept until the program calls [`notify_withheld`] (never, for a
//!   backend that never notifies).
//!
//! # Op packages
//!
//! backendRegisterOpPackage (entry \[5\]) registers a custom op package with the backend until backendFree. It
//! opens the library (`dlopen`, RTLD_NOW: libc's on the host, the PD's on Hexagon, which finds a bare name in the
//! PD shell's `--library-path` directories, then beside the skel), finds the provider (`dlsym`), calls it, and
//! accepts interface 1.4 (calls `init`, then `getInfo`) and 2.0 (`create`, then `getInfo`); the infrastructure it
//! hands to `init` / `create` is an empty object the package must not use. It reads the package name and op names
//! with checked reads (names of 1..=31 printable ASCII bytes, at most [`MAX_PACKAGE_OPS`] ops) and keeps up to
//! [`MAX_PACKAGES`] packages per backend; backendFree releases them (`terminate` or `free`, then `dlclose`). The
//! target may be null or "" (the backend's own), "LPAI" or "DSP" ([`TARGETS`]); any other is refused. Each refusal
//! is one line `contract: rule op-package: PATH: <reason>` (the path as given) with QNN's code:
//!
//! | code | when |
//! | --- | --- |
//! | 4004 QNN_BACKEND_ERROR_INVALID_ARGUMENT | null path or provider (the line then names the call, not a path), a path over 1023 bytes, another target |
//! | 4005 OP_PACKAGE_NOT_FOUND | the path does not open as a library: `cannot be opened as a library (<dlerror>)` (host; the PD's loader logs its own reason) |
//! | 4006 OP_PACKAGE_IF_PROVIDER_NOT_FOUND | no such symbol: `has no interface provider NAME` |
//! | 4007 OP_PACKAGE_REGISTRATION_FAILED | the provider, `init` / `create` or `getInfo` fails, a name or op count out of bounds, or 4 packages are kept already |
//! | 4008 OP_PACKAGE_UNSUPPORTED_VERSION | an interface version other than 1.4 and 2.0: `interface version X.Y.Z, the model knows 1.4 and 2.0` |
//! | 4009 OP_PACKAGE_DUPLICATE | a package name + op name the backend has already: `op PKG::OP is registered already` |
//! | 4011 INVALID_HANDLE | not a live backend (rule `live-handle`) |
//!
//! 4003 (NOT_SUPPORTED) is the answer of the Hexagon programs that link the model in statically (the self-test, the
//! embedding examples), which have no dynamic loader (feature `pd-loader`, which only libQnnLpaiContract.so turns
//! on): `... PATH: this build of the model has no dynamic loader (a static Hexagon program)`. A graph of an LPCM binary of format version 3 names the custom ops
//! it uses ([`format`]); contextCreateFromBinary of a binary with an op no package registered with the backend
//! provides fails with 5005 (QNN_CONTEXT_ERROR_CREATE_FROM_BINARY) and the line `contract: rule op-package: graph
//! "G" uses op PKG::OP, which no registered op package provides`. Otherwise it loads, and computes its outputs as
//! without custom ops (the model runs no op code). The system library describes such binaries as any other.
//! The test op package (`tests/op-package`, `liblpai_test_op_package.so`) provides `lpai.test::TestGain`.
//!
//! # Outputs
//!
//! Output element `i` of an output whose source input has the elements `x[0..m)` (u8, or u16 little-endian):
//! `acc = x[i % m] * multiplier + addend + n * step` (i64, saturating), `q = acc >> shift` (arithmetic, floor),
//! clamped to `[0, 255]` or `[0, 65535]`, written little-endian; `n` is the graph's frame counter. The bytes from
//! the tensor's size up to `dataSize` are set to [`PAD_FILL`]. Each graphExecute that passes the rules first fills
//! the scratch memory with [`SCRATCH_FILL`], counts the call, and when the graph's `early_every = k > 0` divides
//! the call count it counts a frame and answers EARLY_TERMINATION (6038) with the outputs untouched; otherwise it
//! computes every output (each from a copy of its source input in scratch) with `n` = frames so far, then counts a
//! frame. The counters live in the persistent memory ([`persistent`]), initialised by the graphFinalize that
//! follows a PERSISTENT_MEM config.
//!
//! # Use
//!
//! [`lpai_providers`] and [`system_providers`] have the signatures of `QnnInterface_getProviders` and
//! `QnnSystemInterface_getProviders`: link them in as built-in libraries ([`LPAI_LIBRARY_NAME`],
//! [`SYSTEM_LIBRARY_NAME`]) or load the cdylibs `libQnnLpaiContract.so` and `libQnnSystemContract.so`.
//! The state is global (backends, contexts and system contexts, 8 of each at once), behind a lock: a host mutex,
//! or the PD's `qurt_mutex_lock` on Hexagon, where log lines go to `HAP_debug_v2`.
//!
//! Nothing in the model can panic on Hexagon (checked reads, no `core::fmt`): the cdylibs' panic handlers refer to
//! a symbol no PD defines, so the post-link check refuses any build where a panic is reachable.

#![no_std]
// A breach carries its log line in a fixed 240-byte buffer (no heap on the DSP), so `Result<_, Breach>` is large
// by design; it is returned through a few frames only.
#![allow(clippy::result_large_err)]

#[cfg(not(target_arch = "hexagon"))]
extern crate std;

pub mod format;
pub mod persistent;
pub mod rules;
pub mod writer;

mod asynchronous;
mod backend;
mod context;
mod execute;
mod graph;
mod lock;
mod log;
mod op_package;
mod state;
mod system;

#[cfg(not(target_arch = "hexagon"))]
pub use asynchronous::notify_withheld;
pub use backend::{lpai_providers, recorded_hw_info, CORE_API};
pub use op_package::{MAX_PACKAGES, MAX_PACKAGE_OPS, TARGETS};
pub use state::{MAX_BACKENDS, MAX_CONTEXTS, MAX_SYSTEM_CONTEXTS};
pub use system::{system_providers, SYSTEM_API};

use core::ffi::CStr;

/// ALIGNMENT_REQ start-address alignment: the binary, scratch, persistent and I/O buffers.
pub const ALIGNMENT_START: usize = 128;
/// ALIGNMENT_REQ size alignment: scratch and persistent sizes and every `dataSize`.
pub const SIZE_GRANULE: usize = 64;
/// Byte graphExecute fills the scratch memory with.
pub const SCRATCH_FILL: u8 = 0xA5;
/// Byte graphExecute writes from an output's size up to its `dataSize`.
pub const PAD_FILL: u8 = 0xEE;
/// The name of the backend library (`libQnnLpaiContract.so`), for built-in registration.
pub const LPAI_LIBRARY_NAME: &CStr = c"libQnnLpaiContract.so";
/// The name of the system library (`libQnnSystemContract.so`), for built-in registration.
pub const SYSTEM_LIBRARY_NAME: &CStr = c"libQnnSystemContract.so";

/// Log lines the model wrote on this thread since the last call, the last 256 at most (host only; every line also
/// goes to stderr).
#[cfg(not(target_arch = "hexagon"))]
pub fn take_log_lines() -> std::vec::Vec<std::string::String> {
    log::take()
}
