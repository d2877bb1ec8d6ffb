//! The skel's two proofs: no panic is reachable (a skel built with one is refused, whatever the allowed-symbols list
//! says) and every entry point's worst-case stack depth stays within budget; and the audio module's STACK_SIZE is its
//! measured worst case.

mod common;

use std::path::Path;

const SKEL: &str = "target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so";
const PANIC_PROBE: &str = "target/hexagon-panic-probe/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so";
const STACK_VARIANT: &str = "target/hexagon-stack/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so";
const CAPI_MODULE: &str = "target/hexagon-capi/hexagon-unknown-linux-musl/release/liblpai_direct_capi.so";
const CAPI_STACK_VARIANT: &str = "target/hexagon-capi-stack/hexagon-unknown-linux-musl/release/liblpai_direct_capi.so";
const FIXUP: &str = "target/release/lpai-skel-fixup";
const BUILT_BY: &str = "scripts/build-hexagon.sh";
/// Bytes of stack each entry point may use, the skel's own frames only (foreign code comes on top).
const STACK_BUDGET: u64 = 8192;

/// Runs lpai-skel-fixup on a copy of `skel` with `symbols` as the allowed list: its status, its stderr, and
/// whether it left the copy as it was.
fn fix_up_a_copy(skel: &Path, symbols: &Path, directory: &Path) -> (bool, String, bool) {
    let copy = directory.join("skel.so");
    std::fs::copy(skel, &copy).unwrap();
    let fixup = common::artifact(FIXUP, BUILT_BY);
    let output = common::run(fixup.to_str().unwrap(), &[copy.to_str().unwrap(), symbols.to_str().unwrap()]);
    let unchanged = std::fs::read(&copy).unwrap() == std::fs::read(skel).unwrap();
    (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned(), unchanged)
}

#[test]
fn a_skel_with_a_reachable_panic_is_refused_even_when_the_list_allows_the_marker() {
    let directory = tempfile::tempdir().unwrap();
    let runtime_symbols = common::root().join("linker/dsp-runtime-symbols.txt");
    let probe = common::artifact(PANIC_PROBE, BUILT_BY);

    let (passed, errors, unchanged) = fix_up_a_copy(&probe, &runtime_symbols, directory.path());
    assert!(!passed, "the panic probe passed the post-link check: {errors}");
    assert!(errors.contains("it refers to lpai_direct_panic_is_reachable"), "{errors}");
    assert!(unchanged, "a refused skel must be left as it was");

    let allowing = directory.path().join("symbols-allowing-the-marker.txt");
    let text = std::fs::read_to_string(&runtime_symbols).unwrap();
    std::fs::write(&allowing, format!("{text}\nlpai_direct_panic_is_reachable\n")).unwrap();
    let (passed, errors, unchanged) = fix_up_a_copy(&probe, &allowing, directory.path());
    assert!(!passed, "listing the marker silenced the no-panic check: {errors}");
    assert!(errors.contains("lpai_direct_panic_is_reachable"), "{errors}");
    assert!(unchanged, "a refused skel must be left as it was");

    let (passed, errors, _) = fix_up_a_copy(&common::artifact(SKEL, BUILT_BY), &runtime_symbols, directory.path());
    assert!(passed, "the real skel is refused: {errors}");
}

fn stack_analysis() -> lpai_skel_fixup::stack::Analysis {
    let variant = common::artifact(STACK_VARIANT, BUILT_BY);
    lpai_skel_fixup::stack::analyse(&variant, &lpai_skel_fixup::stack::Options::default()).unwrap()
}

#[test]
fn skel_entry_points_stay_within_the_stack_budget() {
    let analysis = stack_analysis();
    assert!(analysis.recorded > 0, "no .stack_sizes records: {analysis:?}");
    let names: Vec<&str> = analysis.entry_points.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, lpai_skel_fixup::stack::ENTRY_POINTS);
    let report: String = analysis.entry_points.iter().map(|e| e.describe(STACK_BUDGET)).collect();
    for entry_point in &analysis.entry_points {
        assert!(entry_point.worst.bytes <= STACK_BUDGET, "{} is over the stack budget:\n{report}", entry_point.name);
    }
}

#[test]
fn the_stack_variants_are_the_shipped_code() {
    for (shipped_path, variant_path) in [(SKEL, STACK_VARIANT), (CAPI_MODULE, CAPI_STACK_VARIANT)] {
        let shipped = std::fs::read(common::artifact(shipped_path, BUILT_BY)).unwrap();
        let variant = std::fs::read(common::artifact(variant_path, BUILT_BY)).unwrap();
        let (shipped_bytes, variant_bytes, same) = lpai_skel_fixup::stack::compare_text(&shipped, &variant).unwrap();
        assert!(
            same,
            ".text of {variant_path} ({variant_bytes} bytes) differs from {shipped_path} ({shipped_bytes} bytes): \
             rerun {BUILT_BY}, which builds both from the same sources"
        );
    }
}

#[test]
fn the_audio_modules_stack_size_is_its_measured_worst_case_with_the_foreign_allowance() {
    use lpai_direct_skel::audio::module::{FOREIGN_STACK_BYTES, STACK_BYTES};
    let variant = common::artifact(CAPI_STACK_VARIANT, BUILT_BY);
    let options = lpai_skel_fixup::stack::Options {
        entry_points: lpai_skel_fixup::stack::CAPI_ENTRY_POINTS.map(String::from).to_vec(),
        ..Default::default()
    };
    let analysis = lpai_skel_fixup::stack::analyse(&variant, &options).unwrap();
    let need = |worst: &lpai_skel_fixup::stack::depth::Worst| {
        let foreign = worst.foreign_entered_at.map_or(0, |depth| depth + u64::from(FOREIGN_STACK_BYTES));
        worst.bytes.max(foreign)
    };
    let needed = analysis.entry_points.iter().map(|entry| need(&entry.worst)).max().unwrap();
    let report: String = analysis.entry_points.iter().map(|e| e.describe(u64::from(STACK_BYTES))).collect();
    let asked = u64::from(STACK_BYTES);
    assert!(needed <= asked, "STACK_SIZE {asked} is under the measured need of {needed} bytes:\n{report}");
    assert!(asked < needed + 2048, "STACK_SIZE {asked} is 2 KiB or more over the measured {needed} bytes:\n{report}");
}
