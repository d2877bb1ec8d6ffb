//! QNN op packages (`QnnOpPackage.h`): the interface a package's provider fills in (versions 1.4 and 2.0) and the
//! description of the package its `getInfo` hands out. Registered with `backendRegisterOpPackage` (entry \[5\] of
//! [`super::InterfaceTable`]).

use core::ffi::{c_char, c_void};

use super::interface::UntypedFn;
use super::types::{ApiVersion, ErrorHandle, Handle, LogCallback, LogLevel, Version};

/// `Qnn_OpPackageHandle_t` (interface 2.0).
pub type OpPackageHandle = Handle;
/// `QnnOpPackage_GlobalInfrastructure_t`: the backend's object handed to `init` / `create` (opaque).
pub type GlobalInfrastructure = *mut c_void;
/// `QnnOpPackage_GraphInfrastructure_t` (opaque).
pub type GraphInfrastructure = *mut c_void;
/// `QnnOpPackage_OpImpl_t` (opaque).
pub type OpImpl = *mut c_void;
/// `QnnOpPackage_Node_t` (opaque).
pub type Node = *mut c_void;
/// `QnnOpPackage_OperationInfo_t` (opaque, backend-defined).
pub type OperationInfo = *mut c_void;
/// `QnnOpPackage_Optimization_t` (opaque, backend-defined).
pub type Optimization = *mut c_void;

/// `QNN_OP_PACKAGE_API_VERSION_1_4_0`: the interface [`ImplementationV1_4`] implements.
pub const INTERFACE_VERSION_1_4: Version = Version::new(1, 4, 0);
/// `QNN_OP_PACKAGE_API_VERSION_2_0_0`: the interface [`ImplementationV2_0`] implements.
pub const INTERFACE_VERSION_2_0: Version = Version::new(2, 0, 0);
/// `QNN_OP_PACKAGE_RESERVED_INFO_SIZE`: reserved words at the end of [`Info`].
pub const RESERVED_INFO_SIZE: usize = 12;

/// `QnnOpPackage_GetInfoFn_t`: `getInfo(const QnnOpPackage_Info_t** info)`; the info is the package's until
/// terminate / free.
pub type GetInfoFn = unsafe extern "C" fn(info: *mut *const Info) -> ErrorHandle;

/// `QnnOpPackage_ImplementationV1_4_t`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
#[allow(non_camel_case_types)] // QNN's version name
pub struct ImplementationV1_4 {
    /// `init(infrastructure)`: before any other call.
    pub init: Option<unsafe extern "C" fn(infrastructure: GlobalInfrastructure) -> ErrorHandle>,
    /// `terminate()`.
    pub terminate: Option<unsafe extern "C" fn() -> ErrorHandle>,
    /// `getInfo(info)`.
    pub get_info: Option<GetInfoFn>,
    /// `validateOpConfig` (untyped: takes `Qnn_OpConfig_t` by value).
    pub validate_op_config: UntypedFn,
    /// `createOpImpl(graphInfrastructure, node, opImpl)`.
    pub create_op_impl:
        Option<unsafe extern "C" fn(graph: GraphInfrastructure, node: Node, op_impl: *mut OpImpl) -> ErrorHandle>,
    /// `freeOpImpl(opImpl)`.
    pub free_op_impl: Option<unsafe extern "C" fn(op_impl: OpImpl) -> ErrorHandle>,
    /// `logInitialize(callback, maxLogLevel)`. See [`LogCallback`] about `va_list`.
    pub log_initialize: Option<unsafe extern "C" fn(callback: LogCallback, max_level: LogLevel) -> ErrorHandle>,
    /// `logSetLevel(maxLogLevel)`.
    pub log_set_level: Option<unsafe extern "C" fn(max_level: LogLevel) -> ErrorHandle>,
    /// `logTerminate()`.
    pub log_terminate: Option<unsafe extern "C" fn() -> ErrorHandle>,
}

/// `QnnOpPackage_ImplementationV2_0_t`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
#[allow(non_camel_case_types)] // QNN's version name
pub struct ImplementationV2_0 {
    /// `create(infrastructure, callback, maxLogLevel, opPackage)`.
    pub create: Option<
        unsafe extern "C" fn(
            infrastructure: GlobalInfrastructure,
            callback: LogCallback,
            max_level: LogLevel,
            package: *mut OpPackageHandle,
        ) -> ErrorHandle,
    >,
    /// `getInfo(info)`.
    pub get_info: Option<GetInfoFn>,
    /// `validateOpConfig` (untyped: takes `Qnn_OpConfig_t` by value).
    pub validate_op_config: UntypedFn,
    /// `createOpImpl(opPackage, graphInfrastructure, node, opImpl)`.
    pub create_op_impl: Option<
        unsafe extern "C" fn(
            package: OpPackageHandle,
            graph: GraphInfrastructure,
            node: Node,
            op_impl: *mut OpImpl,
        ) -> ErrorHandle,
    >,
    /// `freeOpImpl(opPackage, opImpl)`.
    pub free_op_impl: Option<unsafe extern "C" fn(package: OpPackageHandle, op_impl: OpImpl) -> ErrorHandle>,
    /// `logSetLevel(opPackage, maxLogLevel)`.
    pub log_set_level: Option<unsafe extern "C" fn(package: OpPackageHandle, max_level: LogLevel) -> ErrorHandle>,
    /// `free(opPackage)`.
    pub free: Option<unsafe extern "C" fn(package: OpPackageHandle) -> ErrorHandle>,
}

/// The implementation union of [`Interface`]: `interfaceVersion` says which member is valid.
#[repr(C)]
#[derive(Clone, Copy)]
pub union Implementation {
    /// Interface 1.x.
    pub v1_4: ImplementationV1_4,
    /// Interface 2.x.
    pub v2_0: ImplementationV2_0,
}

/// `QnnOpPackage_Interface_t`: what a package's interface provider fills in.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Interface {
    /// `interfaceVersion`: 1.4 selects [`Implementation::v1_4`], 2.0 [`Implementation::v2_0`].
    pub interface_version: Version,
    /// The implementation (an anonymous union in C).
    pub implementation: Implementation,
}

impl Interface {
    /// An interface of version 1.4 with every entry null (`QNN_OP_PACKAGE_INTERFACE_INIT`).
    pub const EMPTY: Interface = Interface {
        interface_version: INTERFACE_VERSION_1_4,
        implementation: Implementation {
            v1_4: ImplementationV1_4 {
                init: None,
                terminate: None,
                get_info: None,
                validate_op_config: None,
                create_op_impl: None,
                free_op_impl: None,
                log_initialize: None,
                log_set_level: None,
                log_terminate: None,
            },
        },
    };
}

/// `QnnOpPackage_InterfaceProvider_t`: the package function `backendRegisterOpPackage` names, which fills in the
/// interface.
pub type InterfaceProviderFn = unsafe extern "C" fn(interface: *mut Interface) -> ErrorHandle;

/// `QnnOpPackage_Info_t`: what a package provides.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Info {
    /// `packageName`: not null nor empty.
    pub package_name: *const c_char,
    /// `operationNames`: `num_operations` names, not null.
    pub operation_names: *const *const c_char,
    /// `operationInfo`: null, or `num_operations` backend-defined entries.
    pub operation_info: *const OperationInfo,
    /// `numOperations`.
    pub num_operations: u32,
    /// `optimizations`: null, or `num_optimizations` backend-defined entries.
    pub optimizations: *const Optimization,
    /// `numOptimizations`.
    pub num_optimizations: u32,
    /// `sdkBuildId` (may be null).
    pub sdk_build_id: *const c_char,
    /// `sdkApiVersion` (may be null).
    pub sdk_api_version: *const ApiVersion,
    /// `packageInfo`: `const QnnOpPackage_PackageInfo_t*` (may be null; opaque here).
    pub package_info: *const c_void,
    /// `opsetVersion` (may be null).
    pub opset_version: *const Version,
    /// `reserved`: zero.
    pub reserved: [usize; RESERVED_INFO_SIZE],
}

// SAFETY: `Info` only holds raw pointers and numbers and never dereferences them itself (reading through them is
// unsafe wherever it happens); sharing one between threads shares nothing else. Packages keep theirs in statics.
unsafe impl Sync for Info {}
