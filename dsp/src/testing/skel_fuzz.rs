//! Self-test: thousands of calls into the skel entry, each built valid for a random method and then broken in
//! exactly one way whose answer is known (or left valid), sent to the live handle, a stale one or a random number.
//! Every broken call must answer its own AEE code, and on the live handle `last_error` must name its own reason;
//! a valid call answers "bad handle" on a dead handle and reaches its method on the live one. No call may change a
//! byte it could not write: canaries guard every buffer, and only a call that reached its method may write, and
//! only into its output buffers.

use crate::entry::{lpai_direct_close, lpai_direct_skel_handle_invoke};
use crate::platform::{Level, LOG_LINE_BYTES};
use crate::testing::skel_end_to_end::{self, open};
use lpai_direct::codec::{self, EncodeError, Encoder, Kind, Method, RemoteArg, Scalars, Slot};

/// Calls made by [`malformed_calls_get_their_aee_errors_and_touch_nothing_else`].
pub const CALLS: u32 = 4000;

/// `AEE_EBADPARM`, `AEE_EUNSUPPORTED` and `AEE_EINVHANDLE` with the DSP offset, written out so that the test does
/// not take them from the code under test.
const BAD_PARAMETER: i32 = 0x8000_040E_u32 as i32;
const UNSUPPORTED: i32 = 0x8000_0414_u32 as i32;
const INVALID_HANDLE: i32 = 0x8000_042C_u32 as i32;

/// Bytes of canary on each side of every buffer, and their value.
const GUARD: usize = 16;
const CANARY: u8 = 0xA5;
/// Largest buffer a call uses (a primary buffer may take the codec's 64 bytes), and its room with the canaries.
const BUFFER_BYTES: usize = 64;
const SLOT_BYTES: usize = BUFFER_BYTES + 2 * GUARD;
/// Buffer slots, one per argument; a method may use half of them, so that a buffer moved onto another one (to
/// make them overlap) still ends inside the store.
const SLOTS: usize = 8;
const STORE_BYTES: usize = SLOTS * SLOT_BYTES;
/// `remote_arg` entries passed with every call: more than any `sc` word sent here describes.
const ARGS: usize = 16;

/// The skel's entry points as the fuzz reaches them: directly (the self-tests, here and on Hexagon) or through a
/// transport (the host test running the Hexagon skel `.so` under qemu-hexagon).
pub trait SkelEntry {
    /// Opens a handle.
    fn open(&mut self) -> Option<u64>;
    /// Invokes one method.
    ///
    /// # Safety
    /// Every non-null pointer in `args` (as many entries as `scalars` describes) is valid for its length.
    unsafe fn invoke(&mut self, handle: u64, scalars: u32, args: *mut RemoteArg) -> i32;
    /// Closes a handle.
    fn close(&mut self, handle: u64) -> i32;
}

/// This program's own skel entry points.
pub struct Direct;

impl SkelEntry for Direct {
    fn open(&mut self) -> Option<u64> {
        open()
    }

    unsafe fn invoke(&mut self, handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
        // SAFETY: forwarded from the caller.
        unsafe { lpai_direct_skel_handle_invoke(handle, scalars, args) }
    }

    fn close(&mut self, handle: u64) -> i32 {
        skel_end_to_end::close(handle)
    }
}

/// A small deterministic generator (xorshift32), so failures replay.
struct Random(u32);

impl Random {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }

    fn below(&mut self, bound: u32) -> u32 {
        self.next() % bound.max(1)
    }

    fn one_in(&mut self, chances: u32) -> bool {
        self.below(chances) == 0
    }

    /// A random item of `items`, or `None` when there is none.
    fn pick<T>(&mut self, mut items: impl Iterator<Item = T> + Clone) -> Option<T> {
        let count = items.clone().count() as u32;
        if count == 0 {
            return None;
        }
        items.nth(self.below(count) as usize)
    }
}

/// The one way a case breaks its valid call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mutation {
    /// None: the call stays valid.
    None,
    /// A buffer or handle count of the `sc` word differs from the method's.
    Counts,
    /// The `sc` word names a method id the interface does not have (after the last method's, up to 31).
    UnknownMethod,
    /// A buffer with a non-zero length and a null pointer.
    NullBuffer,
    /// A primary buffer shorter than its layout.
    ShortPrimary,
    /// A sequence or string whose count is larger than its buffer.
    LongCount,
    /// A string whose count does not end on its NUL.
    Unterminated,
    /// An output buffer overlapping another buffer.
    Overlap,
}

impl Mutation {
    const ALL: [Mutation; 8] = [
        Mutation::None,
        Mutation::Counts,
        Mutation::UnknownMethod,
        Mutation::NullBuffer,
        Mutation::ShortPrimary,
        Mutation::LongCount,
        Mutation::Unterminated,
        Mutation::Overlap,
    ];

    fn name(self) -> &'static str {
        match self {
            Mutation::None => "none",
            Mutation::Counts => "sc counts",
            Mutation::UnknownMethod => "unknown method",
            Mutation::NullBuffer => "null buffer",
            Mutation::ShortPrimary => "short primary",
            Mutation::LongCount => "count past its buffer",
            Mutation::Unterminated => "string without NUL",
            Mutation::Overlap => "overlapping output",
        }
    }

    /// The status a call broken this way answers on any handle, and what the live handle's `last_error` then
    /// says; `None` for a valid call.
    fn refusal(self) -> Option<(i32, &'static str)> {
        match self {
            Mutation::None => None,
            Mutation::Counts => Some((BAD_PARAMETER, lpai_direct::message::Message::RefusedCounts.template())),
            Mutation::UnknownMethod => Some((UNSUPPORTED, "unknown method id")),
            Mutation::NullBuffer => Some((BAD_PARAMETER, lpai_direct::message::Message::RefusedNullBuffer.template())),
            Mutation::ShortPrimary => {
                Some((BAD_PARAMETER, lpai_direct::message::Message::RefusedShortPrimary.template()))
            }
            Mutation::LongCount => {
                Some((BAD_PARAMETER, lpai_direct::message::Message::RefusedShortSequence.template()))
            }
            Mutation::Unterminated => {
                Some((BAD_PARAMETER, lpai_direct::message::Message::RefusedUnterminated.template()))
            }
            Mutation::Overlap => Some((BAD_PARAMETER, lpai_direct::message::Message::RefusedOverlap.template())),
        }
    }
}

/// Which handle a case calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Live,
    Stale,
    Random,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Live => "live",
            Target::Stale => "stale",
            Target::Random => "random",
        }
    }
}

/// A random number that is no handle: the skel's handles carry 0x4C50 ("LP") in their top 16 bits, which has bit
/// 62 set, so clearing it keeps the number off every live handle (another test's too, on the host).
fn random_handle(random: &mut Random) -> u64 {
    ((u64::from(random.next()) << 32) | u64::from(random.next())) & !(1 << 62)
}

/// The status a call broken by `mutation` must answer on `target`; `None`: 0 or its method's own DSP error.
fn expected_status(mutation: Mutation, target: Target) -> Option<i32> {
    match (mutation.refusal(), target) {
        (Some((code, _)), _) => Some(code),
        (None, Target::Live) => None,
        (None, Target::Stale | Target::Random) => Some(INVALID_HANDLE),
    }
}

fn is_dsp_error(status: i32) -> bool {
    (0x8000_0401..=0x8000_0800).contains(&(status as u32))
}

/// A sequence or string parameter: its argument, where its count sits in the primary input, its element size.
#[derive(Clone, Copy)]
struct Sequence {
    arg: usize,
    count_offset: usize,
    element: usize,
    string: bool,
}

fn sequences(method: &'static Method) -> impl Iterator<Item = Sequence> + Clone {
    method.params.iter().enumerate().filter_map(move |(index, param)| match method.slot(index) {
        Some(Slot::Buffer { arg, count_offset, .. }) => Some(Sequence {
            arg,
            count_offset,
            element: param.kind.element_bytes().unwrap_or(1),
            string: param.kind == Kind::String,
        }),
        _ => None,
    })
}

/// Letters of generated strings: no `.` or `/`, so that with their `fuzz-` prefix they name no library and no
/// file anywhere.
const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";

/// A value for `in` scalar `index` of `method`: small or anything, except where anything could be harmful.
fn scalar_value(random: &mut Random, method: &Method, index: usize) -> u64 {
    if method.id == codec::configure::ID && index == codec::configure::LOG_LEVEL {
        // The log level is one setting for the whole process: keep its default (warn), as other tests expect.
        return 2;
    }
    if method.id == codec::configure::ID && index == codec::configure::ARENA_BYTES {
        return u64::from(random.below(1 << 16));
    }
    match random.below(3) {
        0 => u64::from(random.below(4)),
        1 => u64::from(u32::MAX - random.below(2)),
        _ => (u64::from(random.next()) << 32) | u64::from(random.next()),
    }
}

/// Sometimes a buffer is longer than it needs to be, which is valid.
fn with_slack(random: &mut Random, length: usize) -> usize {
    let slack = if random.one_in(4) { random.below(8) as usize } else { 0 };
    (length + slack).min(BUFFER_BYTES).max(length)
}

/// One call: its `sc` word and its buffers, each in its own slot of `store` between canaries.
struct Call {
    method: &'static Method,
    scalars: Scalars,
    /// Each argument's buffer: where it starts in `store` (`None`: a null pointer) and its length.
    buffers: [(Option<usize>, usize); ARGS],
    store: [u8; STORE_BYTES],
}

impl Call {
    /// A valid call to `method`: random scalars, strings of short random text and their NUL, short random
    /// sequences, counts matching their buffers.
    fn valid(random: &mut Random, method: &'static Method) -> Call {
        let scalars = Scalars::of(method.scalars());
        let mut call = Call { method, scalars, buffers: [(None, 0); ARGS], store: [CANARY; STORE_BYTES] };
        let totals = method.totals();
        if totals.primary_in_bytes > 0 {
            let length = with_slack(random, totals.primary_in_bytes);
            call.place(random, 0, length);
        }
        if let Some(arg) = method.primary_out_arg() {
            let length = with_slack(random, totals.primary_out_bytes);
            call.place(random, arg, length);
        }
        for (index, param) in method.params.iter().enumerate() {
            match (method.slot(index), param.kind.scalar_bytes()) {
                (Some(Slot::PrimaryIn { offset }), Some(size)) => {
                    let value = scalar_value(random, method, index).to_le_bytes();
                    call.write(0, offset, value.get(..size).unwrap_or(&[]));
                }
                (Some(Slot::Buffer { arg, count_offset, .. }), _) if param.kind == Kind::String => {
                    let mut text = *b"fuzz-\0\0\0\0\0\0\0";
                    let end = 5 + random.below(7) as usize;
                    for letter in &mut text[5..end] {
                        *letter = LETTERS[random.below(LETTERS.len() as u32) as usize];
                    }
                    let length = with_slack(random, end + 1);
                    call.place(random, arg, length);
                    call.write(arg, 0, &text[..=end]);
                    call.set_count(count_offset, end as u32 + 1);
                }
                (Some(Slot::Buffer { arg, count_offset, .. }), _) => {
                    let element = param.kind.element_bytes().unwrap_or(1).max(1);
                    let count = random.below(24 / element as u32 + 1);
                    let length = with_slack(random, count as usize * element);
                    call.place(random, arg, length);
                    call.set_count(count_offset, count);
                }
                _ => {}
            }
        }
        call
    }

    fn arguments(&self) -> usize {
        self.method.in_buffers() + self.method.out_buffers()
    }

    /// The output arguments (primary output first).
    fn outputs(&self) -> core::ops::Range<usize> {
        self.method.in_buffers()..self.arguments()
    }

    /// Puts argument `arg`'s buffer, `length` random bytes, in its slot; an empty buffer is sometimes passed as a
    /// null pointer, which is valid.
    fn place(&mut self, random: &mut Random, arg: usize, length: usize) {
        let start = arg * SLOT_BYTES + GUARD;
        for byte in &mut self.store[start..start + length] {
            *byte = random.next() as u8;
        }
        let pointer = if length == 0 && random.one_in(2) { None } else { Some(start) };
        self.buffers[arg] = (pointer, length);
    }

    fn write(&mut self, arg: usize, offset: usize, bytes: &[u8]) {
        let start = arg * SLOT_BYTES + GUARD + offset;
        self.store[start..start + bytes.len()].copy_from_slice(bytes);
    }

    fn count(&self, count_offset: usize) -> u32 {
        let start = GUARD + count_offset;
        let mut bytes = [0u8; 4];
        bytes.copy_from_slice(&self.store[start..start + 4]);
        u32::from_le_bytes(bytes)
    }

    fn set_count(&mut self, count_offset: usize, count: u32) {
        self.write(0, count_offset, &count.to_le_bytes());
    }

    /// Whether this call has what `mutation` breaks.
    fn can_take(&self, mutation: Mutation) -> bool {
        match mutation {
            Mutation::NullBuffer => self.arguments() > 0,
            Mutation::ShortPrimary => self.method.totals().primary_in_bytes > 0,
            Mutation::LongCount => sequences(self.method).next().is_some(),
            Mutation::Unterminated => sequences(self.method).any(|sequence| sequence.string),
            // An output with a length, and another buffer with one to overlap (not every method has two).
            Mutation::Overlap => {
                let with_length = (0..self.arguments()).filter(|&arg| self.buffers[arg].1 > 0).count();
                self.outputs().any(|arg| self.buffers[arg].1 > 0) && with_length > 1
            }
            Mutation::None | Mutation::Counts | Mutation::UnknownMethod => true,
        }
    }

    /// Breaks the call the way `mutation` says (the caller checked [`Call::can_take`]).
    fn mutate(&mut self, random: &mut Random, mutation: Mutation) {
        let method = self.method;
        match mutation {
            Mutation::None => {}
            Mutation::Counts => {
                // A buffer count from 0 to 7 other than the method's, or a handle where it takes none.
                let other = |random: &mut Random, count: u32| (count + 1 + random.below(7)) % 8;
                match random.below(4) {
                    0 => self.scalars.in_buffers = other(random, self.scalars.in_buffers),
                    1 => self.scalars.out_buffers = other(random, self.scalars.out_buffers),
                    2 => self.scalars.in_handles = 1 + random.below(3),
                    _ => self.scalars.out_handles = 1 + random.below(3),
                }
            }
            Mutation::UnknownMethod => {
                // Ids 0 and 1 are open and close, then one per method; the `sc` word holds ids up to 31.
                let first_unknown = codec::METHODS.len() as u32 + 2;
                self.scalars.method = first_unknown + random.below(32 - first_unknown);
            }
            Mutation::NullBuffer => {
                let victim = random.below(self.arguments() as u32) as usize;
                self.buffers[victim] = (None, 1 + random.below(BUFFER_BYTES as u32) as usize);
            }
            Mutation::ShortPrimary => {
                let totals = method.totals();
                let (arg, layout) = match method.primary_out_arg() {
                    Some(arg) if random.one_in(2) => (arg, totals.primary_out_bytes),
                    _ => (0, totals.primary_in_bytes),
                };
                self.buffers[arg].1 = random.below(layout as u32) as usize;
            }
            Mutation::LongCount => {
                let Some(sequence) = random.pick(sequences(method)) else { return };
                let length = self.buffers[sequence.arg].1;
                let needed = self.count(sequence.count_offset) as usize * sequence.element;
                if needed > 0 && random.one_in(2) {
                    // The buffer shrinks below its count.
                    self.buffers[sequence.arg].1 = random.below(needed as u32) as usize;
                } else {
                    let past = (length / sequence.element) as u32 + 1;
                    let count = if random.one_in(4) { u32::MAX } else { past + random.below(1000) };
                    self.set_count(sequence.count_offset, count);
                }
            }
            Mutation::Unterminated => {
                let Some(string) = random.pick(sequences(method).filter(|sequence| sequence.string)) else { return };
                let count = self.count(string.count_offset);
                match random.below(3) {
                    0 => self.write(string.arg, count as usize - 1, b"x"),
                    1 => self.set_count(string.count_offset, count - 1),
                    _ => self.set_count(string.count_offset, 0),
                }
            }
            Mutation::Overlap => {
                let buffers = self.buffers;
                let Some(output) = random.pick(self.outputs().filter(|&arg| buffers[arg].1 > 0)) else { return };
                let others = (0..self.arguments()).filter(|&arg| arg != output && buffers[arg].1 > 0);
                let Some(other) = random.pick(others) else { return };
                // Either the output moves onto the other buffer or the other buffer onto the output.
                let (moved, onto) = if random.one_in(2) { (output, other) } else { (other, output) };
                if let (Some(start), length) = buffers[onto] {
                    self.buffers[moved].0 = Some(start + random.below(length as u32) as usize);
                }
            }
        }
    }

    /// Sends the call to `handle`; answers its status.
    fn send(&mut self, entry: &mut dyn SkelEntry, handle: u64) -> i32 {
        let base = self.store.as_mut_ptr();
        let mut args = [RemoteArg::buffer(core::ptr::null_mut(), 0); ARGS];
        for (arg, &(start, length)) in args.iter_mut().zip(&self.buffers) {
            let pointer = start.map_or(core::ptr::null_mut(), |start| base.wrapping_add(start));
            *arg = RemoteArg::buffer(pointer.cast(), length);
        }
        // SAFETY: `args` has more entries than the `sc` word describes, and every non-null pointer in it points
        // into `store` with its whole length inside the store (a buffer moved onto another starts in a slot of the
        // store's first half and is at most a slot long), alive for the call; the entry must validate the rest
        // (null pointers with lengths, counts past their buffers, overlaps).
        unsafe { entry.invoke(handle, self.scalars.word(), args.as_mut_ptr()) }
    }

    /// Whether a byte of the store differs from `before` where the call could not write: anywhere unless it
    /// reached its method, and then outside its output buffers.
    fn wrote_outside(&self, before: &[u8; STORE_BYTES], reached_method: bool) -> bool {
        let writable = |offset: usize| {
            reached_method
                && self.outputs().any(|arg| match self.buffers[arg] {
                    (Some(start), length) => (start..start + length).contains(&offset),
                    (None, _) => false,
                })
        };
        (0..STORE_BYTES).any(|offset| self.store[offset] != before[offset] && !writable(offset))
    }
}

/// A `last_error` message, in words.
type Message = heapless::Vec<u8, LOG_LINE_BYTES>;

/// The handle's `last_error` message, rendered from the record the skel answers.
fn last_error(entry: &mut dyn SkelEntry, handle: u64) -> Message {
    let mut message = [0u8; LOG_LINE_BYTES];
    let mut encoder = Encoder::new(codec::last_error::METHOD);
    let _ = encoder.rout_bytes(codec::last_error::MESSAGE, &mut message);
    let (scalars, mut args, _) = encoder.args();
    // SAFETY: the encoder's arguments point at its own buffers and `message`.
    let _ = unsafe { entry.invoke(handle, scalars, args.as_mut_ptr()) };
    let length = encoder.rout_u32(codec::last_error::MESSAGE_BYTES).unwrap_or(0) as usize;
    let rendered = lpai_direct::message::render(message.get(..length).unwrap_or(&[]));
    Message::from_slice(rendered.as_str().as_bytes()).unwrap_or_default()
}

fn contains(text: &[u8], part: &str) -> bool {
    part.is_empty() || text.windows(part.len()).any(|window| window == part.as_bytes())
}

/// What was wrong with one call.
struct Mismatch {
    status: i32,
    problem: &'static str,
    message: Message,
}

/// Sends `call`, broken by `mutation`, to `handle` (a `target` handle), and checks its status, the live handle's
/// `last_error` and that it changed no byte it could not write; answers what was wrong, if anything.
fn check_call(
    entry: &mut dyn SkelEntry,
    call: &mut Call,
    mutation: Mutation,
    target: Target,
    handle: u64,
) -> Option<Mismatch> {
    let before = call.store;
    let status = call.send(entry, handle);
    let mismatch = |problem, message| Some(Mismatch { status, problem, message });
    if call.wrote_outside(&before, mutation == Mutation::None && target == Target::Live) {
        return mismatch("a byte changed outside the buffers the call may write", Message::new());
    }
    let status_expected = match expected_status(mutation, target) {
        Some(code) => status == code,
        None => status == 0 || is_dsp_error(status),
    };
    if !status_expected {
        return mismatch("wrong status", Message::new());
    }
    if target != Target::Live {
        return None;
    }
    match mutation.refusal() {
        Some((_, reason)) => {
            let message = last_error(entry, handle);
            if !contains(&message, reason) {
                return mismatch("last_error does not give the reason", message);
            }
        }
        // A valid call may fail in its method, but the codec must not have refused it (and last_error, which
        // reports the previous call's message, always succeeds).
        None if status != 0 => {
            let message = last_error(entry, handle);
            if call.method.id == codec::last_error::ID || message.starts_with(b"malformed") {
                return mismatch("a valid call was refused", message);
            }
        }
        None => {}
    }
    None
}

/// A `last_error` message for log lines: nothing when empty.
struct Said<'m>(&'m [u8]);

impl core::fmt::Display for Said<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match core::str::from_utf8(self.0) {
            Ok("") => Ok(()),
            Ok(text) => write!(f, "; last_error says \"{text}\""),
            Err(_) => f.write_str("; last_error is not UTF-8"),
        }
    }
}

/// The status a case expected, for messages.
struct Expected(Option<i32>);

impl core::fmt::Display for Expected {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            Some(code) => write!(f, "{:#x}", code as u32),
            None => f.write_str("0 or the method's own DSP error"),
        }
    }
}

/// Cases by category.
#[derive(Default)]
struct Tally {
    calls: u32,
    valid_live: u32,
    valid_stale: u32,
    valid_random: u32,
    /// Cases per mutation, in [`Mutation::ALL`]'s order.
    mutations: [u32; Mutation::ALL.len()],
}

impl Tally {
    fn count(&mut self, mutation: Mutation, target: Target) {
        self.calls += 1;
        self.mutations[mutation as usize] += 1;
        if mutation == Mutation::None {
            match target {
                Target::Live => self.valid_live += 1,
                Target::Stale => self.valid_stale += 1,
                Target::Random => self.valid_random += 1,
            }
        }
    }

    /// Whether every category was tried often enough to mean something: 2% of the calls each (a string without
    /// its NUL needs a method with a string, 3 of the 14).
    fn covers_every_category(&self) -> bool {
        let enough = CALLS / 50;
        let dead = self.valid_stale.min(self.valid_random);
        self.valid_live >= enough && dead >= enough / 10 && self.mutations.iter().all(|&cases| cases >= enough)
    }

    /// Logs the counts at `level`.
    fn log(&self, level: Level) {
        let mut line = super::text(format_args!(
            "skel fuzz: {} calls; valid: {} live, {} stale, {} random; broken:",
            self.calls, self.valid_live, self.valid_stale, self.valid_random
        ));
        for (mutation, cases) in Mutation::ALL.iter().zip(self.mutations).skip(1) {
            let _ = core::fmt::write(&mut line, format_args!(" {} {cases},", mutation.name()));
        }
        crate::log!(level, crate::platform::Message::Text, line.as_str().trim_end_matches(','));
    }
}

/// Points the live handle at libraries that do not exist, so that no valid call can load a real one; answers the
/// status.
fn configure_missing_libraries(entry: &mut dyn SkelEntry, handle: u64) -> Result<i32, EncodeError> {
    use codec::configure as c;
    let mut encoder = Encoder::new(c::METHOD);
    encoder.u32(c::LOG_LEVEL, 2)?.string(c::BACKEND, c"fuzz-backend")?.string(c::SYSTEM_LIBRARY, c"fuzz-system")?;
    let (scalars, mut args, _) = encoder.args();
    // SAFETY: the encoder's arguments point at its own buffers and the static strings.
    Ok(unsafe { entry.invoke(handle, scalars, args.as_mut_ptr()) })
}

/// `last_error` with its three buffers in `memory`: the capacity (4) at 0, `message_bytes` at 8, the 4-byte
/// message at `message_at`; answers the status.
fn last_error_in(handle: u64, memory: &mut [u8; 24], message_at: usize) -> i32 {
    let message_at = message_at.min(20);
    memory[..4].copy_from_slice(&4u32.to_le_bytes());
    let base = memory.as_mut_ptr();
    let mut args = [
        RemoteArg::buffer(base.cast(), 4),
        RemoteArg::buffer(base.wrapping_add(8).cast(), 4),
        RemoteArg::buffer(base.wrapping_add(message_at).cast(), 4),
    ];
    // SAFETY: three arguments as last_error's `sc` word says, each 4 bytes inside `memory`.
    unsafe { lpai_direct_skel_handle_invoke(handle, codec::last_error::SCALARS, args.as_mut_ptr()) }
}

/// Sends [`CALLS`] calls, each valid or broken in one known way, to a live, a stale or a random handle through
/// `entry`, and checks each answer (status, `last_error`, no byte changed that the call could not write). Logs the
/// first mismatch and the counts; answers whether every call was as expected and every category was covered.
pub fn malformed_calls(entry: &mut dyn SkelEntry) -> bool {
    let fits = codec::METHODS.iter().all(|method| method.in_buffers() + method.out_buffers() <= SLOTS / 2);
    let (Some(live), Some(stale)) = (entry.open(), entry.open()) else {
        crate::log!(Level::Error, "skel fuzz: cannot open two handles");
        return false;
    };
    let configured = configure_missing_libraries(entry, live).is_ok_and(is_dsp_error);
    let stale_closed = entry.close(stale) == 0;
    let mut random = Random(0x1234_5678);
    let mut tally = Tally::default();
    let mut all_as_expected = true;
    for number in 0..CALLS {
        let method = &codec::METHODS[random.below(codec::METHODS.len() as u32) as usize];
        let mut call = Call::valid(&mut random, method);
        let mutation = random.pick(Mutation::ALL.into_iter().filter(|&m| call.can_take(m))).unwrap_or(Mutation::None);
        call.mutate(&mut random, mutation);
        let (target, handle) = match random.below(8) {
            0 => (Target::Stale, stale),
            1 => (Target::Random, random_handle(&mut random)),
            _ => (Target::Live, live),
        };
        tally.count(mutation, target);
        if let Some(mismatch) = check_call(entry, &mut call, mutation, target, handle) {
            let line = super::text(format_args!(
                "skel fuzz call {number}: {} with mutation \"{}\" on the {} handle: expected {}, got {:#x}: {}{}",
                method.name,
                mutation.name(),
                target.name(),
                Expected(expected_status(mutation, target)),
                mismatch.status as u32,
                mismatch.problem,
                Said(&mismatch.message)
            ));
            crate::log!(Level::Error, crate::platform::Message::Text, line.as_str());
            all_as_expected = false;
            break;
        }
    }
    // The counts are news only when something failed.
    let passed = all_as_expected && tally.covers_every_category();
    tally.log(if passed { Level::Info } else { Level::Error });
    let live_closed = entry.close(live) == 0;
    fits && configured && stale_closed && passed && live_closed
}

crate::self_tests! {
    fn malformed_calls_get_their_aee_errors_and_touch_nothing_else() {
        check!(malformed_calls(&mut Direct));
    }

    fn an_output_overlapping_another_buffer_is_refused_as_an_overlap() {
        let handle = expect_some!(open());
        let mut memory = [0u8; 24];
        // The message apart from the other buffers: a valid call.
        check!(last_error_in(handle, &mut memory, 16) == 0);
        // The message over message_bytes (an output), then over the capacity (an input): refused, nothing written.
        for message_at in [10, 2] {
            memory = [0x5A; 24];
            let before = {
                let mut expected = memory;
                expected[..4].copy_from_slice(&4u32.to_le_bytes());
                expected
            };
            check!(last_error_in(handle, &mut memory, message_at) == BAD_PARAMETER);
            check!(memory == before);
            let message = last_error(&mut Direct, handle);
            check!(message.starts_with(b"malformed last_error call"));
            check!(contains(&message, "outputs overlap another buffer"));
        }
        check!(lpai_direct_close(handle) == 0);
    }

    fn open_and_close_on_the_wire_check_their_arguments() {
        let uri = c"file:///liblpai_direct_skel.so?lpai_direct_skel_handle_invoke&_modver=1.0&_dom=adsp";
        let mut count = (uri.to_bytes_with_nul().len() as u32).to_le_bytes();
        let mut args = [
            RemoteArg::buffer(count.as_mut_ptr().cast(), 4),
            RemoteArg::buffer(uri.as_ptr().cast_mut().cast(), uri.to_bytes_with_nul().len()),
            RemoteArg { h64: 0 },
        ];
        // SAFETY: the arguments describe live buffers and a handle slot.
        let status = unsafe { lpai_direct_skel_handle_invoke(0, codec::OPEN_SCALARS, args.as_mut_ptr()) };
        check!(status == 0);
        // SAFETY: the skel wrote the handle into the third argument.
        let handle = unsafe { args[2].h64 };
        let mut close = [RemoteArg { h64: handle }];
        // SAFETY: one input handle, as CLOSE_SCALARS says.
        check!(unsafe { lpai_direct_skel_handle_invoke(0, codec::CLOSE_SCALARS, close.as_mut_ptr()) } == 0);
        // SAFETY: as above; the handle is stale now.
        let again = unsafe { lpai_direct_skel_handle_invoke(0, codec::CLOSE_SCALARS, close.as_mut_ptr()) };
        check!(again == INVALID_HANDLE);
        count = 500u32.to_le_bytes();
        args[0] = RemoteArg::buffer(count.as_mut_ptr().cast(), 4);
        // SAFETY: as above; the count now runs past the URI buffer.
        let status = unsafe { lpai_direct_skel_handle_invoke(0, codec::OPEN_SCALARS, args.as_mut_ptr()) };
        check!(status == BAD_PARAMETER);
    }

    fn a_well_formed_call_on_a_fresh_handle_reports_its_error() {
        let handle = expect_some!(open());
        let mut encoder = Encoder::new(codec::unload::METHOD);
        check!(encoder.i32(codec::unload::CONTEXT_ID, 3).is_ok());
        let (scalars, mut args, _) = encoder.args();
        // SAFETY: the encoder's arguments point at its own live buffers.
        let status = unsafe { lpai_direct_skel_handle_invoke(handle, scalars, args.as_mut_ptr()) };
        check!(status == BAD_PARAMETER);
        check!(last_error(&mut Direct, handle) == b"no loaded context has id 3"[..]);
        // A call the codec refuses on a valid handle says so; a later successful call clears the message.
        let mut short = [0u8; 2];
        let mut args = [RemoteArg::buffer(short.as_mut_ptr().cast(), short.len())];
        // SAFETY: one 2-byte buffer, too short for unload's primary input.
        let status = unsafe { lpai_direct_skel_handle_invoke(handle, codec::unload::SCALARS, args.as_mut_ptr()) };
        check!(status == BAD_PARAMETER);
        let message = last_error(&mut Direct, handle);
        check!(message.starts_with(b"malformed unload call"));
        check!(contains(&message, lpai_direct::message::Message::RefusedShortPrimary.template()));
        // Log level 2 (warn) is the default: 0 would turn logging off for the whole process.
        use codec::configure as c;
        let mut configure = Encoder::new(c::METHOD);
        let built = configure
            .u32(c::LOG_LEVEL, 2)
            .and_then(|e| e.string(c::BACKEND, c"libMissing.so"))
            .and_then(|e| e.string(c::SYSTEM_LIBRARY, c"libMissing.so"))
            .is_ok();
        check!(built);
        let (scalars, mut args, _) = configure.args();
        // SAFETY: as above.
        let _ = unsafe { lpai_direct_skel_handle_invoke(handle, scalars, args.as_mut_ptr()) };
        check!(last_error(&mut Direct, handle).starts_with(b"backend libMissing.so"));
        let mut greedy = Encoder::new(c::METHOD);
        let built = greedy
            .u32(c::LOG_LEVEL, 2)
            .and_then(|e| e.u32(c::ARENA_BYTES, u32::MAX))
            .and_then(|e| e.string(c::BACKEND, c"libMissing.so"))
            .and_then(|e| e.string(c::SYSTEM_LIBRARY, c"libMissing.so"))
            .is_ok();
        check!(built);
        let (scalars, mut args, _) = greedy.args();
        // SAFETY: as above.
        let status = unsafe { lpai_direct_skel_handle_invoke(handle, scalars, args.as_mut_ptr()) };
        check!(status == BAD_PARAMETER && last_error(&mut Direct, handle).starts_with(b"configure: arena_bytes"));
        check!(lpai_direct_close(handle) == 0);
    }
}
