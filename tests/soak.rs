//! Soak: open/configure/load/execute/unload/close cycles, many of them, through the local transport (the host
//! skel on the host contract model, and a few on the real libQnnHtp.so) and through the virtual aDSP (the Hexagon
//! skel under the PD shell, on the Hexagon contract model). Every output is compared with the fixture's reference;
//! at the end what the skel and its process hold must be back to the start: open handles, loaded contexts, the
//! skel's memory blocks and bytes (sessions, arenas, job buffers) and libraries (the host skel's
//! `lpai_direct_skel_host_resources`, a host-only export), the host process's file descriptors (`/proc/self/fd`),
//! and the PD shell's heap, `apps_std` files and `dlopen`ed libraries (its resources frame).
//!
//! The cycles vary what they leave for close: some unload their context, some close with it still loaded, some
//! run the list as a direct-mode job (`run_job`, which writes files), some make a call that fails first.
//!
//! `LPAI_SOAK=long` runs the counts (10,000 local cycles, 1,000 on the virtual aDSP, and 200 on HTP); the
//! default, which CI runs, is 2,000, 100 and 20.

mod common;

use lpai_direct::job::{self, OutputFile};
use lpai_direct_stub::stub::fastrpc::{skel_uri, Domain};
use lpai_direct_stub::stub::{flags, Configuration, HostResources, Local, Qemu, QemuOptions, SkelLocation, Stub};
use lpai_direct_stub::stub::{IoBuffer, LoadRequest, Loaded, Transport};
use std::cell::RefCell;
use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Whether the long form runs (`LPAI_SOAK=long`).
fn long() -> bool {
    std::env::var("LPAI_SOAK").is_ok_and(|value| value == "long")
}

/// Cycles of each soak: (short form, long form).
const LOCAL_CYCLES: (usize, usize) = (2_000, 10_000);
const QEMU_CYCLES: (usize, usize) = (100, 1_000);
const HTP_CYCLES: (usize, usize) = (20, 200);

fn cycles(counts: (usize, usize)) -> usize {
    if long() {
        counts.1
    } else {
        counts.0
    }
}

/// How far apart two loads' arena use may be: the padding the backend's start alignment needs depends on where
/// the arena lands (the host platform gives 64-byte aligned memory).
const ALIGNMENT_SLACK: u32 = 256;

/// The soaks count this process's file descriptors and the host skel's resources, which every test of this
/// binary would change: they run one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// This process's open file descriptors.
fn host_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// The host fd count once it settles at `expected` (threads that hold a pipe, such as the qemu transport's stderr
/// relay, close it a moment after the process they read ends), or the count after 2 s.
fn settled_fds(expected: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let now = host_fds();
        if now == expected || Instant::now() > deadline {
            return now;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A contract fixture: its binary, float inputs and reference float outputs per line (the line's frame).
struct Fixture {
    binary: Vec<u8>,
    inputs: Vec<Vec<u8>>,
    references: Vec<Vec<u8>>,
    input_files: Vec<PathBuf>,
    output_name: &'static str,
}

impl Fixture {
    fn load(name: &str, binary: &str, output_name: &'static str, lines: usize) -> Fixture {
        let directory = common::fixture(name);
        let read = |relative: String| std::fs::read(directory.join(relative)).unwrap();
        Fixture {
            binary: read(binary.to_string()),
            inputs: (0..lines).map(|line| read(format!("inputs/float/{line}_0.raw"))).collect(),
            references: (0..lines).map(|line| read(format!("reference/float/Result_{line}/{output_name}"))).collect(),
            input_files: (0..lines).map(|line| directory.join(format!("inputs/float/{line}_0.raw"))).collect(),
            output_name,
        }
    }

    fn contract_single() -> Fixture {
        Fixture::load("contract_single", "contract_single.bin", "out.raw", 4)
    }

    fn kws_conv() -> Fixture {
        Fixture::load("kws_conv", "kws_conv_qnn.bin", "logits.raw", 3)
    }
}

/// What the cycles saw, for the closing line.
#[derive(Default, Debug)]
struct Tally {
    cycles: usize,
    executes: usize,
    jobs: usize,
    refused_first: usize,
    closed_loaded: usize,
    /// The lowest and highest arena use of a load.
    arena_used: Option<(u32, u32)>,
}

/// One open-to-close cycle `index` on `transport`: configure, load, describe, then 1 to 4 executes (frames 0..)
/// compared with the reference, or every 10th cycle the same lines as one direct-mode job into `work`; every 7th
/// cycle first makes an execute that the skel refuses (an output buffer too small); every 5th closes with the
/// context still loaded instead of unloading it.
fn cycle(
    index: usize,
    transport: Box<dyn Transport>,
    configuration: &Configuration,
    fixture: &Fixture,
    work: &Path,
    tally: &mut Tally,
) {
    let who = format!("cycle {index}");
    let uri = skel_uri(Domain::Adsp, None);
    let mut stub = Stub::open(transport, &uri).unwrap_or_else(|error| panic!("{who}: open: {error}"));
    stub.configure(configuration).unwrap_or_else(|error| panic!("{who}: configure: {error}"));
    let loaded = stub.load(&LoadRequest::bytes(&fixture.binary)).unwrap_or_else(|error| panic!("{who}: load: {error}"));
    let Loaded { context, graph_count } = loaded;
    assert_eq!(graph_count, 1, "{who}");
    let description = stub.describe(context, 0).unwrap_or_else(|error| panic!("{who}: describe: {error}"));
    // Every load of the same binary into a fresh arena uses as much of it, give or take the padding that the
    // backend's start alignment needs where the arena happens to land.
    let used = description.arena_used;
    let (low, high) = tally.arena_used.get_or_insert((used, used));
    (*low, *high) = ((*low).min(used), (*high).max(used));
    assert!(*high - *low <= ALIGNMENT_SLACK, "{who}: arena use {used} bytes, others {low} to {high}");
    let execute_flags = flags::FLOAT_INPUTS | flags::FLOAT_OUTPUTS;
    if index % 7 == 3 {
        let mut small = vec![0u8; fixture.references[0].len() - 1];
        let refused = stub.execute(context, 0, execute_flags, &fixture.inputs[0], &mut small);
        assert!(refused.is_err(), "{who}: an execute into a short output buffer succeeded");
        tally.refused_first += 1;
    }
    let lines = 1 + index % fixture.inputs.len();
    if index % 10 == 9 {
        let output_dir = work.join(format!("job-{index}"));
        let fields = job::Fields { flags: execute_flags, ..job::Fields::new(context, 0, output_dir.to_str().unwrap()) };
        let outputs = [OutputFile { index: 0, file_name: fixture.output_name, float: true }];
        let paths: Vec<[&str; 1]> = fixture.input_files[..lines].iter().map(|file| [file.to_str().unwrap()]).collect();
        let inferences: Vec<&[&str]> = paths.iter().map(|path| &path[..]).collect();
        let mut bytes = Vec::new();
        job::encode(&fields, &outputs, &inferences, &mut |part| bytes.extend_from_slice(part)).unwrap();
        std::fs::create_dir_all(&output_dir).unwrap();
        let report = stub.run_job(&bytes).unwrap_or_else(|error| panic!("{who}: run_job: {error}"));
        assert_eq!(report.inferences as usize, lines, "{who}");
        for (line, reference) in fixture.references[..lines].iter().enumerate() {
            let written = std::fs::read(output_dir.join(format!("Result_{line}/{}", fixture.output_name))).unwrap();
            assert!(written == *reference, "{who}: job line {line}: wrong bytes");
        }
        std::fs::remove_dir_all(&output_dir).unwrap();
        tally.jobs += 1;
    } else {
        for (line, (input, reference)) in fixture.inputs.iter().zip(&fixture.references).take(lines).enumerate() {
            let mut output = vec![0xA5u8; reference.len()];
            stub.execute(context, 0, execute_flags, input, &mut output)
                .unwrap_or_else(|error| panic!("{who}: execute of line {line}: {error}"));
            assert!(output == *reference, "{who}: execute of line {line}: wrong bytes");
            tally.executes += 1;
        }
    }
    if index % 5 == 4 {
        tally.closed_loaded += 1;
    } else {
        stub.unload(context).unwrap_or_else(|error| panic!("{who}: unload: {error}"));
    }
    stub.close().unwrap_or_else(|error| panic!("{who}: close: {error}"));
    tally.cycles += 1;
}

/// Runs `count` cycles through the host skel; answers what they saw, after checking that the skel's resources
/// and the process's file descriptors are back where they started (after `warm_up` cycles, for backends that keep
/// something process-wide from their first use).
fn soak_local(configuration: &Configuration, fixture: &Fixture, count: usize, warm_up: usize) -> Tally {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let work = tempfile::tempdir().unwrap();
    let local = Local::load(&SkelLocation::File { path: common::host_skel(), named_by: "the test" }).unwrap();
    let resources = || local.host_resources().expect("the host skel exports lpai_direct_skel_host_resources");
    let mut tally = Tally::default();
    for index in 0..warm_up {
        cycle(index, Box::new(local.clone()), configuration, fixture, work.path(), &mut tally);
    }
    let (start, start_fds) = (resources(), host_fds());
    assert_eq!(start, HostResources::default(), "nothing is open before the soak's cycles");
    let began = Instant::now();
    for index in warm_up..count {
        cycle(index, Box::new(local.clone()), configuration, fixture, work.path(), &mut tally);
        if index % 97 == 0 {
            // A snapshot between cycles: a cycle that leaked would show here long before the end.
            assert_eq!(resources(), start, "after cycle {index}: the skel holds more than at the start");
        }
    }
    let (end, end_fds) = (resources(), host_fds());
    println!(
        "soak (local, {}): {} cycles in {:.1} s, {} executes, {} jobs, {} refused calls, {} closes with a context \
         loaded; start {start:?}, {start_fds} fds; end {end:?}, {end_fds} fds",
        configuration.backend.to_str().unwrap(),
        count - warm_up,
        began.elapsed().as_secs_f64(),
        tally.executes,
        tally.jobs,
        tally.refused_first,
        tally.closed_loaded
    );
    assert_eq!(end, start, "the skel's handles, contexts, memory and libraries after {count} cycles");
    assert_eq!(end_fds, start_fds, "host file descriptors after {count} cycles");
    tally
}

#[test]
fn local_cycles_on_the_contract_model_leave_nothing_behind() {
    let configuration = common::contract_configuration(1 << 20);
    let count = cycles(LOCAL_CYCLES);
    let tally = soak_local(&configuration, &Fixture::contract_single(), count, 0);
    assert_eq!(tally.cycles, count);
    assert!(tally.jobs > 0 && tally.refused_first > 0 && tally.closed_loaded > 0, "{tally:?}");
}

#[test]
fn local_cycles_on_htp_leave_nothing_behind() {
    let _qnn = common::qnn_lock();
    let qnn = common::qnn_lib_dir();
    let configuration = Configuration {
        arena_bytes: 4 << 20,
        ..common::configuration(&qnn.join("libQnnHtp.so"), Some(&qnn.join("libQnnSystem.so")))
    };
    // libQnnHtp sets up process-wide state on its first use in a process; the counts start after one cycle.
    let count = cycles(HTP_CYCLES);
    let tally = soak_local(&configuration, &Fixture::kws_conv(), count, 1);
    assert_eq!(tally.cycles, count);
}

/// The qemu transport shared between the stubs of the cycles and the test, which asks the shell for its resources
/// between them.
#[derive(Clone)]
struct SharedQemu(Rc<RefCell<Qemu>>);

impl Transport for SharedQemu {
    fn name(&self) -> &'static str {
        "qemu"
    }

    fn place(&self) -> String {
        self.0.borrow().place()
    }

    fn open(&mut self, uri: &CStr) -> Result<u64, i32> {
        self.0.borrow_mut().open(uri)
    }

    unsafe fn invoke(&mut self, handle: u64, scalars: u32, args: *mut lpai_direct::codec::RemoteArg) -> i32 {
        // SAFETY: forwarded from the caller, who promises `args` matches `scalars`.
        unsafe { self.0.borrow_mut().invoke(handle, scalars, args) }
    }

    fn close(&mut self, handle: u64) -> i32 {
        self.0.borrow_mut().close(handle)
    }

    fn failure(&self) -> Option<String> {
        self.0.borrow().failure()
    }

    fn buffer(&mut self, bytes: usize) -> IoBuffer {
        self.0.borrow_mut().buffer(bytes)
    }
}

#[test]
fn virtual_adsp_cycles_leave_the_shells_heap_files_and_libraries_as_they_were() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let virtual_adsp = common::virtual_adsp;
    let configuration = Configuration {
        arena_bytes: 1 << 20,
        ..common::configuration(&virtual_adsp("libQnnLpaiContract.so"), Some(&virtual_adsp("libQnnSystemContract.so")))
    };
    let fixture = Fixture::contract_single();
    let work = tempfile::tempdir().unwrap();
    let fds_before = host_fds();
    let options = QemuOptions {
        skel: Some(virtual_adsp("liblpai_direct_skel.so")),
        shell: Some(virtual_adsp("lpai-pd-shell")),
        trace: None,
        ..QemuOptions::default()
    };
    let qemu = Rc::new(RefCell::new(Qemu::start(&options).unwrap()));
    let resources = || qemu.borrow_mut().shell_resources().expect("the shell answers its resources frame");
    let (start, start_fds) = (resources(), host_fds());
    assert_eq!((start.files, start.libraries), (0, 0), "the shell holds no file or library before the first open");
    let count = cycles(QEMU_CYCLES);
    let mut tally = Tally::default();
    let began = Instant::now();
    for index in 0..count {
        cycle(index, Box::new(SharedQemu(qemu.clone())), &configuration, &fixture, work.path(), &mut tally);
        if index % 29 == 0 {
            assert_eq!(resources(), start, "after cycle {index}: the shell holds more than at the start");
        }
    }
    let (end, end_fds) = (resources(), host_fds());
    println!(
        "soak (virtual aDSP): {count} cycles in {:.1} s, {} executes, {} jobs, {} refused calls, {} closes with a \
         context loaded; shell start {start:?}, end {end:?}; host fds {start_fds} then {end_fds}",
        began.elapsed().as_secs_f64(),
        tally.executes,
        tally.jobs,
        tally.refused_first,
        tally.closed_loaded
    );
    assert_eq!(end, start, "the shell's heap, files and libraries after {count} cycles");
    assert_eq!(end_fds, start_fds, "host file descriptors after {count} cycles");
    assert_eq!(qemu.borrow().guard_violations(), 0, "the skel wrote outside its buffers");
    assert_eq!(tally.cycles, count);
    drop(qemu);
    assert_eq!(settled_fds(fds_before), fds_before, "host file descriptors once the virtual aDSP has ended");
}
