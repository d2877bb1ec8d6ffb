//! The backend library's entry point: `QnnInterface_t` and its 71-entry function table.
//!
//! The table order is that of QNN core API 2.30/2.32 (verified against a 2.40 library). Core API
//! 2.7 used a different order, and versions between 2.7 and 2.30 are unverified, so refuse
//! providers older than [`MIN_VERIFIED_CORE_API`] (see [`core_api_is_verified`]).
//!
//! Entries a runner calls have full signatures. The others are typed [`UntypedFn`]: a function
//! pointer of the same size, to be transmuted to the right signature before any call.

use core::ffi::{c_char, c_void, CStr};

use super::config::{
    BackendConfig, BackendProperty, ContextConfig, ContextProperty, GraphConfig, GraphProperty, PropertyKey,
};
use super::profile::{ProfileEventData, ProfileEventId, ProfileLevel};
use super::tensor::Tensor;
use super::types::{
    ApiVersion, BackendHandle, ContextBinarySize, ContextHandle, DeviceHandle, ErrorHandle, GraphHandle, LogCallback,
    LogHandle, LogLevel, MemHandle, NotifyFn, ProfileHandle, SignalHandle, Version,
};

/// A table entry declared without its signature (same size and ABI as any C function pointer).
pub type UntypedFn = Option<unsafe extern "C" fn()>;

/// The core API version whose complete table [`InterfaceTable`] declares (2.32: 71 entries).
pub const DECLARED_CORE_API: Version = Version::new(2, 32, 0);

/// The oldest core API whose table order was verified to match [`InterfaceTable`] (2.30).
pub const MIN_VERIFIED_CORE_API: Version = Version::new(2, 30, 0);

/// Whether a provider's core API uses the table order declared here: major 2 and minor at least
/// [`MIN_VERIFIED_CORE_API`]'s. Entries added after the provider's own minor (the table grows at
/// its end) must not be read from it.
pub const fn core_api_is_verified(core: Version) -> bool {
    core.major == MIN_VERIFIED_CORE_API.major && core.minor >= MIN_VERIFIED_CORE_API.minor
}

/// Exported name of [`InterfaceGetProvidersFn`] in a backend library (for `dlsym`).
pub const INTERFACE_GET_PROVIDERS_SYMBOL: &CStr = c"QnnInterface_getProviders";

/// `QnnInterface_getProviders(const QnnInterface_t*** providerList, uint32_t* numProviders)`:
/// on success `*provider_list` points at `*num_providers` provider pointers owned by the library.
pub type InterfaceGetProvidersFn =
    unsafe extern "C" fn(provider_list: *mut *mut *const Interface, num_providers: *mut u32) -> ErrorHandle;

/// `QnnInterface_t`: one provider exposed by a backend library.
///
/// In C the table sits in a single-member anonymous union named after the API version
/// (`v2_32`); it is declared here as the plain field [`Interface::table`].
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Interface {
    /// `backendId` (e.g. 6 for HTP, 12 for LPAI).
    pub backend_id: u32,
    /// `providerName` (NUL-terminated, e.g. `LPAI_QTI_AISW`).
    pub provider_name: *const c_char,
    /// `apiVersion`: core and backend API versions of this provider.
    pub api_version: ApiVersion,
    /// The function table (`QNN_INTERFACE_VER_TYPE`).
    pub table: InterfaceTable,
}

/// `graphExecute(graph, inputs, numInputs, outputs, numOutputs, profile, signal)`, as the interface table holds it.
pub type GraphExecuteFn = unsafe extern "C" fn(
    graph: GraphHandle,
    inputs: *const Tensor,
    num_inputs: u32,
    outputs: *mut Tensor,
    num_outputs: u32,
    profile: ProfileHandle,
    signal: SignalHandle,
) -> ErrorHandle;

/// `graphExecuteAsync(graph, inputs, numInputs, outputs, numOutputs, profile, signal, notifyFn, notifyParam)`: queues
/// an execution on the graph's queue (the one graphExecute uses too); on success `notify_fn` (unless null) is later
/// called with `notify_param` and the execution's result; a failed call never calls it.
pub type GraphExecuteAsyncFn = unsafe extern "C" fn(
    graph: GraphHandle,
    inputs: *const Tensor,
    num_inputs: u32,
    outputs: *mut Tensor,
    num_outputs: u32,
    profile: ProfileHandle,
    signal: SignalHandle,
    notify_fn: NotifyFn,
    notify_param: *mut c_void,
) -> ErrorHandle;

/// `QNN_INTERFACE_VER_TYPE` (`QnnInterface_ImplementationV2_32_t`): the function table, in
/// documented order (the index of each entry is given in brackets).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct InterfaceTable {
    /// \[0\] `propertyHasCapability(key)`: 0 supported, 1000 not supported.
    pub property_has_capability: Option<unsafe extern "C" fn(key: PropertyKey) -> ErrorHandle>,
    /// \[1\] `backendCreate(logger, config, backend)`.
    pub backend_create: Option<
        unsafe extern "C" fn(
            logger: LogHandle,
            config: *const *const BackendConfig,
            backend: *mut BackendHandle,
        ) -> ErrorHandle,
    >,
    /// \[2\] `backendSetConfig(backend, config)`.
    pub backend_set_config:
        Option<unsafe extern "C" fn(backend: BackendHandle, config: *const *const BackendConfig) -> ErrorHandle>,
    /// \[3\] `backendGetApiVersion(pVersion)`.
    pub backend_get_api_version: Option<unsafe extern "C" fn(version: *mut ApiVersion) -> ErrorHandle>,
    /// \[4\] `backendGetBuildId(id)`.
    pub backend_get_build_id: Option<unsafe extern "C" fn(id: *mut *const c_char) -> ErrorHandle>,
    /// \[5\] `backendRegisterOpPackage(backend, packagePath, interfaceProvider, target)`.
    pub backend_register_op_package: Option<
        unsafe extern "C" fn(
            backend: BackendHandle,
            package_path: *const c_char,
            interface_provider: *const c_char,
            target: *const c_char,
        ) -> ErrorHandle,
    >,
    /// \[6\] `backendGetSupportedOperations` (untyped).
    pub backend_get_supported_operations: UntypedFn,
    /// \[7\] `backendValidateOpConfig` (untyped: takes `Qnn_OpConfig_t` by value).
    pub backend_validate_op_config: UntypedFn,
    /// \[8\] `backendFree(backend)`.
    pub backend_free: Option<unsafe extern "C" fn(backend: BackendHandle) -> ErrorHandle>,
    /// \[9\] `contextCreate(backend, device, config, context)`.
    pub context_create: Option<
        unsafe extern "C" fn(
            backend: BackendHandle,
            device: DeviceHandle,
            config: *const *const ContextConfig,
            context: *mut ContextHandle,
        ) -> ErrorHandle,
    >,
    /// \[10\] `contextSetConfig(context, config)`.
    pub context_set_config:
        Option<unsafe extern "C" fn(context: ContextHandle, config: *const *const ContextConfig) -> ErrorHandle>,
    /// \[11\] `contextGetBinarySize(context, binaryBufferSize)`.
    pub context_get_binary_size:
        Option<unsafe extern "C" fn(context: ContextHandle, size: *mut ContextBinarySize) -> ErrorHandle>,
    /// \[12\] `contextGetBinary(context, binaryBuffer, binaryBufferSize, writtenBufferSize)`.
    pub context_get_binary: Option<
        unsafe extern "C" fn(
            context: ContextHandle,
            buffer: *mut c_void,
            buffer_size: ContextBinarySize,
            written: *mut ContextBinarySize,
        ) -> ErrorHandle,
    >,
    /// \[13\] `contextCreateFromBinary(backend, device, config, binaryBuffer, binaryBufferSize,
    /// context, profile)`.
    pub context_create_from_binary: Option<
        unsafe extern "C" fn(
            backend: BackendHandle,
            device: DeviceHandle,
            config: *const *const ContextConfig,
            buffer: *const c_void,
            buffer_size: ContextBinarySize,
            context: *mut ContextHandle,
            profile: ProfileHandle,
        ) -> ErrorHandle,
    >,
    /// \[14\] `contextFree(context, profile)`.
    pub context_free: Option<unsafe extern "C" fn(context: ContextHandle, profile: ProfileHandle) -> ErrorHandle>,
    /// \[15\] `graphCreate(context, graphName, config, graph)`.
    pub graph_create: Option<
        unsafe extern "C" fn(
            context: ContextHandle,
            name: *const c_char,
            config: *const *const GraphConfig,
            graph: *mut GraphHandle,
        ) -> ErrorHandle,
    >,
    /// \[16\] `graphCreateSubgraph(graph, graphName, subgraph)`.
    pub graph_create_subgraph: Option<
        unsafe extern "C" fn(graph: GraphHandle, name: *const c_char, subgraph: *mut GraphHandle) -> ErrorHandle,
    >,
    /// \[17\] `graphSetConfig(graph, config)`.
    pub graph_set_config:
        Option<unsafe extern "C" fn(graph: GraphHandle, config: *const *const GraphConfig) -> ErrorHandle>,
    /// \[18\] `graphAddNode` (untyped: takes `Qnn_OpConfig_t` by value).
    pub graph_add_node: UntypedFn,
    /// \[19\] `graphFinalize(graph, profile, signal)`.
    pub graph_finalize:
        Option<unsafe extern "C" fn(graph: GraphHandle, profile: ProfileHandle, signal: SignalHandle) -> ErrorHandle>,
    /// \[20\] `graphRetrieve(context, graphName, graph)`.
    pub graph_retrieve: Option<
        unsafe extern "C" fn(context: ContextHandle, name: *const c_char, graph: *mut GraphHandle) -> ErrorHandle,
    >,
    /// \[21\] `graphExecute(graph, inputs, numInputs, outputs, numOutputs, profile, signal)`.
    pub graph_execute: Option<GraphExecuteFn>,
    /// \[22\] `graphExecuteAsync(graph, inputs, numInputs, outputs, numOutputs, profile, signal, notifyFn,
    /// notifyParam)`.
    pub graph_execute_async: Option<GraphExecuteAsyncFn>,
    /// \[23\] `tensorCreateContextTensor(context, tensor)`.
    pub tensor_create_context_tensor:
        Option<unsafe extern "C" fn(context: ContextHandle, tensor: *mut Tensor) -> ErrorHandle>,
    /// \[24\] `tensorCreateGraphTensor(graph, tensor)`.
    pub tensor_create_graph_tensor:
        Option<unsafe extern "C" fn(graph: GraphHandle, tensor: *mut Tensor) -> ErrorHandle>,
    /// \[25\] `logCreate(callback, maxLogLevel, logger)`. See [`LogCallback`] about `va_list`.
    pub log_create:
        Option<unsafe extern "C" fn(callback: LogCallback, max_level: LogLevel, logger: *mut LogHandle) -> ErrorHandle>,
    /// \[26\] `logSetLogLevel(logger, maxLogLevel)`.
    pub log_set_log_level: Option<unsafe extern "C" fn(logger: LogHandle, max_level: LogLevel) -> ErrorHandle>,
    /// \[27\] `logFree(logger)`.
    pub log_free: Option<unsafe extern "C" fn(logger: LogHandle) -> ErrorHandle>,
    /// \[28\] `profileCreate(backend, level, profile)`.
    pub profile_create: Option<
        unsafe extern "C" fn(backend: BackendHandle, level: ProfileLevel, profile: *mut ProfileHandle) -> ErrorHandle,
    >,
    /// \[29\] `profileSetConfig` (untyped).
    pub profile_set_config: UntypedFn,
    /// \[30\] `profileGetEvents(profile, profileEventIds, numEvents)`.
    pub profile_get_events: Option<
        unsafe extern "C" fn(
            profile: ProfileHandle,
            event_ids: *mut *const ProfileEventId,
            num_events: *mut u32,
        ) -> ErrorHandle,
    >,
    /// \[31\] `profileGetSubEvents(eventId, subEventIds, numSubEvents)`.
    pub profile_get_sub_events: Option<
        unsafe extern "C" fn(
            event_id: ProfileEventId,
            sub_event_ids: *mut *const ProfileEventId,
            num_sub_events: *mut u32,
        ) -> ErrorHandle,
    >,
    /// \[32\] `profileGetEventData(eventId, eventData)`.
    pub profile_get_event_data:
        Option<unsafe extern "C" fn(event_id: ProfileEventId, data: *mut ProfileEventData) -> ErrorHandle>,
    /// \[33\] `profileGetExtendedEventData` (untyped).
    pub profile_get_extended_event_data: UntypedFn,
    /// \[34\] `profileFree(profile)`.
    pub profile_free: Option<unsafe extern "C" fn(profile: ProfileHandle) -> ErrorHandle>,
    /// \[35\] `memRegister` (untyped).
    pub mem_register: UntypedFn,
    /// \[36\] `memDeRegister(memHandles, numHandles)`.
    pub mem_de_register: Option<unsafe extern "C" fn(handles: *const MemHandle, num_handles: u32) -> ErrorHandle>,
    /// \[37\] `deviceGetPlatformInfo` (untyped).
    pub device_get_platform_info: UntypedFn,
    /// \[38\] `deviceFreePlatformInfo` (untyped).
    pub device_free_platform_info: UntypedFn,
    /// \[39\] `deviceGetInfrastructure` (untyped).
    pub device_get_infrastructure: UntypedFn,
    /// \[40\] `deviceCreate` (untyped).
    pub device_create: UntypedFn,
    /// \[41\] `deviceSetConfig` (untyped).
    pub device_set_config: UntypedFn,
    /// \[42\] `deviceGetInfo` (untyped).
    pub device_get_info: UntypedFn,
    /// \[43\] `deviceFree(device)`.
    pub device_free: Option<unsafe extern "C" fn(device: DeviceHandle) -> ErrorHandle>,
    /// \[44\] `signalCreate` (untyped).
    pub signal_create: UntypedFn,
    /// \[45\] `signalSetConfig` (untyped).
    pub signal_set_config: UntypedFn,
    /// \[46\] `signalTrigger(signal)`.
    pub signal_trigger: Option<unsafe extern "C" fn(signal: SignalHandle) -> ErrorHandle>,
    /// \[47\] `signalFree(signal)`.
    pub signal_free: Option<unsafe extern "C" fn(signal: SignalHandle) -> ErrorHandle>,
    /// \[48\] `errorGetMessage(errorHandle, errorMessage)`: a backend-owned message.
    pub error_get_message: Option<unsafe extern "C" fn(error: ErrorHandle, message: *mut *const c_char) -> ErrorHandle>,
    /// \[49\] `errorGetVerboseMessage(errorHandle, errorMessage)`: free with entry 50.
    pub error_get_verbose_message:
        Option<unsafe extern "C" fn(error: ErrorHandle, message: *mut *const c_char) -> ErrorHandle>,
    /// \[50\] `errorFreeVerboseMessage(errorMessage)`.
    pub error_free_verbose_message: Option<unsafe extern "C" fn(message: *const c_char) -> ErrorHandle>,
    /// \[51\] `graphPrepareExecutionEnvironment` (untyped).
    pub graph_prepare_execution_environment: UntypedFn,
    /// \[52\] `graphReleaseExecutionEnvironment` (untyped).
    pub graph_release_execution_environment: UntypedFn,
    /// \[53\] `graphGetProperty(graph, properties)`.
    pub graph_get_property:
        Option<unsafe extern "C" fn(graph: GraphHandle, properties: *mut *mut GraphProperty) -> ErrorHandle>,
    /// \[54\] `contextValidateBinary(backend, device, config, binaryBuffer, binaryBufferSize)`.
    pub context_validate_binary: Option<
        unsafe extern "C" fn(
            backend: BackendHandle,
            device: DeviceHandle,
            config: *const *const ContextConfig,
            buffer: *const c_void,
            buffer_size: ContextBinarySize,
        ) -> ErrorHandle,
    >,
    /// \[55\] `contextCreateFromBinaryWithSignal(backend, device, config, binaryBuffer,
    /// binaryBufferSize, context, profile, signal)`.
    pub context_create_from_binary_with_signal: Option<
        unsafe extern "C" fn(
            backend: BackendHandle,
            device: DeviceHandle,
            config: *const *const ContextConfig,
            buffer: *const c_void,
            buffer_size: ContextBinarySize,
            context: *mut ContextHandle,
            profile: ProfileHandle,
            signal: SignalHandle,
        ) -> ErrorHandle,
    >,
    /// \[56\] `contextCreateFromBinaryListAsync` (untyped).
    pub context_create_from_binary_list_async: UntypedFn,
    /// \[57\] `tensorUpdateGraphTensors(graph, tensor, numTensors)`.
    pub tensor_update_graph_tensors: Option<
        unsafe extern "C" fn(graph: GraphHandle, tensors: *const *const Tensor, num_tensors: u64) -> ErrorHandle,
    >,
    /// \[58\] `tensorUpdateContextTensors(context, tensor, numTensors)`.
    pub tensor_update_context_tensors: Option<
        unsafe extern "C" fn(context: ContextHandle, tensors: *const *const Tensor, num_tensors: u64) -> ErrorHandle,
    >,
    /// \[59\] `contextGetBinarySectionSize(context, graph, section, binaryBufferSize)`.
    pub context_get_binary_section_size: Option<
        unsafe extern "C" fn(
            context: ContextHandle,
            graph: GraphHandle,
            section: u32,
            size: *mut ContextBinarySize,
        ) -> ErrorHandle,
    >,
    /// \[60\] `contextGetBinarySection` (untyped).
    pub context_get_binary_section: UntypedFn,
    /// \[61\] `contextApplyBinarySection` (untyped).
    pub context_apply_binary_section: UntypedFn,
    /// \[62\] `backendGetProperty(backendHandle, properties)`.
    pub backend_get_property:
        Option<unsafe extern "C" fn(backend: BackendHandle, properties: *mut *mut BackendProperty) -> ErrorHandle>,
    /// \[63\] `contextGetProperty(contextHandle, properties)`.
    pub context_get_property:
        Option<unsafe extern "C" fn(context: ContextHandle, properties: *mut *mut ContextProperty) -> ErrorHandle>,
    /// \[64\] `contextGetIncrementalBinary(context, binaryBuffer, startOffset,
    /// writtenBufferSize)`.
    pub context_get_incremental_binary: Option<
        unsafe extern "C" fn(
            context: ContextHandle,
            buffer: *mut *const c_void,
            start_offset: *mut ContextBinarySize,
            written: *mut ContextBinarySize,
        ) -> ErrorHandle,
    >,
    /// \[65\] `contextReleaseIncrementalBinary(context, binaryBuffer, startOffset)`.
    pub context_release_incremental_binary: Option<
        unsafe extern "C" fn(
            context: ContextHandle,
            buffer: *const c_void,
            start_offset: ContextBinarySize,
        ) -> ErrorHandle,
    >,
    /// \[66\] `contextFinalize(context, profile)`.
    pub context_finalize: Option<unsafe extern "C" fn(context: ContextHandle, profile: ProfileHandle) -> ErrorHandle>,
    /// \[67\] `globalConfigSet` (untyped).
    pub global_config_set: UntypedFn,
    /// \[68\] `contextCreateFromBinaryWithCallback` (untyped).
    pub context_create_from_binary_with_callback: UntypedFn,
    /// \[69\] `contextGetBinarySectionUpdate` (untyped).
    pub context_get_binary_section_update: UntypedFn,
    /// \[70\] `contextFreeBinarySectionUpdate` (untyped: takes `QnnContext_Buffer_t` by value).
    pub context_free_binary_section_update: UntypedFn,
}

/// Number of entries in [`InterfaceTable`].
pub const INTERFACE_TABLE_ENTRIES: usize = 71;
