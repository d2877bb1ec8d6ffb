//! qnn-net-run input lists: one inference a line, entries `name:=path` or bare paths in graph input order.
//!
//! When the first non-blank line starts with `#`, it is qnn-net-run's output-names line: the space-separated
//! output tensors to write. Blank lines and later `#` lines are skipped. Relative paths are taken from the
//! current directory, as qnn-net-run does.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// One graph input as the list must feed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedInput {
    /// The tensor's name in the binary.
    pub name: String,
    /// Bytes each file must hold.
    pub bytes: usize,
    /// How the bytes are counted, for messages ("490 float32 elements").
    pub what: String,
    /// Bytes a file of the other kind (native instead of float or back) would hold, and the flag that says so,
    /// so a file of that size gets a hint instead of a bare mismatch.
    pub other_kind: Option<(usize, String)>,
}

/// One inference: a file per graph input, in graph input order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number in the list.
    pub number: usize,
    /// One path per graph input.
    pub files: Vec<PathBuf>,
}

/// A checked input list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputList {
    /// The inferences, in list order.
    pub lines: Vec<Line>,
    /// The outputs to write, as indices in graph output order: every output unless the output-names line
    /// names some.
    pub outputs: Vec<usize>,
}

/// Parses the list and checks it against the graph before anything runs: the output-names line against the
/// graph's `outputs`, and every line against its `inputs` (entry counts, names, files that exist and sizes
/// that match).
pub fn read(list: &Path, inputs: &[ExpectedInput], outputs: &[&str]) -> Result<InputList> {
    let text = std::fs::read_to_string(list).with_context(|| format!("cannot read input list {}", list.display()))?;
    let parsed = parse(list, &text, inputs, outputs)?;
    check_files(list, &parsed, inputs)?;
    Ok(parsed)
}

/// Parses the text of the list `list` (named in messages) against the graph, without touching the file system:
/// the output-names line against `outputs`, and every line's entry count and names against `inputs`.
pub fn parse(list: &Path, text: &str, inputs: &[ExpectedInput], outputs: &[&str]) -> Result<InputList> {
    let mut lines = Vec::new();
    let mut selected: Vec<usize> = (0..outputs.len()).collect();
    let mut first = true;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        if std::mem::take(&mut first) {
            if let Some(names) = trimmed.strip_prefix('#') {
                selected = select_outputs(names, outputs)
                    .with_context(|| format!("input list {} line {number}", list.display()))?;
                continue;
            }
        }
        if trimmed.starts_with('#') {
            continue;
        }
        let files =
            parse_line(trimmed, inputs).with_context(|| format!("input list {} line {number}", list.display()))?;
        lines.push(Line { number, files });
    }
    if lines.is_empty() {
        bail!("input list {} has no inference lines", list.display());
    }
    Ok(InputList { lines, outputs: selected })
}

/// Checks that every file a parsed list names exists and has the size its input takes.
fn check_files(list: &Path, parsed: &InputList, inputs: &[ExpectedInput]) -> Result<()> {
    for line in &parsed.lines {
        for (file, input) in line.files.iter().zip(inputs) {
            let metadata = std::fs::metadata(file).with_context(|| {
                format!(
                    "input list {} line {}: input '{}' file {} cannot be read",
                    list.display(),
                    line.number,
                    input.name,
                    file.display()
                )
            })?;
            if metadata.len() != input.bytes as u64 {
                let hint = match &input.other_kind {
                    Some((bytes, hint)) if *bytes as u64 == metadata.len() => format!("; {hint}"),
                    _ => String::new(),
                };
                bail!(
                    "input list {} line {}: input '{}' file {} has {} bytes, expected {} ({}){hint}",
                    list.display(),
                    line.number,
                    input.name,
                    file.display(),
                    metadata.len(),
                    input.bytes,
                    input.what
                );
            }
        }
    }
    Ok(())
}

/// The outputs an output-names line (without its `#`) asks for, in graph order; every output when it names none.
fn select_outputs(names: &str, outputs: &[&str]) -> Result<Vec<usize>> {
    let names: Vec<&str> = names.split_whitespace().collect();
    if let Some(unknown) = names.iter().find(|name| !outputs.contains(name)) {
        bail!("the graph has no output named '{unknown}' (outputs: {})", outputs.join(", "));
    }
    Ok((0..outputs.len()).filter(|&index| names.is_empty() || names.contains(&outputs[index])).collect())
}

fn parse_line(line: &str, inputs: &[ExpectedInput]) -> Result<Vec<PathBuf>> {
    let entries: Vec<&str> = line.split_whitespace().collect();
    if entries.len() != inputs.len() {
        let names: Vec<&str> = inputs.iter().map(|input| input.name.as_str()).collect();
        bail!("{} entries, but the graph has {} inputs ({})", entries.len(), inputs.len(), names.join(", "));
    }
    let named: Vec<Option<(&str, &str)>> = entries.iter().map(|entry| entry.split_once(":=")).collect();
    if named.iter().all(Option::is_none) {
        return Ok(entries.iter().map(PathBuf::from).collect());
    }
    if named.iter().any(Option::is_none) {
        bail!("mixes `name:=path` entries with bare paths");
    }
    let mut files = vec![None; inputs.len()];
    for (name, path) in named.into_iter().flatten() {
        let Some(position) = inputs.iter().position(|input| input.name == name) else {
            let names: Vec<&str> = inputs.iter().map(|input| input.name.as_str()).collect();
            bail!("the graph has no input named '{name}' (inputs: {})", names.join(", "));
        };
        if files[position].replace(PathBuf::from(path)).is_some() {
            bail!("input '{name}' is given twice");
        }
    }
    Ok(files.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> Vec<ExpectedInput> {
        ["a", "b"]
            .iter()
            .map(|n| ExpectedInput {
                name: n.to_string(),
                bytes: 4,
                what: "1 float32 element".into(),
                other_kind: None,
            })
            .collect()
    }

    #[test]
    fn named_entries_are_put_in_graph_order() {
        let files = parse_line("b:=y.raw a:=x.raw", &inputs()).unwrap();
        assert_eq!(files, vec![PathBuf::from("x.raw"), PathBuf::from("y.raw")]);
        assert_eq!(parse_line("x.raw y.raw", &inputs()).unwrap()[1], PathBuf::from("y.raw"));
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let message = |line: &str| parse_line(line, &inputs()).unwrap_err().to_string();
        assert!(message("x.raw").contains("1 entries, but the graph has 2 inputs (a, b)"));
        assert!(message("a:=x.raw c:=y.raw").contains("no input named 'c'"));
        assert!(message("a:=x.raw a:=y.raw").contains("given twice"));
        assert!(message("a:=x.raw y.raw").contains("mixes"));
    }

    #[test]
    fn the_first_line_names_the_outputs_to_write_and_later_hash_lines_are_comments() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["x.raw", "y.raw"] {
            std::fs::write(dir.path().join(name), [0u8; 4]).unwrap();
        }
        let (x, y) = (dir.path().join("x.raw"), dir.path().join("y.raw"));
        let list = dir.path().join("list.txt");
        let outputs = ["out0", "out1", "out2"];
        let entries = format!("{} {}", x.display(), y.display());
        std::fs::write(&list, format!("\n#out2 out0\n{entries}\n# a comment\n{entries}\n")).unwrap();
        let read_list = read(&list, &inputs(), &outputs).unwrap();
        assert_eq!(read_list.outputs, vec![0, 2]);
        assert_eq!(read_list.lines.iter().map(|line| line.number).collect::<Vec<_>>(), vec![3, 5]);
        std::fs::write(&list, format!("{entries}\n#out2\n")).unwrap();
        assert_eq!(read(&list, &inputs(), &outputs).unwrap().outputs, vec![0, 1, 2]);
        std::fs::write(&list, format!("#out1 logits\n{entries}\n")).unwrap();
        let message = format!("{:#}", read(&list, &inputs(), &outputs).unwrap_err());
        assert!(message.contains("line 1: the graph has no output named 'logits' (outputs: out0, out1, out2)"));
    }
}
