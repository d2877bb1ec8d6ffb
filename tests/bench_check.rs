//! The benchmark checker (`scripts/bench_figures.py --check`) on made-up inputs: the same figures pass; a figure
//! raised or lowered beyond the tolerance, a section missing from `size -A`, or a baseline measured under other
//! conditions (Hexagon version, callgrind backend) fails, naming what moved. A figure over its budget
//! (`tests/bench/budgets.json`'s shape, made-up budgets) fails whatever the baseline says, naming the artifact, the
//! figure, the budget and the artifact's ten largest symbols; one exactly at its budget passes. And the book's
//! tables of figures (`docs/src/design/benchmarks.md`, `docs/src/audio.md`) are what the checker prints from the
//! committed baseline and budgets.

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};

const SKEL_SECTIONS: &str = "liblpai_direct_skel.so  :\nsection size addr\n.rodata 15000 0\n.text 60000 0\n\
    .data.rel.ro 2900 0\n.data 24 0\n.bss 36 0\nTotal 80000\n";
const CAPI_SECTIONS: &str = "liblpai_direct_capi.so  :\nsection size addr\n.rodata 9000 0\n.text 50000 0\n";
const EMBED_SECTIONS: &str = "liblpai_direct_embed_check.so  :\nsection size addr\n.rodata 7000 0\n.text 30000 0\n";
/// Each artifact: its name in the budgets, its sections, its stack report's file and worst case.
const ARTIFACTS: [(&str, &str, &str, u64); 3] = [
    ("skel", SKEL_SECTIONS, "stack.txt", 4608),
    ("embed", EMBED_SECTIONS, "embed-stack.txt", 1024),
    ("capi", CAPI_SECTIONS, "capi-stack.txt", 1488),
];
/// The symbols of each made-up artifact, largest first: twelve of code and read-only data, then the largest of all
/// in `.bss` and one undefined (no size), which a budget of `.text` + `.rodata` does not count.
const SYMBOLS: [(u32, char, &str); 14] = [
    (0x5000, 'b', "arena_in_bss"),
    (0x2400, 't', "lpai_direct::decode::h0a1b"),
    (0x2000, 'T', "lpai_direct_skel_handle_invoke"),
    (0x1c00, 'r', "codec::PLANS"),
    (0x1800, 't', "core::fmt::write::h99"),
    (0x1400, 'R', "error_names"),
    (0x1000, 't', "memcpy"),
    (0x0c00, 't', "quantize::to_u8"),
    (0x0800, 't', "sha256::compress"),
    (0x0400, 'r', "job_layout"),
    (0x0200, 't', "tenth_largest"),
    (0x0100, 't', "eleventh_largest"),
    (0x0080, 't', "twelfth_largest"),
    (0, 'U', "HAP_debug_v2"),
];

/// `llvm-nm -S --size-sort`'s listing of SYMBOLS: smallest first, the undefined one without address or size.
fn symbols_listing() -> String {
    SYMBOLS
        .iter()
        .rev()
        .map(|&(size, kind, name)| match kind {
            'U' => format!("         {kind} {name}\n"),
            _ => format!("{:08x} {size:08x} {kind} {name}\n", 0x1000 + size),
        })
        .collect()
}

/// The lines an over-budget failure lists: the ten largest symbols of code and read-only data, largest first.
fn ten_largest() -> Vec<String> {
    let counted = SYMBOLS.iter().filter(|(_, kind, _)| "tTrR".contains(*kind)).take(10);
    counted.map(|&(size, kind, name)| format!("{}  {kind}  {name}", thousands(size as u64))).collect()
}

fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut shown = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            shown.push(',');
        }
        shown.push(digit);
    }
    shown
}

/// A bench directory with every input the checker reads, and the committed budgets file to start from.
fn bench_dir(directory: &Path, skel_sections: &str) {
    for (artifact, sections, stack_report, worst) in ARTIFACTS {
        let sections = if artifact == "skel" { skel_sections } else { sections };
        std::fs::write(directory.join(format!("{artifact}-sections.txt")), sections).unwrap();
        std::fs::write(directory.join(format!("{artifact}-symbols.txt")), symbols_listing()).unwrap();
        std::fs::write(directory.join(stack_report), format!("{artifact}_entry: worst case {worst} bytes\n")).unwrap();
    }
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bench/budgets.json");
    std::fs::copy(committed, directory.join("budgets.json")).unwrap();
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
        .args(["--bench-dir", &path(""), "--baseline", &path("baseline.json"), "--budgets", &path("budgets.json")])
        .output()
        .expect("python3 runs (scripts/setup.sh installs it)")
}

fn said(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A directory with a baseline of the made-up figures, then `change` applied to the baseline file; its budgets are
/// the committed file's, each set to its made-up figure exactly.
fn with_baseline(change: impl FnOnce(&mut Value)) -> tempfile::TempDir {
    let directory = tempfile::tempdir().unwrap();
    bench_dir(directory.path(), SKEL_SECTIONS);
    let written = checker(directory.path(), "81", "--update-baseline");
    assert!(written.status.success(), "{}", said(&written));
    let figures = read_json(&directory.path().join("figures.json"));
    change_budgets(directory.path(), |artifacts| {
        for (artifact, budgets) in artifacts.as_object_mut().unwrap() {
            for (figure, budget) in budgets.as_object_mut().unwrap() {
                let measured = &figures[format!("{artifact}_{figure}")];
                assert!(measured.is_u64(), "the made-up inputs give no {artifact}_{figure} for its budget");
                budget["budget"] = measured.clone();
            }
        }
    });
    let path = directory.path().join("baseline.json");
    let mut baseline = read_json(&path);
    change(&mut baseline);
    std::fs::write(&path, baseline.to_string()).unwrap();
    directory
}

/// `change` applied to the directory's budgets file's "artifacts" object.
fn change_budgets(directory: &Path, change: impl FnOnce(&mut Value)) {
    let path = directory.join("budgets.json");
    let mut budgets = read_json(&path);
    change(&mut budgets["artifacts"]);
    std::fs::write(&path, budgets.to_string()).unwrap();
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
fn every_figure_exactly_at_its_budget_passes() {
    let directory = with_baseline(|_| {});
    let checked = checker(directory.path(), "81", "--check");
    let message = said(&checked);
    assert!(checked.status.success(), "{message}");
    for figure in ["skel_text_rodata_bytes", "embed_text_rodata_bytes", "capi_stack_worst_bytes"] {
        let line = message.lines().find(|line| line.trim_start().starts_with(figure));
        assert!(line.is_some_and(|line| line.ends_with("within")), "{figure} is not within its budget:\n{message}");
    }
}

/// The made-up artifact `artifact` one byte over its `.text` + `.rodata` budget, with a baseline of those very
/// figures (the regression check passes): what the checker says.
fn one_byte_over_the_size_budget(artifact: &str, hex_ver: &str) -> (Output, String) {
    let directory = with_baseline(|_| {});
    let sections_path = directory.path().join(format!("{artifact}-sections.txt"));
    let sections = std::fs::read_to_string(&sections_path).unwrap();
    let text = sections.lines().find_map(|line| line.strip_prefix(".text ")).unwrap();
    let bytes: u64 = text.split_whitespace().next().unwrap().parse().unwrap();
    std::fs::write(&sections_path, sections.replace(&format!(".text {bytes} "), &format!(".text {} ", bytes + 1)))
        .unwrap();
    let rewritten = checker(directory.path(), "81", "--update-baseline");
    assert!(rewritten.status.success(), "{}", said(&rewritten));
    let checked = checker(directory.path(), hex_ver, "--check");
    let message = said(&checked);
    (checked, message)
}

#[test]
fn an_artifact_one_byte_over_its_budget_fails_naming_it_the_figure_the_budget_and_its_largest_symbols() {
    for (artifact, file, budget) in [
        ("skel", "liblpai_direct_skel.so", "75,000"),
        ("embed", "liblpai_direct_embed_check.so", "37,000"),
        ("capi", "liblpai_direct_capi.so", "59,000"),
    ] {
        let (checked, message) = one_byte_over_the_size_budget(artifact, "81");
        assert!(!checked.status.success(), "{message}");
        // The baseline holds the figures as they are: the budget alone fails the check.
        assert!(message.contains("every figure within 5% of the baseline"), "{message}");
        let over = format!(
            "bench: {artifact} ({file}) is over budget: {artifact}_text_rodata_bytes is {} bytes, its budget {budget} (",
            thousands(budget.replace(',', "").parse::<u64>().unwrap() + 1)
        );
        assert!(message.contains(&over), "no {over:?} in:\n{message}");
        assert!(message.contains("issue 32), 1 over."), "{message}");
        let listed: Vec<&str> = message.lines().skip_while(|line| !line.contains("10 largest symbols")).collect();
        let listed: Vec<&str> = listed.iter().skip(1).take(10).map(|line| line.trim()).collect();
        assert_eq!(listed, ten_largest(), "{message}");
        for left_out in ["eleventh_largest", "arena_in_bss", "HAP_debug_v2"] {
            assert!(!message.contains(left_out), "{left_out} is listed:\n{message}");
        }
        // Only the artifact over budget is named.
        let named: Vec<&str> = message.lines().filter(|line| line.contains("is over budget")).collect();
        assert_eq!(named.len(), 1, "{message}");
    }
}

#[test]
fn a_budget_is_held_even_when_the_baseline_is_not_comparable() {
    let (checked, message) = one_byte_over_the_size_budget("skel", "73");
    assert!(!checked.status.success(), "{message}");
    assert!(
        message.contains("bench: skel (liblpai_direct_skel.so) is over budget: skel_text_rodata_bytes"),
        "{message}"
    );
    assert!(message.contains("hex_ver 81, this is 73"), "{message}");
}

#[test]
fn a_stack_over_its_budget_fails_naming_the_stack_report() {
    let directory = with_baseline(|_| {});
    change_budgets(directory.path(), |artifacts| artifacts["embed"]["stack_worst_bytes"]["budget"] = json!(1023));
    let checked = checker(directory.path(), "81", "--check");
    let message = said(&checked);
    assert!(!checked.status.success(), "{message}");
    let over = "embed_stack_worst_bytes is 1,024 bytes, its budget 1,023 (";
    assert!(message.contains(over) && message.contains("1 over"), "{message}");
    assert!(message.contains("embed-stack.txt"), "{message}");
}

#[test]
fn one_more_line_budgets_any_measured_figure_and_a_budget_nothing_measures_fails() {
    // A figure the bench measures (skel_rodata_bytes, 15,000): one line, held like the others.
    let directory = with_baseline(|_| {});
    change_budgets(directory.path(), |artifacts| {
        artifacts["skel"]["rodata_bytes"] = json!({"budget": 14_999, "issue": 99});
    });
    let checked = checker(directory.path(), "81", "--check");
    let message = said(&checked);
    assert!(!checked.status.success(), "{message}");
    assert!(message.contains("skel_rodata_bytes is 15,000 bytes, its budget 14,999 ("), "{message}");
    assert!(message.contains("issue 99), 1 over."), "{message}");

    // The frame section, before anything measures it: refused, not passed.
    let directory = with_baseline(|_| {});
    change_budgets(directory.path(), |artifacts| {
        artifacts["capi"]["frame_section_bytes"] = json!({"budget": 2048, "issue": 32});
    });
    let checked = checker(directory.path(), "81", "--check");
    let message = said(&checked);
    assert!(!checked.status.success(), "{message}");
    assert!(message.contains("budgets capi_frame_section_bytes of capi at 2,048 bytes"), "{message}");
    assert!(message.contains("nothing measures capi_frame_section_bytes"), "{message}");
}

/// A change to a budgets file's "artifacts" object.
type BudgetsChange = fn(&mut Value);

#[test]
fn a_malformed_budgets_file_is_refused_naming_the_entry() {
    let cases: [(&str, BudgetsChange, &str); 3] = [
        (
            "a budget in words",
            |artifacts| artifacts["skel"]["text_rodata_bytes"]["budget"] = json!("64 KiB"),
            "skel text_rodata_bytes is",
        ),
        (
            "a budget without its issue",
            |artifacts| artifacts["capi"]["stack_worst_bytes"] = json!({"budget": 5712}),
            "capi stack_worst_bytes",
        ),
        (
            "an artifact the bench does not measure",
            |artifacts| artifacts["sensor"] = json!({}),
            "budgets 'sensor', which the bench",
        ),
    ];
    for (case, change, named) in cases {
        let directory = with_baseline(|_| {});
        change_budgets(directory.path(), change);
        let checked = checker(directory.path(), "81", "--check");
        let message = said(&checked);
        assert!(!checked.status.success() && message.contains(named), "{case}: {message}");
    }
    // The same figure twice: JSON would keep the second silently.
    let directory = with_baseline(|_| {});
    let path = directory.path().join("budgets.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let twice = text.replacen(
        "\"stack_worst_bytes\":",
        "\"text_rodata_bytes\":{\"budget\":1,\"issue\":1},\"stack_worst_bytes\":",
        1,
    );
    std::fs::write(&path, twice).unwrap();
    let checked = checker(directory.path(), "81", "--check");
    let message = said(&checked);
    assert!(!checked.status.success() && message.contains("'text_rodata_bytes' twice"), "{message}");
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

/// The block between `file`'s `bench-NAME` markers is what `--book-table NAME` prints from the committed baseline
/// and budgets.
fn assert_book_table_is_the_baseline(name: &str, file: &str) {
    let generated = bench_figures(&["--book-table", name]);
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    let (start, end) = (format!("<!-- bench-{name}:start -->\n"), format!("<!-- bench-{name}:end -->"));
    let from = text.find(&start).unwrap_or_else(|| panic!("{file} has no {} marker", start.trim())) + start.len();
    let to = from + text[from..].find(&end).unwrap_or_else(|| panic!("{file} has no {end} marker after its start"));
    assert!(
        text[from..to] == generated,
        "{file}: the {name} table between its markers is not tests/bench/baseline.json's and budgets.json's; \
         `python3 scripts/bench_figures.py --write-book-tables` rewrites it. It should be:\n{generated}"
    );
}

#[test]
fn the_book_figure_table_is_the_baseline() {
    assert_book_table_is_the_baseline("figures", "docs/src/design/benchmarks.md");
}

#[test]
fn the_book_figure_table_takes_its_budgets_from_the_budgets_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let committed = read_json(&root.join("tests/bench/budgets.json"));
    let table = bench_figures(&["--book-table", "figures"]);
    for (artifact, budgets) in committed["artifacts"].as_object().unwrap() {
        for (figure, budget) in budgets.as_object().unwrap() {
            let key = format!("(`{artifact}_{figure}`)");
            let cell = format!("budget ≤ {}, issue {}", thousands(budget["budget"].as_u64().unwrap()), budget["issue"]);
            let row = table.lines().find(|line| line.contains(&key));
            assert!(row.is_some_and(|row| row.contains(&cell)), "no row {key} with {cell:?}:\n{table}");
        }
    }
    // Another budgets file, another table: a budget moved in the file moves in the book.
    let directory = tempfile::tempdir().unwrap();
    std::fs::copy(root.join("tests/bench/budgets.json"), directory.path().join("budgets.json")).unwrap();
    change_budgets(directory.path(), |artifacts| {
        artifacts["skel"]["text_rodata_bytes"] = json!({"budget": 12_345, "issue": 99});
        artifacts["skel"]["frame_section_bytes"] = json!({"budget": 2048, "issue": 98});
    });
    let budgets = directory.path().join("budgets.json");
    let table = bench_figures(&["--budgets", budgets.to_str().unwrap(), "--book-table", "figures"]);
    for (key, cell) in [
        ("skel_text_rodata_bytes", "budget ≤ 12,345, issue 99"),
        ("skel_frame_section_bytes", "budget ≤ 2,048, issue 98"),
    ] {
        let row = table.lines().find(|line| line.contains(&format!("(`{key}`)")));
        assert!(row.is_some_and(|row| row.contains(cell)), "no row {key} with {cell:?}:\n{table}");
    }
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
