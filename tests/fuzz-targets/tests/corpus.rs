//! Replays every committed corpus file of the host-only fuzz targets (`fuzz/corpus/<target>/`) through the same
//! function the fuzzer runs: no input may panic. The skel entry and codec corpora are replayed by
//! lpai-direct-dsp's self-tests (on the host here and on Hexagon by the self-test executable).

use lpai_fuzz_targets::{Target, TARGETS};
use std::path::{Path, PathBuf};

fn corpus(name: &str) -> Vec<PathBuf> {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(name);
    let entries = std::fs::read_dir(&directory).unwrap_or_else(|error| panic!("{}: {error}", directory.display()));
    let mut files: Vec<PathBuf> = entries.map(|entry| entry.unwrap().path()).filter(|path| path.is_file()).collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no corpus file", directory.display());
    files
}

fn replay(name: &str) {
    let target: &Target = TARGETS.iter().find(|target| target.name == name).expect("a target of that name");
    for file in corpus(name) {
        let data = std::fs::read(&file).unwrap();
        let outcome = std::panic::catch_unwind(|| (target.run)(&data));
        assert!(outcome.is_ok(), "{} ({}): {} panicked", target.name, target.feeds, file.display());
    }
}

#[test]
fn every_target_has_a_test_here() {
    let names: Vec<&str> = TARGETS.iter().map(|target| target.name).collect();
    assert_eq!(names, ["input_list", "lpai_params", "config_json", "metadata_record", "binary_info", "elf_loader"]);
    assert!(!lpai_fuzz_targets::run("no_such_target", b""));
}

#[test]
fn input_list_corpus_replays() {
    replay("input_list");
}

#[test]
fn lpai_params_corpus_replays() {
    replay("lpai_params");
}

#[test]
fn config_json_corpus_replays() {
    replay("config_json");
}

#[test]
fn metadata_record_corpus_replays() {
    replay("metadata_record");
}

#[test]
fn binary_info_corpus_replays() {
    replay("binary_info");
}

#[test]
fn elf_loader_corpus_replays() {
    replay("elf_loader");
}
