//! libQnnSystem's System Profile API (`System/QnnSystemProfile.h`): serialization targets, their configs, the
//! profile data records it writes, and the extended event data (`QnnProfile.h`, `Qnn_Scalar_t` of `QnnTypes.h`)
//! a record may carry. The three functions are reached only through [`super::SystemInterfaceTable`].
//!
//! As elsewhere in these declarations, a C union with a single member is declared as that member.

use core::ffi::{c_char, c_void};

use super::profile::{ProfileEventData, ProfileEventType, ProfileEventUnit};
use super::types::{DataType, ErrorHandle};

/// `QnnSystemProfile_SerializationTargetHandle_t`.
pub type SerializationTargetHandle = *mut c_void;

c_enum! {
    /// Where a serialization target writes.
    pub struct SerializationTargetType = "QnnSystemProfile_SerializationTargetType_t" {
        FILE = 0x01 => "QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_FILE",
        UNDEFINED = 0x7FFF_FFFF => "QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_UNDEFINED",
    }
}

/// `QnnSystemProfile_SerializationTargetFile_t`: the library opens `fileDirectory/fileName` for appending (and
/// creates a missing directory).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SerializationTargetFile {
    /// `fileName`.
    pub file_name: *const c_char,
    /// `fileDirectory`.
    pub file_directory: *const c_char,
}

/// `QnnSystemProfile_SerializationTarget_t` (passed by value to `createSerializationTarget`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SerializationTarget {
    /// `type`.
    pub target_type: SerializationTargetType,
    /// The union's one member, `file`.
    pub file: SerializationTargetFile,
}

/// `QnnSystemProfile_SerializationFileHeader_t`: written once, at the start of a new or empty file.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SerializationFileHeader {
    /// `appName`.
    pub app_name: *const c_char,
    /// `appVersion`.
    pub app_version: *const c_char,
    /// `backendVersion`.
    pub backend_version: *const c_char,
}

c_enum! {
    /// Selects the member of [`SerializationTargetConfig::value`].
    pub struct SerializationTargetConfigType = "QnnSystemProfile_SerializationTargetConfigType_t" {
        MAX_NUM_MESSAGES = 0 => "QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_CONFIG_MAX_NUM_MESSAGES",
        SERIALIZATION_HEADER = 1 => "QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_CONFIG_SERIALIZATION_HEADER",
        UNDEFINED = 0x7FFF_FFFF => "QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_CONFIG_UNDEFINED",
    }
}

/// The anonymous union of `QnnSystemProfile_SerializationTargetConfig_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union SerializationTargetConfigValue {
    /// `maxNumMessages`.
    pub max_num_messages: u32,
    /// `serializationHeader`.
    pub serialization_header: SerializationFileHeader,
}

/// `QnnSystemProfile_SerializationTargetConfig_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SerializationTargetConfig {
    /// `type`: selects the member of `value`.
    pub config_type: SerializationTargetConfigType,
    /// The anonymous union.
    pub value: SerializationTargetConfigValue,
}

/// The storage of [`Visibility`] and [`MethodType`], the two C enums of this API without a `0x7FFFFFFF`
/// enumerator: Hexagon's C ABI gives an enum the smallest integer type that holds its values (clang-hexagon makes
/// both one byte), the other targets' a 32-bit `int`.
#[cfg(target_arch = "hexagon")]
pub type ShortEnum = u8;
/// The storage of [`Visibility`] and [`MethodType`] (see the Hexagon declaration).
#[cfg(not(target_arch = "hexagon"))]
pub type ShortEnum = u32;

/// Declares a `#[repr(transparent)]` newtype over [`ShortEnum`] with one constant per C enumerator and `c_name`,
/// as `c_enum!` does over `u32`.
macro_rules! short_enum {
    ($(#[$meta:meta])* pub struct $name:ident = $c_type:literal { $($konst:ident = $value:expr => $c_name:literal,)* }) => {
        $(#[$meta])*
        #[doc = concat!("\n\nC type: `", $c_type, "` (one byte on Hexagon: [`ShortEnum`]).")]
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub ShortEnum);

        impl $name {
            $(
                #[doc = concat!("`", $c_name, "`.")]
                pub const $konst: Self = Self($value);
            )*

            /// The C enumerator name of this value, or `None` when it is not one this crate knows.
            pub const fn c_name(self) -> Option<&'static str> {
                match self {
                    $( Self::$konst => Some($c_name), )*
                    _ => None,
                }
            }
        }
    };
}

short_enum! {
    /// Whether a record is public.
    pub struct Visibility = "QnnSystemProfile_Visibility_t" {
        PUBLIC = 0 => "QNN_SYSTEM_PROFILE_VISIBILITY_PUBLIC",
        PRIVATE = 1 => "QNN_SYSTEM_PROFILE_VISIBILITY_PRIVATE",
    }
}

short_enum! {
    /// The QNN call a record's events came from.
    pub struct MethodType = "QnnSystemProfile_MethodType_t" {
        NONE = 0 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_NONE",
        BACKEND_EXECUTE = 1 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_EXECUTE",
        BACKEND_FINALIZE = 2 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_FINALIZE",
        BACKEND_EXECUTE_ASYNC = 3 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_EXECUTE_ASYNC",
        BACKEND_CREATE_FROM_BINARY = 4 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_CREATE_FROM_BINARY",
        BACKEND_DEINIT = 5 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_DEINIT",
        APP_CONTEXT_CREATE = 6 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_APP_CONTEXT_CREATE",
        APP_COMPOSE_GRAPHS = 7 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_APP_COMPOSE_GRAPHS",
        APP_EXECUTE_IPS = 8 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_APP_EXECUTE_IPS",
        BACKEND_GRAPH_COMPONENT = 9 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_GRAPH_COMPONENT",
        APP_BACKEND_LIB_LOAD = 10 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_APP_BACKEND_LIB_LOAD",
        BACKEND_APPLY_BINARY_SECTION = 11 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_APPLY_BINARY_SECTION",
        CONTEXT_FINALIZE = 12 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_CONTEXT_FINALIZE",
        CONTEXT_GET_BINARY_SIZE = 13 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_CONTEXT_GET_BINARY_SIZE",
        CONTEXT_GET_BINARY = 14 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_CONTEXT_GET_BINARY",
        CONTEXT_GET_BINARY_SECTION_SIZE = 15 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_CONTEXT_GET_BINARY_SECTION_SIZE",
        BACKEND_FINALIZE_TENSOR_UPDATES = 16 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_FINALIZE_TENSOR_UPDATES",
        BACKEND_UPDATE_BINARY_SECTION = 17 => "QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_UPDATE_BINARY_SECTION",
    }
}

/// `QnnSystemProfile_HeaderV1_t`: what one record says about the call its events came from.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HeaderV1 {
    /// `startTime` (microseconds).
    pub start_time: u64,
    /// `stopTime` (microseconds).
    pub stop_time: u64,
    /// `startMem`.
    pub start_mem: u64,
    /// `stopMem`.
    pub stop_mem: u64,
    /// `methodType`.
    pub method_type: MethodType,
    /// `visibility`.
    pub visibility: Visibility,
    /// `graphName`.
    pub graph_name: *const c_char,
}

impl HeaderV1 {
    /// `QNN_SYSTEM_PROFILE_HEADER_V1_INIT`: zero times and memory, method NONE, PUBLIC, no graph name.
    pub const INIT: HeaderV1 = HeaderV1 {
        start_time: 0,
        stop_time: 0,
        start_mem: 0,
        stop_mem: 0,
        method_type: MethodType::NONE,
        visibility: Visibility::PUBLIC,
        graph_name: core::ptr::null(),
    };
}

c_enum! {
    /// Selects the member of [`ProfileEventV1::data`].
    pub struct EventDataType = "QnnSystemProfile_EventDataType_t" {
        EVENT_DATA = 0 => "QNN_SYSTEM_PROFILE_EVENT_DATA",
        EXTENDED_EVENT_DATA = 1 => "QNN_SYSTEM_PROFILE_EXTENDED_EVENT_DATA",
        UNDEFINED = 0x7FFF_FFFF => "QNN_SYSTEM_PROFILE_EVENT_DATA_UNDEFINED",
    }
}

/// The anonymous union of `QnnSystemProfile_ProfileEventV1_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union ProfileEventDataKinds {
    /// `eventData`.
    pub event_data: ProfileEventData,
    /// `extendedEventData`.
    pub extended_event_data: ExtendedEventData,
}

/// `QnnSystemProfile_ProfileEventV1_t`: one event and its sub-events.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ProfileEventV1 {
    /// `type`: selects the member of `data`.
    pub data_type: EventDataType,
    /// The anonymous union.
    pub data: ProfileEventDataKinds,
    /// `profileSubEventData`: `numSubEvents` events, or null.
    pub sub_events: *mut ProfileEventV1,
    /// `numSubEvents`.
    pub num_sub_events: u32,
}

/// `QnnSystemProfile_ProfileDataV1_t`: one record.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ProfileDataV1 {
    /// `header`.
    pub header: HeaderV1,
    /// `profilingEvents`: `numProfilingEvents` top-level events.
    pub profiling_events: *mut ProfileEventV1,
    /// `numProfilingEvents`.
    pub num_profiling_events: u32,
}

c_enum! {
    /// Selects the member of [`ProfileData`] (version 1 is the only one).
    pub struct ProfileDataVersion = "QnnSystemProfile_ProfileDataVersion_t" {
        V1 = 0x01 => "QNN_SYSTEM_PROFILE_DATA_VERSION_1",
        UNDEFINED = 0x7FFF_FFFF => "QNN_SYSTEM_PROFILE_DATA_VERSION_UNDEFINED",
    }
}

/// `QnnSystemProfile_ProfileData_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ProfileData {
    /// `version`.
    pub version: ProfileDataVersion,
    /// The union's one member, `v1`.
    pub v1: ProfileDataV1,
}

/// The anonymous union of `Qnn_Scalar_t` (`QnnTypes.h`).
#[repr(C)]
#[derive(Clone, Copy)]
pub union ScalarValue {
    /// `floatValue`.
    pub float_value: f32,
    /// `doubleValue`.
    pub double_value: f64,
    /// `uint64Value`.
    pub uint64_value: u64,
    /// `int64Value`.
    pub int64_value: i64,
    /// `uint32Value`.
    pub uint32_value: u32,
    /// `int32Value`.
    pub int32_value: i32,
    /// `uint16Value`.
    pub uint16_value: u16,
    /// `int16Value`.
    pub int16_value: i16,
    /// `uint8Value`.
    pub uint8_value: u8,
    /// `int8Value`.
    pub int8_value: i8,
    /// `bool8Value`.
    pub bool8_value: u8,
    /// `bfloat16Value`.
    pub bfloat16_value: i16,
    /// `stringValue`.
    pub string_value: *const c_char,
}

/// `Qnn_Scalar_t` (`QnnTypes.h`): a value and its data type.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Scalar {
    /// `dataType`: selects the member of `value`.
    pub data_type: DataType,
    /// The anonymous union.
    pub value: ScalarValue,
}

/// `Qnn_OpaqueObject_t` (`QnnTypes.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct OpaqueObject {
    /// `data`.
    pub data: *mut c_void,
    /// `len`, in bytes.
    pub len: u64,
}

/// `QnnProfile_BackendOpaqueObject_t` (`QnnProfile.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BackendOpaqueObject {
    /// `opaqueObject`.
    pub opaque_object: OpaqueObject,
    /// `fileName`.
    pub file_name: *const c_char,
}

/// The anonymous union of `QnnProfile_ExtendedEventDataV1_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union ExtendedEventValue {
    /// `value`.
    pub value: Scalar,
    /// `backendOpaqueObject`.
    pub backend_opaque_object: BackendOpaqueObject,
}

/// `QnnProfile_ExtendedEventDataV1_t` (`QnnProfile.h`), filled in by `profileGetExtendedEventData`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ExtendedEventDataV1 {
    /// `type`.
    pub event_type: ProfileEventType,
    /// `unit`.
    pub unit: ProfileEventUnit,
    /// The anonymous union (`value` unless the unit is OBJECT).
    pub value: ExtendedEventValue,
    /// `timestamp` (microseconds).
    pub timestamp: u64,
    /// `identifier`.
    pub identifier: *const c_char,
}

c_enum! {
    /// Selects the member of [`ExtendedEventData`] (version 1 is the only one).
    pub struct ExtendedEventDataVersion = "QnnProfile_ExtendedEventDataVersion_t" {
        V1 = 1 => "QNN_PROFILE_DATA_VERSION_1",
        UNDEFINED = 0x7FFF_FFFF => "QNN_PROFILE_DATA_VERSION_UNDEFINED",
    }
}

/// `QnnProfile_ExtendedEventData_t` (`QnnProfile.h`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ExtendedEventData {
    /// `version`.
    pub version: ExtendedEventDataVersion,
    /// The union's one member, `v1`.
    pub v1: ExtendedEventDataV1,
}

/// `QnnSystemProfile_createSerializationTargetFn_t(serializationTargetInfo, configs, numConfigs,
/// serializationTarget)`: the target is passed by value.
pub type CreateSerializationTargetFn = unsafe extern "C" fn(
    target: SerializationTarget,
    configs: *mut SerializationTargetConfig,
    num_configs: u32,
    handle: *mut SerializationTargetHandle,
) -> ErrorHandle;

/// `QnnSystemProfile_serializeEventDataFn_t(serializationTarget, eventData, numEvents)`: `numEvents` counts the
/// [`ProfileData`] pointers at `eventData`.
pub type SerializeEventDataFn = unsafe extern "C" fn(
    handle: SerializationTargetHandle,
    event_data: *mut *const ProfileData,
    num_events: u32,
) -> ErrorHandle;

/// `QnnSystemProfile_freeSerializationTargetFn_t(serializationTarget)`.
pub type FreeSerializationTargetFn = unsafe extern "C" fn(handle: SerializationTargetHandle) -> ErrorHandle;
