//! Layout checks of the QNN declarations: sizes, alignments and offsets against the values measured with clang
//! on the 2.43 headers, for x86_64 (and other 64-bit targets) and Hexagon (the table mechanism: [`crate::layout`]).

use core::mem::{align_of, offset_of, size_of};

use super::config::{BackendConfig, BackendProperty, ContextConfig, GraphConfig, GraphProperty};
use super::interface::{Interface, InterfaceTable, INTERFACE_TABLE_ENTRIES};
use super::lpai;
use super::op_package;
use super::profile::ProfileEventData;
use super::system::{
    BinaryInfo, BinaryInfoV1, BinaryInfoV2, BinaryInfoV3, GraphInfo, GraphInfoV1, GraphInfoV2, GraphInfoV3,
    SystemInterface, SystemInterfaceTable, SYSTEM_INTERFACE_TABLE_ENTRIES,
};
use super::system_profile as sp;
use super::tensor::{ClientBuffer, QuantizeParams, Tensor, TensorV1, TensorV2};
use super::types::NotifyStatus;

#[cfg(not(any(target_arch = "hexagon", target_pointer_width = "64")))]
compile_error!("lpai-direct: the QNN declarations are verified only for 64-bit targets and Hexagon");

use crate::layout::layout_table;
pub use crate::layout::LayoutCheck;

layout_table! {
    "QNN";
    "Qnn_Tensor_t size": size_of::<Tensor>() => 144 / 92;
    "Qnn_Tensor_t align": align_of::<Tensor>() => 8 / 4;
    "Qnn_Tensor_t.v1 offset": offset_of!(Tensor, v) => 8 / 4;

    "Qnn_TensorV1_t size": size_of::<TensorV1>() => 112 / 68;
    "Qnn_TensorV1_t align": align_of::<TensorV1>() => 8 / 4;
    "Qnn_TensorV1_t.name offset": offset_of!(TensorV1, name) => 8 / 4;
    "Qnn_TensorV1_t.type offset": offset_of!(TensorV1, tensor_type) => 16 / 8;
    "Qnn_TensorV1_t.dataFormat offset": offset_of!(TensorV1, data_format) => 20 / 12;
    "Qnn_TensorV1_t.dataType offset": offset_of!(TensorV1, data_type) => 24 / 16;
    "Qnn_TensorV1_t.quantizeParams offset": offset_of!(TensorV1, quantize_params) => 32 / 20;
    "Qnn_TensorV1_t.rank offset": offset_of!(TensorV1, rank) => 72 / 48;
    "Qnn_TensorV1_t.dimensions offset": offset_of!(TensorV1, dimensions) => 80 / 52;
    "Qnn_TensorV1_t.memType offset": offset_of!(TensorV1, mem_type) => 88 / 56;
    "Qnn_TensorV1_t.clientBuf offset": offset_of!(TensorV1, memory) => 96 / 60;

    "Qnn_TensorV2_t size": size_of::<TensorV2>() => 136 / 88;
    "Qnn_TensorV2_t align": align_of::<TensorV2>() => 8 / 4;
    "Qnn_TensorV2_t.isDynamicDimensions offset":
        offset_of!(TensorV2, is_dynamic_dimensions) => 112 / 68;
    "Qnn_TensorV2_t.sparseParams offset": offset_of!(TensorV2, sparse_params) => 120 / 72;
    "Qnn_TensorV2_t.isProduced offset": offset_of!(TensorV2, is_produced) => 132 / 84;

    "Qnn_QuantizeParams_t size": size_of::<QuantizeParams>() => 40 / 28;
    "Qnn_QuantizeParams_t align": align_of::<QuantizeParams>() => 8 / 4;
    "Qnn_QuantizeParams_t.quantizationEncoding offset":
        offset_of!(QuantizeParams, quantization_encoding) => 4 / 4;
    "Qnn_QuantizeParams_t union offset": offset_of!(QuantizeParams, params) => 8 / 8;

    "Qnn_ClientBuffer_t size": size_of::<ClientBuffer>() => 16 / 8;
    "Qnn_ClientBuffer_t align": align_of::<ClientBuffer>() => 8 / 4;

    "QnnInterface_t size": size_of::<Interface>() => 608 / 316;
    "QnnInterface_t align": align_of::<Interface>() => 8 / 4;
    "QnnInterface_t.providerName offset": offset_of!(Interface, provider_name) => 8 / 4;
    "QnnInterface_t.apiVersion offset": offset_of!(Interface, api_version) => 16 / 8;
    "QnnInterface_t function table offset": offset_of!(Interface, table) => 40 / 32;

    "QnnInterface function table size": size_of::<InterfaceTable>() => 568 / 284;
    "QnnInterface function table align": align_of::<InterfaceTable>() => 8 / 4;
    "QnnInterface function table graphExecute offset":
        offset_of!(InterfaceTable, graph_execute) => 168 / 84;
    "QnnInterface function table graphExecuteAsync offset":
        offset_of!(InterfaceTable, graph_execute_async) => 176 / 88;
    "QnnInterface function table backendGetProperty offset":
        offset_of!(InterfaceTable, backend_get_property) => 496 / 248;

    "Qnn_NotifyStatus_t size": size_of::<NotifyStatus>() => 8 / 8;
    "Qnn_NotifyStatus_t align": align_of::<NotifyStatus>() => 8 / 8;

    "QnnContext_Config_t size": size_of::<ContextConfig>() => 16 / 16;
    "QnnContext_Config_t align": align_of::<ContextConfig>() => 8 / 8;
    "QnnContext_Config_t union offset": offset_of!(ContextConfig, value) => 8 / 8;

    "QnnGraph_Config_t size": size_of::<GraphConfig>() => 16 / 8;
    "QnnGraph_Config_t align": align_of::<GraphConfig>() => 8 / 4;

    "QnnBackend_Config_t size": size_of::<BackendConfig>() => 16 / 12;
    "QnnBackend_Config_t align": align_of::<BackendConfig>() => 8 / 4;

    "QnnGraph_Property_t size": size_of::<GraphProperty>() => 16 / 8;
    "QnnGraph_Property_t align": align_of::<GraphProperty>() => 8 / 4;
    "QnnBackend_Property_t size": size_of::<BackendProperty>() => 16 / 8;
    "QnnBackend_Property_t align": align_of::<BackendProperty>() => 8 / 4;

    "QnnProfile_EventData_t size": size_of::<ProfileEventData>() => 24 / 24;
    "QnnProfile_EventData_t align": align_of::<ProfileEventData>() => 8 / 8;

    "QnnSystemInterface_t size": size_of::<SystemInterface>() => 160 / 84;
    "QnnSystemInterface_t align": align_of::<SystemInterface>() => 8 / 4;
    "QnnSystemInterface_t.systemApiVersion offset":
        offset_of!(SystemInterface, system_api_version) => 16 / 8;
    "QnnSystemInterface_t function table offset": offset_of!(SystemInterface, table) => 32 / 20;

    "QnnSystemInterface function table systemProfileCreateSerializationTarget offset":
        offset_of!(SystemInterfaceTable, system_profile_create_serialization_target) => 104 / 52;
    "QnnSystemInterface function table systemProfileSerializeEventData offset":
        offset_of!(SystemInterfaceTable, system_profile_serialize_event_data) => 112 / 56;
    "QnnSystemInterface function table systemProfileFreeSerializationTarget offset":
        offset_of!(SystemInterfaceTable, system_profile_free_serialization_target) => 120 / 60;

    "QnnSystemProfile_SerializationTargetFile_t size": size_of::<sp::SerializationTargetFile>() => 16 / 8;
    "QnnSystemProfile_SerializationTargetFile_t align": align_of::<sp::SerializationTargetFile>() => 8 / 4;
    "QnnSystemProfile_SerializationTarget_t size": size_of::<sp::SerializationTarget>() => 24 / 12;
    "QnnSystemProfile_SerializationTarget_t align": align_of::<sp::SerializationTarget>() => 8 / 4;
    "QnnSystemProfile_SerializationTarget_t.file offset": offset_of!(sp::SerializationTarget, file) => 8 / 4;
    "QnnSystemProfile_SerializationFileHeader_t size": size_of::<sp::SerializationFileHeader>() => 24 / 12;
    "QnnSystemProfile_SerializationFileHeader_t align": align_of::<sp::SerializationFileHeader>() => 8 / 4;
    "QnnSystemProfile_SerializationTargetConfig_t size": size_of::<sp::SerializationTargetConfig>() => 32 / 16;
    "QnnSystemProfile_SerializationTargetConfig_t align": align_of::<sp::SerializationTargetConfig>() => 8 / 4;
    "QnnSystemProfile_SerializationTargetConfig_t union offset":
        offset_of!(sp::SerializationTargetConfig, value) => 8 / 4;

    // Measured with clang --target=hexagon-unknown-linux-musl: methodType and visibility are one byte there
    // (`system_profile::ShortEnum`).
    "QnnSystemProfile_HeaderV1_t size": size_of::<sp::HeaderV1>() => 48 / 40;
    "QnnSystemProfile_HeaderV1_t align": align_of::<sp::HeaderV1>() => 8 / 8;
    "QnnSystemProfile_HeaderV1_t.methodType offset": offset_of!(sp::HeaderV1, method_type) => 32 / 32;
    "QnnSystemProfile_HeaderV1_t.visibility offset": offset_of!(sp::HeaderV1, visibility) => 36 / 33;
    "QnnSystemProfile_HeaderV1_t.graphName offset": offset_of!(sp::HeaderV1, graph_name) => 40 / 36;
    "QnnSystemProfile_ProfileEventV1_t size": size_of::<sp::ProfileEventV1>() => 80 / 72;
    "QnnSystemProfile_ProfileEventV1_t align": align_of::<sp::ProfileEventV1>() => 8 / 8;
    "QnnSystemProfile_ProfileEventV1_t union offset": offset_of!(sp::ProfileEventV1, data) => 8 / 8;
    "QnnSystemProfile_ProfileEventV1_t.profileSubEventData offset":
        offset_of!(sp::ProfileEventV1, sub_events) => 64 / 64;
    "QnnSystemProfile_ProfileEventV1_t.numSubEvents offset":
        offset_of!(sp::ProfileEventV1, num_sub_events) => 72 / 68;
    "QnnSystemProfile_ProfileDataV1_t size": size_of::<sp::ProfileDataV1>() => 64 / 48;
    "QnnSystemProfile_ProfileDataV1_t align": align_of::<sp::ProfileDataV1>() => 8 / 8;
    "QnnSystemProfile_ProfileDataV1_t.profilingEvents offset":
        offset_of!(sp::ProfileDataV1, profiling_events) => 48 / 40;
    "QnnSystemProfile_ProfileDataV1_t.numProfilingEvents offset":
        offset_of!(sp::ProfileDataV1, num_profiling_events) => 56 / 44;
    "QnnSystemProfile_ProfileData_t size": size_of::<sp::ProfileData>() => 72 / 56;
    "QnnSystemProfile_ProfileData_t align": align_of::<sp::ProfileData>() => 8 / 8;
    "QnnSystemProfile_ProfileData_t.v1 offset": offset_of!(sp::ProfileData, v1) => 8 / 8;

    "Qnn_Scalar_t size": size_of::<sp::Scalar>() => 16 / 16;
    "Qnn_Scalar_t align": align_of::<sp::Scalar>() => 8 / 8;
    "Qnn_Scalar_t union offset": offset_of!(sp::Scalar, value) => 8 / 8;
    "Qnn_OpaqueObject_t size": size_of::<sp::OpaqueObject>() => 16 / 16;
    "QnnProfile_BackendOpaqueObject_t size": size_of::<sp::BackendOpaqueObject>() => 24 / 24;
    "QnnProfile_BackendOpaqueObject_t align": align_of::<sp::BackendOpaqueObject>() => 8 / 8;
    "QnnProfile_ExtendedEventDataV1_t size": size_of::<sp::ExtendedEventDataV1>() => 48 / 48;
    "QnnProfile_ExtendedEventDataV1_t align": align_of::<sp::ExtendedEventDataV1>() => 8 / 8;
    "QnnProfile_ExtendedEventDataV1_t union offset": offset_of!(sp::ExtendedEventDataV1, value) => 8 / 8;
    "QnnProfile_ExtendedEventDataV1_t.timestamp offset":
        offset_of!(sp::ExtendedEventDataV1, timestamp) => 32 / 32;
    "QnnProfile_ExtendedEventDataV1_t.identifier offset":
        offset_of!(sp::ExtendedEventDataV1, identifier) => 40 / 40;
    "QnnProfile_ExtendedEventData_t size": size_of::<sp::ExtendedEventData>() => 56 / 56;
    "QnnProfile_ExtendedEventData_t align": align_of::<sp::ExtendedEventData>() => 8 / 8;
    "QnnProfile_ExtendedEventData_t.v1 offset": offset_of!(sp::ExtendedEventData, v1) => 8 / 8;

    "QnnSystemContext_BinaryInfo_t size": size_of::<BinaryInfo>() => 144 / 112;
    "QnnSystemContext_BinaryInfo_t align": align_of::<BinaryInfo>() => 8 / 8;
    "QnnSystemContext_BinaryInfo_t union offset": offset_of!(BinaryInfo, v) => 8 / 8;

    "QnnSystemContext_BinaryInfoV1_t size": size_of::<BinaryInfoV1>() => 128 / 96;
    "QnnSystemContext_BinaryInfoV1_t align": align_of::<BinaryInfoV1>() => 8 / 8;
    "QnnSystemContext_BinaryInfoV1_t.numGraphs offset":
        offset_of!(BinaryInfoV1, num_graphs) => 112 / 88;
    "QnnSystemContext_BinaryInfoV1_t.graphs offset": offset_of!(BinaryInfoV1, graphs) => 120 / 92;

    "QnnSystemContext_BinaryInfoV3_t size": size_of::<BinaryInfoV3>() => 136 / 88;
    "QnnSystemContext_BinaryInfoV3_t align": align_of::<BinaryInfoV3>() => 8 / 8;
    "QnnSystemContext_BinaryInfoV3_t.numGraphs offset":
        offset_of!(BinaryInfoV3, num_graphs) => 88 / 64;
    "QnnSystemContext_BinaryInfoV3_t.graphs offset": offset_of!(BinaryInfoV3, graphs) => 96 / 68;

    "QnnSystemContext_GraphInfo_t size": size_of::<GraphInfo>() => 88 / 48;
    "QnnSystemContext_GraphInfo_t align": align_of::<GraphInfo>() => 8 / 4;

    "QnnSystemContext_GraphInfoV1_t size": size_of::<GraphInfoV1>() => 40 / 20;
    "QnnSystemContext_GraphInfoV1_t align": align_of::<GraphInfoV1>() => 8 / 4;
    "QnnSystemContext_GraphInfoV1_t.graphInputs offset":
        offset_of!(GraphInfoV1, graph_inputs) => 16 / 8;
    "QnnSystemContext_GraphInfoV1_t.graphOutputs offset":
        offset_of!(GraphInfoV1, graph_outputs) => 32 / 16;

    "QnnOpPackage_Interface_t size": size_of::<op_package::Interface>() => 88 / 48;
    "QnnOpPackage_Interface_t align": align_of::<op_package::Interface>() => 8 / 4;
    "QnnOpPackage_Interface_t union offset": offset_of!(op_package::Interface, implementation) => 16 / 12;
    "QnnOpPackage_ImplementationV1_4_t size": size_of::<op_package::ImplementationV1_4>() => 72 / 36;
    "QnnOpPackage_ImplementationV2_0_t size": size_of::<op_package::ImplementationV2_0>() => 56 / 28;
    "QnnOpPackage_Info_t size": size_of::<op_package::Info>() => 176 / 88;
    "QnnOpPackage_Info_t align": align_of::<op_package::Info>() => 8 / 4;
    "QnnOpPackage_Info_t.numOperations offset": offset_of!(op_package::Info, num_operations) => 24 / 12;
    "QnnOpPackage_Info_t.numOptimizations offset": offset_of!(op_package::Info, num_optimizations) => 40 / 20;
    "QnnOpPackage_Info_t.opsetVersion offset": offset_of!(op_package::Info, opset_version) => 72 / 36;
    "QnnOpPackage_Info_t.reserved offset": offset_of!(op_package::Info, reserved) => 80 / 40;

    "QnnLpaiGraph_Mem_t size": size_of::<lpai::GraphMem>() => 16 / 12;
    "QnnLpaiGraph_Mem_t align": align_of::<lpai::GraphMem>() => 8 / 4;
    "QnnLpaiGraph_PerfCfg_t size": size_of::<lpai::PerfCfg>() => 12 / 12;
    "QnnLpaiGraph_PerfCfg_t align": align_of::<lpai::PerfCfg>() => 4 / 4;

    "QnnLpaiBackend_CustomConfig_t size": size_of::<lpai::BackendCustomConfig>() => 16 / 8;
    "QnnLpaiBackend_CustomConfig_t align": align_of::<lpai::BackendCustomConfig>() => 8 / 4;
    "QnnLpaiGraph_CustomConfig_t size": size_of::<lpai::GraphCustomConfig>() => 16 / 8;
    "QnnLpaiGraph_CustomConfig_t align": align_of::<lpai::GraphCustomConfig>() => 8 / 4;
    "QnnLpaiGraph_CustomProperty_t size": size_of::<lpai::GraphCustomProperty>() => 16 / 8;
    "QnnLpaiGraph_CustomProperty_t align": align_of::<lpai::GraphCustomProperty>() => 8 / 4;
}

/// The rows of [`layout_checks`] that do not hold in this build (none when the crate compiled,
/// since each row is also a `const` assertion).
pub fn layout_mismatches() -> impl Iterator<Item = LayoutCheck> {
    layout_checks().into_iter().filter(|check| !check.holds())
}

// Derived facts the accessors rely on, not in the measured table: each later version of a
// struct starts with the earlier version's fields at the same offsets, and the tables hold
// exactly their documented number of pointer-sized entries.
macro_rules! same_offsets {
    ($a:ty, $b:ty, [$($field:ident),*]) => {
        $( const _: () = assert!(
            offset_of!($a, $field) == offset_of!($b, $field),
            concat!("lpai-direct: version prefix mismatch at ", stringify!($field)),
        ); )*
    };
}

same_offsets!(
    TensorV1,
    TensorV2,
    [id, name, tensor_type, data_format, data_type, quantize_params, rank, dimensions, mem_type, memory]
);
same_offsets!(GraphInfoV1, GraphInfoV2, [graph_name, num_graph_inputs, graph_inputs, num_graph_outputs, graph_outputs]);
same_offsets!(
    GraphInfoV2,
    GraphInfoV3,
    [
        graph_name,
        num_graph_inputs,
        graph_inputs,
        num_graph_outputs,
        graph_outputs,
        num_updateable_tensors,
        updateable_tensors
    ]
);
same_offsets!(
    BinaryInfoV1,
    BinaryInfoV2,
    [
        backend_id,
        build_id,
        core_api_version,
        backend_api_version,
        soc_version,
        hw_info_blob_version,
        context_blob_version,
        hw_info_blob_size,
        hw_info_blob,
        context_blob_size,
        num_context_tensors,
        context_tensors,
        num_graphs,
        graphs
    ]
);

const _: () = assert!(
    size_of::<InterfaceTable>() == INTERFACE_TABLE_ENTRIES * size_of::<usize>(),
    "lpai-direct: QnnInterface function table entry count",
);
const _: () = assert!(
    size_of::<SystemInterfaceTable>() == SYSTEM_INTERFACE_TABLE_ENTRIES * size_of::<usize>(),
    "lpai-direct: QnnSystemInterface function table entry count",
);
const _: () = assert!(
    size_of::<BinaryInfoV2>() <= size_of::<BinaryInfo>() - offset_of!(BinaryInfo, v),
    "lpai-direct: BinaryInfo union must hold V2",
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_row_matches_on_this_target() {
        let mut mismatches = layout_mismatches().peekable();
        if mismatches.peek().is_some() {
            for check in mismatches {
                eprintln_check(&check);
            }
            panic!("QNN layout mismatches (see above)");
        }
        assert_eq!(layout_checks().len(), LAYOUT_CHECK_COUNT);
    }

    #[test]
    fn rows_are_named_uniquely() {
        let checks = layout_checks();
        for (i, a) in checks.iter().enumerate() {
            assert!(checks[i + 1..].iter().all(|b| b.what != a.what), "{}", a.what);
        }
    }

    #[test]
    fn graph_execute_is_entry_21_and_backend_get_property_entry_62() {
        let ptr = size_of::<usize>();
        assert_eq!(offset_of!(InterfaceTable, graph_execute), 21 * ptr);
        assert_eq!(offset_of!(InterfaceTable, backend_get_property), 62 * ptr);
        assert_eq!(offset_of!(InterfaceTable, property_has_capability), 0);
        assert_eq!(offset_of!(InterfaceTable, context_create_from_binary), 13 * ptr);
        assert_eq!(offset_of!(InterfaceTable, graph_get_property), 53 * ptr);
        assert_eq!(offset_of!(InterfaceTable, error_get_message), 48 * ptr);
        assert_eq!(offset_of!(InterfaceTable, context_free_binary_section_update), 70 * ptr);
        assert_eq!(offset_of!(SystemInterfaceTable, system_context_free), 3 * ptr);
        assert_eq!(offset_of!(SystemInterfaceTable, system_profile_create_serialization_target), 13 * ptr);
        assert_eq!(offset_of!(SystemInterfaceTable, system_profile_free_serialization_target), 15 * ptr);
    }

    fn eprintln_check(check: &LayoutCheck) {
        extern crate std;
        std::eprintln!("{}: actual {}, expected {}", check.what, check.actual, check.expected);
    }
}
