//! One test per graph rule of the contract model (a model of the documented LPAI contract, not the vendor library):
//! memory, finalize, persistent state and I/O; each breaks the rule once and sees the documented code and one log
//! line naming the rule.

mod common;

use common::*;
use lpai_direct::qnn::error as qnn_error;
use lpai_direct::qnn::{lpai, TensorMemType};
use std::ptr::null_mut;

#[test]
fn memory_unset_at_finalize_breaks_memory_before_finalize() {
    let _serial = serial();
    let session = Session::created(&file(&SINGLE, 0), 0);
    assert_eq!(session.finalize(), qnn_error::GRAPH_ERROR_FINALIZE_FAILED);
    assert!(one_rule("memory-before-finalize").contains("neither"));
    let mut scratch = memory(session.scratch_size, &session.scratch);
    assert_eq!(
        set_config(session.graph, &mut [(lpai::GraphConfigOption::SCRATCH_MEM, (&raw mut scratch).cast())], &[]),
        0
    );
    assert_eq!(session.finalize(), 6022);
    assert!(one_rule("memory-before-finalize").contains("PERSISTENT_MEM was not set"));
}

#[test]
fn misaligned_or_small_memory_breaks_memory_aligned() {
    let _serial = serial();
    let session = Session::created(&file(&SINGLE, 0), 0);
    assert_eq!((session.scratch_size, session.persistent_size), (128, 64)); // properties 100 and 40, rounded
    let shifted = Buffer::with_offset(256, 64);
    let good_persistent = memory(64, &session.persistent);
    let cases = [
        ("misaligned", memory(128, &shifted)),
        ("below the property", memory(64, &session.scratch)),
        ("not a multiple of 64", memory(100, &session.scratch)),
        ("null", lpai::GraphMem { addr: null_mut(), ..memory(128, &session.scratch) }),
        ("memType 0", lpai::GraphMem { mem_type: lpai::MemType(0), ..memory(128, &session.scratch) }),
    ];
    for (case, mut scratch) in cases {
        let mut persistent = good_persistent;
        assert_eq!(
            session.set_memory_configs(&mut scratch, &mut persistent),
            qnn_error::GRAPH_ERROR_INVALID_ARGUMENT,
            "{case}"
        );
        assert!(one_rule("memory-aligned").contains("SCRATCH_MEM"), "{case}");
    }
    // A refused list applies nothing: neither memory is set.
    assert_eq!(session.finalize(), 6022);
    one_rule("memory-before-finalize");
}

#[test]
fn a_pool_larger_than_its_memory_type_holds_breaks_memory_fits() {
    let _serial = serial();
    let session = Session::created(&file(&SINGLE, 0), 0);
    let big = Buffer::new(512 << 10);
    let good_persistent = memory(64, &session.persistent);
    // 512 KiB fits DDR, LLC and PSRAM but not TCM (256 KiB in this model).
    let mut scratch = lpai::GraphMem { mem_type: lpai::MemType::TCM, ..memory(512 << 10, &big) };
    let mut persistent = good_persistent;
    assert_eq!(session.set_memory_configs(&mut scratch, &mut persistent), qnn_error::GRAPH_ERROR_INVALID_ARGUMENT);
    let line = one_rule("memory-fits");
    assert!(
        line.contains("SCRATCH_MEM of 524288 bytes in QNN_LPAI_MEM_TYPE_TCM, whose limit is 262144 bytes"),
        "{line}"
    );
    for fits in [lpai::MemType::DDR, lpai::MemType::LLC, lpai::MemType::PSRAM] {
        let mut scratch = lpai::GraphMem { mem_type: fits, ..memory(512 << 10, &big) };
        let mut persistent = good_persistent;
        assert_eq!(session.set_memory_configs(&mut scratch, &mut persistent), 0, "{fits:?}");
        quiet();
    }
}

#[test]
fn config_after_finalize_breaks_finalized_after_config() {
    let _serial = serial();
    let mut session = Session::open(&file(&SINGLE, 0));
    assert_eq!(session.execute(), 0);
    let mut perf = lpai::PerfCfg { fps: 30, ..lpai::PerfCfg::DEFAULT };
    assert_eq!(set_config(session.graph, &mut [(lpai::GraphConfigOption::PERF_CFG, (&raw mut perf).cast())], &[]), 0);
    quiet();
    assert_eq!(session.execute(), qnn_error::GRAPH_ERROR_GRAPH_NOT_FINALIZED);
    one_rule("finalized-after-config");
    assert_eq!(session.finalize(), 0);
    assert_eq!(session.execute(), 0);
    quiet();
}

#[test]
fn clobbered_or_shared_persistent_memory_breaks_persistent_state() {
    let _serial = serial();
    let mut session = Session::open(&file(&SINGLE, 0));
    assert_eq!(session.execute(), 0);
    session.persistent.bytes_mut()[0] ^= 1;
    assert_eq!(session.execute(), qnn_error::GRAPH_ERROR_INVALID_ARGUMENT);
    assert!(one_rule("persistent-state").contains("shared or clobbered"));
    // Two graphs given the same persistent memory: the second finalize takes it over.
    let mut first = Session::open(&file(&SINGLE, 0));
    let second = Session::created(&file(&SINGLE, 0), 0);
    let mut scratch = memory(second.scratch_size, &second.scratch);
    let mut shared = memory(first.persistent_size, &first.persistent);
    assert_eq!(second.set_memory_configs(&mut scratch, &mut shared), 0);
    assert_eq!(second.finalize(), 0);
    assert_eq!(first.execute(), 6000);
    one_rule("persistent-state");
}

#[test]
fn wrong_tensor_id_or_count_breaks_tensor_ids() {
    let _serial = serial();
    let mut session = Session::open(&file(&SINGLE, 0));
    session.input_tensors[0].common_mut().unwrap().id = 8;
    assert_eq!(session.execute(), qnn_error::GRAPH_ERROR_INVALID_TENSOR);
    assert!(one_rule("tensor-ids").contains("input 0 has id 8, the graph's is 7"));
    session.input_tensors[0].common_mut().unwrap().id = 7;
    let tensor = session.output_tensors[0];
    session.output_tensors.push(tensor);
    assert_eq!(session.execute(), 6004);
    assert!(one_rule("tensor-ids").contains("2 outputs given, the graph has 1"));
    session.output_tensors.pop();
    assert_eq!(session.execute(), 0);
}

#[test]
fn misaligned_io_breaks_io_aligned() {
    let _serial = serial();
    let mut session = Session::open(&file(&SINGLE, 0));
    let shifted = Buffer::with_offset(64, 64);
    attach(&mut session.output_tensors[0], shifted.ptr(), 64);
    assert_eq!(session.execute(), qnn_error::GRAPH_ERROR_INVALID_TENSOR);
    assert!(one_rule("io-aligned").contains("output 0 data at"));
    let output = session.outputs[0].ptr();
    attach(&mut session.output_tensors[0], output, 64);
    session.input_tensors[0].common_mut().unwrap().mem_type = TensorMemType::MEMHANDLE;
    assert_eq!(session.execute(), 6004);
    assert!(one_rule("io-aligned").contains("memType 1"));
}

#[test]
fn unpadded_data_size_breaks_io_padded() {
    let _serial = serial();
    let mut session = Session::open(&file(&SINGLE, 0));
    let input = session.inputs[0].ptr();
    attach(&mut session.input_tensors[0], input, 16); // the exact tensor size, not padded to 64
    assert_eq!(session.execute(), qnn_error::GRAPH_ERROR_INVALID_TENSOR);
    assert!(one_rule("io-padded").contains("input 0 dataSize 16 (tensor 16 bytes)"));
    attach(&mut session.input_tensors[0], input, 64);
    assert_eq!(session.execute(), 0);
    quiet();
}
