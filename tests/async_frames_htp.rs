//! Asynchronous frames on the real libQnnHtp.so: whichever path the backend takes (the x86 libQnnHtp answers
//! QNN_COMMON_ERROR_NOT_SUPPORTED to graphExecuteAsync, so the runtime falls back to graphExecute inside
//! start_frame), a started frame gives bit for bit the outputs of the synchronous path, and with two input sets
//! the next frame's inputs go to the other set.

mod common;

use lpai_direct_skel::platform::VendorCalls;
use lpai_direct_skel::runtime::{Arena, BackendOptions, Binary, Context, FrameState, Libraries, LoadRequest};

#[test]
fn started_frames_on_libqnnhtp_match_the_synchronous_path_bit_for_bit() {
    let _lock = common::qnn_lock();
    let qnn = common::qnn_lib_dir();
    let c_path = |p: std::path::PathBuf| std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    let (backend, system) = (c_path(qnn.join("libQnnHtp.so")), c_path(qnn.join("libQnnSystem.so")));
    let libraries = Libraries::open(&backend, Some(&system), &BackendOptions::default()).unwrap();
    let mut memory = vec![0u8; 1 << 20];
    let arena = Arena::new(&mut memory);
    let binary = c_path(common::fixture("kws_conv/kws_conv_qnn.bin"));
    let request = LoadRequest::new(Binary::File(&binary)).with_input_sets(2);
    let mut context = Context::load(&VendorCalls::lock(), &libraries, &arena, &request).unwrap();
    let graph = context.graph_mut(0).unwrap();
    assert_eq!((graph.input_sets(), graph.executes_async()), (2, None));
    for line in 0..3 {
        let native = std::fs::read(common::fixture(&format!("kws_conv/inputs/native/{line}_0.raw"))).unwrap();
        graph.write_input(0, &native).unwrap();
        graph.execute().unwrap();
        let synchronous = graph.output_bytes(0).unwrap().to_vec();
        // The same inputs, in the set the started frame reads (the one execute read).
        let first_set = graph.input_buffer(0).unwrap().0;
        // SAFETY: each frame is taken below (and the context dropped, never leaked) before `memory` and `libraries`
        // go.
        unsafe { graph.start_frame(None) }.unwrap();
        assert!(graph.frame_in_flight());
        assert_ne!(graph.input_buffer(0).unwrap().0, first_set, "the next frame's inputs go to the other set");
        let state = graph.poll_frame().unwrap();
        let execution = match state {
            FrameState::Pending => graph.wait_frame().unwrap(),
            FrameState::Ready(execution) => Some(execution),
            FrameState::NeedsNextFrame => None,
        };
        assert!(execution.is_some_and(|execution| execution.attempts == 1), "{state:?}");
        assert_eq!(graph.output_bytes(0).unwrap(), synchronous.as_slice(), "line {line}");
        let reference =
            std::fs::read(common::fixture(&format!("kws_conv/reference/native/Result_{line}/logits.raw"))).unwrap();
        assert_eq!(synchronous, reference, "line {line}");
    }
    // x86 libQnnHtp has no asynchronous execution: the fallback ran (one info line); a backend that has it would
    // have executed asynchronously, and the outputs above hold either way.
    eprintln!("libQnnHtp executes asynchronously: {:?}", graph.executes_async());
    assert!(graph.executes_async().is_some());
}
