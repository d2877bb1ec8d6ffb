//! Benchmark: the wall time of one kws_conv inference, inputs in memory to outputs in memory, four ways in one run
//! on the real libQnnHtp.so, interleaved in rounds so drift hits all alike: the floor (a bare loop calling
//! graphExecute through the QNN function table on native tensors already in place), lpai-net-run's direct mode
//! (the skel's in-memory span per inference; its file I/O reported apart), the traditional path (the stub's execute
//! over the local transport, float in and out) and ONNX Runtime's QNN EP on the same binary (`scripts/bench_ort.py`
//! as a child process). Prints a table and writes the figures as JSON, whole or not at all.
//!
//! ```text
//! cargo run --release -p lpai-net-run --example walltime -- --qnn QNN_LIB_DIR --fixture FIXTURE_DIR \
//!     --net-run target/release/lpai-net-run --python .venv/bin/python --ort-script scripts/bench_ort.py \
//!     --json target/bench/walltime.json [--runs 300] [--rounds 10] [--warmup 10]
//! ```
//! The host skel is found as the local transport finds it (`$LPAI_DIRECT_SKEL`, else `target/release/`).

use anyhow::{anyhow, bail, Context as _, Result};
use lpai_direct_skel::platform::VendorCalls;
use lpai_direct_skel::runtime::{Arena, BackendOptions, Binary, Context, Libraries, LoadRequest};
use lpai_direct_stub::stub::{fastrpc, flags, Configuration, IoBuffer, Local, SkelLocation, Stub};
use lpai_net_run::profile::nearest_rank_of;
use std::collections::HashMap;
use std::ffi::CString;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// The command line's `--name value` pairs.
struct Arguments(HashMap<String, String>);

impl Arguments {
    fn parse() -> Result<Arguments> {
        let mut pairs = HashMap::new();
        let mut words = std::env::args().skip(1);
        while let Some(name) = words.next() {
            let key = name.strip_prefix("--").with_context(|| format!("expected --name value, got {name}"))?;
            let value = words.next().with_context(|| format!("{name} needs a value"))?;
            pairs.insert(key.to_string(), value);
        }
        Ok(Arguments(pairs))
    }

    fn path(&self, name: &str) -> Result<PathBuf> {
        self.0.get(name).map(PathBuf::from).with_context(|| format!("--{name} is required"))
    }

    fn count(&self, name: &str, default: usize) -> Result<usize> {
        self.0.get(name).map_or(Ok(default), |text| text.parse().with_context(|| format!("--{name} {text}")))
    }
}

fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.to_string_lossy().into_owned()).with_context(|| format!("{} holds a NUL", path.display()))
}

/// The fixture's input files of one kind (`float` or `native`), in input-list order.
fn inputs(fixture: &Path, kind: &str) -> Result<Vec<Vec<u8>>> {
    let list = std::fs::read_to_string(fixture.join(format!("input_list_{kind}.txt")))?;
    list.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let file = line.rsplit(":=").next().unwrap_or(line).trim();
            std::fs::read(fixture.join(file)).with_context(|| format!("input file {file}"))
        })
        .collect()
}

/// Microseconds of a duration, as a float.
fn micros(elapsed: std::time::Duration) -> f64 {
    elapsed.as_secs_f64() * 1e6
}

/// The floor: graphExecute through the function table, nothing else inside the span.
struct Floor<'a> {
    context: Context<'a>,
    natives: Vec<Vec<u8>>,
    position: usize,
    micros: Vec<f64>,
}

impl Floor<'_> {
    /// Runs `count` inferences, each on the next native input (copied in before the span); keeps their times when
    /// `timed`, and answers the last inference's output bytes.
    fn run(&mut self, count: usize, timed: bool) -> Result<Vec<u8>> {
        let graph = self.context.graph_mut(0).context("the context has no graph")?;
        for _ in 0..count {
            let native = &self.natives[self.position % self.natives.len()];
            self.position += 1;
            graph.input_bytes_mut(0).context("no input 0")?.copy_from_slice(native);
            let raw = graph.raw_execute().context("the backend has no graphExecute")?;
            let started = Instant::now();
            // SAFETY: the graph's own handle and tensor arrays (their buffers in the arena), alive and untouched
            // while the call runs; no profile, no signal.
            let status = unsafe {
                (raw.function)(
                    raw.graph,
                    raw.inputs,
                    raw.input_count,
                    raw.outputs,
                    raw.output_count,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            let elapsed = started.elapsed();
            if lpai_direct::qnn::error::code(status) != 0 {
                bail!("graphExecute failed: {}", lpai_direct::qnn::error::code(status));
            }
            if timed {
                self.micros.push(micros(elapsed));
            }
        }
        Ok(graph.output_bytes(0).context("no output 0")?.to_vec())
    }
}

/// lpai-net-run's direct mode: one run of the command per round, its in-memory spans and file I/O read back from
/// its record.
struct Direct {
    net_run: PathBuf,
    qnn: PathBuf,
    fixture: PathBuf,
    work: PathBuf,
    warmup: usize,
    jobs: usize,
    micros: Vec<f64>,
    file_io: Vec<f64>,
    execute: Vec<f64>,
}

impl Direct {
    fn run(&mut self, count: usize) -> Result<()> {
        let output = self.work.join(format!("direct-{}", self.jobs));
        self.jobs += 1;
        let ran = Command::new(&self.net_run)
            .current_dir(&self.fixture)
            .arg("--backend")
            .arg(self.qnn.join("libQnnHtp.so"))
            .args(["--retrieve_context", "kws_conv_qnn.bin", "--input_list", "input_list_float.txt"])
            .args(["--transport", "local", "--direct_mode", "--num_inferences"])
            .arg((count + self.warmup).to_string())
            .arg("--output_dir")
            .arg(&output)
            .output()?;
        if !ran.status.success() {
            bail!("lpai-net-run --direct_mode failed: {}", String::from_utf8_lossy(&ran.stderr));
        }
        let record: serde_json::Value = serde_json::from_slice(&std::fs::read(output.join("lpai_net_run.json"))?)?;
        let series = |key: &str| -> Result<Vec<f64>> {
            let values = record[key].as_array().with_context(|| format!("the record has no {key}"))?;
            let values: Vec<f64> = values.iter().filter_map(serde_json::Value::as_f64).collect();
            if values.len() != count + self.warmup {
                bail!("the record's {key} holds {} times, not {}", values.len(), count + self.warmup);
            }
            Ok(values.into_iter().skip(self.warmup).collect())
        };
        self.micros.extend(series("dsp_in_memory_us")?);
        self.file_io.extend(series("dsp_file_io_us")?);
        self.execute.extend(series("dsp_execute_us")?);
        std::fs::remove_dir_all(&output)?;
        Ok(())
    }
}

/// The traditional path: the stub's execute over the local transport, float inputs and outputs in memory.
struct Traditional {
    stub: Stub,
    context: i32,
    floats: Vec<Vec<u8>>,
    input: IoBuffer,
    output: IoBuffer,
    position: usize,
    micros: Vec<f64>,
    /// The skel's clock around graphExecute in the same calls, and its ticks per second.
    execute: Vec<f64>,
    clock_hz: f64,
}

impl Traditional {
    fn run(&mut self, count: usize, timed: bool) -> Result<()> {
        for _ in 0..count {
            self.input.copy_from_slice(&self.floats[self.position % self.floats.len()]);
            self.position += 1;
            let started = Instant::now();
            let executed = self.stub.execute(
                self.context,
                0,
                flags::FLOAT_INPUTS | flags::FLOAT_OUTPUTS,
                &self.input,
                &mut self.output,
            )?;
            let elapsed = started.elapsed();
            if timed {
                self.micros.push(micros(elapsed));
                self.execute.push(executed.dsp_ticks as f64 * 1e6 / self.clock_hz);
            }
        }
        Ok(())
    }
}

/// The peer: `bench_ort.py` as a child process, asked for `count` timed runs at a time.
struct Ort {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    ready: serde_json::Value,
    micros: Vec<f64>,
}

impl Ort {
    fn start(python: &Path, script: &Path, fixture: &Path, qnn: &Path, warmup: usize) -> Result<Ort> {
        let mut child = Command::new(python)
            .arg(script)
            .arg(fixture)
            .arg(qnn)
            .arg(warmup.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {} {}", python.display(), script.display()))?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
        let mut ort = Ort { child, stdin, stdout, ready: serde_json::Value::Null, micros: Vec::new() };
        // Libraries may print their own lines on stdout: the reply is the first line that parses.
        ort.ready =
            ort.reply(|line| serde_json::from_str::<serde_json::Value>(line).ok().filter(|v| v["ready"] == true))?;
        Ok(ort)
    }

    fn reply<T>(&mut self, parse: impl Fn(&str) -> Option<T>) -> Result<T> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("bench_ort.py ended early (status {:?})", self.child.wait()?);
            }
            if let Some(value) = parse(line.trim()) {
                return Ok(value);
            }
        }
    }

    fn run(&mut self, count: usize) -> Result<()> {
        writeln!(self.stdin, "run {count}")?;
        self.stdin.flush()?;
        let times = self.reply(|line| {
            let times: Option<Vec<f64>> =
                line.split(' ').map(|word| word.parse::<u64>().ok().map(|ns| ns as f64 / 1e3)).collect();
            times.filter(|times| times.len() == count)
        })?;
        self.micros.extend(times);
        Ok(())
    }

    fn quit(&mut self) -> Result<()> {
        writeln!(self.stdin, "quit")?;
        self.stdin.flush()?;
        let status = self.child.wait()?;
        if !status.success() {
            bail!("bench_ort.py: {status}");
        }
        Ok(())
    }
}

/// The nearest-rank `percent`-th percentile of `values` (sorted here): the value at rank ⌈percent·n/100⌉.
fn percentile(values: &[f64], percent: u32) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    nearest_rank_of(&sorted, percent).unwrap_or(f64::NAN)
}

/// Rounds to tenths.
fn tenths(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// Rounds to thousandths.
fn thousandths(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

fn main() -> Result<()> {
    let arguments = Arguments::parse()?;
    let (qnn, fixture) = (arguments.path("qnn")?, std::fs::canonicalize(arguments.path("fixture")?)?);
    let json = arguments.path("json")?;
    let runs = arguments.count("runs", 300)?;
    let rounds = arguments.count("rounds", 10)?.clamp(1, runs.max(1));
    let warmup = arguments.count("warmup", 10)?;
    let work = tempfile::tempdir()?;
    let binary_path = fixture.join("kws_conv_qnn.bin");
    let (floats, natives) = (inputs(&fixture, "float")?, inputs(&fixture, "native")?);

    // The floor, loaded with the runtime's own API.
    let (backend, system) = (c_path(&qnn.join("libQnnHtp.so"))?, c_path(&qnn.join("libQnnSystem.so"))?);
    let libraries =
        Libraries::open(&backend, Some(&system), &BackendOptions::default()).map_err(|e| anyhow!("{}", e.error))?;
    let mut memory = vec![0u8; 4 << 20];
    let arena = Arena::new(&mut memory);
    let binary = c_path(&binary_path)?;
    let context = Context::load(&VendorCalls::lock(), &libraries, &arena, &LoadRequest::new(Binary::File(&binary)))
        .map_err(|e| anyhow!("{e}"))?;
    let mut floor = Floor { context, natives, position: 0, micros: Vec::new() };
    // The floor does the real work: its outputs are the fixture's native reference.
    for line in 0..floor.natives.len() {
        let output = floor.run(1, false)?;
        let reference = fixture.join(format!("reference/native/Result_{line}/logits.raw"));
        if output != std::fs::read(&reference)? {
            bail!("the floor's output for line {line} differs from {}", reference.display());
        }
    }
    floor.run(warmup, false)?;

    let local = Local::load(&SkelLocation::Search)?;
    let skel = local.path().display().to_string();
    let mut stub = Stub::open(Box::new(local), &fastrpc::skel_uri(fastrpc::Domain::Adsp, None))?;
    let (backend, system) = (c_path(&qnn.join("libQnnHtp.so"))?, c_path(&qnn.join("libQnnSystem.so"))?);
    stub.configure(&Configuration::with_libraries(backend, system, 4 << 20))?;
    // The traditional path sends the binary's bytes, by the stub's own load request.
    let binary_bytes = std::fs::read(&binary_path)?;
    let context = stub.load(&lpai_direct_stub::stub::LoadRequest::bytes(&binary_bytes))?.context;
    let description = stub.describe(context, 0)?;
    let output_bytes =
        description.outputs.iter().map(|tensor| lpai_net_run::graph_io::wire_bytes(true, tensor)).sum::<usize>();
    let input = stub.transport().buffer(floats[0].len());
    let output = stub.transport().buffer(output_bytes);
    let clock_hz = f64::from(stub.describe(context, 0)?.clock_hz.max(1));
    let mut traditional = Traditional {
        stub,
        context,
        floats,
        input,
        output,
        position: 0,
        micros: Vec::new(),
        execute: Vec::new(),
        clock_hz,
    };
    traditional.run(warmup, false)?;

    let mut direct = Direct {
        net_run: std::fs::canonicalize(arguments.path("net-run")?)?,
        qnn: qnn.clone(),
        fixture: fixture.clone(),
        work: work.path().to_path_buf(),
        warmup,
        jobs: 0,
        micros: Vec::new(),
        file_io: Vec::new(),
        execute: Vec::new(),
    };
    let script = std::fs::canonicalize(arguments.path("ort-script")?)?;
    let mut ort = Ort::start(&arguments.path("python")?, &script, &fixture, &qnn, warmup)?;

    // Rounds: each path runs its share in turn, the order rotating from round to round.
    for round in 0..rounds {
        let batch = runs / rounds + usize::from(round < runs % rounds);
        for step in 0..4 {
            match (round + step) % 4 {
                0 => drop(floor.run(batch, true)?),
                1 => direct.run(batch)?,
                2 => traditional.run(batch, true)?,
                _ => ort.run(batch)?,
            }
        }
        eprintln!("walltime: round {} of {rounds} done", round + 1);
    }
    let ready = ort.ready.clone();
    ort.quit()?;

    let floor_median = percentile(&floor.micros, 50);
    let rows = [
        ("floor (bare graphExecute)", &floor.micros, "floor"),
        ("direct mode (in-memory span)", &direct.micros, "direct"),
        ("traditional (stub execute, local)", &traditional.micros, "traditional"),
        ("ORT QNN EP (session.run)", &ort.micros, "ort"),
    ];
    println!(
        "kws_conv on {}, {runs} runs per path in {rounds} rounds ({warmup} warm-up runs not counted)",
        qnn.display()
    );
    println!("host skel: {skel}; ORT: {ready}");
    println!(
        "{:<36} {:>10} {:>10} {:>10}",
        "path (inputs in memory to outputs in memory)", "median us", "p99 us", "/ floor"
    );
    let mut figures = serde_json::Map::new();
    for (name, series, key) in rows {
        let (median, p99) = (percentile(series, 50), percentile(series, 99));
        println!("{name:<36} {median:>10.1} {p99:>10.1} {:>10.3}", median / floor_median);
        figures.insert(format!("walltime_{key}_median_us"), tenths(median).into());
        figures.insert(format!("walltime_{key}_p99_us"), tenths(p99).into());
        if key != "floor" {
            figures.insert(format!("ratio_{key}_to_floor"), thousandths(median / floor_median).into());
        }
    }
    let (io_median, io_p99) = (percentile(&direct.file_io, 50), percentile(&direct.file_io, 99));
    println!("{:<36} {io_median:>10.1} {io_p99:>10.1}   (not in the ratio)", "direct mode file reading/writing");
    // Where direct mode's span goes: its graphExecute alone (the runtime's execute) in the same inferences.
    let (execute_median, execute_p99) = (percentile(&direct.execute, 50), percentile(&direct.execute, 99));
    println!(
        "{:<36} {execute_median:>10.1} {execute_p99:>10.1} {:>10.3}   (inside the span)",
        "direct mode, execute alone",
        execute_median / floor_median
    );
    figures.insert("walltime_direct_execute_median_us".into(), tenths(execute_median).into());
    // Our own share of the span, inference by inference: the span minus its execute (the conversions, the clock).
    let own: Vec<f64> = direct.micros.iter().zip(&direct.execute).map(|(span, execute)| span - execute).collect();
    let (own_median, own_p99) = (percentile(&own, 50), percentile(&own, 99));
    println!("{:<36} {own_median:>10.1} {own_p99:>10.1}   (span - execute)", "direct mode, conversions");
    figures.insert("walltime_direct_conversion_median_us".into(), tenths(own_median).into());
    // The traditional path's own share the same way: each round trip minus the skel's execute inside it (the
    // encoding, the local transport, the skel's decode and conversions, the reply).
    let own: Vec<f64> =
        traditional.micros.iter().zip(&traditional.execute).map(|(trip, execute)| trip - execute).collect();
    let (own_median, own_p99) = (percentile(&own, 50), percentile(&own, 99));
    println!("{:<36} {own_median:>10.1} {own_p99:>10.1}   (round trip - execute)", "traditional, the stub and skel");
    figures.insert("walltime_traditional_own_median_us".into(), tenths(own_median).into());
    figures.insert("walltime_direct_file_io_median_us".into(), tenths(io_median).into());
    figures.insert("walltime_direct_file_io_p99_us".into(), tenths(io_p99).into());
    figures.insert("walltime_runs".into(), runs.into());
    figures.insert("walltime_rounds".into(), rounds.into());
    figures.insert("walltime_warmup_runs".into(), warmup.into());
    figures.insert("walltime_ort".into(), ready);

    let text = serde_json::to_string_pretty(&serde_json::Value::Object(figures))? + "\n";
    if let Some(directory) = json.parent().filter(|directory| !directory.as_os_str().is_empty()) {
        std::fs::create_dir_all(directory)?;
    }
    let partial = json.with_extension("json.partial");
    std::fs::write(&partial, text)?;
    std::fs::rename(&partial, &json)?;
    println!("figures written to {}", json.display());
    Ok(())
}
