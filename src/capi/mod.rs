//! AudioReach CAPI, the interface SPF loads audio processing modules through: the module instance and its
//! function table, buffers, properties, stream data, the PCM media format and events. Declared by hand from the
//! facts measured on audioreach-engine's public headers (no header is copied) and layout-checked for 64-bit hosts
//! and Hexagon ([`layout`]).

use core::ffi::c_void;

pub mod layout;

/// `capi_err_t`: bit flags OR-ed together, 0 for success; SPF reads the first flag set in the order below.
pub type CapiError = u32;
/// Success.
pub const EOK: CapiError = 0;
/// A failure no other flag names.
pub const EFAILED: CapiError = 0x1;
/// A bad parameter or payload.
pub const EBADPARAM: CapiError = 0x2;
/// Not supported (a property the module does not know: its payload length is set to 0 and the list goes on).
pub const EUNSUPPORTED: CapiError = 0x4;
/// Out of memory.
pub const ENOMEMORY: CapiError = 0x8;
/// The payload is smaller than needed.
pub const ENEEDMORE: CapiError = 0x10;
/// Not ready yet.
pub const ENOTREADY: CapiError = 0x20;
/// Already done.
pub const EALREADY: CapiError = 0x40;

/// `bool_t`: one byte, 0 or 1.
pub type Bool = u8;

/// `capi_buf_t`: a buffer the caller owns; the callee never changes `data` or `max_data_len`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Buffer {
    /// The bytes (`int8_t*`).
    pub data: *mut i8,
    /// Bytes filled.
    pub actual_data_len: u32,
    /// Bytes the buffer holds.
    pub max_data_len: u32,
}

/// `capi_port_info_t`: which port a call is about, when `is_valid`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortInfo {
    /// Whether the port fields mean anything.
    pub is_valid: Bool,
    /// An input port (else output).
    pub is_input_port: Bool,
    /// The port's index.
    pub port_index: u32,
}

/// `capi_prop_t`: one property of a list, its payload in a buffer.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Property {
    /// The property id ([`property`]).
    pub id: u32,
    /// Its payload.
    pub payload: Buffer,
    /// The port it is about.
    pub port_info: PortInfo,
}

/// `capi_proplist_t`: `count` properties at `properties`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PropertyList {
    /// How many.
    pub count: u32,
    /// The first.
    pub properties: *mut Property,
}

/// `capi_stream_data_t`: one port's data for a `process` call (SPF passes [`StreamDataV2`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StreamData {
    /// [`stream_flags`] bits.
    pub flags: u32,
    /// Microseconds, when the flags say it is valid.
    pub timestamp: i64,
    /// One buffer per channel (deinterleaved unpacked).
    pub buffers: *mut Buffer,
    /// How many buffers.
    pub buffer_count: u32,
}

/// `capi_stream_data_v2_t`: [`StreamData`] and the metadata list (left alone without the METADATA extension).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StreamDataV2 {
    /// [`stream_flags`] bits; `stream_data_version` is 1.
    pub flags: u32,
    /// Microseconds, when the flags say it is valid.
    pub timestamp: i64,
    /// One buffer per channel.
    pub buffers: *mut Buffer,
    /// How many buffers.
    pub buffer_count: u32,
    /// The metadata list.
    pub metadata_list: *mut c_void,
}

/// Bits of a stream's `flags`.
pub mod stream_flags {
    /// The timestamp is valid.
    pub const TIMESTAMP_VALID: u32 = 1 << 0;
    /// The end of a frame.
    pub const END_OF_FRAME: u32 = 1 << 1;
    /// End of stream.
    pub const MARKER_EOS: u32 = 1 << 2;
    /// An erasure.
    pub const ERASURE: u32 = 1 << 6;
    /// Where the stream data version sits (2 bits: 0 = V1, 1 = V2).
    pub const VERSION_SHIFT: u32 = 7;
    /// The timestamp continues the previous one.
    pub const TIMESTAMP_CONTINUE: u32 = 1 << 9;
}

/// `capi_t`: a module instance, starting the memory the framework allocates for it.
#[repr(C)]
#[derive(Debug)]
pub struct Instance {
    /// The module's constant function table.
    pub table: *const FunctionTable,
}

/// `process(capi_t*, capi_stream_data_t* input[], capi_stream_data_t* output[])`: one pointer per port, each may
/// be null.
pub type ProcessFn = unsafe extern "C" fn(*mut Instance, *mut *mut StreamData, *mut *mut StreamData) -> CapiError;
/// `end(capi_t*)`: frees what the module allocated.
pub type EndFn = unsafe extern "C" fn(*mut Instance) -> CapiError;
/// `set_param` and `get_param`: `(capi_t*, param_id, port_info, payload)`.
pub type ParamFn = unsafe extern "C" fn(*mut Instance, u32, *const PortInfo, *mut Buffer) -> CapiError;
/// `set_properties` and `get_properties`: `(capi_t*, list)`.
pub type PropertiesFn = unsafe extern "C" fn(*mut Instance, *mut PropertyList) -> CapiError;
/// `<tag>_get_static_properties(init_properties, static_properties)`.
pub type GetStaticPropertiesFn = unsafe extern "C" fn(*mut PropertyList, *mut PropertyList) -> CapiError;
/// `<tag>_init(capi_t*, init_properties)`.
pub type InitFn = unsafe extern "C" fn(*mut Instance, *mut PropertyList) -> CapiError;

/// The module's function table (`capi_vtbl_t`), in this order.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FunctionTable {
    /// Processes one frame of every port.
    pub process: ProcessFn,
    /// Frees the module's allocations.
    pub end: EndFn,
    /// Sets a parameter.
    pub set_param: ParamFn,
    /// Reads a parameter.
    pub get_param: ParamFn,
    /// Sets properties.
    pub set_properties: PropertiesFn,
    /// Reads properties.
    pub get_properties: PropertiesFn,
}

/// Property ids.
pub mod property {
    /// `u32`: bytes of instance memory the module needs.
    pub const INIT_MEMORY_REQUIREMENT: u32 = 0;
    /// `u32`: bytes of stack the module needs.
    pub const STACK_SIZE: u32 = 1;
    /// `u32`.
    pub const MAX_METADATA_SIZE: u32 = 2;
    /// `bool_t`: outputs may be the inputs' buffers.
    pub const IS_INPLACE: u32 = 3;
    /// `bool_t`: the module needs whole frames buffered.
    pub const REQUIRES_DATA_BUFFERING: u32 = 4;
    /// `u32`: framework extensions the module needs.
    pub const NUM_NEEDED_FRAMEWORK_EXTENSIONS: u32 = 5;
    /// `u32[]`: their ids.
    pub const NEEDED_FRAMEWORK_EXTENSIONS: u32 = 6;
    /// Interface extensions, asked about one by one ([`super::InterfaceExtensionDescriptor`]).
    pub const INTERFACE_EXTENSIONS: u32 = 7;
    /// `bool_t`.
    pub const IS_ELEMENTARY: u32 = 8;
    /// The module's minimum ports.
    pub const MIN_PORT_NUM_INFO: u32 = 9;
    /// The module's version.
    pub const MODULE_VERSION_INFO: u32 = 10;
    /// [`EventCallbackInfo`](super::EventCallbackInfo).
    pub const EVENT_CALLBACK_INFO: u32 = 0x10001;
    /// [`PortNumInfo`](super::PortNumInfo).
    pub const PORT_NUM_INFO: u32 = 0x10002;
    /// `u32`, opaque: handed only to the framework's allocator.
    pub const HEAP_ID: u32 = 0x10003;
    /// A media format, version 1.
    pub const INPUT_MEDIA_FORMAT: u32 = 0x10004;
    /// A log code.
    pub const LOG_CODE: u32 = 0x10005;
    /// Custom init data.
    pub const CUSTOM_INIT_DATA: u32 = 0x10006;
    /// The session's identifier.
    pub const SESSION_IDENTIFIER: u32 = 0x10007;
    /// A media format, version 2 (what SPF sends first).
    pub const INPUT_MEDIA_FORMAT_V2: u32 = 0x10008;
    /// [`ModuleInstanceId`](super::ModuleInstanceId).
    pub const MODULE_INSTANCE_ID: u32 = 0x10009;
    /// [`LoggingInfo`](super::LoggingInfo).
    pub const LOGGING_INFO: u32 = 0x1000A;
    /// No payload; sent per port.
    pub const ALGORITHMIC_RESET: u32 = 0x20001;
    /// A client registers for an event.
    pub const REGISTER_EVENT_DATA_TO_DSP_CLIENT: u32 = 0x20003;
    /// [`RegisterEventToDspClientV2`](super::RegisterEventToDspClientV2).
    pub const REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2: u32 = 0x20004;
    /// [`ParamPersistenceInfo`](super::ParamPersistenceInfo).
    pub const PARAM_PERSISTENCE_INFO: u32 = 0x20005;
    /// Metadata.
    pub const METADATA: u32 = 0x30001;
    /// `u32`: bytes across all channels of a port; 1 means no threshold.
    pub const PORT_DATA_THRESHOLD: u32 = 0x30002;
    /// `u32`: the output media format's size without its 4-byte header.
    pub const OUTPUT_MEDIA_FORMAT_SIZE: u32 = 0x30003;
    /// The output media format, version 1.
    pub const OUTPUT_MEDIA_FORMAT: u32 = 0x40001;
    /// A custom property.
    pub const CUSTOM_PROPERTY: u32 = 0x40002;
    /// The output media format, version 2.
    pub const OUTPUT_MEDIA_FORMAT_V2: u32 = 0x40003;
}

/// `{u32 num_input_ports, u32 num_output_ports}`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortNumInfo {
    /// Input ports.
    pub inputs: u32,
    /// Output ports.
    pub outputs: u32,
}

/// `{u32 module_id, u32 module_instance_id}`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModuleInstanceId {
    /// The module id.
    pub module_id: u32,
    /// This instance's id in the graph.
    pub instance_id: u32,
}

/// `{u32 log_id, u32 log_id_mask}`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoggingInfo {
    /// The log id.
    pub log_id: u32,
    /// Its mask.
    pub log_id_mask: u32,
}

/// One interface extension asked about: the framework fills `id`, the module `is_supported`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct InterfaceExtensionDescriptor {
    /// The extension's id.
    pub id: u32,
    /// Whether the module supports it.
    pub is_supported: Bool,
    /// Its capabilities, if it defines any.
    pub capabilities: Buffer,
}

/// `capi_param_persistence_info_t`: the parameter named is registered as persistent (its payload outlives the call).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParamPersistenceInfo {
    /// Registration (else deregistration).
    pub is_register: Bool,
    /// 0 persistent, 1 global-persistent (read-only).
    pub memory_type: u32,
    /// The parameter.
    pub param_id: u32,
}

/// `capi_register_event_to_dsp_client_v2_t`: a client (un)registers for one of the module's events.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RegisterEventToDspClientV2 {
    /// Where the event goes.
    pub dest_address: u64,
    /// The client's token, given back with the event.
    pub token: u32,
    /// The event.
    pub event_id: u32,
    /// Registration (else deregistration).
    pub is_register: Bool,
    /// The event's configuration, read as the event id says.
    pub event_config: Buffer,
}

/// Media format payloads.
pub mod media_format {
    /// `data_format` of the header: fixed-point PCM.
    pub const FIXED_POINT: u32 = 0;
    /// Floating-point PCM.
    pub const FLOATING_POINT: u32 = 1;
    /// Compressed.
    pub const RAW_COMPRESSED: u32 = 2;
    /// `bitstream_format` of PCM (`MEDIA_FMT_ID_PCM`).
    pub const PCM: u32 = 0x0900_1000;
    /// Channels interleaved.
    pub const INTERLEAVED: u32 = 0;
    /// One block per channel, packed.
    pub const DEINTERLEAVED_PACKED: u32 = 1;
    /// One buffer per channel.
    pub const DEINTERLEAVED_UNPACKED: u32 = 2;
    /// One buffer per channel, version 2.
    pub const DEINTERLEAVED_UNPACKED_V2: u32 = 3;
    /// A field SPF does not know.
    pub const UNKNOWN: u32 = 0xFFFF_FFFF;
    /// Channel slots SPF sends with a version 2 format (only the first `num_channels` mean anything).
    pub const V2_CHANNEL_SLOTS: usize = 32;
    /// Bytes of the header and version 2 body with [`V2_CHANNEL_SLOTS`] slots: what SPF sends.
    pub const V2_BYTES_SENT: usize = 4 + 32 + 2 * V2_CHANNEL_SLOTS;
    /// Channel slots of a version 1 format.
    pub const V1_CHANNEL_SLOTS: usize = 16;
}

/// `capi_set_get_media_format_t`: the header before a media format's body.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MediaFormatHeader {
    /// [`media_format::FIXED_POINT`], ...
    pub data_format: u32,
}

/// `capi_standard_data_format_v2_t`; `u16 channel_type[num_channels]` follows it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StandardDataFormatV2 {
    /// Left at 0xFFFFFFFF by SPF: not checked.
    pub minor_version: u32,
    /// [`media_format::PCM`].
    pub bitstream_format: u32,
    /// Channels.
    pub num_channels: u32,
    /// 16 or 32.
    pub bits_per_sample: u32,
    /// 15 for 16-bit audio, 27 or 31 for 32-bit.
    pub q_factor: u32,
    /// Hz.
    pub sampling_rate: u32,
    /// 1 for PCM.
    pub data_is_signed: u32,
    /// [`media_format::DEINTERLEAVED_UNPACKED`], ...
    pub data_interleaving: u32,
}

/// `capi_standard_data_format_t`, version 1.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StandardDataFormat {
    /// [`media_format::PCM`].
    pub bitstream_format: u32,
    /// Channels.
    pub num_channels: u32,
    /// 16 or 32.
    pub bits_per_sample: u32,
    /// 15, 27 or 31.
    pub q_factor: u32,
    /// Hz.
    pub sampling_rate: u32,
    /// 1 for PCM.
    pub data_is_signed: u32,
    /// [`media_format::DEINTERLEAVED_UNPACKED`], ...
    pub data_interleaving: u32,
    /// The channels' types (`PCM_CHANNEL_L` 1, `R` 2, `C` 3, ...).
    pub channel_type: [u16; media_format::V1_CHANNEL_SLOTS],
}

/// Event ids.
pub mod event {
    /// `u32` thousands of packets per second.
    pub const KPPS: u32 = 0;
    /// [`Bandwidth`](super::Bandwidth).
    pub const BANDWIDTH: u32 = 1;
    /// `{param_id, token, payload}`.
    pub const DATA_TO_DSP_CLIENT: u32 = 2;
    /// The output media format, version 1.
    pub const OUTPUT_MEDIA_FORMAT_UPDATED: u32 = 4;
    /// `bool_t`: while disabled the module is not called and SPF copies input to output.
    pub const PROCESS_STATE: u32 = 5;
    /// `u32` microseconds.
    pub const ALGORITHMIC_DELAY: u32 = 6;
    /// `u32` millibels.
    pub const HEADROOM: u32 = 7;
    /// `u32` bytes; the port must be valid.
    pub const PORT_DATA_THRESHOLD_CHANGE: u32 = 8;
    /// Not supported by SPF's generic topology.
    pub const METADATA_AVAILABLE: u32 = 9;
    /// `{param_id, token, payload}`.
    pub const DATA_TO_DSP_SERVICE: u32 = 10;
    /// Refused by SPF's generic topology.
    pub const GET_LIBRARY_INSTANCE: u32 = 11;
    /// 16 bytes.
    pub const GET_DLINFO: u32 = 12;
    /// The output media format, version 2.
    pub const OUTPUT_MEDIA_FORMAT_UPDATED_V2: u32 = 13;
    /// `{param_id, token, payload}`.
    pub const GET_DATA_FROM_DSP_SERVICE: u32 = 14;
    /// [`EventDataToDspClientV2`](super::EventDataToDspClientV2).
    pub const DATA_TO_DSP_CLIENT_V2: u32 = 15;
    /// `u32`.
    pub const DYNAMIC_INPLACE_CHANGE: u32 = 16;
    /// `u32` microseconds.
    pub const HW_ACCL_PROC_DELAY: u32 = 17;
    /// `u32`: 0 votes for island, 1 against.
    pub const ISLAND_VOTE: u32 = 18;
    /// No payload.
    pub const DEINTERLEAVED_UNPACKED_V2_SUPPORTED: u32 = 19;
}

/// `cb(context, event_id, info)`: called only from the thread calling the module, with the context it was given.
pub type EventCallback = unsafe extern "C" fn(*mut c_void, u32, *mut EventInfo) -> CapiError;

/// The `EVENT_CALLBACK_INFO` payload.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EventCallbackInfo {
    /// The framework's callback.
    pub callback: Option<EventCallback>,
    /// Given back to it.
    pub context: *mut c_void,
}

/// `capi_event_info_t`: an event's port and payload (SPF copies the payload before returning).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EventInfo {
    /// The port, when the event is about one.
    pub port_info: PortInfo,
    /// The payload.
    pub payload: Buffer,
}

/// `capi_event_bandwidth_t`: the module's memory traffic in bytes per second, reckoned with no cache.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bandwidth {
    /// Code fetched per second.
    pub code: u32,
    /// Data read and written per second.
    pub data: u32,
}

/// The `DATA_TO_DSP_CLIENT_V2` event's payload.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EventDataToDspClientV2 {
    /// The registered client's address.
    pub dest_address: u64,
    /// Its token.
    pub token: u32,
    /// The event.
    pub event_id: u32,
    /// The event's data.
    pub payload: Buffer,
}
