//! The embedding API from C and from Rust on the contract model of libQnnLpai: `dsp/examples/c/sensor_loop.c`,
//! compiled by clang-19 against `dsp/include/lpai_direct_embed.h` for Hexagon (static and freestanding, with
//! `-DLPAI_DIRECT_EMBED_QEMU`, linked by ld.lld-19 against liblpai_embed_qemu.a of `tests/embed-qemu`: the
//! `qemu-example` build of the C library plus the contract model, which the program registers as built-in libraries;
//! run under qemu-hexagon) and for the host (against the host build, loading the host contract model), and the Rust
//! example `sensor-loop` under qemu-hexagon, all feed the `contract_single` fixture's native inputs frame by frame: they print the same lines,
//! and every frame's output is the fixture's reference. The C example does the same with no system library, from
//! the metadata record `lpai-net-run inspect` writes on the host (on the host and under qemu-hexagon). The header,
//! both static libraries and the device check library agree on the functions, and no skel exports any of them.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TARGET: &str = "hexagon-unknown-linux-musl";
const BUILT_BY_HEXAGON: &str = "scripts/build-hexagon.sh";
const BUILT_BY_HOST: &str = "cargo build --release -p lpai-direct-embed -p lpai-contract-lpai -p lpai-contract-system";
/// What the host static library needs from libc (`--print native-static-libs` of the crate).
const HOST_SYSTEM_LIBRARIES: [&str; 7] = ["-ldl", "-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-lc"];

fn hexagon_library() -> PathBuf {
    common::artifact(&format!("target/hexagon-embed/{TARGET}/release/liblpai_embed_qemu.a"), BUILT_BY_HEXAGON)
}

fn rust_example() -> PathBuf {
    common::artifact(&format!("target/hexagon-embed/{TARGET}/release/examples/sensor-loop"), BUILT_BY_HEXAGON)
}

/// The release directory of the cargo target directory this test was built in (`target/release` normally).
fn host_release() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // <target>/<profile>/deps/embed_api-<hash>
    let target = exe.ancestors().nth(3).expect("the test runs from <target>/<profile>/deps/");
    target.join("release")
}

/// A host release artifact, or a failure that says how to build it.
fn host_artifact(name: &str, built_by: &str) -> PathBuf {
    let path = host_release().join(name);
    assert!(path.exists(), "{} is missing: run {built_by} first (scripts/test.sh does)", path.display());
    path
}

fn host_library() -> PathBuf {
    host_artifact("liblpai_direct_embed.a", BUILT_BY_HOST)
}

/// Runs a tool, failing the test with what to install when it is missing.
fn run_tool(tool: &str, configure: impl FnOnce(&mut Command)) -> Output {
    let mut command = Command::new(tool);
    configure(&mut command);
    command.output().unwrap_or_else(|error| panic!("cannot run {tool}: {error} (scripts/setup.sh installs it)"))
}

fn succeeded(what: &str, output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed ({:?}):\n{stdout}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

const C_FLAGS: [&str; 5] = ["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror"];

/// The C example for Hexagon: compiled freestanding (no libc: it makes its own syscalls) with
/// `LPAI_DIRECT_EMBED_QEMU` (it registers the contract model first), linked statically against the qemu static
/// library (`tests/embed-qemu`), whose Linux user-mode platform has the `_start` that calls `lpai_program_main`.
fn build_c_for_hexagon(work: &Path) -> PathBuf {
    let root = common::root();
    let object = work.join("sensor_loop.o");
    let program = work.join("sensor_loop_hexagon");
    let compiled = run_tool("clang-19", |command| {
        command.arg(format!("--target={TARGET}")).args(["-mcpu=hexagonv73", "-ffreestanding", "-nostdlib", "-G0"]);
        command.arg("-DLPAI_DIRECT_EMBED_QEMU");
        command.args(C_FLAGS).arg("-I").arg(root.join("dsp/include"));
        command.arg("-c").arg(root.join("dsp/examples/c/sensor_loop.c")).arg("-o").arg(&object);
    });
    succeeded("clang-19 for Hexagon", &compiled);
    let library = hexagon_library();
    let linked = run_tool("ld.lld-19", |command| {
        command.args(["-static", "--gc-sections", "-e", "_start", "-o"]).arg(&program).arg(&object).arg(&library);
    });
    succeeded("ld.lld-19", &linked);
    program
}

/// The C example for the host, against the host static library.
fn build_c_for_host(work: &Path) -> PathBuf {
    let root = common::root();
    let program = work.join("sensor_loop_host");
    let library = host_library();
    let compiled = run_tool("clang-19", |command| {
        command.args(C_FLAGS).arg("-I").arg(root.join("dsp/include"));
        command.arg(root.join("dsp/examples/c/sensor_loop.c")).arg(&library).args(HOST_SYSTEM_LIBRARIES);
        command.arg("-o").arg(&program);
    });
    succeeded("clang-19 for the host", &compiled);
    program
}

/// The example's arguments after the program: backend, system library, binary, then one native frame per line.
fn fixture_arguments(backend: &str, system: &str) -> Vec<String> {
    let fixture = common::fixture("contract_single");
    let mut args = vec![backend.to_string(), system.to_string()];
    args.push(fixture.join("contract_single.bin").display().to_string());
    for line in 0..4 {
        args.push(fixture.join(format!("inputs/native/{line}_0.raw")).display().to_string());
    }
    args
}

fn run_on_hexagon(program: &Path, what: &str) -> String {
    run_on_hexagon_with(program, what, "libQnnSystemContract.so")
}

/// Runs `program` under qemu-hexagon with `system` as its system-library argument.
fn run_on_hexagon_with(program: &Path, what: &str, system: &str) -> String {
    let mut args = vec!["-cpu".to_string(), "v73".to_string(), program.display().to_string()];
    args.extend(fixture_arguments("libQnnLpaiContract.so", system));
    succeeded(
        what,
        &run_tool("qemu-hexagon", |command| {
            command.args(&args);
        }),
    )
}

/// What every example must print: the fixture's graph, its tensors and each frame's reference output.
fn expected_stdout() -> String {
    let fixture = common::fixture("contract_single");
    let mut expected = String::from("graphs 1, graph 0 single, inputs 1, outputs 1\n");
    expected += "input 0 in id 1 type 0x00000408 shape 1x16 bytes 16 scale 0x3d800000 offset -128\n";
    expected += "output 0 out id 2 type 0x00000408 shape 1x16 bytes 16 scale 0x3e000000 offset -100\n";
    for line in 0..4 {
        let reference = std::fs::read(fixture.join(format!("reference/native/Result_{line}/out.raw"))).unwrap();
        let hex: String = reference.iter().map(|byte| format!("{byte:02x}")).collect();
        expected += &format!("frame {line} out {hex}\n");
    }
    expected + "binary in place: yes\nrefusals: ok\n"
}

#[test]
fn the_rust_example_on_hexagon_gives_the_fixture_outputs_from_a_binary_in_place() {
    let stdout = run_on_hexagon(&rust_example(), "the Rust sensor-loop example under qemu-hexagon");
    assert_eq!(stdout, expected_stdout());
}

#[test]
fn the_c_example_on_hexagon_prints_exactly_what_the_rust_example_prints() {
    let work = tempfile::tempdir().unwrap();
    let program = build_c_for_hexagon(work.path());
    let c = run_on_hexagon(&program, "the C sensor_loop under qemu-hexagon");
    let rust = run_on_hexagon(&rust_example(), "the Rust sensor-loop example under qemu-hexagon");
    assert_eq!(c, rust, "C (left) and Rust (right) differ");
    assert_eq!(c, expected_stdout());
}

#[test]
fn the_c_example_on_the_host_gives_the_same_lines() {
    let work = tempfile::tempdir().unwrap();
    let program = build_c_for_host(work.path());
    let backend = host_artifact("libQnnLpaiContract.so", BUILT_BY_HOST);
    let system = host_artifact("libQnnSystemContract.so", BUILT_BY_HOST);
    let args = fixture_arguments(&backend.display().to_string(), &system.display().to_string());
    let output = Command::new(&program).args(&args).output().unwrap();
    let stdout = succeeded("the host C sensor_loop", &output);
    assert_eq!(stdout, expected_stdout());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("sensor_loop: frame 3 executed in "), "{stderr}");
}

/// The contract fixture's metadata record, written into `work` by `lpai-net-run inspect` with the host contract
/// model's system library: the example's `record:PATH` argument.
fn inspected_record(work: &Path) -> String {
    let exe = host_artifact("lpai-net-run", "cargo build --release -p lpai-net-run");
    let system = host_artifact("libQnnSystemContract.so", BUILT_BY_HOST);
    let binary = common::fixture("contract_single").join("contract_single.bin");
    let record = work.join("contract_single.lpmd");
    let output = Command::new(&exe)
        .arg("inspect")
        .arg(&binary)
        .arg(format!("--system_library={}", system.display()))
        .arg("--emit_metadata")
        .arg(&record)
        .output()
        .unwrap();
    succeeded("lpai-net-run inspect", &output);
    format!("record:{}", record.display())
}

#[test]
fn the_c_example_with_a_metadata_record_and_no_system_library_gives_the_same_lines() {
    let work = tempfile::tempdir().unwrap();
    let record = inspected_record(work.path());
    let program = build_c_for_host(work.path());
    let backend = host_artifact("libQnnLpaiContract.so", BUILT_BY_HOST);
    let args = fixture_arguments(&backend.display().to_string(), &record);
    let output = Command::new(&program).args(&args).output().unwrap();
    assert_eq!(succeeded("the host C sensor_loop with a record", &output), expected_stdout());

    let hexagon = build_c_for_hexagon(work.path());
    let c = run_on_hexagon_with(&hexagon, "the C sensor_loop with a record under qemu-hexagon", &record);
    assert_eq!(c, expected_stdout());

    // A record of another graph: refused by name.
    let mut bytes = std::fs::read(record.strip_prefix("record:").unwrap()).unwrap();
    assert_eq!(&bytes[44..51], b"\x06single");
    bytes[45..51].copy_from_slice(b"others");
    let other = work.path().join("others.lpmd");
    std::fs::write(&other, bytes).unwrap();
    let args = fixture_arguments(&backend.display().to_string(), &format!("record:{}", other.display()));
    let output = Command::new(&program).args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("load_padded_with_metadata(")
            && stderr.contains(" failed: -5: the metadata record names graph others,"),
        "{stderr}"
    );
}

#[test]
fn the_c_example_names_a_library_that_does_not_load() {
    let work = tempfile::tempdir().unwrap();
    let program = build_c_for_host(work.path());
    let args = fixture_arguments("/nonexistent/libQnnLpai.so", "/nonexistent/libQnnSystem.so");
    let output = Command::new(&program).args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(") failed: -4: loading the QNN backend library: not found") && stderr.contains("embed_create("),
        "{stderr}"
    );
}

/// The `lpai_direct_embed_*` functions the header declares.
fn header_functions() -> Vec<String> {
    let header = std::fs::read_to_string(common::root().join("dsp/include/lpai_direct_embed.h")).unwrap();
    let mut functions: Vec<String> = header
        .match_indices("lpai_direct_embed_")
        .filter_map(|(at, _)| {
            let rest = &header[at..];
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
            rest[end..].starts_with('(').then(|| rest[..end].to_string())
        })
        .collect();
    functions.sort();
    functions.dedup();
    functions
}

/// The `lpai_direct_embed_*` functions an archive or shared object defines, from llvm-nm-19.
fn defined_functions(file: &Path, dynamic: bool) -> Vec<String> {
    let listed = run_tool("llvm-nm-19", |command| {
        command.args(["--defined-only", "--format=just-symbols"]);
        if dynamic {
            command.arg("-D");
        }
        command.arg(file);
    });
    let listed = succeeded("llvm-nm-19", &listed);
    let mut functions: Vec<String> =
        listed.lines().filter(|name| name.starts_with("lpai_direct_embed_")).map(str::to_string).collect();
    functions.sort();
    functions.dedup();
    functions
}

#[test]
fn the_header_and_the_libraries_agree_and_no_skel_exports_the_embedding_api() {
    let declared = header_functions();
    assert!(declared.len() >= 15 && declared.contains(&"lpai_direct_embed_execute_frame".to_string()), "{declared:?}");
    assert_eq!(defined_functions(&host_library(), false), declared, "the host static library");
    assert_eq!(defined_functions(&hexagon_library(), false), declared, "the qemu Hexagon static library");
    let device = common::artifact("target/hexagon-embed-device/liblpai_direct_embed_check.so", BUILT_BY_HEXAGON);
    assert_eq!(defined_functions(&device, true), declared, "the device check library's exports");
    let host_skel = host_artifact("liblpai_direct_skel.so", "cargo build --release -p lpai-direct-dsp");
    let hexagon_skels = [
        format!("target/{TARGET}/release/liblpai_direct_skel.so"),
        "target/virtual-adsp/liblpai_direct_skel.so".to_string(),
    ];
    let hexagon_skels = hexagon_skels.iter().map(|skel| common::artifact(skel, BUILT_BY_HEXAGON));
    for skel in std::iter::once(host_skel).chain(hexagon_skels) {
        let exported = defined_functions(&skel, true);
        assert!(exported.is_empty(), "{} exports {exported:?}", skel.display());
    }
}

/// Every symbol an archive lists (defined or not), from llvm-nm-19.
fn symbols(file: &Path) -> String {
    let listed = run_tool("llvm-nm-19", |command| {
        command.args(["--format=just-symbols"]).arg(file);
    });
    succeeded("llvm-nm-19", &listed)
}

#[test]
fn the_shipped_c_library_has_no_contract_model_and_the_qemu_one_registers_it() {
    let device = common::artifact(
        &format!("target/hexagon-embed-device/{TARGET}/release/liblpai_direct_embed.a"),
        BUILT_BY_HEXAGON,
    );
    for library in [host_library(), device] {
        let listed = symbols(&library);
        assert!(listed.contains("lpai_direct_embed_create"), "{} lists no embedding API", library.display());
        for foreign in ["lpai_contract_model", "lpai_embed_qemu"] {
            assert!(!listed.contains(foreign), "{} has {foreign} in it", library.display());
        }
    }
    let qemu = defined_functions_all(&hexagon_library());
    assert!(qemu.iter().any(|name| name == "lpai_embed_qemu_register_contract_model"), "{qemu:?}");
}

/// The names an archive defines, from llvm-nm-19.
fn defined_functions_all(file: &Path) -> Vec<String> {
    let listed = run_tool("llvm-nm-19", |command| {
        command.args(["--defined-only", "--format=just-symbols"]).arg(file);
    });
    succeeded("llvm-nm-19", &listed).lines().map(str::to_string).collect()
}
