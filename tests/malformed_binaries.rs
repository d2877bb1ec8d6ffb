//! Malformed context binaries against the real libQnnSystem and libQnnHtp: truncated at many points, bits flipped
//! in the header and the body, zero length, huge values written over header words, a valid binary of another
//! backend. A binary that cannot run (empty, cut short, another backend's) is refused; a flipped or overwritten one
//! ends in a clean run (many flips land in weights and still load) or is refused, in the seeded counts pinned below
//! for this libQnnHtp. Every refusal is one line naming the binary (and, for a flip in a tensor's shape or
//! quantization, the input or graph that no longer fits), and nothing is left open: the process's file descriptors
//! are back to their count after each case, and a good run still matches ONNX Runtime at the end. A binary that crashes libQnnSystem's reader is reported as
//! corrupt, with the signal, by lpai-net-run itself, before anything reaches the skel.

mod common;

use lpai_net_run::net_run;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A single flipped bit (byte 84, bit 0) that makes this libQnnSystem's binary-info reader crash with SIGSEGV.
const CRASHING_FLIP: (usize, u8) = (84, 0);

fn kws_binary() -> Vec<u8> {
    std::fs::read(common::fixture("kws_conv").join("kws_conv_qnn.bin")).unwrap()
}

fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Runs kws_conv's float list on `binary` (written to `work/NAME.bin`) through the local transport on libQnnHtp.
fn run(work: &Path, name: &str, binary: &[u8]) -> (PathBuf, Result<net_run::RunRecord, String>) {
    let path = work.join(format!("{name}.bin"));
    std::fs::write(&path, binary).unwrap();
    let list = common::absolute_input_list("kws_conv", "float", work);
    let output = work.join(format!("{name}-out"));
    let settings = common::settings(common::net_run_args(&path, &list, &output, false, &[]));
    (path, net_run::run(&settings).map_err(|error| format!("{error:#}")))
}

#[derive(Default, Debug, PartialEq, Eq)]
struct Outcomes {
    clean: usize,
    refused: usize,
    contained_crashes: usize,
}

/// What a case may end in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expected {
    /// It cannot run: refused.
    Refused,
    /// A run or a refusal, as the flip falls (counted, and the counts pinned).
    Either,
    /// libQnnSystem's reader crashes on it, contained in the reading child.
    Crash,
}

#[test]
fn malformed_binaries_end_in_a_clean_run_or_one_clear_error_and_leave_nothing_open() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let good = kws_binary();
    let mut cases: Vec<(String, Vec<u8>, Expected)> = vec![("zero length".into(), Vec::new(), Expected::Refused)];
    for cut in [1, 4, 8, 16, 32, 64, 100, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536] {
        cases.push((format!("truncated to {cut} bytes"), good[..cut].to_vec(), Expected::Refused));
    }
    for cut in [good.len() / 3, good.len() / 2, good.len() - 4096, good.len() - 64, good.len() - 1] {
        cases.push((format!("truncated to {cut} bytes"), good[..cut].to_vec(), Expected::Refused));
    }
    let mut random = fastrand::Rng::with_seed(11);
    for index in 0..40 {
        let mut flipped = good.clone();
        let span = if index % 2 == 0 { 2048 } else { good.len() };
        let flips = random.usize(1..=4);
        for _ in 0..flips {
            flipped[random.usize(..span)] ^= 1 << random.u8(0..8);
        }
        let place = if span == 2048 { "the header" } else { "anywhere" };
        cases.push((format!("{flips} bit(s) flipped in {place} (case {index})"), flipped, Expected::Either));
    }
    for index in 0..12 {
        let mut huge = good.clone();
        let at = random.usize(..512) & !3;
        let value: u32 = if index % 2 == 0 { u32::MAX } else { 0x7FFF_FFF0 };
        huge[at..at + 4].copy_from_slice(&value.to_le_bytes());
        cases.push((format!("{value:#x} written over the word at byte {at}"), huge, Expected::Either));
    }
    let mut crashing = good.clone();
    crashing[CRASHING_FLIP.0] ^= 1 << CRASHING_FLIP.1;
    cases.push(("the bit flip that crashes libQnnSystem".into(), crashing, Expected::Crash));
    let contract = std::fs::read(common::fixture("contract_single").join("contract_single.bin")).unwrap();
    cases.push(("a contract-model (LPAI) binary on libQnnHtp".into(), contract, Expected::Refused));

    let before = open_descriptors();
    let mut outcomes = Outcomes::default();
    for (index, (case, binary, expected)) in cases.iter().enumerate() {
        let (path, result) = run(work.path(), &format!("case{index}"), binary);
        match result {
            Ok(summary) => {
                assert_eq!(*expected, Expected::Either, "{case}: cannot run, yet it ran");
                assert_eq!(summary.times.dsp_execute_us.len(), 3, "{case}");
                outcomes.clean += 1;
            }
            Err(message) => {
                assert!(!message.contains('\n'), "{case}: one line, not: {message}");
                // Every refusal names the binary; a flip in a tensor's shape or quantization shows as inputs of the
                // wrong size or a tensor with no float conversion, named by the check that finds it as well.
                let path = path.display().to_string();
                assert!(message.contains(&path), "{case}: names the binary {path}: {message}");
                eprintln!("{case}: {}", message.replace(&path, "BIN"));
                if message.starts_with("libQnnSystem crashed reading") {
                    assert_eq!(*expected, Expected::Crash, "{case}: {message}");
                    assert!(message.ends_with("(signal 11): the binary is corrupt"), "{case}: {message}");
                    outcomes.contained_crashes += 1;
                } else {
                    assert_ne!(*expected, Expected::Crash, "{case}: the crash was not contained: {message}");
                    outcomes.refused += 1;
                }
            }
        }
        assert_eq!(open_descriptors(), before, "{case}: file descriptors left open");
    }
    eprintln!("malformed binaries: {} cases: {outcomes:?}", cases.len());
    // The seeded cases on onnxruntime-qnn 2.7.0's libQnnHtp and libQnnSystem (docs/src/design/hardening.md): 29 clean runs
    // (flips in weights), 47 refusals, the one crash contained.
    assert_eq!(cases.len(), 77);
    assert_eq!(outcomes, Outcomes { clean: 29, refused: 47, contained_crashes: 1 });

    // The HLOS side and the skel are unharmed: the good binary still gives ONNX Runtime's outputs.
    let (_, result) = run(work.path(), "good", &good);
    result.unwrap();
    let reference = common::fixture("kws_conv").join("reference/float");
    for file in common::result_files(&reference) {
        let ours = std::fs::read(work.path().join("good-out").join(&file)).unwrap();
        assert!(ours == std::fs::read(reference.join(&file)).unwrap(), "{}", file.display());
    }
}

#[test]
fn lpai_net_run_reports_a_binary_that_crashes_libqnnsystem_in_one_line_before_the_skel_sees_it() {
    let _guard = common::qnn_lock();
    let work = tempfile::tempdir().unwrap();
    let mut binary = kws_binary();
    binary[CRASHING_FLIP.0] ^= 1 << CRASHING_FLIP.1;
    let path = work.path().join("corrupt.bin");
    std::fs::write(&path, &binary).unwrap();
    let fixture = common::fixture("kws_conv");
    let qnn = common::qnn_lib_dir();
    let expected = format!(
        "lpai-net-run: error: libQnnSystem crashed reading context binary {} (signal 11): the binary is corrupt",
        path.display()
    );
    // With the record for the skel, and with the skel reading the metadata itself: checked here first either way.
    for extra in [None, Some(format!("--dsp_system_library={}", qnn.join("libQnnSystem.so").display()))] {
        let output = work.path().join("out");
        let outcome =
            Command::new(common::artifact("target/release/lpai-net-run", "cargo build --release -p lpai-net-run"))
                .current_dir(&fixture)
                .arg(format!("--backend={}", qnn.join("libQnnHtp.so").display()))
                .arg(format!("--retrieve_context={}", path.display()))
                .arg("--input_list=input_list_float.txt")
                .arg(format!("--output_dir={}", output.display()))
                .arg("--direct_mode")
                .args(extra)
                .output()
                .unwrap();
        assert_eq!(outcome.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&outcome.stderr);
        let own: Vec<&str> = stderr.lines().filter(|line| line.starts_with("lpai-net-run")).collect();
        assert_eq!(own, vec![expected.as_str()]);
        assert!(!output.exists(), "nothing was run, so nothing was written");
    }
    let inspected =
        Command::new(common::artifact("target/release/lpai-net-run", "cargo build --release -p lpai-net-run"))
            .arg("inspect")
            .arg(&path)
            .arg(format!("--system_library={}", qnn.join("libQnnSystem.so").display()))
            .output()
            .unwrap();
    assert_eq!(inspected.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&inspected.stderr).contains("libQnnSystem crashed reading context binary"));
}
