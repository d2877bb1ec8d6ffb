//! Malformed files on a run's path, after its up-front checks: an input file that shrinks, vanishes or grows while
//! the run goes on, an output directory that becomes unwritable, and a full disk (a file-size limit,
//! `RLIMIT_FSIZE`, and, where user namespaces allow it, a small tmpfs: where they do not, that test says "skipped:
//! needs unprivileged user namespaces", and so does the test command in CI's output, which also makes the test
//! fail rather than skip where its probe finds them). Each in the traditional mode and in direct
//! mode on the local transport (the host skel on the real libQnnHtp.so, kws_conv), and in direct mode on the
//! virtual aDSP (the Hexagon skel under the PD shell, on the Hexagon contract model, contract_single). And other
//! runs writing the same output directory at once: four runs of one list, three traditional and one direct, all
//! succeed and leave only whole files, each having written under temporary names of its own.
//!
//! What must hold every time: `lpai-net-run` ends with exit status 1 (never a signal) and one error line naming
//! the file at fault and why; no `.partial` file is left anywhere; every result file that exists is whole (the
//! bytes a clean run of the same list wrote for that inference); and the run's `lpai_net_run.json` records the
//! error, or, when the output directory itself can no longer be written, the error line says that the record could
//! not be written either.
//!
//! `lpai-net-run` runs as a child process, so that limits and the loss of the capabilities that would let root
//! write anywhere apply to it (and to the qemu-hexagon it starts) alone. A changing input is changed by this test
//! once the run has written `Result_1`, while the run still has hundreds of lines to go before the changed file's
//! line, the last; should a loaded machine let the run finish first, the case runs again with a longer list.

mod common;

use std::collections::BTreeMap;
use std::ffi::{c_int, c_ulong, OsString};
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// Lines of a list whose last line's file changes during the run; a run that finished before the change gets
/// [`RETRY_FACTOR`] times as many.
const LINES: usize = 150;
const RETRY_FACTOR: usize = 4;
/// The most lines a run here has.
const MOST_LINES: usize = LINES * RETRY_FACTOR;

// ---------------------------------------------------------------------------------------------------------------
// The child process: limits and capabilities, set between fork and exec.

/// `RLIMIT_FSIZE` (Linux).
const RLIMIT_FSIZE: c_int = 1;
/// `prctl` options (Linux): drop a capability from the bounding set; clear the ambient set.
const PR_CAPBSET_DROP: c_int = 24;
const PR_CAP_AMBIENT: c_int = 47;
const PR_CAP_AMBIENT_CLEAR_ALL: c_ulong = 4;
/// The capabilities that let root ignore file permissions: CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER.
const PERMISSION_OVERRIDES: [c_ulong; 3] = [1, 2, 3];
/// `_LINUX_CAPABILITY_VERSION_3`.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapabilityHeader {
    version: u32,
    pid: c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapabilityData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

extern "C" {
    fn setrlimit(resource: c_int, limit: *const [u64; 2]) -> c_int;
    fn prctl(option: c_int, ...) -> c_int;
    fn capget(header: *mut CapabilityHeader, data: *mut [CapabilityData; 2]) -> c_int;
    fn capset(header: *mut CapabilityHeader, data: *const [CapabilityData; 2]) -> c_int;
}

/// What the child process may not do.
#[derive(Clone, Copy, Default)]
struct Limits {
    /// `RLIMIT_FSIZE` in bytes: writing past it fails with EFBIG (lpai-net-run ignores SIGXFSZ).
    file_size: Option<u64>,
    /// File permissions apply even to root: the permission-override capabilities are dropped from the bounding,
    /// inheritable and ambient sets (so they stay dropped across exec); without privileges there are none to drop.
    permissions_apply: bool,
}

/// Applies `limits` in the child between fork and exec; only async-signal-safe calls.
fn restrict(limits: Limits) -> std::io::Result<()> {
    if let Some(bytes) = limits.file_size {
        // SAFETY: a valid rlimit pair ({cur, max}, rlim_t is 64-bit on the targets this runs on).
        if unsafe { setrlimit(RLIMIT_FSIZE, &[bytes, bytes]) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    if limits.permissions_apply {
        for capability in PERMISSION_OVERRIDES {
            // SAFETY: prctl with integer arguments; EPERM (no CAP_SETPCAP: an unprivileged process, which has
            // nothing to drop) is fine.
            unsafe { prctl(PR_CAPBSET_DROP, capability, 0 as c_ulong, 0 as c_ulong, 0 as c_ulong) };
        }
        // SAFETY: as above.
        unsafe { prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0 as c_ulong, 0 as c_ulong, 0 as c_ulong) };
        let mut header = CapabilityHeader { version: CAPABILITY_VERSION_3, pid: 0 };
        let mut data = [CapabilityData::default(); 2];
        // SAFETY: a version-3 header and room for its two data words.
        if unsafe { capget(&mut header, &mut data) } == 0 {
            let keep = !PERMISSION_OVERRIDES.iter().fold(0u32, |mask, capability| mask | 1 << capability);
            for word in data.iter_mut().take(1) {
                word.effective &= keep;
                word.permitted &= keep;
                word.inheritable &= keep;
            }
            // SAFETY: as for capget; only bits are cleared, which is always allowed.
            unsafe { capset(&mut header, &data) };
        }
    }
    Ok(())
}

/// How a child run ended.
struct Outcome {
    status: ExitStatus,
    stderr: String,
}

impl Outcome {
    /// The `lpai-net-run: error: ...` line.
    fn error_line(&self) -> &str {
        let line = self.stderr.lines().find(|line| line.starts_with("lpai-net-run: error: "));
        line.unwrap_or_else(|| panic!("no error line (status {}):\n{}", self.status, self.stderr))
    }
}

/// Starts `program` with `args` under `limits`; while it runs, calls `during` every millisecond until it answers
/// true (it acted) or the child ends; answers how the child ended and whether `during` acted while it ran.
fn run_child(program: &Path, args: &[OsString], limits: Limits, mut during: impl FnMut() -> bool) -> (Outcome, bool) {
    let mut command = Command::new(program);
    command.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: `restrict` makes only async-signal-safe calls (setrlimit, prctl, capget, capset).
    unsafe { command.pre_exec(move || restrict(limits)) };
    let mut child = command.spawn().unwrap_or_else(|error| panic!("cannot start {}: {error}", program.display()));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let mut acted = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if !acted && during() {
            acted = child.try_wait().unwrap().is_none();
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let _ = stdout.join();
    (Outcome { status, stderr: stderr.join().unwrap() }, acted)
}

// ---------------------------------------------------------------------------------------------------------------
// The three ways a run goes, and what a clean run of each writes.

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Setup {
    /// Local transport, one `execute` per line: the HLOS side reads inputs and writes results.
    LocalTraditional,
    /// Local transport, `--direct_mode`: the host skel reads inputs and writes results itself.
    LocalDirect,
    /// The virtual aDSP, `--direct_mode`: the Hexagon skel does, through the PD shell's `apps_std` files.
    VirtualAdspDirect,
}

const SETUPS: [Setup; 3] = [Setup::LocalTraditional, Setup::LocalDirect, Setup::VirtualAdspDirect];

impl Setup {
    fn label(self) -> &'static str {
        match self {
            Setup::LocalTraditional => "local traditional",
            Setup::LocalDirect => "local direct",
            Setup::VirtualAdspDirect => "virtual aDSP direct",
        }
    }

    fn direct(self) -> bool {
        self != Setup::LocalTraditional
    }

    fn fixture(self) -> &'static str {
        match self {
            Setup::VirtualAdspDirect => "contract_single",
            _ => "kws_conv",
        }
    }

    /// The result file each inference writes, and its bytes (float32 outputs).
    fn result(self) -> (&'static str, usize) {
        match self {
            Setup::VirtualAdspDirect => ("out.raw", 64),
            _ => ("logits.raw", 48),
        }
    }

    /// The fixture's float input files, one per line of its list.
    fn inputs(self) -> Vec<PathBuf> {
        let count = if self == Setup::VirtualAdspDirect { 4 } else { 3 };
        (0..count).map(|line| common::fixture(self.fixture()).join(format!("inputs/float/{line}_0.raw"))).collect()
    }

    /// lpai-net-run's arguments for a run of `list` into `output`.
    fn args(self, list: &Path, output: &Path) -> Vec<OsString> {
        let mut args: Vec<OsString> = match self {
            Setup::VirtualAdspDirect => {
                let virtual_adsp =
                    |name: &str| common::artifact(&format!("target/virtual-adsp/{name}"), "scripts/build-hexagon.sh");
                let system = common::artifact(
                    "target/release/libQnnSystemContract.so",
                    "cargo build --release -p lpai-contract-system",
                );
                vec![
                    "--transport=qemu".into(),
                    format!("--pd_shell={}", virtual_adsp("lpai-pd-shell").display()).into(),
                    format!("--skel={}", virtual_adsp("liblpai_direct_skel.so").display()).into(),
                    format!("--backend={}", virtual_adsp("libQnnLpaiContract.so").display()).into(),
                    format!("--system_library={}", system.display()).into(),
                    format!("--retrieve_context={}", common::fixture("contract_single/contract_single.bin").display())
                        .into(),
                ]
            }
            _ => vec![
                format!("--skel={}", common::host_skel().display()).into(),
                format!("--backend={}", common::qnn_lib_dir().join("libQnnHtp.so").display()).into(),
                format!("--retrieve_context={}", common::fixture("kws_conv/kws_conv_qnn.bin").display()).into(),
            ],
        };
        args.push(format!("--input_list={}", list.display()).into());
        args.push(format!("--output_dir={}", output.display()).into());
        if self.direct() {
            args.push("--direct_mode".into());
        }
        args
    }
}

fn net_run() -> PathBuf {
    common::artifact("target/release/lpai-net-run", "cargo build --release -p lpai-net-run")
}

/// A list of `lines` lines cycling through the setup's inputs; the last line names `last` instead when given (a
/// copy of the input that line would have had).
fn write_list(work: &Path, name: &str, setup: Setup, lines: usize, last: Option<&Path>) -> PathBuf {
    let inputs = setup.inputs();
    let text: String = (0..lines)
        .map(|line| match last {
            Some(file) if line == lines - 1 => format!("{}\n", file.display()),
            _ => format!("{}\n", inputs[line % inputs.len()].display()),
        })
        .collect();
    let list = work.join(name);
    std::fs::write(&list, text).unwrap();
    list
}

/// Result files (relative to their output directory) and their bytes.
type Files = BTreeMap<PathBuf, Vec<u8>>;

/// The result files of a clean run of a list of `lines` lines (no last-line change), per setup: what every result
/// file of a run of that length must equal. Made once per setup and length, by whichever test asks first.
fn clean_results(setup: Setup, lines: usize) -> Files {
    static CLEAN: Mutex<BTreeMap<(Setup, usize), Files>> = Mutex::new(BTreeMap::new());
    let mut clean = CLEAN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    clean
        .entry((setup, lines))
        .or_insert_with(|| {
            let work = tempfile::tempdir().unwrap();
            let list = write_list(work.path(), "clean.txt", setup, lines, None);
            let output = work.path().join("clean");
            let (outcome, _) = run_child(&net_run(), &setup.args(&list, &output), Limits::default(), || false);
            assert!(outcome.status.success(), "{}: the clean run failed:\n{}", setup.label(), outcome.stderr);
            let files = common::result_files(&output);
            assert_eq!(files.len(), lines, "{}", setup.label());
            files.into_iter().map(|file| (file.clone(), std::fs::read(output.join(file)).unwrap())).collect()
        })
        .clone()
}

// ---------------------------------------------------------------------------------------------------------------
// What every failed run must leave.

/// Where the record stands after a failed run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Record {
    /// `lpai_net_run.json` holds the error.
    Holds,
    /// The output directory cannot take it: the error line says so.
    Unwritable,
}

/// Checks a failed run: exit status 1 with an error line holding every fragment (compared ignoring case), no
/// `.partial` file, every result file whole, and the record as `record` says. Answers the result files there are.
fn check_failed_run(
    setup: Setup,
    case: &str,
    outcome: &Outcome,
    output: &Path,
    lines: usize,
    fragments: &[String],
    record: Record,
) -> usize {
    let who = format!("{} / {case}", setup.label());
    assert_eq!(
        outcome.status.code(),
        Some(1),
        "{who}: the run must fail with status 1, not succeed or die:\n{}",
        outcome.stderr
    );
    let line = outcome.error_line();
    for fragment in fragments {
        assert!(
            line.to_lowercase().contains(&fragment.to_lowercase()),
            "{who}: the error line lacks {fragment:?}: {line}"
        );
    }
    let files = if output.exists() { common::files_below(output) } else { Vec::new() };
    // A direct-mode job's record file stays only where the output directory no longer lets it go, and the line says
    // so.
    let named = |file: &PathBuf| line.contains(&format!("{} could not be removed", output.join(file).display()));
    let partial: Vec<_> =
        files.iter().filter(|file| file.to_string_lossy().contains(".partial") && !named(file)).collect();
    assert!(partial.is_empty(), "{who}: half-written files left: {partial:?}");
    let clean = clean_results(setup, lines);
    let results = common::result_files(output);
    for file in &results {
        let expected = clean.get(file).unwrap_or_else(|| panic!("{who}: {} is not a result file", file.display()));
        let bytes = std::fs::read(output.join(file)).unwrap();
        assert!(bytes == *expected, "{who}: {} is not whole ({} bytes)", file.display(), bytes.len());
    }
    let record_file = output.join("lpai_net_run.json");
    match record {
        Record::Holds => {
            let text = std::fs::read_to_string(&record_file)
                .unwrap_or_else(|error| panic!("{who}: no record {}: {error}", record_file.display()));
            let recorded: serde_json::Value = serde_json::from_str(&text).unwrap();
            let error = recorded["error"].as_str().unwrap_or_else(|| panic!("{who}: the record has no error: {text}"));
            assert!(line.ends_with(error), "{who}: the record's error {error:?} is not the error line {line:?}");
            assert_eq!(recorded["mode"], if setup.direct() { "direct" } else { "traditional" }, "{who}");
        }
        Record::Unwritable => {
            assert!(line.contains("the run's record could not be written either"), "{who}: {line}");
            assert!(!record_file.exists(), "{who}: a record was written after all");
        }
    }
    results.len()
}

/// A run of a long list whose last line's file (a copy of the input that line would have named) `act` changes once
/// `Result_1` exists; answers the outcome, its output directory, the changed file and the lines the list had. Runs
/// again with a longer list when the run read the last line before the change.
fn run_changing(
    setup: Setup,
    work: &Path,
    case: &str,
    act: &dyn Fn(&Path, &Path),
) -> (Outcome, PathBuf, PathBuf, usize) {
    let inputs = setup.inputs();
    let mut lines = LINES;
    loop {
        let victim = work.join(format!("{case}-{lines}.raw"));
        std::fs::copy(&inputs[(lines - 1) % inputs.len()], &victim).unwrap();
        let list = write_list(work, &format!("{case}-{lines}.txt"), setup, lines, Some(&victim));
        let output = work.join(format!("{case}-{lines}-out"));
        let trigger = output.join("Result_1");
        let limits = Limits { permissions_apply: true, ..Limits::default() };
        let (outcome, acted) = run_child(&net_run(), &setup.args(&list, &output), limits, || {
            let ready = trigger.exists();
            if ready {
                act(&victim, &output);
            }
            ready
        });
        let who = format!("{} / {case}", setup.label());
        if !acted {
            assert!(outcome.status.success(), "{who}: the run failed before the change:\n{}", outcome.stderr);
        }
        if !acted || outcome.status.success() {
            assert!(lines < MOST_LINES, "{who}: the run read its last line before the change, {lines} lines long");
            lines *= RETRY_FACTOR;
            continue;
        }
        return (outcome, output, victim, lines);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The cases.

#[test]
fn an_input_file_that_shrinks_vanishes_or_grows_during_a_run_stops_it_naming_the_file() {
    let work = tempfile::tempdir().unwrap();
    let mut cases = 0;
    for setup in SETUPS {
        let inputs = setup.inputs();
        for (change, act) in [
            (
                "shrinks",
                &(|victim: &Path, _: &Path| {
                    std::fs::OpenOptions::new().write(true).open(victim).unwrap().set_len(7).unwrap()
                }) as &dyn Fn(&Path, &Path),
            ),
            ("vanishes", &|victim: &Path, _: &Path| std::fs::remove_file(victim).unwrap()),
            ("grows", &|victim: &Path, _: &Path| {
                let file = std::fs::OpenOptions::new().write(true).open(victim).unwrap();
                file.set_len(file.metadata().unwrap().len() + 5).unwrap();
            }),
        ] {
            let case = format!("input-{change}-{setup:?}");
            let size = std::fs::metadata(&inputs[0]).unwrap().len();
            let (outcome, output, victim, lines) = run_changing(setup, work.path(), &case, act);
            let why = match (change, setup.direct()) {
                ("shrinks", false) => format!("now has 7 bytes, expected {size}"),
                ("grows", false) => format!("now has {} bytes, expected {size}", size + 5),
                ("vanishes", false) => "no such file".to_string(),
                ("shrinks", true) => format!("holds 7 bytes, the tensor takes {size}"),
                ("grows", true) => format!("holds {} bytes, the tensor takes {size}", size + 5),
                _ => "not found".to_string(),
            };
            let written = check_failed_run(
                setup,
                change,
                &outcome,
                &output,
                lines,
                &[victim.display().to_string(), why],
                Record::Holds,
            );
            assert_eq!(written, lines - 1, "{}: every line before the changed one wrote its result", setup.label());
            assert!(
                !output.join(format!("Result_{}", lines - 1)).exists(),
                "{}: the failed inference's directory",
                setup.label()
            );
            cases += 1;
        }
    }
    println!("malformed files: {cases} changing-input cases");
}

#[test]
fn an_output_directory_that_becomes_unwritable_stops_the_run_naming_the_directory() {
    let work = tempfile::tempdir().unwrap();
    // Files keep their permissions for this process; the runs lose what would let root ignore them. Check first
    // that a child so restricted is refused by a read-only directory, or the cases below would prove nothing.
    let probe = work.path().join("probe");
    std::fs::create_dir(&probe).unwrap();
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o555)).unwrap();
    let touch = [OsString::from(probe.join("file"))];
    let (refused, _) =
        run_child(Path::new("touch"), &touch, Limits { permissions_apply: true, ..Limits::default() }, || false);
    assert!(
        !refused.status.success(),
        "a child without the permission-override capabilities wrote into a 0555 directory"
    );
    for setup in SETUPS {
        let case = format!("unwritable-{setup:?}");
        let read_only = |_: &Path, output: &Path| {
            std::fs::set_permissions(output, std::fs::Permissions::from_mode(0o555)).unwrap();
        };
        let (outcome, output, _, lines) = run_changing(setup, work.path(), &case, &read_only);
        std::fs::set_permissions(&output, std::fs::Permissions::from_mode(0o755)).unwrap();
        let fragments = [format!("{}/Result_", output.display()), "permission denied".to_string()];
        let written = check_failed_run(
            setup,
            "unwritable output directory",
            &outcome,
            &output,
            lines,
            &fragments,
            Record::Unwritable,
        );
        assert!(written >= 2, "{}: the results before the change stay", setup.label());
    }
}

/// Whether this machine lets an unprivileged process mount a tmpfs in a user namespace of its own.
fn user_namespaces() -> bool {
    Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Runs `setup` on a list of `lines` lines into `<mount>/out`, with a tmpfs of `bytes` mounted at `mount` in a
/// mount namespace of the run's own; answers the outcome and the files the run left there, with their sizes (the
/// tmpfs goes with the namespace).
fn run_on_a_small_tmpfs(
    setup: Setup,
    work: &Path,
    bytes: usize,
    lines: usize,
) -> (Outcome, PathBuf, BTreeMap<PathBuf, u64>) {
    let mount = work.join(format!("tmpfs-{setup:?}"));
    std::fs::create_dir(&mount).unwrap();
    let list = write_list(work, &format!("tmpfs-{setup:?}.txt"), setup, lines, None);
    let output = mount.join("out");
    // sh -c SCRIPT OUTPUT BYTES MOUNT lpai-net-run ARGS...: mount, run, list what the run left, pass its status on.
    let script = "mount -t tmpfs -o size=\"$1\" lpai-full \"$2\" || exit 97; shift 2; \"$@\"; status=$?; \
                  echo '--- files' >&2; find \"$0\" -type f -printf '%s %p\\n' >&2; exit $status";
    let mut args: Vec<OsString> =
        ["--user", "--map-root-user", "--mount", "sh", "-c", script].map(OsString::from).to_vec();
    args.extend([
        output.clone().into_os_string(),
        bytes.to_string().into(),
        mount.clone().into_os_string(),
        net_run().into_os_string(),
    ]);
    args.extend(setup.args(&list, &output));
    let (outcome, _) = run_child(Path::new("unshare"), &args, Limits::default(), || false);
    assert_ne!(outcome.status.code(), Some(97), "mounting the tmpfs failed:\n{}", outcome.stderr);
    let listing = outcome.stderr.split("--- files\n").nth(1).unwrap_or("");
    let files = listing
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(size, path)| (Path::new(path).strip_prefix(&output).unwrap().to_path_buf(), size.parse().unwrap()))
        .collect();
    (outcome, output, files)
}

#[test]
fn a_full_disk_stops_the_run_naming_the_file_and_leaves_nothing_half_written() {
    let work = tempfile::tempdir().unwrap();
    let limited = |bytes| Limits { file_size: Some(bytes), ..Limits::default() };
    let mut cases = 0;
    for setup in SETUPS {
        let (result_name, result_bytes) = setup.result();
        // A limit below one result file: the first result cannot be written, nor can the record.
        let list = write_list(work.path(), &format!("full-{setup:?}.txt"), setup, 3, None);
        let output = work.path().join(format!("full-{setup:?}"));
        let (outcome, _) = run_child(&net_run(), &setup.args(&list, &output), limited(16), || false);
        let fragments = [format!("{}/Result_0/{result_name}", output.display()), "file too large".to_string()];
        let written =
            check_failed_run(setup, "file-size limit 16 bytes", &outcome, &output, 3, &fragments, Record::Unwritable);
        assert_eq!(written, 0, "{}", setup.label());
        cases += 1;

        // A limit that takes every result but not the direct-mode job's record file (12 bytes per inference, each
        // appended once the inference's results are whole): the ninth inference's record does not fit.
        if setup.direct() {
            let lines = 30;
            let list = write_list(work.path(), &format!("times-{setup:?}.txt"), setup, lines, None);
            let output = work.path().join(format!("times-{setup:?}"));
            let (outcome, _) = run_child(&net_run(), &setup.args(&list, &output), limited(100), || false);
            assert!(result_bytes <= 100 && 8 * 12 <= 100 && 9 * 12 > 100);
            let fragments = [
                "inference 9: ".to_string(),
                format!("{}/lpai_dsp_job.bin.", output.display()),
                "file too large".to_string(),
            ];
            let written = check_failed_run(
                setup,
                "file-size limit 100 bytes",
                &outcome,
                &output,
                lines,
                &fragments,
                Record::Unwritable,
            );
            assert_eq!(written, 9, "{}: the results of the first nine inferences are written", setup.label());
            cases += 1;
        }
    }
    // The traditional run writes every result, then its record does not fit: the run still fails, naming it.
    let setup = Setup::LocalTraditional;
    let list = write_list(work.path(), "record.txt", setup, 3, None);
    let output = work.path().join("record");
    let (outcome, _) = run_child(&net_run(), &setup.args(&list, &output), limited(100), || false);
    assert_eq!(outcome.status.code(), Some(1), "{}", outcome.stderr);
    let line = outcome.error_line();
    assert!(line.contains(&format!("cannot write {}/lpai_net_run.json: File too large", output.display())), "{line}");
    assert_eq!(common::result_files(&output).len(), 3);
    assert!(!common::files_below(&output).iter().any(|file| file.to_string_lossy().contains(".partial")));
    cases += 1;
    println!("malformed files: {cases} full-disk cases");
}

/// Set by the test command where its probe found unprivileged user namespaces: the full-tmpfs cases must run.
const REQUIRE_NAMESPACES: &str = "LPAI_REQUIRE_USER_NAMESPACES";

#[test]
fn a_full_tmpfs_stops_the_run_naming_the_file_and_leaves_nothing_half_written() {
    // A real full disk: a 16 KiB tmpfs holds four result files (a page each), the fifth does not fit.
    if !user_namespaces() {
        assert!(
            std::env::var_os(REQUIRE_NAMESPACES).is_none(),
            "{REQUIRE_NAMESPACES} is set, but this process cannot mount a tmpfs in a user namespace of its own"
        );
        // scripts/test.sh says so in CI's output ("skipped: needs unprivileged user namespaces").
        eprintln!("skipped: needs unprivileged user namespaces (unshare --user --mount): the full-tmpfs cases");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let mut cases = 0;
    {
        for setup in SETUPS {
            let (result_name, result_bytes) = setup.result();
            let (outcome, output, files) = run_on_a_small_tmpfs(setup, work.path(), 16 << 10, 20);
            let who = format!("{} / full tmpfs", setup.label());
            assert_eq!(outcome.status.code(), Some(1), "{who}:\n{}", outcome.stderr);
            let line = outcome.error_line().to_lowercase();
            let named = format!("{}/result_", output.display()).to_lowercase();
            assert!(line.contains(&named) && line.contains(&format!("/{result_name}")), "{who}: {line}");
            assert!(line.contains("no space left on device"), "{who}: {line}");
            // A direct-mode job's record file held a page, which the stub frees after the job: the run's record
            // fits then. In traditional mode nothing frees one.
            let unrecorded = line.contains("the run's record could not be written either");
            assert_eq!(unrecorded, !setup.direct(), "{who}: {line}");
            assert_eq!(files.contains_key(Path::new("lpai_net_run.json")), setup.direct(), "{who}: {files:?}");
            assert!(!files.keys().any(|file| file.to_string_lossy().contains(".partial")), "{who}: {files:?}");
            let results: Vec<_> =
                files.iter().filter(|(file, _)| file.to_string_lossy().starts_with("Result_")).collect();
            assert!(!results.is_empty() && results.len() < 20, "{who}: {files:?}");
            for (file, size) in &results {
                assert_eq!(**size, result_bytes as u64, "{who}: {} is not whole", file.display());
            }
            cases += 1;
        }
    }
    assert_eq!(cases, SETUPS.len());
    println!("malformed files: {cases} full-tmpfs cases");
}

#[test]
fn runs_writing_one_output_directory_at_once_leave_only_whole_files() {
    // Four runs of one list into one output directory at once: three traditional (the HLOS side writes each result)
    // and one direct (the host skel writes them), each with temporary names of its own. Every run succeeds, every
    // result file and times file is whole, and no temporary file is left. (With one temporary name per file, as
    // before, runs writing one result at once wrote into one temporary file: nearly every such run failed.)
    let work = tempfile::tempdir().unwrap();
    let lines = 300;
    let setups = [Setup::LocalTraditional, Setup::LocalTraditional, Setup::LocalTraditional, Setup::LocalDirect];
    let list = write_list(work.path(), "shared.txt", Setup::LocalTraditional, lines, None);
    let output = work.path().join("shared");
    let clean = clean_results(Setup::LocalTraditional, lines);
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let runs: Vec<_> = setups
            .iter()
            .map(|setup| {
                let args = setup.args(&list, &output);
                scope.spawn(move || run_child(&net_run(), &args, Limits::default(), || false).0)
            })
            .collect();
        runs.into_iter().map(|run| run.join().unwrap()).collect()
    });
    for (setup, outcome) in setups.iter().zip(&outcomes) {
        assert!(outcome.status.success(), "{}: the run failed:\n{}", setup.label(), outcome.stderr);
    }
    let files = common::files_below(&output);
    let temporary: Vec<_> = files.iter().filter(|file| file.to_string_lossy().contains(".partial")).collect();
    assert!(temporary.is_empty(), "temporary files left: {temporary:?}");
    assert_eq!(common::result_files(&output), clean.keys().cloned().collect::<Vec<_>>());
    for (file, expected) in &clean {
        assert!(std::fs::read(output.join(file)).unwrap() == *expected, "{} is not whole", file.display());
    }
    assert_eq!(std::fs::read(output.join("lpai_dsp_execute_us.bin")).unwrap().len(), 4 * lines);
    assert_eq!(std::fs::read(output.join("lpai_dsp_spans_us.bin")).unwrap().len(), 8 * lines);
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(output.join("lpai_net_run.json")).unwrap()).unwrap();
    assert_eq!(record["inferences"], lines);
}
