//! The benchmark checker (`scripts/bench_figures.py --check`) on made-up inputs: the same figures pass; a figure
//! raised or lowered beyond the tolerance, a section missing from `size -A`, or a baseline measured under other
//! conditions (Hexagon version, callgrind backend) fails, naming what moved. And the book's tables of figures
//! (`docs/src/design/benchmarks.md`, `docs/src/audio.md`) are what the checker prints from the committed baseline.

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};

const SKEL_SECTIONS: &str = "liblpai_direct_skel.so  :\nsection size addr\n.rodata 15000 0\n.text 60000 0\n\
    .data.rel.ro 2900 0\n.data 24 0\n.bss 36 0\nTotal 80000\n";
const CAPI_SECTIONS: &str = "liblpai_direct_capi.so  :\nsection size addr\n.rodata 9000 0\n.text 50000 0\n";

/// A bench directory with every input the checker reads, and a baseline made from it by `--update-baseline`.
fn bench_dir(directory: &Path, skel_sections: &str) {
    std::fs::write(directory.join("skel-sections.txt"), skel_sections).unwrap();
    std::fs::write(directory.join("capi-sections.txt"), CAPI_SECTIONS).unwrap();
    std::fs::write(directory.join("stack.txt"), "lpai_direct_skel_handle_invoke: worst case 4608 bytes\n").unwrap();
    std::fs::write(directory.join("capi-stack.txt"), "lpai_direct_capi::process: worst case 1488 bytes\n").unwrap();
    let packets = json!({
        "packets_trivial_call": 291, "packets_per_inference_native": 1028, "packets_per_inference_float_16": 1369,
        "packets_per_element_quantize": 7.29, "packets_per_element_dequantize": 7.01,
        "packets_per_frame_embedded": 48, "packets_audio_frame_480": 116,
        "packets_audio_frame_480_with_inference_480": 11003, "packets_audio_frame_480_with_inference_16": 946,
        "arena_overhead_bytes": 584,
    });
    std::fs::write(directory.join("packets.json"), packets.to_string()).unwrap();
    let callgrind = json!({
        "host_instructions_per_inference_traditional": 26558.7,
        "host_instructions_per_inference_direct": 26307.3,
        "backend": "libQnnHtp.so",
    });
    std::fs::write(directory.join("callgrind.json"), callgrind.to_string()).unwrap();
    std::fs::write(directory.join("skel.so"), [0u8; 16]).unwrap();
}

fn checker(directory: &Path, hex_ver: &str, mode: &str) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = |name: &str| directory.join(name).to_str().unwrap().to_string();
    Command::new("python3")
        .arg(root.join("scripts/bench_figures.py"))
        .args(["--skel", &path("skel.so"), "--hex-ver", hex_ver, mode])
        .args(["--bench-dir", &path(""), "--baseline", &path("baseline.json")])
        .output()
        .expect("python3 runs (scripts/setup.sh installs it)")
}

fn said(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

/// A directory with a baseline of the made-up figures, then `change` applied to the baseline file.
fn with_baseline(change: impl FnOnce(&mut Value)) -> tempfile::TempDir {
    let directory = tempfile::tempdir().unwrap();
    bench_dir(directory.path(), SKEL_SECTIONS);
    let written = checker(directory.path(), "81", "--update-baseline");
    assert!(written.status.success(), "{}", said(&written));
    let path = directory.path().join("baseline.json");
    let mut baseline: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    change(&mut baseline);
    std::fs::write(&path, baseline.to_string()).unwrap();
    directory
}

#[test]
fn the_same_figures_pass_and_the_baseline_records_its_conditions() {
    let directory = with_baseline(|baseline| {
        assert_eq!(baseline["hex_ver"], 81);
        assert_eq!(baseline["host_instructions_backend"], "libQnnHtp.so");
        assert_eq!(baseline["figures"]["skel_text_bytes"], 60000);
    });
    let checked = checker(directory.path(), "81", "--check");
    assert!(checked.status.success(), "{}", said(&checked));
    assert!(said(&checked).contains("every figure within 5% of the baseline"), "{}", said(&checked));
}

#[test]
fn a_figure_beyond_the_tolerance_either_way_fails_the_check() {
    // The baseline 6% below the measured figure: the figure grew. 6% above: it dropped.
    for (factor, verdict) in [(0.94, "grew"), (1.06, "dropped")] {
        let directory = with_baseline(|baseline| {
            let stack = &mut baseline["figures"]["skel_stack_worst_bytes"];
            *stack = json!((stack.as_f64().unwrap() * factor).round());
        });
        let checked = checker(directory.path(), "81", "--check");
        let message = said(&checked);
        assert!(!checked.status.success(), "{message}");
        assert!(message.contains("skel_stack_worst_bytes: ") && message.contains(verdict), "{message}");
    }
}

#[test]
fn a_packet_count_that_collapses_to_zero_fails_the_check() {
    let directory = with_baseline(|_| {});
    let packets = directory.path().join("packets.json");
    let mut figures: Value = serde_json::from_str(&std::fs::read_to_string(&packets).unwrap()).unwrap();
    figures["packets_per_frame_embedded"] = json!(0);
    std::fs::write(&packets, figures.to_string()).unwrap();
    let checked = checker(directory.path(), "81", "--check");
    assert!(
        !checked.status.success() && said(&checked).contains("packets_per_frame_embedded: 48 -> 0"),
        "{}",
        said(&checked)
    );
}

#[test]
fn a_section_missing_from_size_is_an_error_not_a_zero() {
    let directory = with_baseline(|_| {});
    let without_bss = SKEL_SECTIONS.replace(".bss 36 0\n", "");
    std::fs::write(directory.path().join("skel-sections.txt"), without_bss).unwrap();
    let checked = checker(directory.path(), "81", "--check");
    assert!(!checked.status.success(), "{}", said(&checked));
    assert!(said(&checked).contains("skel-sections.txt has no .bss section"), "{}", said(&checked));
}

#[test]
fn a_baseline_of_another_hexagon_version_or_backend_is_not_compared() {
    let directory = with_baseline(|_| {});
    let checked = checker(directory.path(), "73", "--check");
    assert!(!checked.status.success() && said(&checked).contains("hex_ver 81, this is 73"), "{}", said(&checked));

    let directory = with_baseline(|baseline| baseline["host_instructions_backend"] = json!("libQnnLpaiContract.so"));
    let checked = checker(directory.path(), "81", "--check");
    let message = said(&checked);
    assert!(!checked.status.success(), "{message}");
    assert!(message.contains("host_instructions_backend 'libQnnLpaiContract.so', this is 'libQnnHtp.so'"), "{message}");
}

/// What `bench_figures.py ARGUMENTS` prints, failing the test when it fails.
fn bench_figures(arguments: &[&str]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("python3")
        .arg(root.join("scripts/bench_figures.py"))
        .args(arguments)
        .output()
        .expect("python3 runs (scripts/setup.sh installs it)");
    assert!(output.status.success(), "bench_figures.py {arguments:?}: {}", said(&output));
    String::from_utf8(output.stdout).unwrap()
}

/// The block between `file`'s `bench-NAME` markers is what `--book-table NAME` prints from the committed baseline.
fn assert_book_table_is_the_baseline(name: &str, file: &str) {
    let generated = bench_figures(&["--book-table", name]);
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    let (start, end) = (format!("<!-- bench-{name}:start -->\n"), format!("<!-- bench-{name}:end -->"));
    let from = text.find(&start).unwrap_or_else(|| panic!("{file} has no {} marker", start.trim())) + start.len();
    let to = from + text[from..].find(&end).unwrap_or_else(|| panic!("{file} has no {end} marker after its start"));
    assert!(
        text[from..to] == generated,
        "{file}: the {name} table between its markers is not tests/bench/baseline.json's; \
         `python3 scripts/bench_figures.py --write-book-tables` rewrites it. It should be:\n{generated}"
    );
}

#[test]
fn the_book_figure_table_is_the_baseline() {
    assert_book_table_is_the_baseline("figures", "docs/src/design/benchmarks.md");
}

#[test]
fn the_audio_chapter_frame_costs_are_the_baseline() {
    assert_book_table_is_the_baseline("audio-frames", "docs/src/audio.md");
}

#[test]
fn the_audio_frame_costs_are_worked_out_as_the_packet_bench_works_them_out() {
    // 116 packets without an inference, 11,003 and 946 with one on 480 and 16 samples: (11,003 - 946) / (3 x 464)
    // = 7.22 per element, 946 - 116 - 48 x 7.2249 = 483 per inference, 11,003 packets 100 times a second.
    let directory = with_baseline(|_| {});
    let baseline = directory.path().join("baseline.json");
    let table = bench_figures(&["--baseline", baseline.to_str().unwrap(), "--book-table", "audio-frames"]);
    let prose = table.split_whitespace().collect::<Vec<_>>().join(" ");
    let figures =
        ["| 11,003 |", "483 packets per inference plus 7.22 per element", "1,100,300 packets a second, 1.10 MPPS"];
    for figure in figures {
        assert!(prose.contains(figure), "no {figure:?} in the audio-frames table:\n{table}");
    }
}
