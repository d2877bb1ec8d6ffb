//! `lpai-net-run stage` end to end: the contract_single fixture staged with small stand-ins for the HLOS binaries
//! (AArch64 ELF headers) and the virtual aDSP's Hexagon skel and contract model; the tree file by file, the rewritten
//! input list, config.json and lpaiParams.conf (read back with lpai-net-run's own config reader), the printed
//! commands (their run line parsed with lpai-net-run's own options), `--push` through a stand-in adb that logs its
//! invocations, and refusals that name what is at fault and stage nothing.

mod common;

use lpai_net_run::cli::{Options, Parser};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const DEVICE: &str = "/data/local/tmp/LPAI";

fn exe() -> PathBuf {
    common::artifact("target/release/lpai-net-run", "cargo build --release -p lpai-net-run")
}

/// The stand-in HLOS files: a 64-byte little-endian AArch64 ELF header each, followed by the file's own name, so
/// every copy can be told apart.
fn stand_ins(directory: &Path) -> PathBuf {
    std::fs::create_dir_all(directory).unwrap();
    for name in ["lpai-net-run", "liblpai_direct_stub.so", "libQnnSystem.so"] {
        let mut bytes = vec![0u8; 64];
        bytes[..4].copy_from_slice(b"\x7fELF");
        bytes[4] = 2; // ELFCLASS64
        bytes[5] = 1; // little-endian
        bytes[6] = 1;
        bytes[16..18].copy_from_slice(&3u16.to_le_bytes());
        bytes[18..20].copy_from_slice(&183u16.to_le_bytes()); // EM_AARCH64
        bytes.extend_from_slice(name.as_bytes());
        std::fs::write(directory.join(name), bytes).unwrap();
    }
    directory.to_path_buf()
}

/// `lpai-net-run stage` run from the contract_single fixture's directory, without the three build variables in
/// its environment unless `environment` sets them.
fn stage(args: &[String], environment: &[(&str, &str)], path: Option<&str>) -> Output {
    let mut command = Command::new(exe());
    command.current_dir(common::fixture("contract_single")).arg("stage").args(args);
    for variable in ["QNN_TARGET_ARCH", "HEX_VER", "HW_VER", "FAKE_ADB_FAIL"] {
        command.env_remove(variable);
    }
    command.envs(environment.iter().copied());
    if let Some(path) = path {
        command.env("PATH", path);
    }
    command.output().unwrap()
}

/// The arguments every test gives: the fixture, the Hexagon files, the stand-in HLOS system library.
fn base_args(output: &Path, hlos: &Path) -> Vec<String> {
    vec![
        format!("--output_dir={}", output.display()),
        "--retrieve_context=contract_single.bin".into(),
        "--input_list=input_list_float.txt".into(),
        format!("--backend={}", common::virtual_adsp("libQnnLpaiContract.so").display()),
        format!("--skel={}", common::virtual_adsp("liblpai_direct_skel.so").display()),
        format!("--system_library={}", hlos.join("libQnnSystem.so").display()),
    ]
}

fn text(output: &Output) -> (String, String) {
    (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned())
}

/// The temporary directories a stage of `output` left beside it (`<name>.<token>.partial`, lpai_direct::temporary).
fn temporaries_of(output: &Path) -> Vec<PathBuf> {
    let name = output.file_name().unwrap().to_str().unwrap();
    let Ok(entries) = std::fs::read_dir(output.parent().unwrap()) else { return Vec::new() };
    let of_output =
        |entry: &str| lpai_direct::temporary::split(entry).is_some_and(|(final_name, _)| final_name == name);
    entries
        .map(|entry| entry.unwrap().path())
        .filter(|path| of_output(path.file_name().unwrap().to_str().unwrap()))
        .collect()
}

/// The run line the commands end with, for a staged contract_single with the given extra flags.
fn run_line(extra: &str) -> String {
    format!(
        "cd {DEVICE} && . ./env.sh && ./lpai-net-run --transport fastrpc --backend libQnnLpaiContract.so \
         --retrieve_context {DEVICE}/contract_single.bin --input_list {DEVICE}/input_list.txt --config_file \
         {DEVICE}/config.json --direct_mode --output_dir {DEVICE}/output --system_library \
         {DEVICE}/libQnnSystem.so{extra}"
    )
}

#[test]
fn the_contract_fixture_is_staged_whole_with_its_list_config_and_commands() {
    let work = tempfile::tempdir().unwrap();
    let hlos = stand_ins(&work.path().join("hlos"));
    let output = work.path().join("stage");
    let mut args = base_args(&output, &hlos);
    args.push(format!("--net_run={}", hlos.join("lpai-net-run").display()));
    args.push(format!("--stub={}", hlos.join("liblpai_direct_stub.so").display()));
    let ran = stage(&args, &[("HW_VER", "v7")], None);
    let (stdout, stderr) = text(&ran);
    assert!(ran.status.success(), "{stdout}{stderr}");

    let expected: Vec<PathBuf> = [
        "adsp/libQnnLpaiContract.so",
        "adsp/liblpai_direct_skel.so",
        "config.json",
        "contract_single.bin",
        "env.sh",
        "input_list.txt",
        "inputs/0_0.raw",
        "inputs/1_0.raw",
        "inputs/2_0.raw",
        "inputs/3_0.raw",
        "libQnnSystem.so",
        "liblpai_direct_stub.so",
        "lpai-net-run",
        "lpaiParams.conf",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    assert_eq!(common::files_below(&output), expected);
    assert_eq!(temporaries_of(&output), Vec::<PathBuf>::new());

    // Every copied file is its source, byte for byte.
    let fixture = common::fixture("contract_single");
    let mut copies = vec![
        ("adsp/libQnnLpaiContract.so", common::virtual_adsp("libQnnLpaiContract.so")),
        ("adsp/liblpai_direct_skel.so", common::virtual_adsp("liblpai_direct_skel.so")),
        ("contract_single.bin", fixture.join("contract_single.bin")),
        ("libQnnSystem.so", hlos.join("libQnnSystem.so")),
        ("liblpai_direct_stub.so", hlos.join("liblpai_direct_stub.so")),
        ("lpai-net-run", hlos.join("lpai-net-run")),
    ];
    for line in 0..4 {
        copies.push((["inputs/0_0.raw", "inputs/1_0.raw", "inputs/2_0.raw", "inputs/3_0.raw"][line], {
            fixture.join(format!("inputs/float/{line}_0.raw"))
        }));
    }
    for (staged, source) in &copies {
        assert!(std::fs::read(output.join(staged)).unwrap() == std::fs::read(source).unwrap(), "{staged}");
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = |name: &str| std::fs::metadata(output.join(name)).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode("lpai-net-run"), mode("liblpai_direct_stub.so")), (0o755, 0o644));

    // env.sh: the environment the run command sources.
    let environment = std::fs::read_to_string(output.join("env.sh")).unwrap();
    let expected_environment = format!(
        "# Written by lpai-net-run stage: the environment of a run on the device (the run command sources it).\n\
         export LD_LIBRARY_PATH={DEVICE}\n\
         export ADSP_LIBRARY_PATH='{DEVICE}/adsp;/usr/lib/rfsa/adsp;/vendor/lib/rfsa/adsp;/vendor/dsp/'\n"
    );
    assert_eq!(environment, expected_environment);

    // The list names the device paths of the copies.
    let list = std::fs::read_to_string(output.join("input_list.txt")).unwrap();
    let expected_list: String = (0..4).map(|line| format!("in:={DEVICE}/inputs/{line}_0.raw\n")).collect();
    assert_eq!(list, expected_list);

    // config.json: backend extensions naming the conf, and the persistent binary LPAI needs; lpai-net-run's own
    // reader finds HW_VER (from the environment) and the aDSP target in it.
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(output.join("config.json")).unwrap()).unwrap();
    assert_eq!(
        config,
        serde_json::json!({
            "backend_extensions": {"config_file_path": "./lpaiParams.conf"},
            "context_configs": {"is_persistent_binary": true}
        })
    );
    let read = lpai_net_run::net_run_config::read(&output.join("config.json")).unwrap();
    assert_eq!((read.lpai.target, read.lpai.hw_version, read.persistent_binary), (Some(2), Some(7), true));

    // The commands, in order, and a run line lpai-net-run itself accepts.
    let push = format!("adb push {}/. {DEVICE}", output.display());
    let commands = [
        "adb root".to_string(),
        "adb wait-for-device".to_string(),
        format!("adb shell mkdir -p {DEVICE}"),
        push,
        format!("adb shell \"{}\"", run_line("")),
    ];
    let printed = commands.iter().map(|command| format!("  {command}\n")).collect::<String>();
    assert!(stdout.contains(&format!("commands:\n{printed}results: adb pull {DEVICE}/output\n")), "{stdout}");
    let flags = run_line("");
    let flags = flags.split_once("./lpai-net-run ").unwrap().1;
    let options = Options::try_parse_from(std::iter::once("lpai-net-run").chain(flags.split(' '))).unwrap();
    let settings = options.settings();
    assert!(settings.direct_mode && !settings.persistent_binary, "config.json asks for it");
    assert_eq!(settings.backend, PathBuf::from("libQnnLpaiContract.so"));
    assert_eq!(settings.config_file, Some(PathBuf::from(format!("{DEVICE}/config.json"))));
    assert_eq!(settings.transport, Some(lpai_direct_stub::stub::TransportKind::Fastrpc));

    // The reminders: what to sign, and root; no PD note for the user PD.
    let signing = "note: sign the DSP side before running: adsp/liblpai_direct_skel.so, adsp/libQnnLpaiContract.so (";
    assert!(stdout.contains(signing), "{stdout}");
    assert!(stdout.contains("note: the run needs root"), "{stdout}");
    assert!(!stdout.contains("note: --pd"), "{stdout}");
}

#[test]
fn push_runs_the_commands_in_order_with_the_adb_on_path() {
    let work = tempfile::tempdir().unwrap();
    let hlos = stand_ins(&work.path().join("hlos"));
    let output = work.path().join("pushed");
    let log = work.path().join("adb.log");
    // A backend-extensions JSON naming a conf with a setting of its own, for the native list.
    let conf = work.path().join("my.conf");
    std::fs::write(&conf, r#"{"lpai_graph": {"execute": {"fps": 30}}}"#).unwrap();
    let extensions = work.path().join("extensions.json");
    std::fs::write(&extensions, r#"{"backend_extensions": {"config_file_path": "my.conf"}}"#).unwrap();
    let mut args = base_args(&output, &hlos);
    args[2] = "--input_list=input_list_native.txt".into();
    args.extend([
        format!("--hlos_dir={}", hlos.display()),
        format!("--config_file={}", extensions.display()),
        "--pd=sensors".into(),
        "--use_native_input_files".into(),
        "--push".into(),
    ]);
    let fake_adb = common::root().join("tests/fake-adb");
    let path = format!("{}:{}", fake_adb.display(), std::env::var("PATH").unwrap_or_default());
    let log_text = log.display().to_string();
    let ran = stage(&args, &[("FAKE_ADB_LOG", &log_text), ("HW_VER", "v5")], Some(&path));
    let (stdout, stderr) = text(&ran);
    assert!(ran.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains(&format!("running them with {}/adb", fake_adb.display())), "{stdout}");

    let run = run_line(" --pd sensors --use_native_input_files");
    let expected = format!(
        "root\nwait-for-device\nshell\tmkdir\t-p\t{DEVICE}\npush\t{}/.\t{DEVICE}\nshell\t{run}\n",
        output.display()
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), expected);
    let list = std::fs::read_to_string(output.join("input_list.txt")).unwrap();
    assert!(list.starts_with(&format!("in:={DEVICE}/inputs/0_0.raw\n")), "{list}");
    assert_eq!(
        std::fs::read(output.join("inputs/2_0.raw")).unwrap(),
        std::fs::read(common::fixture("contract_single").join("inputs/native/2_0.raw")).unwrap()
    );
    // The conf staged is the user's, with the target and HW_VER it lacked.
    let params: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(output.join("lpaiParams.conf")).unwrap()).unwrap();
    assert_eq!(
        params,
        serde_json::json!({
            "lpai_backend": {"target_env": "adsp", "enable_hw_ver": "v5"},
            "lpai_graph": {"execute": {"fps": 30}}
        })
    );
    // The sensors PD note says where the skel must be.
    assert!(stdout.contains("note: --pd sensors: the sensors PD is a static PD"), "{stdout}");
    assert!(stdout.contains("/vendor/lib/rfsa/adsp"), "{stdout}");
}

#[test]
fn push_stops_at_the_first_failing_adb_command() {
    let work = tempfile::tempdir().unwrap();
    let hlos = stand_ins(&work.path().join("hlos"));
    let output = work.path().join("stage");
    let log = work.path().join("adb.log");
    let mut args = base_args(&output, &hlos);
    args.extend([format!("--hlos_dir={}", hlos.display()), "--push".into()]);
    let path = format!("{}:/usr/bin:/bin", common::root().join("tests/fake-adb").display());
    let log_text = log.display().to_string();
    let ran = stage(&args, &[("FAKE_ADB_LOG", &log_text), ("FAKE_ADB_FAIL", "push")], Some(&path));
    let (stdout, stderr) = text(&ran);
    assert_eq!(ran.status.code(), Some(1), "{stdout}{stderr}");
    let failed = format!("`adb push {}/. {DEVICE}` failed (exit status: 1); the commands after it were not run", {
        output.display()
    });
    assert!(stderr.contains(&failed), "{stderr}");
    let invoked: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| line.split('\t').next().unwrap().to_string())
        .collect();
    assert_eq!(invoked, ["root", "wait-for-device", "shell", "push"]);
    // The directory itself was staged whole before the push.
    assert!(output.join("adsp/liblpai_direct_skel.so").is_file());
}

#[test]
fn push_without_adb_on_path_fails_before_staging_anything() {
    let work = tempfile::tempdir().unwrap();
    let hlos = stand_ins(&work.path().join("hlos"));
    let output = work.path().join("stage");
    let empty = work.path().join("no-programs");
    std::fs::create_dir(&empty).unwrap();
    let mut args = base_args(&output, &hlos);
    args.extend([format!("--hlos_dir={}", hlos.display()), "--push".into()]);
    let ran = stage(&args, &[], Some(empty.to_str().unwrap()));
    let (stdout, stderr) = text(&ran);
    assert_eq!(ran.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("--push runs adb, which is not on PATH"), "{stderr}");
    assert!(!output.exists() && temporaries_of(&output).is_empty());
}

#[test]
fn op_packages_are_staged_in_adsp_and_the_run_registers_them_by_name() {
    let work = tempfile::tempdir().unwrap();
    let hlos = stand_ins(&work.path().join("hlos"));
    let output = work.path().join("stage");
    // Any Hexagon library stands in for a package here: stage checks and places it, the run registers it.
    let package = common::virtual_adsp("libQnnSystemContract.so");
    let mut args = base_args(&output, &hlos);
    args.push(format!("--hlos_dir={}", hlos.display()));
    args.push(format!("--op_packages={}:MyOps_interfaceProvider:DSP", package.display()));
    let ran = stage(&args, &[], None);
    let (stdout, stderr) = text(&ran);
    assert!(ran.status.success(), "{stdout}{stderr}");
    let staged = output.join("adsp/libQnnSystemContract.so");
    assert!(std::fs::read(&staged).unwrap() == std::fs::read(&package).unwrap(), "the package is copied into adsp/");
    let flags = " --op_packages libQnnSystemContract.so:MyOps_interfaceProvider:DSP";
    assert!(stdout.contains(&format!("adb shell \"{}\"", run_line(flags))), "{stdout}");
    let line = run_line(flags);
    let options = Options::try_parse_from(
        std::iter::once("lpai-net-run").chain(line.split_once("./lpai-net-run ").unwrap().1.split(' ')),
    );
    let packages = options.unwrap().settings().op_packages;
    assert_eq!(packages.len(), 1);
    assert_eq!(
        (packages[0].path.to_str(), packages[0].target.as_deref()),
        (Some("libQnnSystemContract.so"), Some("DSP"))
    );
    assert!(
        stdout.contains("adsp/libQnnLpaiContract.so, adsp/libQnnSystemContract.so ("),
        "it is signed with the rest: {stdout}"
    );

    let malformed = work.path().join("malformed");
    let mut args = base_args(&malformed, &hlos);
    args.push("--op_packages=libMyOps.so".into());
    let ran = stage(&args, &[], None);
    let (_, stderr) = text(&ran);
    assert_eq!(ran.status.code(), Some(2));
    assert!(
        stderr.lines().next().unwrap().contains("--op_packages")
            && stderr.contains("entry 1 'libMyOps.so' has no interface provider"),
        "{stderr}"
    );
    assert!(!malformed.exists());
}

/// A refused stage: its arguments, its environment, and what its error must say.
type Refusal = (Vec<String>, Vec<(&'static str, &'static str)>, String);

#[test]
fn refusals_name_the_file_or_setting_at_fault_and_stage_nothing() {
    let work = tempfile::tempdir().unwrap();
    let hlos = stand_ins(&work.path().join("hlos"));
    let output = work.path().join("stage");
    // The base arguments with some flags replaced (`--flag=value` replaces that flag) or added.
    let with = |hlos_dir: bool, changes: &[String]| {
        let mut args = base_args(&output, &hlos);
        if hlos_dir {
            args.push(format!("--hlos_dir={}", hlos.display()));
        }
        for change in changes {
            let flag = change.split_once('=').map_or(change.as_str(), |(flag, _)| flag);
            match args.iter().position(|arg| arg.split_once('=').is_some_and(|(given, _)| given == flag)) {
                Some(index) => args[index] = change.clone(),
                None => args.push(change.clone()),
            }
        }
        args
    };
    let with_hlos = |changes: &[String]| with(true, changes);
    let missing_list = work.path().join("missing.txt");
    std::fs::write(&missing_list, "# out\nin:=inputs/float/0_0.raw\nin:=inputs/float/9_0.raw\n").unwrap();
    let arm_conf = work.path().join("arm.conf");
    std::fs::write(&arm_conf, r#"{"lpai_backend": {"target_env": "arm"}}"#).unwrap();
    let host_skel = common::host_skel();
    let cases: Vec<Refusal> = vec![
        // No HLOS binaries named, and none built for that target.
        (
            with(false, &["--qnn_target_arch=aarch64-android".to_string()]),
            vec![],
            "lpai-net-run for QNN_TARGET_ARCH=aarch64-android is missing: expected ".to_string(),
        ),
        (
            with(false, &[]),
            vec![("QNN_TARGET_ARCH", "aarch64-qnx800")],
            "build it with QNN_TARGET_ARCH=aarch64-qnx800 bash scripts/build-hlos.sh".to_string(),
        ),
        (
            with_hlos(&[]),
            vec![("QNN_TARGET_ARCH", "x86_64-linux-clang")],
            "QNN_TARGET_ARCH from QNN_TARGET_ARCH in the environment is \"x86_64-linux-clang\"".into(),
        ),
        // The host build of the skel is not the aDSP's.
        (
            with_hlos(&[format!("--skel={}", host_skel.display())]),
            vec![],
            format!("--skel {} is an x86-64 ELF, not a Hexagon ELF", host_skel.display()),
        ),
        // The virtual aDSP's skel is a v73 build: too new for a v69 device.
        (
            with_hlos(&[]),
            vec![("HEX_VER", "69")],
            "is built for Hexagon v73, newer than HEX_VER=69 (from HEX_VER in the environment)".into(),
        ),
        (with_hlos(&["--hw_ver=v9".into()]), vec![], "HW_VER from --hw_ver is \"v9\"".into()),
        // A stand-in AArch64 file is not a libQnnLpai for the aDSP.
        (
            with_hlos(&[format!("--backend={}", hlos.join("libQnnSystem.so").display())]),
            vec![],
            "--backend ".to_string() + &hlos.join("libQnnSystem.so").display().to_string() + " is an AArch64 ELF",
        ),
        (
            with_hlos(&[format!("--input_list={}", missing_list.display())]),
            vec![],
            format!("input list {} line 3: inputs/float/9_0.raw is not a file", missing_list.display()),
        ),
        (
            with_hlos(&[format!("--config_file={}", arm_conf.display())]),
            vec![],
            format!("config file {}: lpai_backend.target_env is \"arm\"", arm_conf.display()),
        ),
        (
            with_hlos(&["--retrieve_context=absent.bin".into()]),
            vec![],
            "--retrieve_context absent.bin does not exist".into(),
        ),
        (with_hlos(&["--device_dir=/data/my dir".into()]), vec![], "--device_dir \"/data/my dir\" must be".into()),
        // An op package that is not there, or not a Hexagon library.
        (
            with_hlos(&["--op_packages=/nonexistent/libMyOps.so:MyOps_interfaceProvider".into()]),
            vec![],
            "--op_packages /nonexistent/libMyOps.so does not exist".into(),
        ),
        (
            with_hlos(&[format!("--op_packages={}:MyOps_interfaceProvider", hlos.join("libQnnSystem.so").display())]),
            vec![],
            "--op_packages ".to_string() + &hlos.join("libQnnSystem.so").display().to_string() + " is an AArch64 ELF",
        ),
    ];
    for (args, environment, expected) in cases {
        let ran = stage(&args, &environment, None);
        let (stdout, stderr) = text(&ran);
        assert_eq!(ran.status.code(), Some(1), "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(&expected), "{args:?}: expected {expected:?} in {stderr}");
        assert!(!output.exists() && temporaries_of(&output).is_empty(), "{args:?}: something was staged");
    }

    // A directory that exists is never replaced.
    std::fs::create_dir(&output).unwrap();
    std::fs::write(output.join("keep.txt"), "mine").unwrap();
    let ran = stage(&with_hlos(&[]), &[], None);
    let (_, stderr) = text(&ran);
    assert_eq!(ran.status.code(), Some(1));
    assert!(stderr.contains(&format!("--output_dir {} already exists", output.display())), "{stderr}");
    assert_eq!(common::files_below(&output), [PathBuf::from("keep.txt")]);
}
