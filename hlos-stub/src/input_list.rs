//! qnn-net-run input lists: one inference a line, entries `name:=path` or bare paths in graph input order.
//!
//! Blank lines and lines starting with `#` (qnn-net-run's output-name line) are skipped. Relative paths are
//! taken from the current directory, as qnn-net-run does.

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

/// Parses the list and checks every line against the graph's inputs before anything runs: entry counts,
/// names, files that exist and sizes that match.
pub fn read(list: &Path, inputs: &[ExpectedInput]) -> Result<Vec<Line>> {
    let text = std::fs::read_to_string(list).with_context(|| format!("cannot read input list {}", list.display()))?;
    let mut lines = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let files =
            parse_line(trimmed, inputs).with_context(|| format!("input list {} line {number}", list.display()))?;
        lines.push(Line { number, files });
    }
    if lines.is_empty() {
        bail!("input list {} has no inference lines", list.display());
    }
    for line in &lines {
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
    Ok(lines)
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
}
