//! Basic QNN C types: error handle, opaque handles, versions, data types, priorities and logging.

use core::ffi::{c_char, c_void};

/// `Qnn_ErrorHandle_t`: every QNN entry point returns one; `0` is success and the error code is
/// the low 16 bits (see [`crate::qnn::error::code`]).
pub type ErrorHandle = u64;

/// `Qnn_Handle_t`: an opaque object owned by the backend.
pub type Handle = *mut c_void;
/// `Qnn_BackendHandle_t`.
pub type BackendHandle = Handle;
/// `Qnn_ContextHandle_t`.
pub type ContextHandle = Handle;
/// `Qnn_DeviceHandle_t`.
pub type DeviceHandle = Handle;
/// `Qnn_GraphHandle_t`.
pub type GraphHandle = Handle;
/// `Qnn_LogHandle_t`.
pub type LogHandle = Handle;
/// `Qnn_MemHandle_t`.
pub type MemHandle = Handle;
/// `Qnn_ProfileHandle_t`.
pub type ProfileHandle = Handle;
/// `Qnn_SignalHandle_t`.
pub type SignalHandle = Handle;

/// `Qnn_NotifyStatus_t`: what an asynchronous execution ended with, passed by value to a [`NotifyFn`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NotifyStatus {
    /// `error`: the execution's result (0, or an error such as `QNN_GRAPH_ERROR_EARLY_TERMINATION`).
    pub error: ErrorHandle,
}

/// `Qnn_NotifyFn_t`: `void (void* notifyParam, Qnn_NotifyStatus_t notifyStatus)`, called on a backend-owned thread
/// when an execution queued by `graphExecuteAsync` finishes; null asks for no notification.
pub type NotifyFn = Option<unsafe extern "C" fn(notify_param: *mut c_void, status: NotifyStatus)>;

/// `Qnn_ContextBinarySize_t`: a byte count of a context binary.
pub type ContextBinarySize = u64;

/// `QNN_BACKEND_ID_NULL`.
pub const BACKEND_ID_NULL: u32 = 0;

/// `Qnn_Version_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version {
    /// `major`.
    pub major: u32,
    /// `minor`.
    pub minor: u32,
    /// `patch`.
    pub patch: u32,
}

impl Version {
    /// A version from its three parts.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Self { major, minor, patch }
    }
}

/// `Qnn_ApiVersion_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ApiVersion {
    /// `coreApiVersion`: the QNN core API the backend implements.
    pub core_api_version: Version,
    /// `backendApiVersion`: the backend's own API version.
    pub backend_api_version: Version,
}

c_enum! {
    /// Element type of a tensor.
    pub struct DataType = "Qnn_DataType_t" {
        INT_8 = 0x0008 => "QNN_DATATYPE_INT_8",
        INT_16 = 0x0016 => "QNN_DATATYPE_INT_16",
        INT_32 = 0x0032 => "QNN_DATATYPE_INT_32",
        INT_64 = 0x0064 => "QNN_DATATYPE_INT_64",
        UINT_8 = 0x0108 => "QNN_DATATYPE_UINT_8",
        UINT_16 = 0x0116 => "QNN_DATATYPE_UINT_16",
        UINT_32 = 0x0132 => "QNN_DATATYPE_UINT_32",
        UINT_64 = 0x0164 => "QNN_DATATYPE_UINT_64",
        FLOAT_16 = 0x0216 => "QNN_DATATYPE_FLOAT_16",
        BFLOAT_16 = 0x0226 => "QNN_DATATYPE_BFLOAT_16",
        FLOAT_32 = 0x0232 => "QNN_DATATYPE_FLOAT_32",
        FLOAT_64 = 0x0264 => "QNN_DATATYPE_FLOAT_64",
        SFIXED_POINT_4 = 0x0304 => "QNN_DATATYPE_SFIXED_POINT_4",
        SFIXED_POINT_8 = 0x0308 => "QNN_DATATYPE_SFIXED_POINT_8",
        SFIXED_POINT_16 = 0x0316 => "QNN_DATATYPE_SFIXED_POINT_16",
        SFIXED_POINT_32 = 0x0332 => "QNN_DATATYPE_SFIXED_POINT_32",
        UFIXED_POINT_4 = 0x0404 => "QNN_DATATYPE_UFIXED_POINT_4",
        UFIXED_POINT_8 = 0x0408 => "QNN_DATATYPE_UFIXED_POINT_8",
        UFIXED_POINT_16 = 0x0416 => "QNN_DATATYPE_UFIXED_POINT_16",
        UFIXED_POINT_32 = 0x0432 => "QNN_DATATYPE_UFIXED_POINT_32",
        BOOL_8 = 0x0508 => "QNN_DATATYPE_BOOL_8",
        STRING = 0x0608 => "QNN_DATATYPE_STRING",
        UNDEFINED = 0x7FFF_FFFF => "QNN_DATATYPE_UNDEFINED",
    }
}

impl DataType {
    /// Size in bytes of one element, or `None` for types without a fixed byte size
    /// (4-bit fixed point, strings, undefined or unknown values).
    ///
    /// The low byte of every fixed-size data type is its width in bits, written in hex digits
    /// that read as decimal (`0x08`, `0x16`, `0x32`, `0x64`).
    pub const fn element_size(self) -> Option<usize> {
        match self {
            Self::INT_8 | Self::UINT_8 | Self::SFIXED_POINT_8 | Self::UFIXED_POINT_8 | Self::BOOL_8 => Some(1),
            Self::INT_16
            | Self::UINT_16
            | Self::FLOAT_16
            | Self::BFLOAT_16
            | Self::SFIXED_POINT_16
            | Self::UFIXED_POINT_16 => Some(2),
            Self::INT_32 | Self::UINT_32 | Self::FLOAT_32 | Self::SFIXED_POINT_32 | Self::UFIXED_POINT_32 => Some(4),
            Self::INT_64 | Self::UINT_64 | Self::FLOAT_64 => Some(8),
            _ => None,
        }
    }
}

c_enum! {
    /// Scheduling priority of a context or graph.
    pub struct Priority = "Qnn_Priority_t" {
        LOW = 0 => "QNN_PRIORITY_LOW",
        NORMAL = 100 => "QNN_PRIORITY_NORMAL",
        NORMAL_HIGH = 150 => "QNN_PRIORITY_NORMAL_HIGH",
        HIGH = 200 => "QNN_PRIORITY_HIGH",
        UNDEFINED = 0x7FFF_FFFF => "QNN_PRIORITY_UNDEFINED",
    }
    aliases {
        DEFAULT = 100 => "QNN_PRIORITY_DEFAULT",
    }
}

c_enum! {
    /// How much detail the backend keeps for error reporting.
    pub struct ErrorReportingLevel = "Qnn_ErrorReportingLevel_t" {
        BRIEF = 0 => "QNN_ERROR_REPORTING_LEVEL_BRIEF",
        DETAILED = 1 => "QNN_ERROR_REPORTING_LEVEL_DETAILED",
        UNDEFINED = 0x7FFF_FFFF => "QNN_ERROR_REPORTING_LEVEL_UNDEFINED",
    }
}

/// `Qnn_ErrorReportingConfig_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorReportingConfig {
    /// `reportingLevel`.
    pub reporting_level: ErrorReportingLevel,
    /// `storageLimit`: kilobytes the backend may use for error information.
    pub storage_limit: u32,
}

c_enum! {
    /// Maximum level of messages a log handle passes to its callback.
    pub struct LogLevel = "QnnLog_Level_t" {
        ERROR = 1 => "QNN_LOG_LEVEL_ERROR",
        WARN = 2 => "QNN_LOG_LEVEL_WARN",
        INFO = 3 => "QNN_LOG_LEVEL_INFO",
        VERBOSE = 4 => "QNN_LOG_LEVEL_VERBOSE",
        DEBUG = 5 => "QNN_LOG_LEVEL_DEBUG",
        MAX = 0x7FFF_FFFF => "QNN_LOG_LEVEL_MAX",
    }
}

/// `QnnLog_Callback_t`: `void (const char* fmt, QnnLog_Level_t level, uint64_t timestamp,
/// va_list args)`.
///
/// The last parameter is a C `va_list`, which stable `no_std` Rust cannot name; it is declared
/// here as an opaque pointer. That matches the x86_64 System V ABI (where `va_list` is an array
/// that decays to a pointer) but not necessarily other targets, so on Hexagon create no log at all
/// (pass a null [`LogHandle`] to `backendCreate`) rather than installing a Rust callback.
pub type LogCallback =
    Option<unsafe extern "C" fn(fmt: *const c_char, level: LogLevel, timestamp: u64, args: *mut c_void)>;
