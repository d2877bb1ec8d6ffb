//! The bodies of two cargo-fuzz targets (`fuzz/fuzz_targets/skel_invoke.rs` and `codec.rs`), and their corpus
//! replay as self-tests, so that one function runs under libFuzzer on the host, in `cargo test` and on Hexagon in
//! the qemu self-test executable (the corpus is compiled in by `build.rs`).
//!
//! [`skel_invoke`] turns the fuzzer's bytes into a script of calls on the skel's invoke entry: arbitrary `sc` words
//! (or a method's own), argument arrays as long as the word says, buffers that are real memory between canaries
//! (or null, or aliasing another buffer), on the live handle, a handle the script opened or closed, or a number that
//! is no handle. After every call: the status is 0 or an AEE code with the DSP offset, and no byte changed except
//! inside an output buffer that overlaps no other buffer. [`codec`] feeds the same arguments to the skel-side codec
//! alone and checks that every parameter it hands out lies inside its own buffer.
//!
//! What the skel may touch outside the call's memory is fenced, so that a fuzzer cannot load arbitrary libraries or
//! write files: `configure` may only name registered built-in libraries ([`fake::BUILTINS`], which [`skel_invoke`]
//! registers, and the contract model of libQnnLpai, which the program registers), names starting with `fuzz-`
//! without a `/` (found nowhere) or paths under [`SANDBOX`] (a directory that does not exist); `load_file`,
//! `load_file_with_metadata` and `run_job` may only name paths under [`SANDBOX`] (for `run_job`, the output
//! directory strictly inside it), so they are fuzzed up to their first file access. A call that breaks the fence
//! is not sent.
//!
//! Script format (little-endian; bytes past the end read as 0, and a script ends when its bytes do):
//! ```text
//! call:     u8 selector   bits 0-3 method (0-15); bit 4 an explicit sc word follows (u32), otherwise the method's
//!                         own; bits 5-6 handle (0 live, 1 the last one this script opened, 2 one it closed,
//!                         3 a u64 follows, sent with bit 62 cleared so that it is never a live handle)
//!           argument × the sc word's count:
//!             buffer: u8 mode   bits 0-1 0 or 3 own memory, 1 null, 2 inside the memory placed so far (u16 offset
//!                               follows); bit 2 a u16 length follows, otherwise bits 3-7 are the length; an input
//!                               buffer of its own is followed by its bytes
//!             handle: u8 choice as the selector's bits 5-6 (3: a u64 follows)
//! ```

use crate::entry::{lpai_direct_close, lpai_direct_open, lpai_direct_skel_handle_invoke};
use crate::platform::libraries::{find_builtin_library, register_builtin_libraries};
use crate::platform::{set_log_level, Level};
use crate::testing::fake::{self, Settings, BUILTINS};
use lpai_direct::codec::{self, Direction, Kind, Method, RemoteArg, Scalars, Slot};
use lpai_direct::job::Job;

/// Calls one script makes at most.
pub const MAX_CALLS: usize = 24;
/// Handles one script may open on top of its live one (the Hexagon skel has 4 slots).
const MAX_OPENED: usize = 2;
/// Memory for the buffers of one call, canaries included.
const STORE_BYTES: usize = 16 * 1024;
/// Canary bytes before and after every buffer of its own, and their value.
const GUARD: usize = 16;
const CANARY: u8 = 0xC3;
/// What an output buffer holds before the call.
const OUTPUT_FILL: u8 = 0x5A;
/// `remote_arg` entries an `sc` word can describe: 255 + 255 buffers, 15 + 15 handles.
const MAX_ARGS: usize = 540;
/// Buffers an `sc` word can describe.
const MAX_BUFFER_ARGS: usize = 510;
/// A directory that does not exist (and that nothing the scripts send can create): every file the skel may be
/// asked to read or write lies under it.
pub const SANDBOX: &[u8] = b"/nonexistent-lpai-direct-fuzz/";
/// Bit 62 is set in every handle the skel gives out: a number without it is never a live handle.
const NOT_A_HANDLE: u64 = !(1 << 62);

/// A broken property: which call of the script, what, and the status it answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The call's index in the script.
    pub call: usize,
    /// What went wrong.
    pub what: &'static str,
    /// Its status (0 when not relevant).
    pub status: i32,
}

/// What one script did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Calls sent.
    pub sent: u32,
    /// Calls not sent (outside the fence).
    pub fenced: u32,
    /// Calls that answered 0.
    pub succeeded: u32,
}

/// The fuzzer's bytes, read front to back; past the end everything reads as 0.
struct Bytes<'d>(&'d [u8]);

impl<'d> Bytes<'d> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn take(&mut self, count: usize) -> &'d [u8] {
        let count = count.min(self.0.len());
        let (taken, rest) = self.0.split_at(count);
        self.0 = rest;
        taken
    }

    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        for (to, from) in out.iter_mut().zip(self.take(N)) {
            *to = *from;
        }
        out
    }

    fn u8(&mut self) -> u8 {
        self.array::<1>()[0]
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.array())
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }
}

/// The handles a script knows.
struct Handles {
    live: u64,
    opened: heapless::Vec<u64, MAX_OPENED>,
    closed: u64,
}

impl Handles {
    /// The handle `choice` (0-3) names; 3 reads a number from `bytes`.
    fn pick(&self, choice: u8, bytes: &mut Bytes<'_>) -> u64 {
        match choice & 3 {
            0 => self.live,
            1 => self.opened.last().copied().unwrap_or(self.live),
            2 => self.closed,
            _ => bytes.u64() & NOT_A_HANDLE,
        }
    }
}

/// A buffer argument as placed: its start in the store (`None`: null), its length, whether it is an output.
#[derive(Clone, Copy, Default)]
struct Placed {
    start: Option<usize>,
    length: usize,
    output: bool,
}

/// One call built from a script: its `sc` word, arguments, buffers and the memory they lie in.
struct Call {
    scalars: u32,
    handle: u64,
    args: [RemoteArg; MAX_ARGS],
    placed: [Placed; MAX_BUFFER_ARGS],
    buffers: usize,
    store: [u8; STORE_BYTES],
    used: usize,
}

/// The `sc` word of method `index` as the interface defines it (ids past the last method get empty counts).
fn own_scalars(index: u32) -> u32 {
    match index {
        0 => codec::OPEN_SCALARS,
        1 => codec::CLOSE_SCALARS,
        id => codec::METHODS.iter().find(|method| method.id == id).map_or(id << 24, Method::scalars),
    }
}

impl Call {
    /// Reads one call from `bytes`; `handles` resolves its handle choices.
    fn read(bytes: &mut Bytes<'_>, handles: &Handles, call: &mut Call) {
        let selector = bytes.u8();
        let index = u32::from(selector & 0x0F);
        call.scalars = if selector & 0x10 != 0 { bytes.u32() } else { own_scalars(index) };
        call.handle = handles.pick(selector >> 5, bytes);
        call.store.fill(CANARY);
        call.used = 0;
        let word = Scalars::of(call.scalars);
        let (in_buffers, out_buffers) = (word.in_buffers as usize, word.out_buffers as usize);
        call.buffers = in_buffers + out_buffers;
        for arg in call.args.iter_mut() {
            *arg = RemoteArg::buffer(core::ptr::null_mut(), 0);
        }
        for index in 0..word.arg_count().min(MAX_ARGS) {
            if index >= call.buffers {
                let handle = handles.pick(bytes.u8(), bytes);
                if let Some(arg) = call.args.get_mut(index) {
                    *arg = RemoteArg { h64: handle };
                }
                continue;
            }
            let mode = bytes.u8();
            let length = if mode & 4 != 0 { usize::from(bytes.u16()) } else { usize::from(mode >> 3) };
            let output = index >= in_buffers;
            let placed = match mode & 3 {
                1 => Placed { start: None, length, output },
                2 => {
                    let offset = usize::from(bytes.u16());
                    match call.used {
                        0 => Placed { start: None, length: 0, output },
                        used => {
                            let start = offset % used;
                            Placed { start: Some(start), length: length.min(used - start), output }
                        }
                    }
                }
                _ => {
                    let start = call.used + GUARD;
                    let length = length.min(STORE_BYTES.saturating_sub(start + GUARD));
                    let content = if output { &[][..] } else { bytes.take(length) };
                    let target = call.store.get_mut(start..start + length).unwrap_or(&mut []);
                    target.fill(if output { OUTPUT_FILL } else { 0 });
                    lpai_direct::codec::copy_prefix(target, content);
                    call.used = (start + length + GUARD).min(STORE_BYTES);
                    Placed { start: Some(start), length, output }
                }
            };
            if let Some(slot) = call.placed.get_mut(index) {
                *slot = placed;
            }
        }
        call.point_arguments();
    }

    /// Points the buffer arguments at their places in the store.
    fn point_arguments(&mut self) {
        let base = self.store.as_mut_ptr();
        for (arg, placed) in self.args.iter_mut().zip(self.placed.iter().take(self.buffers)) {
            let pointer = placed.start.map_or(core::ptr::null_mut(), |start| base.wrapping_add(start));
            *arg = RemoteArg::buffer(pointer.cast(), placed.length);
        }
    }

    /// Input buffer `arg`'s bytes (what the skel reads as its sequence), if it has memory.
    fn input(&self, arg: usize) -> &[u8] {
        let Some(&Placed { start: Some(start), length, output: false }) = self.placed.get(arg) else { return &[] };
        self.store.get(start..start + length).unwrap_or(&[])
    }

    /// Input buffer `arg`'s bytes up to its first NUL (what the skel reads as its string), if it has memory.
    fn text(&self, arg: usize) -> &[u8] {
        self.input(arg).split(|&byte| byte == 0).next().unwrap_or(&[])
    }

    /// Whether the call stays inside the fence (see the module documentation): the strings its method reads in
    /// arguments 1 (and 2), or the job, are checked.
    fn fenced_in(&self) -> bool {
        match Scalars::of(self.scalars).method {
            2 => allowed_library(self.text(1)) && allowed_library(self.text(2)),
            4 | 13 => self.text(1).starts_with(SANDBOX),
            8 => allowed_job(self.input(1)),
            _ => true,
        }
    }

    /// Whether a byte of the store differs from `before` where the call may not write: anywhere but inside an output
    /// buffer that overlaps no other buffer.
    fn wrote_outside(&self, before: &[u8; STORE_BYTES]) -> bool {
        if self.store == *before {
            return false;
        }
        let placed = self.placed.get(..self.buffers).unwrap_or(&[]);
        let range = |p: &Placed| p.start.map(|start| start..start + p.length);
        let writable = |offset: usize| {
            placed.iter().enumerate().any(|(index, p)| {
                let Some(own) = range(p).filter(|own| p.output && own.contains(&offset)) else { return false };
                !placed.iter().enumerate().any(|(other, q)| {
                    other != index && range(q).is_some_and(|r| !r.is_empty() && r.start < own.end && own.start < r.end)
                })
            })
        };
        (0..STORE_BYTES).any(|offset| self.store[offset] != before[offset] && !writable(offset))
    }
}

/// A library name `configure` may send: see the module documentation.
fn allowed_library(name: &[u8]) -> bool {
    name.is_empty()
        || find_builtin_library(name).is_some()
        || (name.starts_with(b"fuzz-") && !name.contains(&b'/'))
        || name.starts_with(SANDBOX)
}

/// A path strictly inside [`SANDBOX`]: creating it fails, as its parent does not exist.
fn inside_sandbox(path: &[u8]) -> bool {
    path.strip_prefix(SANDBOX).is_some_and(|rest| rest.iter().any(|&byte| byte != b'/'))
}

/// A job `run_job` may receive: one the skel refuses, or one whose files all lie inside [`SANDBOX`].
fn allowed_job(bytes: &[u8]) -> bool {
    match Job::parse(bytes) {
        Err(_) => true,
        Ok(job) => inside_sandbox(job.output_dir) && job.inferences().flatten().all(|file| file.starts_with(SANDBOX)),
    }
}

/// AEE codes with the DSP offset.
fn is_dsp_error(status: i32) -> bool {
    (0x8000_0401..=0x8000_0800).contains(&(status as u32))
}

/// Opens a handle through the C entry point.
fn open() -> Option<u64> {
    let mut handle = 0u64;
    let uri = c"file:///liblpai_direct_skel.so?lpai_direct_skel_handle_invoke&_modver=1.0&_dom=adsp";
    // SAFETY: a NUL-terminated URI and a valid place for the handle.
    (unsafe { lpai_direct_open(uri.as_ptr(), &mut handle) } == 0).then_some(handle)
}

/// Runs the script `data` on the skel's invoke entry (see the module documentation); answers what it did, or the
/// first property it saw broken.
pub fn skel_invoke(data: &[u8]) -> Result<Summary, Violation> {
    let _session = fake::begin(Settings::LPAI);
    let _ = register_builtin_libraries(BUILTINS);
    set_log_level(Some(Level::Warn));
    let Some(live) = open() else { return Ok(Summary::default()) };
    let mut handles = Handles { live, opened: heapless::Vec::new(), closed: live & NOT_A_HANDLE };
    let mut bytes = Bytes(data);
    let mut summary = Summary::default();
    // One call's memory, reused: large, so built in place once.
    let mut call = Call {
        scalars: 0,
        handle: 0,
        args: [RemoteArg::buffer(core::ptr::null_mut(), 0); MAX_ARGS],
        placed: [Placed::default(); MAX_BUFFER_ARGS],
        buffers: 0,
        store: [CANARY; STORE_BYTES],
        used: 0,
    };
    let mut outcome = Ok(());
    for number in 0..MAX_CALLS {
        if bytes.is_empty() {
            break;
        }
        Call::read(&mut bytes, &handles, &mut call);
        let method = Scalars::of(call.scalars).method;
        if !call.fenced_in() || (method == 0 && handles.opened.is_full()) {
            summary.fenced += 1;
            continue;
        }
        let before = call.store;
        // SAFETY: `args` has an entry for every argument the `sc` word describes; every non-null buffer pointer
        // points into `store` with its whole length inside it, alive for the call.
        let status = unsafe { lpai_direct_skel_handle_invoke(call.handle, call.scalars, call.args.as_mut_ptr()) };
        summary.sent += 1;
        let violation = |what| Violation { call: number, what, status };
        if status != 0 && !is_dsp_error(status) {
            outcome = Err(violation("the status is neither 0 nor an AEE code with the DSP offset"));
            break;
        }
        if call.wrote_outside(&before) {
            outcome = Err(violation("a byte changed outside the output buffers the call may write"));
            break;
        }
        if status != 0 {
            continue;
        }
        summary.succeeded += 1;
        match method {
            0 => {
                // SAFETY: a successful open wrote its handle into the third argument.
                let opened = unsafe { call.args[2].h64 };
                let known = opened == handles.live || handles.opened.contains(&opened);
                if known || opened & !NOT_A_HANDLE == 0 {
                    outcome = Err(violation("open answered a handle that is live already or not a handle"));
                    break;
                }
                let _ = handles.opened.push(opened);
            }
            1 => {
                // SAFETY: a successful close read its handle from the first argument.
                let closed = unsafe { call.args[0].h64 };
                handles.opened.retain(|&handle| handle != closed);
                handles.closed = closed;
            }
            _ => {}
        }
    }
    for handle in handles.opened.iter().copied().chain([handles.live]) {
        let status = lpai_direct_close(handle);
        if status != 0 && status as u32 != 0x8000_042C && outcome.is_ok() {
            outcome = Err(Violation { call: MAX_CALLS, what: "closing a handle at the end failed", status });
        }
    }
    set_log_level(Some(Level::Warn));
    outcome.map(|()| summary)
}

/// Decodes the first call of the script `data` with the skel-side codec, as the method its selector names (one of
/// the interface's; `open` and `close` are decoded by the skel itself), and reads every parameter the decoded call
/// offers; answers whether it decoded, or the first property it saw broken: a decoded call whose counts are not the
/// method's, an output buffer that overlaps another, or a parameter outside its own buffer.
pub fn codec(data: &[u8]) -> Result<bool, Violation> {
    let handles = Handles { live: 0, opened: heapless::Vec::new(), closed: 0 };
    let mut bytes = Bytes(data);
    let mut call = Call {
        scalars: 0,
        handle: 0,
        args: [RemoteArg::buffer(core::ptr::null_mut(), 0); MAX_ARGS],
        placed: [Placed::default(); MAX_BUFFER_ARGS],
        buffers: 0,
        store: [CANARY; STORE_BYTES],
        used: 0,
    };
    // The method the selector's own `sc` word belongs to (ids 2-13); the other four values pick one too.
    let index = u32::from(data.first().copied().unwrap_or(0) & 0x0F);
    let fallback = codec::METHODS.get(index as usize % codec::METHODS.len());
    let Some(method) = codec::METHODS.iter().find(|method| method.id == index).or(fallback) else { return Ok(false) };
    Call::read(&mut bytes, &handles, &mut call);
    let before = call.store;
    let violation = |what| Violation { call: 0, what, status: 0 };
    let base = call.store.as_ptr() as usize;
    let placed = call.placed;
    // Whether `part` lies inside argument `arg`'s buffer.
    let inside = |arg: usize, part: &[u8]| {
        let Some(&Placed { start: Some(start), length, .. }) = placed.get(arg) else { return part.is_empty() };
        let (from, to) = (part.as_ptr() as usize, part.as_ptr() as usize + part.len());
        part.is_empty() || (base + start <= from && to <= base + start + length)
    };
    let plan = codec::Plan::of(method);
    // SAFETY: as in `skel_invoke`: every argument the word describes is there, each buffer inside `store`.
    let decoded = unsafe { codec::decode(&plan, call.scalars, call.args.as_mut_ptr()) };
    let Ok(mut decoded) = decoded else {
        return if call.store == before { Ok(false) } else { Err(violation("a refused call changed a buffer")) };
    };
    let (word, expected) = (Scalars::of(call.scalars), Scalars::of(method.scalars()));
    if (word.method, word.in_buffers, word.out_buffers) != (expected.method, expected.in_buffers, expected.out_buffers)
        || word.in_handles + word.out_handles != 0
    {
        return Err(violation("a call with other counts than its method's decoded"));
    }
    for (index, param) in method.params.iter().enumerate() {
        match (method.slot(index), param.kind) {
            (Some(Slot::PrimaryIn { .. }), Kind::Word) => {
                if decoded.u32(index).is_err() || decoded.i32(index).is_err() {
                    return Err(violation("an in word of a decoded call cannot be read"));
                }
            }
            (Some(Slot::PrimaryIn { .. }), Kind::Double) => {
                if decoded.u64(index).is_err() {
                    return Err(violation("an in double word of a decoded call cannot be read"));
                }
            }
            (Some(Slot::PrimaryOut { .. }), Kind::Word) => {
                if decoded.set_u32(index, 0xFFFF_FFFF).is_err() {
                    return Err(violation("an out word of a decoded call cannot be written"));
                }
            }
            (Some(Slot::PrimaryOut { .. }), Kind::Double) => {
                if decoded.set_u64(index, u64::MAX).is_err() {
                    return Err(violation("an out double word of a decoded call cannot be written"));
                }
            }
            (Some(Slot::Buffer { arg, direction: Direction::In, .. }), kind) => {
                let Ok(part) = decoded.bytes(index) else {
                    return Err(violation("an in sequence of a decoded call cannot be read"));
                };
                if !inside(arg, part) {
                    return Err(violation("an in sequence lies outside its buffer"));
                }
                if kind == Kind::String && !decoded.string(index).is_ok_and(|text| inside(arg, text.to_bytes())) {
                    return Err(violation("a string of a decoded call cannot be read inside its buffer"));
                }
            }
            (Some(Slot::Buffer { arg, direction: Direction::Rout, .. }), _) => {
                let Ok(part) = decoded.take_rout_bytes(index) else {
                    return Err(violation("an out sequence of a decoded call cannot be taken"));
                };
                if !inside(arg, part) {
                    return Err(violation("an out sequence lies outside its buffer"));
                }
                part.fill(0xEE);
            }
            _ => {}
        }
    }
    if call.wrote_outside(&before) {
        return Err(violation("a byte changed outside the output buffers"));
    }
    Ok(true)
}

/// The committed corpus of the `skel_invoke` and `codec` fuzz targets, compiled in by `build.rs`.
mod corpus {
    include!(concat!(env!("OUT_DIR"), "/fuzz_corpus.rs"));
}

/// Replays `corpus` through `run`; logs the first input that breaks a property.
fn replay<T>(target: &str, corpus: &[(&str, &[u8])], run: fn(&[u8]) -> Result<T, Violation>) -> bool {
    for (name, data) in corpus {
        if let Err(violation) = run(data) {
            let line = super::text(format_args!(
                "fuzz corpus {target}/{name}: call {}: {} (status {:#x})",
                violation.call, violation.what, violation.status as u32
            ));
            crate::log!(Level::Error, crate::platform::Message::Text, line.as_str());
            return false;
        }
    }
    true
}

crate::self_tests! {
    fn the_skel_invoke_corpus_replays() {
        check!(corpus::SKEL_INVOKE.len() >= 5);
        check!(replay("skel_invoke", corpus::SKEL_INVOKE, skel_invoke));
    }

    fn the_codec_corpus_replays() {
        check!(corpus::CODEC.len() >= 10);
        check!(replay("codec", corpus::CODEC, codec));
    }

    fn the_fence_keeps_files_and_libraries_out_of_reach() {
        check!(register_builtin_libraries(BUILTINS).is_ok() && crate::testing::contract_model_registered());
        check!(allowed_library(b"libQnnLpaiContract.so") && allowed_library(b"/any/dir/libQnnSystemFake.so"));
        check!(allowed_library(b"fuzz-backend") && allowed_library(b""));
        check!(!allowed_library(b"libc.so.6") && !allowed_library(b"fuzz-/lib/libc.so.6"));
        check!(!allowed_library(b"/lib/x86_64-linux-gnu/libm.so.6"));
        check!(inside_sandbox(b"/nonexistent-lpai-direct-fuzz/out") && !inside_sandbox(b"/nonexistent-lpai-direct-fuzz//"));
        /// A job of one output file and one inference reading `input`, with its results under `output_dir`.
        fn job(output_dir: &str, input: &str) -> heapless::Vec<u8, 256> {
            use lpai_direct::job::{encode, Fields, OutputFile};
            let fields = Fields::new(1, 0, output_dir);
            let outputs = [OutputFile { index: 0, file_name: "o.raw", float: false }];
            let mut bytes = heapless::Vec::new();
            let _ = encode(&fields, &outputs, &[&[input]], &mut |part| {
                let _ = bytes.extend_from_slice(part);
            });
            bytes
        }
        // Allowed and refused jobs apart rather than one comparison of two bools: qemu-hexagon 10.0.2 takes
        // `{ p0 = xor(p0, p1); if (p0.new) jump }` when any bit of p0 is set, not its low bit as the CPU does, so
        // comparing true with true (0x01 xor 0xff) jumps there.
        for (output_dir, input) in [
            ("/tmp/x", "/tmp/i.raw"),
            ("/nonexistent-lpai-direct-fuzz/x", "/tmp/i.raw"),
            ("/nonexistent-lpai-direct-fuzz/", "/nonexistent-lpai-direct-fuzz/i.raw"),
        ] {
            let job = job(output_dir, input);
            check!(Job::parse(&job).is_ok() && !allowed_job(&job));
        }
        let job = job("/nonexistent-lpai-direct-fuzz/x", "/nonexistent-lpai-direct-fuzz/i.raw");
        check!(Job::parse(&job).is_ok() && allowed_job(&job));
        check!(allowed_job(b"not a job"));
    }

    fn a_script_that_breaks_nothing_passes_and_one_call_is_fenced() {
        // A valid last_error call on the live handle, then configure naming libc (fenced).
        let mut script = [0u8; 64];
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            for (to, from) in script.iter_mut().skip(at).zip(bytes) {
                *to = *from;
            }
            at += bytes.len();
        };
        put(&[11, 4 << 3]);
        put(&64u32.to_le_bytes());
        put(&[4 << 3, 4, 64, 0]);
        put(&[2, 28 << 3]);
        put(&[0; 20]);
        put(&10u32.to_le_bytes());
        put(&1u32.to_le_bytes());
        put(&[10 << 3]);
        put(b"libc.so.6\0");
        put(&[1 << 3, 0]);
        let summary = expect_ok!(skel_invoke(script.get(..at).unwrap_or(&[])).map_err(|v| v.what));
        check!(summary.sent == 1 && summary.succeeded == 1 && summary.fenced == 1);
    }
}
