//! The C ABI of `liblpai_direct_stub.so` (declared in `include/lpai_direct_stub.h`): the stub for HLOS
//! applications in C or C++.

use crate::stub::fastrpc::{skel_uri, Domain, FastRpc, FastRpcOptions};
use crate::stub::{
    default_transport, flags, Configuration, LoadRequest, Stub, StubError, TensorDescription, Transport,
};
use crate::stub::{Local, Qemu, QemuOptions, SkelLocation, TransportKind};
use lpai_direct::aee;
use lpai_direct::wire::io_bytes;
use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr, CString};
use std::os::unix::ffi::OsStrExt;

/// The answer to a null or invalid argument.
const BAD_PARAMETER: i32 = aee::dsp(aee::EBADPARM);
/// The answer to a failure without an AEE code of its own.
const FAILED: i32 = aee::dsp(aee::EFAILED);

/// `lpai_direct_stub`: an open skel handle and the message of its last failure.
pub struct CStub {
    stub: Stub,
    last_error: CString,
}

thread_local! {
    static OPEN_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// The error code for a stub failure (the skel's AEE code, or AEE_EFAILED).
fn code_of(error: &StubError) -> i32 {
    match error {
        StubError::Call { code, .. } => *code as i32,
        _ => FAILED,
    }
}

fn message(text: String) -> CString {
    CString::new(text.replace('\0', " ")).unwrap_or_default()
}

/// Keeps a failure's message for `lpai_direct_stub_last_error` and turns it into its code.
fn record<T>(last_error: &mut CString, result: Result<T, StubError>) -> Result<T, i32> {
    result.map_err(|error| {
        *last_error = message(error.to_string());
        code_of(&error)
    })
}

/// # Safety
/// `text` is null or a NUL-terminated string.
unsafe fn optional_text<'a>(text: *const c_char) -> Option<&'a str> {
    // SAFETY: the caller's promise.
    (!text.is_null()).then(|| unsafe { CStr::from_ptr(text) }.to_str().ok()).flatten()
}

/// Keeps a failed open's message for `lpai_direct_stub_last_error(NULL)` and answers AEE_EFAILED.
fn open_failed(text: String) -> i32 {
    OPEN_ERROR.with(|error| *error.borrow_mut() = message(text));
    FAILED
}

/// Opens a handle through `transport` and hands the stub to C.
///
/// # Safety
/// `stub` is a valid place for the result.
unsafe fn open_with(transport: Box<dyn Transport>, domain: Domain, stub: *mut *mut CStub) -> i32 {
    match Stub::open(transport, &skel_uri(domain, None)) {
        Ok(opened) => {
            // SAFETY: the caller's promise.
            unsafe { *stub = Box::into_raw(Box::new(CStub { stub: opened, last_error: CString::default() })) };
            0
        }
        Err(error) => {
            let code = code_of(&error);
            open_failed(error.to_string());
            code
        }
    }
}

/// Opens the skel; see the header.
///
/// # Safety
/// `transport` and `domain` are null or NUL-terminated; `stub` is a valid place for the result.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_stub_open(
    transport: *const c_char,
    domain: *const c_char,
    stub: *mut *mut CStub,
) -> i32 {
    if stub.is_null() {
        return BAD_PARAMETER;
    }
    // SAFETY: checked non-null; the caller's promise.
    unsafe { *stub = std::ptr::null_mut() };
    // SAFETY: the caller's promise.
    let domain = match unsafe { optional_text(domain) }.unwrap_or("adsp").parse::<Domain>() {
        Ok(domain) => domain,
        Err(unknown) => return open_failed(unknown.to_string()),
    };
    // SAFETY: the caller's promise.
    let kind = match unsafe { optional_text(transport) }.map(str::parse::<TransportKind>).transpose() {
        Ok(kind) => kind,
        Err(unknown) => return open_failed(unknown.to_string()),
    };
    let options = FastRpcOptions { domain, ..FastRpcOptions::default() };
    let chosen: Result<Box<dyn Transport>, String> = match kind {
        Some(TransportKind::Local) => {
            Local::load(&SkelLocation::Search).map(|local| Box::new(local) as _).map_err(|error| error.to_string())
        }
        Some(TransportKind::Fastrpc) => {
            FastRpc::load(options).map(|fastrpc| Box::new(fastrpc) as _).map_err(|error| error.to_string())
        }
        Some(TransportKind::Qemu) => {
            Qemu::start(&QemuOptions::default()).map(|qemu| Box::new(qemu) as _).map_err(|error| error.to_string())
        }
        None => default_transport(options, &SkelLocation::Search)
            .map(|chosen| chosen.transport)
            .map_err(|error| error.to_string()),
    };
    match chosen {
        // SAFETY: `stub` checked non-null above.
        Ok(chosen) => unsafe { open_with(chosen, domain, stub) },
        Err(why) => open_failed(why),
    }
}

/// Opens the skel through the local transport on a chosen host skel library; see the header.
///
/// # Safety
/// `skel_path` is null or NUL-terminated; `stub` is a valid place for the result.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_stub_open_local(skel_path: *const c_char, stub: *mut *mut CStub) -> i32 {
    if stub.is_null() {
        return BAD_PARAMETER;
    }
    // SAFETY: checked non-null; the caller's promise.
    unsafe { *stub = std::ptr::null_mut() };
    let location = if skel_path.is_null() {
        SkelLocation::Search
    } else {
        // SAFETY: the caller's promise: a NUL-terminated path.
        let bytes = unsafe { CStr::from_ptr(skel_path) }.to_bytes();
        let path = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(bytes));
        SkelLocation::File { path, named_by: "lpai_direct_stub_open_local" }
    };
    match Local::load(&location) {
        // SAFETY: `stub` checked non-null above.
        Ok(local) => unsafe { open_with(Box::new(local), Domain::Adsp, stub) },
        Err(error) => open_failed(error.to_string()),
    }
}

/// Runs `work` on a stub from C, or answers AEE_EBADPARM for a null one.
///
/// # Safety
/// `stub` is null or came from `lpai_direct_stub_open` and is not closed.
unsafe fn with_stub(stub: *mut CStub, work: impl FnOnce(&mut CStub) -> Result<(), i32>) -> i32 {
    // SAFETY: the caller's promise.
    match unsafe { stub.as_mut() } {
        Some(stub) => work(stub).err().unwrap_or(0),
        None => BAD_PARAMETER,
    }
}

/// Configures the skel; see the header.
///
/// # Safety
/// `stub` from `lpai_direct_stub_open`; `backend` and `system_library` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_stub_configure(
    stub: *mut CStub,
    backend: *const c_char,
    system_library: *const c_char,
    log_level: u32,
    profiling_level: u32,
    arena_bytes: u32,
) -> i32 {
    if backend.is_null() || system_library.is_null() {
        return BAD_PARAMETER;
    }
    // SAFETY: the caller's promise.
    let (backend, system_library) = unsafe { (CStr::from_ptr(backend), CStr::from_ptr(system_library)) };
    let configuration = Configuration {
        backend: backend.to_owned(),
        system_library: system_library.to_owned(),
        log_level,
        profiling_level,
        lpai_hw_version: 0,
        lpai_target: crate::stub::TARGET_DEFAULT,
        arena_bytes,
    };
    // SAFETY: the caller's promise.
    unsafe { with_stub(stub, |s| record(&mut s.last_error, s.stub.configure(&configuration))) }
}

/// Registers an op package with the skel's backend; see the header.
///
/// # Safety
/// `stub` from `lpai_direct_stub_open`; `path` and `interface_provider` NUL-terminated; `target` null or
/// NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_stub_register_op_package(
    stub: *mut CStub,
    path: *const c_char,
    interface_provider: *const c_char,
    target: *const c_char,
) -> i32 {
    if path.is_null() || interface_provider.is_null() {
        return BAD_PARAMETER;
    }
    // SAFETY: the caller's promise: NUL-terminated strings (the target only when not null).
    let (path, provider) = unsafe { (CStr::from_ptr(path), CStr::from_ptr(interface_provider)) };
    // SAFETY: as above.
    let target = (!target.is_null()).then(|| unsafe { CStr::from_ptr(target) });
    // SAFETY: the caller's promise.
    unsafe { with_stub(stub, |s| record(&mut s.last_error, s.stub.register_op_package(path, provider, target))) }
}

/// Sends a context binary; see the header.
///
/// # Safety
/// `binary` valid for `binary_bytes`; the out-pointers valid (or null).
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_stub_load(
    stub: *mut CStub,
    binary: *const c_void,
    binary_bytes: usize,
    flags: u32,
    context_id: *mut i32,
    graph_count: *mut u32,
) -> i32 {
    if binary.is_null() {
        return BAD_PARAMETER;
    }
    // SAFETY: the caller's promise.
    let binary = unsafe { std::slice::from_raw_parts(binary.cast::<u8>(), binary_bytes) };
    // SAFETY: the caller's promise.
    unsafe { load(stub, &LoadRequest::bytes(binary).with_flags(flags), context_id, graph_count) }
}

/// Loads as `request` says and hands the context id and graph count to C.
///
/// # Safety
/// `stub` is null or came from `lpai_direct_stub_open` and is not closed; the out-pointers are null or valid for a
/// write.
unsafe fn load(stub: *mut CStub, request: &LoadRequest<'_>, context_id: *mut i32, graph_count: *mut u32) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_stub(stub, |s| {
            let loaded = record(&mut s.last_error, s.stub.load(request))?;
            write(context_id, loaded.context);
            write(graph_count, loaded.graph_count);
            Ok(())
        })
    }
}

/// Has the skel read a context binary itself; see the header.
///
/// # Safety
/// `path` NUL-terminated; the out-pointers valid (or null).
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_stub_load_file(
    stub: *mut CStub,
    path: *const c_char,
    flags: u32,
    context_id: *mut i32,
    graph_count: *mut u32,
) -> i32 {
    if path.is_null() {
        return BAD_PARAMETER;
    }
    // SAFETY: the caller's promise.
    let path = unsafe { CStr::from_ptr(path) };
    // SAFETY: the caller's promise.
    unsafe { load(stub, &LoadRequest::file(path).with_flags(flags), context_id, graph_count) }
}

/// Writes `value` through `target` unless it is null.
///
/// # Safety
/// `target` is null or valid for a write.
unsafe fn write<T>(target: *mut T, value: T) {
    if !target.is_null() {
        // SAFETY: the caller's promise.
        unsafe { target.write(value) };
    }
}

/// Input and output sizes of a graph; see the header.
///
/// # Safety
/// The out-pointers valid (or null).
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_stub_io_bytes(
    stub: *mut CStub,
    context_id: i32,
    graph: u32,
    flags: u32,
    input_bytes: *mut usize,
    output_bytes: *mut usize,
) -> i32 {
    // SAFETY: the caller's promise.
    unsafe {
        with_stub(stub, |s| {
            let description = record(&mut s.last_error, s.stub.describe(context_id, graph))?;
            let total = |tensors: &[TensorDescription], float: bool| -> usize {
                tensors.iter().fold(0usize, |total, tensor| {
                    total.saturating_add(io_bytes(float, tensor.elements, tensor.native_bytes).unwrap_or(usize::MAX))
                })
            };
            let inputs = total(&description.inputs, flags & flags::FLOAT_INPUTS != 0);
            let outputs = total(&description.outputs, flags & flags::FLOAT_OUTPUTS != 0);
            write(input_bytes, inputs);
            write(output_bytes, outputs);
            Ok(())
        })
    }
}

/// One inference; see the header.
///
/// # Safety
/// `inputs` valid for `input_bytes`, `outputs` for `output_capacity`; the out-pointers valid (or null).
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_stub_execute(
    stub: *mut CStub,
    context_id: i32,
    graph: u32,
    flags: u32,
    inputs: *const c_void,
    input_bytes: usize,
    outputs: *mut c_void,
    output_capacity: usize,
    output_bytes: *mut usize,
    dsp_ticks: *mut u64,
) -> i32 {
    if (inputs.is_null() && input_bytes > 0) || (outputs.is_null() && output_capacity > 0) {
        return BAD_PARAMETER;
    }
    let inputs = if input_bytes == 0 {
        &[][..]
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(inputs.cast::<u8>(), input_bytes) }
    };
    let outputs = if output_capacity == 0 {
        &mut [][..]
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(outputs.cast::<u8>(), output_capacity) }
    };
    // SAFETY: the caller's promise.
    unsafe {
        with_stub(stub, |s| {
            let executed = record(&mut s.last_error, s.stub.execute(context_id, graph, flags, inputs, outputs))?;
            write(output_bytes, executed.outputs_bytes);
            write(dsp_ticks, executed.dsp_ticks);
            Ok(())
        })
    }
}

/// Frees a context; see the header.
///
/// # Safety
/// `stub` from `lpai_direct_stub_open`.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_stub_unload(stub: *mut CStub, context_id: i32) -> i32 {
    // SAFETY: the caller's promise.
    unsafe { with_stub(stub, |s| record(&mut s.last_error, s.stub.unload(context_id))) }
}

/// The last failure's message; see the header.
///
/// # Safety
/// `stub` is null or from `lpai_direct_stub_open`.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_stub_last_error(stub: *const CStub) -> *const c_char {
    // SAFETY: the caller's promise.
    match unsafe { stub.as_ref() } {
        Some(stub) => stub.last_error.as_ptr(),
        None => OPEN_ERROR.with(|error| error.borrow().as_ptr()),
    }
}

/// Closes the skel handle and frees the stub.
///
/// # Safety
/// `stub` is null or from `lpai_direct_stub_open`, and not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn lpai_direct_stub_close(stub: *mut CStub) {
    if !stub.is_null() {
        // SAFETY: the caller's promise: a box from lpai_direct_stub_open, freed once.
        drop(unsafe { Box::from_raw(stub) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpai_direct::codec::RemoteArg;

    fn open_error() -> String {
        // SAFETY: a null stub asks for the thread's last open failure, a NUL-terminated string.
        unsafe { CStr::from_ptr(lpai_direct_stub_last_error(std::ptr::null())) }.to_string_lossy().into_owned()
    }

    /// A transport whose every call succeeds, so the C functions' own argument checks can be seen.
    struct Accepting;

    impl Transport for Accepting {
        fn name(&self) -> &'static str {
            "accepting"
        }
        fn place(&self) -> String {
            "the test".into()
        }
        fn open(&mut self, _uri: &CStr) -> Result<u64, i32> {
            Ok(7)
        }
        unsafe fn invoke(&mut self, _handle: u64, scalars: u32, _args: *mut RemoteArg) -> i32 {
            crate::stub::tests::before_versioning(scalars).unwrap_or(0)
        }
        fn close(&mut self, _handle: u64) -> i32 {
            0
        }
    }

    #[test]
    fn unknown_names_are_refused_with_the_known_ones() {
        let mut stub = std::ptr::null_mut();
        // SAFETY: NUL-terminated strings and a valid out-pointer.
        let status = unsafe { lpai_direct_stub_open(c"local".as_ptr(), c"moon".as_ptr(), &mut stub) };
        assert_eq!((status as u32, stub.is_null()), (0x8000_0401, true));
        assert_eq!(open_error(), "unknown domain 'moon' (adsp, mdsp, sdsp, cdsp, cdsp1)");
        // SAFETY: as above.
        let status = unsafe { lpai_direct_stub_open(c"Local".as_ptr(), std::ptr::null(), &mut stub) };
        assert_eq!((status as u32, stub.is_null()), (0x8000_0401, true));
        assert_eq!(open_error(), "unknown transport 'Local' (local, fastrpc, qemu)");
    }

    #[test]
    fn a_missing_skel_library_is_named_with_the_function_that_named_it() {
        let mut stub = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path and a valid out-pointer.
        let status = unsafe { lpai_direct_stub_open_local(c"/nonexistent/skel.so".as_ptr(), &mut stub) };
        assert_eq!((status as u32, stub.is_null()), (0x8000_0401, true));
        assert_eq!(
            open_error(),
            "the skel library /nonexistent/skel.so (from lpai_direct_stub_open_local) does not exist"
        );
    }

    #[test]
    fn bad_arguments_answer_aee_codes() {
        let stub = Box::into_raw(Box::new(CStub {
            stub: Stub::open(Box::new(Accepting), c"uri").unwrap(),
            last_error: CString::default(),
        }));
        // SAFETY: `stub` is open; null names are refused before use; null out-pointers are refused.
        unsafe {
            assert_eq!(
                lpai_direct_stub_configure(stub, std::ptr::null(), std::ptr::null(), 0, 0, 0) as u32,
                0x8000_040E
            );
            assert_eq!(lpai_direct_stub_configure(stub, c"b".as_ptr(), c"s".as_ptr(), 0, 0, 0), 0);
            let null = std::ptr::null();
            assert_eq!(lpai_direct_stub_register_op_package(stub, null, c"P".as_ptr(), null) as u32, 0x8000_040E);
            assert_eq!(lpai_direct_stub_register_op_package(stub, c"a.so".as_ptr(), null, null) as u32, 0x8000_040E);
            // The accepting transport's skel predates the handshake (interface 1.0): the stub refuses by name.
            let status = lpai_direct_stub_register_op_package(stub, c"a.so".as_ptr(), c"P".as_ptr(), null);
            assert_eq!(status, FAILED);
            let message = CStr::from_ptr(lpai_direct_stub_last_error(stub)).to_string_lossy().into_owned();
            assert!(message.starts_with("register_op_package needs interface 1.2"), "{message}");
            lpai_direct_stub_close(stub);
            assert_eq!(lpai_direct_stub_unload(std::ptr::null_mut(), 0) as u32, 0x8000_040E);
            assert_eq!(
                lpai_direct_stub_open(std::ptr::null(), std::ptr::null(), std::ptr::null_mut()) as u32,
                0x8000_040E
            );
            assert_eq!(lpai_direct_stub_open_local(std::ptr::null(), std::ptr::null_mut()) as u32, 0x8000_040E);
        }
    }
}
