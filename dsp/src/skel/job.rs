//! `run_job`: a whole net-run job on the DSP (direct mode). The skel checks every input file of the job, then for
//! each inference reads the inputs through the platform's files, converts, executes, converts back, writes
//! `Result_<i>/<name>.raw` whole or not at all and commits the inference: it appends its record (the DSP execute
//! time, the in-memory span of conversions and execute, the file I/O time) to the job's record file, which the stub
//! reads. One call runs the whole job, so no HLOS round trip happens per inference; the report stays fixed-size.

// A failure carries the runtime's error and where it happened; there is no heap to box it in, and it is built at
// most once per job.
#![allow(clippy::result_large_err)]

use super::error::SkelError;
use super::session::{fail, Session};
use crate::platform::{self, Current, Memory, Platform, PlatformError, MAX_PATH_BYTES};
use crate::platform::{Line, Message, Say};
use crate::runtime::{AsyncGraph, Graph, RuntimeError};
use crate::say;
use lpai_direct::aee::{EBADPARM, EFAILED, ENOMEMORY};
use lpai_direct::codec::{self, Decoded};
use lpai_direct::job::{Job, Record, Report, ResultPath, MAX_PATH_LEN, RECORD_BYTES, RECORD_FILE_NAME};
use lpai_direct::temporary::Token;
use lpai_direct::wire::io_bytes;

// A job's paths and names fit the skel's paths, with their NUL.
const _: () = assert!(MAX_PATH_LEN + 1 == MAX_PATH_BYTES);

/// One NUL-terminated path built from parts, on the stack; the job reuses it for every path it opens, so its
/// frames hold one path buffer, not one per path (the stack budget).
struct CPath(heapless::Vec<u8, MAX_PATH_BYTES>);

impl CPath {
    const fn new() -> CPath {
        CPath(heapless::Vec::new())
    }

    /// The parts joined, NUL-terminated; `None` when longer than [`MAX_PATH_BYTES`] or holding a NUL.
    fn set(&mut self, parts: &[&[u8]]) -> Option<&core::ffi::CStr> {
        self.0.clear();
        for part in parts {
            if part.contains(&0) {
                return None;
            }
            self.0.extend_from_slice(part).ok()?;
        }
        self.0.push(0).ok()?;
        // SAFETY: no part holds a NUL (checked above) and one ends the bytes: a C string, without scanning it again
        // (a job builds several paths per inference).
        Some(unsafe { core::ffi::CStr::from_bytes_with_nul_unchecked(&self.0) })
    }
}

/// What stopped a job.
enum Cause {
    /// The job does not fit the graph.
    Mismatch(Message),
    /// A file has the wrong size.
    Size { expected: usize, actual: u64 },
    /// A file could not be read or written.
    Platform(PlatformError),
    /// The runtime failed.
    Runtime(RuntimeError),
    /// A path is too long.
    PathTooLong,
    /// The PD heap could not give the job's buffers.
    NoMemory,
}

/// The file a failure is about, as the job names it.
#[derive(Clone, Copy)]
enum File<'t> {
    /// None: the failure is about the job or the graph.
    None,
    /// An input file.
    Input(&'t [u8]),
    /// The output directory.
    OutputDirectory,
    /// The inference's `Result_<i>` directory.
    ResultDirectory,
    /// A result file of the inference, by name.
    Result(&'t [u8]),
    /// The job's record file.
    Record,
}

/// A failure, where it happened: the inference (1-based, 0 before any) and the file.
struct Failure<'t> {
    line: u32,
    file: File<'t>,
    cause: Cause,
}

impl<'t> Failure<'t> {
    fn new(line: u32, file: File<'t>, cause: Cause) -> Failure<'t> {
        Failure { line, file, cause }
    }
}

/// A failure's file as a path, for messages.
struct Named<'f, 't> {
    failure: &'f Failure<'t>,
    job: &'f Job<'t>,
}

/// A path from the job, said as text (or as "(a path)" when it is not UTF-8).
struct Path<'p>(&'p [u8]);

impl Say for Path<'_> {
    fn say(&self, f: &mut Line) {
        match core::str::from_utf8(self.0) {
            Ok(text) => f.text(text),
            Err(_) => say!(f, Message::APath),
        }
    }
}

impl Say for Named<'_, '_> {
    fn say(&self, f: &mut Line) {
        let output_dir = Path(self.job.output_dir);
        let result = self.failure.line.saturating_sub(1);
        match self.failure.file {
            File::None => say!(f, Message::Nothing),
            File::Input(path) => say!(f, Message::FileIs, Path(path)),
            File::OutputDirectory => say!(f, Message::FileIs, output_dir),
            File::ResultDirectory => say!(f, Message::ResultDirectoryIs, output_dir, result),
            File::Result(name) => say!(f, Message::ResultFileIs, output_dir, result, Path(name)),
            File::Record => {
                let token = Token::of(self.job.token);
                let [dot, token, suffix] = token.after_name();
                let name = RECORD_FILE_NAME;
                say!(f, Message::RecordFileIs, output_dir, name, Path(dot), Path(token), Path(suffix))
            }
        }
    }
}

impl Say for Cause {
    fn say(&self, f: &mut Line) {
        match self {
            Cause::Mismatch(what) => what.say(f),
            Cause::Size { expected, actual } => say!(f, Message::FileSize, actual, expected),
            Cause::Platform(error) => error.say(f),
            Cause::Runtime(error) => error.say(f),
            Cause::PathTooLong => say!(f, Message::PathTooLong, MAX_PATH_BYTES - 1),
            Cause::NoMemory => say!(f, Message::JobNoMemory),
        }
    }
}

/// The job's file bytes per input and output in the files' form (float32 or native).
fn file_bytes(graph: &Graph<'_>, output: bool, index: usize, float: bool) -> Option<usize> {
    let size = if output { graph.output_size(index)? } else { graph.input_size(index)? };
    io_bytes(float, size.elements, size.bytes)
}

/// Checks every inference before the first runs: one file per input (every inference of a checked job names as
/// many), each of the size the tensor takes.
fn check_inputs<'t>(job: &Job<'t>, graph: &Graph<'_>, path: &mut CPath) -> Result<u64, Failure<'t>> {
    let inputs = graph.input_count();
    if job.input_count as usize != inputs {
        let what = match job.input_count as usize > inputs {
            true => Message::MoreInputFiles,
            false => Message::FewerInputFiles,
        };
        return Err(Failure::new(1, File::None, Cause::Mismatch(what)));
    }
    let mut total = 0u64;
    for (line, files) in (1u32..).zip(job.inferences()) {
        for (index, file) in files.enumerate() {
            let failed = |cause| Failure::new(line, File::Input(file), cause);
            let expected = file_bytes(graph, false, index, job.input_is_float(index))
                .ok_or(failed(Cause::Mismatch(Message::NoSuchInput)))?;
            let path = path.set(&[file]).ok_or(failed(Cause::PathTooLong))?;
            match Current::file_size(path) {
                Ok(size) if size == expected as u64 => total = total.saturating_add(size),
                Ok(size) => return Err(failed(Cause::Size { expected, actual: size })),
                Err(error) => return Err(failed(Cause::Platform(error))),
            }
        }
    }
    Ok(total)
}

/// Bytes of the staging buffer's input part: every input's file, one after another in graph input order.
fn staged_input_bytes(job: &Job<'_>, graph: &Graph<'_>) -> Option<usize> {
    (0..graph.input_count())
        .try_fold(0usize, |total, index| total.checked_add(file_bytes(graph, false, index, job.input_is_float(index))?))
}

/// Bytes of the staging buffer's output part: every output file of the job, one after another in job order
/// (`None` when they overflow); `Err` when an output file names an output the graph does not have. One walk checks
/// both.
fn staged_output_bytes(job: &Job<'_>, graph: &Graph<'_>) -> Result<Option<usize>, Message> {
    let mut total = Some(0usize);
    for file in job.outputs() {
        let index = file.index as usize;
        if index >= graph.output_count() {
            return Err(Message::JobOutputMissing);
        }
        total = total.and_then(|total| total.checked_add(file_bytes(graph, true, index, file.float)?));
    }
    Ok(total)
}

/// The next `bytes` of the staging buffer after `at`, which moves past them; `None` when the end overflows.
fn next_part(at: &mut usize, bytes: usize) -> Option<core::ops::Range<usize>> {
    let end = at.checked_add(bytes)?;
    Some(core::mem::replace(at, end)..end)
}

/// Reads inference `line`'s input files into their places in `staging` (the tensors may be in use by the
/// execution in flight; [`load_inputs`] moves them in afterwards).
fn read_inputs<'t>(
    job: &Job<'t>,
    graph: &Graph<'_>,
    staging: &mut [u8],
    (line, files): (u32, impl Iterator<Item = &'t [u8]>),
    path: &mut CPath,
) -> Result<(), Failure<'t>> {
    let mut at = 0usize;
    for (index, file) in files.enumerate() {
        let failed = |cause| Failure::new(line, File::Input(file), cause);
        let path = path.set(&[file]).ok_or(failed(Cause::PathTooLong))?;
        let float_in = job.input_is_float(index);
        let expected =
            file_bytes(graph, false, index, float_in).ok_or(failed(Cause::Mismatch(Message::NoSuchInput)))?;
        let part = next_part(&mut at, expected).and_then(|part| staging.get_mut(part));
        let part = part.ok_or(failed(Cause::NoMemory))?;
        match Current::read_file(path, part) {
            Ok(read) if read == expected => {}
            Ok(read) => return Err(failed(Cause::Size { expected, actual: read as u64 })),
            // A file that grew after the job's checks no longer fits the tensor's buffer: the same size mismatch.
            Err(PlatformError::TooLarge { needed }) => return Err(failed(Cause::Size { expected, actual: needed })),
            Err(error) => return Err(failed(Cause::Platform(error))),
        }
    }
    Ok(())
}

/// Moves inference `line`'s inputs from their places in `staging` into the tensors: native bytes copied, float
/// values quantized.
fn load_inputs<'t>(
    job: &Job<'t>,
    graph: &mut Graph<'_>,
    staging: &[u8],
    (line, files): (u32, impl Iterator<Item = &'t [u8]>),
) -> Result<(), Failure<'t>> {
    let mut at = 0usize;
    for (index, file) in files.enumerate() {
        let failed = |cause| Failure::new(line, File::Input(file), cause);
        let float_in = job.input_is_float(index);
        let bytes = file_bytes(graph, false, index, float_in).ok_or(failed(Cause::Mismatch(Message::NoSuchInput)))?;
        let part = next_part(&mut at, bytes).and_then(|part| staging.get(part)).ok_or(failed(Cause::NoMemory))?;
        let loaded = match float_in {
            true => graph.write_input_float(index, part),
            false => graph.write_input(index, part),
        };
        loaded.map_err(|error| failed(Cause::Runtime(error)))?;
    }
    Ok(())
}

/// Takes the job's output files from the tensors into their places in `staging`: float ones dequantized, native
/// ones copied (the next execution overwrites the tensors while these are written).
fn take_outputs<'t>(job: &Job<'t>, graph: &Graph<'_>, staging: &mut [u8], line: u32) -> Result<(), Failure<'t>> {
    let mut at = 0usize;
    for output in job.outputs() {
        let failed = |cause| Failure::new(line, File::Result(output.file_name), cause);
        let index = output.index as usize;
        let bytes =
            file_bytes(graph, true, index, output.float).ok_or(failed(Cause::Mismatch(Message::NoSuchOutput)))?;
        let part = next_part(&mut at, bytes).and_then(|part| staging.get_mut(part)).ok_or(failed(Cause::NoMemory))?;
        match output.float {
            true => graph.read_output_float(index, part).map_err(|error| failed(Cause::Runtime(error)))?,
            false => {
                let native = graph.output_bytes(index).ok_or(failed(Cause::Mismatch(Message::NoSuchOutput)))?;
                codec::copy_prefix(part, native);
            }
        }
    }
    Ok(())
}

/// Writes inference `number`'s result files from their places in `staging`, each through its temporary name under
/// `token`. Answers the bytes written.
fn write_outputs<'t>(
    job: &Job<'t>,
    graph: &Graph<'_>,
    staging: &[u8],
    (line, number, token): (u32, u32, &Token),
    path: &mut CPath,
) -> Result<u64, Failure<'t>> {
    let output_dir = job.output_dir;
    let result_path = ResultPath::new(job.first_result.saturating_add(number), job.result_subdir);
    let [prefix, digits, slash, subdir] = result_path.parts();
    let in_result = |file, cause| Failure::new(line, file, cause);
    let result =
        path.set(&[output_dir, b"/", prefix, digits]).ok_or(in_result(File::ResultDirectory, Cause::PathTooLong))?;
    Current::create_directory(result).map_err(|error| in_result(File::ResultDirectory, Cause::Platform(error)))?;
    if job.result_subdir.is_some() {
        let inner = path
            .set(&[output_dir, b"/", prefix, digits, slash, subdir])
            .ok_or(in_result(File::ResultDirectory, Cause::PathTooLong))?;
        Current::create_directory(inner).map_err(|error| in_result(File::ResultDirectory, Cause::Platform(error)))?;
    }
    let (mut at, mut written) = (0usize, 0u64);
    for output in job.outputs() {
        let name = output.file_name;
        let failed = |cause| in_result(File::Result(name), cause);
        let index = output.index as usize;
        let bytes =
            file_bytes(graph, true, index, output.float).ok_or(failed(Cause::Mismatch(Message::NoSuchOutput)))?;
        let part = next_part(&mut at, bytes).and_then(|part| staging.get(part));
        let part = part.ok_or(failed(Cause::NoMemory))?;
        let file = path
            .set(&[output_dir, b"/", prefix, digits, slash, subdir, b"/", name])
            .ok_or(failed(Cause::PathTooLong))?;
        Current::write_file(file, token, part).map_err(|error| failed(Cause::Platform(error)))?;
        written = written.saturating_add(part.len() as u64);
    }
    Ok(written)
}

/// Ticks as whole microseconds, saturating at `u32::MAX`. Out of line: the 64-bit division by the clock rate is
/// large, and a job's records and report convert four spans.
#[inline(never)]
fn micros_u32(ticks: u64) -> u32 {
    u32::try_from(platform::ticks_to_micros(ticks)).unwrap_or(u32::MAX)
}

/// Ticks the spans `[first, first_end]` and `[second, second_end]` have in common.
fn overlap(first: u64, first_end: u64, second: u64, second_end: u64) -> u64 {
    first_end.min(second_end).saturating_sub(first.max(second))
}

/// An inference whose results wait in the staging buffer to be written.
struct Pending {
    number: u32,
    /// Its execute ticks, its in-memory span (loading the inputs, execute, taking the outputs) and the ticks
    /// reading its inputs took.
    execute: u64,
    in_memory: u64,
    read: u64,
}

/// Writes `pending`'s results (when the job keeps them), then commits it: appends its record to the job's record
/// file (`<output_dir>/lpai_dsp_job.bin.<token>.partial`), so that what the file holds is what completed, whatever
/// stops the job; counts it in the report.
fn finish_inference<'t>(
    job: &Job<'t>,
    graph: &Graph<'_>,
    staging: &[u8],
    pending: Pending,
    report: &mut Report,
    path: &mut CPath,
) -> Result<u64, Failure<'t>> {
    let writing = Current::now_ticks();
    let line = pending.number.saturating_add(1);
    let token = Token::of(job.token);
    if pending.number < job.keep {
        let written = write_outputs(job, graph, staging, (line, pending.number, &token), path)?;
        report.bytes_written = report.bytes_written.saturating_add(written);
    }
    let file_io = pending.read.saturating_add(Current::now_ticks().saturating_sub(writing));
    let record = Record {
        execute_us: micros_u32(pending.execute),
        in_memory_us: micros_u32(pending.in_memory),
        file_io_us: micros_u32(file_io),
    };
    let failed = |cause| Failure::new(line, File::Record, cause);
    let [dot, digits, suffix] = token.after_name();
    let file = path.set(&[job.output_dir, b"/", RECORD_FILE_NAME.as_bytes(), dot, digits, suffix]);
    let file = file.ok_or(failed(Cause::PathTooLong))?;
    let committing = Current::now_ticks();
    Current::append_file(file, &record.to_bytes()).map_err(|error| failed(Cause::Platform(error)))?;
    report.bytes_written = report.bytes_written.saturating_add(RECORD_BYTES as u64);
    report.inferences += 1;
    Ok(Current::now_ticks().saturating_sub(committing))
}

/// Runs every inference of `job` on `graph`; answers the report (without the context's figures).
///
/// Inference *i* is started asynchronously ([`Graph::start_frame`]; a backend without it runs it inside the call),
/// and while it executes the skel writes inference *i-1*'s result files from the output staging buffer and reads
/// inference *i+1*'s input files into the input staging buffer; then it waits for *i*, takes its outputs into the
/// staging buffer, moves *i+1*'s inputs into the tensors and starts it. The results are written in order, each
/// whole or not at all, and a failure stops the job with the same files written as one inference at a time would
/// leave (a frame in flight is waited for first). Each inference whose results are written is committed to the
/// job's record file ([`finish_inference`]): its execute time, its in-memory span (loading the inputs, execute,
/// taking the outputs) and its file I/O; the file I/O that overlapped an execution goes to the report's
/// `file_io_hidden_us`.
fn run<'t>(job: &Job<'t>, graph: &mut AsyncGraph<'_, '_>) -> Result<Report, Failure<'t>> {
    let before_any = |cause| Failure::new(0, File::None, cause);
    let output_bytes = staged_output_bytes(job, graph).map_err(|what| before_any(Cause::Mismatch(what)))?;
    let mut path = CPath::new();
    let bytes_read = check_inputs(job, graph, &mut path)?;
    let mut report = Report { bytes_read, finalize_ticks: graph.finalize_ticks(), ..Report::default() };
    // One staging buffer (inputs, then outputs), allocated once for the job.
    let input_bytes = staged_input_bytes(job, graph);
    let staging_bytes = input_bytes.zip(output_bytes).and_then(|(input, output)| input.checked_add(output));
    let mut staging = staging_bytes.and_then(Memory::allocate).ok_or(before_any(Cause::NoMemory))?;
    let directory = path.set(&[job.output_dir]).ok_or(Failure::new(0, File::OutputDirectory, Cause::PathTooLong))?;
    Current::create_directory(directory)
        .map_err(|error| Failure::new(0, File::OutputDirectory, Cause::Platform(error)))?;
    // The buffer holds `staging_bytes`, at least `input_bytes` (Some here).
    let split = staging.bytes_mut().split_at_mut_checked(input_bytes.unwrap_or(usize::MAX));
    let (staged_inputs, staged_outputs) = split.ok_or(before_any(Cause::NoMemory))?;
    let mut inferences = (0u32..).zip(job.inferences());
    let mut next = inferences.next();
    let mut read = 0u64;
    if let Some((number, files)) = next.clone() {
        let reading = Current::now_ticks();
        read_inputs(job, graph, staged_inputs, (number.saturating_add(1), files), &mut path)?;
        read = Current::now_ticks().saturating_sub(reading);
    }
    let mut pending: Option<Pending> = None;
    let mut hidden = 0u64;
    // A failure loading or reading an inference's inputs stops the loop with nothing in flight; one inference at a
    // time would have written the previous results first, as after the last inference.
    let stopped = loop {
        let Some((number, files)) = next.take() else { break None };
        let line = number.saturating_add(1);
        let loading = Current::now_ticks();
        let mut started = loading;
        let loaded = load_inputs(job, graph, staged_inputs, (line, files)).and_then(|()| {
            started = Current::now_ticks();
            graph.start_frame(None).map_err(|error| Failure::new(line, File::None, Cause::Runtime(error)))
        });
        if let Err(failure) = loaded {
            break Some(failure);
        }
        // While inference `number` executes: the previous one's results out, the next one's inputs in.
        let window = Current::now_ticks();
        let written = match pending.take() {
            Some(previous) => finish_inference(job, graph, staged_outputs, previous, &mut report, &mut path),
            None => Ok(0),
        };
        next = inferences.next();
        let (reading, mut next_read) = (Current::now_ticks(), Ok(()));
        if let (Ok(_), Some((next_number, next_files))) = (&written, next.clone()) {
            next_read = read_inputs(job, graph, staged_inputs, (next_number.saturating_add(1), next_files), &mut path);
        }
        let window_end = Current::now_ticks();
        let finished = graph.wait_frame_repeating(started);
        // In the order one inference at a time meets them: the previous results, this execution, the next inputs.
        // The commit's append is not the inference's file I/O: the window that may hide I/O is shorter by it.
        let window = window.saturating_add(written?);
        let (execution, first_ticks) =
            finished.map_err(|error| Failure::new(line, File::None, Cause::Runtime(error)))?;
        let (ticks, attempts) = (execution.ticks, execution.attempts);
        hidden = hidden.saturating_add(overlap(window, window_end, started, started.saturating_add(first_ticks)));
        let taking = Current::now_ticks();
        take_outputs(job, graph, staged_outputs, line)?;
        let taken = Current::now_ticks();
        report.attempts = report.attempts.saturating_add(attempts);
        let in_memory =
            started.saturating_sub(loading).saturating_add(ticks).saturating_add(taken.saturating_sub(taking));
        pending = Some(Pending { number, execute: ticks, in_memory, read });
        read = window_end.saturating_sub(reading);
        if let Err(failure) = next_read {
            break Some(failure);
        }
    };
    if let Some(last) = pending.take() {
        finish_inference(job, graph, staged_outputs, last, &mut report, &mut path)?;
    }
    if let Some(failure) = stopped {
        return Err(failure);
    }
    report.file_io_hidden_us = micros_u32(hidden);
    Ok(report)
}

/// `run_job(in sequence<octet> job, rout sequence<octet> report, rout unsigned long report_bytes)`.
#[inline(never)]
pub(super) fn run_job(session: &mut Session, call: &mut Decoded<'_>) -> Result<(), SkelError> {
    use codec::run_job as m;
    let bytes = call.bytes(m::JOB)?;
    let out = call.take_rout_bytes(m::REPORT)?;
    let job = match Job::parse(bytes) {
        Ok(job) => job,
        Err(error) => {
            fail!(session, Message::JobMalformed, error.offset, error.what);
            return Err(SkelError::aee(EBADPARM));
        }
    };
    let Some(loaded) = session.context(job.context) else {
        fail!(session, Message::JobNoSuchContext, job.context);
        return Err(SkelError::aee(EBADPARM));
    };
    let (load_ticks, arena_used, arena_capacity) = (loaded.load_ticks(), loaded.arena_used(), loaded.arena_capacity());
    let outcome = loaded.with_async_graph(job.graph as usize, |graph| graph.map(|mut graph| run(&job, &mut graph)));
    let mut report = match outcome {
        Some(Ok(report)) => report,
        Some(Err(failure)) => {
            let code = match failure.cause {
                Cause::NoMemory => ENOMEMORY,
                Cause::Mismatch(_) | Cause::Size { .. } | Cause::PathTooLong => EBADPARM,
                Cause::Platform(_) | Cause::Runtime(_) => EFAILED,
            };
            let named = Named { failure: &failure, job: &job };
            fail!(session, Message::JobFailed, failure.line, named, failure.cause);
            return Err(SkelError::aee(code));
        }
        _ => {
            fail!(session, Message::JobNoSuchGraph, job.context, job.graph);
            return Err(SkelError::aee(EBADPARM));
        }
    };
    report.load_ticks = load_ticks;
    report.clock_hz = u32::try_from(Current::TICKS_PER_SECOND).unwrap_or(u32::MAX);
    report.arena_used = u32::try_from(arena_used).unwrap_or(u32::MAX);
    report.arena_capacity = u32::try_from(arena_capacity).unwrap_or(u32::MAX);
    let written = report.encode(out).ok_or(SkelError::aee(EBADPARM))?;
    Ok(call.set_u32(m::REPORT_BYTES, written as u32)?)
}
