//! Direct mode on the HLOS side: turns a checked input list into one job for the skel's `run_job`, and reads back
//! what the skel wrote beside the results (each inference's DSP execute time, and its in-memory span and file I/O
//! time).

use crate::net_run::Plan;
use crate::stub::Stub;
use anyhow::{bail, Context as _, Result};
use lpai_direct::job::{self, OutputFile, Report, SPANS_FILE_NAME, SPAN_RECORD_BYTES, TIMES_FILE_NAME};
use std::path::{Path, PathBuf};

/// What a direct-mode job did.
#[derive(Clone, Debug, PartialEq)]
pub struct JobOutcome {
    /// The skel's report.
    pub report: Report,
    /// Each inference's execute time on the DSP clock, in microseconds.
    pub execute_micros: Vec<u64>,
    /// Each inference's in-memory span on the DSP clock (input conversion, execute, output conversion), in
    /// microseconds; empty when the skel wrote no spans file (a skel from before it).
    pub in_memory_micros: Vec<u64>,
    /// Each inference's file I/O on the DSP clock (reading its inputs, writing its results), in microseconds;
    /// empty when `in_memory_micros` is.
    pub file_io_micros: Vec<u64>,
}

/// Little-endian `u32`s as `u64`s.
fn words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks_exact(4).map(|four| u64::from(u32::from_le_bytes([four[0], four[1], four[2], four[3]])))
}

/// The spans file's (in-memory span, file I/O) pairs, one per inference: both empty when the skel wrote none (a skel
/// from before it), an error when it holds another count of records than `inferences`.
fn read_spans(directory: &Path, inferences: usize) -> Result<(Vec<u64>, Vec<u64>)> {
    let spans_file = directory.join(SPANS_FILE_NAME);
    let spans = match std::fs::read(&spans_file) {
        Ok(spans) => spans,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", spans_file.display())),
    };
    if Some(spans.len()) != inferences.checked_mul(SPAN_RECORD_BYTES) {
        bail!("the skel wrote {} bytes of spans to {} for {inferences} inferences", spans.len(), spans_file.display());
    }
    let values: Vec<u64> = words(&spans).collect();
    Ok(values.chunks_exact(2).map(|pair| (pair[0], pair[1])).unzip())
}

/// An absolute path for the job: the skel's current directory is not ours. [`job::encode`] checks its length.
fn job_path(path: &Path, what: &str) -> Result<String> {
    let absolute = std::fs::canonicalize(path).with_context(|| format!("{what} {} does not exist", path.display()))?;
    let text = absolute.to_str().with_context(|| format!("{what} {} is not UTF-8", absolute.display()))?;
    Ok(text.to_string())
}

/// Runs the whole list as one job: the skel reads the inputs, executes and writes `Result_<i>/` under
/// `output_dir` (created here, then named absolutely), numbering results from `first_result`.
pub fn run_job(
    stub: &mut Stub,
    plan: &Plan<'_>,
    output_dir: &Path,
    keep: Option<usize>,
    first_result: usize,
) -> Result<JobOutcome> {
    let Plan { context, graph_index, list, kinds, result_subdir, .. } = *plan;
    std::fs::create_dir_all(output_dir).with_context(|| format!("cannot create {}", output_dir.display()))?;
    let directory = job_path(output_dir, "output directory")?;
    let lines: Vec<Vec<String>> = list
        .lines
        .iter()
        .map(|line| line.files.iter().map(|file| job_path(file, "input file")).collect())
        .collect::<Result<_>>()?;
    let line_refs: Vec<Vec<&str>> = lines.iter().map(|files| files.iter().map(String::as_str).collect()).collect();
    let inferences: Vec<&[&str]> = line_refs.iter().map(Vec::as_slice).collect();
    let (flags, native_inputs) = kinds.job_flags();
    let as_u32 = |count: usize| u32::try_from(count).unwrap_or(u32::MAX);
    let fields = job::Fields {
        context,
        graph: graph_index as u32,
        flags,
        output_dir: &directory,
        keep: keep.map(|keep| as_u32(keep.saturating_sub(first_result))),
        native_inputs,
        result_subdir,
        first_result: as_u32(first_result),
    };
    let outputs: Vec<OutputFile<&str>> = kinds
        .outputs
        .iter()
        .map(|file| OutputFile { index: file.index, file_name: file.file_name.as_str(), float: file.float })
        .collect();
    let mut bytes = Vec::new();
    job::encode(&fields, &outputs, &inferences, &mut |part| bytes.extend_from_slice(part))
        .map_err(|error| anyhow::anyhow!("a direct-mode job cannot carry this run: {error}"))?;
    let report = stub.run_job(&bytes).map_err(|error| anyhow::anyhow!("running the job on the skel: {error}"))?;
    let times_file = PathBuf::from(&directory).join(TIMES_FILE_NAME);
    let times = std::fs::read(&times_file).with_context(|| format!("cannot read {}", times_file.display()))?;
    if times.len() != list.lines.len() * 4 || report.inferences as usize != list.lines.len() {
        bail!(
            "the skel ran {} of {} inferences and wrote {} bytes of times to {}",
            report.inferences,
            list.lines.len(),
            times.len(),
            times_file.display()
        );
    }
    let execute_micros = words(&times).collect();
    let (in_memory_micros, file_io_micros) = read_spans(Path::new(&directory), list.lines.len())?;
    Ok(JobOutcome { report, execute_micros, in_memory_micros, file_io_micros })
}
