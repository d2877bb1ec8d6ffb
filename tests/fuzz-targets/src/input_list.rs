//! Target `input_list`: qnn-net-run input lists (`lpai_net_run::input_list::parse`, what `read` checks before
//! it looks at any file) against a graph whose inputs and outputs the first byte picks.
//!
//! Input: one byte (low two bits: 1 to 4 inputs; next two: 1 to 4 outputs), then the list's text.

use lpai_net_run::input_list::{self, ExpectedInput};
use std::path::Path;

/// Graph input names, some with the characters the list's syntax uses.
const INPUT_NAMES: [&str; 4] = ["mfcc", "in:=x", "frames", "a b"];
/// Graph output names.
const OUTPUT_NAMES: [&str; 4] = ["logits", "out#1", "vec_out", "#"];

/// The target.
pub fn run(data: &[u8]) {
    let Some((&shape, text)) = data.split_first() else { return };
    // Only UTF-8 reaches the parser: `read` reads the list with `read_to_string`.
    let Ok(text) = std::str::from_utf8(text) else { return };
    let inputs: Vec<ExpectedInput> = INPUT_NAMES
        .iter()
        .take(1 + usize::from(shape & 3))
        .map(|name| ExpectedInput {
            name: name.to_string(),
            bytes: 4,
            what: "1 float32 element".into(),
            other_kind: None,
        })
        .collect();
    let outputs: Vec<&str> = OUTPUT_NAMES.iter().copied().take(1 + usize::from((shape >> 2) & 3)).collect();
    let list = match input_list::parse(Path::new("fuzz/input_list.txt"), text, &inputs, &outputs) {
        Ok(list) => list,
        Err(error) => {
            let message = format!("{error:#}");
            assert!(message.contains("input list fuzz/input_list.txt"), "an error that names no list: {message}");
            return;
        }
    };
    assert!(!list.lines.is_empty(), "a list without inference lines was accepted");
    let text_lines = text.lines().count();
    let mut previous = 0;
    for line in &list.lines {
        assert!(line.number > previous && line.number <= text_lines, "line numbers out of order: {list:?}");
        previous = line.number;
        assert_eq!(line.files.len(), inputs.len(), "one file per graph input: {list:?}");
    }
    assert!(list.outputs.windows(2).all(|pair| pair[0] < pair[1]), "outputs not in graph order: {list:?}");
    assert!(list.outputs.iter().all(|&index| index < outputs.len()), "an output the graph lacks: {list:?}");
    assert!(!list.outputs.is_empty(), "no output selected: {list:?}");
}
