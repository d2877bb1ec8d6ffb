//! The stub's transports: the local transport (the full encoded wire path into the skel, in process) gives the
//! same bytes as the runtime called directly; the FastRPC transport, on a stand-in libadsprpc.so, opens the
//! right URI, asks for an unsigned PD, uses rpcmem buffers and gives the same bytes; without a FastRPC library
//! it names the libraries it tried; an rpcmem buffer keeps the FastRPC library loaded while it lives.

mod common;

use lpai_direct_skel::runtime::SystemLibrary;
use lpai_direct_skel::runtime::{Arena, Backend, BackendOptions, BinarySource, Context, ContextOptions};
use lpai_direct_stub::cli::{Options, Parser};
use lpai_direct_stub::net_run;
use lpai_direct_stub::stub::fastrpc::{FastRpc, FastRpcOptions};
use lpai_direct_stub::stub::Transport;
use std::ffi::CString;
use std::process::Command;

/// Every output of every line of a fixture, computed by the runtime directly (no stub, no wire).
fn direct_outputs(fixture: &str, native: bool) -> Vec<(String, Vec<u8>)> {
    let qnn = common::qnn_lib_dir();
    let c_path = |p: std::path::PathBuf| CString::new(p.to_str().unwrap()).unwrap();
    let backend = Backend::load(&c_path(qnn.join("libQnnHtp.so")), &BackendOptions::default()).unwrap();
    let system = SystemLibrary::load(&c_path(qnn.join("libQnnSystem.so"))).unwrap();
    let mut memory = vec![0u8; 8 << 20];
    let arena = Arena::new(&mut memory);
    let binary = c_path(common::fixture(fixture).join(format!("{fixture}_qnn.bin")));
    let mut context =
        Context::load(&backend, &system, &arena, BinarySource::File(&binary), &ContextOptions::default()).unwrap();
    let graph = context.graph_mut(0).unwrap();
    let mode = if native { "native" } else { "float" };
    let mut outputs = Vec::new();
    for line in 0..3 {
        for input in 0..graph.input_count() {
            let path = common::fixture(fixture).join(format!("inputs/{mode}/{line}_{input}.raw"));
            let bytes = std::fs::read(path).unwrap();
            if native {
                graph.write_input(input, &bytes).unwrap();
            } else {
                graph.write_input_float(input, &bytes).unwrap();
            }
        }
        graph.execute().unwrap();
        for output in 0..graph.output_count() {
            let info = graph.output(output).unwrap();
            let name = format!("Result_{line}/{}.raw", info.name);
            let bytes = if native {
                graph.output_bytes(output).unwrap().to_vec()
            } else {
                let mut floats = vec![0u8; info.elements * 4];
                graph.read_output_float(output, &mut floats).unwrap();
                floats
            };
            outputs.push((name, bytes));
        }
    }
    outputs
}

#[test]
fn the_local_transport_equals_the_direct_runtime_bit_for_bit() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    for fixture in common::FIXTURES {
        for native in [false, true] {
            let mode = if native { "native" } else { "float" };
            let output = work.path().join(format!("{fixture}-{mode}"));
            let binary = common::fixture(fixture).join(format!("{fixture}_qnn.bin"));
            let list = common::absolute_input_list(fixture, mode, work.path());
            let args = common::net_run_args(&binary, &list, &output, native, &["--transport=local".to_string()]);
            let summary = net_run::run(&Options::parse_from(args)).unwrap();
            assert_eq!(summary.transport, "local");
            for (name, direct) in direct_outputs(fixture, native) {
                let through_stub = std::fs::read(output.join(&name)).unwrap();
                assert!(
                    through_stub == direct,
                    "{fixture} {mode} {name}: the local transport differs from the runtime"
                );
            }
        }
    }
}

#[test]
fn the_fastrpc_transport_runs_through_a_stand_in_libadsprpc() {
    let _guard = common::qnn_lock();
    let exe = common::artifact("target/debug/lpai-net-run", "cargo build -p lpai-direct-hlos");
    let fake = common::artifact("target/debug/libfake_adsprpc.so", "cargo build -p fake-adsprpc");
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("calls.log");
    let fixture = common::fixture("multi_io");
    let output = work.path().join("out");
    let config = work.path().join("lpaiParams.conf");
    std::fs::write(&config, r#"{"lpai_graph": {"execute": {"fps": 25, "affinity": "hard"}}}"#).unwrap();
    let status = Command::new(exe)
        .current_dir(&fixture)
        .env("FAKE_ADSPRPC_LOG", &log)
        .arg("--config_file")
        .arg(&config)
        .args(["--transport", "fastrpc", "--unsigned_pd", "--session", "1", "--fastrpc_library"])
        .arg(&fake)
        .arg("--backend")
        .arg(common::qnn_lib_dir().join("libQnnHtp.so"))
        .args(["--retrieve_context", "multi_io_qnn.bin", "--input_list", "input_list_float.txt", "--output_dir"])
        .arg(&output)
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let reference = fixture.join("reference/float");
    for file in common::files_below(&reference) {
        assert_eq!(std::fs::read(output.join(&file)).unwrap(), std::fs::read(reference.join(&file)).unwrap());
    }
    let calls = std::fs::read_to_string(&log).unwrap();
    let uri = "open file:///liblpai_direct_skel.so?lpai_direct_skel_handle_invoke&_modver=1.0&_dom=adsp&_session=1";
    assert!(calls.lines().any(|line| line == uri), "{calls}");
    assert!(calls.contains("unsigned pd domain 0 enable 1"), "{calls}");
    assert!(calls.contains("rpcmem_alloc heap 25 flags 1"), "{calls}");
    assert_eq!(calls.matches("invoke method 7 sc 0x07020200").count(), 3, "one execute per input line:\n{calls}");
    assert_eq!(calls.matches("invoke method 6 sc 0x06010000").count(), 1, "the config's perf settings:\n{calls}");
    assert_eq!(calls.matches("rpcmem_alloc").count(), calls.matches("rpcmem_free").count(), "{calls}");
    assert!(calls.trim_end().ends_with("close"), "{calls}");
}

#[test]
fn without_a_fastrpc_library_the_error_names_the_libraries_tried() {
    let exe = common::artifact("target/debug/lpai-net-run", "cargo build -p lpai-direct-hlos");
    for (domain, first, second) in
        [("adsp", "libadsprpc.so", "libcdsprpc.so"), ("cdsp", "libcdsprpc.so", "libadsprpc.so")]
    {
        let output = Command::new(&exe)
            .args(["--transport", "fastrpc", "--domain", domain, "--backend", "libQnnLpai.so"])
            .args(["--retrieve_context", "Cargo.toml", "--input_list", "Cargo.toml"])
            .current_dir(common::root())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        let tried = stderr.find(first).zip(stderr.find(second));
        assert!(stderr.contains("FastRPC is not available") && tried.is_some_and(|(a, b)| a < b), "{stderr}");
    }
}

#[test]
fn an_rpcmem_buffer_keeps_the_fastrpc_library_loaded_after_the_transport_is_dropped() {
    let fake = common::artifact("target/debug/libfake_adsprpc.so", "cargo build -p fake-adsprpc");
    let options = FastRpcOptions { libraries: vec![fake.display().to_string()], ..FastRpcOptions::default() };
    let mut transport = FastRpc::load(options).unwrap();
    let mut buffer = transport.buffer(64);
    assert!(buffer.is_shared(), "the stand-in exports rpcmem_alloc and rpcmem_free");
    drop(transport);
    buffer[..4].copy_from_slice(&[1, 2, 3, 4]);
    assert_eq!(buffer[..4], [1, 2, 3, 4]);
    drop(buffer); // calls rpcmem_free, which must still be loaded
}
