//! The `qemu` transport, the virtual aDSP: starts the PD shell (`lpai-pd-shell`, a static Hexagon program)
//! under qemu-hexagon once per session. The shell loads the Hexagon skel `.so` with its own ELF loader, as the
//! aDSP's loader does, and runs each call this transport frames to it (`lpai_direct::shell_frame`) over a pipe:
//! real Hexagon instructions of the skel that would be pushed to a device, reached through the same stub code.

use super::transport::Transport;
use super::workspace;
use lpai_direct::aee;
use lpai_direct::codec::RemoteArg;
use lpai_direct::shell_frame::{self, BufferSpec, FrameReader, FrameWriter, RegionSpec, ShellResources, NO_REGION};
use std::collections::VecDeque;
use std::ffi::CStr;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The emulator, looked up on `PATH`.
pub const QEMU_PROGRAM: &str = "qemu-hexagon";
/// The CPU it emulates: the newest qemu-hexagon knows.
pub const QEMU_CPU: &str = "v73";
/// The PD shell's file name.
pub const SHELL_FILE_NAME: &str = "lpai-pd-shell";
/// Where `scripts/build-hexagon.sh` leaves the virtual aDSP, under the workspace root.
pub const VIRTUAL_ADSP_DIRECTORY: &str = "target/virtual-adsp";
/// The code a call answers when the shell is gone or answered garbage (the FastRPC layer failed).
pub const TRANSPORT_FAILED: i32 = aee::ERPC as i32;
/// Stderr lines of the shell kept for error messages.
const KEPT_LINES: usize = 20;

/// What the qemu transport runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QemuOptions {
    /// The Hexagon skel `.so` the shell loads (`None`: the v73 build in `target/virtual-adsp/`).
    pub skel: Option<PathBuf>,
    /// The PD shell (`None`: `target/virtual-adsp/lpai-pd-shell`).
    pub shell: Option<PathBuf>,
    /// For the packet benchmark: qemu-hexagon writes one line per executed packet to this file
    /// (`-one-insn-per-tb -d exec,nochain -D FILE`) and the shell writes where it loaded each library to
    /// `FILE.map` (`--map`), so that each packet's address can be given to a library's symbol. Slow.
    pub trace: Option<PathBuf>,
    /// Directories the PD's `dlopen` searches for a bare library name, in order, before the skel's own
    /// (`--library-path`): the DSP loader's search path.
    pub library_path: Vec<PathBuf>,
    /// Further options for the shell, before the skel (`--require-signature`, `--restart-after N`, ...).
    pub shell_options: Vec<String>,
    /// Where the PD's log lines go once it runs (`None`: this process's stderr); each line is appended.
    pub log: Option<PathBuf>,
}

/// Why the virtual aDSP cannot start.
#[derive(Debug, thiserror::Error)]
pub enum QemuError {
    /// qemu-hexagon is not installed.
    #[error("{QEMU_PROGRAM} is not on PATH: --transport qemu runs the Hexagon skel under it (Debian package qemu-user; scripts/setup.sh installs it)")]
    NoQemu,
    /// A named or default file does not exist.
    #[error("the {what} {} does not exist{hint}", path.display())]
    Missing {
        /// "Hexagon skel" or "PD shell".
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// How to get it.
        hint: String,
    },
    /// qemu-hexagon could not be started.
    #[error("cannot start {QEMU_PROGRAM}: {0}")]
    Start(std::io::Error),
    /// The shell ended before it was ready (it could not load the skel, or qemu failed).
    #[error("the virtual aDSP did not start ({status}): {reason}")]
    Refused {
        /// How the process ended.
        status: String,
        /// The shell's last stderr line.
        reason: String,
    },
    /// The shell's first frame was not the ready frame.
    #[error("the PD shell {} answered garbage instead of its ready frame", shell.display())]
    Garbage {
        /// The shell.
        shell: PathBuf,
    },
}

/// `program` on `PATH`, if there.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|directory| directory.join(program)).find(|candidate| candidate.is_file())
}

/// `given` if set (it must exist), else the file in the workspace's `target/virtual-adsp/`.
fn existing(given: &Option<PathBuf>, default_name: &str, what: &'static str, flag: &str) -> Result<PathBuf, QemuError> {
    let (path, hint) = match given {
        Some(path) => (std::path::absolute(path).unwrap_or_else(|_| path.clone()), format!(" (named by {flag})")),
        None => (
            workspace::root().join(VIRTUAL_ADSP_DIRECTORY).join(default_name),
            format!(": build it with scripts/build-hexagon.sh, or name one with {flag} FILE"),
        ),
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(QemuError::Missing { what, path, hint })
    }
}

/// The skel under qemu-hexagon, one shell process per transport.
pub struct Qemu {
    skel: PathBuf,
    child: Child,
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
    lines: Arc<Mutex<VecDeque<String>>>,
    /// Set once the shell failed; every later call answers [`TRANSPORT_FAILED`].
    broken: Option<String>,
    guard_violations: u32,
    tracing: bool,
    /// The thread relaying the shell's stderr; it ends when the shell does.
    relay: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Qemu {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Qemu").field("skel", &self.skel).finish_non_exhaustive()
    }
}

/// A virtual aDSP ready to start: qemu-hexagon found on `PATH`, the skel and the PD shell found, nothing started yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QemuLaunch {
    qemu: PathBuf,
    skel: PathBuf,
    shell: PathBuf,
    options: QemuOptions,
}

impl Qemu {
    /// Starts the shell on the skel and waits until it has loaded it: [`Qemu::prepare`], then [`QemuLaunch::start`].
    pub fn start(options: &QemuOptions) -> Result<Qemu, QemuError> {
        Qemu::prepare(options)?.start()
    }

    /// Finds what [`Qemu::start`] runs (qemu-hexagon, the skel, the PD shell), starting nothing: no process and no
    /// thread, which [`QemuLaunch::start`] then starts.
    pub fn prepare(options: &QemuOptions) -> Result<QemuLaunch, QemuError> {
        let qemu = on_path(QEMU_PROGRAM).ok_or(QemuError::NoQemu)?;
        let skel = existing(&options.skel, super::address::SKEL_FILE_NAME, "Hexagon skel", "--skel")?;
        let shell = existing(&options.shell, SHELL_FILE_NAME, "PD shell", "--pd_shell")?;
        Ok(QemuLaunch { qemu, skel, shell, options: options.clone() })
    }
    /// The skel the shell runs.
    pub fn skel(&self) -> &Path {
        &self.skel
    }

    /// The qemu-hexagon process's id (to attach a debugger or a profiler to the virtual aDSP).
    pub fn process_id(&self) -> u32 {
        self.child.id()
    }

    /// Calls after which a canary around a buffer, or an input buffer, was found changed: the skel wrote
    /// outside what it was given. Always 0 for a sound skel.
    pub fn guard_violations(&self) -> u32 {
        self.guard_violations
    }

    /// What the shell holds right now (its heap, files and libraries), for leak checks; `None` once the transport
    /// failed ([`Transport::failure`] says why) or when the shell answers garbage.
    pub fn shell_resources(&mut self) -> Option<ShellResources> {
        let body = self.exchange("resources", shell_frame::write_resources)?;
        let mut reader = FrameReader::new(&body);
        match (reader.i32(), ShellResources::read(&mut reader), reader.at_end()) {
            (Some(0), Some(counts), true) => Some(counts),
            _ => {
                self.garbage("resources");
                None
            }
        }
    }

    fn last_line(&self) -> String {
        let lines = self.lines.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        lines.back().cloned().unwrap_or_else(|| "the shell wrote nothing".into())
    }

    fn read_frame(&mut self) -> std::io::Result<Vec<u8>> {
        let mut header = [0u8; 4];
        self.output.read_exact(&mut header)?;
        let length = shell_frame::body_length(header)
            .ok_or_else(|| std::io::Error::other(format!("a frame of {} bytes", u32::from_le_bytes(header))))?;
        let mut body = vec![0u8; length];
        self.output.read_exact(&mut body)?;
        Ok(body)
    }

    /// Sends one request and reads its reply body; on failure marks the transport broken.
    fn exchange(&mut self, what: &str, write: impl Fn(&mut FrameWriter<'_>)) -> Option<Vec<u8>> {
        if self.broken.is_some() {
            return None;
        }
        let mut measure = FrameWriter::new(&mut []);
        write(&mut measure);
        let mut frame = vec![0u8; measure.needed()];
        let mut writer = FrameWriter::new(&mut frame);
        write(&mut writer);
        if writer.finish().is_none() {
            self.broken = Some(format!("{what}: the request is larger than a frame may be"));
            return None;
        }
        let sent = self.input.as_mut().map(|input| input.write_all(&frame).and_then(|()| input.flush()));
        let reply = match sent {
            Some(Ok(())) => self.read_frame(),
            Some(Err(error)) => Err(error),
            None => Err(std::io::Error::other("closed")),
        };
        match reply {
            Ok(body) => Some(body),
            Err(error) => {
                // A closed pipe means the process is ending: wait for how it ended.
                let ended = matches!(error.kind(), std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::BrokenPipe);
                let status = match if ended { self.child.wait().ok() } else { self.child.try_wait().ok().flatten() } {
                    Some(status) => format!("the PD shell exited ({status})"),
                    None => format!("the PD shell stopped answering ({error})"),
                };
                self.broken = Some(format!("{what}: {status}; its last line: {}", self.last_line()));
                None
            }
        }
    }

    fn garbage(&mut self, what: &str) -> i32 {
        self.broken = Some(format!("{what}: the PD shell answered garbage"));
        TRANSPORT_FAILED
    }
}

impl QemuLaunch {
    /// Starts the shell on the skel under qemu-hexagon (a process, and a thread that relays its stderr) and waits
    /// until it has loaded the skel.
    pub fn start(self) -> Result<Qemu, QemuError> {
        let QemuLaunch { qemu, skel, shell, options } = self;
        let mut command = Command::new(qemu);
        command.args(["-cpu", QEMU_CPU]);
        if let Some(trace) = &options.trace {
            let mut map = trace.clone().into_os_string();
            map.push(".map");
            std::fs::write(&map, b"").map_err(QemuError::Start)?;
            command.args(["-one-insn-per-tb", "-d", "exec,nochain", "-D"]).arg(trace).arg(&shell).arg("--map").arg(map);
        } else {
            command.arg(&shell);
        }
        if !options.library_path.is_empty() {
            command.arg("--library-path").arg(std::env::join_paths(&options.library_path).map_err(|error| {
                QemuError::Start(std::io::Error::other(format!("a library directory holds a ':': {error}")))
            })?);
        }
        let log = match &options.log {
            Some(path) => Some(Arc::new(Mutex::new(
                std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(QemuError::Start)?,
            ))),
            None => None,
        };
        let mut child = command
            .args(&options.shell_options)
            .arg("--")
            .arg(&skel)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(QemuError::Start)?;
        let lines = Arc::new(Mutex::new(VecDeque::new()));
        let (input, output, errors) = match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
            (Some(input), Some(output), Some(errors)) => (input, output, errors),
            _ => return Err(QemuError::Start(std::io::Error::other("no pipes to the child"))),
        };
        let ready = Arc::new(AtomicBool::new(false));
        let (forward, forwarding) = (lines.clone(), ready.clone());
        let relay = std::thread::spawn(move || relay_stderr(errors, &forward, &forwarding, log.as_deref()));
        let mut qemu = Qemu {
            skel,
            child,
            input: Some(input),
            output: BufReader::new(output),
            lines,
            broken: None,
            guard_violations: 0,
            tracing: options.trace.is_some(),
            relay: Some(relay),
        };
        match qemu.read_frame() {
            Ok(body) if body == shell_frame::READY => {
                ready.store(true, Ordering::Release);
                Ok(qemu)
            }
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {
                let status = qemu.child.wait().map_or_else(|error| error.to_string(), |status| status.to_string());
                // The relay thread ends with the process's stderr, after taking its last line.
                if let Some(relay) = qemu.relay.take() {
                    let _ = relay.join();
                }
                Err(QemuError::Refused { status, reason: qemu.last_line() })
            }
            // Dropping `qemu` ends the process.
            _ => Err(QemuError::Garbage { shell }),
        }
    }
}

/// Keeps the shell's stderr lines for messages and, once it is `ready`, passes them on to `log` (a file), else to
/// this process's stderr; before that, a line is the reason it did not start, which the start error carries (and
/// the log gets it too).
fn relay_stderr(errors: impl Read, lines: &Mutex<VecDeque<String>>, ready: &AtomicBool, log: Option<&Mutex<File>>) {
    for line in BufReader::new(errors).lines().map_while(Result::ok) {
        match log {
            Some(file) => {
                let mut file = file.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let _ = writeln!(file, "{line}");
            }
            None if ready.load(Ordering::Acquire) => eprintln!("{line}"),
            None => {}
        }
        let mut kept = lines.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if kept.len() == KEPT_LINES {
            kept.pop_front();
        }
        kept.push_back(line);
    }
}

/// A call's buffers as the frame carries them: regions of memory (a buffer, or overlapping buffers merged, so
/// the skel sees the overlap the caller made) and each buffer's place in one.
struct Layout<'a> {
    regions: Vec<RegionSpec<'a>>,
    buffers: Vec<BufferSpec>,
}

/// Lays out `count` host `remote_arg`s; `None` when a length does not fit 32 bits.
///
/// # Safety
/// `args` holds `count` buffers, each valid for reads of its length until the call returns.
unsafe fn lay_out<'a>(args: *const RemoteArg, count: usize, inputs: usize) -> Option<Layout<'a>> {
    // SAFETY: `args` holds `count` entries (the caller's promise); every one of them is a buffer.
    let ranges: Vec<(usize, usize)> =
        (0..count).map(|index| unsafe { (*args.add(index)).buf }).map(|b| (b.pv as usize, b.len)).collect();
    let mut order: Vec<usize> = (0..count).filter(|&index| ranges[index].0 != 0 && ranges[index].1 > 0).collect();
    order.sort_by_key(|&index| ranges[index]);
    // An empty buffer overlaps nothing: each gets a region of its own, after the others.
    order.extend((0..count).filter(|&index| ranges[index].0 != 0 && ranges[index].1 == 0));
    // Sweep the buffers by start address, opening a new region where one does not overlap the current one.
    let mut spans: Vec<(usize, usize, bool)> = Vec::new();
    let mut region_of = vec![NO_REGION; count];
    for index in order {
        let (start, length) = ranges[index];
        let end = start.checked_add(length)?;
        match spans.last_mut() {
            Some((region_start, region_end, input)) if length > 0 && start >= *region_start && start < *region_end => {
                *region_end = (*region_end).max(end);
                *input |= index < inputs;
            }
            _ => spans.push((start, end, index < inputs)),
        }
        region_of[index] = u32::try_from(spans.len() - 1).ok()?;
    }
    let regions = spans
        .iter()
        .map(|&(start, end, input)| {
            let length = u32::try_from(end - start).ok()?;
            // SAFETY: the region is the union of overlapping buffers, each valid for reads (the caller's
            // promise), so every byte of it is.
            let contents = input.then(|| unsafe { std::slice::from_raw_parts(start as *const u8, end - start) });
            Some(RegionSpec { length, contents })
        })
        .collect::<Option<Vec<_>>>()?;
    let buffers = (0..count)
        .map(|index| {
            let (start, length) = ranges[index];
            let region = region_of[index];
            let offset = match region {
                NO_REGION => 0,
                region => u32::try_from(start - spans[region as usize].0).ok()?,
            };
            Some(BufferSpec { region, offset, length: u32::try_from(length).ok()? })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Layout { regions, buffers })
}

impl Transport for Qemu {
    fn name(&self) -> &'static str {
        "qemu"
    }

    fn place(&self) -> String {
        format!("the Hexagon skel {} under {QEMU_PROGRAM}", self.skel.display())
    }

    fn skel_source(&self) -> String {
        self.skel.display().to_string()
    }

    fn open(&mut self, uri: &CStr) -> Result<u64, i32> {
        let body =
            self.exchange("open", |writer| shell_frame::write_open(writer, uri.to_bytes())).ok_or(TRANSPORT_FAILED)?;
        let mut reader = FrameReader::new(&body);
        match (reader.i32(), reader.u64(), reader.at_end()) {
            (Some(0), Some(handle), true) => Ok(handle),
            (Some(status), Some(_), true) => Err(status),
            _ => Err(self.garbage("open")),
        }
    }

    unsafe fn invoke(&mut self, handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
        let (inputs, outputs) = (((scalars >> 16) & 0xFF) as usize, ((scalars >> 8) & 0xFF) as usize);
        // SAFETY: the caller promises `args` matches `scalars`.
        let Some(layout) = (unsafe { lay_out(args, inputs + outputs, inputs) }) else {
            return aee::dsp(aee::EBADPARM);
        };
        // The skel's methods take no handles; the entries of any the word counts go as empty ones.
        let handles = (((scalars >> 4) & 0xF) + (scalars & 0xF)) as usize;
        let empty = BufferSpec { region: NO_REGION, offset: 0, length: 0 };
        let entries: Vec<BufferSpec> =
            layout.buffers.iter().copied().chain(std::iter::repeat_n(empty, handles)).collect();
        let Some(body) = self.exchange("invoke", |writer| {
            let (regions, buffers) = (layout.regions.iter().copied(), entries.iter().copied());
            shell_frame::write_invoke(writer, handle, scalars, regions, buffers);
        }) else {
            return TRANSPORT_FAILED;
        };
        let mut reader = FrameReader::new(&body);
        let (Some(status), Some(guard)) = (reader.i32(), reader.u32()) else {
            return self.garbage("invoke");
        };
        let mut returned = Vec::new();
        for (index, buffer) in layout.buffers.iter().enumerate().skip(inputs) {
            if buffer.region == NO_REGION {
                continue;
            }
            match reader.take(buffer.length as usize) {
                Some(bytes) => returned.push((index, bytes)),
                None => return self.garbage("invoke"),
            }
        }
        if !reader.at_end() {
            return self.garbage("invoke");
        }
        // As FastRPC, outputs come back only from a call that succeeded.
        if status == 0 {
            for (index, bytes) in returned {
                // SAFETY: an output buffer valid for writes of its length (the caller's promise); `bytes` has
                // exactly that length.
                unsafe { std::ptr::copy(bytes.as_ptr(), (*args.add(index)).buf.pv.cast::<u8>(), bytes.len()) };
            }
        }
        if guard != 0 {
            self.guard_violations += 1;
            eprintln!(
                "lpai-direct: the skel wrote outside its buffers (guard {guard:#x}) in a call with sc {scalars:#010x}"
            );
        }
        status
    }

    fn close(&mut self, handle: u64) -> i32 {
        let Some(body) = self.exchange("close", |writer| shell_frame::write_close(writer, handle)) else {
            return TRANSPORT_FAILED;
        };
        let mut reader = FrameReader::new(&body);
        match (reader.i32(), reader.at_end()) {
            (Some(status), true) => status,
            _ => self.garbage("close"),
        }
    }

    fn failure(&self) -> Option<String> {
        self.broken.clone()
    }
}

impl Drop for Qemu {
    fn drop(&mut self) {
        // End of input tells the shell to exit; one that does not within a second (a minute when tracing, which
        // must end by itself to write its whole trace) is killed.
        drop(self.input.take());
        for _ in 0..if self.tracing { 6000 } else { 100 } {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
