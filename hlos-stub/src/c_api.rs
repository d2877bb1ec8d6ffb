//! The C ABI of `liblpai_direct_stub.so` (declared in `include/lpai_direct_stub.h`): the stub for HLOS
//! applications in C or C++.

use crate::stub::fastrpc::{skel_uri, Domain, FastRpc, FastRpcOptions};
use crate::stub::local::Local;
use crate::stub::{default_transport, flags, Configuration, Stub, StubError, TensorDescription, Transport};
use clap::ValueEnum;
use lpai_direct::aee;
use lpai_direct::wire::io_bytes;
use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr, CString};

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
    let fail = |text: String| {
        OPEN_ERROR.with(|error| *error.borrow_mut() = message(text));
        FAILED
    };
    // SAFETY: the caller's promise.
    let domain_name = unsafe { optional_text(domain) }.unwrap_or("adsp");
    let Ok(domain) = <Domain as ValueEnum>::from_str(domain_name, false) else {
        let names: Vec<&str> = Domain::value_variants().iter().map(|known| known.uri_name()).collect();
        return fail(format!("unknown domain '{domain_name}' ({})", names.join(", ")));
    };
    let options = FastRpcOptions { domain, ..FastRpcOptions::default() };
    // SAFETY: the caller's promise.
    let chosen: Box<dyn Transport> = match unsafe { optional_text(transport) } {
        Some("local") => Box::new(Local),
        Some("fastrpc") => match FastRpc::load(options) {
            Ok(fastrpc) => Box::new(fastrpc),
            Err(error) => return fail(error.to_string()),
        },
        None => default_transport(options).0,
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
        return BAD_PARAMETER;
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
            let total = |tensors: &[TensorDescription], float: bool| -> usize {
                tensors.iter().map(|tensor| io_bytes(float, tensor.elements, tensor.native_bytes)).sum()
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

    fn open_error() -> String {
        // SAFETY: a null stub asks for the thread's last open failure, a NUL-terminated string.
        unsafe { CStr::from_ptr(lpai_direct_stub_last_error(std::ptr::null())) }.to_string_lossy().into_owned()
    }

    #[test]
    fn domains_are_clap_names_and_bad_arguments_answer_aee_codes() {
        let mut stub = std::ptr::null_mut();
        // SAFETY: NUL-terminated strings and a valid out-pointer.
        let status = unsafe { lpai_direct_stub_open(c"local".as_ptr(), c"moon".as_ptr(), &mut stub) };
        assert_eq!((status as u32, stub.is_null()), (0x8000_0401, true));
        assert_eq!(open_error(), "unknown domain 'moon' (adsp, mdsp, sdsp, cdsp, cdsp1)");
        // SAFETY: as above.
        assert_eq!(unsafe { lpai_direct_stub_open(c"local".as_ptr(), c"cdsp1".as_ptr(), &mut stub) }, 0);
        // SAFETY: `stub` is open; null names are refused before use.
        unsafe {
            assert_eq!(
                lpai_direct_stub_configure(stub, std::ptr::null(), std::ptr::null(), 0, 0, 0) as u32,
                0x8000_040E
            );
            lpai_direct_stub_close(stub);
            assert_eq!(lpai_direct_stub_unload(std::ptr::null_mut(), 0) as u32, 0x8000_040E);
            assert_eq!(
                lpai_direct_stub_open(std::ptr::null(), std::ptr::null(), std::ptr::null_mut()) as u32,
                0x8000_040E
            );
        }
    }
}
