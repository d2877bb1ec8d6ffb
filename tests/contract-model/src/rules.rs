//! The rules of the LPAI contract the model enforces: each has a name, the QNN error code a breach answers, and
//! the call that checks it. A breach logs one line naming the rule (`Breach::report`).

use crate::log::Line;
use lpai_direct::qnn::error as code;
use lpai_direct::qnn::{ErrorHandle, Version};

/// One rule of the contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The name log lines use (`contract: rule <name>: ...`).
    pub name: &'static str,
    /// The QNN error code a breach answers.
    pub code: u32,
    /// Where the model checks it.
    pub checked_in: &'static str,
    /// What the rule says.
    pub summary: &'static str,
}

macro_rules! rules {
    ($( $(#[$doc:meta])* $konst:ident = $name:literal, $code:expr, $where:literal, $summary:literal; )*) => {
        $( $(#[$doc])* pub const $konst: Rule = Rule { name: $name, code: $code, checked_in: $where, summary: $summary }; )*
        /// Every rule, in the order of this table.
        pub const ALL: &[Rule] = &[$( $konst, )*];
    };
}

rules! {
    /// PERSISTENT_BINARY must be set to 1.
    PERSISTENT_BINARY = "persistent-binary", code::CONTEXT_ERROR_INVALID_CONFIG, "contextCreateFromBinary",
        "the configs include PERSISTENT_BINARY (option 7) with value 1";
    /// Context configs the model does not know, or ENABLE_ISLAND used wrongly.
    CONTEXT_CONFIG = "context-config", code::CONTEXT_ERROR_INVALID_CONFIG, "contextCreateFromBinary",
        "only PERSISTENT_BINARY, PRIORITY and LPAI custom configs; ENABLE_ISLAND null once, or graph names, not both";
    /// No device handle on LPAI.
    NO_DEVICE = "no-device", code::CONTEXT_ERROR_INVALID_ARGUMENT, "contextCreateFromBinary",
        "the device handle is null (LPAI has no device)";
    /// The binary buffer is aligned.
    BINARY_ALIGNED = "binary-aligned", code::CONTEXT_ERROR_INVALID_ARGUMENT, "contextCreateFromBinary",
        "the binary buffer is not null and starts at a multiple of 128";
    /// The binary is a well-formed model file of the size given.
    BINARY_FORMAT = "binary-format", code::CONTEXT_ERROR_CREATE_FROM_BINARY, "contextCreateFromBinary",
        "the binary parses as LPCM and its size equals the header's total_bytes";
    /// The binary is for API versions this backend implements.
    BINARY_VERSION = "binary-version", code::CONTEXT_ERROR_BINARY_VERSION, "contextCreateFromBinary",
        "the binary's core API and LPAI backend API (LPCM version 2; version 1: the model's own) each have the \
         model's major and a minor no greater than the model's (a greater one: made by a newer SDK)";
    /// The binary stays unchanged at its address until contextFree.
    BINARY_PERSISTENT = "binary-persistent", code::COMMON_ERROR_LOADING_BINARIES,
        "graphFinalize, graphExecute, contextFree",
        "the binary still hashes (FNV-1a 64) as at contextCreateFromBinary";
    /// Backend configs.
    BACKEND_CONFIG = "backend-config", code::BACKEND_ERROR_INVALID_CONFIG, "backendCreate",
        "only HW_INFO custom configs, with a known target and hardware version";
    /// backendRegisterOpPackage: null arguments, or a target that is not the backend's.
    OP_PACKAGE_ARGUMENTS = "op-package", code::BACKEND_ERROR_INVALID_ARGUMENT, "backendRegisterOpPackage",
        "the package path and interface provider are not null; the target is null, \"\", \"LPAI\" or \"DSP\"";
    /// backendRegisterOpPackage: the build can open libraries.
    OP_PACKAGE_UNSUPPORTED = "op-package", code::BACKEND_ERROR_NOT_SUPPORTED, "backendRegisterOpPackage",
        "the model can open libraries (the host, libQnnLpaiContract.so in a PD; not a static Hexagon program)";
    /// backendRegisterOpPackage: the library opens.
    OP_PACKAGE_NOT_FOUND = "op-package", code::BACKEND_ERROR_OP_PACKAGE_NOT_FOUND, "backendRegisterOpPackage",
        "the package path opens as a library (dlopen)";
    /// backendRegisterOpPackage: the interface provider is there.
    OP_PACKAGE_PROVIDER = "op-package", code::BACKEND_ERROR_OP_PACKAGE_IF_PROVIDER_NOT_FOUND,
        "backendRegisterOpPackage", "the library exports the interface provider named (dlsym)";
    /// backendRegisterOpPackage: the package initialises and describes itself, and the backend has room.
    OP_PACKAGE_REGISTRATION = "op-package", code::BACKEND_ERROR_OP_PACKAGE_REGISTRATION_FAILED,
        "backendRegisterOpPackage",
        "the provider, init / create and getInfo succeed; names of 1..=31 printable bytes, at most 8 ops; at most 4 \
         packages per backend";
    /// backendRegisterOpPackage: an interface version the model knows.
    OP_PACKAGE_VERSION = "op-package", code::BACKEND_ERROR_OP_PACKAGE_UNSUPPORTED_VERSION,
        "backendRegisterOpPackage", "the package's interface version is 1.4 or 2.0";
    /// backendRegisterOpPackage: package name and op name are unique.
    OP_PACKAGE_DUPLICATE = "op-package", code::BACKEND_ERROR_OP_PACKAGE_DUPLICATE, "backendRegisterOpPackage",
        "no op of the package (package name + op name) is registered with the backend already";
    /// contextCreateFromBinary: every custom op of the binary's graphs is registered.
    OP_PACKAGE_MISSING = "op-package", code::CONTEXT_ERROR_CREATE_FROM_BINARY, "contextCreateFromBinary",
        "every custom op a graph of the binary names (LPCM version 3) is provided by a package registered with the \
         backend";
    /// Backend properties.
    BACKEND_PROPERTY = "backend-property", code::BACKEND_ERROR_NOT_SUPPORTED, "backendGetProperty",
        "only ALIGNMENT_REQ, REQUIRE_PERSISTENT_BINARY, ENPU_CORE_NUM and ENPU_CORE_INFO of a core there is";
    /// Contexts go before their backend.
    FREE_ORDER = "free-order", code::BACKEND_ERROR_TERMINATE_FAILED, "backendFree",
        "every context of the backend was freed first";
    /// Handles: backend.
    BACKEND_HANDLE = "live-handle", code::BACKEND_ERROR_INVALID_HANDLE, "backend calls",
        "a live backend handle";
    /// Handles: context.
    CONTEXT_HANDLE = "live-handle", code::CONTEXT_ERROR_INVALID_HANDLE, "contextFree",
        "a live context handle (never one already freed)";
    /// Handles: graph.
    GRAPH_HANDLE = "live-handle", code::GRAPH_ERROR_INVALID_HANDLE, "graph calls",
        "a retrieved graph of a live context";
    /// Handles: system context.
    SYSTEM_HANDLE = "live-handle", code::SYSTEM_COMMON_ERROR_INVALID_HANDLE, "system calls",
        "a live system context handle";
    /// Too many live objects.
    CAPACITY = "capacity", code::COMMON_ERROR_MEM_ALLOC, "backendCreate, contextCreateFromBinary, systemContextCreate",
        "at most 8 backends, 8 contexts, 8 system contexts at once";
    /// Null or missing arguments, by area.
    CONTEXT_ARGUMENTS = "arguments", code::CONTEXT_ERROR_INVALID_ARGUMENT, "context calls",
        "out-pointers are not null";
    /// Null or missing arguments of graph calls.
    GRAPH_ARGUMENTS = "arguments", code::GRAPH_ERROR_INVALID_ARGUMENT, "graph calls",
        "names, lists and out-pointers are not null";
    /// Null arguments of system calls.
    SYSTEM_ARGUMENTS = "arguments", code::SYSTEM_COMMON_ERROR_INVALID_ARGUMENT, "system calls",
        "buffers and out-pointers are not null";
    /// Graph names.
    GRAPH_NAME = "graph-name", code::GRAPH_ERROR_GRAPH_DOES_NOT_EXIST, "graphRetrieve",
        "the name is a graph of the binary";
    /// Graph properties.
    GRAPH_PROPERTY = "graph-property", code::GRAPH_ERROR_INVALID_ARGUMENT, "graphGetProperty",
        "only SCRATCH_MEM_SIZE and PERSISTENT_MEM_SIZE, pointing at a u32";
    /// Scratch and persistent memory.
    MEMORY_ALIGNED = "memory-aligned", code::GRAPH_ERROR_INVALID_ARGUMENT, "graphSetConfig",
        "SCRATCH_MEM / PERSISTENT_MEM: addr a non-null multiple of 128, size >= the property and a multiple of 64, \
         memType 1..=4";
    /// Each memory pool fits the memory its type names (`graph::MEMORY_LIMITS`).
    MEMORY_FITS = "memory-fits", code::GRAPH_ERROR_INVALID_ARGUMENT, "graphSetConfig",
        "SCRATCH_MEM / PERSISTENT_MEM: size within the model's limit for its memType (TCM 256 KiB, LLC 1 MiB, PSRAM \
         2 MiB; DDR none)";
    /// Other graph configs.
    GRAPH_CONFIG = "graph-config", code::GRAPH_ERROR_INVALID_ARGUMENT, "graphSetConfig",
        "only the LPAI memory, PERF_CFG and CORE_AFFINITY custom configs and PRIORITY, with sensible values";
    /// Both memories before finalize.
    MEMORY_BEFORE_FINALIZE = "memory-before-finalize", code::GRAPH_ERROR_FINALIZE_FAILED, "graphFinalize",
        "SCRATCH_MEM and PERSISTENT_MEM were both set";
    /// Finalize after the last config.
    FINALIZED_AFTER_CONFIG = "finalized-after-config", code::GRAPH_ERROR_GRAPH_NOT_FINALIZED, "graphExecute",
        "graphFinalize came after the last accepted graphSetConfig";
    /// The persistent memory is the graph's alone.
    PERSISTENT_STATE = "persistent-state", code::GRAPH_ERROR_INVALID_ARGUMENT, "graphExecute",
        "the persistent header (magic, token) written at graphFinalize is intact";
    /// Tensor ids and counts.
    TENSOR_IDS = "tensor-ids", code::GRAPH_ERROR_INVALID_TENSOR, "graphExecute",
        "input and output counts and ids match the graph, in graph order (tensor versions 1 or 2)";
    /// I/O alignment.
    IO_ALIGNED = "io-aligned", code::GRAPH_ERROR_INVALID_TENSOR, "graphExecute",
        "every clientBuf.data is a non-null multiple of 128 and memType is RAW";
    /// I/O padding.
    IO_PADDED = "io-padded", code::GRAPH_ERROR_INVALID_TENSOR, "graphExecute",
        "every clientBuf.dataSize is a multiple of 64 and at least the tensor's bytes";
    /// Executions queued by graphExecuteAsync (host).
    ASYNC_QUEUE = "async-queue", code::GRAPH_ERROR_EXECUTION_ASYNC_FIFO_FULL, "graphExecuteAsync",
        "at most 16 executions queued at once, on the model's execution thread (host)";
    /// System side: model files.
    SYSTEM_BINARY_FORMAT = "binary-format", code::SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY,
        "systemContextGetBinaryInfo", "the binary parses as LPCM and its size equals the header's total_bytes";
}

/// A broken rule: its code and the log line saying what was wrong.
#[derive(Clone, Copy)]
pub(crate) struct Breach {
    code: u32,
    line: Line,
}

impl Rule {
    /// A breach of this rule; the caller appends what was wrong.
    pub(crate) fn breach(self) -> Breach {
        Breach { code: self.code, line: Line::rule(self.name) }
    }
}

impl Breach {
    /// Appends text.
    pub(crate) fn text(self, text: &str) -> Breach {
        Breach { line: self.line.text(text), ..self }
    }
    /// Appends a name field.
    pub(crate) fn name(self, name: &[u8]) -> Breach {
        Breach { line: self.line.name(name), ..self }
    }
    /// Appends an unsigned number.
    pub(crate) fn num(self, value: u64) -> Breach {
        Breach { line: self.line.num(value), ..self }
    }
    /// Appends a hexadecimal number.
    pub(crate) fn hex(self, value: u64) -> Breach {
        Breach { line: self.line.hex(value), ..self }
    }
    /// Appends a version as `major.minor.patch`.
    pub(crate) fn version(self, version: Version) -> Breach {
        Breach { line: self.line.version(version), ..self }
    }

    /// Logs the line and answers the code. Call it with no lock held.
    pub(crate) fn report(self) -> ErrorHandle {
        self.line.emit();
        u64::from(self.code)
    }
}

/// Answers 0 for `Ok`, or reports the breach.
pub(crate) fn answer(result: Result<(), Breach>) -> ErrorHandle {
    match result {
        Ok(()) => 0,
        Err(breach) => breach.report(),
    }
}
