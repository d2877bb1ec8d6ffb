//! The record's tests: round trips, every truncation and bit flip, the limits, and the conversion from QNN.

extern crate std;

use super::from_qnn::{tensor_meta, write_graphs};
use super::*;
use crate::qnn::{self, GraphInfo, GraphInfoV1, GraphInfoVersion, GraphInfoVersions, Tensor};
use std::string::String;
use std::vec;
use std::vec::Vec;

fn tensor<'t>(name: &'t str, id: u32, dimensions: &[u32], quantization: Quantization) -> TensorMeta<'t> {
    let mut all = [0; MAX_RANK];
    all[..dimensions.len()].copy_from_slice(dimensions);
    let data_type = match quantization {
        Quantization::None => DataType::FLOAT_32,
        Quantization::ScaleOffset { .. } => DataType::UFIXED_POINT_8,
    };
    TensorMeta {
        name,
        id,
        tensor_type: TensorType::APP_WRITE,
        data_type,
        rank: dimensions.len() as u32,
        dimensions: all,
        quantization,
    }
}

/// A graph as the tests write it: name, inputs, outputs.
type Graph<'t> = (&'t str, Vec<TensorMeta<'t>>, Vec<TensorMeta<'t>>);

/// The binary hash the tests' records carry.
fn test_hash() -> [u8; HASH_BYTES] {
    binary_hash(b"the binary")
}

fn write(graphs: &[Graph<'_>], buffer: &mut [u8]) -> Result<usize, WriteError> {
    write_with(&test_hash(), graphs, buffer)
}

fn write_with(hash: &[u8; HASH_BYTES], graphs: &[Graph<'_>], buffer: &mut [u8]) -> Result<usize, WriteError> {
    let mut writer = Writer::new(buffer);
    writer.header(graphs.len() as u32, hash);
    for (name, inputs, outputs) in graphs {
        writer.graph(name, inputs.len() as u32, outputs.len() as u32);
        for meta in inputs.iter().chain(outputs) {
            writer.tensor(meta);
        }
    }
    writer.finish()
}

/// Measures, then writes.
fn encode(graphs: &[Graph<'_>]) -> Result<Vec<u8>, WriteError> {
    encode_with(&test_hash(), graphs)
}

/// [`encode`] with the binary hash `hash`.
fn encode_with(hash: &[u8; HASH_BYTES], graphs: &[Graph<'_>]) -> Result<Vec<u8>, WriteError> {
    let needed = match write_with(hash, graphs, &mut []) {
        Err(WriteError::TooSmall { needed }) => needed,
        Err(error) => return Err(error),
        Ok(_) => 0,
    };
    let mut bytes = vec![0u8; needed];
    let length = write_with(hash, graphs, &mut bytes)?;
    assert_eq!(length, needed);
    Ok(bytes)
}

fn sample() -> Vec<Graph<'static>> {
    let q = |scale, offset| Quantization::ScaleOffset { scale, offset };
    vec![
        (
            "encoder",
            vec![tensor("audio", 7, &[1, 16000], q(0.0039, -128)), tensor("state", 9, &[], Quantization::None)],
            vec![tensor("logits", 8, &[1, 2, 3, 4, 5, 6, 7, 8], q(0.5, 3))],
        ),
        ("décodeur", vec![tensor("in", 1, &[4], Quantization::None)], vec![tensor("out", 2, &[2, 2], q(1e-6, 0))]),
    ]
}

#[test]
fn a_record_round_trips_in_graph_order() {
    let graphs = sample();
    let bytes = encode(&graphs).unwrap();
    let record = Record::parse(&bytes).unwrap();
    assert_eq!(record.graph_count(), 2);
    let decoded: Vec<Graph<'_>> =
        record.graphs().map(|graph| (graph.name, graph.inputs.collect(), graph.outputs.collect())).collect();
    assert_eq!(decoded, graphs);
    let first = record.graphs().next().unwrap();
    assert_eq!((first.inputs.len(), first.outputs.len()), (2, 1));
    assert_eq!(first.outputs.clone().next().unwrap().dimensions(), &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(first.inputs.clone().next().unwrap().native_bytes(), Some(16000));
    assert_eq!(first.inputs.clone().nth(1).unwrap().native_bytes(), Some(4));
}

#[test]
fn a_short_buffer_reports_what_it_needs_and_holds_nothing_half_checked() {
    let graphs = sample();
    let whole = encode(&graphs).unwrap();
    let mut short = vec![0u8; whole.len() - 1];
    assert_eq!(write(&graphs, &mut short), Err(WriteError::TooSmall { needed: whole.len() }));
}

#[test]
fn every_truncation_is_refused() {
    let bytes = encode(&sample()).unwrap();
    for length in 0..bytes.len() {
        let error = Record::parse(&bytes[..length]).expect_err("a truncated record must be refused");
        assert!(error.offset <= length, "{length}: {error}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(Record::parse(&longer).unwrap_err().what.template(), "bytes follow the last graph");
}

/// Writes a parsed record again from what it reads as.
fn rewrite(record: &Record<'_>) -> Vec<u8> {
    let graphs: Vec<Graph<'_>> =
        record.graphs().map(|graph| (graph.name, graph.inputs.collect(), graph.outputs.collect())).collect();
    encode_with(&record.binary_hash(), &graphs).unwrap()
}

#[test]
fn every_bit_flip_is_refused_or_reads_as_exactly_the_flipped_record() {
    let bytes = encode(&sample()).unwrap();
    let step = if cfg!(miri) { 11 } else { 1 };
    let (mut refused, mut accepted) = (0, 0);
    for bit in (0..bytes.len() * 8).step_by(step) {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        match Record::parse(&flipped) {
            Err(error) => {
                assert!(error.offset <= flipped.len());
                refused += 1;
            }
            Ok(record) => {
                assert_eq!(rewrite(&record), flipped, "bit {bit}");
                accepted += 1;
            }
        }
    }
    assert!(refused > 0 && accepted > 0, "{refused} refused, {accepted} accepted");
}

#[test]
fn the_binary_hash_is_sha256() {
    // FIPS 180-2's example: SHA-256("abc").
    let expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    let hex: String = binary_hash(b"abc").iter().map(|byte| std::format!("{byte:02x}")).collect();
    assert_eq!(hex, expected);
}

#[test]
fn random_bytes_behind_a_valid_header_never_panic() {
    let mut random = fastrand::Rng::with_seed(9);
    let rounds = if cfg!(miri) { 50 } else { 20_000 };
    for _ in 0..rounds {
        let mut bytes: Vec<u8> = [MAGIC, VERSION].iter().flat_map(|w| w.to_le_bytes()).collect();
        bytes.extend(binary_hash(&[random.u8(..)]));
        bytes.extend(random.u32(1..=2).to_le_bytes());
        let length = random.usize(0..200);
        bytes.extend((0..length).map(|_| if random.bool() { random.u8(0..4) } else { random.u8(..) }));
        if let Ok(record) = Record::parse(&bytes) {
            assert_eq!(rewrite(&record), bytes);
        }
    }
}

fn refusal(graphs: &[Graph<'_>]) -> &'static str {
    match encode(graphs) {
        Err(WriteError::Invalid(error)) => error.what.template(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn the_limits_hold_on_both_sides_of_each_bound() {
    let one = |name| (name, vec![tensor("i", 1, &[1], Quantization::None)], vec![]);
    let names: Vec<String> = (0..=MAX_GRAPHS).map(|index| std::format!("g{index}")).collect();
    let graphs: Vec<Graph<'_>> = names.iter().map(|name| one(name.as_str())).collect();
    assert!(encode(&graphs[..MAX_GRAPHS]).is_ok());
    assert_eq!(refusal(&graphs), "a record holds 1 to 8 graphs");
    assert_eq!(refusal(&[]), "a record holds 1 to 8 graphs");

    let longest = "n".repeat(MAX_NAME_BYTES);
    let too_long = "n".repeat(MAX_NAME_BYTES + 1);
    assert!(encode(&[one(&longest)]).is_ok());
    assert_eq!(refusal(&[one(&too_long)]), "a name is longer than 255 bytes");
    assert_eq!(refusal(&[one("")]), "a name is empty");
    assert_eq!(refusal(&[one("a\0b")]), "a name holds a NUL byte");

    let mut deep = tensor("t", 1, &[1; MAX_RANK], Quantization::None);
    assert!(encode(&[("g", vec![deep], vec![])]).is_ok());
    deep.rank = MAX_RANK as u32 + 1;
    assert_eq!(refusal(&[("g", vec![deep], vec![])]), "the rank is larger than 8");

    let many: Vec<TensorMeta<'_>> =
        (0..=MAX_TENSORS as u32).map(|id| tensor("t", id, &[1], Quantization::None)).collect();
    assert!(encode(&[("g", many[..MAX_TENSORS].to_vec(), many[..MAX_TENSORS].to_vec())]).is_err());
    assert!(encode(&[("g", many[..MAX_TENSORS].to_vec(), vec![])]).is_ok());
    assert_eq!(refusal(&[("g", many.clone(), vec![])]), "a graph has more than 64 inputs or outputs");

    let huge = tensor("t", 1, &[1 << 16, 1 << 16], Quantization::None);
    assert_eq!(refusal(&[("g", vec![huge], vec![])]), "the tensor holds more than 4 GiB");
    let largest = TensorMeta { data_type: DataType::UINT_8, ..tensor("t", 1, &[65537, 65535], Quantization::None) };
    assert!(encode(&[("g", vec![largest], vec![])]).is_ok());
}

#[test]
fn inconsistent_records_are_refused_with_what_is_wrong() {
    let plain = tensor("t", 1, &[2], Quantization::None);
    assert_eq!(refusal(&[("g", vec![plain], vec![]), ("g", vec![plain], vec![])]), "two graphs have the same name");
    assert_eq!(refusal(&[("g", vec![plain], vec![plain])]), "two tensors of the graph have the same id");
    let nan = tensor("t", 1, &[2], Quantization::ScaleOffset { scale: f32::NAN, offset: 0 });
    assert_eq!(refusal(&[("g", vec![nan], vec![])]), "a SCALE_OFFSET scale is not a positive finite number");
    let unsized_type = TensorMeta { data_type: DataType(0x7FFF_FFFF), ..plain };
    assert_eq!(refusal(&[("g", vec![unsized_type], vec![])]), "the data type has no known element size");
    let odd_type = TensorMeta { tensor_type: TensorType(99), ..plain };
    assert_eq!(refusal(&[("g", vec![odd_type], vec![])]), "the tensor type is not a Qnn_TensorType_t");

    let bytes = encode(&[("g", vec![plain], vec![])]).unwrap();
    // The tensor's quantization word follows its name (1 + 1 bytes), id, type and data type.
    let quantization_at = 12 + HASH_BYTES + 2 + 8 + 2 + 12;
    for (kind, scale, what) in [
        (2u32, 0u32, "the quantization is neither none (0) nor SCALE_OFFSET (1)"),
        (0, 1.0f32.to_bits(), "an unquantized tensor has a scale or an offset"),
    ] {
        let mut changed = bytes.clone();
        changed[quantization_at..quantization_at + 4].copy_from_slice(&kind.to_le_bytes());
        changed[quantization_at + 4..quantization_at + 8].copy_from_slice(&scale.to_le_bytes());
        let error = Record::parse(&changed).unwrap_err();
        assert_eq!((error.what.template(), error.graph, error.tensor), (what, Some(0), Some(0)), "{error}");
    }
    let mut wrong_version = bytes.clone();
    wrong_version[4] = 1;
    assert_eq!(Record::parse(&wrong_version).unwrap_err().what.template(), "the record's version is not 2");
    assert_eq!(Record::parse(&bytes).unwrap().binary_hash(), test_hash());
    assert_eq!(Record::parse(b"LPDG\x01\0\0\0").unwrap_err().what.template(), "not a metadata record (no LPMD magic)");
    let message = std::format!("{}", Record::parse(&bytes[..30 + HASH_BYTES]).unwrap_err());
    assert_eq!(message, "byte 60, graph 0, tensor 0: the record ends early");
}

fn qnn_tensor(name: &std::ffi::CStr, id: u32, dimensions: &mut [u32], encoding: qnn::QuantizationEncoding) -> Tensor {
    // SAFETY: all-zero bytes are a valid `Qnn_Tensor_t` (integers, null pointers).
    let mut tensor: Tensor = unsafe { core::mem::zeroed() };
    tensor.version = qnn::TensorVersion::V1;
    let common = tensor.common_mut().unwrap();
    common.id = id;
    common.name = name.as_ptr();
    common.tensor_type = TensorType::APP_READ;
    common.data_type = DataType::UFIXED_POINT_8;
    common.quantize_params.encoding_definition = qnn::Definition::DEFINED;
    common.quantize_params.quantization_encoding = encoding;
    common.quantize_params.params.scale_offset_encoding = qnn::ScaleOffset { scale: 0.25, offset: -7 };
    common.rank = dimensions.len() as u32;
    common.dimensions = dimensions.as_mut_ptr();
    tensor
}

#[test]
fn libqnnsystem_descriptions_become_records_and_other_encodings_are_refused_by_name() {
    let (mut input_shape, mut output_shape) = ([1u32, 3], [3u32]);
    let mut inputs = [qnn_tensor(c"x", 4, &mut input_shape, qnn::QuantizationEncoding::SCALE_OFFSET)];
    let mut outputs = [qnn_tensor(c"y", 5, &mut output_shape, qnn::QuantizationEncoding::SCALE_OFFSET)];
    let info = |inputs: &mut [Tensor], outputs: &mut [Tensor]| GraphInfo {
        version: GraphInfoVersion::V1,
        v: GraphInfoVersions {
            v1: GraphInfoV1 {
                graph_name: c"net".as_ptr(),
                num_graph_inputs: inputs.len() as u32,
                graph_inputs: inputs.as_mut_ptr(),
                num_graph_outputs: outputs.len() as u32,
                graph_outputs: outputs.as_mut_ptr(),
            },
        },
    };
    let graphs = [info(&mut inputs, &mut outputs)];
    let mut buffer = [0u8; 256];
    let mut writer = Writer::new(&mut buffer);
    let hash = binary_hash(b"net");
    // SAFETY: every pointer in `graphs` points at the locals above.
    unsafe { write_graphs(&graphs, &hash, &mut writer) }.unwrap();
    let length = writer.finish().unwrap();
    let record = Record::parse(&buffer[..length]).unwrap();
    assert_eq!(record.binary_hash(), hash);
    let graph = record.graphs().next().unwrap();
    assert_eq!(graph.name, "net");
    let input = graph.inputs.clone().next().unwrap();
    assert_eq!((input.name, input.id, input.dimensions()), ("x", 4, &[1, 3][..]));
    assert_eq!(input.quantization, Quantization::ScaleOffset { scale: 0.25, offset: -7 });
    assert_eq!(graph.outputs.clone().next().unwrap().id, 5);

    let mut axis = [qnn_tensor(c"w", 6, &mut output_shape, qnn::QuantizationEncoding::AXIS_SCALE_OFFSET)];
    let graphs = [info(&mut inputs, &mut axis)];
    // SAFETY: as above.
    let error = unsafe { write_graphs(&graphs, &hash, &mut Writer::new(&mut [])) }.unwrap_err();
    assert_eq!(
        std::format!("{error}"),
        "graph net, tensor w: the quantization encoding is not SCALE_OFFSET, the only one a record carries (0x1)"
    );
    let mut undefined = inputs[0];
    undefined.common_mut().unwrap().quantize_params.encoding_definition = qnn::Definition::UNDEFINED;
    // SAFETY: as above.
    assert_eq!(unsafe { tensor_meta(&undefined) }.unwrap().quantization, Quantization::None);
    // SAFETY: an empty list.
    let none = unsafe { write_graphs(&[], &hash, &mut Writer::new(&mut [])) }.unwrap_err();
    assert_eq!(none.what, "the binary holds no graph");
}
