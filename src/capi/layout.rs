//! Layout checks of the CAPI declarations against the sizes and offsets measured with clang on audioreach-engine's
//! headers (@944fff9), for x86_64 (LP64) and Hexagon (ILP32, 64-bit integers 8-aligned).

use core::mem::{align_of, offset_of, size_of};

use super::{Buffer, EventCallbackInfo, EventDataToDspClientV2, EventInfo, FunctionTable, Instance};
use super::{InterfaceExtensionDescriptor, ParamPersistenceInfo, PortInfo, Property, PropertyList};
use super::{RegisterEventToDspClientV2, StandardDataFormat, StandardDataFormatV2, StreamData, StreamDataV2};
use crate::layout::layout_table;

#[cfg(not(any(target_arch = "hexagon", target_pointer_width = "64")))]
compile_error!("lpai-direct: the CAPI declarations are verified only for 64-bit targets and Hexagon");

layout_table! {
    "CAPI";
    "capi_t size": size_of::<Instance>() => 8 / 4;
    "capi_vtbl_t size": size_of::<FunctionTable>() => 48 / 24;
    "capi_vtbl_t.end offset": offset_of!(FunctionTable, end) => 8 / 4;
    "capi_vtbl_t.set_param offset": offset_of!(FunctionTable, set_param) => 16 / 8;
    "capi_vtbl_t.get_param offset": offset_of!(FunctionTable, get_param) => 24 / 12;
    "capi_vtbl_t.set_properties offset": offset_of!(FunctionTable, set_properties) => 32 / 16;
    "capi_vtbl_t.get_properties offset": offset_of!(FunctionTable, get_properties) => 40 / 20;

    "capi_buf_t size": size_of::<Buffer>() => 16 / 12;
    "capi_buf_t align": align_of::<Buffer>() => 8 / 4;
    "capi_buf_t.actual_data_len offset": offset_of!(Buffer, actual_data_len) => 8 / 4;
    "capi_buf_t.max_data_len offset": offset_of!(Buffer, max_data_len) => 12 / 8;

    "capi_port_info_t size": size_of::<PortInfo>() => 8 / 8;
    "capi_port_info_t.is_input_port offset": offset_of!(PortInfo, is_input_port) => 1 / 1;
    "capi_port_info_t.port_index offset": offset_of!(PortInfo, port_index) => 4 / 4;

    "capi_prop_t size": size_of::<Property>() => 32 / 24;
    "capi_prop_t.payload offset": offset_of!(Property, payload) => 8 / 4;
    "capi_prop_t.port_info offset": offset_of!(Property, port_info) => 24 / 16;
    "capi_proplist_t size": size_of::<PropertyList>() => 16 / 8;
    "capi_proplist_t.prop_ptr offset": offset_of!(PropertyList, properties) => 8 / 4;

    "capi_stream_data_t size": size_of::<StreamData>() => 32 / 24;
    "capi_stream_data_t align": align_of::<StreamData>() => 8 / 8;
    "capi_stream_data_t.timestamp offset": offset_of!(StreamData, timestamp) => 8 / 8;
    "capi_stream_data_t.buf_ptr offset": offset_of!(StreamData, buffers) => 16 / 16;
    "capi_stream_data_t.bufs_num offset": offset_of!(StreamData, buffer_count) => 24 / 20;
    "capi_stream_data_v2_t size": size_of::<StreamDataV2>() => 40 / 32;
    "capi_stream_data_v2_t.metadata_list_ptr offset": offset_of!(StreamDataV2, metadata_list) => 32 / 24;

    "capi_standard_data_format_v2_t size": size_of::<StandardDataFormatV2>() => 32 / 32;
    "capi_standard_data_format_v2_t.data_interleaving offset":
        offset_of!(StandardDataFormatV2, data_interleaving) => 28 / 28;
    "capi_standard_data_format_t size": size_of::<StandardDataFormat>() => 60 / 60;
    "capi_standard_data_format_t.channel_type offset": offset_of!(StandardDataFormat, channel_type) => 28 / 28;

    "capi_event_callback_info_t size": size_of::<EventCallbackInfo>() => 16 / 8;
    "capi_event_callback_info_t.event_context offset": offset_of!(EventCallbackInfo, context) => 8 / 4;
    "capi_event_info_t size": size_of::<EventInfo>() => 24 / 20;
    "capi_event_info_t.payload offset": offset_of!(EventInfo, payload) => 8 / 8;
    "capi_event_data_to_dsp_client_v2_t size": size_of::<EventDataToDspClientV2>() => 32 / 32;
    "capi_event_data_to_dsp_client_v2_t.token offset": offset_of!(EventDataToDspClientV2, token) => 8 / 8;
    "capi_event_data_to_dsp_client_v2_t.event_id offset": offset_of!(EventDataToDspClientV2, event_id) => 12 / 12;
    "capi_event_data_to_dsp_client_v2_t.payload offset": offset_of!(EventDataToDspClientV2, payload) => 16 / 16;
    "capi_register_event_to_dsp_client_v2_t size": size_of::<RegisterEventToDspClientV2>() => 40 / 32;
    "capi_register_event_to_dsp_client_v2_t.is_register offset":
        offset_of!(RegisterEventToDspClientV2, is_register) => 16 / 16;
    "capi_register_event_to_dsp_client_v2_t.event_cfg offset":
        offset_of!(RegisterEventToDspClientV2, event_config) => 24 / 20;

    "capi_interface_extn_desc_t size": size_of::<InterfaceExtensionDescriptor>() => 24 / 20;
    "capi_interface_extn_desc_t.is_supported offset": offset_of!(InterfaceExtensionDescriptor, is_supported) => 4 / 4;
    "capi_interface_extn_desc_t.capabilities offset": offset_of!(InterfaceExtensionDescriptor, capabilities) => 8 / 8;
    "capi_param_persistence_info_t size": size_of::<ParamPersistenceInfo>() => 12 / 12;
    "capi_param_persistence_info_t.param_id offset": offset_of!(ParamPersistenceInfo, param_id) => 8 / 8;
}

#[cfg(test)]
mod tests {
    /// The typedef names of audioreach-engine's CAPI headers (capi.h, capi_types.h, capi_properties.h,
    /// capi_events.h, capi_intf_extn_*.h) for the types the table measures: a row names the header's type.
    const HEADER_TYPES: &[&str] = &[
        "capi_t",
        "capi_vtbl_t",
        "capi_buf_t",
        "capi_port_info_t",
        "capi_prop_t",
        "capi_proplist_t",
        "capi_stream_data_t",
        "capi_stream_data_v2_t",
        "capi_standard_data_format_t",
        "capi_standard_data_format_v2_t",
        "capi_event_info_t",
        "capi_event_callback_info_t",
        "capi_event_data_to_dsp_client_v2_t",
        "capi_register_event_to_dsp_client_v2_t",
        "capi_interface_extn_desc_t",
        "capi_param_persistence_info_t",
    ];

    #[test]
    fn every_row_names_a_type_of_the_headers() {
        for check in super::layout_checks() {
            let type_name = check.what.split([' ', '.']).next().unwrap_or("");
            assert!(HEADER_TYPES.contains(&type_name), "{}: {type_name} is not a type of the CAPI headers", check.what);
        }
    }
}
