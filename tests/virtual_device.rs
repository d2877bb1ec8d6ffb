//! The virtual device (`scripts/virtual-device.sh`): a directory `lpai-net-run stage` wrote runs as on a Snapdragon,
//! the shipped aarch64 `lpai-net-run` and `liblpai_direct_stub.so` under qemu-aarch64 over the virtual device's
//! FastRPC, each PD the shipped skel's v73 build in the PD shell under qemu-hexagon with the Hexagon contract model
//! staged as `libQnnLpai.so`. The seed's command gives the fixtures' references bit for bit in both modes, `doctor`
//! passes, and every first-contact failure ends the run and `doctor` with one line naming its cause and its fix,
//! leaving nothing partial. A failing run's DSP log captured raw (`LPAI_VD_RAW_LOG=1`) renders with
//! `lpai-net-run render-log` into the words the PD shell prints.

mod common;

use lpai_direct::version::{Record, Version, INTERFACE};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The device directory the stages are made for (stage's default).
const DEVICE: &str = "/data/local/tmp/LPAI";
/// The contract fixtures, with their reference results.
const CONTRACT_FIXTURES: [&str; 2] = ["contract_single", "contract_stream"];
/// Events of the virtual device's PD (`LPAI_VD_RESTART_AFTER`, FastRPC invocations and apps_std calls) in a
/// direct-mode run of contract_stream into a directory holding an earlier run's results (where each result
/// directory's mkdir answers EEXIST and is followed by a fileExists): with --keep_num_outputs 2, one inside its
/// inference 3; without, three in its inference 1: before the renames of Result_1's files (mixed.raw, then
/// energy.raw), between them, and after both, before the inference's record is appended.
const KEEP_POINT: u32 = 94;
const INFERENCE_1_POINTS: [u32; 3] = [74, 77, 81];
/// In a traditional run of contract_stream with --profiling_level: the profile read after inference 1.
const PROFILE_AFTER_INFERENCE_1: u32 = 10;

/// The release build of lpai-net-run for this machine, which stages.
fn stager() -> PathBuf {
    common::artifact("target/release/lpai-net-run", "cargo build --release -p lpai-net-run")
}

/// A staged directory in a temporary directory of its own.
struct Staged {
    _work: tempfile::TempDir,
    directory: PathBuf,
    binary_name: String,
}

/// What a stage is made of beyond the fixture.
#[derive(Clone, Default)]
struct StageWith {
    /// The input list's kind: `float` or `native`.
    native: bool,
    /// Only the first line of the fixture's input list.
    one_line: bool,
    /// A context binary other than the fixture's own.
    binary: Option<PathBuf>,
    /// A skel other than the virtual aDSP's.
    skel: Option<PathBuf>,
    /// `--op_packages` for the stage (local Hexagon files).
    op_packages: Option<String>,
}

/// Stages `fixture` for the virtual device: the aarch64 HLOS build, the virtual aDSP's v73 skel, the Hexagon
/// contract model as libQnnLpai.so, the aarch64 contract system library as the HLOS side's libQnnSystem.
fn stage(fixture: &str, with: &StageWith) -> Staged {
    let work = tempfile::tempdir().unwrap();
    let output = stage_into(work.path(), fixture, with);
    assert!(output.status.success(), "stage failed:\n{}", String::from_utf8_lossy(&output.stderr));
    let binary = with.binary.clone().unwrap_or_else(|| common::fixture(fixture).join(format!("{fixture}.bin")));
    let binary_name = binary.file_name().unwrap().to_str().unwrap().to_string();
    Staged { directory: work.path().join("staged"), _work: work, binary_name }
}

/// Runs `lpai-net-run stage` for [`stage`], into `work/staged`; answers what it did.
fn stage_into(work: &Path, fixture: &str, with: &StageWith) -> Output {
    let backend = work.join("libQnnLpai.so");
    std::fs::copy(common::virtual_adsp("libQnnLpaiContract.so"), &backend).unwrap();
    let fixture_dir = common::fixture(fixture);
    let kind = if with.native { "native" } else { "float" };
    let mut list = fixture_dir.join(format!("input_list_{kind}.txt"));
    if with.one_line {
        let text = std::fs::read_to_string(&list).unwrap();
        let first = text.lines().find(|line| !line.trim().is_empty() && !line.starts_with('#')).unwrap();
        let absolute: Vec<String> = first
            .split_whitespace()
            .map(|entry| match entry.split_once(":=") {
                Some((name, path)) => format!("{name}:={}", fixture_dir.join(path).display()),
                None => fixture_dir.join(entry).display().to_string(),
            })
            .collect();
        list = work.join("one_line.txt");
        std::fs::write(&list, absolute.join(" ") + "\n").unwrap();
    }
    let binary = with.binary.clone().unwrap_or_else(|| fixture_dir.join(format!("{fixture}.bin")));
    let skel = with.skel.clone().unwrap_or_else(|| common::virtual_adsp("liblpai_direct_skel.so"));
    let hlos = common::artifact("target/aarch64-unknown-linux-gnu/release/lpai-net-run", "scripts/build-hlos.sh");
    let system = common::artifact(
        "target/aarch64-unknown-linux-gnu/release/libQnnSystemContract.so",
        "cargo build --release --target aarch64-unknown-linux-gnu -p lpai-contract-system",
    );
    let directory = work.join("staged");
    let op_packages = with.op_packages.iter().map(|packages| format!("--op_packages={packages}"));
    std::process::Command::new(stager())
        .current_dir(&fixture_dir)
        .arg("stage")
        .args(op_packages)
        .arg(format!("--output_dir={}", directory.display()))
        .arg(format!("--retrieve_context={}", binary.display()))
        .arg(format!("--input_list={}", list.display()))
        .arg(format!("--backend={}", backend.display()))
        .arg(format!("--skel={}", skel.display()))
        .arg(format!("--system_library={}", system.display()))
        .arg(format!("--hlos_dir={}", hlos.parent().unwrap().display()))
        .env_remove("QNN_TARGET_ARCH")
        .env_remove("HEX_VER")
        .env_remove("HW_VER")
        .output()
        .unwrap()
}

/// What a command on the virtual device did.
struct Ran {
    status: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Ran {
    /// The one line that starts `lpai-net-run: error:` (the test fails on none or several).
    fn error_line(&self) -> &str {
        let errors: Vec<&str> = self.stderr.lines().filter(|line| line.starts_with("lpai-net-run: error:")).collect();
        assert_eq!(
            errors.len(),
            1,
            "expected one error line, status {:?}:\n{}{}",
            self.status,
            self.stdout,
            self.stderr
        );
        errors[0]
    }
}

/// Runs `command` (after its NAME=VALUE words) on the virtual device holding `staged`, with the faults in `faults`.
fn on_device(staged: &Staged, faults: &[(&str, &str)], command: &[&str]) -> Ran {
    let script = common::root().join("scripts/virtual-device.sh");
    let mut process = std::process::Command::new("bash");
    process.arg(script).arg(&staged.directory).arg("--").args(command);
    for variable in [
        "LPAI_VD_SIGNED_PD",
        "LPAI_VD_RESTART_AFTER",
        "LPAI_VD_LPAI_DOMAINS",
        "LPAI_VD_SKEL_INTERFACE",
        "LPAI_VD_RAW_LOG",
    ] {
        process.env_remove(variable);
    }
    process.envs(faults.iter().copied());
    let output: Output = process.output().unwrap();
    Ran {
        status: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The seed's command line, plus what stage adds (the HLOS side's system library; native files).
fn seed_command(staged: &Staged, direct: bool, native: bool, extra: &[&str]) -> Vec<String> {
    let mut command = vec![
        "./lpai-net-run".to_string(),
        "--backend".into(),
        "libQnnLpai.so".into(),
        "--retrieve_context".into(),
        format!("./{}", staged.binary_name),
        "--input_list".into(),
        "./input_list.txt".into(),
        "--config_file".into(),
        "./config.json".into(),
        "--system_library".into(),
        format!("{DEVICE}/libQnnSystemContract.so"),
    ];
    if direct {
        command.push("--direct_mode".into());
    }
    if native {
        command.extend(["--use_native_input_files".into(), "--use_native_output_files".into()]);
    }
    command.extend(extra.iter().map(|argument| argument.to_string()));
    command
}

fn run_seed(
    staged: &Staged,
    faults: &[(&str, &str)],
    words: &[&str],
    direct: bool,
    native: bool,
    extra: &[&str],
) -> Ran {
    let command = seed_command(staged, direct, native, extra);
    let mut all: Vec<&str> = words.to_vec();
    all.extend(command.iter().map(String::as_str));
    on_device(staged, faults, &all)
}

/// Runs `doctor` as the seed's command would run (`--backend libQnnLpai.so` unless `extra` names another).
fn doctor(staged: &Staged, faults: &[(&str, &str)], words: &[&str], extra: &[&str]) -> Ran {
    let mut command: Vec<&str> = words.to_vec();
    command.extend(["./lpai-net-run", "doctor"]);
    if !extra.contains(&"--backend") {
        command.extend(["--backend", "libQnnLpai.so"]);
    }
    command.push("--retrieve_context");
    let binary = format!("./{}", staged.binary_name);
    let system = format!("{DEVICE}/libQnnSystemContract.so");
    command.extend([binary.as_str(), "--system_library", system.as_str()]);
    command.extend(extra);
    on_device(staged, faults, &command)
}

/// The doctor line that FAILED (the test fails on none or several) and that every line after it was skipped.
fn failed_check(ran: &Ran) -> String {
    assert_eq!(ran.status, Some(1), "{}{}", ran.stdout, ran.stderr);
    let lines: Vec<&str> = ran.stdout.lines().filter(|line| line.starts_with("lpai-net-run doctor: ")).collect();
    assert_eq!(lines.len(), 8, "{}", ran.stdout);
    let failed: Vec<usize> = (0..lines.len()).filter(|&index| lines[index].contains(": FAILED: ")).collect();
    assert_eq!(failed.len(), 1, "{}", ran.stdout);
    assert!(lines[failed[0] + 1..].iter().all(|line| line.contains(": skipped: ")), "{}", ran.stdout);
    lines[failed[0]].to_string()
}

/// Every file below `output`, relative to it, for the nothing-partial checks.
fn files(output: &Path) -> Vec<PathBuf> {
    if output.exists() {
        common::files_below(output)
    } else {
        Vec::new()
    }
}

/// The staged run's output directory (the config file's default: `output` in the working directory).
fn output_of(staged: &Staged) -> PathBuf {
    staged.directory.join("output")
}

/// After a failed run: no result was written, and the record says why.
fn nothing_written_but_the_record(staged: &Staged, line: &str) {
    let output = output_of(staged);
    let left = files(&output);
    assert_eq!(left, [PathBuf::from("lpai_net_run.json")], "{}", output.display());
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(output.join("lpai_net_run.json")).unwrap()).unwrap();
    let error = record["error"].as_str().unwrap();
    assert!(line.ends_with(error), "the record's error {error:?} is not the line's end: {line}");
}

/// A copy of `skel` whose version record in the file says `interface` (what `stage` and `doctor` read; the code answers
/// its own record, so a copy like this never runs).
fn skel_speaking(skel: &Path, interface: Version, into: &Path) -> PathBuf {
    let mut bytes = std::fs::read(skel).unwrap();
    let offset = lpai_direct_stub::stub::library_version::record_offset(&bytes).unwrap();
    let record = Record::parse(&bytes[offset..]).unwrap();
    let patched = Record::new(interface, record.component, record.hex_version, record.build_id());
    bytes[offset..offset + lpai_direct::version::RECORD_BYTES].copy_from_slice(&patched.to_bytes());
    std::fs::create_dir_all(into).unwrap();
    let path = into.join("liblpai_direct_skel.so");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A version-1 LPCM file as a version-2 one made for the given core and LPAI backend API versions (the contract
/// model's format, tests/contract-model/src/format): the header, the versions, then the same records and payload.
fn as_version_2(original: &[u8], core: [u32; 3], backend: [u32; 3]) -> Vec<u8> {
    use lpai_contract_model::format::{API_VERSIONS_BYTES, HEADER_BYTES, VERSION_2};
    let total = (original.len() + API_VERSIONS_BYTES) as u32;
    let mut bytes = original[..HEADER_BYTES].to_vec();
    bytes[4..8].copy_from_slice(&VERSION_2.to_le_bytes());
    bytes[8..12].copy_from_slice(&total.to_le_bytes());
    for word in core.iter().chain(&backend) {
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    bytes.extend_from_slice(&original[HEADER_BYTES..]);
    bytes
}

#[test]
fn the_seed_command_runs_every_contract_fixture_bit_exact_in_both_modes() {
    for fixture in CONTRACT_FIXTURES {
        for native in [false, true] {
            let kind = if native { "native" } else { "float" };
            let staged = stage(fixture, &StageWith { native, ..StageWith::default() });
            for direct in [true, false] {
                let ran = run_seed(&staged, &[], &[], direct, native, &[]);
                assert_eq!(ran.status, Some(0), "{fixture} {kind} direct={direct}:\n{}{}", ran.stdout, ran.stderr);
                assert!(ran.stdout.contains("through the fastrpc transport"), "{}", ran.stdout);
                let reference = common::fixture(fixture).join("reference").join(kind);
                let output = output_of(&staged);
                let expected = common::files_below(&reference);
                assert_eq!(common::result_files(&output), expected, "{fixture} {kind} direct={direct}");
                for file in &expected {
                    let wanted = std::fs::read(reference.join(file)).unwrap();
                    let got = std::fs::read(output.join(file)).unwrap();
                    assert!(got == wanted, "{fixture} {kind} direct={direct}: {} differs", file.display());
                }
                std::fs::remove_dir_all(&output).unwrap();
            }
        }
    }
}

#[test]
fn staged_op_packages_let_a_custom_op_binary_run_in_both_modes_and_a_wrong_provider_is_named() {
    const PROVIDER: &str = "LpaiTestOpPackage_interfaceProvider";
    let package = common::virtual_adsp("liblpai_test_op_package.so");
    let with = StageWith { op_packages: Some(format!("{}:{PROVIDER}", package.display())), ..StageWith::default() };
    let staged = stage("contract_custom_op", &with);
    assert!(
        std::fs::read(staged.directory.join("adsp/liblpai_test_op_package.so")).unwrap()
            == std::fs::read(&package).unwrap()
    );
    // As the staged run line names it: by its file name, which the PD finds in adsp/ on ADSP_LIBRARY_PATH.
    let registered = format!("liblpai_test_op_package.so:{PROVIDER}");
    let reference = common::fixture("contract_custom_op").join("reference/float");
    for direct in [true, false] {
        let ran = run_seed(&staged, &[], &[], direct, false, &["--op_packages", &registered]);
        assert_eq!(ran.status, Some(0), "direct={direct}:\n{}{}", ran.stdout, ran.stderr);
        let output = output_of(&staged);
        let expected = common::files_below(&reference);
        assert_eq!(common::result_files(&output), expected, "direct={direct}");
        for file in &expected {
            let same = std::fs::read(output.join(file)).unwrap() == std::fs::read(reference.join(file)).unwrap();
            assert!(same, "direct={direct}: {} differs", file.display());
        }
        std::fs::remove_dir_all(&output).unwrap();
    }
    let without = run_seed(&staged, &[], &[], true, false, &[]);
    assert!(without.error_line().contains("QNN_CONTEXT_ERROR_CREATE_FROM_BINARY (5005)"), "{}", without.stderr);
    std::fs::remove_dir_all(output_of(&staged)).unwrap();
    let wrong =
        run_seed(&staged, &[], &[], true, false, &["--op_packages", "liblpai_test_op_package.so:NoSuchProvider"]);
    let line = wrong.error_line();
    let expected = "--op_packages: register_op_package failed in ";
    let named = "op package liblpai_test_op_package.so:NoSuchProvider: backendRegisterOpPackage failed: \
                 QNN_BACKEND_ERROR_OP_PACKAGE_IF_PROVIDER_NOT_FOUND (4006)";
    assert!(line.contains(expected) && line.contains(named), "{line}");
    nothing_written_but_the_record(&staged, line);
}

#[test]
fn skel_calls_in_direct_mode_do_not_grow_with_the_list() {
    let mut calls = Vec::new();
    for one_line in [true, false] {
        let staged = stage("contract_stream", &StageWith { one_line, ..StageWith::default() });
        let ran = run_seed(&staged, &[], &[], true, false, &[]);
        assert_eq!(ran.status, Some(0), "{}{}", ran.stdout, ran.stderr);
        let record: serde_json::Value =
            serde_json::from_slice(&std::fs::read(output_of(&staged).join("lpai_net_run.json")).unwrap()).unwrap();
        calls.push((record["inferences"].as_u64().unwrap(), record["skel_calls"].as_u64().unwrap()));
    }
    assert_eq!(
        calls,
        [(1, 8), (4, 8)],
        "(inferences, skel calls): open, version, configure, load, describe, run_job, unload, close"
    );
}

#[test]
fn doctor_passes_on_a_staged_directory() {
    let staged = stage("contract_single", &StageWith::default());
    let ran = doctor(&staged, &[], &[], &[]);
    assert_eq!(ran.status, Some(0), "{}{}", ran.stdout, ran.stderr);
    let lines: Vec<&str> = ran.stdout.lines().collect();
    assert_eq!(lines.len(), 8, "{}", ran.stdout);
    assert!(lines.iter().all(|line| line.contains(": ok: ")), "{}", ran.stdout);
    let skel = format!(
        "{DEVICE}/adsp/liblpai_direct_skel.so (interface {INTERFACE}, from the ADSP_LIBRARY_PATH directory {DEVICE}/adsp)"
    );
    assert!(lines[3].ends_with(&skel), "{}", lines[3]);
    assert!(lines[4].contains(&format!("skel interface {INTERFACE}, built for Hexagon v73")), "{}", lines[4]);
    assert!(lines[6].contains("LPAI_QTI_AISW (backend id 12) creates on the adsp"), "{}", lines[6]);
    assert!(lines[7].contains("which the backend takes"), "{}", lines[7]);
}

/// One run of the failure table: its faults, the words before the command, the flags after the seed's.
#[derive(Clone, Copy, Default)]
struct Case<'a> {
    faults: &'a [(&'a str, &'a str)],
    words: &'a [&'a str],
    extra: &'a [&'a str],
}

impl Case<'_> {
    /// The seed's command in direct mode must fail with one line (exit 1) and leave nothing but the record holding
    /// that line's error; answers the line.
    fn refused(&self, staged: &Staged) -> String {
        let ran = run_seed(staged, self.faults, self.words, true, false, self.extra);
        assert_eq!(ran.status, Some(1), "{}{}", ran.stdout, ran.stderr);
        let line = ran.error_line().to_string();
        nothing_written_but_the_record(staged, &line);
        line
    }

    /// `doctor` must fail at the check named `check`, skipping the rest; answers its line.
    fn doctor_fails_at(&self, staged: &Staged, check: &str) -> String {
        let line = failed_check(&doctor(staged, self.faults, self.words, self.extra));
        assert!(line.contains(&format!("doctor: {check}: FAILED: ")), "{line}");
        line
    }

    /// The seed's command in direct mode must succeed.
    fn runs(&self, staged: &Staged) {
        let ran = run_seed(staged, self.faults, self.words, true, false, self.extra);
        assert_eq!(ran.status, Some(0), "{}{}", ran.stdout, ran.stderr);
    }
}

/// The directories stage's env.sh gives ADSP_LIBRARY_PATH, as the lines name them.
fn staged_search() -> String {
    format!("{DEVICE}/adsp, /usr/lib/rfsa/adsp, /vendor/lib/rfsa/adsp, /vendor/dsp/ (ADSP_LIBRARY_PATH), then")
}

#[test]
fn a_skel_missing_from_the_path_is_named_with_every_directory_searched() {
    let staged = stage("contract_single", &StageWith::default());
    std::fs::remove_file(staged.directory.join("adsp/liblpai_direct_skel.so")).unwrap();
    let line = Case::default().refused(&staged);
    let searched = format!("the DSP loader finds no liblpai_direct_skel.so: it searched {}", staged_search());
    assert!(line.contains(&searched) && line.contains("(AEE_EUNABLETOLOAD, 0x80000406)"), "{line}");
    let check = Case::default().doctor_fails_at(&staged, "skel on the DSP loader's path");
    assert!(check.contains(&searched), "{check}");
}

/// The warning lines of a run (`lpai-net-run: warning:`).
fn warnings(ran: &Ran) -> Vec<&str> {
    ran.stderr.lines().filter(|line| line.starts_with("lpai-net-run: warning:")).collect()
}

/// Stages contract_single with a skel speaking interface 1.0 (the `older-interface` build, as a skel of an older
/// release answers) in `old/`; answers the stage and the ADSP_LIBRARY_PATH assignment that finds that skel first.
fn stage_with_an_older_skel_first() -> (Staged, String) {
    let staged = stage("contract_single", &StageWith::default());
    let old = staged.directory.join("old");
    std::fs::create_dir_all(&old).unwrap();
    let older = common::virtual_adsp("older-interface/liblpai_direct_skel.so");
    std::fs::copy(older, old.join("liblpai_direct_skel.so")).unwrap();
    (staged, format!("ADSP_LIBRARY_PATH={DEVICE}/old;{DEVICE}/adsp"))
}

#[test]
fn an_older_skel_first_on_the_path_runs_with_one_warning_naming_the_newer_one() {
    let (staged, path) = stage_with_an_older_skel_first();
    let ran = run_seed(&staged, &[], &[&path], true, false, &[]);
    assert_eq!(ran.status, Some(0), "{}{}", ran.stdout, ran.stderr);
    let warnings = warnings(&ran);
    assert_eq!(warnings.len(), 1, "{}", ran.stderr);
    let seen = format!("the skel answered interface 1.0, older than this stub's {INTERFACE}, and the DSP loader finds");
    let newer = format!("{DEVICE}/old/liblpai_direct_skel.so first, before {DEVICE}/adsp/liblpai_direct_skel.so");
    assert!(warnings[0].contains(&seen) && warnings[0].contains(&newer), "{}", warnings[0]);
    let case = Case { words: &[&path], ..Case::default() };
    let check = case.doctor_fails_at(&staged, "backend on the domain");
    assert!(check.contains("probe needs interface 1.1, but the skel"), "{check}");
}

#[test]
fn an_audio_pd_runs_when_this_process_finds_an_older_skel_first_with_one_warning() {
    let (staged, path) = stage_with_an_older_skel_first();
    let audio = [("LPAI_VD_STATIC_PDS", "audio")];
    let ran = run_seed(&staged, &audio, &[&path], true, false, &["--pd", "audio"]);
    assert_eq!(ran.status, Some(0), "{}{}", ran.stdout, ran.stderr);
    let reference = common::fixture("contract_single").join("reference/float");
    assert_eq!(common::result_files(&output_of(&staged)), common::files_below(&reference));
    let warnings = warnings(&ran);
    assert_eq!(warnings.len(), 1, "{}", ran.stderr);
    let seen = format!("this process's ADSP_LIBRARY_PATH finds {DEVICE}/old/liblpai_direct_skel.so first");
    let daemon = "but the audio PD's skel is loaded through its daemon, adsprpcd audiopd adsp, whose \
                  ADSP_LIBRARY_PATH this process cannot read";
    assert!(warnings[0].contains(&seen) && warnings[0].contains(daemon), "{}", warnings[0]);
    // doctor passes the skel's check on what this process sees, and fails only where the skel's answer does.
    let case = Case { faults: &audio, words: &[&path], extra: &["--pd", "audio"] };
    let check = case.doctor_fails_at(&staged, "backend on the domain");
    assert!(
        check.contains("probe needs interface 1.1, but the skel liblpai_direct_skel.so of the audio PD"),
        "{check}"
    );
    let ran = doctor(&staged, &audio, &[&path], &["--pd", "audio"]);
    let skel = check_line(&ran, "skel on the DSP loader's path");
    let opened = "ok: the PD opened liblpai_direct_skel.so of the audio PD (loaded through its daemon";
    let finds = format!("this process's path finds {DEVICE}/old/liblpai_direct_skel.so (interface 1.0");
    assert!(skel.contains(opened) && skel.contains(&finds), "{skel}");
}

#[test]
fn doctor_passes_a_skel_of_a_newer_minor_saying_the_skel_has_more() {
    let staged = stage("contract_single", &StageWith::default());
    let newer = format!("{}.{}", INTERFACE.major, INTERFACE.minor + 1);
    let ran = doctor(&staged, &[("LPAI_VD_SKEL_INTERFACE", &newer)], &[], &[]);
    assert_eq!(ran.status, Some(0), "{}{}", ran.stdout, ran.stderr);
    let handshake = ran.stdout.lines().find(|line| line.contains("doctor: version handshake: ")).unwrap();
    assert!(handshake.contains(&format!("ok: skel interface {newer}")), "{handshake}");
    assert!(!handshake.contains("lacks"), "the newer skel lacks nothing: {handshake}");
    let more = format!("the skel also has methods newer than this stub's interface {INTERFACE}");
    assert!(handshake.contains(&more), "{handshake}");
}

/// The line of check `check` of a doctor run.
fn check_line<'r>(ran: &'r Ran, check: &str) -> &'r str {
    let name = format!("lpai-net-run doctor: {check}: ");
    ran.stdout.lines().find(|line| line.starts_with(&name)).unwrap_or_else(|| panic!("no {check}:\n{}", ran.stdout))
}

#[test]
fn doctor_attributes_each_configure_failure_by_what_the_skel_answers() {
    let staged = stage("contract_single", &StageWith::default());
    let missing_system = ["--dsp_system_library", "libQnnSystem.so"];
    let check = Case { extra: &missing_system, ..Case::default() }.doctor_fails_at(&staged, "DSP-side libraries");
    let expected =
        format!("the DSP side cannot find the system library libQnnSystem.so: the DSP loader searched {DEVICE}");
    assert!(check.contains(&expected), "{check}");

    // A backend path that holds the words "system library": the message names the backend.
    let backend = format!("{DEVICE}/system library/libQnnLpai.so");
    let backend_by_path = ["--dsp_system_library", "libQnnSystem.so", "--backend", &backend];
    let check = Case { extra: &backend_by_path, ..Case::default() }.doctor_fails_at(&staged, "DSP-side libraries");
    let expected = format!("the DSP side cannot load the backend {backend} (--backend names it by its path");
    assert!(check.contains(&expected), "{check}");

    let not_a_system_library = ["--dsp_system_library", "libQnnLpai.so"];
    let case = Case { extra: &not_a_system_library, ..Case::default() };
    let check = case.doctor_fails_at(&staged, "DSP-side libraries");
    let expected = "the DSP side loads the system library libQnnLpai.so but cannot use it (the skel says: configure \
                    failed in adsp: system library libQnnLpai.so: ";
    assert!(check.contains(expected) && check.contains("(AEE_ENOSUCHSYMBOL, 0x80000442)"), "{check}");
    let line = case.refused(&staged);
    assert!(line.contains(&format!("configuring the skel: {expected}")), "{line}");

    let too_long = format!("{DEVICE}/{}/libQnnLpai.so", "d".repeat(260));
    let check =
        Case { extra: &["--backend", &too_long], ..Case::default() }.doctor_fails_at(&staged, "DSP-side libraries");
    let expected = "the skel refused the configuration before loading a library: configure failed in adsp: configure: \
                    a library path is longer than 255 bytes";
    assert!(check.contains(expected), "{check}");

    let cdsp = doctor(&staged, &[], &[], &["--domain", "cdsp"]);
    let loaded = "lpai-net-run doctor: DSP-side libraries: ok: the DSP side loads the backend libQnnLpai.so; it fails \
                  after loading (below)";
    assert_eq!(check_line(&cdsp, "DSP-side libraries"), loaded, "{}", cdsp.stdout);
    assert_eq!(failed_check(&cdsp), check_line(&cdsp, "backend on the domain"));
}

#[test]
fn a_skel_of_another_major_stops_the_run_naming_both_versions_and_the_skel() {
    let staged = stage("contract_single", &StageWith::default());
    let case = Case { faults: &[("LPAI_VD_SKEL_INTERFACE", "2.0")], ..Case::default() };
    let line = case.refused(&staged);
    let expected = format!(
        "the skel {DEVICE}/adsp/liblpai_direct_skel.so (interface {INTERFACE}, from the ADSP_LIBRARY_PATH directory \
         {DEVICE}/adsp) speaks interface 2.0"
    );
    assert!(line.contains(&expected) && line.contains(&format!("this stub {INTERFACE}")), "{line}");
    assert!(case.doctor_fails_at(&staged, "version handshake").contains(&expected));
}

#[test]
fn an_older_minor_runs_and_the_methods_it_lacks_are_refused_by_name() {
    let staged = stage("contract_single", &StageWith::default());
    let case = Case { faults: &[("LPAI_VD_SKEL_INTERFACE", "1.0")], ..Case::default() };
    case.runs(&staged);
    let check = case.doctor_fails_at(&staged, "backend on the domain");
    assert!(check.contains("probe needs interface 1.1, but the skel") && check.contains("speaks 1.0"), "{check}");
}

#[test]
fn an_unsigned_skel_in_a_signed_pd_is_refused_and_runs_unsigned_or_signed() {
    let staged = stage("contract_single", &StageWith::default());
    let signed = Case { faults: &[("LPAI_VD_SIGNED_PD", "1")], ..Case::default() };
    let line = signed.refused(&staged);
    let expected = format!(
        "the PD refused to load {DEVICE}/adsp/liblpai_direct_skel.so (interface {INTERFACE}, from the ADSP_LIBRARY_PATH \
         directory {DEVICE}/adsp): a signed PD refuses an unsigned module; sign it (the Hexagon SDK's elfsigner.py, \
         with a test signature on a development device) or run with --unsigned_pd"
    );
    assert!(line.contains(&expected), "{line}");
    assert!(signed.doctor_fails_at(&staged, "skel on the DSP loader's path").contains(&expected));
    Case { extra: &["--unsigned_pd"], ..signed }.runs(&staged);
    let adsp = staged.directory.join("adsp");
    let sign = std::process::Command::new("bash")
        .arg(common::root().join("scripts/virtual-device.sh"))
        .arg("--sign")
        .args([adsp.join("liblpai_direct_skel.so"), adsp.join("libQnnLpai.so")])
        .output()
        .unwrap();
    assert!(sign.status.success(), "{}", String::from_utf8_lossy(&sign.stderr));
    signed.runs(&staged);
}

#[test]
fn the_wrong_domain_is_named_with_the_adsp() {
    let staged = stage("contract_single", &StageWith::default());
    let case = Case { extra: &["--domain", "cdsp"], ..Case::default() };
    let line = case.refused(&staged);
    assert!(line.contains("the backend cannot be created on the cdsp"), "{line}");
    assert!(line.ends_with("LPAI runs on the aDSP; use --domain adsp"), "{line}");
    let check = case.doctor_fails_at(&staged, "backend on the domain");
    assert!(check.contains("the backend cannot be created on the cdsp"), "{check}");
    Case { faults: &[("LPAI_VD_LPAI_DOMAINS", "adsp,cdsp")], ..case }.runs(&staged);
}

#[test]
fn a_backend_missing_on_the_dsp_side_is_named_with_the_directories_searched() {
    let staged = stage("contract_single", &StageWith::default());
    std::fs::remove_file(staged.directory.join("adsp/libQnnLpai.so")).unwrap();
    let line = Case::default().refused(&staged);
    let expected =
        format!("the DSP side cannot find the backend libQnnLpai.so: the DSP loader searched {}", staged_search());
    assert!(line.contains(&expected) && line.contains("stage it in <device dir>/adsp"), "{line}");
    assert!(Case::default().doctor_fails_at(&staged, "DSP-side libraries").contains(&expected));
}

#[test]
fn a_binary_for_another_backend_version_names_both_versions() {
    let work = tempfile::tempdir().unwrap();
    let binary = work.path().join("newer.bin");
    let original = std::fs::read(common::fixture("contract_single/contract_single.bin")).unwrap();
    std::fs::write(&binary, as_version_2(&original, [2, 32, 0], [2, 27, 0])).unwrap();
    let staged = stage("contract_single", &StageWith { binary: Some(binary), ..StageWith::default() });
    let line = Case::default().refused(&staged);
    let versions = [
        "newer.bin was made for backend API 2.27.0 (core API 2.32.0",
        "but the backend on the DSP, LPAI_QTI_AISW, is backend API 2.26.0 (core API 2.32.0)",
    ];
    assert!(versions.iter().all(|part| line.contains(part)), "{line}");
    let check = Case::default().doctor_fails_at(&staged, "context binary");
    assert!(versions.iter().all(|part| check.contains(part)), "{check}");
}

/// The DSP's own log lines (`adsp[<level>] <file>: <message>`) of a captured log, in order.
fn dsp_lines(log: &str) -> Vec<&str> {
    log.lines().filter(|line| line.starts_with("adsp[")).collect()
}

/// `lpai-net-run render-log` (the host build) with `log` on its stdin; answers its stdout.
fn render_log(log: &str) -> String {
    use std::io::Write;
    use std::process::Stdio;
    let exe = common::artifact("target/debug/lpai-net-run", "cargo build -p lpai-net-run");
    let mut child = std::process::Command::new(exe)
        .arg("render-log")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let text = log.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success(), "render-log failed:\n{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn a_captured_raw_dsp_log_of_a_failing_run_renders_into_the_same_words() {
    // The failing run: a context binary made for a newer LPAI backend API, which the backend on the DSP refuses; the
    // skel logs its steps and the failed call at --log_level info, as message records.
    let work = tempfile::tempdir().unwrap();
    let binary = work.path().join("newer.bin");
    let original = std::fs::read(common::fixture("contract_single/contract_single.bin")).unwrap();
    std::fs::write(&binary, as_version_2(&original, [2, 32, 0], [2, 27, 0])).unwrap();
    let staged = stage("contract_single", &StageWith { binary: Some(binary), ..StageWith::default() });
    let words = "load_with_metadata: contextCreateFromBinary failed: QNN_CONTEXT_ERROR_BINARY_VERSION (5004)";
    // Once as usual (the PD shell puts the DSP's log in words), once raw (as a device's log carries it).
    let usual_path = work.path().join("usual.log");
    let raw_path = work.path().join("raw.log");
    let usual_log = usual_path.to_str().unwrap();
    let raw_log = raw_path.to_str().unwrap();
    let extra = ["--log_level", "info"];
    let usual_line =
        Case { faults: &[("LPAI_VD_DSP_LOG", usual_log)], extra: &extra, ..Case::default() }.refused(&staged);
    let raw_faults = [("LPAI_VD_DSP_LOG", raw_log), ("LPAI_VD_RAW_LOG", "1")];
    let raw_line = Case { faults: &raw_faults, extra: &extra, ..Case::default() }.refused(&staged);
    assert_eq!(raw_line, usual_line, "the stub puts the skel's error in words either way");
    assert!(usual_line.contains("newer.bin was made for backend API 2.27.0 (core API 2.32.0"), "{usual_line}");
    let usual = std::fs::read_to_string(&usual_path).unwrap();
    let raw = std::fs::read_to_string(&raw_path).unwrap();
    let usual_lines = dsp_lines(&usual);
    let raw_lines = dsp_lines(&raw);
    // The usual run's DSP log says why in words, and holds no record.
    assert!(usual_lines.iter().any(|line| line.contains(words)), "{usual}");
    assert!(usual_lines.iter().all(|line| lpai_direct::message::log::record_in(line).is_none()), "{usual}");
    // The raw capture holds records and none of those words: the switch was not ignored.
    assert_ne!(raw_lines, usual_lines, "LPAI_VD_RAW_LOG=1 changed nothing:\n{raw}");
    assert!(raw_lines.iter().any(|line| line.contains(": lpai:")), "{raw}");
    assert!(!raw.contains(words), "{raw}");
    for line in usual_lines.iter().filter(|line| !raw_lines.contains(line)) {
        assert!(!raw.contains(line.split_once(": ").unwrap().1), "in words in the raw capture: {line}\n{raw}");
    }
    // render-log puts the raw capture in exactly the usual run's words, line for line.
    let rendered = render_log(&raw);
    assert_eq!(dsp_lines(&rendered), usual_lines, "rendered:\n{rendered}\nusual:\n{usual}");
}

#[test]
fn a_pd_restart_during_a_run_leaves_the_whole_results_and_nothing_partial() {
    // contract_stream has 4 lines. The PD's events (FastRPC invocations and apps_std file calls) are open,
    // version, configure, load, describe, then in direct mode run_job and 20 file calls per inference after the
    // job's checks (reading the next one's inputs, writing the previous one's results, appending its record), in
    // traditional mode one execute per inference: these points land in the first, middle and last inferences.
    let staged = stage("contract_stream", &StageWith::default());
    let reference = common::fixture("contract_stream").join("reference/float");
    for (direct, points) in [(true, [62, 85, 105]), (false, [7, 8, 9])] {
        let mut inferences_hit = Vec::new();
        for point in points {
            let output = output_of(&staged);
            let _ = std::fs::remove_dir_all(&output);
            let ran = run_seed(&staged, &[("LPAI_VD_RESTART_AFTER", &point.to_string())], &[], direct, false, &[]);
            let line = ran.error_line();
            assert_eq!(ran.status, Some(1));
            let during: usize = line
                .split("the DSP's PD restarted during inference ")
                .nth(1)
                .and_then(|rest| rest.split(':').next())
                .and_then(|number| number.parse().ok())
                .unwrap_or_else(|| panic!("direct={direct} after {point} events: {line}"));
            inferences_hit.push(during);
            let whole = match during {
                1 => "Result_0 is whole".to_string(),
                _ => format!("Result_0..Result_{} are whole", during - 1),
            };
            assert!(line.contains(&whole), "{line}");
            assert!(line.contains(&format!("nothing of inference {during} is left")), "{line}");
            assert!(line.contains("(AEE_ECONNRESET, 0x00000068)"), "{line}");
            let mut expected: Vec<PathBuf> = common::files_below(&reference)
                .into_iter()
                .filter(|file| {
                    file.iter().next().and_then(|top| top.to_str()?.strip_prefix("Result_")?.parse::<usize>().ok())
                        < Some(during)
                })
                .collect();
            expected.push(PathBuf::from("lpai_net_run.json"));
            expected.sort();
            assert_eq!(files(&output), expected, "direct={direct} after {point} events: nothing partial is left");
            for file in expected.iter().filter(|file| file.starts_with("Result_0") || file.iter().count() > 1) {
                let (got, wanted) =
                    (std::fs::read(output.join(file)).unwrap(), std::fs::read(reference.join(file)).unwrap());
                assert!(got == wanted, "direct={direct}: {} is not whole", file.display());
            }
            nothing_but_results_and_the_record(&output, line);
        }
        assert_eq!(inferences_hit, [1, 2, 3], "direct={direct}: where the restarts landed");
    }
}

/// Every file below `output`, relative to it, with its identity (device and inode: a file renamed over another
/// has a new one).
fn identities(output: &Path) -> BTreeMap<PathBuf, (u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    let identity = |file: &PathBuf| {
        let metadata = std::fs::metadata(output.join(file)).unwrap();
        (metadata.dev(), metadata.ino())
    };
    files(output).into_iter().map(|file| (identity(&file), file)).map(|(identity, file)| (file, identity)).collect()
}

/// The result index of a file below the output directory (`Result_<i>/...`), if it is a result.
fn result_index(file: &Path) -> Option<usize> {
    file.iter().next()?.to_str()?.strip_prefix("Result_")?.parse().ok()
}

#[test]
fn a_pd_restart_is_placed_by_the_skels_record_and_leaves_an_earlier_runs_results_alone() {
    // The output directory holds an earlier run's 12 results (contract_stream's 4 lines, three times over); a run of
    // the 4 lines into it is ended by a PD restart: without --keep_num_outputs at points through its inference 1
    // (before, between and after the renames of Result_1's two files), and with --keep_num_outputs 2 in its
    // inference 3. The line
    // names the inference from the skel's record, never from the files there; the results this run kept are its
    // own and whole; the earlier run's files are untouched, except the files of the unfinished inference this run
    // had already renamed over, which are removed with nothing else.
    let staged = stage("contract_stream", &StageWith::default());
    let reference = common::fixture("contract_stream").join("reference/float");
    let cases: [(Option<usize>, &[u32], usize); 2] = [(None, &INFERENCE_1_POINTS, 1), (Some(2), &[KEEP_POINT], 3)];
    let mut unfinished_states = Vec::new();
    for (keep, points, during) in cases {
        for &point in points {
            let output = output_of(&staged);
            let _ = std::fs::remove_dir_all(&output);
            let earlier = run_seed(&staged, &[], &[], true, false, &["--num_inferences", "12"]);
            assert_eq!(earlier.status, Some(0), "the earlier run:\n{}", earlier.stderr);
            let before = identities(&output);
            assert_eq!(before.keys().filter(|file| result_index(file).is_some()).count(), 24);
            let keep_flag = keep.map(|keep| format!("--keep_num_outputs={keep}"));
            let ran = run_seed(
                &staged,
                &[("LPAI_VD_RESTART_AFTER", &point.to_string())],
                &[],
                true,
                false,
                &keep_flag.iter().map(String::as_str).collect::<Vec<_>>(),
            );
            let line = ran.error_line();
            let kept = keep.unwrap_or(during).min(during);
            let whole = match kept {
                1 => "Result_0 is whole".to_string(),
                _ => format!("Result_0..Result_{} are whole", kept - 1),
            };
            let said = format!(
                "the DSP's PD restarted during inference {during}: {whole}, and nothing of inference {during} is left"
            );
            assert!(line.contains(&said), "keep={keep:?} after {point} events: {line}");
            let after = identities(&output);
            let temporary: Vec<&PathBuf> =
                after.keys().filter(|file| file.to_string_lossy().contains(".partial")).collect();
            assert!(temporary.is_empty(), "after {point} events: {temporary:?}");
            let mut unfinished = Vec::new();
            for (file, identity) in &before {
                let index = result_index(file);
                let now = after.get(file);
                match index {
                    Some(index) if index < kept => {
                        assert!(now.is_some_and(|now| now != identity), "{}: this run's", file.display());
                        let (got, wanted) = (std::fs::read(output.join(file)), std::fs::read(reference.join(file)));
                        assert!(got.unwrap() == wanted.unwrap(), "{} is not whole", file.display());
                    }
                    Some(index) if index == during && keep.is_none() => {
                        assert!(
                            now.is_none() || now == Some(identity),
                            "{}: the earlier run's or none",
                            file.display()
                        );
                        unfinished.push(now.is_some());
                    }
                    Some(_) => assert_eq!(now, Some(identity), "after {point} events: {} was touched", file.display()),
                    None => {}
                }
            }
            let results_after = after.keys().filter(|file| result_index(file).is_some());
            assert!(results_after.clone().all(|file| before.contains_key(file)), "{:?}", after.keys());
            unfinished_states.extend((keep.is_none()).then_some(unfinished));
            nothing_but_results_and_the_record(&output, line);
        }
    }
    // The points through inference 1 met both: its files all still the earlier run's, and one renamed over (then
    // removed).
    assert!(unfinished_states.iter().any(|state| state.iter().all(|&kept| kept)), "{unfinished_states:?}");
    assert!(unfinished_states.iter().any(|state| state.contains(&false)), "{unfinished_states:?}");
}

#[test]
fn a_profile_read_that_fails_loses_no_result() {
    // Traditional mode with --profiling_level: the PD dies at the profile read after inference 1. Its results are
    // written before the read, the failed read is one warning line, and the run stops at the next execute.
    let staged = stage("contract_stream", &StageWith::default());
    let reference = common::fixture("contract_stream").join("reference/float");
    let output = output_of(&staged);
    let restart = PROFILE_AFTER_INFERENCE_1.to_string();
    let ran =
        run_seed(&staged, &[("LPAI_VD_RESTART_AFTER", &restart)], &[], false, false, &["--profiling_level=basic"]);
    let warnings: Vec<&str> = ran.stderr.lines().filter(|line| line.starts_with("lpai-net-run: warning: ")).collect();
    assert_eq!(warnings.len(), 1, "{}", ran.stderr);
    assert!(
        warnings[0].starts_with("lpai-net-run: warning: reading the profile after inference 1 failed"),
        "{}",
        warnings[0]
    );
    let line = ran.error_line();
    assert!(line.contains("the DSP's PD restarted during inference 2: Result_0..Result_1 are whole"), "{line}");
    for file in ["Result_0/energy.raw", "Result_0/mixed.raw", "Result_1/energy.raw", "Result_1/mixed.raw"] {
        let got = std::fs::read(output.join(file)).unwrap_or_else(|error| panic!("{file}: {error}"));
        assert!(got == std::fs::read(reference.join(file)).unwrap(), "{file} is not whole");
    }
}

/// The record of a failed run holds its error.
fn nothing_but_results_and_the_record(output: &Path, line: &str) {
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(output.join("lpai_net_run.json")).unwrap()).unwrap();
    let error = record["error"].as_str().unwrap();
    assert!(line.ends_with(error), "the record's error {error:?} is not the line's end: {line}");
}

#[test]
fn a_static_pd_that_refuses_this_process_is_named() {
    let staged = stage("contract_single", &StageWith::default());
    let case = Case { extra: &["--pd", "audio"], ..Case::default() };
    let line = case.refused(&staged);
    let expected = "createstaticpd:audiopd&_dom=adsp that attaches this process to the audio PD on adsp: usually this \
                    process lacks the privileges for that PD";
    assert!(line.contains(expected) && line.contains("(AEE_EBADPERMS, 0x0000004e)"), "{line}");
    assert!(case.doctor_fails_at(&staged, "PD").contains(expected));
    Case { faults: &[("LPAI_VD_STATIC_PDS", "audio")], ..case }.runs(&staged);
}

#[test]
fn no_fastrpc_library_is_named_with_what_was_tried() {
    let staged = stage("contract_single", &StageWith::default());
    let case = Case { extra: &["--fastrpc_library", "/vendor/lib64/libnothing.so"], ..Case::default() };
    let line = case.refused(&staged);
    let expected = "FastRPC is not available: tried /vendor/lib64/libnothing.so";
    assert!(line.contains(expected), "{line}");
    assert!(case.doctor_fails_at(&staged, "FastRPC library").contains(expected));
}

#[test]
fn stage_refuses_a_skel_of_another_major_version() {
    let work = tempfile::tempdir().unwrap();
    let skel =
        skel_speaking(&common::virtual_adsp("liblpai_direct_skel.so"), Version { major: 2, minor: 0 }, work.path());
    let output = stage_into(work.path(), "contract_single", &StageWith { skel: Some(skel), ..StageWith::default() });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("speaks interface 2.0") && stderr.contains(&format!("speaks {INTERFACE}")), "{stderr}");
    assert!(stderr.contains("a stub and a skel of different major versions cannot talk"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(work.path()).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    assert!(left.iter().all(|name| !name.to_string_lossy().starts_with("staged")), "{left:?}");
}
