//! What a graph's tensors take in a run: the bytes each tensor has on the wire in float or native mode, and what
//! each input file must hold.

use crate::input_list::ExpectedInput;
use lpai_direct::wire::io_bytes;
use lpai_direct_stub::stub::{GraphDescription, TensorDescription};

/// The tensor's QNN data type without the `QNN_DATATYPE_` prefix ("UFIXED_POINT_8").
pub fn data_type_name(tensor: &TensorDescription) -> &'static str {
    let name = lpai_direct::qnn::DataType(tensor.data_type).c_name().unwrap_or("unknown");
    name.trim_start_matches("QNN_DATATYPE_")
}

/// Bytes each tensor takes on the wire, float32 or native.
pub fn wire_sizes(tensors: &[TensorDescription], float: bool) -> Vec<usize> {
    tensors.iter().map(|tensor| wire_bytes(float, tensor)).collect()
}

/// Bytes one tensor takes on the wire; a size past the address space (only possible on a 32-bit HLOS) is
/// `usize::MAX`, which no file or buffer matches, so it is refused as a size mismatch.
pub fn wire_bytes(float: bool, tensor: &TensorDescription) -> usize {
    io_bytes(float, tensor.elements, tensor.native_bytes).unwrap_or(usize::MAX)
}

/// What each input file must hold (float32 where `float_inputs` says so, else native), with a hint for a file that
/// has the other kind's size.
pub fn expected_inputs(graph: &GraphDescription, float_inputs: &[bool]) -> Vec<ExpectedInput> {
    graph
        .inputs
        .iter()
        .zip(float_inputs)
        .map(|(tensor, float)| {
            let native = !float;
            let native_size =
                (wire_bytes(false, tensor), format!("{} {} elements", tensor.elements, data_type_name(tensor)));
            let float_size = (wire_bytes(true, tensor), format!("{} float32 elements", tensor.elements));
            let (expected, other, hint) = if native {
                (native_size, float_size, "it looks like float32 data: drop --use_native_input_files")
            } else {
                (float_size, native_size, "it looks like native data: pass --use_native_input_files")
            };
            let other_kind = (other.0 != expected.0).then(|| (other.0, hint.to_string()));
            ExpectedInput { name: tensor.name.clone(), bytes: expected.0, what: expected.1, other_kind }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpai_direct::qnn::DataType;

    fn tensor(name: &str, data_type: DataType, native_bytes: usize, convertible: bool) -> TensorDescription {
        TensorDescription {
            name: name.into(),
            id: 0,
            data_type: data_type.0,
            dimensions: vec![4],
            scale: 1.0,
            offset: 0,
            native_bytes,
            elements: 4,
            convertible,
        }
    }

    fn graph(inputs: Vec<TensorDescription>, outputs: Vec<TensorDescription>) -> GraphDescription {
        GraphDescription {
            name: "g".into(),
            inputs,
            outputs,
            scratch_bytes: 0,
            persistent_bytes: 0,
            arena_used: 0,
            arena_capacity: 0,
            clock_hz: 1,
        }
    }

    #[test]
    fn sizes_follow_the_mode() {
        let tensors = [tensor("x", DataType::UFIXED_POINT_16, 8, true)];
        assert_eq!((wire_sizes(&tensors, true), wire_sizes(&tensors, false)), (vec![16], vec![8]));
        let expected = expected_inputs(&graph(tensors.to_vec(), Vec::new()), &[true]);
        assert_eq!((expected[0].bytes, expected[0].other_kind.as_ref().map(|other| other.0)), (16, Some(8)));
    }
}
