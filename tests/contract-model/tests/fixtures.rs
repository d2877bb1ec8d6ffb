//! The contract fixtures (tests/fixtures/contract_*, written by scripts/make_contract_fixtures.py with its own
//! implementation of the formula; contract_custom_op with the test op package registered first) run on the contract model (a model of the documented LPAI contract, not the
//! vendor library) through its provider tables, repeating graphExecute on EARLY_TERMINATION as the runtime does:
//! the answers and every output byte match the script's, and the float files match the native ones.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures").join(name)
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path)
        .unwrap_or_else(|error| panic!("{}: {error} (run python3 scripts/make_contract_fixtures.py)", path.display()))
}

/// Input files of each line of `input_list_<mode>.txt`, in the manifest's input order.
fn lines(directory: &Path, mode: &str, inputs: &[Value]) -> Vec<Vec<Vec<u8>>> {
    let list = String::from_utf8(read(&directory.join(format!("input_list_{mode}.txt")))).unwrap();
    list.lines()
        .map(|line| {
            let entries: Vec<(&str, &str)> =
                line.split_whitespace().map(|entry| entry.split_once(":=").unwrap()).collect();
            inputs
                .iter()
                .map(|input| {
                    let name = input["qnn_name"].as_str().unwrap();
                    let path = entries.iter().find(|(entry, _)| *entry == name).unwrap().1;
                    read(&directory.join(path))
                })
                .collect()
        })
        .collect()
}

fn samples(bytes: &[u8], wide: bool) -> Vec<i64> {
    if wide {
        bytes.chunks(2).map(|pair| i64::from(u16::from_le_bytes([pair[0], pair[1]]))).collect()
    } else {
        bytes.iter().map(|&byte| i64::from(byte)).collect()
    }
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks(4).map(|four| f32::from_le_bytes(four.try_into().unwrap())).collect()
}

fn run_fixture(name: &str) {
    let directory = fixture(name);
    let manifest: Value = serde_json::from_slice(&read(&directory.join("manifest.json"))).unwrap();
    assert!(manifest["description"].as_str().unwrap().contains("Contract-model fixture"));
    let binary = read(&directory.join(manifest["context_binary"].as_str().unwrap()));
    let (inputs, outputs) = (manifest["inputs"].as_array().unwrap(), manifest["outputs"].as_array().unwrap());
    let wide = |tensor: &Value| tensor["native_dtype"] == "uint16";
    let native = lines(&directory, "native", inputs);
    let float = lines(&directory, "float", inputs);
    assert_eq!(native.len() as u64, manifest["lines"].as_u64().unwrap());
    let backend = create_backend();
    // A fixture whose graph uses custom ops names the op packages to register first (the test op package).
    for package in manifest["op_packages"].as_array().into_iter().flatten() {
        assert_eq!(package["library"], "liblpai_test_op_package.so");
        let path = std::ffi::CString::new(op_package_library().into_os_string().into_encoded_bytes()).unwrap();
        let provider = std::ffi::CString::new(package["interface_provider"].as_str().unwrap()).unwrap();
        assert_eq!(register_op_package(backend, Some(&path), Some(&provider), None), 0, "{name}");
    }
    let mut session = Session::open_on(backend, &binary);
    for (line, files) in native.iter().enumerate() {
        for (index, bytes) in files.iter().enumerate() {
            session.input_mut(index).copy_from_slice(bytes);
            // The runtime's quantization of the float file gives the native one.
            let (scale, offset) =
                (inputs[index]["scale"].as_f64().unwrap() as f32, inputs[index]["qnn_offset"].as_i64().unwrap());
            let top = if wide(&inputs[index]) { 65535 } else { 255 };
            let quantized: Vec<i64> = floats(&float[line][index])
                .iter()
                .map(|&x| ((x / scale).round_ties_even() as i64 - offset).clamp(0, top))
                .collect();
            assert_eq!(quantized, samples(bytes, wide(&inputs[index])), "{name} line {line} input {index}");
        }
        let mut answers = Vec::new();
        loop {
            let answer = session.execute();
            answers.push(answer);
            if answer != 6038 {
                break;
            }
        }
        let expected: Vec<u32> = manifest["contract_model"]["execute_answers_per_line"][line]
            .as_array()
            .unwrap()
            .iter()
            .map(|answer| answer.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(answers, expected, "{name} line {line}: graphExecute answers");
        for (index, output) in outputs.iter().enumerate() {
            let file = format!("{}.raw", output["qnn_name"].as_str().unwrap());
            let reference = read(&directory.join(format!("reference/native/Result_{line}")).join(&file));
            assert_eq!(&session.output(index)[..reference.len()], &reference[..], "{name} line {line} {file}");
            let (scale, offset) = (output["scale"].as_f64().unwrap() as f32, output["qnn_offset"].as_i64().unwrap());
            let dequantized: Vec<u32> =
                samples(&reference, wide(output)).iter().map(|&q| ((q + offset) as f32 * scale).to_bits()).collect();
            let float_reference = read(&directory.join(format!("reference/float/Result_{line}")).join(&file));
            let float_bits: Vec<u32> = floats(&float_reference).iter().map(|x| x.to_bits()).collect();
            assert_eq!(dequantized, float_bits, "{name} line {line} float {file}");
        }
    }
    quiet();
}

#[test]
fn contract_single_matches_the_script() {
    let _serial = serial();
    run_fixture("contract_single");
}

#[test]
fn contract_custom_op_matches_the_script_once_its_package_is_registered() {
    let _serial = serial();
    run_fixture("contract_custom_op");
    // Without the package, the binary does not load.
    let binary = Buffer::of(&read(&fixture("contract_custom_op").join("contract_custom_op.bin")));
    let backend = create_backend();
    let (answer, _) = create_context(backend, &binary, &[lpai_direct::qnn::ContextConfig::persistent_binary(true)]);
    assert_eq!(answer, lpai_direct::qnn::error::CONTEXT_ERROR_CREATE_FROM_BINARY);
    assert!(one_rule("op-package")
        .ends_with("graph \"single\" uses op lpai.test::TestGain, which no registered op package provides"));
    // SAFETY: a live backend of this test, freed once.
    assert_eq!(unsafe { lpai_table().backend_free.unwrap()(backend) }, 0);
}

#[test]
fn contract_stream_matches_the_script() {
    let _serial = serial();
    run_fixture("contract_stream");
}
