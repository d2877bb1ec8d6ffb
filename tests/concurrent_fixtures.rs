//! Every fixture at once: four host threads, each with its own skel handle, run every fixture (the ONNX fixtures of
//! `common::FIXTURES` on the real libQnnHtp.so, both graphs of the two-graph binary, and the two contract fixtures on
//! the host contract model), in float and in native mode, each thread starting at a different fixture so that
//! different fixtures load and execute at the same moment; every output must be byte for byte what one thread running
//! the same jobs one after the other got (and that run must equal the fixtures' references). Through the local
//! transport (the host skel in process) and through the FastRPC transport on the stand-in libadsprpc
//! (`tests/fake-adsprpc`, which carries its own copy of the skel), so both the stub's transports and the skel's
//! handle table, vendor-call lock and per-handle state see real concurrent use.

mod common;

use lpai_direct_stub::stub::fastrpc::{skel_uri, FastRpc, FastRpcOptions};
use lpai_direct_stub::stub::{flags, Configuration, LoadRequest, Loaded, Local, SkelLocation, Stub, Transport};
use lpai_net_run::graph_io;
use lpai_net_run::output;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

/// Threads with a handle of their own.
const THREADS: usize = 4;
/// How many times each thread runs the whole set of jobs.
const ROUNDS: usize = 2;

/// One graph of a fixture: its index in the binary, and the directory with its input lists and references.
struct GraphFiles {
    name: String,
    directory: PathBuf,
}

/// A fixture: its binary, its backend and system library, and its graphs.
struct Fixture {
    name: &'static str,
    binary: Vec<u8>,
    configuration: Configuration,
    graphs: Vec<GraphFiles>,
}

/// Every fixture of `tests/fixtures`.
fn fixtures() -> Vec<Fixture> {
    let qnn = common::qnn_lib_dir();
    let htp = Configuration {
        arena_bytes: 4 << 20,
        ..common::configuration(&qnn.join("libQnnHtp.so"), Some(&qnn.join("libQnnSystem.so")))
    };
    let contract = common::contract_configuration(1 << 20);
    let manifest = |directory: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(directory.join("manifest.json")).unwrap()).unwrap()
    };
    let mut all = Vec::new();
    let others = ["two_graphs", "contract_single", "contract_stream"];
    for name in common::FIXTURES.into_iter().chain(others) {
        let directory = common::fixture(name);
        let description = manifest(&directory);
        let graphs = match description["graphs"].as_array() {
            Some(graphs) => graphs
                .iter()
                .enumerate()
                .map(|(index, graph)| GraphFiles {
                    name: graph["graph_name"].as_str().unwrap().to_string(),
                    directory: directory.join("graphs").join(index.to_string()),
                })
                .collect(),
            None => vec![GraphFiles {
                name: description["graph_name"].as_str().unwrap().to_string(),
                directory: directory.clone(),
            }],
        };
        let binary = description["context_binary"].as_str().map_or(format!("{name}_qnn.bin"), str::to_string);
        let configuration = if name.starts_with("contract_") { contract.clone() } else { htp.clone() };
        all.push(Fixture { name, binary: std::fs::read(directory.join(binary)).unwrap(), configuration, graphs });
    }
    all
}

/// One job: a fixture in one mode.
#[derive(Clone, Copy)]
struct Job {
    fixture: usize,
    native: bool,
}

/// Where an output came from: fixture, mode, graph, input line.
type Key = (&'static str, &'static str, String, usize);
/// Every output of a set of jobs.
type Outputs = BTreeMap<Key, Vec<u8>>;

/// The input buffer of one line of an input list (`name:=path` entries or bare paths in graph order), in the graph's
/// input order.
fn line_inputs(directory: &Path, line: &str, input_names: &[String]) -> Vec<u8> {
    let entries: Vec<&str> = line.split_whitespace().collect();
    let mut inputs = Vec::new();
    for (position, name) in input_names.iter().enumerate() {
        let path = entries
            .iter()
            .find_map(|entry| entry.split_once(":=").filter(|(entry_name, _)| entry_name == name).map(|(_, path)| path))
            .unwrap_or_else(|| entries[position]);
        inputs.extend(std::fs::read(directory.join(path)).unwrap());
    }
    inputs
}

/// Runs `job` on `stub`: configure, load, every line of every graph of the fixture (frames in order), unload.
fn run_job(stub: &mut Stub, fixture: &Fixture, job: Job, outputs: &mut Outputs, who: &str) {
    let mode = if job.native { "native" } else { "float" };
    let who = format!("{who}: {} {mode}", fixture.name);
    stub.configure(&fixture.configuration).unwrap_or_else(|error| panic!("{who}: configure: {error}"));
    let loaded = stub.load(&LoadRequest::bytes(&fixture.binary)).unwrap_or_else(|error| panic!("{who}: load: {error}"));
    let Loaded { context, graph_count } = loaded;
    let descriptions: Vec<_> = (0..graph_count)
        .map(|graph| stub.describe(context, graph).unwrap_or_else(|error| panic!("{who}: describe: {error}")))
        .collect();
    let execute_flags = if job.native { 0 } else { flags::FLOAT_INPUTS | flags::FLOAT_OUTPUTS };
    for files in &fixture.graphs {
        let graph = descriptions.iter().position(|graph| graph.name == files.name).expect("the graph is in the binary");
        let description = &descriptions[graph];
        let input_names: Vec<String> = description.inputs.iter().map(|tensor| tensor.name.clone()).collect();
        let output_bytes: usize = graph_io::wire_sizes(&description.outputs, !job.native).iter().sum();
        let list = std::fs::read_to_string(files.directory.join(format!("input_list_{mode}.txt"))).unwrap();
        for (line, text) in list.lines().filter(|text| !text.trim().is_empty()).enumerate() {
            let inputs = line_inputs(&files.directory, text, &input_names);
            let mut input_buffer = stub.transport().buffer(inputs.len());
            input_buffer.copy_from_slice(&inputs);
            let mut output_buffer = stub.transport().buffer(output_bytes);
            let executed = stub
                .execute(context, graph as u32, execute_flags, &input_buffer, &mut output_buffer)
                .unwrap_or_else(|error| panic!("{who}: graph {} line {line}: {error}", files.name));
            assert_eq!(executed.outputs_bytes, output_bytes, "{who}: graph {} line {line}", files.name);
            outputs.insert((fixture.name, mode, files.name.clone(), line), output_buffer.to_vec());
        }
    }
    stub.unload(context).unwrap_or_else(|error| panic!("{who}: unload: {error}"));
}

/// Every job of every fixture, in both modes.
fn all_jobs(fixtures: &[Fixture]) -> Vec<Job> {
    (0..fixtures.len()).flat_map(|fixture| [false, true].map(|native| Job { fixture, native })).collect()
}

/// The sequential run's outputs against the fixtures' reference files, output by output.
fn check_against_references(fixtures: &[Fixture], outputs: &Outputs, transport: &str) {
    let mut compared = 0;
    for ((fixture_name, mode, graph, line), bytes) in outputs {
        let fixture = fixtures.iter().find(|fixture| fixture.name == *fixture_name).unwrap();
        let files = fixture.graphs.iter().find(|files| files.name == *graph).unwrap();
        let reference = files.directory.join("reference").join(mode).join(format!("Result_{line}"));
        // The reference files are the outputs in graph order; in float mode a float32 tensor's file is its bytes
        // too, so the buffer is the files back to back in the order the fixture's manifest lists the outputs.
        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(common::fixture(fixture.name).join("manifest.json")).unwrap(),
        )
        .unwrap();
        let outputs_of = |value: &serde_json::Value| -> Vec<String> {
            value["outputs"].as_array().unwrap().iter().map(|o| o["qnn_name"].as_str().unwrap().to_string()).collect()
        };
        let names = match manifest["graphs"].as_array() {
            Some(graphs) => outputs_of(graphs.iter().find(|g| g["graph_name"] == graph.as_str()).unwrap()),
            None => outputs_of(&manifest),
        };
        let expected: Vec<u8> =
            names.iter().flat_map(|name| std::fs::read(reference.join(output::file_name(name))).unwrap()).collect();
        assert!(
            *bytes == expected,
            "{transport}: the sequential run of {fixture_name} {mode} graph {graph} line {line} differs from the reference"
        );
        compared += 1;
    }
    assert!(compared >= 40, "{transport}: only {compared} outputs compared with references");
}

/// Runs every job once on one thread, then on [`THREADS`] threads at once, each with its own handle through its own
/// transport from `transport`, [`ROUNDS`] times, starting at different fixtures; every concurrent output must equal
/// the sequential one.
fn every_fixture_at_once(transport_name: &str, transport: impl Fn() -> Box<dyn Transport> + Sync) {
    let _qnn = common::qnn_lock();
    let fixtures = fixtures();
    let jobs = all_jobs(&fixtures);
    let uri = skel_uri(lpai_direct_stub::stub::fastrpc::Domain::Adsp, None);

    let mut sequential = Outputs::new();
    let mut stub = Stub::open(transport(), &uri).unwrap();
    for &job in &jobs {
        run_job(&mut stub, &fixtures[job.fixture], job, &mut sequential, "sequential");
    }
    stub.close().unwrap();
    check_against_references(&fixtures, &sequential, transport_name);

    let start = Arc::new(Barrier::new(THREADS));
    let concurrent: Vec<Outputs> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (fixtures, jobs, transport, start, uri) = (&fixtures, &jobs, &transport, start.clone(), &uri);
                scope.spawn(move || {
                    let mut stub = Stub::open(transport(), uri).unwrap();
                    let mut outputs = Outputs::new();
                    start.wait();
                    for round in 0..ROUNDS {
                        let mut seen = Outputs::new();
                        // Each thread starts a quarter of the way further into the jobs than the one before.
                        let first = thread * jobs.len() / THREADS;
                        for step in 0..jobs.len() {
                            let job = jobs[(first + step) % jobs.len()];
                            let who = format!("thread {thread} round {round}");
                            run_job(&mut stub, &fixtures[job.fixture], job, &mut seen, &who);
                        }
                        if round == 0 {
                            outputs = seen;
                        } else {
                            assert!(seen == outputs, "thread {thread}: round {round} differs from round 0");
                        }
                    }
                    stub.close().unwrap();
                    outputs
                })
            })
            .collect();
        threads.into_iter().map(|thread| thread.join().expect("a thread failed (see its message)")).collect()
    });
    for (thread, outputs) in concurrent.iter().enumerate() {
        assert_eq!(outputs.len(), sequential.len(), "{transport_name}: thread {thread} ran every line");
        for (key, bytes) in outputs {
            assert!(
                sequential[key] == *bytes,
                "{transport_name}: thread {thread}: {key:?} differs from the sequential run"
            );
        }
    }
    println!(
        "{transport_name}: {} fixtures, {} jobs, {} outputs per run; {THREADS} threads x {ROUNDS} rounds equal to the \
         sequential run",
        fixtures.len(),
        jobs.len(),
        sequential.len()
    );
}

#[test]
fn four_threads_running_every_fixture_at_once_through_the_local_transport_match_the_sequential_run() {
    let local = Local::load(&SkelLocation::File { path: common::host_skel(), named_by: "the test" }).unwrap();
    every_fixture_at_once("local", || Box::new(local.clone()));
}

#[test]
fn four_threads_running_every_fixture_at_once_through_fastrpc_on_the_stand_in_match_the_sequential_run() {
    let fake = common::artifact("target/debug/libfake_adsprpc.so", "cargo build -p fake-adsprpc");
    let options = FastRpcOptions { libraries: vec![fake.display().to_string()], ..FastRpcOptions::default() };
    every_fixture_at_once("fastrpc", || {
        let fastrpc = FastRpc::load(options.clone()).unwrap();
        assert_eq!(fastrpc.library_name(), fake.display().to_string());
        Box::new(fastrpc)
    });
}
