//! Backend, context and graph configs and properties, plus the `QnnProperty` capability keys.
//!
//! Config and property lists are passed to QNN as null-terminated arrays of pointers
//! (`const QnnContext_Config_t**` and so on).

use core::ffi::{c_char, c_void};

use super::types::{ErrorReportingConfig, Priority, ProfileHandle};

// ---------------------------------------------------------------------------------------------
// Backend
// ---------------------------------------------------------------------------------------------

c_enum! {
    /// Selects the member of [`BackendConfig::value`].
    pub struct BackendConfigOption = "QnnBackend_ConfigOption_t" {
        CUSTOM = 0 => "QNN_BACKEND_CONFIG_OPTION_CUSTOM",
        ERROR_REPORTING = 1 => "QNN_BACKEND_CONFIG_OPTION_ERROR_REPORTING",
        PLATFORM = 2 => "QNN_BACKEND_CONFIG_OPTION_PLATFORM",
        UNDEFINED = 0x7FFF_FFFF => "QNN_BACKEND_CONFIG_OPTION_UNDEFINED",
    }
}

/// The anonymous union of `QnnBackend_Config_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union BackendConfigValue {
    /// `customConfig` (`QnnBackend_CustomConfig_t`, a `void*` to a backend-specific struct such
    /// as [`crate::qnn::lpai::BackendCustomConfig`]).
    pub custom_config: *mut c_void,
    /// `errorConfig`.
    pub error_config: ErrorReportingConfig,
    /// `platformOption`.
    pub platform_option: *const c_char,
}

/// `QnnBackend_Config_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct BackendConfig {
    /// `option`.
    pub option: BackendConfigOption,
    /// The anonymous union.
    pub value: BackendConfigValue,
}

c_enum! {
    /// Selects the member of a backend property (only `CUSTOM` exists).
    pub struct BackendPropertyOption = "QnnBackend_PropertyOption_t" {
        CUSTOM = 0 => "QNN_BACKEND_PROPERTY_OPTION_CUSTOM",
        UNDEFINED = 0x7FFF_FFFF => "QNN_BACKEND_PROPERTY_OPTION_UNDEFINED",
    }
}

/// `QnnBackend_Property_t`. Its C union has a single member, declared here as a plain field.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BackendProperty {
    /// `option`.
    pub option: BackendPropertyOption,
    /// `customProperty` (`QnnBackend_CustomProperty_t`, a `void*` to e.g.
    /// [`crate::qnn::lpai::BackendCustomProperty`]).
    pub custom_property: *mut c_void,
}

// ---------------------------------------------------------------------------------------------
// Context
// ---------------------------------------------------------------------------------------------

c_enum! {
    /// Selects the member of [`ContextConfig::value`].
    pub struct ContextConfigOption = "QnnContext_ConfigOption_t" {
        CUSTOM = 0 => "QNN_CONTEXT_CONFIG_OPTION_CUSTOM",
        PRIORITY = 1 => "QNN_CONTEXT_CONFIG_OPTION_PRIORITY",
        ERROR_REPORTING = 2 => "QNN_CONTEXT_CONFIG_OPTION_ERROR_REPORTING",
        OEM_STRING = 3 => "QNN_CONTEXT_CONFIG_OPTION_OEM_STRING",
        ASYNC_EXECUTION_QUEUE_DEPTH = 4 => "QNN_CONTEXT_CONFIG_ASYNC_EXECUTION_QUEUE_DEPTH",
        ENABLE_GRAPHS = 5 => "QNN_CONTEXT_CONFIG_ENABLE_GRAPHS",
        MEMORY_LIMIT_HINT = 6 => "QNN_CONTEXT_CONFIG_MEMORY_LIMIT_HINT",
        PERSISTENT_BINARY = 7 => "QNN_CONTEXT_CONFIG_PERSISTENT_BINARY",
        BINARY_COMPATIBILITY = 8 => "QNN_CONTEXT_CONFIG_BINARY_COMPATIBILITY",
        DEFER_GRAPH_INIT = 9 => "QNN_CONTEXT_CONFIG_OPTION_DEFER_GRAPH_INIT",
        GRAPH_RETENTION_ORDER = 10 => "QNN_CONTEXT_CONFIG_GRAPH_RETENTION_ORDER",
        UNDEFINED = 0x7FFF_FFFF => "QNN_CONTEXT_CONFIG_UNDEFINED",
    }
}

c_enum! {
    /// How strictly a context binary must match the running backend.
    pub struct BinaryCompatibilityType = "QnnContext_BinaryCompatibilityType_t" {
        PERMISSIVE = 0 => "QNN_CONTEXT_BINARY_COMPATIBILITY_PERMISSIVE",
        STRICT = 1 => "QNN_CONTEXT_BINARY_COMPATIBILITY_STRICT",
        // Seven F digits: this is the value the C headers give (not 0x7FFFFFFF).
        UNDEFINED = 0x07FF_FFFF => "QNN_CONTEXT_BINARY_COMPATIBILITY_TYPE_UNDEFINED",
    }
}

c_enum! {
    /// Kind of [`AsyncExecutionQueueDepth`].
    pub struct AsyncExecutionQueueDepthType = "QnnContext_AsyncExecutionQueueDepthType_t" {
        NUMERIC = 0 => "QNN_CONTEXT_ASYNC_EXECUTION_QUEUE_DEPTH_TYPE_NUMERIC",
        // Seven F digits, as in the C headers.
        UNDEFINED = 0x07FF_FFFF => "QNN_CONTEXT_ASYNC_EXECUTION_QUEUE_DEPTH_TYPE_UNDEFINED",
    }
}

/// `QnnContext_AsyncExecutionQueueDepth_t`. Its C union has a single member (`depth`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsyncExecutionQueueDepth {
    /// `type`.
    pub depth_type: AsyncExecutionQueueDepthType,
    /// `depth`.
    pub depth: u32,
}

/// The anonymous union of `QnnContext_Config_t` (it holds a `u64`, so it is 8-aligned on every
/// target).
#[repr(C)]
#[derive(Clone, Copy)]
pub union ContextConfigValue {
    /// `customConfig` (`QnnContext_CustomConfig_t`, e.g. a
    /// [`crate::qnn::lpai::ContextCustomConfig`]).
    pub custom_config: *mut c_void,
    /// `priority`.
    pub priority: Priority,
    /// `errorConfig`.
    pub error_config: ErrorReportingConfig,
    /// `oemString`.
    pub oem_string: *const c_char,
    /// `asyncExeQueueDepth`.
    pub async_exe_queue_depth: AsyncExecutionQueueDepth,
    /// `enableGraphs`: null-terminated array of graph names.
    pub enable_graphs: *const *const c_char,
    /// `memoryLimitHint`.
    pub memory_limit_hint: u64,
    /// `isPersistentBinary`: when non-zero the binary buffer passed to `contextCreateFromBinary`
    /// must stay valid and unmoved until `contextFree`.
    pub is_persistent_binary: u8,
    /// `binaryCompatibilityType`.
    pub binary_compatibility_type: BinaryCompatibilityType,
    /// `isGraphInitDeferred`.
    pub is_graph_init_deferred: u8,
    /// `graphRetentionOrder`: null-terminated array of graph names.
    pub graph_retention_order: *const *const c_char,
}

/// `QnnContext_Config_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ContextConfig {
    /// `option`.
    pub option: ContextConfigOption,
    /// The anonymous union.
    pub value: ContextConfigValue,
}

impl ContextConfig {
    /// A `PERSISTENT_BINARY` config with `isPersistentBinary` set to `persistent`.
    pub const fn persistent_binary(persistent: bool) -> Self {
        let mut config = Self::zeroed(ContextConfigOption::PERSISTENT_BINARY);
        config.value.is_persistent_binary = persistent as u8;
        config
    }

    /// A `PRIORITY` config.
    pub const fn priority(priority: Priority) -> Self {
        let mut config = Self::zeroed(ContextConfigOption::PRIORITY);
        config.value.priority = priority;
        config
    }

    /// A `CUSTOM` config pointing at a backend-specific struct.
    pub const fn custom(custom_config: *mut c_void) -> Self {
        let mut config = Self::zeroed(ContextConfigOption::CUSTOM);
        config.value.custom_config = custom_config;
        config
    }

    /// A config with the given option and an all-zero union (every byte of it initialised).
    const fn zeroed(option: ContextConfigOption) -> Self {
        Self { option, value: ContextConfigValue { memory_limit_hint: 0 } }
    }
}

c_enum! {
    /// Selects the member of a context property (only `CUSTOM` exists).
    pub struct ContextPropertyOption = "QnnContext_PropertyOption_t" {
        CUSTOM = 0 => "QNN_CONTEXT_PROPERTY_OPTION_CUSTOM",
        UNDEFINED = 0x7FFF_FFFF => "QNN_CONTEXT_PROPERTY_OPTION_UNDEFINED",
    }
}

/// `QnnContext_Property_t`. Its C union has a single member, declared here as a plain field.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ContextProperty {
    /// `option`.
    pub option: ContextPropertyOption,
    /// `customProperty`.
    pub custom_property: *mut c_void,
}

// ---------------------------------------------------------------------------------------------
// Graph
// ---------------------------------------------------------------------------------------------

c_enum! {
    /// Selects the member of [`GraphConfig::value`].
    pub struct GraphConfigOption = "QnnGraph_ConfigOption_t" {
        CUSTOM = 0 => "QNN_GRAPH_CONFIG_OPTION_CUSTOM",
        PRIORITY = 3 => "QNN_GRAPH_CONFIG_OPTION_PRIORITY",
        PROFILE_HANDLE = 4 => "QNN_GRAPH_CONFIG_OPTION_PROFILE_HANDLE",
        SET_PROFILING_STATE = 5 => "QNN_GRAPH_CONFIG_OPTION_SET_PROFILING_STATE",
        SET_PROFILING_NUM_EXECUTIONS = 6 => "QNN_GRAPH_CONFIG_OPTION_SET_PROFILING_NUM_EXECUTIONS",
        ENABLE_BINARY_SECTION_WEIGHTS_UPDATES = 7
            => "QNN_GRAPH_CONFIG_OPTION_ENABLE_BINARY_SECTION_WEIGHTS_UPDATES",
        UNDEFINED = 0x7FFF_FFFF => "QNN_GRAPH_CONFIG_OPTION_UNDEFINED",
    }
}

c_enum! {
    /// Value of a `SET_PROFILING_STATE` graph config.
    pub struct GraphProfilingState = "QnnGraph_ProfilingState_t" {
        ENABLED = 1 => "QNN_GRAPH_PROFILING_STATE_ENABLED",
        DISABLED = 2 => "QNN_GRAPH_PROFILING_STATE_DISABLED",
        UNDEFINED = 0x7FFF_FFFF => "QNN_GRAPH_PROFILING_STATE_UNDEFINED",
    }
}

/// The anonymous union of `QnnGraph_Config_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union GraphConfigValue {
    /// `customConfig` (`QnnGraph_CustomConfig_t`, e.g. a
    /// [`crate::qnn::lpai::GraphCustomConfig`]).
    pub custom_config: *mut c_void,
    /// `priority`.
    pub priority: Priority,
    /// `profileHandle`.
    pub profile_handle: ProfileHandle,
    /// `profilingState`.
    pub profiling_state: GraphProfilingState,
    /// `numProfilingExecutions`.
    pub num_profiling_executions: u32,
    /// `enableBinarySectionWeightsUpdates`.
    pub enable_binary_section_weights_updates: u8,
}

/// `QnnGraph_Config_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct GraphConfig {
    /// `option`.
    pub option: GraphConfigOption,
    /// The anonymous union.
    pub value: GraphConfigValue,
}

impl GraphConfig {
    /// A `CUSTOM` config pointing at a backend-specific struct.
    pub const fn custom(custom_config: *mut c_void) -> Self {
        Self { option: GraphConfigOption::CUSTOM, value: GraphConfigValue { custom_config } }
    }

    /// A `PRIORITY` config.
    pub const fn priority(priority: Priority) -> Self {
        let mut config = Self {
            option: GraphConfigOption::PRIORITY,
            value: GraphConfigValue { custom_config: core::ptr::null_mut() },
        };
        config.value.priority = priority;
        config
    }
}

c_enum! {
    /// Selects the member of a graph property (only `CUSTOM` exists).
    pub struct GraphPropertyOption = "QnnGraph_PropertyOption_t" {
        CUSTOM = 0 => "QNN_GRAPH_PROPERTY_OPTION_CUSTOM",
        UNDEFINED = 0x7FFF_FFFF => "QNN_GRAPH_PROPERTY_OPTION_UNDEFINED",
    }
}

/// `QnnGraph_Property_t`. Its C union has a single member, declared here as a plain field.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GraphProperty {
    /// `option`.
    pub option: GraphPropertyOption,
    /// `customProperty` (`QnnGraph_CustomProperty_t`, e.g. a
    /// [`crate::qnn::lpai::GraphCustomProperty`]).
    pub custom_property: *mut c_void,
}

// ---------------------------------------------------------------------------------------------
// Property keys (`QnnProperty_hasCapability`)
// ---------------------------------------------------------------------------------------------

/// `QnnProperty_Key_t`: argument of `propertyHasCapability`, which answers
/// [`PROPERTY_SUPPORTED`] or [`PROPERTY_NOT_SUPPORTED`].
pub type PropertyKey = u32;

/// `QNN_PROPERTY_SUPPORTED`.
pub const PROPERTY_SUPPORTED: u64 = 0;
/// `QNN_PROPERTY_NOT_SUPPORTED`.
pub const PROPERTY_NOT_SUPPORTED: u64 = 1000;

/// `QNN_PROPERTY_GROUP_CORE`.
pub const PROPERTY_GROUP_CORE: PropertyKey = 1;
/// `QNN_PROPERTY_GROUP_BACKEND`.
pub const PROPERTY_GROUP_BACKEND: PropertyKey = PROPERTY_GROUP_CORE + 100;
/// `QNN_PROPERTY_GROUP_CONTEXT`.
pub const PROPERTY_GROUP_CONTEXT: PropertyKey = PROPERTY_GROUP_CORE + 200;
/// `QNN_PROPERTY_GROUP_GRAPH`.
pub const PROPERTY_GROUP_GRAPH: PropertyKey = PROPERTY_GROUP_CORE + 300;
/// `QNN_PROPERTY_GROUP_OP_PACKAGE`.
pub const PROPERTY_GROUP_OP_PACKAGE: PropertyKey = PROPERTY_GROUP_CORE + 400;
/// `QNN_PROPERTY_GROUP_TENSOR`.
pub const PROPERTY_GROUP_TENSOR: PropertyKey = PROPERTY_GROUP_CORE + 500;
/// `QNN_PROPERTY_GROUP_MEMORY`.
pub const PROPERTY_GROUP_MEMORY: PropertyKey = PROPERTY_GROUP_CORE + 1100;
/// `QNN_PROPERTY_GROUP_SIGNAL`.
pub const PROPERTY_GROUP_SIGNAL: PropertyKey = PROPERTY_GROUP_CORE + 1200;
/// `QNN_PROPERTY_GROUP_LOG`.
pub const PROPERTY_GROUP_LOG: PropertyKey = PROPERTY_GROUP_CORE + 1300;
/// `QNN_PROPERTY_GROUP_PROFILE`.
pub const PROPERTY_GROUP_PROFILE: PropertyKey = PROPERTY_GROUP_CORE + 1400;
/// `QNN_PROPERTY_GROUP_DEVICE`.
pub const PROPERTY_GROUP_DEVICE: PropertyKey = PROPERTY_GROUP_CORE + 1500;
/// `QNN_PROPERTY_GROUP_CUSTOM`.
pub const PROPERTY_GROUP_CUSTOM: PropertyKey = PROPERTY_GROUP_CORE + 2000;

/// `QNN_PROPERTY_BACKEND_SUPPORT_CUSTOM_PROPERTY`: `backendGetProperty` is available.
pub const PROPERTY_BACKEND_SUPPORT_CUSTOM_PROPERTY: PropertyKey = PROPERTY_GROUP_BACKEND + 7;
/// `QNN_PROPERTY_CONTEXT_SUPPORT_CACHING`: contexts can be created from a binary.
pub const PROPERTY_CONTEXT_SUPPORT_CACHING: PropertyKey = PROPERTY_GROUP_CONTEXT + 1;
/// `QNN_PROPERTY_CONTEXT_SUPPORT_CONFIGURATION`.
pub const PROPERTY_CONTEXT_SUPPORT_CONFIGURATION: PropertyKey = PROPERTY_GROUP_CONTEXT + 4;
/// `QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_PERSISTENT_BINARY` (208).
///
/// The HTP backend answers "supported" here yet rejects the config in `contextCreateFromBinary`
/// (1000), while LPAI requires it: decide from the LPAI backend property
/// `REQUIRE_PERSISTENT_BINARY`, not from this key alone.
pub const PROPERTY_CONTEXT_SUPPORT_CONFIG_PERSISTENT_BINARY: PropertyKey = PROPERTY_GROUP_CONTEXT + 7;
/// `QNN_PROPERTY_CONTEXT_SUPPORT_CUSTOM_PROPERTY`.
pub const PROPERTY_CONTEXT_SUPPORT_CUSTOM_PROPERTY: PropertyKey = PROPERTY_GROUP_CONTEXT + 14;
/// `QNN_PROPERTY_GRAPH_SUPPORT_CONFIG`.
pub const PROPERTY_GRAPH_SUPPORT_CONFIG: PropertyKey = PROPERTY_GROUP_GRAPH + 1;
/// `QNN_PROPERTY_GRAPH_SUPPORT_SIGNALS`.
pub const PROPERTY_GRAPH_SUPPORT_SIGNALS: PropertyKey = PROPERTY_GROUP_GRAPH + 2;
/// `QNN_PROPERTY_GRAPH_SUPPORT_PRIORITY_CONTROL`.
pub const PROPERTY_GRAPH_SUPPORT_PRIORITY_CONTROL: PropertyKey = PROPERTY_GROUP_GRAPH + 5;
/// `QNN_PROPERTY_GRAPH_SUPPORT_FINALIZE_DESERIALIZED_GRAPH`: `graphFinalize` may be called on a
/// graph retrieved from a binary.
pub const PROPERTY_GRAPH_SUPPORT_FINALIZE_DESERIALIZED_GRAPH: PropertyKey = PROPERTY_GROUP_GRAPH + 18;
/// `QNN_PROPERTY_GRAPH_SUPPORT_CUSTOM_PROPERTY`: `graphGetProperty` is available.
pub const PROPERTY_GRAPH_SUPPORT_CUSTOM_PROPERTY: PropertyKey = PROPERTY_GROUP_GRAPH + 19;
/// `QNN_PROPERTY_GRAPH_SUPPORT_EARLY_TERMINATION`: `graphExecute` may end with
/// `QNN_GRAPH_ERROR_EARLY_TERMINATION`.
pub const PROPERTY_GRAPH_SUPPORT_EARLY_TERMINATION: PropertyKey = PROPERTY_GROUP_GRAPH + 20;
/// `QNN_PROPERTY_TENSOR_SUPPORT_MEMHANDLE_TYPE`.
pub const PROPERTY_TENSOR_SUPPORT_MEMHANDLE_TYPE: PropertyKey = PROPERTY_GROUP_TENSOR + 1;
/// `QNN_PROPERTY_PROFILE_SUPPORTS_EXTENDED_EVENT`.
pub const PROPERTY_PROFILE_SUPPORTS_EXTENDED_EVENT: PropertyKey = PROPERTY_GROUP_PROFILE + 3;
/// `QNN_PROPERTY_DEVICE_SUPPORT_INFRASTRUCTURE`.
pub const PROPERTY_DEVICE_SUPPORT_INFRASTRUCTURE: PropertyKey = PROPERTY_GROUP_DEVICE + 1;
