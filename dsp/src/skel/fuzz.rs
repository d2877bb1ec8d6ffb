//! Self-test: thousands of malformed calls into the skel entry (wrong counts, short buffers, counts past the
//! end, missing NULs, null pointers, unknown methods, stale handles). Every one must answer an AEE error with
//! the DSP offset, and no byte outside the buffers handed over may change (canaries guard each one).

use crate::entry::lpai_direct_skel_handle_invoke;
use lpai_direct::codec::{self, Encoder, RemoteArg, Scalars};

/// Bytes of canary on each side of every buffer.
const GUARD: usize = 16;
const CANARY: u8 = 0xA5;
/// Calls made by [`malformed_calls_get_aee_errors_and_touch_nothing_else`].
pub const CALLS: u32 = 4000;

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
}

/// Backing store for one call's buffers, each surrounded by canaries.
struct Buffers {
    bytes: [u8; 8 * (64 + 2 * GUARD)],
}

const SLOT_BYTES: usize = 64 + 2 * GUARD;

impl Buffers {
    fn new() -> Buffers {
        Buffers { bytes: [CANARY; 8 * SLOT_BYTES] }
    }

    /// Buffer `index` (at most 64 bytes), filled with `fill`, its canaries intact around it.
    fn buffer(&mut self, index: usize, length: usize, fill: u8) -> RemoteArg {
        self.bytes[index * SLOT_BYTES..(index + 1) * SLOT_BYTES].fill(CANARY);
        let start = index * SLOT_BYTES + GUARD;
        let region = &mut self.bytes[start..start + length.min(64)];
        region.fill(fill);
        RemoteArg::buffer(region.as_mut_ptr().cast(), region.len())
    }

    fn canaries_intact(&self, lengths: &[usize]) -> bool {
        self.bytes.chunks_exact(SLOT_BYTES).zip(lengths.iter().chain(core::iter::repeat(&0))).all(|(slot, &length)| {
            let (before, rest) = slot.split_at(GUARD);
            let after = rest.get(length.min(64)..).unwrap_or(&[]);
            before.iter().chain(after).all(|&byte| byte == CANARY)
        })
    }
}

fn is_dsp_error(status: i32) -> bool {
    (status as u32) > 0x8000_0400 && (status as u32) <= 0x8000_0800
}

/// The handle's `last_error` message (at most 64 bytes).
fn last_error(handle: u64) -> heapless::Vec<u8, 64> {
    let mut message = [0u8; 64];
    let mut encoder = Encoder::new(codec::last_error::METHOD);
    let _ = encoder.rout_bytes(codec::last_error::MESSAGE, &mut message);
    let (scalars, mut args, _) = encoder.args();
    // SAFETY: the encoder's arguments point at its own buffers and `message`.
    let _ = unsafe { lpai_direct_skel_handle_invoke(handle, scalars, args.as_mut_ptr()) };
    let length = encoder.rout_u32(codec::last_error::MESSAGE_BYTES).unwrap_or(0) as usize;
    heapless::Vec::from_slice(message.get(..length.min(64)).unwrap_or(&[])).unwrap_or_default()
}

/// What went wrong with one call: its status, the `sc` word sent, whether the canaries held.
#[derive(Clone, Copy, Debug)]
struct Misbehaviour {
    status: i32,
    scalars: u32,
    canaries_intact: bool,
}

/// One malformed variation of a call to `method` on `handle`; `Ok` when it was refused cleanly.
fn malformed_call(random: &mut Random, handle: u64, method: &'static codec::Method) -> Result<(), Misbehaviour> {
    let mut buffers = Buffers::new();
    let argument_count = method.in_buffers() + method.out_buffers();
    let mut lengths = [0usize; 8];
    let mut args = [RemoteArg::buffer(core::ptr::null_mut(), 0); 8];
    let expected = Scalars::of(method.scalars());
    let mut scalars = expected;
    let totals = method.totals();
    // Start from a well-formed layout: primaries at full size, other buffers short and filled.
    for (index, (arg, length)) in args.iter_mut().zip(lengths.iter_mut()).enumerate().take(argument_count) {
        *length = match index {
            0 if totals.primary_in_bytes > 0 => totals.primary_in_bytes,
            index if Some(index) == method.primary_out_arg() => totals.primary_out_bytes,
            _ => random.below(24) as usize,
        };
        *arg = buffers.buffer(index, *length, random.below(256) as u8);
    }
    // Then break it one way.
    match random.below(8) {
        0 => scalars.in_buffers = (scalars.in_buffers + 1 + random.below(3)) % 8,
        1 => scalars.out_buffers = (scalars.out_buffers + 1 + random.below(3)) % 8,
        2 => scalars.in_handles = 1 + random.below(3),
        3 if argument_count > 0 => {
            let victim = random.below(argument_count as u32) as usize;
            lengths[victim] = random.below(lengths[victim].max(1) as u32) as usize;
            args[victim] = buffers.buffer(victim, lengths[victim], 0x5A);
        }
        4 if totals.primary_in_bytes > 0 => {
            // Counts far past the end of their buffers.
            let primary = buffers.buffer(0, totals.primary_in_bytes, 0xFF);
            args[0] = primary;
        }
        5 if argument_count > 0 => {
            let victim = random.below(argument_count as u32) as usize;
            args[victim] = RemoteArg::buffer(core::ptr::null_mut(), 1 + random.below(64) as usize);
        }
        6 => scalars.method = 12 + random.below(19),
        _ => {
            // Strings without a NUL: every byte of every in-buffer non-zero, counts as large as the buffers.
            for index in 1..method.in_buffers() {
                lengths[index] = 8;
                args[index] = buffers.buffer(index, 8, b'x');
            }
            if totals.primary_in_bytes > 0 {
                args[0] = buffers.buffer(0, totals.primary_in_bytes, 0);
                let primary = &mut buffers.bytes[GUARD..GUARD + totals.primary_in_bytes];
                for word in primary.chunks_exact_mut(4) {
                    word.copy_from_slice(&8u32.to_le_bytes());
                }
            }
        }
    }
    // SAFETY: every non-null pointer in `args` points into `buffers` with the length given; the entry must
    // validate the rest.
    let status = unsafe { lpai_direct_skel_handle_invoke(handle, scalars.word(), args.as_mut_ptr()) };
    let refused = is_dsp_error(status) || (status == 0 && scalars == expected);
    let canaries_intact = buffers.canaries_intact(&lengths);
    if refused && canaries_intact {
        Ok(())
    } else {
        Err(Misbehaviour { status, scalars: scalars.word(), canaries_intact })
    }
}

crate::self_tests! {
    fn malformed_calls_get_aee_errors_and_touch_nothing_else() {
        let mut random = Random(0x1234_5678);
        let mut handle = 0u64;
        let opened = crate::skel::open(c"file:///liblpai_direct_skel.so?lpai_direct_skel_handle_invoke", &mut handle);
        check!(opened == 0);
        let stale = {
            let mut closed = 0u64;
            let _ = crate::skel::open(c"stale", &mut closed);
            let _ = crate::skel::close(closed);
            closed
        };
        let mut clean = 0u32;
        for call in 0..CALLS {
            let method = &codec::METHODS[random.below(codec::METHODS.len() as u32) as usize];
            let target = match call % 7 {
                0 => stale,
                1 => random.next() as u64,
                _ => handle,
            };
            match malformed_call(&mut random, target, method) {
                Ok(()) => clean += 1,
                Err(bad) => crate::log!(
                    crate::platform::Level::Error,
                    "call {} to {}: status {:#x}, sc {:#x}, canaries intact: {}",
                    call,
                    method.name,
                    bad.status as u32,
                    bad.scalars,
                    bad.canaries_intact
                ),
            }
        }
        check!(clean == CALLS);
        check!(crate::skel::close(handle) == 0);
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
        check!(again as u32 == 0x8000_042C);
        count = 500u32.to_le_bytes();
        args[0] = RemoteArg::buffer(count.as_mut_ptr().cast(), 4);
        // SAFETY: as above; the count now runs past the URI buffer.
        let status = unsafe { lpai_direct_skel_handle_invoke(0, codec::OPEN_SCALARS, args.as_mut_ptr()) };
        check!(status as u32 == 0x8000_040E);
    }

    fn a_well_formed_call_on_a_fresh_handle_reports_its_error() {
        let mut handle = 0u64;
        check!(crate::skel::open(c"x", &mut handle) == 0);
        let mut encoder = Encoder::new(codec::unload::METHOD);
        check!(encoder.i32(codec::unload::CONTEXT_ID, 3).is_ok());
        let (scalars, mut args, _) = encoder.args();
        // SAFETY: the encoder's arguments point at its own live buffers.
        let status = unsafe { lpai_direct_skel_handle_invoke(handle, scalars, args.as_mut_ptr()) };
        check!(status as u32 == 0x8000_040E);
        let mut message = [0u8; 64];
        let mut encoder = Encoder::new(codec::last_error::METHOD);
        check!(encoder.rout_bytes(codec::last_error::MESSAGE, &mut message).is_ok());
        let (scalars, mut args, _) = encoder.args();
        // SAFETY: as above.
        check!(unsafe { lpai_direct_skel_handle_invoke(handle, scalars, args.as_mut_ptr()) } == 0);
        let length = encoder.rout_u32(codec::last_error::MESSAGE_BYTES).unwrap_or(0) as usize;
        check!(message.get(..length) == Some(&b"no loaded context has id 3"[..]));
        // A call the codec refuses on a valid handle says so; a later successful call clears the message.
        let mut short = [0u8; 2];
        let mut args = [RemoteArg::buffer(short.as_mut_ptr().cast(), short.len())];
        // SAFETY: one 2-byte buffer, too short for unload's primary input.
        let status = unsafe { lpai_direct_skel_handle_invoke(handle, codec::unload::SCALARS, args.as_mut_ptr()) };
        check!(status as u32 == 0x8000_040E);
        check!(last_error(handle).starts_with(b"malformed unload call"));
        let mut configure = Encoder::new(codec::configure::METHOD);
        let built = configure
            .string(codec::configure::BACKEND, c"libMissing.so")
            .and_then(|e| e.string(codec::configure::SYSTEM_LIBRARY, c"libMissing.so"))
            .is_ok();
        check!(built);
        let (scalars, mut args, _) = configure.args();
        // SAFETY: as above.
        let _ = unsafe { lpai_direct_skel_handle_invoke(handle, scalars, args.as_mut_ptr()) };
        check!(last_error(handle).starts_with(b"backend libMissing.so"));
        let mut greedy = Encoder::new(codec::configure::METHOD);
        let built = greedy
            .u32(codec::configure::ARENA_BYTES, u32::MAX)
            .and_then(|e| e.string(codec::configure::BACKEND, c"libMissing.so"))
            .and_then(|e| e.string(codec::configure::SYSTEM_LIBRARY, c"libMissing.so"))
            .is_ok();
        check!(built);
        let (scalars, mut args, _) = greedy.args();
        // SAFETY: as above.
        let status = unsafe { lpai_direct_skel_handle_invoke(handle, scalars, args.as_mut_ptr()) };
        check!(status as u32 == 0x8000_040E && last_error(handle).starts_with(b"configure: arena_bytes"));
        check!(crate::skel::close(handle) == 0);
    }
}
