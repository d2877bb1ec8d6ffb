//! Direct mode on the HLOS side: turns a checked input list into one job for the skel's `run_job`, under a token of
//! its own that the skel's temporary names carry, and reads back what the skel committed: the job's record file
//! (each completed inference's DSP execute time, in-memory span and file I/O time), which it writes out as the times
//! and spans files beside the results. After a PD restart that record alone says how far the job came.

use super::plan::Plan;
use super::unfinished::{self, Before};
use crate::times::Times;
use crate::whole;
use anyhow::{bail, Context as _, Result};
use lpai_direct::job::{self, OutputFile, Record, Report, RECORD_FILE_NAME, SPANS_FILE_NAME, TIMES_FILE_NAME};
use lpai_direct::temporary::Token;
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
    /// microseconds.
    pub in_memory_micros: Vec<u64>,
    /// Each inference's file I/O on the DSP clock (reading its inputs, writing its results), in microseconds.
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

/// A token for a job: random, so that two runs writing one directory do not share the skel's temporary names.
fn job_token() -> u32 {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.finish() as u32
}

/// Reads the job's record file: the records of the inferences the skel committed, in order (none when the skel
/// made no file).
fn read_records(record_file: &Path) -> Result<Vec<Record>> {
    match std::fs::read(record_file) {
        Ok(bytes) => Ok(job::records(&bytes).collect()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(error) => Err(error).with_context(|| format!("cannot read {}", record_file.display())),
    }
}

/// Removes the job's record file once read; why not, in words that follow a failed job's own error.
fn remove_records(record_file: &Path) -> Result<(), String> {
    match std::fs::remove_file(record_file) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("the job's record file {} could not be removed: {error}", record_file.display()))
        }
        _ => Ok(()),
    }
}

/// Writes the times and spans files from the records (whole or not at all: another run may be reading them).
fn write_times(directory: &Path, records: &[Record]) -> Result<()> {
    let times: Vec<u8> = records.iter().flat_map(|record| record.execute_us.to_le_bytes()).collect();
    let spans: Vec<u8> =
        records.iter().flat_map(|record| [record.in_memory_us, record.file_io_us]).flat_map(u32::to_le_bytes).collect();
    whole::write(&directory.join(TIMES_FILE_NAME), &times)?;
    whole::write(&directory.join(SPANS_FILE_NAME), &spans)
}

/// An absolute path for the job: the skel's current directory is not ours. [`job::encode`] checks its length.
fn job_path(path: &Path, what: &str) -> Result<String> {
    let absolute = std::fs::canonicalize(path).with_context(|| format!("{what} {} does not exist", path.display()))?;
    let text = absolute.to_str().with_context(|| format!("{what} {} is not UTF-8", absolute.display()))?;
    Ok(text.to_string())
}

/// Runs the whole list as one job: the skel reads the inputs, executes and writes `Result_<i>/` under
/// `output_dir` (created here, then named absolutely), numbering results from `first_result`. After a PD restart
/// the skel's record names the inference it stopped in, and only what this job wrote of it is removed.
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
    let token = job_token();
    let fields = job::Fields {
        context,
        graph: graph_index as u32,
        flags,
        output_dir: &directory,
        keep: keep.map(|keep| as_u32(keep.saturating_sub(first_result))),
        native_inputs,
        result_subdir,
        first_result: as_u32(first_result),
        token,
    };
    let outputs: Vec<OutputFile<&str>> = kinds
        .outputs
        .iter()
        .map(|file| OutputFile { index: file.index, file_name: file.file_name.as_str(), float: file.float })
        .collect();
    let mut bytes = Vec::new();
    job::encode(&fields, &outputs, &inferences, &mut |part| bytes.extend_from_slice(part))
        .map_err(|error| anyhow::anyhow!("a direct-mode job cannot carry this run: {error}"))?;
    // The results this job keeps, and what their places held before it.
    let count = list.lines.len();
    let kept = |end: usize| keep.map_or(end, |keep| keep.clamp(first_result, end));
    let before = Before::look(plan, output_dir, first_result..kept(first_result + count));
    let token = Token::of(token);
    let directory = PathBuf::from(&directory);
    let record_file = whole::skel_temporary(&directory.join(RECORD_FILE_NAME), &token);
    let ran = stub.run_job(&bytes);
    let records = read_records(&record_file)?;
    // A failed job's error comes first; a record file that cannot be removed (an output directory made read-only
    // meanwhile) follows it.
    let removed = remove_records(&record_file);
    let and_removed = |line: String| match &removed {
        Ok(()) => anyhow::anyhow!(line),
        Err(leftover) => anyhow::anyhow!("{line}; {leftover}"),
    };
    let report = match ran {
        Ok(report) => report,
        Err(error) if error.code().is_some_and(first_contact::is_pd_restart) => {
            // The inference the PD died in, from the skel's record: none when every one was committed.
            let during = (records.len() < count).then_some(first_result + records.len());
            let end = during.unwrap_or(first_result + count);
            if let Some(during) = during.filter(|&during| during < kept(first_result + count)) {
                unfinished::remove(plan, output_dir, during, &token, &before)?;
            }
            let how = "the stub removed what the PD left of it";
            let line = first_contact::pd_restarted(first_result..kept(end), during, how);
            return Err(and_removed(format!("{line} ({error})")));
        }
        Err(error) => return Err(and_removed(format!("running the job on the skel: {error}"))),
    };
    removed.map_err(anyhow::Error::msg)?;
    if records.len() != count || report.inferences as usize != count {
        bail!(
            "the skel ran {} of {count} inferences and committed {} of them to {}",
            report.inferences,
            records.len(),
            record_file.display()
        );
    }
    write_times(&directory, &records)?;
    let execute_micros = records.iter().map(|record| u64::from(record.execute_us)).collect();
    let in_memory_micros = records.iter().map(|record| u64::from(record.in_memory_us)).collect();
    let file_io_micros = records.iter().map(|record| u64::from(record.file_io_us)).collect();
    Ok(JobOutcome { report, execute_micros, in_memory_micros, file_io_micros })
}
