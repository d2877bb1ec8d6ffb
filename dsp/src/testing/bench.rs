//! The Hexagon bench executable's driver: skel calls through the exported entry point against the fake LPAI
//! backend, each batch between two marker calls, so `scripts/bench.sh` can count the Hexagon packets qemu
//! executes for them (deterministic, unlike time under an emulator).

use super::fake::{self, binary, Settings, BUILTINS};
use super::skel_end_to_end::{call, close, open};
use crate::platform::libraries::register_builtin_libraries;
use crate::runtime::quantize::float_bytes;
use lpai_direct::codec;

/// Runs three batches of `calls` skel calls, each between `begin()` and `end()`: `last_error` (the smallest
/// round trip: validation, handle lock, dispatch), `execute` with native data, and `execute` with float
/// conversion on the skel. Returns false if any set-up or call failed.
pub fn skel_calls(begin: extern "C" fn(), end: extern "C" fn(), calls: u32) -> bool {
    let _session = fake::begin(Settings::LPAI);
    if register_builtin_libraries(&BUILTINS).is_err() {
        return false;
    }
    let Some(handle) = open() else { return false };
    use codec::configure as c;
    let configured = call(
        handle,
        c::METHOD,
        |e| {
            e.string(c::BACKEND, c"libQnnLpaiFake.so")?;
            e.string(c::SYSTEM_LIBRARY, c"libQnnSystemFake.so").map(drop)
        },
        |_| Ok(()),
    );
    let Some(bytes) = super::binary(&binary::ONE_GRAPH) else { return false };
    let loaded = call(
        handle,
        codec::load::METHOD,
        |e| e.bytes(codec::load::BINARY, &bytes).map(drop),
        |e| e.rout_i32(codec::load::CONTEXT_ID),
    );
    let (Ok(()), Ok(context)) = (configured, loaded) else { return false };

    let mut ok = true;
    let mut message = [0u8; 16];
    begin();
    for _ in 0..calls {
        let answered = call(
            handle,
            codec::last_error::METHOD,
            |e| e.rout_bytes(codec::last_error::MESSAGE, &mut message).map(drop),
            |_| Ok(()),
        );
        ok &= answered.is_ok();
    }
    end();
    use codec::execute as x;
    for (flags, inputs) in
        [(0u32, [1u8, 2, 3, 4].as_slice()), (3, float_bytes::<4, 16>([0.0, 1.0, -5.0, 200.0]).as_slice())]
    {
        let mut outputs = [0u8; 16];
        let capacity = if flags == 0 { 4 } else { 16 };
        begin();
        for _ in 0..calls {
            let executed = call(
                handle,
                x::METHOD,
                |e| {
                    e.i32(x::CONTEXT_ID, context)?.u32(x::GRAPH, 0)?.u32(x::FLAGS, flags)?.bytes(x::INPUTS, inputs)?;
                    e.rout_bytes(x::OUTPUTS, &mut outputs[..capacity]).map(drop)
                },
                |_| Ok(()),
            );
            ok &= executed.is_ok();
        }
        end();
    }
    ok && close(handle) == 0
}
