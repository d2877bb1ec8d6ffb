//! Self-tests of op packages through the skel's entry point, on the fake backend's one package: registered before a
//! load, a wrong provider, a missing package and a second registration refused with QNN's documented codes and
//! named in `last_error`, a registration after a load refused before the backend sees it, a path longer than the
//! skel keeps refused; and through the runtime, the same codes said in one line.

use super::skel_end_to_end::{call, close, last_error, open};
use crate::platform::libraries::register_builtin_libraries;
use crate::runtime::{BackendOptions, RuntimeError};
use crate::testing::fake::{self, binary, Settings, BUILTINS, OP_PACKAGE, OP_PACKAGE_PROVIDER};
use core::ffi::CStr;
use lpai_direct::codec;

/// `register_op_package(path, provider, target)` on `handle`: its status (0 on success).
fn register(handle: u64, path: &CStr, provider: &CStr, target: &CStr) -> u32 {
    use codec::register_op_package as m;
    let registered = call(
        handle,
        m::METHOD,
        |e| e.string(m::PATH, path)?.string(m::INTERFACE_PROVIDER, provider)?.string(m::TARGET, target).map(drop),
        |_| Ok(()),
    );
    registered.err().unwrap_or(0)
}

/// Whether the handle's last error starts with `start` and holds each of `parts`.
fn last_error_says(handle: u64, start: &[u8], parts: &[&[u8]]) -> bool {
    let Ok(rendered) = last_error(handle) else { return false };
    let text = rendered.as_str().as_bytes();
    text.starts_with(start) && parts.iter().all(|part| text.windows(part.len()).any(|window| window == *part))
}

/// Configures `handle` on the fake backend and system library.
fn configure(handle: u64) -> bool {
    use codec::configure as c;
    let configured = call(
        handle,
        c::METHOD,
        |e| {
            e.u32(c::LOG_LEVEL, 1)?.u32(c::PROFILING_LEVEL, 0)?.u32(c::LPAI_HW_VERSION, 0)?.u32(c::LPAI_TARGET, 2)?;
            e.u32(c::ARENA_BYTES, 8192)?.string(c::BACKEND, c"libQnnLpaiFake.so")?;
            e.string(c::SYSTEM_LIBRARY, c"libQnnSystemFake.so").map(drop)
        },
        |_| Ok(()),
    );
    configured.is_ok()
}

crate::self_tests! {
    fn the_skel_registers_an_op_package_before_a_load_and_names_each_refusal() {
        let session = fake::begin(Settings::LPAI);
        check!(register_builtin_libraries(BUILTINS).is_ok());
        let handle = expect_some!(open());
        check!(configure(handle));

        check!(register(handle, OP_PACKAGE, c"WrongProvider", c"") == 0x8000_0401);
        check!(last_error_says(handle, b"register_op_package: op package libFakeOpPackage.so:WrongProvider: \
            backendRegisterOpPackage failed: ", &[b"IF_PROVIDER_NOT_FOUND (4006)", b"does not export"]));
        check!(register(handle, c"/no/libMissing.so", OP_PACKAGE_PROVIDER, c"") == 0x8000_0401);
        check!(last_error_says(handle, b"register_op_package: op package /no/libMissing.so", &[b"NOT_FOUND (4005)"]));
        check!(session.record().op_packages.is_empty());

        check!(register(handle, OP_PACKAGE, OP_PACKAGE_PROVIDER, c"") == 0);
        // An empty target is the backend's default: NULL reaches the backend.
        check!(session.record().op_packages.as_slice() == [false]);
        check!(register(handle, OP_PACKAGE, OP_PACKAGE_PROVIDER, c"DSP") == 0x8000_0401);
        check!(last_error_says(handle, b"register_op_package: ", &[b"OP_PACKAGE_DUPLICATE (4009)"]));

        let long = [b'a'; 300];
        let mut path = [0u8; 301];
        path[..300].copy_from_slice(&long);
        let path = expect_some!(CStr::from_bytes_with_nul(&path).ok());
        check!(register(handle, path, OP_PACKAGE_PROVIDER, c"") == 0x8000_040E);
        check!(last_error_says(handle, b"register_op_package: a path, provider or target is longer than 255", &[]));
        check!(register(handle, c"", OP_PACKAGE_PROVIDER, c"") == 0x8000_040E);

        let bytes = expect_some!(crate::testing::binary(&binary::ONE_GRAPH));
        let loaded = call(handle, codec::load::METHOD, |e| {
            e.u32(codec::load::FLAGS, 0)?.bytes(codec::load::BINARY, &bytes).map(drop)
        }, |e| e.rout_i32(codec::load::CONTEXT_ID));
        expect_ok!(loaded);
        check!(register(handle, OP_PACKAGE, OP_PACKAGE_PROVIDER, c"") == 0x8000_040D);
        check!(last_error_says(handle, b"register_op_package libFakeOpPackage.so: a context is loaded; op packages \
            are registered before any load", &[]));
        // The refused registration never reached the backend.
        check!(session.record().op_packages.len() == 1);
        check!(close(handle) == 0);
    }

    fn the_runtime_says_a_refused_op_package_in_one_line() {
        let _session = fake::begin(Settings::LPAI);
        let libraries = expect_ok!(super::fake_libraries(&BackendOptions::default()));
        let refused = libraries.register_op_package(OP_PACKAGE, c"Nope", None);
        let error = expect_some!(refused.err());
        check!(matches!(error, RuntimeError::OpPackage { code: 4006, .. }));
        let line = crate::message!(error);
        check!(line.rendered().as_str() == "op package libFakeOpPackage.so:Nope: backendRegisterOpPackage failed: \
            QNN_BACKEND_ERROR_OP_PACKAGE_IF_PROVIDER_NOT_FOUND (4006): it does not export that interface provider");
        check!(error.qnn_code() == Some(4006));
        check!(libraries.register_op_package(OP_PACKAGE, OP_PACKAGE_PROVIDER, Some(c"DSP")).is_ok());
    }
}
