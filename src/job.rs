//! The direct-mode job: what the stub sends the skel's `run_job` (a text, one field a line) and the fixed-size
//! report it gets back. Both sides use this module, so they cannot drift.
//!
//! The job text, lines ending in `\n`:
//! ```text
//! lpai-job 1
//! context <id>
//! graph <index>
//! flags <bits>                    (1: float input files, 2: float output files; as `execute`)
//! output_dir <path>
//! keep <n>                        (optional: write the results of the first n inferences only; default all)
//! native_inputs <mask>            (optional: bit i set = input i's files are native whatever the flags say)
//! result_subdir <name>            (optional: results go to Result_<i>/<name>/, for runs of several graphs)
//! first_result <n>                (optional: the first inference's results go to Result_<n>; default 0)
//! output <index> <file name>      (one per output file, in float32 or native as the flags say)
//! output_native <index> <file>    (one per output file always written native; mixed with `output` lines)
//! inference <path>\t<path>...     (one per inference: the input files in graph input order)
//! ```
//! Paths are absolute (the skel's current directory is not the caller's) and hold no tab or newline. The skel
//! writes `<output_dir>/Result_<i>/<file name>` for every inference `i` and, last, the execute time of each
//! inference on the DSP clock in [`TIMES_FILE_NAME`] beside the results: little-endian `u32` microseconds, one per
//! inference; then [`SPANS_FILE_NAME`]: per inference two little-endian `u32` microseconds, the in-memory span
//! (inputs in memory to outputs in memory: input conversion, execute, output conversion) and the file I/O (reading
//! the inputs, creating `Result_<i>/`, writing the outputs). The report stays [`REPORT_BYTES`] long however many
//! inferences the job has.

/// The first line of a job text.
pub const HEADER: &str = "lpai-job 1";
/// The file (in the output directory) holding each inference's DSP execute time, `u32` microseconds.
pub const TIMES_FILE_NAME: &str = "lpai_dsp_execute_us.bin";
/// The file (in the output directory) holding, per inference, the in-memory span and the file I/O time, two `u32`
/// microseconds each (written after [`TIMES_FILE_NAME`]; skels from before it leave it out).
pub const SPANS_FILE_NAME: &str = "lpai_dsp_spans_us.bin";
/// Bytes per inference in [`SPANS_FILE_NAME`].
pub const SPAN_RECORD_BYTES: usize = 8;
/// Most outputs a job selects (and most inputs an inference names).
pub const MAX_TENSORS: usize = 32;

/// A parsed job text; the paths and names borrow from it.
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
    outputs: &'t [u8],
    inferences: &'t [u8],
    /// How many inference lines there are.
    pub inference_count: u32,
    /// How many outputs are selected.
    pub output_count: u32,
}

/// Why a job text is refused: the line (1-based) and what is wrong with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobError {
    /// The line of the job text.
    pub line: u32,
    /// What is wrong.
    pub what: &'static str,
}

fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|&byte| byte == b'\n').filter(|line| !line.is_empty())
}

fn number<T: core::str::FromStr>(text: &[u8]) -> Option<T> {
    core::str::from_utf8(text).ok()?.parse().ok()
}

/// Splits `key value` at the first space.
fn field(line: &[u8]) -> (&[u8], &[u8]) {
    match line.iter().position(|&byte| byte == b' ') {
        Some(space) => (line.get(..space).unwrap_or(&[]), line.get(space + 1..).unwrap_or(&[])),
        None => (line, &[]),
    }
}

/// The byte range of `part` inside `whole` (a subslice of it).
fn offset_in(whole: &[u8], part: &[u8]) -> usize {
    (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize)
}

impl<'t> Job<'t> {
    /// Parses a job text (without its NUL). Every field must be there once, outputs and inferences come last and
    /// grouped, and numbers are decimal.
    pub fn parse(text: &'t [u8]) -> Result<Job<'t>, JobError> {
        let mut lines = lines(text).enumerate().map(|(index, line)| (index as u32 + 1, line)).peekable();
        let error = |line, what| JobError { line, what };
        match lines.next() {
            Some((_, header)) if header == HEADER.as_bytes() => {}
            _ => return Err(error(1, "the first line is not `lpai-job 1`")),
        }
        let (mut context, mut graph, mut flags, mut output_dir) = (None, None, None, None);
        let (mut keep, mut native_inputs, mut result_subdir, mut first_result) = (None, None, None, None);
        while let Some(&(number_of_line, line)) = lines.peek() {
            let (key, value) = field(line);
            let slot = match key {
                b"context" => context.replace(number(value).ok_or(error(number_of_line, "context is not a number"))?),
                b"graph" => {
                    graph.replace(number::<u32>(value).ok_or(error(number_of_line, "graph is not a number"))? as i64)
                }
                b"flags" => {
                    flags.replace(number::<u32>(value).ok_or(error(number_of_line, "flags is not a number"))? as i64)
                }
                b"output_dir" if !value.is_empty() => output_dir.replace(value).map(|_| 0),
                b"keep" => keep
                    .replace(number::<u32>(value).ok_or(error(number_of_line, "keep is not a number"))?)
                    .map(i64::from),
                b"native_inputs" => native_inputs
                    .replace(number::<u32>(value).ok_or(error(number_of_line, "native_inputs is not a number"))?)
                    .map(i64::from),
                b"result_subdir" if is_file_name(value) => result_subdir.replace(value).map(|_| 0),
                b"first_result" => first_result
                    .replace(number::<u32>(value).ok_or(error(number_of_line, "first_result is not a number"))?)
                    .map(i64::from),
                b"output" | b"output_native" | b"inference" => break,
                _ => return Err(error(number_of_line, "unknown or empty field")),
            };
            if slot.is_some() {
                return Err(error(number_of_line, "a field given twice"));
            }
            lines.next();
        }
        let last = lines.peek().map_or(0, |&(line, _)| line);
        let (Some(context), Some(graph), Some(flags), Some(output_dir)) = (context, graph, flags, output_dir) else {
            return Err(error(last, "context, graph, flags and output_dir must all come before the outputs"));
        };
        let context = i32::try_from(context).map_err(|_| error(last, "context is out of range"))?;
        let outputs_start = lines.peek().map_or(text.len(), |&(_, line)| offset_in(text, line));
        let mut output_count = 0u32;
        while let Some(&(number_of_line, line)) = lines.peek() {
            let (key, value) = field(line);
            if key != b"output" && key != b"output_native" {
                break;
            }
            let (index, name) = field(value);
            if number::<u32>(index).is_none() || !is_file_name(name) {
                return Err(error(number_of_line, "an output line is not `output[_native] <index> <file name>`"));
            }
            output_count += 1;
            lines.next();
        }
        let inferences_start = lines.peek().map_or(text.len(), |&(_, line)| offset_in(text, line));
        let mut inference_count = 0u32;
        for (number_of_line, line) in lines {
            let (key, value) = field(line);
            if key != b"inference" || value.is_empty() || value.split(|&byte| byte == b'\t').any(<[u8]>::is_empty) {
                return Err(error(number_of_line, "expected `inference <path>[\\t<path>...]`"));
            }
            inference_count = inference_count.checked_add(1).ok_or(error(number_of_line, "too many inferences"))?;
        }
        if output_count == 0 || inference_count == 0 || output_count as usize > MAX_TENSORS {
            return Err(error(last, "a job needs 1 to 32 outputs and at least one inference"));
        }
        Ok(Job {
            context,
            graph: graph as u32,
            flags: flags as u32,
            output_dir,
            keep: keep.unwrap_or(u32::MAX),
            native_inputs: native_inputs.unwrap_or(0),
            result_subdir,
            first_result: first_result.unwrap_or(0),
            outputs: text.get(outputs_start..inferences_start).unwrap_or(&[]),
            inferences: text.get(inferences_start..).unwrap_or(&[]),
            inference_count,
            output_count,
        })
    }

    /// The output files to write, in the job's order.
    pub fn outputs(&self) -> impl Iterator<Item = OutputFile<&'t [u8]>> + 't {
        let float = self.flags & crate::wire::EXECUTE_FLOAT_OUTPUTS != 0;
        lines(self.outputs).filter_map(move |line| {
            let (key, rest) = field(line);
            let (index, file_name) = field(rest);
            Some(OutputFile { index: number(index)?, file_name, float: float && key == b"output" })
        })
    }

    /// Whether input `index`'s files hold float32 (else the tensor's native bytes).
    pub fn input_is_float(&self, index: usize) -> bool {
        let native = u32::try_from(index).ok().and_then(|index| 1u32.checked_shl(index)).unwrap_or(0);
        self.flags & crate::wire::EXECUTE_FLOAT_INPUTS != 0 && self.native_inputs & native == 0
    }

    /// Each inference's input files, in graph input order.
    pub fn inferences(&self) -> impl Iterator<Item = impl Iterator<Item = &'t [u8]> + Clone> + 't {
        lines(self.inferences).map(|line| field(line).1.split(|&byte| byte == b'\t'))
    }
}

/// A name the job may use as a file or directory name: not empty, no `/`, tab or newline.
fn is_file_name(name: &[u8]) -> bool {
    !name.is_empty() && !name.iter().any(|byte| matches!(byte, b'/' | b'\t' | b'\n'))
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

/// The fields of a job text before its outputs and inferences (the stub's side).
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
}

/// Writes a job text (the stub's side). An output file is written float32 when `float` is set and the flags ask for
/// float outputs, native otherwise.
pub fn write<'p>(
    out: &mut dyn core::fmt::Write,
    fields: &Fields<'_>,
    outputs: impl Iterator<Item = OutputFile<&'p str>>,
    inferences: impl Iterator<Item = &'p [&'p str]>,
) -> core::fmt::Result {
    let Fields { context, graph, flags, output_dir, keep, native_inputs, result_subdir, first_result } = *fields;
    writeln!(out, "{HEADER}")?;
    writeln!(out, "context {context}\ngraph {graph}\nflags {flags}\noutput_dir {output_dir}")?;
    if let Some(keep) = keep {
        writeln!(out, "keep {keep}")?;
    }
    if native_inputs != 0 {
        writeln!(out, "native_inputs {native_inputs}")?;
    }
    if let Some(name) = result_subdir {
        writeln!(out, "result_subdir {name}")?;
    }
    if first_result != 0 {
        writeln!(out, "first_result {first_result}")?;
    }
    for OutputFile { index, file_name, float } in outputs {
        let key = if float { "output" } else { "output_native" };
        writeln!(out, "{key} {index} {file_name}")?;
    }
    for files in inferences {
        out.write_str("inference ")?;
        for (position, file) in files.iter().enumerate() {
            if position > 0 {
                out.write_char('\t')?;
            }
            out.write_str(file)?;
        }
        out.write_char('\n')?;
    }
    Ok(())
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
    /// Bytes written to output files (the times file included).
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
}

impl Report {
    /// Encodes into the first [`REPORT_BYTES`] of `out`; `None` when it is shorter.
    pub fn encode(&self, out: &mut [u8]) -> Option<usize> {
        let words = [REPORT_MAGIC, REPORT_VERSION, self.inferences, self.attempts];
        let wide = [self.bytes_read, self.bytes_written, self.load_ticks, self.finalize_ticks];
        let tail = [self.clock_hz, self.arena_used, self.arena_capacity, 0];
        let mut at = 0usize;
        let mut put = |bytes: &[u8]| -> Option<()> {
            let target = out.get_mut(at..at.checked_add(bytes.len())?)?;
            for (slot, &byte) in target.iter_mut().zip(bytes) {
                *slot = byte;
            }
            at += bytes.len();
            Some(())
        };
        words.iter().try_for_each(|word| put(&word.to_le_bytes()))?;
        wide.iter().try_for_each(|word| put(&word.to_le_bytes()))?;
        tail.iter().try_for_each(|word| put(&word.to_le_bytes()))?;
        Some(REPORT_BYTES)
    }

    /// Decodes a report; `None` when the bytes are not one.
    pub fn decode(bytes: &[u8]) -> Option<Report> {
        let word = |at: usize| bytes.get(at..at + 4).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes);
        let wide = |at: usize| bytes.get(at..at + 8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
        if bytes.len() != REPORT_BYTES || word(0)? != REPORT_MAGIC || word(4)? != REPORT_VERSION {
            return None;
        }
        Some(Report {
            inferences: word(8)?,
            attempts: word(12)?,
            bytes_read: wide(16)?,
            bytes_written: wide(24)?,
            load_ticks: wide(32)?,
            finalize_ticks: wide(40)?,
            clock_hz: word(48)?,
            arena_used: word(52)?,
            arena_capacity: word(56)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Text {
        bytes: [u8; 512],
        length: usize,
    }

    impl core::fmt::Write for Text {
        fn write_str(&mut self, text: &str) -> core::fmt::Result {
            let end = self.length + text.len();
            self.bytes.get_mut(self.length..end).ok_or(core::fmt::Error)?.copy_from_slice(text.as_bytes());
            self.length = end;
            Ok(())
        }
    }

    fn example() -> Text {
        let mut text = Text { bytes: [0; 512], length: 0 };
        let lines: [&[&str]; 2] = [&["/in/0_a.raw", "/in/0_b.raw"], &["/in/1_a.raw", "/in/1_b.raw"]];
        let outputs = [
            OutputFile { index: 1u32, file_name: "probs.raw", float: true },
            OutputFile { index: 0, file_name: "logits.raw", float: true },
            OutputFile { index: 0, file_name: "logits_native.raw", float: false },
        ];
        let fields = Fields {
            context: 3,
            graph: 0,
            flags: 3,
            output_dir: "/out dir",
            keep: Some(1),
            native_inputs: 2,
            result_subdir: Some("g"),
            first_result: 7,
        };
        write(&mut text, &fields, outputs.into_iter(), lines.into_iter()).unwrap();
        text
    }

    #[test]
    fn a_job_round_trips() {
        let text = example();
        let job = Job::parse(&text.bytes[..text.length]).unwrap();
        assert_eq!((job.context, job.graph, job.flags, job.output_dir, job.keep), (3, 0, 3, &b"/out dir"[..], 1));
        assert_eq!((job.inference_count, job.output_count, job.result_subdir), (2, 3, Some(&b"g"[..])));
        assert_eq!(job.first_result, 7);
        assert_eq!((job.input_is_float(0), job.input_is_float(1), job.input_is_float(40)), (true, false, true));
        let mut outputs = job.outputs();
        assert_eq!(outputs.next(), Some(OutputFile { index: 1, file_name: &b"probs.raw"[..], float: true }));
        assert_eq!(outputs.next(), Some(OutputFile { index: 0, file_name: &b"logits.raw"[..], float: true }));
        assert_eq!(outputs.next(), Some(OutputFile { index: 0, file_name: &b"logits_native.raw"[..], float: false }));
        assert_eq!(outputs.next(), None);
        let mut inferences = job.inferences();
        let mut first = inferences.next().unwrap();
        assert_eq!(
            (first.next(), first.next(), first.next()),
            (Some(&b"/in/0_a.raw"[..]), Some(&b"/in/0_b.raw"[..]), None)
        );
        assert_eq!(inferences.count(), 1);
    }

    #[test]
    fn malformed_jobs_name_their_line() {
        let text = example();
        let good = &text.bytes[..text.length];
        let replace = |from: &str, to: &str| {
            let mut changed = [0u8; 600];
            let source = core::str::from_utf8(good).unwrap();
            let at = source.find(from).unwrap();
            let parts = [&good[..at], to.as_bytes(), &good[at + from.len()..]];
            let mut length = 0;
            for part in parts {
                changed[length..length + part.len()].copy_from_slice(part);
                length += part.len();
            }
            (changed, length)
        };
        for (from, to, line) in [
            ("lpai-job 1", "lpai-job 2", 1),
            ("context 3", "context x", 2),
            ("graph 0\n", "graph 0\ngraph 1\n", 4),
            ("output 1 probs.raw", "output 1 a/b.raw", 10),
            ("output_native 0", "output_native x", 12),
            ("native_inputs 2", "native_inputs -1", 7),
            ("result_subdir g", "result_subdir a/b", 8),
            ("inference /in/1_a.raw", "inference \t/in/1_a.raw", 14),
            ("first_result 7", "first_result x", 9),
            ("flags 3\n", "", 9),
        ] {
            let (changed, length) = replace(from, to);
            let refused = Job::parse(&changed[..length]).unwrap_err();
            assert_eq!(refused.line, line, "{from} -> {to}: {}", refused.what);
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
        };
        let mut bytes = [0u8; REPORT_BYTES];
        assert_eq!(report.encode(&mut bytes), Some(REPORT_BYTES));
        assert_eq!(Report::decode(&bytes), Some(report));
        assert_eq!(report.encode(&mut [0u8; REPORT_BYTES - 1]), None);
        bytes[0] ^= 1;
        assert_eq!(Report::decode(&bytes), None);
    }
}
