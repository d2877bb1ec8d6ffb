//! Direct mode on the HLOS side: turns a checked input list into one job for the skel's `run_job`, and reads back
//! what the skel wrote beside the results (each inference's DSP execute time, and its in-memory span and file I/O
//! time).

use super::plan::Plan;
use crate::times::Times;
use anyhow::{bail, Context as _, Result};
use lpai_direct::job::{self, OutputFile, Report, SPANS_FILE_NAME, TIMES_FILE_NAME};
use lpai_direct_stub::stub::{first_contact, Stub};
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

impl JobOutcome {
    /// Adds the job's times to the run's, the DSP clock's ticks as microseconds; answers how many inferences ran.
    pub fn add_to(self, times: &mut Times) -> usize {
        let clock_hz = u128::from(self.report.clock_hz.max(1));
        let micros = |ticks: u64| (u128::from(ticks) * 1_000_000 / clock_hz) as u64;
        times.dsp_load_us = Some(micros(self.report.load_ticks));
        times.dsp_finalize_us = Some(micros(self.report.finalize_ticks));
        times.dsp_file_io_hidden_us = Some(u64::from(self.report.file_io_hidden_us));
        let count = self.execute_micros.len();
        times.dsp_execute_us.extend(self.execute_micros);
        times.dsp_in_memory_us.extend(self.in_memory_micros);
        times.dsp_file_io_us.extend(self.file_io_micros);
        count
    }
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
    let Some(pairs) = job::spans(&spans, inferences) else {
        bail!("the skel wrote {} bytes of spans to {} for {inferences} inferences", spans.len(), spans_file.display());
    };
    Ok(pairs.map(|(in_memory, file_io)| (u64::from(in_memory), u64::from(file_io))).unzip())
}

/// An absolute path for the job: the skel's current directory is not ours. [`job::encode`] checks its length.
fn job_path(path: &Path, what: &str) -> Result<String> {
    let absolute = std::fs::canonicalize(path).with_context(|| format!("{what} {} does not exist", path.display()))?;
    let text = absolute.to_str().with_context(|| format!("{what} {} is not UTF-8", absolute.display()))?;
    Ok(text.to_string())
}

/// After the PD died inside a job: keeps the whole results (every output file there, none `.partial`) from
/// `first_result` on, removes the first unfinished one and everything after it, and the partial times files; answers
/// how many results are whole.
fn remove_unfinished(plan: &Plan<'_>, output_dir: &Path, first_result: usize, inferences: usize) -> Result<usize> {
    let result_subdir = plan.result_subdir;
    let is_partial = |path: &Path| path.extension().is_some_and(|extension| extension == "partial");
    let whole_result = |directory: &Path| {
        let files: Vec<PathBuf> = match std::fs::read_dir(directory) {
            Ok(entries) => entries.filter_map(|entry| entry.ok().map(|entry| entry.path())).collect(),
            Err(_) => return false,
        };
        !files.iter().any(|file| is_partial(file))
            && plan.kinds.outputs.iter().all(|output| directory.join(&output.file_name).is_file())
    };
    let mut whole = 0;
    while whole < inferences && whole_result(&plan.result_directory(output_dir, first_result + whole)) {
        whole += 1;
    }
    for index in first_result + whole..first_result + inferences {
        let result = plan.result_directory(output_dir, index);
        if result.exists() {
            std::fs::remove_dir_all(&result).with_context(|| format!("cannot remove {}", result.display()))?;
        }
        // Results of several graphs share Result_<i>/: it goes only when this graph's part was all it held.
        let top = result.parent().filter(|_| result_subdir.is_some());
        if let Some(top) = top.filter(|top| std::fs::read_dir(top).is_ok_and(|mut entries| entries.next().is_none())) {
            std::fs::remove_dir(top).with_context(|| format!("cannot remove {}", top.display()))?;
        }
    }
    for name in [TIMES_FILE_NAME, SPANS_FILE_NAME] {
        let partial = output_dir.join(format!("{name}.partial"));
        if partial.exists() {
            std::fs::remove_file(&partial).with_context(|| format!("cannot remove {}", partial.display()))?;
        }
    }
    Ok(whole)
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
    let report = match stub.run_job(&bytes) {
        Ok(report) => report,
        Err(error) if error.code().is_some_and(first_contact::is_pd_restart) => {
            let whole = remove_unfinished(plan, output_dir, first_result, list.lines.len())?;
            let line =
                first_contact::pd_restarted(first_result, first_result + whole, "the stub removed what the PD left");
            bail!("{line} ({error})");
        }
        Err(error) => bail!("running the job on the skel: {error}"),
    };
    let times_file = PathBuf::from(&directory).join(TIMES_FILE_NAME);
    let times = std::fs::read(&times_file).with_context(|| format!("cannot read {}", times_file.display()))?;
    let execute_micros: Option<Vec<u64>> =
        job::times(&times, list.lines.len()).map(|times| times.map(u64::from).collect());
    let (Some(execute_micros), true) = (execute_micros, report.inferences as usize == list.lines.len()) else {
        bail!(
            "the skel ran {} of {} inferences and wrote {} bytes of times to {}",
            report.inferences,
            list.lines.len(),
            times.len(),
            times_file.display()
        );
    };
    let (in_memory_micros, file_io_micros) = read_spans(Path::new(&directory), list.lines.len())?;
    Ok(JobOutcome { report, execute_micros, in_memory_micros, file_io_micros })
}
