//! libQnnSystem: `QnnSystemInterface_t`, its function table, and context-binary metadata
//! (`QnnSystemContext_BinaryInfo_t`, `QnnSystemContext_GraphInfo_t`); the System Profile API's types are in
//! [`super::system_profile`].

use core::ffi::{c_char, c_void, CStr};

use super::interface::UntypedFn;
use super::system_profile::{CreateSerializationTargetFn, FreeSerializationTargetFn, SerializeEventDataFn};
use super::tensor::Tensor;
use super::types::{ContextBinarySize, ErrorHandle, LogCallback, LogHandle, LogLevel, Version};

/// `QnnSystemContext_Handle_t`.
pub type SystemContextHandle = *mut c_void;

/// The system API version whose table [`SystemInterfaceTable`] declares (1.7: 16 entries).
pub const DECLARED_SYSTEM_API: Version = Version::new(1, 7, 0);

/// The first system API version these declarations know to have the System Profile entries \[13\] to \[15\] of
/// [`SystemInterfaceTable`] (the headers do not say which minor introduced them; 1.7 has them). A table of an
/// older 1.x version may be shorter: those entries are read only from a provider of this version or later.
pub const SYSTEM_PROFILE_API: Version = Version::new(1, 7, 0);

/// Exported name of [`SystemInterfaceGetProvidersFn`] in libQnnSystem (for `dlsym`).
pub const SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL: &CStr = c"QnnSystemInterface_getProviders";

/// `QnnSystemInterface_getProviders(const QnnSystemInterface_t*** providerList,
/// uint32_t* numProviders)`.
pub type SystemInterfaceGetProvidersFn =
    unsafe extern "C" fn(provider_list: *mut *mut *const SystemInterface, num_providers: *mut u32) -> ErrorHandle;

/// `QnnSystemInterface_t`. As with [`crate::qnn::Interface`], the single-member versioned
/// union of C is declared as the plain field [`SystemInterface::table`].
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SystemInterface {
    /// `backendId`.
    pub backend_id: u32,
    /// `providerName` (e.g. `SYSTEM_QTI_AISW`).
    pub provider_name: *const c_char,
    /// `systemApiVersion`.
    pub system_api_version: Version,
    /// The function table (`QNN_SYSTEM_INTERFACE_VER_TYPE`).
    pub table: SystemInterfaceTable,
}

/// `QNN_SYSTEM_INTERFACE_VER_TYPE` (`QnnSystemInterface_ImplementationV1_7_t`), in documented
/// order (index in brackets).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct SystemInterfaceTable {
    /// \[0\] `systemContextCreate(sysCtxHandle)`.
    pub system_context_create: Option<unsafe extern "C" fn(handle: *mut SystemContextHandle) -> ErrorHandle>,
    /// \[1\] `systemContextGetBinaryInfo(sysCtxHandle, binaryBuffer, binaryBufferSize,
    /// binaryInfo, binaryInfoSize)`. The returned info is owned by the system context; do not
    /// rely on `binaryInfoSize` (recent libraries leave it 0).
    pub system_context_get_binary_info: Option<
        unsafe extern "C" fn(
            handle: SystemContextHandle,
            buffer: *mut c_void,
            buffer_size: u64,
            info: *mut *const BinaryInfo,
            info_size: *mut ContextBinarySize,
        ) -> ErrorHandle,
    >,
    /// \[2\] `systemContextGetMetaData(sysCtxHandle, binaryBuffer, binaryBufferSize, binaryInfo)`.
    pub system_context_get_meta_data: Option<
        unsafe extern "C" fn(
            handle: SystemContextHandle,
            buffer: *const c_void,
            buffer_size: u64,
            info: *mut *const BinaryInfo,
        ) -> ErrorHandle,
    >,
    /// \[3\] `systemContextFree(sysCtxHandle)`.
    pub system_context_free: Option<unsafe extern "C" fn(handle: SystemContextHandle) -> ErrorHandle>,
    /// \[4\] `systemTensorGetMemoryFootprint(tensor, footprint)` (tensor passed by value).
    pub system_tensor_get_memory_footprint:
        Option<unsafe extern "C" fn(tensor: Tensor, footprint: *mut u64) -> ErrorHandle>,
    /// \[5\] `systemLogCreate(callback, maxLogLevel, logger)`.
    pub system_log_create:
        Option<unsafe extern "C" fn(callback: LogCallback, max_level: LogLevel, logger: *mut LogHandle) -> ErrorHandle>,
    /// \[6\] `systemLogSetLogLevel(logger, maxLogLevel)`.
    pub system_log_set_log_level: Option<unsafe extern "C" fn(logger: LogHandle, max_level: LogLevel) -> ErrorHandle>,
    /// \[7\] `systemLogFree(logger)`.
    pub system_log_free: Option<unsafe extern "C" fn(logger: LogHandle) -> ErrorHandle>,
    /// \[8\] `systemDlcCreateFromFile` (untyped).
    pub system_dlc_create_from_file: UntypedFn,
    /// \[9\] `systemDlcCreateFromBinary` (untyped).
    pub system_dlc_create_from_binary: UntypedFn,
    /// \[10\] `systemDlcComposeGraphs` (untyped).
    pub system_dlc_compose_graphs: UntypedFn,
    /// \[11\] `systemDlcGetOpMappings` (untyped).
    pub system_dlc_get_op_mappings: UntypedFn,
    /// \[12\] `systemDlcFree` (untyped).
    pub system_dlc_free: UntypedFn,
    /// \[13\] `systemProfileCreateSerializationTarget(serializationTargetInfo, configs, numConfigs,
    /// serializationTarget)`.
    pub system_profile_create_serialization_target: Option<CreateSerializationTargetFn>,
    /// \[14\] `systemProfileSerializeEventData(serializationTarget, eventData, numEvents)`.
    pub system_profile_serialize_event_data: Option<SerializeEventDataFn>,
    /// \[15\] `systemProfileFreeSerializationTarget(serializationTarget)`.
    pub system_profile_free_serialization_target: Option<FreeSerializationTargetFn>,
}

/// Number of entries in [`SystemInterfaceTable`].
pub const SYSTEM_INTERFACE_TABLE_ENTRIES: usize = 16;

c_enum! {
    /// Selects the member of [`GraphInfo::v`].
    pub struct GraphInfoVersion = "QnnSystemContext_GraphInfoVersion_t" {
        V1 = 1 => "QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_1",
        V2 = 2 => "QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_2",
        V3 = 3 => "QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_3",
        UNDEFINED = 0x7FFF_FFFF => "QNN_SYSTEM_CONTEXT_GRAPH_INFO_UNDEFINED",
    }
}

/// `QnnSystemContext_GraphInfoV1_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GraphInfoV1 {
    /// `graphName`.
    pub graph_name: *const c_char,
    /// `numGraphInputs`.
    pub num_graph_inputs: u32,
    /// `graphInputs`.
    pub graph_inputs: *mut Tensor,
    /// `numGraphOutputs`.
    pub num_graph_outputs: u32,
    /// `graphOutputs`.
    pub graph_outputs: *mut Tensor,
}

/// `QnnSystemContext_GraphInfoV2_t`: [`GraphInfoV1`] plus updateable tensors.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GraphInfoV2 {
    /// `graphName`.
    pub graph_name: *const c_char,
    /// `numGraphInputs`.
    pub num_graph_inputs: u32,
    /// `graphInputs`.
    pub graph_inputs: *mut Tensor,
    /// `numGraphOutputs`.
    pub num_graph_outputs: u32,
    /// `graphOutputs`.
    pub graph_outputs: *mut Tensor,
    /// `numUpdateableTensors`.
    pub num_updateable_tensors: u32,
    /// `updateableTensors`.
    pub updateable_tensors: *mut Tensor,
}

/// `QnnSystemContext_GraphInfoV3_t`: [`GraphInfoV2`] plus blob info and an op range.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GraphInfoV3 {
    /// `graphName`.
    pub graph_name: *const c_char,
    /// `numGraphInputs`.
    pub num_graph_inputs: u32,
    /// `graphInputs`.
    pub graph_inputs: *mut Tensor,
    /// `numGraphOutputs`.
    pub num_graph_outputs: u32,
    /// `graphOutputs`.
    pub graph_outputs: *mut Tensor,
    /// `numUpdateableTensors`.
    pub num_updateable_tensors: u32,
    /// `updateableTensors`.
    pub updateable_tensors: *mut Tensor,
    /// `graphBlobInfoSize`.
    pub graph_blob_info_size: u32,
    /// `graphBlobInfo`.
    pub graph_blob_info: *mut c_void,
    /// `startOpIndex`.
    pub start_op_index: u32,
    /// `endOpIndex`.
    pub end_op_index: u32,
}

/// The anonymous union of `QnnSystemContext_GraphInfo_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union GraphInfoVersions {
    /// `graphInfoV1`.
    pub v1: GraphInfoV1,
    /// `graphInfoV2`.
    pub v2: GraphInfoV2,
    /// `graphInfoV3`.
    pub v3: GraphInfoV3,
}

/// `QnnSystemContext_GraphInfo_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct GraphInfo {
    /// `version`: selects the member of `v`.
    pub version: GraphInfoVersion,
    /// The anonymous union.
    pub v: GraphInfoVersions,
}

impl GraphInfo {
    /// The fields common to versions 1, 2 and 3 (each later version extends the previous one at
    /// the same offsets), or `None` for any other version.
    pub fn common(&self) -> Option<&GraphInfoV1> {
        match self.version {
            // SAFETY: V2 and V3 start with the V1 fields at the same offsets (checked at compile
            // time in `layout.rs`); all fields are plain data or raw pointers.
            GraphInfoVersion::V1 | GraphInfoVersion::V2 | GraphInfoVersion::V3 => Some(unsafe { &self.v.v1 }),
            _ => None,
        }
    }
}

c_enum! {
    /// Selects the member of [`BinaryInfo::v`].
    pub struct BinaryInfoVersion = "QnnSystemContext_BinaryInfoVersion_t" {
        V1 = 1 => "QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_1",
        V2 = 2 => "QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_2",
        V3 = 3 => "QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_3",
        UNDEFINED = 0x7FFF_FFFF => "QNN_SYSTEM_CONTEXT_BINARY_INFO_UNDEFINED",
    }
}

/// `QnnSystemContext_BinaryInfoV1_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BinaryInfoV1 {
    /// `backendId`.
    pub backend_id: u32,
    /// `buildId`.
    pub build_id: *const c_char,
    /// `coreApiVersion`.
    pub core_api_version: Version,
    /// `backendApiVersion`.
    pub backend_api_version: Version,
    /// `socVersion`.
    pub soc_version: *const c_char,
    /// `hwInfoBlobVersion`.
    pub hw_info_blob_version: Version,
    /// `contextBlobVersion`.
    pub context_blob_version: Version,
    /// `hwInfoBlobSize`.
    pub hw_info_blob_size: u32,
    /// `hwInfoBlob`.
    pub hw_info_blob: *mut c_void,
    /// `contextBlobSize`.
    pub context_blob_size: u64,
    /// `numContextTensors`.
    pub num_context_tensors: u32,
    /// `contextTensors`.
    pub context_tensors: *mut Tensor,
    /// `numGraphs`.
    pub num_graphs: u32,
    /// `graphs`.
    pub graphs: *mut GraphInfo,
}

/// `QnnSystemContext_BinaryInfoV2_t`: [`BinaryInfoV1`] plus platform info.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BinaryInfoV2 {
    /// `backendId`.
    pub backend_id: u32,
    /// `buildId`.
    pub build_id: *const c_char,
    /// `coreApiVersion`.
    pub core_api_version: Version,
    /// `backendApiVersion`.
    pub backend_api_version: Version,
    /// `socVersion`.
    pub soc_version: *const c_char,
    /// `hwInfoBlobVersion`.
    pub hw_info_blob_version: Version,
    /// `contextBlobVersion`.
    pub context_blob_version: Version,
    /// `hwInfoBlobSize`.
    pub hw_info_blob_size: u32,
    /// `hwInfoBlob`.
    pub hw_info_blob: *mut c_void,
    /// `contextBlobSize`.
    pub context_blob_size: u64,
    /// `numContextTensors`.
    pub num_context_tensors: u32,
    /// `contextTensors`.
    pub context_tensors: *mut Tensor,
    /// `numGraphs`.
    pub num_graphs: u32,
    /// `graphs`.
    pub graphs: *mut GraphInfo,
    /// `platformInfo` (`QnnDevice_PlatformInfo_t*`).
    pub platform_info: *mut c_void,
}

/// `QnnSystemContext_BinaryInfoV3_t`: drops the hardware-info blob, adds context metadata and
/// the SoC model. Returned by the 2.51 library.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BinaryInfoV3 {
    /// `backendId`.
    pub backend_id: u32,
    /// `buildId`.
    pub build_id: *const c_char,
    /// `coreApiVersion`.
    pub core_api_version: Version,
    /// `backendApiVersion`.
    pub backend_api_version: Version,
    /// `socVersion`.
    pub soc_version: *const c_char,
    /// `contextBlobVersion`.
    pub context_blob_version: Version,
    /// `contextBlobSize`.
    pub context_blob_size: u64,
    /// `numContextTensors`.
    pub num_context_tensors: u32,
    /// `contextTensors`.
    pub context_tensors: *mut Tensor,
    /// `numGraphs`.
    pub num_graphs: u32,
    /// `graphs`.
    pub graphs: *mut GraphInfo,
    /// `platformInfo` (`QnnDevice_PlatformInfo_t*`).
    pub platform_info: *mut c_void,
    /// `contextMetadataSize`.
    pub context_metadata_size: u32,
    /// `contextMetadata`.
    pub context_metadata: *mut c_void,
    /// `socModel` (a `Qnn_SocModel_t` value).
    pub soc_model: u32,
}

/// The anonymous union of `QnnSystemContext_BinaryInfo_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union BinaryInfoVersions {
    /// `contextBinaryInfoV1`.
    pub v1: BinaryInfoV1,
    /// `contextBinaryInfoV2`.
    pub v2: BinaryInfoV2,
    /// `contextBinaryInfoV3`.
    pub v3: BinaryInfoV3,
}

/// `QnnSystemContext_BinaryInfo_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct BinaryInfo {
    /// `version`: selects the member of `v`.
    pub version: BinaryInfoVersion,
    /// The anonymous union.
    pub v: BinaryInfoVersions,
}

/// The graphs of a context binary, read from whichever [`BinaryInfo`] version is present.
#[derive(Clone, Copy, Debug)]
pub struct BinaryGraphs {
    /// `backendId` recorded in the binary.
    pub backend_id: u32,
    /// `coreApiVersion` recorded in the binary.
    pub core_api_version: Version,
    /// Number of entries at `graphs`.
    pub num_graphs: u32,
    /// The graph descriptions (owned by the system context).
    pub graphs: *mut GraphInfo,
}

impl BinaryInfo {
    /// Backend id, core API version and graph list, for versions 1 to 3; `None` otherwise.
    pub fn graphs(&self) -> Option<BinaryGraphs> {
        // SAFETY: each arm reads the member selected by `version`; all fields are plain data.
        unsafe {
            match self.version {
                BinaryInfoVersion::V1 => Some(BinaryGraphs {
                    backend_id: self.v.v1.backend_id,
                    core_api_version: self.v.v1.core_api_version,
                    num_graphs: self.v.v1.num_graphs,
                    graphs: self.v.v1.graphs,
                }),
                BinaryInfoVersion::V2 => Some(BinaryGraphs {
                    backend_id: self.v.v2.backend_id,
                    core_api_version: self.v.v2.core_api_version,
                    num_graphs: self.v.v2.num_graphs,
                    graphs: self.v.v2.graphs,
                }),
                BinaryInfoVersion::V3 => Some(BinaryGraphs {
                    backend_id: self.v.v3.backend_id,
                    core_api_version: self.v.v3.core_api_version,
                    num_graphs: self.v.v3.num_graphs,
                    graphs: self.v.v3.graphs,
                }),
                _ => None,
            }
        }
    }
}

/// What a context binary records about the backend, API versions and SoC it was prepared for, read from whichever
/// [`BinaryInfo`] version is present. The strings belong to the system context that answered.
#[derive(Clone, Copy, Debug)]
pub struct BinaryVersions {
    /// The [`BinaryInfo::version`] the library answered with (1, 2 or 3).
    pub info_version: u32,
    /// `backendId`.
    pub backend_id: u32,
    /// `buildId` (may be null).
    pub build_id: *const c_char,
    /// `coreApiVersion`.
    pub core_api_version: Version,
    /// `backendApiVersion`.
    pub backend_api_version: Version,
    /// `socVersion` (may be null).
    pub soc_version: *const c_char,
    /// `hwInfoBlobVersion` (versions 1 and 2 only).
    pub hw_info_blob_version: Option<Version>,
    /// `contextBlobVersion`.
    pub context_blob_version: Version,
    /// `contextBlobSize`.
    pub context_blob_size: u64,
    /// `numContextTensors`.
    pub num_context_tensors: u32,
    /// `socModel` (version 3 only).
    pub soc_model: Option<u32>,
}

impl BinaryInfo {
    /// The recorded backend, versions and SoC, for versions 1 to 3; `None` otherwise.
    pub fn versions(&self) -> Option<BinaryVersions> {
        // SAFETY: each arm reads the member selected by `version`; all fields are plain data or raw pointers.
        unsafe {
            match self.version {
                BinaryInfoVersion::V1 => {
                    let v1 = &self.v.v1;
                    Some(BinaryVersions {
                        info_version: 1,
                        backend_id: v1.backend_id,
                        build_id: v1.build_id,
                        core_api_version: v1.core_api_version,
                        backend_api_version: v1.backend_api_version,
                        soc_version: v1.soc_version,
                        hw_info_blob_version: Some(v1.hw_info_blob_version),
                        context_blob_version: v1.context_blob_version,
                        context_blob_size: v1.context_blob_size,
                        num_context_tensors: v1.num_context_tensors,
                        soc_model: None,
                    })
                }
                BinaryInfoVersion::V2 => {
                    let v2 = &self.v.v2;
                    Some(BinaryVersions {
                        info_version: 2,
                        backend_id: v2.backend_id,
                        build_id: v2.build_id,
                        core_api_version: v2.core_api_version,
                        backend_api_version: v2.backend_api_version,
                        soc_version: v2.soc_version,
                        hw_info_blob_version: Some(v2.hw_info_blob_version),
                        context_blob_version: v2.context_blob_version,
                        context_blob_size: v2.context_blob_size,
                        num_context_tensors: v2.num_context_tensors,
                        soc_model: None,
                    })
                }
                BinaryInfoVersion::V3 => {
                    let v3 = &self.v.v3;
                    Some(BinaryVersions {
                        info_version: 3,
                        backend_id: v3.backend_id,
                        build_id: v3.build_id,
                        core_api_version: v3.core_api_version,
                        backend_api_version: v3.backend_api_version,
                        soc_version: v3.soc_version,
                        hw_info_blob_version: None,
                        context_blob_version: v3.context_blob_version,
                        context_blob_size: v3.context_blob_size,
                        num_context_tensors: v3.num_context_tensors,
                        soc_model: Some(v3.soc_model),
                    })
                }
                _ => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ptr::{null, null_mut};

    const BUILD: &CStr = c"v2.0";

    #[test]
    fn versions_come_from_the_member_the_version_selects() {
        let v1 = BinaryInfoV1 {
            backend_id: 12,
            build_id: BUILD.as_ptr(),
            core_api_version: Version::new(2, 30, 0),
            backend_api_version: Version::new(2, 26, 1),
            soc_version: null(),
            hw_info_blob_version: Version::new(1, 2, 3),
            context_blob_version: Version::new(4, 0, 6),
            hw_info_blob_size: 0,
            hw_info_blob: null_mut(),
            context_blob_size: 4096,
            num_context_tensors: 2,
            context_tensors: null_mut(),
            num_graphs: 0,
            graphs: null_mut(),
        };
        let info = BinaryInfo { version: BinaryInfoVersion::V1, v: BinaryInfoVersions { v1 } };
        let versions = info.versions().unwrap();
        assert_eq!((versions.info_version, versions.backend_id, versions.build_id), (1, 12, BUILD.as_ptr()));
        assert_eq!(
            (versions.core_api_version, versions.backend_api_version),
            (v1.core_api_version, v1.backend_api_version)
        );
        assert_eq!((versions.hw_info_blob_version, versions.soc_model), (Some(Version::new(1, 2, 3)), None));
        assert_eq!(
            (versions.context_blob_version, versions.context_blob_size, versions.num_context_tensors),
            (v1.context_blob_version, 4096, 2)
        );

        let v3 = BinaryInfoV3 {
            backend_id: 6,
            build_id: null(),
            core_api_version: Version::new(2, 40, 0),
            backend_api_version: Version::new(5, 51, 0),
            soc_version: BUILD.as_ptr(),
            context_blob_version: Version::new(4, 0, 6),
            context_blob_size: 77824,
            num_context_tensors: 0,
            context_tensors: null_mut(),
            num_graphs: 0,
            graphs: null_mut(),
            platform_info: null_mut(),
            context_metadata_size: 0,
            context_metadata: null_mut(),
            soc_model: 69,
        };
        let info = BinaryInfo { version: BinaryInfoVersion::V3, v: BinaryInfoVersions { v3 } };
        let versions = info.versions().unwrap();
        assert_eq!((versions.info_version, versions.backend_id, versions.soc_version), (3, 6, BUILD.as_ptr()));
        assert_eq!(
            (versions.hw_info_blob_version, versions.soc_model, versions.context_blob_size),
            (None, Some(69), 77824)
        );
        let unknown = BinaryInfo { version: BinaryInfoVersion::UNDEFINED, v: BinaryInfoVersions { v3 } };
        assert!(unknown.versions().is_none());
    }
}
