//! The direct-mode job: what the stub sends the skel's `run_job` (a binary job, written by [`encode`] on the HLOS
//! side and checked whole by [`Job::parse`] on the skel) and the fixed-size report it gets back. Both sides use this
//! module, so they cannot drift.
//!
//! A job is little-endian; every number is a `u32` (the context an `i32`), every string a `u32` length and then its
//! bytes:
//! ```text
//! offset  field
//!  0      magic            `LPJB`
//!  4      version          1
//!  8      context          the loaded context (i32)
//! 12      graph            the graph's index in it
//! 16      flags            1: float input files, 2: float output files (as `execute`)
//! 20      keep             write the results of the first `keep` inferences only (u32::MAX: all)
//! 24      native_inputs    bit i set: input i's files are native whatever the flags say
//! 28      first_result     the first inference's results go to Result_<first_result>
//! 32      output_count     output files per inference, 1 to MAX_TENSORS
//! 36      input_count      input files per inference, 1 to MAX_TENSORS
//! 40      inference_count  at least 1
//! 44      token            the job's token: its temporary names carry it (`crate::temporary::Token`)
//! 48      output_dir       a path
//!  .      result_subdir    a name, or empty for none (results go to Result_<i>/<name>/, for runs of several graphs)
//!  .      output_count outputs, each:
//!           index          the output's index in graph output order
//!           form           1: float32 when the flags ask for float outputs, 0: native always
//!           file name      a name
//!  .      inference_count inferences, each:
//!           path count     input_count
//!           paths          that many paths: the input files in graph input order
//! ```
//! Nothing follows the last inference. A path is 1 to [`MAX_PATH_LEN`] bytes without NUL (the stub names files
//! absolutely: the skel's current directory is not the caller's); a name is a path without `/`. [`Job::parse`] checks every field once, so
//! the accessors walk a job they know is whole; a job it refuses is named by the byte offset of the field at fault.
//!
//! The skel writes `<output_dir>/Result_<i>/<file name>` for every inference `i` whole or not at all, each through
//! its temporary name under the job's token (`<file name>.<token>.partial`, [`crate::temporary`]). Once an
//! inference's results are whole (or not kept) it commits the inference: it appends one record of [`RECORD_BYTES`]
//! to the job's record file, [`RECORD_FILE_NAME`]'s temporary name under the token in the output directory, three
//! little-endian `u32` microseconds on the DSP clock: the execute time, the in-memory span (inputs in memory to
//! outputs in memory: input conversion, execute, output conversion) and the file I/O (reading the inputs, creating
//! `Result_<i>/`, writing the outputs). Its whole records are the inferences that completed, in order: the stub
//! reads it after the job, a failed one or one a PD restart ended included, and never guesses from the files there.
//! From it the stub writes [`TIMES_FILE_NAME`] (one `u32` execute time per inference) and [`SPANS_FILE_NAME`] (two
//! `u32` per inference: the in-memory span and the file I/O) beside the results, then removes it. The report stays
//! [`REPORT_BYTES`] long however many inferences the job has.

use crate::bytes::{self, Sink};
use crate::message::Message;
use crate::wire::{EXECUTE_FLOAT_INPUTS, EXECUTE_FLOAT_OUTPUTS};

/// The first bytes of a job.
pub const MAGIC: [u8; 4] = *b"LPJB";
/// The job layout's version, after [`MAGIC`].
pub const VERSION: u32 = 2;
/// The file (in the output directory) holding each inference's DSP execute time, `u32` microseconds.
pub const TIMES_FILE_NAME: &str = "lpai_dsp_execute_us.bin";
/// The file (in the output directory) holding, per inference, the in-memory span and the file I/O time, two `u32`
/// microseconds each.
pub const SPANS_FILE_NAME: &str = "lpai_dsp_spans_us.bin";
/// The job's record file, written under the job's temporary name only (`lpai_dsp_job.bin.<token>.partial`): one
/// [`Record`] per completed inference.
pub const RECORD_FILE_NAME: &str = "lpai_dsp_job.bin";
/// Bytes of one inference's record in the job's record file.
pub const RECORD_BYTES: usize = 12;
/// Most outputs a job selects (and most inputs an inference names).
pub const MAX_TENSORS: usize = 32;
/// Longest path or name a job carries, in bytes without a NUL: the skel's paths are at most 512 bytes with theirs.
pub const MAX_PATH_LEN: usize = 511;
/// An output's form: float32 when the flags ask for float outputs (else native).
const FLOAT_FORM: u32 = 1;

// Message::JobPathTooLong, JobOutputCount and JobInputCount spell these limits out.
const _: () = assert!(MAX_TENSORS == 32 && MAX_PATH_LEN == 511);
const ENDS_EARLY: Message = Message::JobEndsEarly;
const TOO_LONG: Message = Message::JobPathTooLong;

/// A checked job; its paths and names borrow from its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job<'t> {
    /// The loaded context.
    pub context: i32,
    /// The graph's index in it.
    pub graph: u32,
    /// `execute`'s float flags.
    pub flags: u32,
    /// Where `Result_<i>/` directories go.
    pub output_dir: &'t [u8],
    /// Results are written for the first `keep` inferences only.
    pub keep: u32,
    /// Bit i set: input i's files are native whatever `flags` says.
    pub native_inputs: u32,
    /// The directory inside each `Result_<i>/` the results go to, if any.
    pub result_subdir: Option<&'t [u8]>,
    /// The first inference's results go to `Result_<first_result>`.
    pub first_result: u32,
    /// The job's token, which its temporary names carry.
    pub token: u32,
    outputs: &'t [u8],
    inferences: &'t [u8],
    /// How many inferences there are.
    pub inference_count: u32,
    /// How many outputs are selected.
    pub output_count: u32,
    /// How many input files each inference names.
    pub input_count: u32,
}

/// Why a job is refused: the byte offset of the field at fault and what is wrong with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobError {
    /// Where the field at fault starts in the job.
    pub offset: usize,
    /// What is wrong: a message of the table with no places (the skel says it; its words are on the HLOS side).
    pub what: Message,
}

/// What is wrong with `bytes` as a job's path (as a file or directory name when `name`), if anything.
fn string_fault(bytes: &[u8], name: bool) -> Option<Message> {
    if bytes.is_empty() {
        return Some(Message::JobPathEmpty);
    }
    if bytes.len() > MAX_PATH_LEN {
        return Some(TOO_LONG);
    }
    match bytes.iter().find(|&&byte| byte == 0 || (name && byte == b'/')) {
        Some(0) => Some(Message::JobPathHoldsNul),
        Some(_) => Some(Message::JobNameHoldsSlash),
        None => None,
    }
}

/// A job's bytes being read. The plain reads answer `None` past the end; the checked ones (for [`Job::parse`])
/// name the field at fault.
#[derive(Clone)]
struct Reader<'t>(bytes::Reader<'t>);

impl<'t> Reader<'t> {
    /// A number from `low` to `high`, else `what`.
    #[inline(never)]
    fn number(&mut self, low: u32, high: u32, what: Message) -> Result<u32, JobError> {
        let offset = self.0.position();
        match self.0.u32() {
            None => Err(JobError { offset, what: ENDS_EARLY }),
            Some(value) if value < low || value > high => Err(JobError { offset, what }),
            Some(value) => Ok(value),
        }
    }

    /// Any number.
    fn field(&mut self) -> Result<u32, JobError> {
        self.number(0, u32::MAX, ENDS_EARLY)
    }

    /// A path (a name when `name`); empty answers `None` when `optional`.
    fn path(&mut self, name: bool, optional: bool) -> Result<Option<&'t [u8]>, JobError> {
        let offset = self.0.position();
        let length = self.field()?;
        if length == 0 && optional {
            return Ok(None);
        }
        if length > MAX_PATH_LEN as u32 {
            return Err(JobError { offset, what: TOO_LONG });
        }
        let bytes = self.0.take(length as usize).ok_or(JobError { offset, what: ENDS_EARLY })?;
        match string_fault(bytes, name) {
            Some(what) => Err(JobError { offset, what }),
            None => Ok(Some(bytes)),
        }
    }
}

impl<'t> Job<'t> {
    /// Checks a whole job (see the module documentation): every length in range and inside the job, every path
    /// and name well-formed, the counts as the header says, nothing after the last inference.
    pub fn parse(bytes: &'t [u8]) -> Result<Job<'t>, JobError> {
        let mut job = Reader(bytes::Reader::new(bytes));
        if job.0.take(MAGIC.len()) != Some(&MAGIC[..]) {
            return Err(JobError { offset: 0, what: Message::JobNoMagic });
        }
        job.number(VERSION, VERSION, Message::JobVersion)?;
        let mut words = [0u32; 6];
        for word in words.iter_mut() {
            *word = job.field()?;
        }
        let [context, graph, flags, keep, native_inputs, first_result] = words;
        let most = MAX_TENSORS as u32;
        let output_count = job.number(1, most, Message::JobOutputCount)?;
        let input_count = job.number(1, most, Message::JobInputCount)?;
        let inference_count = job.number(1, u32::MAX, Message::JobInferenceCountZero)?;
        let token = job.field()?;
        let output_dir = job.path(false, false)?.unwrap_or_default();
        let result_subdir = job.path(true, true)?;
        let outputs_start = job.0.position();
        for _ in 0..output_count {
            job.field()?;
            job.number(0, FLOAT_FORM, Message::JobOutputForm)?;
            job.path(true, false)?;
        }
        let inferences_start = job.0.position();
        for _ in 0..inference_count {
            job.number(input_count, input_count, Message::JobPathCount)?;
            for _ in 0..input_count {
                job.path(false, false)?;
            }
        }
        if !job.0.at_end() {
            return Err(JobError { offset: job.0.position(), what: Message::JobBytesAfterLastInference });
        }
        Ok(Job {
            context: context as i32,
            graph,
            flags,
            output_dir,
            keep,
            native_inputs,
            result_subdir,
            first_result,
            token,
            outputs: bytes.get(outputs_start..inferences_start).unwrap_or_default(),
            inferences: bytes.get(inferences_start..).unwrap_or_default(),
            inference_count,
            output_count,
            input_count,
        })
    }

    /// The output files to write, in the job's order.
    pub fn outputs(&self) -> impl Iterator<Item = OutputFile<&'t [u8]>> + 't {
        let float = self.flags & EXECUTE_FLOAT_OUTPUTS != 0;
        let mut outputs = bytes::Reader::new(self.outputs);
        core::iter::from_fn(move || {
            let index = outputs.u32()?;
            let form = outputs.u32()?;
            let file_name = outputs.sized()?;
            Some(OutputFile { index, file_name, float: float && form == FLOAT_FORM })
        })
    }

    /// Whether input `index`'s files hold float32 (else the tensor's native bytes).
    pub fn input_is_float(&self, index: usize) -> bool {
        let native = u32::try_from(index).ok().and_then(|index| 1u32.checked_shl(index)).unwrap_or(0);
        self.flags & EXECUTE_FLOAT_INPUTS != 0 && self.native_inputs & native == 0
    }

    /// Each inference's input files, in graph input order.
    pub fn inferences(&self) -> impl Iterator<Item = impl Iterator<Item = &'t [u8]> + Clone> + 't {
        let mut inferences = bytes::Reader::new(self.inferences);
        core::iter::from_fn(move || {
            let count = inferences.u32()?;
            let start = inferences.position();
            for _ in 0..count {
                inferences.sized()?;
            }
            let mut paths = bytes::Reader::at_offset(inferences.bytes().get(..inferences.position())?, start);
            Some(core::iter::from_fn(move || paths.sized()))
        })
    }
}

/// One output file of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputFile<Name> {
    /// The output's index in graph output order.
    pub index: u32,
    /// The file's name inside `Result_<i>/`.
    pub file_name: Name,
    /// Written as float32 (else the tensor's native bytes).
    pub float: bool,
}

/// The fields of a job before its outputs and inferences (the stub's side).
#[derive(Clone, Copy, Debug)]
pub struct Fields<'f> {
    /// The loaded context.
    pub context: i32,
    /// The graph's index in it.
    pub graph: u32,
    /// `execute`'s float flags.
    pub flags: u32,
    /// Where `Result_<i>/` directories go (absolute).
    pub output_dir: &'f str,
    /// Write the results of the first this many inferences only.
    pub keep: Option<u32>,
    /// Bit i set: input i's files are native whatever `flags` says.
    pub native_inputs: u32,
    /// The directory inside each `Result_<i>/` the results go to, if any.
    pub result_subdir: Option<&'f str>,
    /// The first inference's results go to `Result_<first_result>`.
    pub first_result: u32,
    /// The job's token, which its temporary names carry: unique to the job among those writing the directory.
    pub token: u32,
}

impl<'f> Fields<'f> {
    /// The fields of a job on `graph` of `context` writing under `output_dir`: native files, every inference's
    /// results kept, no subdirectory, results from `Result_0`, token 0.
    pub const fn new(context: i32, graph: u32, output_dir: &'f str) -> Fields<'f> {
        Fields {
            context,
            graph,
            flags: 0,
            output_dir,
            keep: None,
            native_inputs: 0,
            result_subdir: None,
            first_result: 0,
            token: 0,
        }
    }
}

/// Why [`encode`] refuses a job: what is at fault, the path or name, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodeError<'p> {
    /// What is at fault: `the output directory`, `the result subdirectory`, `the output file`, `the input file`,
    /// or `the job` for a count.
    pub subject: &'static str,
    /// The path or name at fault; empty for a count.
    pub value: &'p str,
    /// What is wrong.
    pub what: &'static str,
}

impl core::fmt::Display for EncodeError<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.value {
            "" => write!(f, "{}: {}", self.subject, self.what),
            value => write!(f, "{} {value}: {}", self.subject, self.what),
        }
    }
}

impl core::error::Error for EncodeError<'_> {}

/// Encodes a job (the stub's side) through `out`, after checking all of it as [`Job::parse`] will: nothing is
/// written when it answers an error. Every inference names its input files in graph input order, as many as the
/// first; an output file is written float32 when `float` is set and the flags ask for float outputs, native
/// otherwise.
pub fn encode<'p>(
    fields: &Fields<'p>,
    outputs: &[OutputFile<&'p str>],
    inferences: &[&[&'p str]],
    out: &mut dyn FnMut(&[u8]),
) -> Result<(), EncodeError<'p>> {
    let Fields { context, graph, flags, output_dir, keep, native_inputs, result_subdir, first_result, token } = *fields;
    let job = |what| EncodeError { subject: "the job", value: "", what };
    let input_count = inferences.first().map_or(0, |paths| paths.len());
    if outputs.is_empty() || outputs.len() > MAX_TENSORS {
        return Err(job("selects no output file, or more than 32"));
    }
    if input_count == 0 || input_count > MAX_TENSORS {
        return Err(job("has no inference, or one naming no input file or more than 32"));
    }
    if inferences.iter().any(|paths| paths.len() != input_count) {
        return Err(job("has inferences naming different numbers of input files"));
    }
    let inference_count = u32::try_from(inferences.len()).map_err(|_| job("has more than 2^32 - 1 inferences"))?;
    let check = |subject, value: &'p str, name| match string_fault(value.as_bytes(), name) {
        Some(what) => Err(EncodeError { subject, value, what: what.template() }),
        None => Ok(()),
    };
    check("the output directory", output_dir, false)?;
    if let Some(name) = result_subdir {
        check("the result subdirectory", name, true)?;
    }
    for output in outputs {
        check("the output file", output.file_name, true)?;
    }
    for path in inferences.iter().flat_map(|paths| paths.iter()) {
        check("the input file", path, false)?;
    }
    // Checked above: every count and length fits a u32.
    let header = [VERSION, context as u32, graph, flags, keep.unwrap_or(u32::MAX), native_inputs, first_result];
    out.put(&MAGIC);
    for value in header.into_iter().chain([outputs.len() as u32, input_count as u32, inference_count, token]) {
        out.u32(value);
    }
    out.sized(output_dir.as_bytes());
    out.sized(result_subdir.unwrap_or("").as_bytes());
    for output in outputs {
        out.u32(output.index);
        out.u32(if output.float { FLOAT_FORM } else { 0 });
        out.sized(output.file_name.as_bytes());
    }
    for paths in inferences {
        out.u32(input_count as u32);
        for path in paths.iter() {
            out.sized(path.as_bytes());
        }
    }
    Ok(())
}

/// Inference `index`'s results directory relative to the output directory, in the parts both sides join: `Result_`,
/// the index in decimal, then `/` and the subdirectory for runs of several graphs.
#[derive(Clone, Copy, Debug)]
pub struct ResultPath<'s> {
    digits: [u8; 10],
    length: usize,
    subdir: Option<&'s [u8]>,
}

impl<'s> ResultPath<'s> {
    /// Inference `index`'s directory, inside `subdir` when given.
    pub fn new(index: u32, subdir: Option<&'s [u8]>) -> ResultPath<'s> {
        let mut digits = [0u8; 10];
        let mut length = 0;
        let mut rest = index;
        for slot in digits.iter_mut().rev() {
            *slot = b'0' + (rest % 10) as u8;
            length += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        ResultPath { digits, length, subdir }
    }

    /// The parts, to join behind the output directory and a `/`: `Result_`, the digits, and `/<subdir>` or
    /// nothing.
    pub fn parts(&self) -> [&[u8]; 4] {
        let digits = self.digits.get(self.digits.len().saturating_sub(self.length)..).unwrap_or_default();
        match self.subdir {
            Some(subdir) => [RESULT_PREFIX.as_bytes(), digits, b"/", subdir],
            None => [RESULT_PREFIX.as_bytes(), digits, b"", b""],
        }
    }
}

/// What each results directory's name starts with.
pub const RESULT_PREFIX: &str = "Result_";
/// One inference's record in the job's record file: microseconds on the DSP clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// The execute time.
    pub execute_us: u32,
    /// The in-memory span: input conversion, execute, output conversion.
    pub in_memory_us: u32,
    /// The file I/O: reading the inputs, creating `Result_<i>/`, writing the outputs.
    pub file_io_us: u32,
}

impl Record {
    /// The record's bytes, as the skel appends them.
    pub fn to_bytes(&self) -> [u8; RECORD_BYTES] {
        let [a, b, c] = [self.execute_us, self.in_memory_us, self.file_io_us].map(u32::to_le_bytes);
        [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], c[0], c[1], c[2], c[3]]
    }
}

/// The whole records of a job's record file, in order (a record cut short at its end, by a write the PD did not
/// finish, is not one).
pub fn records(bytes: &[u8]) -> impl Iterator<Item = Record> + '_ {
    bytes.chunks_exact(RECORD_BYTES).filter_map(|chunk| {
        let mut reader = bytes::Reader::new(chunk);
        Some(Record { execute_us: reader.u32()?, in_memory_us: reader.u32()?, file_io_us: reader.u32()? })
    })
}

/// Writes `words` little-endian from the start of `out`, as many whole ones as fit.
fn put_words<const N: usize>(out: &mut [u8], words: [u32; N]) {
    for (place, word) in out.chunks_exact_mut(4).zip(words) {
        if let Ok(place) = <&mut [u8; 4]>::try_from(place) {
            *place = word.to_le_bytes();
        }
    }
}

/// Bytes of an encoded [`Report`].
pub const REPORT_BYTES: usize = 64;
const REPORT_MAGIC: u32 = u32::from_le_bytes(*b"LPJR");
const REPORT_VERSION: u32 = 2;

/// What a job did, fixed-size whatever its length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Inferences run to the end (outputs written).
    pub inferences: u32,
    /// graphExecute calls, EARLY_TERMINATION answers included.
    pub attempts: u32,
    /// Bytes read from input files.
    pub bytes_read: u64,
    /// Bytes written to output files (the job's record file included).
    pub bytes_written: u64,
    /// Ticks the context's load took (binary placed, context created, graphs finalized).
    pub load_ticks: u64,
    /// Ticks the job's graph's last graphFinalize took (part of the load; 0 for a graph never finalized).
    pub finalize_ticks: u64,
    /// The DSP clock's ticks per second.
    pub clock_hz: u32,
    /// Arena bytes the context uses at most.
    pub arena_used: u32,
    /// The arena's size.
    pub arena_capacity: u32,
    /// Microseconds of the job's file I/O (reading the next inference's inputs, writing the previous one's
    /// results) that ran while an execution was in flight: the overlap of the two, summed over the job. In the
    /// report's last word, which older skels leave 0, so older readers and writers still agree on the rest.
    pub file_io_hidden_us: u32,
}

impl Report {
    /// Encodes into the first [`REPORT_BYTES`] of `out`; `None` when it is shorter.
    pub fn encode(&self, out: &mut [u8]) -> Option<usize> {
        // A little-endian u64 is its low word, then its high word.
        let [read, written, load, finalize] =
            [self.bytes_read, self.bytes_written, self.load_ticks, self.finalize_ticks]
                .map(|wide| (wide as u32, (wide >> 32) as u32));
        let words: [u32; REPORT_BYTES / 4] = [
            REPORT_MAGIC,
            REPORT_VERSION,
            self.inferences,
            self.attempts,
            read.0,
            read.1,
            written.0,
            written.1,
            load.0,
            load.1,
            finalize.0,
            finalize.1,
            self.clock_hz,
            self.arena_used,
            self.arena_capacity,
            self.file_io_hidden_us,
        ];
        put_words(out, words);
        (out.len() >= REPORT_BYTES).then_some(REPORT_BYTES)
    }

    /// Decodes a report; `None` when the bytes are not one.
    pub fn decode(bytes: &[u8]) -> Option<Report> {
        let mut reader = bytes::Reader::new(bytes);
        let header = (reader.u32()?, reader.u32()?);
        if bytes.len() != REPORT_BYTES || header != (REPORT_MAGIC, REPORT_VERSION) {
            return None;
        }
        Some(Report {
            inferences: reader.u32()?,
            attempts: reader.u32()?,
            bytes_read: reader.u64()?,
            bytes_written: reader.u64()?,
            load_ticks: reader.u64()?,
            finalize_ticks: reader.u64()?,
            clock_hz: reader.u32()?,
            arena_used: reader.u32()?,
            arena_capacity: reader.u32()?,
            file_io_hidden_us: reader.u32()?,
        })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::string::{String, ToString};
    use std::vec::Vec;

    const FIELDS: Fields<'static> = Fields {
        context: -3,
        graph: 2,
        flags: 3,
        output_dir: "/out dir\twith a tab",
        keep: Some(1),
        native_inputs: 2,
        result_subdir: Some("g"),
        first_result: 7,
        token: 0x5eed,
    };
    const OUTPUTS: [OutputFile<&str>; 3] = [
        OutputFile { index: 1, file_name: "probs.raw", float: true },
        OutputFile { index: 0, file_name: "logits.raw", float: true },
        OutputFile { index: 0, file_name: "logits_native.raw", float: false },
    ];
    const INFERENCES: [&[&str]; 2] = [&["/in/0_a.raw", "/in/0_b.raw"], &["/in/1_a.raw", "/in/1_b.raw"]];

    fn encoded<'p>(
        fields: &Fields<'p>,
        outputs: &[OutputFile<&'p str>],
        inferences: &[&[&'p str]],
    ) -> Result<Vec<u8>, EncodeError<'p>> {
        let mut bytes = Vec::new();
        encode(fields, outputs, inferences, &mut |part| bytes.extend_from_slice(part))?;
        Ok(bytes)
    }

    fn example() -> Vec<u8> {
        encoded(&FIELDS, &OUTPUTS, &INFERENCES).unwrap()
    }

    /// The refusal of `bytes`; fails the test when they parse.
    fn refused(bytes: &[u8]) -> JobError {
        match Job::parse(bytes) {
            Ok(job) => panic!("accepted {job:?}"),
            Err(error) => error,
        }
    }

    /// Where `text` starts in `bytes`.
    fn find(bytes: &[u8], text: &[u8]) -> usize {
        bytes.windows(text.len()).position(|window| window == text).unwrap()
    }

    /// `bytes` with `from` (found in them) replaced by `to`, of the same length; answers them and the offset of the
    /// string `from` is (its length word).
    fn replaced(bytes: &[u8], from: &str, to: &[u8]) -> (Vec<u8>, usize) {
        assert_eq!(from.len(), to.len());
        let at = find(bytes, from.as_bytes());
        let mut changed = bytes.to_vec();
        changed[at..at + to.len()].copy_from_slice(to);
        (changed, at - 4)
    }

    /// `bytes` with the word at `offset` set to `value`.
    fn with_word(bytes: &[u8], offset: usize, value: u32) -> Vec<u8> {
        let mut changed = bytes.to_vec();
        changed[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
        changed
    }

    fn word_at(bytes: &[u8], offset: usize) -> u32 {
        u32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap())
    }

    /// Reads every accessor of a job to its end.
    fn walk(job: &Job<'_>) -> (usize, usize) {
        let outputs = job.outputs().count();
        let paths = job.inferences().map(|paths| paths.clone().count() + paths.count()).sum();
        (outputs, paths)
    }

    #[test]
    fn result_paths_and_the_record_file_are_laid_out_once() {
        let joined = |path: ResultPath<'_>| path.parts().concat();
        assert_eq!(joined(ResultPath::new(0, None)), b"Result_0");
        assert_eq!(joined(ResultPath::new(4_294_967_295, Some(b"kws"))), b"Result_4294967295/kws");
        let first = Record { execute_us: 77, in_memory_us: 80, file_io_us: 5 };
        let second = Record { execute_us: 9, in_memory_us: 11, file_io_us: 0x0102_0304 };
        assert_eq!(first.to_bytes(), [77, 0, 0, 0, 80, 0, 0, 0, 5, 0, 0, 0]);
        let mut file: Vec<u8> = [first, second].iter().flat_map(Record::to_bytes).collect();
        assert_eq!(records(&file).collect::<Vec<_>>(), [first, second]);
        // A record the PD did not finish appending is not one.
        file.extend_from_slice(&[1, 2, 3]);
        assert_eq!(records(&file).collect::<Vec<_>>(), [first, second]);
        assert_eq!(records(&file[..RECORD_BYTES - 1]).count(), 0);
    }

    #[test]
    fn a_job_round_trips() {
        let bytes = example();
        assert_eq!(&bytes[..4], b"LPJB");
        let header: Vec<u32> = (1..12).map(|word| word_at(&bytes, 4 * word)).collect();
        assert_eq!(header, [VERSION, (-3i32) as u32, 2, 3, 1, 2, 7, 3, 2, 2, 0x5eed]);
        let job = Job::parse(&bytes).unwrap();
        assert_eq!((job.context, job.graph, job.flags, job.keep, job.native_inputs), (-3, 2, 3, 1, 2));
        assert_eq!(
            (job.output_dir, job.result_subdir, job.first_result, job.token),
            (&b"/out dir\twith a tab"[..], Some(&b"g"[..]), 7, 0x5eed)
        );
        assert_eq!((job.inference_count, job.output_count, job.input_count), (2, 3, 2));
        assert_eq!((job.input_is_float(0), job.input_is_float(1), job.input_is_float(40)), (true, false, true));
        let outputs: Vec<_> = job.outputs().collect();
        assert_eq!(
            outputs,
            [
                OutputFile { index: 1, file_name: &b"probs.raw"[..], float: true },
                OutputFile { index: 0, file_name: &b"logits.raw"[..], float: true },
                OutputFile { index: 0, file_name: &b"logits_native.raw"[..], float: false },
            ]
        );
        let inferences: Vec<Vec<&[u8]>> = job.inferences().map(Iterator::collect).collect();
        let expected: Vec<Vec<&[u8]>> =
            INFERENCES.iter().map(|paths| paths.iter().map(|path| path.as_bytes()).collect()).collect();
        assert_eq!(inferences, expected);
        // A clone of an inference's paths walks them again.
        let first = job.inferences().next().unwrap();
        assert_eq!((first.clone().count(), first.count()), (2, 2));
    }

    #[test]
    fn defaults_and_the_flags_round_trip() {
        // No keep, no result directory, float outputs not asked for: every output native, every input native.
        let fields = Fields { flags: 0, keep: None, result_subdir: None, first_result: 0, ..FIELDS };
        let long = "/".to_string() + &"p".repeat(MAX_PATH_LEN - 1);
        let inferences: [&[&str]; 1] = [&[long.as_str(), "/b"]];
        let bytes = encoded(&fields, &OUTPUTS, &inferences).unwrap();
        let job = Job::parse(&bytes).unwrap();
        assert_eq!((job.keep, job.result_subdir, job.first_result, job.inference_count), (u32::MAX, None, 0, 1));
        assert!(job.outputs().all(|output| !output.float));
        assert!(!job.input_is_float(0) && !job.input_is_float(1));
        assert_eq!(job.inferences().next().unwrap().next(), Some(long.as_bytes()));
    }

    #[test]
    fn every_truncation_is_refused() {
        let bytes = example();
        for length in 0..bytes.len() {
            let error = refused(&bytes[..length]);
            assert!(error.offset <= length, "{length}: {error:?}");
            let expected = if length < 4 { Message::JobNoMagic } else { ENDS_EARLY };
            assert_eq!(error.what, expected, "{length}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(refused(&longer), JobError { offset: bytes.len(), what: Message::JobBytesAfterLastInference });
    }

    #[test]
    fn a_bad_magic_or_version_is_refused() {
        let mut bytes = example();
        bytes[3] = b'T';
        assert_eq!(refused(&bytes).offset, 0);
        // A job of version 1 (before the token) and one of a later version.
        for version in [1, 3] {
            let bytes = with_word(&example(), 4, version);
            assert_eq!(refused(&bytes), JobError { offset: 4, what: Message::JobVersion });
        }
    }

    #[test]
    fn a_name_with_a_slash_is_refused() {
        let (bytes, at) = replaced(&example(), "probs.raw", b"prob/.raw");
        assert_eq!(refused(&bytes), JobError { offset: at, what: Message::JobNameHoldsSlash });
        // result_subdir, after output_dir.
        let subdir = 48 + 4 + FIELDS.output_dir.len();
        let mut bytes = example();
        assert_eq!((word_at(&bytes, subdir), bytes[subdir + 4]), (1, b'g'));
        bytes[subdir + 4] = b'/';
        assert_eq!(refused(&bytes), JobError { offset: subdir, what: Message::JobNameHoldsSlash });
        let refused = encoded(&FIELDS, &[OutputFile { index: 0, file_name: "a/b.raw", float: true }], &INFERENCES);
        let error = refused.unwrap_err();
        assert_eq!((error.subject, error.value), ("the output file", "a/b.raw"));
        assert_eq!(error.to_string(), "the output file a/b.raw: a file or directory name holds a `/`");
        let fields = Fields { result_subdir: Some("x/y"), ..FIELDS };
        assert_eq!(encoded(&fields, &OUTPUTS, &INFERENCES).unwrap_err().subject, "the result subdirectory");
    }

    #[test]
    fn a_path_with_a_nul_is_refused() {
        let (bytes, at) = replaced(&example(), "/in/1_a.raw", b"/in/1\0a.raw");
        assert_eq!(refused(&bytes), JobError { offset: at, what: Message::JobPathHoldsNul });
        let (bytes, _) = replaced(&example(), "/out dir", b"/out\0dir");
        assert_eq!(refused(&bytes).offset, 48);
        let inferences: [&[&str]; 1] = [&["/in/a\0.raw", "/b"]];
        let error = encoded(&FIELDS, &OUTPUTS, &inferences).unwrap_err();
        assert_eq!(
            (error.subject, error.value, error.what),
            ("the input file", "/in/a\0.raw", "a path or name holds a NUL byte")
        );
        let fields = Fields { output_dir: "", ..FIELDS };
        assert_eq!(encoded(&fields, &OUTPUTS, &INFERENCES).unwrap_err().what, "a path or name is empty");
    }

    #[test]
    fn an_output_count_over_32_is_refused() {
        let bytes = example();
        for count in [0, 33, u32::MAX] {
            let changed = with_word(&bytes, 32, count);
            assert_eq!(refused(&changed), JobError { offset: 32, what: Message::JobOutputCount });
        }
        let many = [OUTPUTS[0]; MAX_TENSORS + 1];
        let error = encoded(&FIELDS, &many, &INFERENCES).unwrap_err();
        assert_eq!((error.subject, error.what), ("the job", "selects no output file, or more than 32"));
        assert!(encoded(&FIELDS, &many[..MAX_TENSORS], &INFERENCES).is_ok());
        assert!(encoded(&FIELDS, &[], &INFERENCES).is_err());
        assert_eq!(refused(&with_word(&bytes, 36, 33)), JobError { offset: 36, what: Message::JobInputCount });
    }

    #[test]
    fn zero_inferences_are_refused() {
        let bytes = with_word(&example(), 40, 0);
        assert_eq!(refused(&bytes), JobError { offset: 40, what: Message::JobInferenceCountZero });
        let error = encoded(&FIELDS, &OUTPUTS, &[]).unwrap_err();
        assert_eq!(error.what, "has no inference, or one naming no input file or more than 32");
        let error = encoded(&FIELDS, &OUTPUTS, &[&[]]).unwrap_err();
        assert_eq!(error.what, "has no inference, or one naming no input file or more than 32");
    }

    #[test]
    fn inconsistent_path_counts_are_refused() {
        let bytes = example();
        // The second inference's path count: 4 bytes before its first path's length.
        let second = find(&bytes, b"/in/1_a.raw") - 8;
        assert_eq!(word_at(&bytes, second), 2);
        for count in [1, 3, 0] {
            let changed = with_word(&bytes, second, count);
            assert_eq!(refused(&changed), JobError { offset: second, what: Message::JobPathCount });
        }
        // The header's input_count against the inferences' own counts.
        let first = find(&bytes, b"/in/0_a.raw") - 8;
        assert_eq!(refused(&with_word(&bytes, 36, 1)).offset, first);
        let uneven: [&[&str]; 2] = [&["/a", "/b"], &["/c"]];
        let error = encoded(&FIELDS, &OUTPUTS, &uneven).unwrap_err();
        assert_eq!(error.what, "has inferences naming different numbers of input files");
    }

    #[test]
    fn lengths_that_overflow_are_refused() {
        let bytes = example();
        // output_dir's length: past every limit, just past the limit, and in the limit but past the end.
        assert_eq!(refused(&with_word(&bytes, 48, u32::MAX)), JobError { offset: 48, what: TOO_LONG });
        assert_eq!(refused(&with_word(&bytes, 48, MAX_PATH_LEN as u32 + 1)), JobError { offset: 48, what: TOO_LONG });
        let last = find(&bytes, b"/in/1_b.raw") - 4;
        assert_eq!(refused(&with_word(&bytes, last, MAX_PATH_LEN as u32)), JobError { offset: last, what: ENDS_EARLY });
        assert_eq!(refused(&with_word(&bytes, last, 0)), JobError { offset: last, what: Message::JobPathEmpty });
        // Counts far larger than the job: refused where the job ends.
        let end = bytes.len();
        assert_eq!(refused(&with_word(&bytes, 40, u32::MAX)), JobError { offset: end, what: ENDS_EARLY });
        // An output's form other than 0 and 1.
        let form = find(&bytes, b"probs.raw") - 8;
        let error = refused(&with_word(&bytes, form, 2));
        assert_eq!((error.offset, error.what), (form, Message::JobOutputForm));
        // The encoder refuses a path one byte too long, naming it.
        let long = "/".repeat(MAX_PATH_LEN + 1);
        let inferences: [&[&str]; 1] = [&[long.as_str(), "/b"]];
        let error = encoded(&FIELDS, &OUTPUTS, &inferences).unwrap_err();
        assert_eq!((error.subject, error.value, error.what), ("the input file", long.as_str(), TOO_LONG.template()));
        let fields = Fields { output_dir: &long, ..FIELDS };
        let message = encoded(&fields, &OUTPUTS, &INFERENCES).unwrap_err().to_string();
        assert_eq!(message, String::from("the output directory ") + &long + ": " + TOO_LONG.template());
    }

    #[test]
    fn every_bit_flip_parses_or_is_refused_without_panicking() {
        let bytes = example();
        // Every byte natively; under Miri (slow) every 11th.
        let step = if cfg!(miri) { 11 } else { 1 };
        for at in (0..bytes.len()).step_by(step) {
            for bit in 0..8 {
                let mut changed = bytes.clone();
                changed[at] ^= 1 << bit;
                if let Ok(job) = Job::parse(&changed) {
                    let paths = 2 * job.inference_count as usize * job.input_count as usize;
                    assert_eq!(walk(&job), (job.output_count as usize, paths));
                }
            }
        }
    }

    #[test]
    fn a_report_round_trips_and_garbage_is_refused() {
        let report = Report {
            inferences: 30,
            attempts: 31,
            bytes_read: 1 << 33,
            bytes_written: 7,
            load_ticks: 19_200_000,
            finalize_ticks: 960_000,
            clock_hz: 19_200_000,
            arena_used: 4096,
            arena_capacity: 8192,
            file_io_hidden_us: 1234,
        };
        let mut bytes = [0u8; REPORT_BYTES];
        assert_eq!(report.encode(&mut bytes), Some(REPORT_BYTES));
        assert_eq!(Report::decode(&bytes), Some(report));
        // The hidden I/O is the last word, which a report of an older skel leaves 0.
        assert_eq!(bytes[REPORT_BYTES - 4..], 1234u32.to_le_bytes());
        let mut older = bytes;
        older[REPORT_BYTES - 4..].fill(0);
        assert_eq!(Report::decode(&older), Some(Report { file_io_hidden_us: 0, ..report }));
        assert_eq!(report.encode(&mut [0u8; REPORT_BYTES - 1]), None);
        bytes[0] ^= 1;
        assert_eq!(Report::decode(&bytes), None);
    }
}
