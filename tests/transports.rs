//! The stub's transports: the local transport (the host skel library loaded at run time, the full encoded wire
//! path into it) gives the same bytes as the runtime called directly, and says which skel it loads or why it
//! cannot; the FastRPC transport, on a stand-in libadsprpc.so, opens the right URI, asks for an unsigned PD, uses
//! rpcmem buffers and gives the same bytes, and with `--pd` opens the PD's control name first (closing it last) and
//! explains a refusal; without a FastRPC library it names the libraries it tried, and a
//! default fallback to local says why; an rpcmem buffer keeps the FastRPC library loaded while it lives.

mod common;

use lpai_direct_skel::platform::VendorCalls;
use lpai_direct_skel::runtime::{Arena, BackendOptions, Binary, Context, Libraries, LoadRequest};
use lpai_direct_stub::stub::fastrpc::{FastRpc, FastRpcOptions};
use lpai_direct_stub::stub::{Transport, TransportKind};
use lpai_net_run::net_run;
use std::ffi::CString;
use std::path::Path;
use std::process::{Command, Output};

/// Every output of every line of a fixture, computed by the runtime directly (no stub, no wire).
fn direct_outputs(fixture: &str, native: bool) -> Vec<(String, Vec<u8>)> {
    let qnn = common::qnn_lib_dir();
    let c_path = |p: std::path::PathBuf| CString::new(p.to_str().unwrap()).unwrap();
    let (backend, system) = (c_path(qnn.join("libQnnHtp.so")), c_path(qnn.join("libQnnSystem.so")));
    let libraries = Libraries::open(&backend, Some(&system), &BackendOptions::default()).unwrap();
    let mut memory = vec![0u8; 8 << 20];
    let arena = Arena::new(&mut memory);
    let binary = c_path(common::fixture(fixture).join(format!("{fixture}_qnn.bin")));
    let mut context =
        Context::load(&VendorCalls::lock(), &libraries, &arena, &LoadRequest::new(Binary::File(&binary))).unwrap();
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
            let summary = net_run::run(&common::settings(args)).unwrap();
            assert_eq!(summary.transport, TransportKind::Local);
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
    let exe = common::artifact("target/debug/lpai-net-run", "cargo build -p lpai-net-run");
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

/// Runs lpai-net-run on the multi_io fixture through the stand-in libadsprpc with `extra` flags (and `env` set),
/// answering the run and the calls it recorded.
fn run_on_the_stand_in(extra: &[&str], env: &[(&str, &str)]) -> (Output, String) {
    let exe = common::artifact("target/debug/lpai-net-run", "cargo build -p lpai-net-run");
    let fake = common::artifact("target/debug/libfake_adsprpc.so", "cargo build -p fake-adsprpc");
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("calls.log");
    let output = Command::new(exe)
        .current_dir(common::fixture("multi_io"))
        .env("FAKE_ADSPRPC_LOG", &log)
        .envs(env.iter().copied())
        .args(["--transport", "fastrpc", "--fastrpc_library"])
        .arg(&fake)
        .arg("--backend")
        .arg(common::qnn_lib_dir().join("libQnnHtp.so"))
        .args(["--retrieve_context", "multi_io_qnn.bin", "--input_list", "input_list_float.txt", "--output_dir"])
        .arg(work.path().join("out"))
        .args(extra)
        .output()
        .unwrap();
    (output, std::fs::read_to_string(&log).unwrap_or_default())
}

#[test]
fn each_pd_opens_its_control_name_before_the_skel_and_closes_it_after() {
    let _guard = common::qnn_lock();
    let prefix = "'\":;./\\";
    let skel = "file:///liblpai_direct_skel.so?lpai_direct_skel_handle_invoke&_modver=1.0&_dom=adsp";
    for session in [None, Some("3")] {
        let suffix = session.map(|n| format!("&_session={n}")).unwrap_or_default();
        for (pd, control) in [
            ("user", None),
            ("audio", Some("createstaticpd:audiopd&_dom=adsp")),
            ("sensors", Some("createstaticpd:sensorspd&_dom=adsp")),
            ("root", Some("attachguestos&_dom=adsp")),
        ] {
            let mut flags = vec!["--pd", pd];
            flags.extend(session.iter().flat_map(|n| ["--session", n]));
            let (run, calls) = run_on_the_stand_in(&flags, &[]);
            assert!(run.status.success(), "--pd {pd}: {}", String::from_utf8_lossy(&run.stderr));
            let opened: Vec<&str> = calls.lines().filter_map(|line| line.strip_prefix("open ")).collect();
            let mut expected: Vec<String> = control.iter().map(|name| format!("{prefix}{name}{suffix}")).collect();
            expected.push(format!("{skel}{suffix}"));
            assert_eq!(opened, expected, "--pd {pd} {flags:?}:\n{calls}");
            let closed: Vec<&str> = calls.lines().filter(|line| line.starts_with("close")).collect();
            let expected = if control.is_some() { vec!["close", "close control"] } else { vec!["close"] };
            assert_eq!(closed, expected, "the skel handle first, then the control handle:\n{calls}");
            assert!(calls.trim_end().ends_with(expected.last().unwrap()), "{calls}");
        }
    }
}

#[test]
fn a_refused_control_open_gives_the_aee_code_and_what_it_usually_means() {
    let _guard = common::qnn_lock();
    let (run, calls) = run_on_the_stand_in(&["--pd", "audio"], &[("FAKE_ADSPRPC_REFUSE_CONTROL", "0x72")]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|line| line.contains("error:")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    let expected = "lpai-net-run: error: opening the skel: open failed in adsp: the FastRPC library refused the \
                    control name '\":;./\\createstaticpd:audiopd&_dom=adsp that attaches this process to the audio PD \
                    on adsp: usually this process lacks the privileges for that PD (root, the platform's SELinux \
                    policy), or the PD's own daemon (adsprpcd audiopd adsp) is not running or the platform lets only \
                    that daemon attach to it (AEE_ECONNREFUSED, 0x00000072)";
    assert_eq!(lines[0], expected);
    assert_eq!(calls.lines().filter(|line| line.starts_with("open ")).count(), 1, "no skel open after: {calls}");
    assert!(!calls.contains("close"), "nothing to close: {calls}");
}

#[test]
fn without_a_fastrpc_library_the_error_names_the_libraries_tried() {
    let exe = common::artifact("target/debug/lpai-net-run", "cargo build -p lpai-net-run");
    let work = tempfile::tempdir().unwrap();
    for (domain, first, second) in
        [("adsp", "libadsprpc.so", "libcdsprpc.so"), ("cdsp", "libcdsprpc.so", "libadsprpc.so")]
    {
        let output = Command::new(&exe)
            .args(["--transport", "fastrpc", "--domain", domain, "--backend", "libQnnLpai.so"])
            .args(["--retrieve_context", "Cargo.toml", "--input_list", "Cargo.toml", "--output_dir"])
            .arg(work.path().join(domain))
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

/// Runs `exe` (an lpai-net-run) on the kws_conv fixture from its directory, writing into `output`, with `extra`
/// flags and `LPAI_DIRECT_SKEL` set to `skel_variable` (or removed).
fn run_kws(exe: &Path, output: &Path, extra: &[&str], skel_variable: Option<&Path>) -> Output {
    let mut command = Command::new(exe);
    command
        .current_dir(common::fixture("kws_conv"))
        .arg("--backend")
        .arg(common::qnn_lib_dir().join("libQnnHtp.so"))
        .args(["--retrieve_context", "kws_conv_qnn.bin", "--input_list", "input_list_float.txt", "--output_dir"])
        .arg(output)
        .args(extra);
    match skel_variable {
        Some(path) => command.env("LPAI_DIRECT_SKEL", path),
        None => command.env_remove("LPAI_DIRECT_SKEL"),
    };
    command.output().unwrap()
}

fn error_line(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "expected a failure:\n{stderr}");
    stderr.lines().filter(|line| line.contains("error:")).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_local_transport_names_the_skel_it_cannot_use_and_who_named_it() {
    let exe = common::artifact("target/debug/lpai-net-run", "cargo build -p lpai-net-run");
    let stub = common::artifact("target/release/liblpai_direct_stub.so", "cargo build --release -p lpai-direct-stub");
    let work = tempfile::tempdir().unwrap();
    let output = work.path().join("out");
    let missing = work.path().join("absent/liblpai_direct_skel.so");

    let flag = format!("--skel={}", missing.display());
    let line = error_line(&run_kws(&exe, &output, &[&flag], None));
    assert!(line.ends_with(&format!("the skel library {} (from --skel) does not exist", missing.display())), "{line}");

    let line = error_line(&run_kws(&exe, &output, &[], Some(&missing)));
    assert!(line.contains(&format!("{} (from $LPAI_DIRECT_SKEL) does not exist", missing.display())), "{line}");

    // The stub library is not a skel: it exports none of the skel's entry points.
    let flag = format!("--skel={}", stub.display());
    let line = error_line(&run_kws(&exe, &output, &[&flag, "--transport=local"], None));
    assert!(line.contains("is not an lpai-direct skel: it exports no lpai_direct_open"), "{line}");
    let written = common::files_below(&output);
    assert_eq!(
        written,
        [std::path::PathBuf::from("lpai_net_run.json")],
        "only the record, when the skel cannot be loaded"
    );
}

#[test]
fn the_skel_beside_the_executable_comes_before_the_workspace_and_the_variable_before_both() {
    let _guard = common::qnn_lock();
    let exe = common::artifact("target/debug/lpai-net-run", "cargo build -p lpai-net-run");
    let skel = common::host_skel();
    let work = tempfile::tempdir().unwrap();
    let installed = work.path().join("bin");
    std::fs::create_dir(&installed).unwrap();
    let copy = installed.join("lpai-net-run");
    std::fs::copy(&exe, &copy).unwrap();
    // Something that is not a skel beside the executable: it must be the one tried, though target/release holds a
    // good one.
    let beside = installed.join("liblpai_direct_skel.so");
    std::fs::write(&beside, b"not an ELF file").unwrap();
    let line = error_line(&run_kws(&copy, &work.path().join("out"), &[], None));
    assert!(line.contains(&format!("cannot load the skel library {}", beside.display())), "{line}");

    let run = run_kws(&copy, &work.path().join("out"), &[], Some(&skel));
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));

    std::fs::copy(&skel, &beside).unwrap();
    let run = run_kws(&copy, &work.path().join("beside"), &[], None);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let reference = common::fixture("kws_conv").join("reference/float");
    for file in common::files_below(&reference) {
        let ours = std::fs::read(work.path().join("beside").join(&file)).unwrap();
        assert!(ours == std::fs::read(reference.join(&file)).unwrap(), "{} differs from ORT", file.display());
    }
}

#[test]
fn a_default_fallback_to_local_says_why_and_which_skel() {
    let skel = common::host_skel();
    let flags = |extra: &[&str]| {
        let base = ["lpai-net-run", "--backend=b", "--retrieve_context=c", "--input_list=l"].map(String::from);
        let named = [format!("--skel={}", skel.display()), "--fastrpc_library=/nonexistent/libadsprpc.so".into()];
        common::settings(base.into_iter().chain(named).chain(extra.iter().map(|flag| flag.to_string())).collect())
    };
    let settings = flags(&[]);
    let chosen = net_run::transport_trying(&settings, true).unwrap();
    let note = chosen.note.unwrap_or_default();
    assert_eq!((chosen.kind, chosen.transport.name()), (TransportKind::Local, "local"));
    assert!(note.starts_with("FastRPC is not available: tried /nonexistent/libadsprpc.so"), "{note}");
    let canonical = skel.canonicalize().unwrap();
    assert!(note.ends_with(&format!("using the local transport (the host skel {})", canonical.display())), "{note}");

    let chosen = net_run::transport_trying(&flags(&["--transport=local"]), true).unwrap();
    assert_eq!((chosen.transport.name(), chosen.note), ("local", None));
    let chosen = net_run::transport_trying(&settings, false).unwrap();
    assert_eq!(chosen.note, None, "no note where FastRPC is not the default");
}
