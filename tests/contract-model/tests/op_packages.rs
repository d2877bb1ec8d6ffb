//! Op packages on the contract model (a model of the documented LPAI contract, not the vendor library):
//! backendRegisterOpPackage with the test op package (tests/op-package) and its documented refusals, and a binary
//! (LPCM version 3) whose graph uses `lpai.test::TestGain`, which loads only once the package is registered.

mod common;

use common::*;
use lpai_contract_model::writer::{self, CustomOpSpec};
use lpai_direct::qnn::error as qnn_error;
use lpai_direct::qnn::{ContextConfig, Handle};
use std::ffi::{CStr, CString};

const PROVIDER: &CStr = c"LpaiTestOpPackage_interfaceProvider";
const TEST_GAIN: [CustomOpSpec<'static>; 1] = [CustomOpSpec { graph: 0, package: "lpai.test", op: "TestGain" }];

fn package_path() -> CString {
    CString::new(op_package_library().into_os_string().into_encoded_bytes()).unwrap()
}

/// The single graph `g`, naming lpai.test::TestGain.
fn custom_op_file() -> Vec<u8> {
    writer::version_3_file(&SINGLE, &TEST_GAIN, 48).unwrap()
}

fn free_backend(backend: Handle) {
    // SAFETY: a live backend of this test, freed once.
    assert_eq!(code(unsafe { lpai_table().backend_free.unwrap()(backend) }), 0);
}

#[test]
fn a_binary_using_a_custom_op_fails_to_load_without_its_package() {
    let _serial = serial();
    let backend = create_backend();
    let binary = Buffer::of(&custom_op_file());
    let (answer, _) = create_context(backend, &binary, &[ContextConfig::persistent_binary(true)]);
    assert_eq!(answer, qnn_error::CONTEXT_ERROR_CREATE_FROM_BINARY);
    assert_eq!(
        one_rule("op-package"),
        "contract: rule op-package: graph \"g\" uses op lpai.test::TestGain, which no registered op package provides"
    );
    // The system library still describes it.
    let (system, graphs) = describe(&binary);
    assert_eq!(graphs.len(), 1);
    // SAFETY: a live system context, freed once.
    unsafe { system_table().system_context_free.unwrap()(system) };
    free_backend(backend);
}

#[test]
fn with_the_package_registered_it_loads_and_computes_as_without_custom_ops() {
    let _serial = serial();
    let path = package_path();
    let backend = create_backend();
    assert_eq!(register_op_package(backend, Some(&path), Some(PROVIDER), None), 0);
    quiet();
    let mut with_op = Session::open_on(backend, &custom_op_file());
    let mut plain = Session::open(&file(&SINGLE, 48));
    for (call, value) in [7u8, 90, 255].into_iter().enumerate() {
        with_op.input_mut(0).fill(value);
        plain.input_mut(0).fill(value);
        assert_eq!((with_op.execute(), plain.execute()), (0, 0), "call {call}");
        assert_eq!(with_op.output(0), plain.output(0), "call {call}");
    }
    quiet();
    assert_eq!(with_op.free(), 0, "contextFree, then backendFree releases the package");
    assert_eq!(plain.free(), 0);
    // Released at backendFree: a new backend registers it afresh.
    let again = create_backend();
    assert_eq!(register_op_package(again, Some(&path), Some(PROVIDER), Some(c"")), 0);
    free_backend(again);
}

#[test]
fn a_wrong_provider_name_answers_provider_not_found() {
    let _serial = serial();
    let path = package_path();
    let backend = create_backend();
    let answer = register_op_package(backend, Some(&path), Some(c"NoSuchProvider"), None);
    assert_eq!(answer, qnn_error::BACKEND_ERROR_OP_PACKAGE_IF_PROVIDER_NOT_FOUND);
    let line = one_rule("op-package");
    assert_eq!(
        line,
        format!("contract: rule op-package: {}: has no interface provider NoSuchProvider", path.to_str().unwrap())
    );
    free_backend(backend);
}

#[test]
fn a_file_that_is_not_a_library_and_a_missing_path_answer_not_found() {
    let _serial = serial();
    let directory = std::env::temp_dir().join(format!("lpai-op-package-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let text = directory.join("not-a-library.so");
    std::fs::write(&text, "this is text, not an ELF library\n").unwrap();
    let missing = directory.join("missing.so");
    let backend = create_backend();
    for path in [&text, &missing] {
        let c_path = CString::new(path.to_str().unwrap()).unwrap();
        let answer = register_op_package(backend, Some(&c_path), Some(PROVIDER), None);
        assert_eq!(answer, qnn_error::BACKEND_ERROR_OP_PACKAGE_NOT_FOUND, "{}", path.display());
        let line = one_rule("op-package");
        let prefix = format!("contract: rule op-package: {}: cannot be opened as a library (", path.display());
        assert!(line.starts_with(&prefix), "{line:?}");
    }
    std::fs::remove_dir_all(&directory).unwrap();
    free_backend(backend);
}

#[test]
fn registering_the_same_ops_twice_answers_duplicate() {
    let _serial = serial();
    let path = package_path();
    let backend = create_backend();
    assert_eq!(register_op_package(backend, Some(&path), Some(PROVIDER), Some(c"LPAI")), 0);
    let answer = register_op_package(backend, Some(&path), Some(PROVIDER), Some(c"DSP"));
    assert_eq!(answer, qnn_error::BACKEND_ERROR_OP_PACKAGE_DUPLICATE);
    let line = one_rule("op-package");
    assert_eq!(
        line,
        format!("contract: rule op-package: {}: op lpai.test::TestGain is registered already", path.to_str().unwrap())
    );
    // Another backend has its own packages.
    let other = create_backend();
    assert_eq!(register_op_package(other, Some(&path), Some(PROVIDER), None), 0);
    free_backend(other);
    free_backend(backend);
}

#[test]
fn null_arguments_and_a_foreign_target_answer_invalid_argument() {
    let _serial = serial();
    let path = package_path();
    let backend = create_backend();
    for (path, provider) in [(None, Some(PROVIDER)), (Some(path.as_c_str()), None), (None, None)] {
        let answer = register_op_package(backend, path, provider, None);
        assert_eq!(answer, qnn_error::BACKEND_ERROR_INVALID_ARGUMENT);
        assert_eq!(
            one_rule("op-package"),
            "contract: rule op-package: backendRegisterOpPackage with a null package path or interface provider"
        );
    }
    let answer = register_op_package(backend, Some(&path), Some(PROVIDER), Some(c"HTP"));
    assert_eq!(answer, qnn_error::BACKEND_ERROR_INVALID_ARGUMENT);
    assert!(one_rule("op-package").ends_with(": target \"HTP\" is not the backend's (null, \"\", \"LPAI\" or \"DSP\")"));
    free_backend(backend);
    // A stale backend.
    let answer = register_op_package(backend, Some(&path), Some(PROVIDER), None);
    assert_eq!(answer, qnn_error::BACKEND_ERROR_INVALID_HANDLE);
    one_rule("live-handle");
}

#[test]
fn interface_2_0_registers_and_an_unknown_version_is_refused() {
    let _serial = serial();
    let path = package_path();
    let backend = create_backend();
    assert_eq!(register_op_package(backend, Some(&path), Some(c"LpaiTestOpPackage_interfaceProviderV2"), None), 0);
    quiet();
    let answer = register_op_package(backend, Some(&path), Some(c"LpaiTestOpPackage_unsupportedVersionProvider"), None);
    assert_eq!(answer, qnn_error::BACKEND_ERROR_OP_PACKAGE_UNSUPPORTED_VERSION);
    assert!(one_rule("op-package").ends_with(": interface version 3.0.0, the model knows 1.4 and 2.0"));
    // lpai.test.v2 provides TestBias (and TestGain), but not lpai.test's TestGain.
    let ops = [
        CustomOpSpec { graph: 0, package: "lpai.test.v2", op: "TestBias" },
        CustomOpSpec { graph: 0, package: "lpai.test", op: "TestGain" },
    ];
    let binary = Buffer::of(&writer::version_3_file(&SINGLE, &ops, 0).unwrap());
    let (answer, _) = create_context(backend, &binary, &[ContextConfig::persistent_binary(true)]);
    assert_eq!(answer, qnn_error::CONTEXT_ERROR_CREATE_FROM_BINARY);
    assert!(one_rule("op-package").contains("uses op lpai.test::TestGain"));
    let mut session = Session::open_on(backend, &writer::version_3_file(&SINGLE, &ops[..1], 0).unwrap());
    assert_eq!(session.execute(), 0);
    assert_eq!(session.free(), 0);
}
