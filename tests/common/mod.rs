//! Helpers shared by the end-to-end tests: where the built artifacts are, and running programs.
#![allow(dead_code)] // each test binary uses a different subset of these helpers

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The cargo target directory this test was built in (`target/` unless `CARGO_TARGET_DIR` names another).
pub fn cargo_target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // <target>/<profile>/deps/<test>-<hash>
    exe.ancestors().nth(3).expect("the test runs from <target>/<profile>/deps/").to_path_buf()
}

/// A built artifact, or a failure that says which script builds it. `target/debug/...` and `target/release/...`
/// (host builds) are taken from the cargo target directory this test was built in; other paths (the Hexagon
/// builds of the scripts) from the workspace.
pub fn artifact(relative: &str, built_by: &str) -> PathBuf {
    let host_build =
        relative.strip_prefix("target/").filter(|rest| rest.starts_with("debug/") || rest.starts_with("release/"));
    let path = match host_build {
        Some(rest) => cargo_target_dir().join(rest),
        None => root().join(relative),
    };
    assert!(path.exists(), "{} is missing: run {built_by} first (scripts/test.sh does)", path.display());
    path
}

/// Runs a program to completion, failing the test if it cannot start.
pub fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("cannot start {program}: {error} (scripts/setup.sh installs it)"))
}

/// The directory holding the real libQnnHtp.so and libQnnSystem.so (from onnxruntime-qnn in .venv).
pub fn qnn_lib_dir() -> PathBuf {
    let recorded = root().join(".venv/qnn-lib-dir");
    let text = std::fs::read_to_string(&recorded)
        .unwrap_or_else(|_| panic!("{} is missing: run scripts/setup.sh first", recorded.display()));
    PathBuf::from(text.trim())
}

/// A fixture directory under tests/fixtures.
pub fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures").join(name)
}

/// The fixtures made from ONNX models by scripts/make_fixtures.py, each with ORT-on-QNN references (one graph each;
/// `two_graphs` has tests of its own). Between them their graph inputs and outputs have every type the real HTP
/// backend gives a graph's I/O: UFIXED_POINT_8/16, SFIXED_POINT_8 (`s8_act`), SFIXED_POINT_16 (`s16_act`), FLOAT_32
/// (`float_out`), plain UINT_8 and BOOL_8 (`u8_bool_io`).
pub const FIXTURES: [&str; 8] =
    ["kws_conv", "multi_io", "u16_act", "float_out", "audio_frame", "s8_act", "s16_act", "u8_bool_io"];

/// Rewrites a fixture's input list with absolute paths (qnn-net-run reads relative paths from the current
/// directory) into `into`, returning the new list's path.
pub fn absolute_input_list(fixture_name: &str, mode: &str, into: &Path) -> PathBuf {
    absolute_list_in(&fixture(fixture_name), mode, into, fixture_name)
}

/// The same for the input list `input_list_<mode>.txt` in `directory`; `label` names the copy.
pub fn absolute_list_in(directory: &Path, mode: &str, into: &Path, label: &str) -> PathBuf {
    let text = std::fs::read_to_string(directory.join(format!("input_list_{mode}.txt"))).unwrap();
    let absolute: Vec<String> = text
        .lines()
        .map(|line| {
            line.split_whitespace()
                .map(|entry| match entry.split_once(":=") {
                    Some((name, path)) => format!("{name}:={}", directory.join(path).display()),
                    None => directory.join(entry).display().to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let list = into.join(format!("{label}_{mode}.txt"));
    std::fs::write(&list, absolute.join("\n") + "\n").unwrap();
    list
}

/// Every file below `directory`, relative to it, sorted.
pub fn files_below(directory: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path.strip_prefix(directory).unwrap().to_path_buf());
            }
        }
    }
    found.sort();
    found
}

/// The result files below an output directory (`Result_<i>/...`), relative to it, sorted: what a run writes
/// besides its record (`lpai_net_run.json`) and, in direct mode, the DSP's times file.
pub fn result_files(directory: &Path) -> Vec<PathBuf> {
    files_below(directory).into_iter().filter(|file| is_result(file)).collect()
}

fn is_result(file: &Path) -> bool {
    file.components()
        .next()
        .and_then(|first| first.as_os_str().to_str())
        .is_some_and(|first| first.starts_with("Result_"))
}

/// QNN's HTP emulator is not known to be safe to load from several test threads at once.
pub static QNN_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes [`QNN_LOCK`], even after another test panicked while holding it.
pub fn qnn_lock() -> std::sync::MutexGuard<'static, ()> {
    QNN_LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The host build of the skel the local transport loads (`cargo build -p lpai-direct-dsp --release`).
pub fn host_skel() -> PathBuf {
    artifact("target/release/liblpai_direct_skel.so", "cargo build -p lpai-direct-dsp --release")
}

/// `lpai-net-run` arguments running `binary` on the real HTP backend with `list`, writing into `output`, plus
/// `extra` flags; `native` adds both `--use_native_*` flags. The local transport loads [`host_skel`].
pub fn net_run_args(binary: &Path, list: &Path, output: &Path, native: bool, extra: &[String]) -> Vec<String> {
    let mut args = vec![
        "lpai-net-run".to_string(),
        format!("--skel={}", host_skel().display()),
        format!("--backend={}", qnn_lib_dir().join("libQnnHtp.so").display()),
        format!("--retrieve_context={}", binary.display()),
        format!("--input_list={}", list.display()),
        format!("--output_dir={}", output.display()),
    ];
    if native {
        args.extend(["--use_native_input_files".to_string(), "--use_native_output_files".to_string()]);
    }
    args.extend(extra.iter().cloned());
    args
}

/// The net-run settings `lpai-net-run` would use for `args` (the first one being the program name).
pub fn settings(args: Vec<String>) -> lpai_net_run::settings::Settings {
    use lpai_net_run::cli::{Options, Parser};
    Options::parse_from(args).settings()
}

/// `record` (a metadata record) written again with its first graph renamed to `rename` and the first input of its
/// first graph given id `first_input_id`, where given: records that do not match their binary.
pub fn changed_record(record: &[u8], rename: Option<&str>, first_input_id: Option<u32>) -> Vec<u8> {
    use lpai_direct::metadata::{Record, WriteError, Writer};
    let record = Record::parse(record).expect("a valid record to change");
    let write = |buffer: &mut [u8]| {
        let mut writer = Writer::new(buffer);
        writer.header(record.graph_count() as u32, &record.binary_hash());
        for (index, graph) in record.graphs().enumerate() {
            let name = if index == 0 { rename.unwrap_or(graph.name) } else { graph.name };
            writer.graph(name, graph.inputs.len() as u32, graph.outputs.len() as u32);
            for (position, mut tensor) in graph.inputs.chain(graph.outputs).enumerate() {
                if let (0, 0, Some(id)) = (index, position, first_input_id) {
                    tensor.id = id;
                }
                writer.tensor(&tensor);
            }
        }
        writer.finish()
    };
    let needed = match write(&mut []) {
        Err(WriteError::TooSmall { needed }) => needed,
        other => panic!("measuring the changed record: {other:?}"),
    };
    let mut bytes = vec![0u8; needed];
    write(&mut bytes).expect("the changed record is valid");
    bytes
}

/// A `configure` for `backend` at log level 1 and the skel's defaults; `system_library` `None` selects the metadata
/// record (no libQnnSystem on the skel's side).
#[allow(dead_code)]
pub fn configuration(backend: &Path, system_library: Option<&Path>) -> lpai_direct_stub::stub::Configuration {
    configuration_with_arena(backend, system_library, 0)
}

/// The host contract model (its backend and system library, built by cargo) with an arena of `arena_bytes`.
pub fn contract_configuration(arena_bytes: u32) -> lpai_direct_stub::stub::Configuration {
    let backend = artifact("target/release/libQnnLpaiContract.so", "cargo build --release -p lpai-contract-lpai");
    let system = artifact("target/release/libQnnSystemContract.so", "cargo build --release -p lpai-contract-system");
    configuration_with_arena(&backend, Some(&system), arena_bytes)
}

/// [`configuration`] with an arena of `arena_bytes` (0: the skel chooses).
pub fn configuration_with_arena(
    backend: &Path,
    system_library: Option<&Path>,
    arena_bytes: u32,
) -> lpai_direct_stub::stub::Configuration {
    let text = |path: &Path| std::ffi::CString::new(path.to_str().expect("a UTF-8 path")).expect("no NUL");
    let system_library = system_library.map(text).unwrap_or_default();
    lpai_direct_stub::stub::Configuration::with_libraries(text(backend), system_library, arena_bytes)
}

/// The windows the audio module infers on, from the samples of its channel as floats: the first once `length`
/// samples have come, then one every `hop` samples (0: the window's length), each the last `length` samples, oldest
/// first (docs/src/audio.md, "How it answers SPF": Process).
pub fn audio_windows(samples: &[f32], length: usize, hop: usize) -> Vec<Vec<f32>> {
    let hop = if hop == 0 { length } else { hop };
    (length..=samples.len()).step_by(hop).map(|end| samples[end - length..end].to_vec()).collect()
}

/// A fixed-point PCM sample with `q` fractional bits as a float, as the module documents it: x / 2^q in float32
/// (the division by a power of two is exact; an i32 beyond 24 bits is first rounded to float32).
pub fn pcm_float(sample: i32, q: u32) -> f32 {
    sample as f32 / (1u64 << q) as f32
}

/// ONNX Runtime's first output, on its QNN execution provider, for each of `windows` (each the float input of one
/// inference) on the ONNX fixture `name`: `scripts/ort_audio_scores.py` (the venv's Python) runs the fixture's
/// EPContext wrapper `<name>_ctx.onnx` as `scripts/make_fixtures.py` does for its float references, its CPU
/// QuantizeLinear and DequantizeLinear around the context binary on the QNN EP. Each window's scores are float32
/// bytes, native order (little-endian, as the host's): what the module's result record holds after its header.
pub fn ort_scores(name: &str, windows: &[Vec<f32>], work: &Path) -> Vec<Vec<u8>> {
    let python = root().join(".venv/bin/python");
    assert!(python.exists(), "{} is missing: run scripts/setup.sh first", python.display());
    let (input, output) = (work.join(format!("{name}_ort_windows.raw")), work.join(format!("{name}_ort_scores.raw")));
    std::fs::write(&input, windows.iter().flatten().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let ran = Command::new(&python)
        .arg(root().join("scripts/ort_audio_scores.py"))
        .arg(fixture(name).join(format!("{name}_ctx.onnx")))
        .arg(&input)
        .arg(&output)
        .output()
        .unwrap_or_else(|error| panic!("cannot start {}: {error}", python.display()));
    let said = format!("{}{}", String::from_utf8_lossy(&ran.stdout), String::from_utf8_lossy(&ran.stderr));
    assert!(ran.status.success(), "scripts/ort_audio_scores.py failed ({}):\n{said}", ran.status);
    let scores = std::fs::read(&output).unwrap();
    assert!(
        !windows.is_empty() && scores.len() % windows.len() == 0,
        "{} bytes for {} windows",
        scores.len(),
        windows.len()
    );
    scores.chunks(scores.len() / windows.len()).map(|chunk| chunk.to_vec()).collect()
}

/// Float32 bytes (native order) as their values, for failure messages.
pub fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|chunk| f32::from_ne_bytes(chunk.try_into().unwrap())).collect()
}

/// A file of the virtual aDSP, which `scripts/build-hexagon.sh` leaves in `target/virtual-adsp/`.
pub fn virtual_adsp(file: &str) -> PathBuf {
    artifact(&format!("target/virtual-adsp/{file}"), "scripts/build-hexagon.sh")
}

/// The audio tests' client: its address and token, as DATA_TO_DSP_CLIENT_V2 must give them back.
pub const CLIENT: (u64, u32) = (0x1234_5678_9ABC, 7);

/// A REGISTER_EVENT_DATA_TO_DSP_CLIENT_V2 payload registering [`CLIENT`] for the module's result event.
pub fn client_registration() -> Vec<u8> {
    let event = lpai_direct_skel::audio::ids::EVENT_ID_RESULT;
    lpai_pd_shell::session_writer::client_registration(CLIENT.0, CLIENT.1, event)
}
