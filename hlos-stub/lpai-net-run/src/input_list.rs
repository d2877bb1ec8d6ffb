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

/// One line of a list as written, before any graph is looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListLine<'t> {
    /// A blank line (skipped).
    Blank,
    /// The output-names line (the first non-blank line, when it starts with `#`): the names after the `#`.
    OutputNames(&'t str),
    /// A later line starting with `#` (skipped).
    Comment,
    /// An inference: its entries, in the order written.
    Inference(Vec<Entry<'t>>),
}

/// One entry of an inference line: `name:=path`, or a bare path (for the graph input at its position).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'t> {
    /// The graph input it is for, when it names one.
    pub name: Option<&'t str>,
    /// The file, as written (relative paths are taken from the current directory).
    pub path: &'t str,
}

impl<'t> Entry<'t> {
    /// The entry `text` (one whitespace-separated word of a line).
    pub fn parse(text: &'t str) -> Entry<'t> {
        match text.split_once(":=") {
            Some((name, path)) => Entry { name: Some(name), path },
            None => Entry { name: None, path: text },
        }
    }
}

/// Every line of `text` with its 1-based number and its text as written, told apart as qnn-net-run reads them.
pub fn lines(text: &str) -> impl Iterator<Item = (usize, &str, ListLine<'_>)> {
    let mut first = true;
    text.lines().enumerate().map(move |(index, raw)| {
        let trimmed = raw.trim();
        let first_non_blank = !trimmed.is_empty() && std::mem::take(&mut first);
        let line = match trimmed.strip_prefix('#') {
            _ if trimmed.is_empty() => ListLine::Blank,
            Some(names) if first_non_blank => ListLine::OutputNames(names),
            Some(_) => ListLine::Comment,
            None => ListLine::Inference(trimmed.split_whitespace().map(Entry::parse).collect()),
        };
        (index + 1, raw, line)
    })
}

/// Parses the text of the list `list` (named in messages) against the graph, without touching the file system:
/// the output-names line against `outputs`, and every line's entry count and names against `inputs`.
pub fn parse(list: &Path, text: &str, inputs: &[ExpectedInput], outputs: &[&str]) -> Result<InputList> {
    let mut lines = Vec::new();
    let mut selected: Vec<usize> = (0..outputs.len()).collect();
    for (number, _, line) in self::lines(text) {
        match line {
            ListLine::Blank | ListLine::Comment => {}
            ListLine::OutputNames(names) => {
                selected = select_outputs(names, outputs)
                    .with_context(|| format!("input list {} line {number}", list.display()))?;
            }
            ListLine::Inference(entries) => {
                let files = files_of(&entries, inputs)
                    .with_context(|| format!("input list {} line {number}", list.display()))?;
                lines.push(Line { number, files });
            }
        }
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

/// The files of one inference line, in graph input order.
fn files_of(entries: &[Entry<'_>], inputs: &[ExpectedInput]) -> Result<Vec<PathBuf>> {
    if entries.len() != inputs.len() {
        let names: Vec<&str> = inputs.iter().map(|input| input.name.as_str()).collect();
        bail!("{} entries, but the graph has {} inputs ({})", entries.len(), inputs.len(), names.join(", "));
    }
    if entries.iter().all(|entry| entry.name.is_none()) {
        return Ok(entries.iter().map(|entry| PathBuf::from(entry.path)).collect());
    }
    if entries.iter().any(|entry| entry.name.is_none()) {
        bail!("mixes `name:=path` entries with bare paths");
    }
    let mut files = vec![None; inputs.len()];
    for entry in entries {
        let name = entry.name.unwrap_or_default();
        let Some(position) = inputs.iter().position(|input| input.name == name) else {
            let names: Vec<&str> = inputs.iter().map(|input| input.name.as_str()).collect();
            bail!("the graph has no input named '{name}' (inputs: {})", names.join(", "));
        };
        if files[position].replace(PathBuf::from(entry.path)).is_some() {
            bail!("input '{name}' is given twice");
        }
    }
    Ok(files.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files of one line's text.
    fn parse_line(line: &str, inputs: &[ExpectedInput]) -> Result<Vec<PathBuf>> {
        let entries: Vec<Entry<'_>> = line.split_whitespace().map(Entry::parse).collect();
        files_of(&entries, inputs)
    }

    #[test]
    fn lines_are_told_apart_as_qnn_net_run_reads_them() {
        let text = "\n  #out1 out0\n# a comment\n a:=x.raw  y.raw \n#late\n";
        let told: Vec<(usize, ListLine<'_>)> = lines(text).map(|(number, _, line)| (number, line)).collect();
        let entries = vec![Entry { name: Some("a"), path: "x.raw" }, Entry { name: None, path: "y.raw" }];
        assert_eq!(
            told,
            [
                (1, ListLine::Blank),
                (2, ListLine::OutputNames("out1 out0")),
                (3, ListLine::Comment),
                (4, ListLine::Inference(entries)),
                (5, ListLine::Comment),
            ]
        );
        // Only the first non-blank line can name outputs.
        assert_eq!(lines("x.raw\n#out0").nth(1).map(|(_, raw, line)| (raw, line)), Some(("#out0", ListLine::Comment)));
    }

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
        assert_eq!(Entry::parse("a:=x:=y.raw"), Entry { name: Some("a"), path: "x:=y.raw" });
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
