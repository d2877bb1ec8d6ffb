//! The C ABI of `liblpai_direct_stub.so` (declared in `include/lpai_direct_stub.h`): the stub for HLOS
//! applications in C or C++.

use crate::stub::fastrpc::{skel_uri, Domain, FastRpc, FastRpcOptions};
use crate::stub::local::Local;
use crate::stub::{Configuration, Stub, StubError, Transport};
use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr, CString};

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
        _ => 0x8000_0401u32 as i32,
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
        return 0x8000_040E_u32 as i32;
    }
    // SAFETY: checked non-null; the caller's promise.
    unsafe { *stub = std::ptr::null_mut() };
    let fail = |text: String| {
        OPEN_ERROR.with(|error| *error.borrow_mut() = message(text));
        0x8000_0401_u32 as i32
    };
    // SAFETY: the caller's promise.
    let domain = match unsafe { optional_text(domain) }.unwrap_or("adsp") {
        "adsp" => Domain::Adsp,
        "cdsp" => Domain::Cdsp,
        "sdsp" => Domain::Sdsp,
        "mdsp" => Domain::Mdsp,
        "cdsp1" => Domain::Cdsp1,
        other => return fail(format!("unknown domain '{other}' (adsp, cdsp, sdsp, mdsp, cdsp1)")),
    };
    let options = FastRpcOptions { domain, ..FastRpcOptions::default() };
    // SAFETY: the caller's promise.
    let chosen: Box<dyn Transport> = match unsafe { optional_text(transport) } {
        Some("local") => Box::new(Local),
        Some("fastrpc") => match FastRpc::load(options) {
            Ok(fastrpc) => Box::new(fastrpc),
            Err(error) => return fail(error.to_string()),
        },
        None if cfg!(target_arch = "aarch64") => match FastRpc::load(options) {
            Ok(fastrpc) => Box::new(fastrpc),
            Err(_) => Box::new(Local),
        },
        None => Box::new(Local),
        Some(other) => return fail(format!("unknown transport '{other}' (local, fastrpc)")),
    };
    match Stub::open(chosen, &skel_uri(domain, None)) {
        Ok(opened) => {
            // SAFETY: checked non-null above.
            unsafe { *stub = Box::into_raw(Box::new(CStub { stub: opened, last_error: CString::default() })) };
            0
        }
        Err(error) => {
            let code = code_of(&error);
            fail(error.to_string());
            code
        }
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
        None => 0x8000_040E_u32 as i32,
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
        return 0x8000_040E_u32 as i32;
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
        return 0x8000_040E_u32 as i32;
    }
    // SAFETY: the caller's promise.
    let binary = unsafe { std::slice::from_raw_parts(binary.cast::<u8>(), binary_bytes) };
    // SAFETY: the caller's promise.
    unsafe {
        with_stub(stub, |s| loaded(record(&mut s.last_error, s.stub.load(binary, flags)), context_id, graph_count))
    }
}

/// Hands a load's context id and graph count to C.
///
/// # Safety
/// The out-pointers are null or valid for a write.
unsafe fn loaded(result: Result<(i32, u32), i32>, context_id: *mut i32, graph_count: *mut u32) -> Result<(), i32> {
    let (id, graphs) = result?;
    // SAFETY: the caller's promise.
    unsafe {
        write(context_id, id);
        write(graph_count, graphs);
    }
    Ok(())
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
        return 0x8000_040E_u32 as i32;
    }
    // SAFETY: the caller's promise.
    let path = unsafe { CStr::from_ptr(path) };
    // SAFETY: the caller's promise.
    unsafe {
        with_stub(stub, |s| loaded(record(&mut s.last_error, s.stub.load_file(path, flags)), context_id, graph_count))
    }
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
            let size =
                |float: bool, t: &crate::stub::TensorDescription| if float { t.elements * 4 } else { t.native_bytes };
            let inputs = description.inputs.iter().map(|t| size(flags & 1 != 0, t)).sum();
            let outputs = description.outputs.iter().map(|t| size(flags & 2 != 0, t)).sum();
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
#[allow(clippy::too_many_arguments)]
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
        return 0x8000_040E_u32 as i32;
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
