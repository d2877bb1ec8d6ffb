//! The skel's output sequences from C, as a qaic-generated stub calls them: a short or null `last_error` buffer
//! answers success and the size it needed (tests/c/skel_short_buffers.c on the host skel), the whole answer being a
//! message record the stub renders; `describe` and
//! `profile` follow the same rule (the IDL's comments say so, and `dsp/src/testing` checks them on the Rust side).

mod common;

use std::process::Command;

#[test]
fn a_short_or_null_output_buffer_answers_success_and_the_size_needed() {
    let work = tempfile::tempdir().unwrap();
    let program = work.path().join("skel_short_buffers");
    let source = common::root().join("tests/c/skel_short_buffers.c");
    let compiled = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&program)
        .arg(&source)
        .arg("-ldl")
        .status()
        .expect("the C compiler (cc) runs");
    assert!(compiled.success(), "compiling {} failed", source.display());
    let output = Command::new(&program).arg(common::host_skel()).output().unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{printed}{}", String::from_utf8_lossy(&output.stderr));
    // The skel answers a message record (`lpai_direct::message`), which the stub renders; so does this test.
    let record: Vec<u8> = printed
        .lines()
        .find_map(|line| line.strip_prefix("whole: "))
        .and_then(|rest| rest.split_once("bytes:"))
        .map(|(_, bytes)| bytes.split_whitespace().map(|byte| u8::from_str_radix(byte, 16).unwrap()).collect())
        .unwrap_or_else(|| panic!("no whole answer: {printed}"));
    let words = lpai_direct::message::render(&record);
    assert_eq!(words.as_str(), "no loaded context has id 7", "{printed}");
    assert!(printed.contains("short: status 0, needed ") && printed.contains("null: status 0, needed "), "{printed}");
}
