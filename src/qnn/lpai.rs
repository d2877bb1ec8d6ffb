//! LPAI backend extensions (LPAI API 2.26): custom backend, context and graph configs and
//! properties, hardware info, memory types, performance and core-affinity settings.
//!
//! Each custom struct is passed through the generic `customConfig` / `customProperty` pointer
//! of the matching core struct ([`crate::qnn::BackendConfig`], [`crate::qnn::GraphConfig`],
//! [`crate::qnn::BackendProperty`], ...), and itself points at the option's value.

use core::ffi::{c_void, CStr};

use super::types::Version;

/// `QNN_BACKEND_ID_LPAI`.
pub const BACKEND_ID_LPAI: u32 = 12;
/// `QNN_BACKEND_ID_LPAI_ISLAND`: the island-mode variant of the LPAI backend.
pub const BACKEND_ID_LPAI_ISLAND: u32 = 16;
/// `QNN_LPAI_INTERFACE_PROVIDER_NAME`.
pub const PROVIDER_NAME: &CStr = c"LPAI_QTI_AISW";
/// `QNN_LPAI_API_VERSION_*`: the LPAI API these declarations follow.
pub const API_VERSION: Version = Version::new(2, 26, 0);

/// Every LPAI `*_UNDEFINED` enumerator.
pub const UNDEFINED: u32 = 0x7FFF_FFFF;

// ---------------------------------------------------------------------------------------------
// Backend
// ---------------------------------------------------------------------------------------------

c_enum! {
    /// Option of a [`BackendCustomConfig`].
    pub struct BackendConfigOption = "QnnLpaiBackend_CustomConfigOption_t" {
        HW_INFO = 0 => "QNN_LPAI_BACKEND_CUSTOM_CFG_HW_INFO",
        UNDEFINED = 0x7FFF_FFFF => "QNN_LPAI_BACKEND_CUSTOM_CFG_UNDEFINED",
    }
}

/// `QnnLpaiBackend_CustomConfig_t`: `config` points at the option's value (for `HW_INFO`, a
/// [`HwInfo`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BackendCustomConfig {
    /// `option`.
    pub option: BackendConfigOption,
    /// `config`.
    pub config: *mut c_void,
}

c_enum! {
    /// Where the LPAI backend runs.
    pub struct Target = "QnnLpaiBackend_Target_t" {
        X86 = 0 => "QNN_LPAI_BACKEND_TARGET_X86",
        ARM = 1 => "QNN_LPAI_BACKEND_TARGET_ARM",
        ADSP = 2 => "QNN_LPAI_BACKEND_TARGET_ADSP",
        TENSILICA = 3 => "QNN_LPAI_BACKEND_TARGET_TENSILICA",
        UNKNOWN = 0x7FFF_FFFF => "QNN_LPAI_BACKEND_TARGET_UNKNOWN",
    }
}

c_enum! {
    /// LPAI (eNPU) hardware version.
    pub struct HwVersion = "QnnLpaiBackend_HwVersion_t" {
        NA = 0 => "QNN_LPAI_BACKEND_HW_VERSION_NA",
        V1 = 1 => "QNN_LPAI_BACKEND_HW_VERSION_V1",
        V2 = 2 => "QNN_LPAI_BACKEND_HW_VERSION_V2",
        V3 = 3 => "QNN_LPAI_BACKEND_HW_VERSION_V3",
        V4 = 4 => "QNN_LPAI_BACKEND_HW_VERSION_V4",
        V5 = 5 => "QNN_LPAI_BACKEND_HW_VERSION_V5",
        V5_1 = 0x0001_0005 => "QNN_LPAI_BACKEND_HW_VERSION_V5_1",
        V6 = 6 => "QNN_LPAI_BACKEND_HW_VERSION_V6",
        V7 = 7 => "QNN_LPAI_BACKEND_HW_VERSION_V7",
        UNKNOWN = 0x7FFF_FFFF => "QNN_LPAI_BACKEND_HW_VERSION_UNKNOWN",
    }
    aliases {
        DEFAULT = 6 => "QNN_LPAI_BACKEND_HW_VERSION_DEFAULT",
    }
}

/// `QnnLpaiBackend_CustomConfigHwInfo_t`: value of the `HW_INFO` backend config.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HwInfo {
    /// `lpaiTarget`.
    pub lpai_target: Target,
    /// `hwVersion`.
    pub hw_version: HwVersion,
}

c_enum! {
    /// Option of a [`BackendCustomProperty`] (`backendGetProperty`).
    pub struct BackendPropertyOption = "QnnLpaiBackend_GetPropertyOption_t" {
        ALIGNMENT_REQ = 0 => "QNN_LPAI_BACKEND_GET_PROP_ALIGNMENT_REQ",
        REQUIRE_PERSISTENT_BINARY = 1 => "QNN_LPAI_BACKEND_GET_PROP_REQUIRE_PERSISTENT_BINARY",
        ENPU_CORE_NUM = 200 => "QNN_LPAI_BACKEND_GET_PROP_ENPU_CORE_NUM",
        ENPU_CORE_INFO = 300 => "QNN_LPAI_BACKEND_GET_PROP_ENPU_CORE_INFO",
        UNDEFINED = 0x7FFF_FFFF => "QNN_LPAI_BACKEND_GET_PROP_UNDEFINED",
    }
}

/// `QnnLpaiBackend_CustomProperty_t`: `property` points at storage the backend fills in —
/// a [`BufferAlignmentReq`] for `ALIGNMENT_REQ`, a C `bool` (one byte) for
/// `REQUIRE_PERSISTENT_BINARY`, an [`EnpuCoreNum`] for `ENPU_CORE_NUM`, an [`EnpuCoreInfo`] for
/// `ENPU_CORE_INFO`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BackendCustomProperty {
    /// `option`.
    pub option: BackendPropertyOption,
    /// `property`.
    pub property: *mut c_void,
}

/// `QnnLpaiBackend_BufferAlignmentReq_t`: alignment the binary, scratch, persistent and I/O
/// buffers must have.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferAlignmentReq {
    /// `startAddrAlignment` in bytes.
    pub start_addr_alignment: u32,
    /// `sizeAlignment` in bytes.
    pub size_alignment: u32,
}

/// `QnnLpaiBackend_eNPUCoreNum_t`.
pub type EnpuCoreNum = u32;

/// Most eNPU cores whose [`EnpuCoreInfo`] the runtime asks for and the probe report carries.
pub const MAX_ENPU_CORES: usize = 4;

/// `QnnLpaiBackend_eNPUCoreInfo_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnpuCoreInfo {
    /// `coreIndex`.
    pub core_index: u32,
    /// `macCnt`.
    pub mac_cnt: u32,
    /// `version`.
    pub version: u32,
}

// ---------------------------------------------------------------------------------------------
// Context
// ---------------------------------------------------------------------------------------------

c_enum! {
    /// Option of a [`ContextCustomConfig`].
    pub struct ContextConfigOption = "QnnLpaiContext_SetConfigOption_t" {
        MODEL_BUFFER_MEM_TYPE = 1 => "QNN_LPAI_CONTEXT_SET_CFG_MODEL_BUFFER_MEM_TYPE",
        ENABLE_ISLAND = 11 => "QNN_LPAI_CONTEXT_SET_CFG_ENABLE_ISLAND",
        UNDEFINED = 0x7FFF_FFFF => "QNN_LPAI_CONTEXT_SET_CFG_UNDEFINED",
    }
}

/// `QnnLpaiContext_CustomConfig_t`. For `ENABLE_ISLAND`, `config` is null (every graph in
/// island mode) or, in one config per graph, the graph's NUL-terminated name — not both.
/// For `MODEL_BUFFER_MEM_TYPE` it points at a [`MemType`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ContextCustomConfig {
    /// `option`.
    pub option: ContextConfigOption,
    /// `config`.
    pub config: *mut c_void,
}

// ---------------------------------------------------------------------------------------------
// Graph
// ---------------------------------------------------------------------------------------------

c_enum! {
    /// Option of a [`GraphCustomConfig`].
    pub struct GraphConfigOption = "QnnLpaiGraph_SetConfigOption_t" {
        SCRATCH_MEM = 1 => "QNN_LPAI_GRAPH_SET_CFG_SCRATCH_MEM",
        PERSISTENT_MEM = 101 => "QNN_LPAI_GRAPH_SET_CFG_PERSISTENT_MEM",
        PERF_CFG = 201 => "QNN_LPAI_GRAPH_SET_CFG_PERF_CFG",
        CORE_AFFINITY = 301 => "QNN_LPAI_GRAPH_SET_CFG_CORE_AFFINITY",
        PREPARE = 10001 => "QNN_LPAI_GRAPH_SET_CFG_PREPARE",
        UNDEFINED = 0x7FFF_FFFF => "QNN_LPAI_GRAPH_SET_CFG_UNDEFINED",
    }
}

/// `QnnLpaiGraph_CustomConfig_t`: `config` points at a [`GraphMem`] (`SCRATCH_MEM`,
/// `PERSISTENT_MEM`), a [`PerfCfg`] (`PERF_CFG`) or a [`CoreAffinity`] (`CORE_AFFINITY`).
/// `PREPARE` is for offline preparation only.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GraphCustomConfig {
    /// `option`.
    pub option: GraphConfigOption,
    /// `config`.
    pub config: *mut c_void,
}

c_enum! {
    /// Option of a [`GraphCustomProperty`] (`graphGetProperty`).
    pub struct GraphPropertyOption = "QnnLpaiGraph_GetPropertyOption_t" {
        SCRATCH_MEM_SIZE = 1 => "QNN_LPAI_GRAPH_GET_PROP_SCRATCH_MEM_SIZE",
        PERSISTENT_MEM_SIZE = 101 => "QNN_LPAI_GRAPH_GET_PROP_PERSISTENT_MEM_SIZE",
        UNDEFINED = 0x7FFF_FFFF => "QNN_LPAI_GRAPH_GET_PROP_UNDEFINED",
    }
}

/// `QnnLpaiGraph_CustomProperty_t`: `property` points at a `u32` the backend sets to the size.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GraphCustomProperty {
    /// `option`.
    pub option: GraphPropertyOption,
    /// `property`.
    pub property: *mut c_void,
}

c_enum! {
    /// Memory an LPAI buffer lives in.
    pub struct MemType = "QnnLpaiMem_MemType_t" {
        DDR = 1 => "QNN_LPAI_MEM_TYPE_DDR",
        LLC = 2 => "QNN_LPAI_MEM_TYPE_LLC",
        TCM = 3 => "QNN_LPAI_MEM_TYPE_TCM",
        PSRAM = 4 => "QNN_LPAI_MEM_TYPE_PSRAM",
        UNDEFINED = 0x7FFF_FFFF => "QNN_LPAI_MEM_TYPE_UNDEFINED",
    }
}

impl MemType {
    /// The names the settings take for the four memory types, in their order.
    pub const NAMES: [(&'static str, MemType); 4] =
        [("ddr", MemType::DDR), ("llc", MemType::LLC), ("tcm", MemType::TCM), ("psram", MemType::PSRAM)];

    /// The memory type a setting names (`ddr`, `llc`, `tcm`, `psram`).
    pub fn named(name: &[u8]) -> Option<MemType> {
        MemType::NAMES.iter().find(|(known, _)| known.as_bytes() == name).map(|&(_, memory)| memory)
    }

    /// The setting's name of one of the four memory types.
    pub fn name(self) -> Option<&'static str> {
        MemType::NAMES.iter().find(|(_, memory)| *memory == self).map(|&(name, _)| name)
    }
}

/// Where LPAI's two memory pools of a graph live (the `memType` of SCRATCH_MEM and PERSISTENT_MEM). In island mode
/// they must lie in memory that stays powered in island; which that is, only the device's documentation says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryPlacement {
    /// The scratch memory's type.
    pub scratch: MemType,
    /// The persistent memory's type.
    pub persistent: MemType,
}

impl MemoryPlacement {
    /// Both in DDR, as before the setting existed.
    pub const DEFAULT: MemoryPlacement = MemoryPlacement { scratch: MemType::DDR, persistent: MemType::DDR };
}

impl Default for MemoryPlacement {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// `QnnLpaiGraph_Mem_t`: a caller-allocated scratch or persistent buffer.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GraphMem {
    /// `memType`.
    pub mem_type: MemType,
    /// `size` in bytes.
    pub size: u32,
    /// `addr` (aligned as [`BufferAlignmentReq`] says).
    pub addr: *mut c_void,
}

c_enum! {
    /// Real-time class of a graph's client.
    pub struct ClientPerfType = "QnnLpaiGraph_ClientPerfType_t" {
        REAL_TIME = 1 => "QNN_LPAI_GRAPH_CLIENT_PERF_TYPE_REAL_TIME",
        NON_REAL_TIME = 2 => "QNN_LPAI_GRAPH_CLIENT_PERF_TYPE_NON_REAL_TIME",
        UNDEFINED = 0x7FFF_FFFF => "QNN_LPAI_GRAPH_CLIENT_PERF_TYPE_UNDEFINED",
    }
}

/// `QnnLpaiGraph_PerfCfg_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerfCfg {
    /// `fps`: expected executions per second.
    pub fps: u32,
    /// `ftrtRatio`: faster-than-real-time ratio.
    pub ftrt_ratio: u32,
    /// `clientType`.
    pub client_type: ClientPerfType,
}

impl PerfCfg {
    /// The documented default: 1 fps, ratio 10, real time.
    pub const DEFAULT: Self = Self { fps: 1, ftrt_ratio: 10, client_type: ClientPerfType::REAL_TIME };
}

impl Default for PerfCfg {
    fn default() -> Self {
        Self::DEFAULT
    }
}

c_enum! {
    /// How strictly [`CoreAffinity::core_selection`] is applied.
    pub struct CoreAffinityType = "QnnLpaiGraph_CoreAffinityType_t" {
        SOFT = 1 => "QNN_LPAI_GRAPH_CORE_AFFINITY_SOFT",
        HARD = 2 => "QNN_LPAI_GRAPH_CORE_AFFINITY_HARD",
        UNDEFINED = 0x7FFF_FFFF => "QNN_LPAI_GRAPH_CORE_AFFINITY_UNDEFINED",
    }
}

/// `QnnLpaiGraph_CoreAffinity_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreAffinity {
    /// `affinity`.
    pub affinity: CoreAffinityType,
    /// `coreSelection`: bit mask of eNPU cores; 0 means any core.
    pub core_selection: u32,
}

impl CoreAffinity {
    /// The documented default: soft affinity, any core.
    pub const DEFAULT: Self = Self { affinity: CoreAffinityType::SOFT, core_selection: 0 };

    /// Whether `core_selection` is a mask LPAI supports: any core (0) or exactly one (one bit). `QnnLpaiGraph.h`:
    /// a mix of cores is not yet supported, and with several bits set the behaviour is undefined.
    pub const fn supports(core_selection: u32) -> bool {
        core_selection.count_ones() <= 1
    }

    /// Whether `core_selection` names only cores among the `cores` the backend reported (`ENPU_CORE_NUM`).
    pub const fn selects_a_core_of(core_selection: u32, cores: u32) -> bool {
        cores >= 32 || core_selection >> cores == 0
    }
}

/// Why a `core_selection` of several bits is refused, wherever the setting enters (the message table holds it once).
pub const CORE_MIX_UNSUPPORTED: &str = crate::message::Message::CoreMixUnsupported.template();
